/* resolve: a page's base URL (its own, or the one its first <base href>
 * names), its origin, and references made absolute against them, spelled
 * as sc-fetch requests them. */
#include "parse/parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "web/url.h"

static void set_base(struct page *page, const char *url)
{
	CURLU *h = curl_url();

	if (h && curl_url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK) {
		page->base = h;
		return;
	}
	curl_url_cleanup(h);
}

/* A <base href>: it replaces the base URL, resolved against the document's
 * own. */
static void rebase(struct page *page, const char *href)
{
	char *abs = parse_page_resolve(page, href, false);

	if (abs) {
		curl_url_cleanup(page->base);
		page->base = NULL;
		set_base(page, abs);
		free(abs);
	}
}

/* The base's directory for relative links (relative_joined), when its
 * path is printable ASCII: libcurl joins a relative reference to the base
 * and parses the whole again with CURLU_URLENCODE, which would
 * percent-encode a space or a non-ASCII byte that the base kept as it
 * was given.  libcurl has already removed the path's dot segments. */
static void set_dir(struct page *page)
{
	char *path = NULL;
	size_t n = 0;

	if (curl_url_get(page->base, CURLUPART_PATH, &path, 0) != CURLUE_OK || !path)
		return;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p <= ' ' || *p >= 0x7f)
			goto out;
		if (*p == '/')
			n = (size_t)(p - (const unsigned char *)path) + 1;
	}
	if (path[0] == '/')
		page->dir = sc_strndup(path, n);
out:
	curl_free(path);
}

/* The base less its fragment, for "#name" links (parse_page_resolve): what
 * libcurl gives for the base with a fragment set, before the '#' it adds
 * (a '#' anywhere else in a URL libcurl spells is percent-encoded). */
static void set_self(struct page *page)
{
	char *url = NULL;

	if (curl_url_get(page->base, CURLUPART_URL, &url, 0) != CURLUE_OK || !url)
		return;
	page->self = sc_strndup(url, strcspn(url, "#"));
	curl_free(url);
}

/* The page's origin for root-relative links, as libcurl spells it: "/"
 * resolved against the base, less that "/".  Only for http(s) bases, where
 * what follows the authority is the path as given. */
static void set_origin(struct page *page)
{
	char *root = parse_page_resolve(page, "/", false);
	size_t n = root ? strlen(root) : 0;

	if (n > 0 && root[n - 1] == '/' && !strpbrk(root, "?#") &&
	    (strncmp(root, "http://", 7) == 0 || strncmp(root, "https://", 8) == 0) &&
	    strchr(root + 8, '/') == root + n - 1) {
		root[n - 1] = '\0';
		page->origin = root;
		set_dir(page);
		set_self(page);
		return;
	}
	free(root);
}

void parse_page_locate(struct page *page, const json_t *rec, const char *base_href)
{
	const char *url = parse_record_string(rec, "final_url");

	if (!url)
		url = parse_record_string(rec, "url");
	if (url)
		set_base(page, url);
	if (base_href)
		rebase(page, base_href);
	if (page->base)
		set_origin(page);
}

/* Unreserved characters, sub-delims, ':', '@', '/', and '?', as bits of
 * ASCII 0-63 and 64-127: "A-Za-z0-9-._~!$&'()*+,;=:@/?".  What a query or
 * a fragment may hold as libcurl leaves it. */
static const uint64_t plain_chars[2] = { 0xafffffd200000000u, 0x47fffffe87ffffffu };

static bool is_plain_char(unsigned char c)
{
	return c < 128 && (plain_chars[c >> 6] >> (c & 63) & 1);
}

/* Whether the fragment after a '#' (frag, to its end) is one libcurl
 * keeps as it is: not empty (libcurl drops an empty one), plain
 * characters only. */
static bool is_plain_fragment(const char *frag)
{
	if (!*frag)
		return false;
	for (const unsigned char *p = (const unsigned char *)frag; *p; p++)
		if (!is_plain_char(*p))
			return false;
	return true;
}

/* Whether frag is a fragment that libcurl, setting it as the fragment of
 * the base (curl_resolve's "#name" on the page itself), keeps as it is:
 * not empty, and unreserved characters only (it percent-encodes the rest,
 * '!' and '/' too, where it keeps them in a fragment it parses). */
static bool is_unreserved_fragment(const char *frag)
{
	if (!*frag)
		return false;
	for (const unsigned char *p = (const unsigned char *)frag; *p; p++)
		if (!sc_url_is_unreserved(*p))
			return false;
	return true;
}

/* parse_is_plain_root_relative for the first n bytes of ref. */
static bool is_plain_root_relative_n(const char *ref, size_t n)
{
	const char *query = NULL;

	if (n < 1 || ref[0] != '/' || (n > 1 && ref[1] == '/'))
		return false;
	for (const unsigned char *p = (const unsigned char *)ref, *end = p + n; p < end; p++) {
		if (!is_plain_char(*p))
			return false;
		if (*p == '/' && p + 1 < end && p[1] == '.')
			return false; /* a dot segment, perhaps */
		if (*p == '?') {
			if (query || p + 1 == end)
				return false; /* a second '?', or an empty query */
			query = (const char *)p;
		}
	}
	return true;
}

bool parse_is_plain_root_relative(const char *ref)
{
	return is_plain_root_relative_n(ref, strlen(ref));
}

/* Whether ref, up to its fragment (strip_fragment) or its end, is a
 * relative path that relative_joined resolves as libcurl would: not empty,
 * nothing to trim or encode, no scheme (no ':'), no query, no authority or
 * root ('/' first), and no dot segment but "./" and "../" at its start;
 * a fragment kept must be plain (is_plain_fragment).  Sets *n to the
 * length of that path, and of the fragment kept. */
static bool is_plain_relative(const char *ref, bool strip_fragment, size_t *n)
{
	/* parse_is_plain_root_relative's characters less ':' and '?'. */
	static const uint64_t allowed[2] = { 0x2bffffd200000000u, 0x47fffffe87ffffffu };
	const char *p = ref, *rest;

	while (p[0] == '.' && (p[1] == '/' || (p[1] == '.' && p[2] == '/')))
		p += p[1] == '/' ? 2 : 3;
	rest = p;
	if (ref[0] == '/' || ref[0] == '\0' || ref[0] == '#' || rest[0] == '.' || rest[0] == '/')
		return false;
	for (; *p && *p != '#'; p++) {
		if ((unsigned char)*p >= 128 || !(allowed[(unsigned char)*p >> 6] >> (*p & 63) & 1))
			return false;
		if (*p == '/' && p[1] == '.')
			return false; /* a dot segment, perhaps */
	}
	if (*p == '#' && !strip_fragment) {
		if (!is_plain_fragment(p + 1))
			return false;
		p += strlen(p); /* kept as it is */
	}
	*n = (size_t)(p - ref);
	return true;
}

/* The first n bytes of ref (is_plain_relative) resolved against the
 * page's directory: its leading "./" dropped, each "../" taking a segment
 * off the directory, the rest appended (RFC 3986 5.2, which is what
 * libcurl's joining and dot-segment removal come to for such a
 * reference).  Malloced; NULL where a "../" would climb above the root
 * (the caller asks libcurl). */
static char *relative_joined(const struct page *page, const char *ref, size_t n)
{
	size_t o = strlen(page->origin), d = strlen(page->dir);
	const char *end = ref + n;
	char *result;

	while (ref < end && ref[0] == '.') {
		if (ref[1] == '/') {
			ref += 2;
			continue;
		}
		if (d <= 1)
			return NULL;
		for (d--; d > 0 && page->dir[d - 1] != '/'; d--)
			;
		ref += 3;
	}
	result = sc_malloc(o + d + (size_t)(end - ref) + 1);
	char *w = mempcpy(mempcpy(mempcpy(result, page->origin, o), page->dir, d), ref,
	                  (size_t)(end - ref));
	*w = '\0';
	return result;
}

/* origin followed by ref, malloced. */
static char *origin_joined(const char *origin, const char *ref)
{
	size_t o = strlen(origin), r = strlen(ref);
	char *result = sc_malloc(o + r + 1);

	memcpy(mempcpy(result, origin, o), ref, r + 1);
	return result;
}

/* ref as the URL standard reads it (C0 controls and spaces trimmed, tabs
 * and newlines dropped anywhere), spelled as sc-fetch requests it, less
 * its fragment if strip_fragment.  Malloced. */
static char *clean_reference(const char *ref, bool strip_fragment)
{
	char *clean;
	size_t n = 0;

	while (*ref && (unsigned char)*ref <= ' ')
		ref++;
	clean = sc_malloc(strlen(ref) + 1);
	for (const char *p = ref; *p; p++)
		if (*p != '\t' && *p != '\n' && *p != '\r')
			clean[n++] = *p;
	while (n > 0 && (unsigned char)clean[n - 1] <= ' ')
		n--;
	clean[n] = '\0';
	/* Non-ASCII and spaces as sc-fetch requests them (UTF-8
	 * percent-encoded, %20, an IDN host in punycode), so that a link and
	 * the URL fetched for it are the same string. */
	char *pasted = sc_url_from_pasted(clean, n);
	if (pasted) {
		free(clean);
		clean = pasted;
	}

	/* Without its fragment the reference resolves to the same URL minus
	 * the fragment, one libcurl call cheaper. */
	if (strip_fragment) {
		char *hash = strchr(clean, '#');
		if (hash)
			*hash = '\0';
	}
	return clean;
}

/* clean (from clean_reference) resolved by libcurl against the page's
 * base: malloced, or NULL. */
static char *curl_resolve(const struct page *page, const char *clean, bool strip_fragment)
{
	const unsigned flags = CURLU_NON_SUPPORT_SCHEME | CURLU_URLENCODE;
	CURLU *h = page->base ? curl_url_dup(page->base) : curl_url();
	char *out = NULL, *result = NULL;
	CURLUcode rc;

	if (!h)
		return NULL;
	if (page->base && (clean[0] == '\0' || clean[0] == '#')) {
		/* A reference to the page itself.  libcurl would drop the
		 * base's last path segment and query here; the URL standard
		 * keeps both and only replaces the fragment. */
		rc = curl_url_set(h, CURLUPART_FRAGMENT,
		                  clean[0] == '#' && clean[1] ? clean + 1 : NULL, CURLU_URLENCODE);
	} else {
		rc = curl_url_set(h, CURLUPART_URL, clean, flags);
	}
	if (rc == CURLUE_OK && strip_fragment && clean[0] == '\0')
		rc = curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0); /* the base's own */
	if (rc == CURLUE_OK && curl_url_get(h, CURLUPART_URL, &out, 0) == CURLUE_OK && out) {
		result = sc_strdup(out);
		curl_free(out);
	}
	curl_url_cleanup(h);
	return result;
}

/* The length of ref as libcurl would spell it resolved, when it is a
 * plain http(s) URL, or 0: a lowercase scheme, a lowercase host name with
 * a letter in its last label (libcurl rewrites a numeric IPv4 host:
 * "127.1") and no port or userinfo, then a plain root-relative path, or
 * none (*slash: libcurl adds the "/"), then a fragment: left out
 * (strip_fragment), or kept when it is plain and there is a path.  The
 * length is of ref's first bytes, less a fragment left out. */
static size_t plain_absolute_len(const char *ref, bool strip_fragment, bool *slash)
{
	size_t skip = strncmp(ref, "http://", 7) == 0    ? 7
	              : strncmp(ref, "https://", 8) == 0 ? 8
	                                                 : 0;
	const char *host = ref + skip, *p = host, *hash;
	bool letter = false;
	size_t n;

	if (!skip)
		return 0;
	for (; (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.';
	     p++) {
		if (*p == '.' && (p == host || p[1] == '.'))
			return 0; /* an empty label */
		letter = *p == '.' ? false : letter || (*p >= 'a' && *p <= 'z');
	}
	if (p == host || !letter || p[-1] == '.' || host[0] == '-')
		return 0;
	hash = strchr(p, '#');
	n = hash ? (size_t)(hash - ref) : strlen(ref);
	*slash = ref + n == p;
	if (!*slash && !is_plain_root_relative_n(p, (size_t)(ref + n - p)))
		return 0;
	if (!hash || strip_fragment)
		return n;
	return *slash || !is_plain_fragment(hash + 1) ? 0 : strlen(ref);
}

char *parse_page_resolve(const struct page *page, const char *ref, bool strip_fragment)
{
	char *clean, *result;
	size_t n;

	/* The common cases first: nothing to trim, drop or encode (the
	 * allowed characters exclude spaces, controls and '#'). */
	if (page->origin && parse_is_plain_root_relative(ref))
		return origin_joined(page->origin, ref);
	/* The same with a fragment kept, which libcurl keeps as it is when
	 * it is plain: a "#name" on the page itself (a heading's permalink),
	 * or a root-relative path and its "#name". */
	const char *hash = strip_fragment || !page->origin ? NULL : strchr(ref, '#');
	if (hash && hash == ref && page->self && is_unreserved_fragment(ref + 1))
		return origin_joined(page->self, ref);
	if (hash && hash > ref && is_plain_fragment(hash + 1) &&
	    is_plain_root_relative_n(ref, (size_t)(hash - ref)))
		return origin_joined(page->origin, ref);
	if (page->origin && page->dir && is_plain_relative(ref, strip_fragment, &n) &&
	    (result = relative_joined(page, ref, n)))
		return result;
	bool slash;
	if ((n = plain_absolute_len(ref, strip_fragment, &slash))) {
		result = sc_malloc(n + 2);
		memcpy(result, ref, n);
		if (slash)
			result[n++] = '/';
		result[n] = '\0';
		return result;
	}
	clean = clean_reference(ref, strip_fragment);
	if (page->origin && parse_is_plain_root_relative(clean))
		result = origin_joined(page->origin, clean);
	else
		result = curl_resolve(page, clean, strip_fragment);
	free(clean);
	return result;
}
