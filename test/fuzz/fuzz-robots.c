/* libFuzzer target: lib/robots, parsing random bytes as a robots.txt and
 * matching random paths against it.
 *
 * Build and run (from the top of the tree; clang from Debian's clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib test/fuzz/fuzz-robots.c lib/robots.c lib/util.c -lcurl -o build/fuzz-robots && build/fuzz-robots -dict=test/fuzz/robots.dict -max_total_time=300 build/fuzz-corpus-robots test/fuzz/seeds-robots
 * (mkdir -p build/fuzz-corpus-robots first: libFuzzer writes what it finds
 * into the first directory.)
 *
 * Input: the robots.txt, then a line "\n#paths\n", then one path per line
 * (no such line: the paths are a fixed set).  The first byte also picks
 * the agent.  Besides memory safety, the promises checked are:
 * - /robots.txt is allowed, whatever the file says;
 * - a file with no rule for the agent allows every path;
 * - percent-encoding normalisation is idempotent, and a path and its
 *   normalised form get the same answer;
 * - the Crawl-delay is -1 or a finite number >= 0; every Sitemap is an
 *   absolute http(s) URL;
 * - a disallow-all refuses every path but /robots.txt, an allow-all none. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "web/robots.h"

static const char *const AGENTS[] = { "foobot", "FooBot/1.0 (+http://x)", "*", "", "a-b_c" };
static const char *const DEFAULT_PATHS[] = { "/",         "/a",  "/a/b?c=d", "/%7Ea",
	                                     "/fish.php", "/x$", "/*",       "" };

static void die(const char *what, const char *path)
{
	fprintf(stderr, "%s: '%s'\n", what, path);
	abort();
}

static void check_path(const struct sc_robots *r, const char *path)
{
	bool yes = sc_robots_allowed(r, path);
	char *once = sc_robots_normalize(path, strlen(path));
	char *twice = sc_robots_normalize(once, strlen(once));

	if (strcmp(once, twice) != 0)
		die("normalisation is not idempotent", path);
	/* A '#' the normalisation leaves starts a fragment in both. */
	if (sc_robots_allowed(r, once) != yes)
		die("a path and its normalised form differ", path);
	if (sc_robots_rule_count(r) == 0 && sc_robots_kind(r) != SC_ROBOTS_DISALLOW_ALL && !yes)
		die("no rules, yet refused", path);
	free(once);
	free(twice);
}

static void check(const char *text, size_t len, const char *agent, char **paths, size_t npaths)
{
	struct sc_robots *r = sc_robots_parse(text, len, agent);
	double delay = sc_robots_crawl_delay(r);
	size_t nsitemaps;
	const char *const *sitemaps = sc_robots_sitemaps(r, &nsitemaps);

	if (!(delay == -1 || (isfinite(delay) && delay >= 0)))
		die("bad crawl-delay", "");
	for (size_t i = 0; i < nsitemaps; i++)
		if (strncasecmp(sitemaps[i], "http://", 7) != 0 &&
		    strncasecmp(sitemaps[i], "https://", 8) != 0)
			die("a sitemap that is not absolute", sitemaps[i]);
	if (!sc_robots_allowed(r, "/robots.txt"))
		die("/robots.txt refused", "/robots.txt");
	for (size_t i = 0; i < npaths; i++)
		check_path(r, paths[i]);
	sc_robots_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char MARK[] = "\n#paths\n";
	const char *agent = AGENTS[size ? data[0] % (sizeof AGENTS / sizeof *AGENTS) : 0];
	/* A copy of exactly size bytes, so that ASan catches a read past it. */
	char *text = malloc(size ? size : 1);
	char *paths[64];
	size_t npaths = 0, len = size;

	if (!text)
		return 0;
	memcpy(text, data, size);
	const char *mark = memmem(text, size, MARK, sizeof MARK - 1);
	if (mark) {
		len = (size_t)(mark - text);
		const char *p = mark + sizeof MARK - 1, *end = text + size;
		while (p < end && npaths < 64) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			paths[npaths] = strndup(p, n); /* stops at a NUL: paths are strings */
			if (paths[npaths])
				npaths++;
			p += n + 1;
		}
	} else {
		for (; npaths < sizeof DEFAULT_PATHS / sizeof *DEFAULT_PATHS; npaths++)
			paths[npaths] = strdup(DEFAULT_PATHS[npaths]);
	}
	check(text, len, agent, paths, npaths);

	struct sc_robots *all = sc_robots_disallow_all(SC_ROBOTS_UNREACHABLE);
	struct sc_robots *none = sc_robots_allow_all();
	for (size_t i = 0; i < npaths; i++) {
		char *norm = sc_robots_normalize(paths[i], strcspn(paths[i], "#?"));
		bool is_robots_txt = strcmp(norm, "/robots.txt") == 0;
		if (sc_robots_allowed(all, paths[i]) != is_robots_txt)
			die("disallow-all answered wrongly", paths[i]);
		if (!sc_robots_allowed(none, paths[i]))
			die("allow-all refused", paths[i]);
		free(norm);
		free(paths[i]);
	}
	sc_robots_free(all);
	sc_robots_free(none);
	free(text);
	return 0;
}
