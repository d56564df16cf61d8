/* Unit tests for lib/url: every canonicalisation rule, URLs as pasted,
 * hosts, directories and registrable domains against the PSL. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tap.h"
#include "web/url.h"

/* Whether sc_url_canonical_buf, appending to a buffer that holds
 * something already, gives what sc_url_canonical gave (u, or the error). */
static bool same_in_buf(const char *text, const char *base, const regex_t *strip,
                        const struct sc_url *u, const char *error)
{
	struct sc_buf b;
	struct sc_url v;
	char e[256] = "";
	size_t at = 0;
	bool same;

	sc_buf_init(&b, 1 << 20);
	sc_buf_adds(&b, "before");
	if (sc_url_canonical_buf(text, base, strip, &b, &at, &v, e, sizeof(e)) != 0)
		same = !u && strcmp(e, error) == 0 && b.len == 6;
	else
		same = u && !v.url && at == 6 && strcmp(b.p + at, u->url) == 0 &&
		       b.len == at + strlen(u->url) + 1 && v.host_off == u->host_off &&
		       v.host_len == u->host_len && v.path_off == u->path_off &&
		       v.https == u->https;
	sc_buf_free(&b);
	return same;
}

/* The canonical form of text, or "ERROR: message"; a static buffer.  Each
 * call also checks that the buffer variant agrees. */
static const char *canon_base(const char *text, const char *base, const regex_t *strip)
{
	static char buf[4096];
	struct sc_url u;
	char error[256] = "";

	if (sc_url_canonical(text, base, strip, &u, error, sizeof(error)) != 0) {
		snprintf(buf, sizeof(buf), "ERROR: %s", error);
		if (!same_in_buf(text, base, strip, NULL, error))
			ok(0, "sc_url_canonical_buf refuses %s as well", text);
		return buf;
	}
	snprintf(buf, sizeof(buf), "%s", u.url);
	if (!same_in_buf(text, base, strip, &u, NULL))
		ok(0, "sc_url_canonical_buf gives the same URL and offsets for %s", text);
	sc_url_free(&u);
	return buf;
}

static const char *canon(const char *text)
{
	return canon_base(text, NULL, NULL);
}

static void test_rfc3986_rules(void)
{
	is_str(canon("HTTP://example.com/"), "http://example.com/", "scheme lower-cased");
	is_str(canon("http://ExAmPle.COM/Path"), "http://example.com/Path",
	       "host lower-cased, path case kept");
	is_str(canon("http://example.com:80/"), "http://example.com/", "http default port dropped");
	is_str(canon("https://example.com:443/"), "https://example.com/",
	       "https default port dropped");
	is_str(canon("http://example.com:0080/"), "http://example.com/",
	       "default port with leading zeros dropped");
	is_str(canon("https://example.com:80/"), "https://example.com:80/",
	       "a port that is not the scheme's default is kept");
	is_str(canon("http://example.com:8080/x"), "http://example.com:8080/x", "other port kept");
	is_str(canon("http://example.com/a/./b/../c"), "http://example.com/a/c",
	       "dot segments removed");
	is_str(canon("http://example.com/a/b/../../../c"), "http://example.com/c",
	       "dot segments above the root stop at the root");
	is_str(canon("http://example.com/a/%2E%2E/b"), "http://example.com/b",
	       "percent-encoded dot segments removed too");
	is_str(canon("http://example.com/%7euser/%41%62"), "http://example.com/~user/Ab",
	       "percent-encoded unreserved characters decoded");
	is_str(canon("http://example.com/a%2fb%3a?x=%c3%a9"),
	       "http://example.com/a%2Fb%3A?x=%C3%A9",
	       "other percent-encodings upper-cased, not decoded");
	is_str(canon("http://example.com/100%"), "http://example.com/100%25",
	       "a stray percent sign is one itself, so that a second pass changes nothing");
	is_str(canon("http://example.com/%4%42"), "http://example.com/%254B",
	       "a stray percent sign does not join the next encoding (fuzz-url)");
	is_str(canon("http://example.com"), "http://example.com/", "empty path is /");
	is_str(canon("http://example.com?q=1"), "http://example.com/?q=1",
	       "empty path before a query is /");
	is_str(canon("http://example.com/p#section"), "http://example.com/p", "fragment dropped");
	is_str(canon("http://example.com/p?#x"), "http://example.com/p",
	       "empty query and fragment dropped");
	is_str(canon("http://example.com/p?b=2&a=1"), "http://example.com/p?b=2&a=1",
	       "query order kept (it can mean something)");
	is_str(canon("http://user:pw@Example.com/"), "http://user:pw@example.com/",
	       "userinfo kept");
	is_str(canon("http://[::1]:8080/x"), "http://[::1]:8080/x", "IPv6 host");
	is_str(canon("http://127.0.0.1:80/x"), "http://127.0.0.1/x", "IPv4 host");
}

static void test_idn_and_pasted_input(void)
{
	is_str(canon("http://bücher.example/"), "http://xn--bcher-kva.example/",
	       "IDN host in punycode");
	is_str(canon("http://BÜCHER.Example/"), "http://xn--bcher-kva.example/",
	       "upper-case IDN host mapped, then punycode");
	is_str(canon("http://XN--BCHER-KVA.example/"), "http://xn--bcher-kva.example/",
	       "punycode host lower-cased");
	is_str(canon("http://h/ok?q=ツ&x=a b"), "http://h/ok?q=%E3%83%84&x=a%20b",
	       "pasted URL: UTF-8 and spaces encoded");
	is_str(canon("  http://h/x  "), "http://h/x", "surrounding spaces trimmed");
}

/* URLs that are canonical already take a fast path that does not call
 * curl; an upper-case scheme sends the same URL through curl, and both
 * must agree. */
static void test_fast_path_agrees_with_curl(void)
{
	static const char *urls[] = {
		"http://example.com/",
		"https://docs.python.org/3/library/asyncio-task.html",
		"http://h/a//b",
		"http://h/a/.b/..c/...",
		"http://h/:@!$&'()*+,;=-._~",
		"http://h/p?a=b?c/d&e=:@",
		"http://h/p?x#frag",
		"http://h/p#",
		"http://h/p/.",
		"http://h/p/..",
		"http://h/./p",
		"http://h/p?",
		"http://h/p?#f",
		"http://1.2.3/",
		"http://0x7f.1/",
		"http://h.example./x",
		"http://a-b.example/~x_y.z",
		"http://xn--bcher-kva.example/x",
		"http://h/%41",
		"http://h/p?q=%7e",
		"http://h/a\\b",
		"http://h/a{b}",
		"http://h/a|b",
	};
	char fast[4096];

	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		snprintf(fast, sizeof(fast), "%s", canon(urls[i]));
		char upper[4096];
		snprintf(upper, sizeof(upper), "HTTP%s", urls[i] + 4);
		is_str(canon(upper), fast, "fast path and curl agree on %s", urls[i]);
	}
}

static void test_refusals(void)
{
	is_str(canon("ftp://example.com/"), "ERROR: not http or https", "ftp refused");
	ok(strncmp(canon("mailto:a@example.com"), "ERROR: not a URL", 16) == 0, "mailto refused");
	ok(strncmp(canon("not a url"), "ERROR: not a URL", 16) == 0, "text refused");
	ok(strncmp(canon("/relative"), "ERROR: not a URL", 16) == 0,
	   "relative without base refused");
	ok(strncmp(canon("http://h/a\tb"), "ERROR: not a URL", 16) == 0,
	   "control character refused");
	ok(strncmp(canon("http://h:99999/"), "ERROR: not a URL", 16) == 0, "bad port refused");
	ok(strncmp(canon(""), "ERROR:", 6) == 0, "empty string refused");
}

static void test_relative(void)
{
	is_str(canon_base("../c?x#f", "http://Example.com/a/b/page", NULL),
	       "http://example.com/a/c?x", "relative resolved against the base");
	is_str(canon_base("//other.example/x", "https://example.com/", NULL),
	       "https://other.example/x", "scheme-relative resolved");
	is_str(canon_base("http://abs.example/", "https://example.com/", NULL),
	       "http://abs.example/", "absolute ignores the base");
}

static void test_strip_query(void)
{
	regex_t re;

	if (regcomp(&re, "^utm_", REG_EXTENDED | REG_NOSUB) != 0) {
		ok(0, "regcomp");
		return;
	}
	is_str(canon_base("http://h/p?utm_source=x&id=3&utm_medium=y", NULL, &re),
	       "http://h/p?id=3", "matching parameters removed, others kept in order");
	is_str(canon_base("http://h/p?utm_source=x&utm_medium=y", NULL, &re), "http://h/p",
	       "a query left empty is dropped with its ?");
	is_str(canon_base("http://h/p?id=3", NULL, &re), "http://h/p?id=3",
	       "nothing to strip: unchanged");
	is_str(canon_base("http://h/p?%75tm_x=1&a", NULL, &re), "http://h/p?a",
	       "names matched after percent-encoding normalisation");
	regfree(&re);
}

static void test_from_pasted(void)
{
	const char *valid = "http://example.com/a?b=c%20d";
	char *s;

	ok(sc_url_from_pasted(valid, strlen(valid)) == NULL,
	   "an ASCII URL without spaces needs no change");
	s = sc_url_from_pasted("http://h/ok?q=ツ&x=a b", strlen("http://h/ok?q=ツ&x=a b"));
	is_str(s, "http://h/ok?q=%E3%83%84&x=a%20b", "non-ASCII as UTF-8 and spaces as %%20");
	free(s);
	s = sc_url_from_pasted("http://bücher.example/", strlen("http://bücher.example/"));
	is_str(s, "http://xn--bcher-kva.example/", "IDN host in punycode");
	free(s);
	s = sc_url_from_pasted("https://u:p@bücher.example:8443/ü?ü#ü",
	                       strlen("https://u:p@bücher.example:8443/ü?ü#ü"));
	is_str(s, "https://u:p@xn--bcher-kva.example:8443/%C3%BC?%C3%BC#%C3%BC",
	       "userinfo and port kept, every other component encoded");
	free(s);
	s = sc_url_from_pasted("/wiki/Straße", strlen("/wiki/Straße"));
	is_str(s, "/wiki/Stra%C3%9Fe", "a relative reference is encoded too");
	free(s);
	s = sc_url_from_pasted(" http://h/ ", 11);
	is_str(s, "http://h/", "surrounding spaces removed");
	free(s);
	s = sc_url_from_pasted("http://bad\xff.example/", strlen("http://bad\xff.example/"));
	ok(s == NULL, "an invalid IDN host is left as it is: nothing changed, NULL");
	free(s);
	s = sc_url_from_pasted("http://bad\xff.example/a b", strlen("http://bad\xff.example/a b"));
	is_str(s, "http://bad\xff.example/a%20b", "the rest is encoded around an invalid IDN host");
	free(s);
	is_str(canon("http://bad\xff.example/"), "ERROR: not a URL: the host is no valid host name",
	       "a host that is no valid IDN is no canonical URL (fuzz-url)");
	is_str(canon("http:/[::\xc7]:2"), "ERROR: not a URL: an IPv6 zone ID",
	       "a raw byte in an IPv6 literal does not become a zone ID (fuzz-url)");
	is_str(canon("http://[fe80::1%25eth0]/"), "ERROR: not a URL: an IPv6 zone ID",
	       "a link-local zone ID names no host a crawl can share");
	is_str(canon_base("hVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVp://[\xd4]", "http://tp/",
	                  NULL),
	       "http://tp/hVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVp://[%D4]",
	       "what curl encodes itself comes out in upper-case hex (fuzz-url)");
	is_str(canon("https:/%7F"), "ERROR: not a URL: the host is no valid host name",
	       "a host that curl decodes to a control character is refused (fuzz-url)");
	is_str(canon("http://a%01b/"), "ERROR: not a URL: bad host name",
	       "one that it decodes to another control character curl refuses itself");
	is_str(canon("http://[::1]:8080/a"), "http://[::1]:8080/a",
	       "an IPv6 literal without one is kept");
}

static void test_host_and_directory(void)
{
	struct sc_url u;
	char error[256] = "";
	char *s;

	if (sc_url_canonical("http://User@WWW.Example.com:8080/a/b/c.html?x=/y", NULL, NULL, &u,
	                     error, sizeof(error)) != 0) {
		ok(0, "parse: %s", error);
		return;
	}
	s = sc_url_host(&u);
	is_str(s, "www.example.com", "host: lower-case, no port, no userinfo");
	free(s);
	s = sc_url_directory(&u);
	is_str(s, "http://User@www.example.com:8080/a/b/", "directory ends at the last /");
	free(s);
	ok(!u.https, "http is not https");
	sc_url_free(&u);
	if (sc_url_canonical("https://h", NULL, NULL, &u, error, sizeof(error)) == 0) {
		s = sc_url_directory(&u);
		is_str(s, "https://h/", "the root's directory is itself");
		free(s);
		ok(u.https, "https");
		sc_url_free(&u);
	}
}

static void test_registrable_domain(void)
{
	static const char *cases[][2] = {
		{ "www.example.co.uk", "example.co.uk" },
		{ "example.co.uk", "example.co.uk" },
		{ "co.uk", "co.uk" },
		{ "foo.github.io", "foo.github.io" },
		{ "a.b.foo.github.io", "foo.github.io" },
		{ "github.io", "github.io" },
		{ "www.example.com", "example.com" },
		{ "a.b.c.example.com", "example.com" },
		{ "example.com", "example.com" },
		{ "127.0.0.1", "127.0.0.1" },
		{ "[::1]", "[::1]" },
		{ "localhost", "localhost" },
		{ "a.example.xn--p1ai", "example.xn--p1ai" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = sc_url_registrable_domain(cases[i][0]);
		is_str(d, cases[i][1], "registrable domain of %s", cases[i][0]);
		free(d);
	}
	ok(sc_url_host_is_ip("10.1.2.3"), "IPv4 is an IP");
	ok(sc_url_host_is_ip("[fe80::1]"), "IPv6 is an IP");
	ok(!sc_url_host_is_ip("1.example"), "a name is not an IP");
}

static void test_canonical_buf(void)
{
	struct sc_buf b;
	struct sc_url u;
	char error[256] = "";
	size_t at1 = 99, at2 = 99;

	sc_buf_init(&b, 40);
	ok(sc_url_canonical_buf("http://a.example/x", NULL, NULL, &b, &at1, &u, error,
	                        sizeof(error)) == 0 &&
	           sc_url_canonical_buf("HTTP://B.example:80/%7e", NULL, NULL, &b, &at2, &u, error,
	                                sizeof(error)) == 0,
	   "two URLs, the fast path and curl's, one after the other");
	ok(at1 == 0 && at2 == 19 && strcmp(b.p + at2, "http://b.example/~") == 0 && b.len == 38,
	   "each NUL-terminated, at its offset");
	ok(sc_url_canonical_buf("http://c.example/", NULL, NULL, &b, &at1, &u, error,
	                        sizeof(error)) == -1 &&
	           strcmp(error, "not a URL: too long") == 0 && b.len == 38,
	   "past the buffer's maximum: refused, the buffer as it was");
	sc_buf_free(&b);
}

static void test_without_userinfo(void)
{
	static const char *const cases[][2] = {
		{ "http://example.com/a", "http://example.com/a" },
		{ "http://user:pw@example.com/a?q=1", "http://example.com/a?q=1" },
		{ "https://user@example.com:8443/", "https://example.com:8443/" },
		{ "http://u;opt@example.com/", "http://example.com/" },
		{ "ftp://u:p@example.com/f", "ftp://example.com/f" },
		{ "http://example.com/a@b", "http://example.com/a@b" },
		{ "not a url @ all", "not a url @ all" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *got = sc_url_without_userinfo(cases[i][0]);
		is_str(got, cases[i][1], "without userinfo: %s", cases[i][0]);
		free(got);
	}
}

/* The origin key, against what the engine, robots.txt and sc-report each
 * built by hand before sc_url_origin (compared case by case when they
 * were replaced). */
static void test_origin(void)
{
	static const char *const cases[][2] = {
		{ "http://example.com/", "http://example.com:80" },
		{ "https://example.com", "https://example.com:443" },
		{ "HtTpS://WWW.Example.Org:443/x?y#z", "https://www.example.org:443" },
		{ "http://example.com:8080/x", "http://example.com:8080" },
		{ "https://example.com:80/", "https://example.com:80" },
		{ "https://example.com:0443/", "https://example.com:443" },
		{ "http://example.com:/x", "http://example.com:80" },
		{ "http://user:pass@Example.com:81/", "http://example.com:81" },
		{ "http://[::1]/", "http://[::1]:80" },
		{ "http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080" },
		{ "http://[2001:DB8::A]/", "http://[2001:db8::a]:80" },
		{ "http://[fe80::1%25eth0]/", "http://[fe80::1]:80" },
		{ "http://127.1/", "http://127.0.0.1:80" },
		{ "http://EXAMPLE.com.:8080/", "http://example.com.:8080" },
		/* An IDN host as given (only ASCII lower-cased): the engine
		 * requests it in punycode, sc_url_from_pasted's. */
		{ "http://B\xc3\x9c"
		  "CHER.example/x",
		  "http://b\xc3\x9c"
		  "cher.example:80" },
		{ "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example:443" },
		/* Any scheme curl knows a port of (sc-report's host table). */
		{ "FTP://Example.com/", "ftp://example.com:21" },
		{ "foo://Host:99/", "foo://host:99" },
		{ "foo://host/", NULL },
		{ "file:///etc/passwd", NULL },
		{ "mailto:a@b", NULL },
		{ "/relative", NULL },
		{ "", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *got = sc_url_origin_of(cases[i][0]);
		if (cases[i][1])
			is_str(got, cases[i][1], "origin of %s", cases[i][0]);
		else
			ok(!got, "no origin of '%s' (got %s)", cases[i][0], got ? got : "NULL");
		free(got);
	}

	/* Pasted, then keyed, as the engine does: the punycode host. */
	char *pasted = sc_url_from_pasted("http://B\xc3\x9c"
	                                  "CHER.example/",
	                                  23);
	char *key = pasted ? sc_url_origin_of(pasted) : NULL;
	is_str(key, "http://xn--bcher-kva.example:80", "origin of a pasted IDN URL");
	free(key);
	free(pasted);

	/* From a handle, as the engine and robots.txt hold one. */
	CURLU *h = curl_url();
	curl_url_set(h, CURLUPART_URL, "https://A.example:8443/p?q", 0);
	key = sc_url_origin(h);
	is_str(key, "https://a.example:8443", "origin from a handle");
	free(key);
	curl_url_cleanup(h);

	/* A long host is not cut (the engine's and sc-report's 1 KiB
	 * buffers cut it; robots.txt's key did not). */
	char host[1101], url[1200], want[1200];
	memset(host, 'a', 1100);
	host[1100] = '\0';
	snprintf(url, sizeof(url), "http://%s.example/", host);
	snprintf(want, sizeof(want), "http://%s.example:80", host);
	key = sc_url_origin_of(url);
	is_str(key, want, "a 1,100-byte host whole");
	free(key);
}

int main(void)
{
	test_rfc3986_rules();
	test_idn_and_pasted_input();
	test_fast_path_agrees_with_curl();
	test_refusals();
	test_relative();
	test_strip_query();
	test_from_pasted();
	test_host_and_directory();
	test_registrable_domain();
	test_canonical_buf();
	test_without_userinfo();
	test_origin();
	return tap_done();
}
