/* crawler: a small polite crawler on libsc (sc(3)).
 *
 * Reads seed URLs on standard input, fetches them and every page they link
 * to on the same site (scheme://host:port), up to MAX pages (default 100),
 * obeying robots.txt and each site's pace, and prints one line per page:
 * its status, URL and title, tab-separated.  The parser's output is JSON
 * text (a record of sc-record(5)); jansson reads it here.
 *
 *	cc crawler.c $(pkg-config --cflags --libs sc jansson) -o crawler
 *	echo https://example.com/ | ./crawler 50 */
/* strdup and hsearch are POSIX (XSI), not C17. */
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#define _XOPEN_SOURCE 700

#include <jansson.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sc.h>

static sc_parser *parser;
static size_t submitted, max_pages = 100;

/* The length of url's "scheme://host:port" part. */
static size_t origin_len(const char *url)
{
	const char *host = strstr(url, "://");
	const char *path = host ? strchr(host + 3, '/') : NULL;

	return path ? (size_t)(path - url) : strlen(url);
}

/* Fetches url unless it was seen already or MAX pages are under way. */
static void visit(sc_fetcher *f, const char *url)
{
	ENTRY e = { .key = (char *)url };

	if (submitted >= max_pages || hsearch(e, FIND))
		return;
	e.key = strdup(url); /* the table's for the run */
	if (!e.key || !hsearch(e, ENTER))
		return;
	if (sc_fetcher_submit(f, url, NULL, NULL) == SC_OK)
		submitted++;
}

static void on_page(sc_fetcher *f, const sc_result *r, void *user)
{
	char *out;
	size_t i, n;
	json_t *rec, *link;

	(void)user;
	if (sc_parser_apply_result(parser, r, &out, &n) != SC_OK)
		return;
	rec = json_loadb(out, n, 0, NULL); /* one record: --each is not used */
	sc_free(out);
	if (!rec)
		return;
	const char *url = sc_result_url(r),
	           *title = json_string_value(json_object_get(rec, "title"));
	printf("%ld\t%s\t%s\n", sc_result_status(r), url, title ? title : "");
	json_array_foreach(json_object_get(rec, "links"), i, link)
	{
		const char *to = json_string_value(link);
		if (to && origin_len(to) == origin_len(url) &&
		    strncmp(to, url, origin_len(url)) == 0)
			visit(f, to);
	}
	json_decref(rec);
}

int main(int argc, char **argv)
{
	char line[4096];
	sc_fetcher *f;

	if (argc > 1)
		max_pages = strtoul(argv[1], NULL, 10);
	if (sc_version_num() < SC_VERSION_NUM || !hcreate(max_pages * 2 + 16))
		return 1;
	parser = sc_parser_new(NULL, 0, NULL, NULL, 0, 0, NULL); /* the default fields */
	f = sc_fetcher_new(on_page);
	if (!parser || !f)
		return 1;
	sc_fetcher_setopt(f, SC_FETCHOPT_ROBOTS, NULL, NULL);
	sc_fetcher_setopt_long(f, SC_FETCHOPT_PER_HOST, 4, NULL);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (*line && *line != '#')
			visit(f, line);
	}
	sc_fetcher_run(f, -1);
	sc_fetcher_finish(f);
	sc_fetcher_free(f);
	sc_parser_free(parser);
	return 0;
}
