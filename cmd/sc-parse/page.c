/* page: from a record's body to a libxml2 document and its base URL.
 *
 * Which bytes: "body" is a JSON string, so its bytes are UTF-8 already and
 * are parsed as UTF-8 whatever the page declares; "body_base64" holds the
 * page's bytes as fetched, decoded by the first of: a byte order mark, the
 * charset of content_type, a <meta charset> or <meta http-equiv> in the
 * first 4 KiB, UTF-8 if the bytes are valid UTF-8, else windows-1252 (the
 * web's default).  The charset is decided here, and libxml2 is told to
 * ignore the document's own hints, so that one rule holds. */
#include "sc-parse.h"

#include <ctype.h>
#include <libxml/encoding.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "record.h"
#include "util.h"

#define PARSE_OPTIONS                                                                        \
	(HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | \
	 HTML_PARSE_COMPACT | HTML_PARSE_IGNORE_ENC | XML_PARSE_HUGE)

/* How far to look for a <meta> charset declaration. */
#define META_PRESCAN_BYTES 4096
/* libxml2 keeps interned names in the context's dictionary across pages;
 * past this many the context is renewed, so memory stays flat over an
 * endless stream of pages with ever-new attribute names. */
#define DICT_RENEW_SIZE 50000

struct page_parser {
	htmlParserCtxtPtr ctxt; /* owned */
};

struct page_parser *page_parser_new(void)
{
	struct page_parser *pp = sc_calloc(1, sizeof(*pp));

	pp->ctxt = htmlNewParserCtxt();
	if (!pp->ctxt)
		sc_die(1, "out of memory");
	return pp;
}

void page_parser_free(struct page_parser *pp)
{
	if (!pp)
		return;
	htmlFreeParserCtxt(pp->ctxt);
	free(pp);
}

/* ---- the body's bytes ---- */

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Decodes base64 (padding optional, whitespace ignored).  Returns a
 * malloced buffer and its length, or NULL if s is not base64. */
static unsigned char *b64_decode(const char *s, size_t len, size_t *outlen)
{
	unsigned char *out = sc_malloc(len / 4 * 3 + 4);
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	bool padding = false;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			padding = true;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || padding) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	if (bits >= 6) { /* a lone sixth of a byte: truncated */
		free(out);
		return NULL;
	}
	*outlen = o;
	return out;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t need;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			need = 1, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			need = 2, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			need = 3, cp = c & 0x07, min = 0x10000;
		else
			return false;
		if (n - i <= need)
			return false;
		for (size_t k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

/* ---- is it HTML? ---- */

/* The media type of content_type, lowercased, without parameters. */
static void media_type(const char *ct, char *out, size_t size)
{
	size_t n = 0;

	while (*ct == ' ' || *ct == '\t')
		ct++;
	while (*ct && *ct != ';' && *ct != ' ' && *ct != '\t' && n + 1 < size)
		out[n++] = (char)tolower((unsigned char)*ct++);
	out[n] = '\0';
}

static bool has_prefix(const unsigned char *s, size_t n, const char *magic, size_t m)
{
	return n >= m && memcmp(s, magic, m) == 0;
}

/* Images, archives and PDFs are sometimes labelled text/html; their
 * signatures are unmistakable. */
static bool binary_signature(const unsigned char *s, size_t n)
{
	return has_prefix(s, n, "\x89PNG\r\n\x1a\n", 8) || has_prefix(s, n, "GIF8", 4) ||
	       has_prefix(s, n, "\xff\xd8\xff", 3) || has_prefix(s, n, "%PDF-", 5) ||
	       has_prefix(s, n, "PK\x03\x04", 4) || has_prefix(s, n, "\x1f\x8b", 2) ||
	       (has_prefix(s, n, "RIFF", 4) && n >= 12 && memcmp(s + 8, "WEBP", 4) == 0) ||
	       has_prefix(s, n, "\x00\x00\x01\x00", 4) || has_prefix(s, n, "wOF", 3);
}

static bool looks_like_html(const char *content_type, const unsigned char *s, size_t n)
{
	char mt[128] = "";
	size_t i = 0;

	if (content_type)
		media_type(content_type, mt, sizeof(mt));
	while (i < n &&
	       (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f'))
		i++;
	if (i == n)
		return false; /* empty, or only whitespace */
	if (binary_signature(s, n))
		return false;
	if (mt[0])
		return strcmp(mt, "text/html") == 0 || strcmp(mt, "application/xhtml+xml") == 0;
	/* No content type: sniff as browsers do, by the first tag; skip a
	 * UTF-8 byte order mark. */
	if (has_prefix(s + i, n - i, "\xef\xbb\xbf", 3))
		i += 3;
	return i < n && s[i] == '<';
}

/* ---- the charset ---- */

/* The value of the charset parameter in s (a content type, or the inside
 * of a meta tag), or "" if none. */
static void find_charset(const char *s, size_t n, char *out, size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; i + 7 <= n; i++) {
		if (strncasecmp(s + i, "charset", 7) != 0)
			continue;
		size_t j = i + 7, k = 0;
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j >= n || s[j] != '=')
			continue;
		j++;
		while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '"' || s[j] == '\''))
			j++;
		while (j < n && k + 1 < size &&
		       (isalnum((unsigned char)s[j]) || strchr("-_.:", s[j])))
			out[k++] = s[j++];
		out[k] = '\0';
		if (k > 0)
			return;
	}
}

/* The charset of the first <meta> that declares one. */
static void meta_charset(const unsigned char *s, size_t n, char *out, size_t size)
{
	const char *p = (const char *)s;
	size_t limit = n < META_PRESCAN_BYTES ? n : META_PRESCAN_BYTES;

	out[0] = '\0';
	for (size_t i = 0; i + 5 < limit; i++) {
		if (p[i] != '<' || strncasecmp(p + i + 1, "meta", 4) != 0)
			continue;
		const char *end = memchr(p + i, '>', n - i);
		size_t taglen = end ? (size_t)(end - (p + i)) : n - i;
		find_charset(p + i, taglen, out, size);
		if (out[0])
			return;
	}
}

/* The iconv/libxml2 name for a charset label, or NULL if libxml2 cannot
 * decode it.  Labels are mapped as the WHATWG Encoding standard does for
 * the common cases: latin1 means windows-1252, Shift_JIS means CP932. */
static const char *encoding_for_label(const char *label)
{
	static const struct {
		const char *label, *name;
	} aliases[] = {
		{ "iso-8859-1", "WINDOWS-1252" },
		{ "iso8859-1", "WINDOWS-1252" },
		{ "latin1", "WINDOWS-1252" },
		{ "l1", "WINDOWS-1252" },
		{ "us-ascii", "WINDOWS-1252" },
		{ "ascii", "WINDOWS-1252" },
		{ "shift_jis", "CP932" },
		{ "shift-jis", "CP932" },
		{ "sjis", "CP932" },
		{ "x-sjis", "CP932" },
		{ "ms_kanji", "CP932" },
		{ "windows-31j", "CP932" },
		{ "gb2312", "GBK" },
		{ "x-gbk", "GBK" },
		{ "utf8", "UTF-8" },
		{ "unicode-1-1-utf-8", "UTF-8" },
	};
	static _Thread_local char name[64];
	xmlCharEncodingHandlerPtr handler;

	if (!label[0])
		return NULL;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(label, aliases[i].label) == 0)
			return aliases[i].name;
	if (strcasecmp(label, "utf-8") == 0)
		return "UTF-8";
	snprintf(name, sizeof(name), "%s", label);
	handler = xmlFindCharEncodingHandler(name);
	if (!handler)
		return NULL;
	xmlCharEncCloseFunc(handler); /* frees iconv-based handlers */
	return name;
}

/* The encoding to parse body_base64 bytes with.  *skip is the length of a
 * byte order mark to drop.  UTF-8 is named too: libxml2 given no encoding
 * follows the page's <meta> even with HTML_PARSE_IGNORE_ENC. */
static const char *choose_encoding(const char *content_type, const unsigned char *s, size_t n,
                                   size_t *skip)
{
	char label[64];
	const char *enc;

	*skip = 0;
	if (has_prefix(s, n, "\xef\xbb\xbf", 3)) {
		*skip = 3;
		return "UTF-8";
	}
	if (has_prefix(s, n, "\xff\xfe", 2))
		return "UTF-16LE";
	if (has_prefix(s, n, "\xfe\xff", 2))
		return "UTF-16BE";
	if (content_type) {
		find_charset(content_type, strlen(content_type), label, sizeof(label));
		if ((enc = encoding_for_label(label)))
			return enc;
	}
	meta_charset(s, n, label, sizeof(label));
	/* A page that could declare itself in ASCII is not UTF-16. */
	if (strncasecmp(label, "utf-16", 6) == 0)
		return "UTF-8";
	if ((enc = encoding_for_label(label)))
		return enc;
	return valid_utf8(s, n) ? "UTF-8" : "WINDOWS-1252";
}

/* ---- loading ---- */

static const char *string_member(const json_t *rec, const char *key)
{
	const char *s = json_string_value(json_object_get(rec, key));

	return s && *s ? s : NULL;
}

static void set_base(struct page *page, const char *url)
{
	CURLU *h = curl_url();

	if (h && curl_url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK) {
		page->base = h;
		return;
	}
	curl_url_cleanup(h);
}

/* Honours the first <base href>: it replaces the base URL, resolved
 * against the document's own. */
static void apply_base_element(struct page *page)
{
	xmlNode *node = xmlDocGetRootElement(page->doc);

	while (node) {
		if (node->type == XML_ELEMENT_NODE &&
		    strcmp((const char *)node->name, "base") == 0) {
			xmlChar *href = xmlGetProp(node, (const xmlChar *)"href");
			if (href) {
				char *abs = page_resolve(page, (const char *)href, false);
				if (abs) {
					curl_url_cleanup(page->base);
					page->base = NULL;
					set_base(page, abs);
					free(abs);
				}
				xmlFree(href);
				return;
			}
		}
		/* Pre-order walk without recursion: pages can nest deep. */
		if (node->type == XML_ELEMENT_NODE && node->children) {
			node = node->children;
			continue;
		}
		while (node && !node->next)
			node = node->parent && node->parent->type == XML_ELEMENT_NODE ? node->parent
			                                                              : NULL;
		if (node)
			node = node->next;
	}
}

/* The page's origin for root-relative links, as libcurl spells it: "/"
 * resolved against the base, less that "/".  Only for http(s) bases, where
 * what follows the authority is the path as given. */
static void set_origin(struct page *page)
{
	char *root = page_resolve(page, "/", false);
	size_t n = root ? strlen(root) : 0;

	if (n > 0 && root[n - 1] == '/' && !strpbrk(root, "?#") &&
	    (strncmp(root, "http://", 7) == 0 || strncmp(root, "https://", 8) == 0) &&
	    strchr(root + 8, '/') == root + n - 1) {
		root[n - 1] = '\0';
		page->origin = root;
		return;
	}
	free(root);
}

int page_load(struct page_parser *pp, const json_t *rec, struct page *page, char *why,
              size_t whysize)
{
	const json_t *body = json_object_get(rec, "body");
	const json_t *body64 = json_object_get(rec, "body_base64");
	const char *content_type = string_member(rec, "content_type");
	const char *url = string_member(rec, "final_url");
	const unsigned char *bytes;
	unsigned char *decoded = NULL;
	const char *encoding = "UTF-8";
	unsigned char *copy = NULL;
	size_t n, skip = 0;

	page->doc = NULL;
	page->base = NULL;
	page->origin = NULL;
	if (!sc_record_ok(rec))
		return 0;
	if (body && !json_is_null(body)) {
		if (!json_is_string(body)) {
			snprintf(why, whysize, "body is not a string");
			return -1;
		}
		bytes = (const unsigned char *)json_string_value(body);
		n = json_string_length(body);
		if (has_prefix(bytes, n, "\xef\xbb\xbf", 3))
			skip = 3;
	} else if (body64 && !json_is_null(body64)) {
		if (!json_is_string(body64) ||
		    !(decoded = b64_decode(json_string_value(body64), json_string_length(body64),
		                           &n))) {
			snprintf(why, whysize, "body_base64 is not base64");
			return -1;
		}
		bytes = decoded;
	} else {
		return 0;
	}
	if (n > INT_MAX || !looks_like_html(content_type, bytes, n)) {
		free(decoded);
		return 0;
	}
	if (decoded)
		encoding = choose_encoding(content_type, bytes, n, &skip);
	/* libxml2 2.9 takes a NUL byte for the end of its input in places and
	 * drops the rest of the page; the HTML standard makes it a parse
	 * error and goes on.  Blank them out, except in UTF-16 where zero
	 * bytes are half of every ASCII character. */
	if (strncmp(encoding, "UTF-16", 6) != 0 && memchr(bytes, '\0', n)) {
		copy = sc_malloc(n);
		for (size_t i = 0; i < n; i++)
			copy[i] = bytes[i] ? bytes[i] : ' ';
		bytes = copy;
	}

	if (xmlDictSize(pp->ctxt->dict) > DICT_RENEW_SIZE) {
		htmlFreeParserCtxt(pp->ctxt);
		if (!(pp->ctxt = htmlNewParserCtxt()))
			sc_die(1, "out of memory");
	}
	page->doc = htmlCtxtReadMemory(pp->ctxt, (const char *)bytes + skip, (int)(n - skip), NULL,
	                               encoding, PARSE_OPTIONS);
	free(copy);
	free(decoded);

	if (!url)
		url = string_member(rec, "url");
	if (url)
		set_base(page, url);
	if (page->doc)
		apply_base_element(page);
	if (page->base)
		set_origin(page);
	return 0;
}

void page_free(struct page *page)
{
	if (page->doc)
		xmlFreeDoc(page->doc);
	curl_url_cleanup(page->base);
	free(page->origin);
	page->doc = NULL;
	page->base = NULL;
	page->origin = NULL;
}

/* ---- URLs ---- */

bool is_url_attribute(const char *name)
{
	static const char *const names[] = {
		"href",     "src",  "action",   "formaction", "cite",     "poster", "background",
		"longdesc", "data", "manifest", "icon",       "codebase", "usemap", "profile",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* A root-relative reference ("/p/1.html?ref=in") that libcurl would copy
 * as it is after the base's origin: no "//" authority, no dot segment,
 * nothing to percent-encode or decode, no fragment, no empty query (which
 * libcurl drops).  Most links on most sites; the rest go to libcurl. */
static bool is_plain_root_relative(const char *ref)
{
	/* Unreserved characters, sub-delims, ':', '@', '/', and '?'. */
	static const char allowed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                              "0123456789-._~!$&'()*+,;=:@/?";
	const char *query = strchr(ref, '?');

	return ref[0] == '/' && ref[1] != '/' && ref[strspn(ref, allowed)] == '\0' &&
	       !strstr(ref, "/.") && !(query && (query[1] == '\0' || strchr(query + 1, '?')));
}

char *page_resolve(const struct page *page, const char *ref, bool strip_fragment)
{
	const unsigned flags = CURLU_NON_SUPPORT_SCHEME | CURLU_URLENCODE;
	CURLU *h;
	char *clean, *out = NULL, *result = NULL;
	size_t n = 0;
	CURLUcode rc;

	/* As the URL standard does: trim C0 controls and spaces, drop tabs
	 * and newlines anywhere. */
	while (*ref && (unsigned char)*ref <= ' ')
		ref++;
	clean = sc_malloc(strlen(ref) + 1);
	for (const char *p = ref; *p; p++)
		if (*p != '\t' && *p != '\n' && *p != '\r')
			clean[n++] = *p;
	while (n > 0 && (unsigned char)clean[n - 1] <= ' ')
		n--;
	clean[n] = '\0';

	/* Without its fragment the reference resolves to the same URL minus
	 * the fragment, one libcurl call cheaper. */
	if (strip_fragment) {
		char *hash = strchr(clean, '#');
		if (hash)
			*hash = '\0';
	}
	if (page->origin && is_plain_root_relative(clean)) {
		size_t o = strlen(page->origin), r = strlen(clean);
		result = sc_malloc(o + r + 1);
		memcpy(result, page->origin, o);
		memcpy(result + o, clean, r + 1);
		free(clean);
		return result;
	}
	h = page->base ? curl_url_dup(page->base) : curl_url();
	if (!h) {
		free(clean);
		return NULL;
	}
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
	free(clean);
	return result;
}

static bool is_http_url(const char *url)
{
	return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

/* ---- the default fields ---- */

const char *const default_field_names[] = { "title", "description", "canonical",
	                                    "lang",  "h1",          "links" };
const size_t default_field_count = sizeof(default_field_names) / sizeof(default_field_names[0]);

/* A set of strings for removing duplicate links: open addressing, grown
 * at half full.  Owns its strings (malloced). */
struct strset {
	const char **slots;
	size_t cap, count;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* Adds s, taking ownership; returns false (and frees s) if it was there
 * already. */
static bool strset_add(struct strset *set, const char *s)
{
	if (set->count * 2 >= set->cap) {
		struct strset bigger = { sc_calloc(set->cap ? set->cap * 2 : 64, sizeof(char *)),
			                 set->cap ? set->cap * 2 : 64, 0 };
		for (size_t i = 0; i < set->cap; i++)
			if (set->slots[i])
				strset_add(&bigger, set->slots[i]); /* never a duplicate */
		free(set->slots);
		*set = bigger;
	}
	for (size_t i = hash_str(s) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i]) {
			set->slots[i] = s;
			set->count++;
			return true;
		}
		if (strcmp(set->slots[i], s) == 0) {
			free((char *)s);
			return false;
		}
	}
}

/* The value of attribute name on node without copying when it is one text
 * node (the usual case); *owned is set when the caller must xmlFree it. */
static const char *attr(const xmlNode *node, const char *name, xmlChar **owned)
{
	*owned = NULL;
	for (const xmlAttr *a = node->properties; a; a = a->next) {
		if (strcmp((const char *)a->name, name) != 0)
			continue;
		if (!a->children)
			return "";
		if (a->children->type == XML_TEXT_NODE && !a->children->next &&
		    a->children->content)
			return (const char *)a->children->content;
		*owned = xmlNodeGetContent((const xmlNode *)a);
		return *owned ? (const char *)*owned : "";
	}
	return NULL;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if ((size_t)(p - start) == n && strncasecmp(start, word, n) == 0)
			return true;
	}
	return false;
}

static json_t *normalised(const char *s, struct strbuf *scratch)
{
	bool space = false;

	strbuf_clear(scratch);
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f') {
			space = scratch->len > 0;
			continue;
		}
		if (space)
			strbuf_add(scratch, " ", 1);
		space = false;
		strbuf_add(scratch, s, 1);
	}
	return sc_json_string_lossy(scratch->s ? scratch->s : "", scratch->len);
}

void page_default_fields(const struct page *page, json_t *rec, struct strbuf *scratch)
{
	json_t *title = NULL, *description = NULL, *canonical = NULL, *lang = NULL, *h1 = NULL;
	json_t *links;
	struct strset seen = { 0 };
	const xmlNode *node;
	xmlChar *owned;

	if (!page->doc) {
		for (size_t i = 0; i < default_field_count; i++)
			json_object_set_new(rec, default_field_names[i], json_null());
		return;
	}
	links = json_array();
	/* One pre-order walk over the whole document, without recursion. */
	node = page->doc->children;
	while (node) {
		if (node->type == XML_ELEMENT_NODE) {
			const char *name = (const char *)node->name;
			const char *v;
			switch (name[0]) {
			case 'a':
				if (name[1] == '\0' && (v = attr(node, "href", &owned))) {
					char *abs = page_resolve(page, v, true);
					if (abs && !is_http_url(abs)) {
						free(abs);
						abs = NULL;
					}
					if (abs && strset_add(&seen, abs))
						json_array_append_new(
						        links,
						        sc_json_string_lossy(abs, strlen(abs)));
					xmlFree(owned);
				}
				break;
			case 't':
				if (!title && strcmp(name, "title") == 0) {
					node_text(node, scratch);
					title = sc_json_string_lossy(scratch->s, scratch->len);
				}
				break;
			case 'h':
				if (!h1 && strcmp(name, "h1") == 0) {
					node_text(node, scratch);
					h1 = sc_json_string_lossy(scratch->s, scratch->len);
				} else if (!lang && strcmp(name, "html") == 0 &&
				           (v = attr(node, "lang", &owned))) {
					lang = normalised(v, scratch);
					xmlFree(owned);
				}
				break;
			case 'm':
				if (!description && strcmp(name, "meta") == 0 &&
				    (v = attr(node, "name", &owned))) {
					bool is_description = strcasecmp(v, "description") == 0;
					xmlFree(owned);
					if (is_description && (v = attr(node, "content", &owned))) {
						description = normalised(v, scratch);
						xmlFree(owned);
					}
				}
				break;
			case 'l':
				if (!canonical && strcmp(name, "link") == 0 &&
				    (v = attr(node, "rel", &owned))) {
					bool is_canonical = has_word(v, "canonical");
					xmlFree(owned);
					if (is_canonical && (v = attr(node, "href", &owned))) {
						char *abs = page_resolve(page, v, false);
						canonical =
						        abs ? sc_json_string_lossy(abs, strlen(abs))
						            : sc_json_string_lossy(v, strlen(v));
						free(abs);
						xmlFree(owned);
					}
				}
				break;
			}
			if (node->children) {
				node = node->children;
				continue;
			}
		}
		while (node && !node->next)
			node = node->parent && node->parent != (const xmlNode *)page->doc
			               ? node->parent
			               : NULL;
		if (node)
			node = node->next;
	}
	for (size_t i = 0; i < seen.cap; i++)
		free((char *)seen.slots[i]);
	free(seen.slots);
	json_object_set_new(rec, "title", title ? title : json_null());
	json_object_set_new(rec, "description", description ? description : json_null());
	json_object_set_new(rec, "canonical", canonical ? canonical : json_null());
	json_object_set_new(rec, "lang", lang ? lang : json_null());
	json_object_set_new(rec, "h1", h1 ? h1 : json_null());
	json_object_set_new(rec, "links", links);
}
