#include "web/url.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <idn2.h>
#include <libpsl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/util.h"

/* ---- a small string builder (every use is bounded by its input) ---- */

struct out {
	char *s;
	size_t len, cap;
};

static void out_reserve(struct out *o, size_t more)
{
	if (o->len + more + 1 <= o->cap)
		return;
	while (o->len + more + 1 > o->cap)
		o->cap = o->cap ? o->cap * 2 : 128;
	o->s = sc_realloc(o->s, o->cap);
}

static void out_add(struct out *o, const char *s, size_t n)
{
	out_reserve(o, n);
	if (n == 0 || !o->s)
		return;
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static void out_str(struct out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

static void out_pct(struct out *o, unsigned char c)
{
	char e[3] = { '%', sc_hex_digit(c >> 4), sc_hex_digit(c) };

	out_add(o, e, 3);
}

/* ---- URLs as people paste them ---- */

static bool must_encode(unsigned char c)
{
	return c >= 0x80 || c == ' ';
}

/* Bytes as a browser sends them: non-ASCII and spaces percent-encoded. */
static void out_encoded(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (must_encode(c))
			out_pct(o, c);
		else
			out_add(o, (const char *)&c, 1);
	}
}

/* The length of "scheme://" at the start of s, or 0 if s has none. */
static size_t scheme_slashes(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
		return 0;
	while (i < n && (((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') ||
	                 (s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '-' || s[i] == '.'))
		i++;
	if (n - i >= 3 && memcmp(s + i, "://", 3) == 0)
		return i + 3;
	return 0;
}

/* The host in punycode, appended to o; false if it is not a valid IDN. */
static bool out_punycode(struct out *o, const char *host, size_t n)
{
	char *name = sc_strndup(host, n), *ascii = NULL;
	/* Non-transitional IDNA2008 as browsers do ("faß" keeps its ß), and
	 * transitional processing for the names only it accepts, as curl does. */
	int rc = idn2_to_ascii_8z(name, &ascii, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);

	if (rc != IDN2_OK)
		rc = idn2_to_ascii_8z(name, &ascii, IDN2_NFC_INPUT | IDN2_TRANSITIONAL);
	free(name);
	if (rc != IDN2_OK)
		return false;
	out_str(o, ascii);
	idn2_free(ascii);
	return true;
}

char *sc_url_from_pasted(const char *text, size_t len)
{
	size_t b = 0, e = len, i;
	struct out o = { 0 };

	while (b < e && text[b] == ' ')
		b++;
	while (e > b && text[e - 1] == ' ')
		e--;
	for (i = b; i < e && !must_encode((unsigned char)text[i]); i++)
		;
	if (i == e && b == 0 && e == len)
		return NULL; /* the common case: nothing to do */

	const char *s = text + b;
	size_t n = e - b, host_b = 0, host_e = 0, auth = scheme_slashes(s, n);

	if (auth) {
		size_t auth_e = auth;
		while (auth_e < n && s[auth_e] != '/' && s[auth_e] != '?' && s[auth_e] != '#')
			auth_e++;
		host_b = auth;
		for (size_t j = auth; j < auth_e; j++)
			if (s[j] == '@')
				host_b = j + 1;
		host_e = host_b;
		if (host_e < auth_e && s[host_e] == '[') {
			while (host_e < auth_e && s[host_e] != ']')
				host_e++;
			if (host_e < auth_e)
				host_e++;
		} else {
			while (host_e < auth_e && s[host_e] != ':')
				host_e++;
		}
	}
	out_reserve(&o, n * 3);
	out_encoded(&o, s, host_b);
	bool ascii_host = true;
	for (i = host_b; i < host_e; i++)
		if ((unsigned char)s[i] >= 0x80)
			ascii_host = false;
	if (ascii_host || !out_punycode(&o, s + host_b, host_e - host_b))
		out_add(&o, s + host_b, host_e - host_b);
	out_encoded(&o, s + host_e, n - host_e);
	out_reserve(&o, 0);
	o.s[o.len] = '\0'; /* nothing was added when text was only spaces (fuzz-url) */
	if (o.len == len && memcmp(o.s, text, len) == 0) {
		/* Only a host that is no valid IDN was non-ASCII, and it stays
		 * as it was (found by fuzz-url): nothing changed after all. */
		free(o.s);
		return NULL;
	}
	return o.s;
}

/* ---- canonical URLs ---- */

/* RFC 3986 section 6.2.2.1-2: "%7e" is "~", "%3a" is "%3A".  Decoding
 * unreserved characters is equivalent in every component, so it is done
 * on the whole text before parsing: then "%2E%2E" is a dot segment that
 * the parser removes, as RFC 3986 and browsers agree.  A '%' that begins
 * no percent-encoding is one itself ("%25"): kept bare, "%4%42" would
 * become "%4B" and then "K" on a second pass (found by fuzz-url).
 * Returns NULL when there is nothing to change. */
static char *normalise_percent(const char *s)
{
	const char *p = strchr(s, '%');
	struct out o = { 0 };

	if (!p)
		return NULL;
	out_add(&o, s, (size_t)(p - s));
	for (; *p; p++) {
		int hi, lo;
		if (*p != '%') {
			out_add(&o, p, 1);
			continue;
		}
		if ((hi = sc_hex_value((unsigned char)p[1])) < 0 ||
		    (lo = sc_hex_value((unsigned char)p[2])) < 0) {
			out_str(&o, "%25");
			continue;
		}
		unsigned char c = (unsigned char)(hi << 4 | lo);
		if (sc_url_is_unreserved(c))
			out_add(&o, (const char *)&c, 1);
		else
			out_pct(&o, c);
		p += 2;
	}
	return o.s;
}

/* The query without the parameters whose names strip matches. */
static void out_query(struct out *o, const char *query, const regex_t *strip)
{
	struct out kept = { 0 };
	const char *part = query;

	if (!strip) {
		out_str(o, "?");
		out_str(o, query);
		return;
	}
	for (;;) {
		size_t n = strcspn(part, "&"), name_len = strcspn(part, "&=");
		char *name = sc_strndup(part, name_len);
		if (regexec(strip, name, 0, NULL, 0) != 0) {
			if (kept.len)
				out_add(&kept, "&", 1);
			out_add(&kept, part, n);
		}
		free(name);
		if (part[n] == '\0')
			break;
		part += n + 1;
	}
	if (kept.len) {
		out_str(o, "?");
		out_add(o, kept.s, kept.len);
	}
	free(kept.s);
}

/* A part of h, or NULL when the URL has none (no port, no query...). */
static char *part(CURLU *h, CURLUPart what, unsigned flags)
{
	char *v = NULL;

	if (curl_url_get(h, what, &v, flags) != CURLUE_OK)
		return NULL;
	return v;
}

/* The parts of a parsed URL its canonical form is made of (curl's
 * strings: parts_free). */
struct parts {
	char *scheme, *user, *password, *host, *port, *path, *query;
};

static void parts_free(struct parts *p)
{
	curl_free(p->scheme);
	curl_free(p->user);
	curl_free(p->password);
	curl_free(p->host);
	curl_free(p->port);
	curl_free(p->path);
	curl_free(p->query);
}

/* Why the URL h holds has no canonical form, or NULL; p gets its scheme
 * and host either way. */
static const char *refusal(CURLU *h, struct parts *p)
{
	char *zone;

	p->scheme = part(h, CURLUPART_SCHEME, 0);
	if (!p->scheme || (strcmp(p->scheme, "http") != 0 && strcmp(p->scheme, "https") != 0))
		return "not http or https";
	p->host = part(h, CURLUPART_HOST, 0);
	if (!p->host || !*p->host)
		return "not a URL: no host";
	/* sc_url_from_pasted made every valid IDN punycode: a non-ASCII byte
	 * left is a host no IDN rule accepts, which curl would pass on as
	 * it is (found by fuzz-url).  And a percent-encoded host name is
	 * none a crawl compares, nor one with a control character, which
	 * curl decodes from "%7F" ("https:/%7F" was "https://\x7f/", found
	 * by fuzz-url). */
	for (const char *c = p->host; *c; c++)
		if ((unsigned char)*c >= 0x7f || (unsigned char)*c <= ' ' || *c == '%')
			return "not a URL: the host is no valid host name";
	/* An IPv6 zone ID names an interface of the machine that reads the
	 * URL: no page can link to one meaningfully, and a byte that is no
	 * IPv6 character, percent-encoded by sc_url_from_pasted, turns into
	 * one ("[::\xc7]" into zone "C7"; found by fuzz-url). */
	if ((zone = part(h, CURLUPART_ZONEID, 0)) != NULL) {
		curl_free(zone);
		return "not a URL: an IPv6 zone ID";
	}
	return NULL;
}

/* scheme://[user[:password]@]host[:port]path[?query] into o, the host in
 * lower case (ASCII: refusal checked it), the query less what strip
 * matches; out gets where the host and the path are. */
static void write_parts(struct out *o, const struct parts *p, const regex_t *strip,
                        struct sc_url *out)
{
	out_str(o, p->scheme);
	out_str(o, "://");
	if (p->user) {
		out_str(o, p->user);
		if (p->password) {
			out_str(o, ":");
			out_str(o, p->password);
		}
		out_str(o, "@");
	}
	out->host_off = o->len;
	for (const char *c = p->host; *c; c++) {
		char lower = (char)tolower((unsigned char)*c);
		out_add(o, &lower, 1);
	}
	out->host_len = o->len - out->host_off;
	if (p->port) {
		out_str(o, ":");
		out_str(o, p->port);
	}
	out->path_off = o->len;
	out_str(o, p->path && *p->path == '/' ? p->path : "/");
	if (p->query && *p->query)
		out_query(o, p->query, strip);
}

/* What curl percent-encodes itself it writes in lower-case hex: a raw byte
 * of a relative reference that sc_url_from_pasted took for a host, say, as
 * its scheme is longer than curl allows ("[%d4]", found by fuzz-url).  The
 * canonical form has upper case: the encodings in s[from, len) made so. */
static void upper_case_hex(char *s, size_t from, size_t len)
{
	for (size_t i = from; i + 2 < len; i++)
		if (s[i] == '%' && sc_hex_value((unsigned char)s[i + 1]) >= 0 &&
		    sc_hex_value((unsigned char)s[i + 2]) >= 0) {
			s[i + 1] = (char)toupper((unsigned char)s[i + 1]);
			s[i + 2] = (char)toupper((unsigned char)s[i + 2]);
		}
}

/* The canonical form of the URL h holds into out, or -1 with *error. */
static int assemble(CURLU *h, const regex_t *strip, struct sc_url *out, const char **error)
{
	struct parts p = { 0 };
	struct out o = { 0 };
	const char *why = refusal(h, &p);

	if (why) {
		*error = why;
		parts_free(&p);
		return -1;
	}
	p.user = part(h, CURLUPART_USER, 0);
	p.password = part(h, CURLUPART_PASSWORD, 0);
	p.port = part(h, CURLUPART_PORT, CURLU_NO_DEFAULT_PORT);
	p.path = part(h, CURLUPART_PATH, 0);
	p.query = part(h, CURLUPART_QUERY, 0);
	write_parts(&o, &p, strip, out);
	upper_case_hex(o.s, out->path_off, o.len);
	out->url = o.s;
	out->https = p.scheme[4] == 's';
	parts_free(&p);
	return 0;
}

/* ---- the fast path: URLs that are canonical already ---- */

/* The fast path looks each byte of a link up in one table, built once:
 * most of a round's links take this path, and the comparisons it replaces
 * were a tenth of sc-frontier's time. */
enum {
	CH_HOST = 1, /* a host name in lower case: a-z 0-9 - . */
	CH_PATH = 2, /* what a path may hold for curl to give it back unchanged:
	              * unreserved characters, sub-delimiters, ':' '@' '/'
	              * (RFC 3986 pchar), but no '%', whose encodings would
	              * need normalising */
	CH_QUERY = 4 /* the same in a query, and '?' */
};
static unsigned char char_class[256];
static pthread_once_t char_class_once = PTHREAD_ONCE_INIT;

static void char_class_init(void)
{
	for (int c = 0; c < 256; c++) {
		bool host =
		        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
		bool path = sc_url_is_unreserved((unsigned char)c) ||
		            (c && strchr("/:@!$&'()*+,;=", c));
		char_class[c] =
		        (unsigned char)((host ? CH_HOST : 0) | (path ? CH_PATH | CH_QUERY : 0) |
		                        (c == '?' ? CH_QUERY : 0));
	}
}

/* Most links on a page are canonical already: http or https, a host name
 * in lower case without userinfo or port, a path and a query of plain
 * characters without dot segments.  For those curl's parse and reassembly
 * give back the same bytes (up to a fragment, which is dropped), and
 * checking that costs a fraction of it.  Fills out and returns true for
 * such a URL, or returns false for the full path. */
static bool canonical_already(const char *text, const regex_t *strip, struct sc_url *out,
                              size_t *len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i, host, last_label;

	pthread_once(&char_class_once, char_class_init);
	if (strncmp(text, "http://", 7) == 0)
		i = 7;
	else if (strncmp(text, "https://", 8) == 0)
		i = 8;
	else
		return false;
	host = last_label = i;
	for (; char_class[s[i]] & CH_HOST; i++)
		if (s[i] == '.') {
			if (i == host || s[i - 1] == '.')
				return false;
			last_label = i + 1;
		}
	/* A host whose last label begins with a digit may be an IPv4 address
	 * in one of the forms curl rewrites (1.2.3 or 0x7f.1). */
	if (i == host || s[i] != '/' || s[i - 1] == '.' ||
	    (s[last_label] >= '0' && s[last_label] <= '9'))
		return false;
	size_t path = i, seg = i + 1;
	bool query = false;
	for (;; i++) {
		unsigned char c = s[i];
		bool end = c == '\0' || c == '#';
		if (!query && (c == '/' || c == '?' || end)) {
			size_t n = i - seg; /* the segment just ended: no "." or ".." */
			if ((n == 1 && s[seg] == '.') ||
			    (n == 2 && s[seg] == '.' && s[seg + 1] == '.'))
				return false;
			seg = i + 1;
		}
		if (end)
			break;
		if (c == '?') {
			if (query)
				continue;
			/* An empty query is dropped, and a query to strip is
			 * rewritten: the full path does both. */
			if (strip || s[i + 1] == '\0' || s[i + 1] == '#')
				return false;
			query = true;
			continue;
		}
		if (!(char_class[c] & (query ? CH_QUERY : CH_PATH)))
			return false;
	}
	/* A fragment is dropped; it must still be made of URL characters. */
	for (size_t j = i; s[j]; j++)
		if (s[j] <= ' ' || s[j] >= 0x7f)
			return false;
	*len = i;
	out->host_off = host;
	out->host_len = path - host;
	out->path_off = path;
	out->https = host == 8;
	return true;
}

/* What curl's parser refused, in its own words (curl_url_strerror's) but
 * as static strings, so that threads may share them. */
static const char *parse_error(CURLUcode uc)
{
	switch (uc) {
	case CURLUE_BAD_SCHEME:
	case CURLUE_UNSUPPORTED_SCHEME:
		return "not a URL: no scheme, or a bad one";
	case CURLUE_BAD_HOSTNAME:
	case CURLUE_NO_HOST:
		return "not a URL: bad host name";
	case CURLUE_BAD_PORT_NUMBER:
		return "not a URL: bad port number";
	case CURLUE_BAD_IPV6:
		return "not a URL: bad IPv6 address";
	case CURLUE_BAD_LOGIN:
	case CURLUE_BAD_USER:
	case CURLUE_BAD_PASSWORD:
		return "not a URL: bad user or password";
	case CURLUE_BAD_PATH:
		return "not a URL: bad path";
	case CURLUE_BAD_QUERY:
		return "not a URL: bad query";
	case CURLUE_BAD_FRAGMENT:
		return "not a URL: bad fragment";
	case CURLUE_BAD_SLASHES:
		return "not a URL: bad slashes after the scheme";
	default:
		return "not a URL";
	}
}

/* sc_url_canonical, its reason one of this file's fixed texts. */
static int canonical(const char *text, const char *base, const regex_t *strip_query,
                     struct sc_url *out, const char **error)
{
	size_t len;

	memset(out, 0, sizeof(*out));
	/* Canonical already needs no encoding and no percent-normalising: it
	 * has neither spaces, non-ASCII bytes nor '%'. */
	if (canonical_already(text, strip_query, out, &len)) {
		out->url = sc_strndup(text, len);
		return 0;
	}

	char *pasted = sc_url_from_pasted(text, strlen(text));
	char *norm = normalise_percent(pasted ? pasted : text);
	const char *src = norm ? norm : pasted ? pasted : text;
	CURLU *h = curl_url();
	CURLUcode uc;
	int rc = -1;

	if (!h)
		sc_die(1, "out of memory");
	if (base) {
		/* The base as it would be requested, so that what a relative
		 * reference keeps of it is encoded too (found by fuzz-url). */
		char *base_pasted = sc_url_from_pasted(base, strlen(base));
		char *base_norm = normalise_percent(base_pasted ? base_pasted : base);
		uc = curl_url_set(h, CURLUPART_URL,
		                  base_norm     ? base_norm
		                  : base_pasted ? base_pasted
		                                : base,
		                  CURLU_NON_SUPPORT_SCHEME);
		free(base_norm);
		free(base_pasted);
		if (uc != CURLUE_OK) {
			*error = "not a URL: the base URL is not one";
			goto done;
		}
	}
	uc = curl_url_set(h, CURLUPART_URL, src, CURLU_NON_SUPPORT_SCHEME);
	if (uc == CURLUE_OUT_OF_MEMORY)
		sc_die(1, "out of memory");
	if (uc != CURLUE_OK) {
		*error = parse_error(uc);
		goto done;
	}
	rc = assemble(h, strip_query, out, error);
done:
	curl_url_cleanup(h);
	free(norm);
	free(pasted);
	return rc;
}

int sc_url_canonical(const char *text, const char *base, const regex_t *strip_query,
                     struct sc_url *out, char *err, size_t errlen)
{
	const char *why = NULL;
	int rc = canonical(text, base, strip_query, out, &why);

	if (rc < 0)
		snprintf(err, errlen, "%s", why);
	return rc;
}

int sc_url_canonical_buf(const char *text, const char *base, const regex_t *strip_query,
                         struct sc_buf *to, size_t *at, struct sc_url *out, char *err,
                         size_t errlen)
{
	size_t len, before = to->len;
	const char *url = text;

	memset(out, 0, sizeof(*out));
	if (!canonical_already(text, strip_query, out, &len)) {
		if (sc_url_canonical(text, base, strip_query, out, err, errlen) < 0)
			return -1;
		url = out->url;
		len = strlen(url);
	}
	int rc = sc_buf_add(to, url, len) == 0 && sc_buf_addc(to, '\0') == 0 ? 0 : -1;
	if (url != text)
		sc_url_free(out);
	if (rc < 0) {
		sc_buf_truncate(to, before);
		snprintf(err, errlen, "not a URL: too long");
		return -1;
	}
	*at = before;
	return 0;
}

void sc_url_free(struct sc_url *u)
{
	free(u->url);
	u->url = NULL;
}

char *sc_url_host(const struct sc_url *u)
{
	return sc_strndup(u->url + u->host_off, u->host_len);
}

char *sc_url_directory(const struct sc_url *u)
{
	const char *path = u->url + u->path_off;
	size_t n = strcspn(path, "?");

	while (n > 1 && path[n - 1] != '/')
		n--;
	return sc_strndup(u->url, u->path_off + n);
}

/* ---- origins ---- */

char *sc_url_origin(CURLU *h)
{
	char *scheme = NULL, *host = NULL, *port = NULL, *key = NULL;

	if (curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK && *host &&
	    curl_url_get(h, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
		size_t n = strlen(scheme) + strlen(host) + strlen(port) + sizeof("://:");
		key = sc_malloc(n);
		for (char *c = host; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
		snprintf(key, n, "%s://%s:%s", scheme, host, port);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	return key;
}

char *sc_url_origin_of(const char *url)
{
	CURLU *h = curl_url();
	char *key = NULL;

	if (!h)
		sc_die(1, "out of memory");
	if (curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK)
		key = sc_url_origin(h);
	curl_url_cleanup(h);
	return key;
}

/* ---- hosts and registrable domains ---- */

bool sc_url_host_is_ip(const char *host)
{
	struct in_addr a;

	return host[0] == '[' || inet_pton(AF_INET, host, &a) == 1;
}

static const psl_ctx_t *psl;
static pthread_once_t psl_once = PTHREAD_ONCE_INIT;

/* The newest list on the system: the one built into libpsl, or Debian's
 * publicsuffix package's if that is newer. */
static void psl_load(void)
{
	psl = psl_latest(NULL);
	if (!psl)
		psl = psl_builtin();
}

char *sc_url_registrable_domain(const char *host)
{
	const char *domain = NULL;

	if (sc_url_host_is_ip(host))
		return sc_strdup(host);
	pthread_once(&psl_once, psl_load);
	if (psl)
		domain = psl_registrable_domain(psl, host);
	return sc_strdup(domain ? domain : host);
}

char *sc_url_without_userinfo(const char *url)
{
	char *clean = NULL, *copy;
	CURLU *h;

	if (!strchr(url, '@'))
		return sc_strdup(url);
	if (!(h = curl_url()))
		sc_die(1, "out of memory");
	if (curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
		curl_url_cleanup(h);
		return sc_strdup(url); /* an '@' that is not userinfo: no URL parses without it */
	}
	curl_url_set(h, CURLUPART_USER, NULL, 0);
	curl_url_set(h, CURLUPART_PASSWORD, NULL, 0);
	curl_url_set(h, CURLUPART_OPTIONS, NULL, 0);
	if (curl_url_get(h, CURLUPART_URL, &clean, 0) != CURLUE_OK || !clean)
		sc_die(1, "out of memory");
	curl_url_cleanup(h);
	copy = sc_strdup(clean);
	curl_free(clean);
	return copy;
}

/* The proxy's name without user and password, or NULL when url is not a
 * proxy URL libcurl takes (http, https, socks4, socks4a, socks5,
 * socks5h). */
char *sc_url_proxy_name(const char *url)
{
	static const char *const schemes[] = { "http",    "https",  "socks4",
		                               "socks4a", "socks5", "socks5h" };
	CURLU *h = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *name = NULL;
	bool known = false;

	if (!h)
		sc_die(1, "out of memory");
	if (curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		for (size_t i = 0; i < sizeof(schemes) / sizeof(*schemes); i++)
			known = known || strcasecmp(scheme, schemes[i]) == 0;
		if (curl_url_get(h, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
			port = NULL;
	}
	if (known) {
		size_t len = strlen(scheme) + strlen(host) + (port ? strlen(port) : 4) + 8;
		name = sc_malloc(len);
		snprintf(name, len, "%s://%s:%s", scheme, host, port ? port : "1080");
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(h);
	return name;
}

const char *sc_url_proxy_problem(const char *url)
{
	if (!*url)
		return NULL; /* "": no proxy */
	char *name = sc_url_proxy_name(url);
	free(name);
	return name ? NULL
	            : "not a proxy URL (http, https, socks4, socks4a, socks5 or socks5h, and a "
	              "host)";
}
