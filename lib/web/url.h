/* url: canonical URLs, URLs as people paste them, and the host and
 * registrable-domain keys that a crawl's scopes and shards use.
 *
 * Parsing, dot-segment removal, scheme case, default ports and the
 * assembly of parts are libcurl's URL API (curl_url); IDN hosts go to
 * punycode through libidn2 directly, because curl 7.88's CURLU_PUNYCODE
 * converts from the locale's character set and fails in the C locale;
 * registrable domains are the Public Suffix List's, through libpsl.  What
 * is written here is only what those lack: percent-encoding normalisation
 * (curl 7.88 neither decodes %41 nor upper-cases hex), lower-casing the
 * host, removing query parameters by name, and a cheap check that a URL is
 * canonical already, which most links are (test-url.c holds it to curl's
 * answer).
 *
 * Strings returned are malloced and the caller frees them; arguments are
 * borrowed.  Error messages are static strings. */
#ifndef SC_URL_H
#define SC_URL_H

#include <curl/curl.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/* A URL as people paste it, made into the form to request, as browsers,
 * wget and the WHATWG URL standard do: leading and trailing spaces
 * removed, a non-ASCII host converted to punycode (IDNA2008 with UTS #46
 * mapping, so "BÜCHER.example" is "xn--bcher-kva.example"), and every
 * other non-ASCII byte and every space percent-encoded ("ツ" is
 * "%E3%83%84", " " is "%20").  Works on relative references too.
 * Returns NULL when text[0..len) needs no change, which is the cheap common
 * case (a URL in ASCII without spaces), else the new string.  A host that
 * is not a valid IDN is left as it is, for the URL parser to refuse. */
char *sc_url_from_pasted(const char *text, size_t len);

/* A canonical URL and where its parts are, so callers need not parse it
 * again.  url is malloced (free it, or call sc_url_free). */
struct sc_url {
	char *url;
	size_t host_off, host_len; /* the host: lower-case, punycode, IPv6 in [] */
	size_t path_off;           /* the path, which begins with '/' */
	bool https;
};

/* The canonical form of text (RFC 3986 section 6.2.2, as a crawl compares
 * URLs): scheme and host in lower case, the scheme's default port dropped,
 * dot segments removed, percent-encoded unreserved characters decoded and
 * other percent-encodings in upper-case hex, an empty path "/", no
 * fragment, an IDN host in punycode.  Only http and https are accepted.
 * text is first made as sc_url_from_pasted does, so "ツ" and spaces are
 * accepted and encoded.  A relative reference is resolved against base
 * (an absolute URL), or refused when base is NULL.  strip_query, when not
 * NULL, removes every query parameter whose name it matches (regexec on
 * the name, after percent-encoding normalisation), and a query left empty
 * is dropped with its '?'.  Userinfo is kept.
 * Returns 0 and fills *out, or -1 with the reason in err ("not a URL:
 * ...", "not http or https"). */
int sc_url_canonical(const char *text, const char *base, const regex_t *strip_query,
                     struct sc_url *out, char *err, size_t errlen);
void sc_url_free(struct sc_url *u);

struct sc_buf;
/* The same canonical form, appended with a NUL to the buffer to, for a
 * caller that keeps many URLs (sc-frontier's batches): one allocation for
 * all of them instead of one each.  The URL is at to->p + *at; out gets
 * the offsets and https, and out->url is NULL (there is nothing to free).
 * Returns 0, or -1 with the reason in err and to unchanged (also when
 * to's maximum is reached: "not a URL: too long"). */
int sc_url_canonical_buf(const char *text, const char *base, const regex_t *strip_query,
                         struct sc_buf *to, size_t *at, struct sc_url *out, char *err,
                         size_t errlen);

/* The canonical URL's host, a new string: the same host always gives the
 * same key, whatever case, port or IDN form the URLs used. */
char *sc_url_host(const struct sc_url *u);

/* The canonical URL up to and including the last '/' of its path: the
 * "directory" that a prefix scope keeps to.  A new string. */
char *sc_url_directory(const struct sc_url *u);

/* The registrable domain of a host (lower-case, punycode, as
 * sc_url_host gives): "www.example.co.uk" is "example.co.uk" and
 * "foo.github.io" stays "foo.github.io" (the PSL's private section
 * included).  An IP address, a host that is itself a public suffix
 * ("co.uk", "localhost") or one the PSL knows nothing useful about is
 * its own domain.  A new string. */
char *sc_url_registrable_domain(const char *host);

/* True if host is an IPv4 address or a bracketed IPv6 address. */
bool sc_url_host_is_ip(const char *host);

/* The key of the origin of the URL h holds: "scheme://host:port", the
 * scheme as curl gives it (lower case), the host in lower case (an IPv6
 * address in brackets, a zone ID with it; an IDN host as h holds it:
 * callers that request punycode make it so first, as sc_url_from_pasted
 * does), the port always written (the scheme's default when the URL has
 * none: "http://a.example:80").  The one spelling of an origin that
 * processes share: the engine's per-origin state and its metrics' "host"
 * (lib/engine/fetch_submit.c), the rows of the origin state
 * (--origin-state) and of the robots.txt cache, robots.txt's URL
 * (sc_robots_split_url) and sc-report's host table.  A new string, or
 * NULL when h has no scheme, no host, or no port known for its scheme. */
char *sc_url_origin(CURLU *h);

/* The same key of a URL's text, parsed by curl as sc-fetch parses it (any
 * scheme curl can parse).  A new string, or NULL. */
char *sc_url_origin_of(const char *url);

/* A proxy URL's name, scheme://host:port, its user and password left out
 * (what metrics may say), or NULL when url is no proxy libcurl takes
 * (http, https, socks4, socks4a, socks5, socks5h, with a host; no CR or
 * LF).  Malloced. */
char *sc_url_proxy_name(const char *url);
/* Why url is no proxy (sc-fetch's --proxy, a record's "proxy"), or NULL;
 * "" is none (a direct request) and no problem. */
const char *sc_url_proxy_problem(const char *url);

/* An unreserved character of RFC 3986 (2.3): ALPHA DIGIT "-" "." "_" "~",
 * which percent-encoding normalisation decodes. */
static inline bool sc_url_is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* url without its userinfo (user, password, options), as logs and
 * records show a URL: "http://u:p@h/x" is "http://h/x".  Any scheme; text
 * that does not parse as a URL, or holds no '@', is copied as it is.  A
 * new string. */
char *sc_url_without_userinfo(const char *url);

#endif
