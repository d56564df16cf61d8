/* Unit tests for lib/robots: parsing, group choice, matching, outcomes by
 * status, and the cache across runs (with an injected clock, and two
 * writers at once).  Cases come from RFC 9309 (sections 2.2, 5.1, 5.2) and
 * from the behaviour Google's reference parser documents. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "web/robots.h"

static bool allowed(const char *text, const char *agent, const char *path)
{
	struct sc_robots *r = sc_robots_parse(text, strlen(text), agent);
	bool yes = sc_robots_allowed(r, path);

	sc_robots_free(r);
	return yes;
}

#define ALLOWED(text, agent, path) ok(allowed(text, agent, path), "%s: %s allowed", agent, path)
#define REFUSED(text, agent, path) ok(!allowed(text, agent, path), "%s: %s refused", agent, path)

static void test_product_token(void)
{
	char *t;

	is_str(t = sc_robots_product_token("Mozilla/5.0 (X11; Linux)"), "Mozilla", "up to '/'");
	free(t);
	is_str(t = sc_robots_product_token("sc-fetch/0.1.0"), "sc-fetch", "hyphen kept");
	free(t);
	is_str(t = sc_robots_product_token("FooBot crawler"), "FooBot", "up to a space");
	free(t);
	is_str(t = sc_robots_product_token("plain"), "plain", "a bare token");
	free(t);
	is_str(t = sc_robots_product_token(NULL), "", "NULL is empty");
	free(t);
	/* The whole agent string may be passed to parse: only its token counts. */
	REFUSED("User-agent: foobot\nDisallow: /\n", "FooBot/2.1 (+http://x)", "/a");
	ALLOWED("User-agent: foobot\nDisallow: /\n", "foobotx/1", "/a");
}

/* RFC 9309 section 5.1, the whole example. */
static void test_rfc_example(void)
{
	static const char t[] = "User-Agent: *\n"
	                        "Disallow: *.gif$\n"
	                        "Disallow: /example/\n"
	                        "Allow: /publications/\n"
	                        "\n"
	                        "User-Agent: foobot\n"
	                        "Disallow:/\n"
	                        "Allow:/example/page.html\n"
	                        "Allow:/example/allowed.gif\n"
	                        "\n"
	                        "User-Agent: barbot\n"
	                        "User-Agent: bazbot\n"
	                        "Disallow: /example/page.html\n"
	                        "\n"
	                        "User-Agent: quxbot\n"
	                        "\n"
	                        "EOF\n";

	ALLOWED(t, "foobot", "/example/page.html");
	ALLOWED(t, "foobot", "/example/allowed.gif");
	REFUSED(t, "foobot", "/example/other.html");
	REFUSED(t, "foobot", "/");
	REFUSED(t, "barbot", "/example/page.html");
	REFUSED(t, "bazbot", "/example/page.html");
	ALLOWED(t, "barbot", "/example/other.html");
	ALLOWED(t, "barbot", "/x.gif"); /* its own group, not "*" */
	ALLOWED(t, "quxbot", "/example/page.html");
	ALLOWED(t, "quxbot", "/x.gif");
	REFUSED(t, "otherbot", "/x.gif");
	REFUSED(t, "otherbot", "/example/a");
	ALLOWED(t, "otherbot", "/publications/a");
	ALLOWED(t, "otherbot", "/x.gif?a=b"); /* $ anchors the whole path+query */
}

/* RFC 9309 section 5.2: the longest match. */
static void test_longest_match(void)
{
	static const char t[] = "User-Agent: foobot\n"
	                        "Allow: /example/page/\n"
	                        "Disallow: /example/page/disallowed.gif\n";

	ALLOWED(t, "foobot", "/example/page/");
	REFUSED(t, "foobot", "/example/page/disallowed.gif");
	ALLOWED(t, "foobot", "/example/page/other.gif");

	/* Order in the file does not matter, only length. */
	static const char u[] = "User-agent: *\nDisallow: /a/b/c\nAllow: /a\nDisallow: /\n";
	REFUSED(u, "x", "/a/b/c/d");
	ALLOWED(u, "x", "/a/b");
	REFUSED(u, "x", "/b");
	static const char v[] = "User-agent: *\nAllow: /\nDisallow: /cgi-bin\n";
	REFUSED(v, "x", "/cgi-bin/x");
	ALLOWED(v, "x", "/cgi");
}

static void test_allow_wins_tie(void)
{
	REFUSED("User-agent: *\nDisallow: /a\nAllow: /b\n", "x", "/a");
	ALLOWED("User-agent: *\nDisallow: /a\nAllow: /a\n", "x", "/a");
	ALLOWED("User-agent: *\nAllow: /a\nDisallow: /a\n", "x", "/a");
	/* A longer wildcard pattern beats a shorter plain one, and the reverse. */
	ALLOWED("User-agent: *\nDisallow: /fo*\nAllow: /foo\n", "x", "/foo.html");
	REFUSED("User-agent: *\nDisallow: /fo*x\nAllow: /foo\n", "x", "/foox");
}

/* Google's documented examples of path matching. */
static void test_wildcards(void)
{
	static const struct {
		const char *pattern, *path;
		bool match;
	} cases[] = {
		{ "/fish", "/fish", true },
		{ "/fish", "/fish.html", true },
		{ "/fish", "/fish/salmon.html", true },
		{ "/fish", "/fishheads/yummy.html", true },
		{ "/fish", "/fish.php?id=anything", true },
		{ "/fish", "/Fish.asp", false },
		{ "/fish", "/catfish", false },
		{ "/fish", "/?id=fish", false },
		{ "/fish", "/desert/fish", false },
		{ "/fish*", "/fish.html", true },
		{ "/fish*", "/catfish", false },
		{ "/fish/", "/fish/?id=anything", true },
		{ "/fish/", "/fish", false },
		{ "/fish/", "/animals/fish/", false },
		{ "/*.php", "/index.php", true },
		{ "/*.php", "/folder/filename.php?parameters", true },
		{ "/*.php", "/folder/any.php.file.html", true },
		{ "/*.php", "/", false },
		{ "/*.php", "/windows.PHP", false },
		{ "/*.php$", "/filename.php", true },
		{ "/*.php$", "/folder/filename.php", true },
		{ "/*.php$", "/filename.php?parameters", false },
		{ "/*.php$", "/filename.php/", false },
		{ "/*.php$", "/filename.php5", false },
		{ "/fish*.php", "/fish.php", true },
		{ "/fish*.php", "/fishheads/catfish.php?parameters", true },
		{ "/fish*.php", "/Fish.PHP", false },
		{ "/*", "/anything", true },
		{ "*", "/anything", true },
		{ "/$", "/", true },
		{ "/$", "/a", false },
		{ "/a$b", "/a$b", true }, /* '$' inside a pattern is literal */
		{ "/a$b", "/ab", false },
		{ "/**a***b", "/xaYb", true },
		{ "/a*b$", "/a-b-c", false },
		{ "/a*b$", "/a-b-cb", true },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[256];
		snprintf(text, sizeof text, "User-agent: *\nDisallow: %s\n", cases[i].pattern);
		ok(allowed(text, "x", cases[i].path) != cases[i].match, "Disallow: %s %s %s",
		   cases[i].pattern, cases[i].match ? "refuses" : "lets through", cases[i].path);
	}
}

static void test_percent_encoding(void)
{
	char *n;

	is_str(n = sc_robots_normalize("/a%2fb", 6), "/a%2Fb", "hex upper-cased");
	free(n);
	is_str(n = sc_robots_normalize("/%62%61%7A", 10), "/baz", "unreserved decoded (RFC 2.2.2)");
	free(n);
	is_str(n = sc_robots_normalize("/foo/bar/\xE3\x83\x84", 12), "/foo/bar/%E3%83%84",
	       "UTF-8 encoded (RFC 2.2.2)");
	free(n);
	is_str(n = sc_robots_normalize("/a%7e%2D%zz%4", 13), "/a~-%25zz%254",
	       "a %% that starts no escape is encoded");
	free(n);
	is_str(n = sc_robots_normalize("/a b", 4), "/a%20b", "space encoded");
	free(n);

	REFUSED("User-agent: *\nDisallow: /a%2fb\n", "x", "/a%2Fb/c");
	REFUSED("User-agent: *\nDisallow: /a%2Fb\n", "x", "/a%2fb");
	ALLOWED("User-agent: *\nDisallow: /a%2Fb\n", "x", "/a/b"); /* %2F is not '/' */
	REFUSED("User-agent: *\nDisallow: /%7Euser\n", "x", "/~user/x");
	REFUSED("User-agent: *\nDisallow: /~user\n", "x", "/%7euser/x");
	REFUSED("User-agent: *\nDisallow: /foo/bar/ツ\n", "x", "/foo/bar/%E3%83%84");
	REFUSED("User-agent: *\nDisallow: /foo/bar/%E3%83%84\n", "x", "/foo/bar/ツ");
	REFUSED("User-agent: *\nDisallow: /foo/bar/%e3%83%84\n", "x", "/foo/bar/ツ");
	/* RFC 9309 2.2.3: an escaped '*' or '$' in a rule is the literal byte. */
	REFUSED("User-agent: *\nDisallow: /path/file-with-a-%2A.html\n", "x",
	        "/path/file-with-a-*.html");
	ALLOWED("User-agent: *\nDisallow: /path/file-with-a-%2A.html\n", "x",
	        "/path/file-with-a-b.html");
	ALLOWED("User-agent: *\nDisallow: /\nAllow: /path/foo-%24\n", "x", "/path/foo-$");
}

static void test_groups(void)
{
	/* Groups naming the agent are merged, wherever they are. */
	static const char merged[] = "User-agent: foo\nDisallow: /a\n"
	                             "User-agent: *\nDisallow: /b\n"
	                             "User-agent: FOO\nDisallow: /c\n";
	REFUSED(merged, "foo", "/a");
	REFUSED(merged, "foo", "/c");
	ALLOWED(merged, "foo", "/b");
	REFUSED(merged, "bar", "/b");
	ALLOWED(merged, "bar", "/a");

	/* The "*" groups are merged too. */
	static const char stars[] = "User-agent: *\nDisallow: /a\n"
	                            "User-agent: foo\nDisallow: /z\n"
	                            "User-agent: *\nDisallow: /b\n";
	REFUSED(stars, "bar", "/a");
	REFUSED(stars, "bar", "/b");
	ALLOWED(stars, "bar", "/z");

	/* No group for the agent and no "*": everything allowed. */
	ALLOWED("User-agent: foo\nDisallow: /\n", "bar", "/x");
	/* Rules before any User-agent line belong to no group. */
	ALLOWED("Disallow: /\nUser-agent: *\nDisallow: /b\n", "x", "/a");
	/* Blank lines and unknown fields do not end a group. */
	REFUSED("User-agent: *\n\nFoo: bar\n\nDisallow: /a\n", "x", "/a");
	/* A User-agent line after a rule opens a new group. */
	static const char two[] = "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n";
	ALLOWED(two, "a", "/y");
	ALLOWED(two, "b", "/x");
	REFUSED(two, "b", "/y");
	/* Both a name and "*" in one group. */
	REFUSED("User-agent: foo\nUser-agent: *\nDisallow: /a\n", "bar", "/a");
	REFUSED("User-agent: foo\nUser-agent: *\nDisallow: /a\n", "foo", "/a");
	/* A named group that says nothing still hides the "*" group. */
	ALLOWED("User-agent: *\nDisallow: /\nUser-agent: foo\n", "foo", "/a");
	/* "*x" is not the star group; "* " is. */
	ALLOWED("User-agent: *x\nDisallow: /\n", "bar", "/a");
	REFUSED("User-agent: * # all\nDisallow: /\n", "bar", "/a");
	/* The line's token is its leading [A-Za-z_-] run. */
	REFUSED("User-agent: FooBot/1.2\nDisallow: /\n", "foobot", "/a");
	REFUSED("User-agent: foo bar\nDisallow: /\n", "foo", "/a");
}

static void test_syntax(void)
{
	char *n;

	/* Field names in any case, spaces around the colon, misspellings. */
	REFUSED("USER-AGENT: *\nDISALLOW: /a\n", "x", "/a");
	REFUSED("user-agent:*\ndisallow:/a\n", "x", "/a");
	REFUSED("  User-agent  :  *  \n  Disallow  :  /a  \n", "x", "/a");
	REFUSED("useragent: *\ndissallow: /a\n", "x", "/a");
	/* CR, LF, CRLF and a BOM. */
	REFUSED("User-agent: *\rDisallow: /a\r", "x", "/a");
	REFUSED("User-agent: *\r\nDisallow: /a\r\n", "x", "/a");
	REFUSED("\xEF\xBB\xBFUser-agent: *\nDisallow: /a", "x", "/a");
	/* A BOM cut short (EF, or EF BB) is skipped as Google's parser does;
	 * other bytes before the first field stay, and that line is junk: a
	 * BOM's tail alone, a second BOM, EF followed by anything else. */
	REFUSED("\xEFUser-agent: *\nDisallow: /a", "x", "/a");
	REFUSED("\xEF\xBBUser-agent: *\nDisallow: /a", "x", "/a");
	REFUSED("\xEF\xBB\r\nUser-agent: *\nDisallow: /a", "x", "/a");
	ALLOWED("\xBB\xBFUser-agent: *\nDisallow: /a", "x", "/a");
	ALLOWED("\xBFUser-agent: *\nDisallow: /a", "x", "/a");
	ALLOWED("\xEF\xBB\xBF\xEF\xBB\xBFUser-agent: *\nDisallow: /a", "x", "/a");
	ALLOWED("\xEF\xEFUser-agent: *\nDisallow: /a", "x", "/a");
	ALLOWED("\xEF\xBB\xEFUser-agent: *\nDisallow: /a", "x", "/a");
	ALLOWED("\xEF\xBB", "x", "/a");
	/* Comments. */
	REFUSED("# hello\nUser-agent: * # everyone\nDisallow: /a # not /a\n", "x", "/a");
	ALLOWED("User-agent: *\n# Disallow: /a\n", "x", "/a");
	/* Junk lines are skipped, the rest still read. */
	REFUSED("<html>\nUser-agent: *\nthis is junk\n\x01\x02:\nDisallow: /a\n", "x", "/a");
	/* An empty Disallow allows everything. */
	ALLOWED("User-agent: *\nDisallow:\n", "x", "/a");
	ALLOWED("User-agent: *\nDisallow: \n", "x", "/");
	/* An empty file, or one with only junk. */
	ALLOWED("", "x", "/a");
	ALLOWED("\0\0\0", "x", "/a");
	/* A NUL inside the text is a plain byte: the text is counted, not a string. */
	struct sc_robots *r = sc_robots_parse("User-agent: *\n\0\nDisallow: /a\n", 28, "x");
	ok(!sc_robots_allowed(r, "/a"), "a NUL line does not stop parsing");
	sc_robots_free(r);
	/* The path given as "" is "/"; a fragment is ignored. */
	REFUSED("User-agent: *\nDisallow: /$\n", "x", "");
	REFUSED("User-agent: *\nDisallow: /a$\n", "x", "/a#frag");
	REFUSED("User-agent: *\nDisallow: /$\n", "x", "#frag");
	REFUSED("User-agent: *\nDisallow: /100%\n", "x", "/100%25");
	is_str(n = sc_robots_normalize("%%611", 5), "%25a1", "normalising twice changes nothing");
	free(n);
}

static void test_robots_txt_always_allowed(void)
{
	ALLOWED("User-agent: *\nDisallow: /\n", "x", "/robots.txt");
	ALLOWED("User-agent: *\nDisallow: /robots.txt\n", "x", "/robots.txt?x=1");
	REFUSED("User-agent: *\nDisallow: /\n", "x", "/robots.txt.bak");
	ALLOWED("User-agent: *\nDisallow: /\n", "x", "/robots%2Etxt");
	struct sc_robots *r = sc_robots_disallow_all(SC_ROBOTS_UNREACHABLE);
	ok(sc_robots_allowed(r, "/robots.txt"), "even under disallow-all");
	sc_robots_free(r);
}

static void test_size_limit(void)
{
	size_t pad = SC_ROBOTS_MAX_BYTES;
	char *t = malloc(pad + 200);
	size_t n = 0;

	n += (size_t)sprintf(t, "User-agent: *\nDisallow: /early\n");
	while (n < pad - 20) {
		t[n] = (n % 64) == 63 ? '\n' : '#';
		n++;
	}
	t[n++] = '\n';
	/* A line that the limit cuts in half, then one wholly past it. */
	size_t cut_at = n;
	n += (size_t)sprintf(t + n, "Disallow: /cut-in-half-by-the-limit\nDisallow: /late\n");
	struct sc_robots *r = sc_robots_parse(t, n, "x");
	ok(cut_at < SC_ROBOTS_MAX_BYTES && cut_at + 30 > SC_ROBOTS_MAX_BYTES,
	   "the limit cuts line");
	ok(!sc_robots_allowed(r, "/early"), "a rule inside 500 KiB is read");
	ok(sc_robots_allowed(r, "/late"), "a rule past 500 KiB is not");
	ok(sc_robots_allowed(r, "/cut"), "the line the limit cuts is dropped, not half read");
	ok(sc_robots_allowed(r, "/cut-in-half-by-the-limit"), "... nor whole");
	is_int(sc_robots_rule_count(r), 1, "one rule read");
	sc_robots_free(r);
	free(t);
}

static void test_crawl_delay(void)
{
	static const char t[] = "User-agent: *\nCrawl-delay: 2.5\n"
	                        "User-agent: slow\nCrawl-delay: 10\nCrawl-delay: 20\n"
	                        "User-agent: junk\nCrawl-delay: soon\n";
	struct sc_robots *r;

	r = sc_robots_parse(t, strlen(t), "other");
	ok(sc_robots_crawl_delay(r) == 2.5, "fractional delay of the * group");
	sc_robots_free(r);
	r = sc_robots_parse(t, strlen(t), "slow");
	ok(sc_robots_crawl_delay(r) == 10, "the first delay of the agent's group");
	sc_robots_free(r);
	r = sc_robots_parse(t, strlen(t), "junk");
	ok(sc_robots_crawl_delay(r) < 0, "a delay that is not a number is none");
	sc_robots_free(r);
	r = sc_robots_parse("User-agent: *\ncrawl-delay: 1\n", 29, "x");
	ok(sc_robots_crawl_delay(r) == 1, "crawl-delay in lower case");
	sc_robots_free(r);
	r = sc_robots_parse("User-agent: *\nDisallow: /\n", 26, "x");
	ok(sc_robots_crawl_delay(r) < 0, "no delay");
	sc_robots_free(r);
	r = sc_robots_allow_all();
	ok(sc_robots_crawl_delay(r) < 0, "allow-all has no delay");
	sc_robots_free(r);
}

static void test_sitemaps(void)
{
	static const char t[] = "Sitemap: https://example.com/sitemap.xml\n"
	                        "User-agent: a\nDisallow: /\n"
	                        "sitemap:http://example.com/s2.xml.gz # second\n"
	                        "Sitemap: /relative.xml\n"
	                        "Sitemap: https://example.com/sitemap.xml\n"
	                        "User-agent: b\nSITE-MAP: https://other.example/s3.xml\n";
	struct sc_robots *r = sc_robots_parse(t, strlen(t), "nobody");
	size_t n;
	const char *const *s = sc_robots_sitemaps(r, &n);

	is_int(n, 3, "three sitemaps: relative and duplicate dropped");
	if (n == 3) {
		is_str(s[0], "https://example.com/sitemap.xml", "first, in order");
		is_str(s[1], "http://example.com/s2.xml.gz", "comment stripped");
		is_str(s[2], "https://other.example/s3.xml", "inside a group, still global");
	}
	ok(sc_robots_allowed(r, "/x"), "sitemap lines are not rules");
	sc_robots_free(r);
	r = sc_robots_allow_all();
	sc_robots_sitemaps(r, &n);
	is_int(n, 0, "allow-all has none");
	sc_robots_free(r);
}

static void test_outcomes(void)
{
	static const struct {
		long status;
		enum sc_robots_kind kind;
	} cases[] = {
		{ 200, SC_ROBOTS_RULES },        { 203, SC_ROBOTS_RULES },
		{ 301, SC_ROBOTS_ALLOW_ALL },    { 400, SC_ROBOTS_ALLOW_ALL },
		{ 401, SC_ROBOTS_ALLOW_ALL },    { 403, SC_ROBOTS_ALLOW_ALL },
		{ 404, SC_ROBOTS_ALLOW_ALL },    { 410, SC_ROBOTS_ALLOW_ALL },
		{ 429, SC_ROBOTS_DISALLOW_ALL }, { 500, SC_ROBOTS_DISALLOW_ALL },
		{ 503, SC_ROBOTS_DISALLOW_ALL }, { 599, SC_ROBOTS_DISALLOW_ALL },
		{ 0, SC_ROBOTS_DISALLOW_ALL },   { 100, SC_ROBOTS_DISALLOW_ALL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		is_int(sc_robots_kind_for_status(cases[i].status), cases[i].kind,
		       "status %ld -> kind %d", cases[i].status, cases[i].kind);

	static const char body[] = "User-agent: *\nDisallow: /private\n";
	struct sc_robots *r = sc_robots_from_fetch(200, body, strlen(body), "x");
	ok(!sc_robots_allowed(r, "/private") && sc_robots_allowed(r, "/public"), "2xx parses");
	is_str(sc_robots_why(r), "disallowed by robots.txt", "the message of a rule");
	char why[200] = "";
	ok(sc_robots_check(r, "/public", why, sizeof(why)) && why[0] == '\0',
	   "check: allowed, no message");
	ok(!sc_robots_check(r, "/private/x", why, sizeof(why)), "check: refused");
	is_str(why, "disallowed by robots.txt rule \"Disallow: /private\"",
	       "check: the rule's message");
	sc_robots_free(r);
	r = sc_robots_from_fetch(404, body, strlen(body), "x");
	ok(sc_robots_allowed(r, "/private"), "404 allows all, its body ignored");
	is_int(sc_robots_kind(r), SC_ROBOTS_ALLOW_ALL, "404 is allow-all");
	sc_robots_free(r);
	r = sc_robots_from_fetch(503, NULL, 0, "x");
	ok(!sc_robots_allowed(r, "/"), "503 disallows all");
	is_str(sc_robots_why(r), "robots.txt unreachable", "with the reason");
	ok(!sc_robots_check(r, "/", why, sizeof(why)), "check: unreachable refuses");
	is_str(why, "robots.txt unreachable", "check: with the reason");
	sc_robots_free(r);
	r = sc_robots_from_fetch(0, NULL, 0, "x");
	ok(!sc_robots_allowed(r, "/public"), "no response disallows all");
	sc_robots_free(r);
	r = sc_robots_from_fetch(200, NULL, 0, "x");
	ok(sc_robots_allowed(r, "/a"), "an empty 2xx allows all");
	sc_robots_free(r);
}

static void test_split_url(void)
{
	static const struct {
		const char *url, *origin, *path;
	} cases[] = {
		{ "http://Example.COM/a/b?c=d#frag", "http://example.com:80", "/a/b?c=d" },
		{ "https://example.com", "https://example.com:443", "/" },
		{ "HTTPS://example.com:8443/x%2Fy?", "https://example.com:8443", "/x%2Fy?" },
		{ "http://127.0.0.2:8080/robots.txt", "http://127.0.0.2:8080", "/robots.txt" },
		{ "http://[::1]:81/p", "http://[::1]:81", "/p" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *origin = NULL, *path = NULL;
		is_int(sc_robots_split_url(cases[i].url, &origin, &path), 0, "split %s",
		       cases[i].url);
		is_str(origin, cases[i].origin, "origin of %s", cases[i].url);
		is_str(path, cases[i].path, "path of %s", cases[i].url);
		free(origin);
		free(path);
	}
	static const char *const bad[] = { "ftp://example.com/", "/relative", "mailto:a@b", "" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *origin = (char *)"x", *path = (char *)"x";
		ok(sc_robots_split_url(bad[i], &origin, &path) == -1 && !origin && !path,
		   "'%s' refused", bad[i]);
	}
}

/* ------------------------------------------------------------------ */
/* The cache                                                           */
/* ------------------------------------------------------------------ */

#define HOUR_MS (3600LL * 1000)

static char *tmp_db(void)
{
	char *path = strdup("/tmp/test-robots-XXXXXX");
	int fd = mkstemp(path);

	close(fd);
	unlink(path); /* sqlite creates it */
	return path;
}

static void remove_db(const char *path)
{
	char side[512];

	unlink(path);
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
}

static void test_cache_expiry(void)
{
	char *path = tmp_db(), err[300] = "", *body = NULL;
	const int64_t t0 = 1800000000000LL; /* 2027-01-15 */
	long status = 0;
	size_t len = 0;
	struct sc_robots_cache *c = sc_robots_cache_open(path, err, sizeof(err));

	ok(c != NULL, "cache opens (%s)", err[0] ? err : "no error");
	if (!c) {
		free(path);
		return;
	}
	is_int(sc_robots_cache_get(c, "http://a:80", t0, &status, &body, &len, err, sizeof(err)), 0,
	       "empty cache misses");
	is_int(sc_robots_cache_put(c, "http://a:80", t0, 200, "User-agent: *\nDisallow: /p\n", 28,
	                           NULL, err, sizeof(err)),
	       0, "store a 200");
	is_int(sc_robots_cache_get(c, "http://a:80", t0 + 23 * HOUR_MS, &status, &body, &len, err,
	                           sizeof(err)),
	       1, "fresh after 23 hours");
	is_int(status, 200, "status kept");
	is_int(len, 28, "body length kept");
	ok(body && memcmp(body, "User-agent: *\nDisallow: /p\n", 28) == 0 && body[28] == '\0',
	   "body kept, terminated");
	free(body);
	body = NULL;
	is_int(sc_robots_cache_get(c, "http://a:80", t0 + 24 * HOUR_MS, &status, &body, &len, err,
	                           sizeof(err)),
	       0, "stale at 24 hours");
	is_int(sc_robots_cache_get(c, "http://a:80", t0 - 1000, &status, &body, &len, err,
	                           sizeof(err)),
	       0, "an entry from the future is not trusted");
	is_int(sc_robots_cache_get(c, "https://a:443", t0, &status, &body, &len, err, sizeof(err)),
	       0, "keyed by the whole origin");

	/* Replaced by a later fetch; a 503 is not stored and leaves it alone. */
	sc_robots_cache_put(c, "http://a:80", t0 + 25 * HOUR_MS, 404, "not found", 9, NULL, err,
	                    sizeof(err));
	is_int(sc_robots_cache_get(c, "http://a:80", t0 + 26 * HOUR_MS, &status, &body, &len, err,
	                           sizeof(err)),
	       1, "refreshed entry fresh");
	is_int(status, 404, "now a 404");
	is_int(len, 0, "a 404's body is not kept");
	free(body);
	body = NULL;
	is_int(sc_robots_cache_put(c, "http://a:80", t0 + 27 * HOUR_MS, 503, "", 0, NULL, err,
	                           sizeof(err)),
	       0, "storing a 503 succeeds");
	sc_robots_cache_get(c, "http://a:80", t0 + 27 * HOUR_MS, &status, &body, &len, err,
	                    sizeof(err));
	is_int(status, 404, "... and does not replace the 404");
	free(body);
	body = NULL;
	is_int(sc_robots_cache_put(c, "http://b:80", t0, 0, NULL, 0, NULL, err, sizeof(err)), 0,
	       "a network error");
	is_int(sc_robots_cache_get(c, "http://b:80", t0, &status, &body, &len, err, sizeof(err)), 0,
	       "... is not stored");
	sc_robots_cache_close(c);

	/* Across runs: a new handle on the same file sees the entry. */
	c = sc_robots_cache_open(path, err, sizeof(err));
	is_int(sc_robots_cache_get(c, "http://a:80", t0 + 26 * HOUR_MS, &status, &body, &len, err,
	                           sizeof(err)),
	       1, "reopened, the entry is there");
	free(body);
	body = NULL;

	/* Asking for archived entries: one without an archive, or whose
	 * archive is gone, is not found; one whose archive is there is. */
	sc_robots_cache_want_archived(c);
	is_int(sc_robots_cache_get(c, "http://a:80", t0 + 26 * HOUR_MS, &status, &body, &len, err,
	                           sizeof(err)),
	       0, "archived only: an entry without an archive misses");
	char archive[600];
	snprintf(archive, sizeof archive, "%s.warc.gz", path);
	sc_robots_cache_put(c, "http://a:80", t0, 200, "", 0, archive, err, sizeof(err));
	is_int(sc_robots_cache_get(c, "http://a:80", t0, &status, &body, &len, err, sizeof(err)), 0,
	       "archived only: an entry whose archive is not on disk misses");
	FILE *f = fopen(archive, "w");
	if (f)
		(void)fclose(f);
	is_int(sc_robots_cache_get(c, "http://a:80", t0, &status, &body, &len, err, sizeof(err)), 1,
	       "archived only: an entry whose archive is on disk is found");
	free(body);
	unlink(archive);
	sc_robots_cache_close(c);
	remove_db(path);
	free(path);

	c = sc_robots_cache_open("/nonexistent-dir/x.db", err, sizeof(err));
	ok(c == NULL && strstr(err, "/nonexistent-dir/x.db"), "open failure names the file");
}

/* Two processes write 300 entries each into one file at the same time:
 * none fails and none is lost, and the file passes its integrity check. */
static void test_cache_two_writers(void)
{
	enum {
		PER_WRITER = 300
	};
	char *path = tmp_db();
	pid_t pids[2];

	for (int w = 0; w < 2; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			char err[300], origin[64];
			struct sc_robots_cache *c = sc_robots_cache_open(path, err, sizeof(err));
			if (!c)
				_exit(2);
			for (int i = 0; i < PER_WRITER; i++) {
				snprintf(origin, sizeof origin, "http://w%d-%d:80", w, i);
				if (sc_robots_cache_put(c, origin, 1000 + i, 200, origin,
				                        strlen(origin), NULL, err,
				                        sizeof(err)) != 0)
					_exit(3);
				/* Reads interleaved with the other writer's writes. */
				if (i % 10 == 0) {
					long st;
					char *b = NULL;
					size_t n;
					if (sc_robots_cache_get(c, origin, 1000 + i, &st, &b, &n,
					                        err, sizeof(err)) != 1)
						_exit(4);
					free(b);
				}
			}
			sc_robots_cache_close(c);
			_exit(0);
		}
	}
	for (int w = 0; w < 2; w++) {
		int st = -1;
		waitpid(pids[w], &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d finished without error (%d)",
		   w, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}

	char err[300];
	struct sc_robots_cache *c = sc_robots_cache_open(path, err, sizeof(err));
	int found = 0;
	for (int w = 0; w < 2 && c; w++)
		for (int i = 0; i < PER_WRITER; i++) {
			char origin[64], *b = NULL;
			long st;
			size_t n;
			snprintf(origin, sizeof origin, "http://w%d-%d:80", w, i);
			if (sc_robots_cache_get(c, origin, 1000 + i, &st, &b, &n, err,
			                        sizeof(err)) == 1 &&
			    n == strlen(origin) && memcmp(b, origin, n) == 0)
				found++;
			free(b);
		}
	is_int(found, 2 * PER_WRITER, "every entry of both writers is there");
	sc_robots_cache_close(c);

	sqlite3 *db;
	sqlite3_stmt *st;
	const char *verdict = "(none)";
	char buf[64] = "";
	sqlite3_open(path, &db);
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		snprintf(buf, sizeof buf, "%s", (const char *)sqlite3_column_text(st, 0));
		verdict = buf;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	is_str(verdict, "ok", "integrity check passes");
	remove_db(path);
	free(path);
}

/* sc_robots_match names the rule that decided, for the record's message. */
static void test_deciding_rule(void)
{
	struct sc_robots *r = sc_robots_parse(
	        "User-agent: *\nDisallow: /a\nAllow: /a/b$\nDisallow: /a%2fc\n", 57, "x");
	const char *rule = "unset";

	ok(!sc_robots_match(r, "/a/x", &rule), "/a/x refused");
	is_str(rule, "/a", "by Disallow: /a");
	ok(sc_robots_match(r, "/a/b", &rule), "/a/b allowed");
	is_str(rule, "/a/b$", "by Allow: /a/b$");
	ok(!sc_robots_match(r, "/a%2Fc", &rule), "/a%%2Fc refused");
	is_str(rule, "/a%2Fc", "by the rule as normalised");
	ok(sc_robots_match(r, "/b", &rule) && rule == NULL, "no rule matched: NULL");
	ok(sc_robots_match(r, "/robots.txt", &rule) && rule == NULL, "/robots.txt: NULL");
	ok(!sc_robots_match(r, "/a", NULL), "rule may be NULL");
	sc_robots_free(r);
	r = sc_robots_disallow_all(SC_ROBOTS_UNREACHABLE);
	ok(!sc_robots_match(r, "/x", &rule) && rule == NULL, "a disallow-all names no rule");
	sc_robots_free(r);
}

int main(void)
{
	test_product_token();
	test_rfc_example();
	test_longest_match();
	test_allow_wins_tie();
	test_wildcards();
	test_percent_encoding();
	test_groups();
	test_syntax();
	test_robots_txt_always_allowed();
	test_size_limit();
	test_crawl_delay();
	test_sitemaps();
	test_outcomes();
	test_deciding_rule();
	test_split_url();
	test_cache_expiry();
	test_cache_two_writers();
	return tap_done();
}
