/* crawler: a small polite crawler on libsc (sc(3)).
 *
 * Reads seed URLs on standard input, fetches them and every page they link
 * to on the same site (scheme://host:port), up to MAX pages (default 100),
 * obeying robots.txt and each site's pace, and prints one line per page:
 * its status, URL and title, tab-separated.
 *
 * Parsing is most of the work, so it has threads of its own and fetching
 * goes on meanwhile.  Each handle stays on one thread (sc(3)): the main
 * thread drives the fetcher from its own poll loop (sc_fetcher_fd,
 * sc_fetcher_timeout, sc_fetcher_perform) and hands a copy of each fetched
 * record's JSON line to the parse threads, each with its own parser, which
 * hand back the parser's output (a record of sc-record(5), JSON text).
 * The main thread reads that with jansson, prints, and submits the links:
 * only it submits, and it alone keeps the table of URLs seen.
 *
 *	cc -pthread crawler.c $(pkg-config --cflags --libs sc jansson) -o crawler
 *	echo https://example.com/ | ./crawler 50 */
/* strdup, hsearch and pthreads are POSIX, not C17. */
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#define _XOPEN_SOURCE 700

#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <search.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sc.h>

#define PARSE_THREADS 2 /* about one a core: parsing is most of the work */

/* A page between the threads: its fetch record on the way to a parse
 * thread, the parser's output (or NULL) on the way back. */
struct page {
	struct page *next;
	char *json;
	size_t len;
};

/* A queue of pages, first in first out. */
struct queue {
	struct page *head, **tail;
};

/* What the threads share, under lock: the pages to parse, the pages
 * parsed, and whether the main thread is done.  A parse thread that adds
 * to parsed writes a byte to wake[1], which the main thread polls. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more_to_parse = PTHREAD_COND_INITIALIZER;
static struct queue to_parse = { NULL, &to_parse.head }, parsed = { NULL, &parsed.head };
static bool finished;
static int wake[2];

/* The main thread's own. */
static size_t submitted, parsing, max_pages = 100;

static void enqueue(struct queue *q, struct page *pg)
{
	pg->next = NULL;
	*q->tail = pg;
	q->tail = &pg->next;
}

/* The first page of q, or NULL. */
static struct page *dequeue(struct queue *q)
{
	struct page *pg = q->head;

	if (pg && !(q->head = pg->next))
		q->tail = &q->head;
	return pg;
}

/* A parse thread: parses pages until there are none and the main thread
 * is finished. */
static void *parse_pages(void *unused)
{
	sc_parser *parser = sc_parser_new(NULL, 0, NULL, NULL, 0, 0, NULL); /* the default fields */
	struct page *pg;

	(void)unused;
	for (;;) {
		char *out = NULL; /* every page goes back, parsed or not */
		size_t len = 0;

		pthread_mutex_lock(&lock);
		while (!to_parse.head && !finished)
			pthread_cond_wait(&more_to_parse, &lock);
		pg = dequeue(&to_parse);
		pthread_mutex_unlock(&lock);
		if (!pg)
			break;
		if (parser) /* one record (no --each); a bad_input record for a bad one */
			sc_parser_apply(parser, pg->json, pg->len, &out, &len);
		free(pg->json);
		pg->json = out;
		pg->len = len;
		pthread_mutex_lock(&lock);
		enqueue(&parsed, pg);
		pthread_mutex_unlock(&lock);
		if (write(wake[1], "", 1) < 0) /* cannot fail: the main thread keeps it open */
			break;
	}
	sc_parser_free(parser);
	return NULL;
}

/* Hands a copy of the record to the parse threads (r is valid during the
 * call only), and counts it in the pages out for parsing (ctx, the
 * fetcher's: sc_fetcher_new's). */
static void on_fetched(sc_fetcher *f, const sc_result *r, void *user, void *ctx)
{
	struct page *pg = malloc(sizeof(*pg));
	size_t *out_for_parsing = ctx;

	(void)f;
	(void)user;
	if (!pg || !(pg->json = strdup(sc_result_json(r, &pg->len)))) {
		free(pg);
		return;
	}
	pthread_mutex_lock(&lock);
	enqueue(&to_parse, pg);
	pthread_cond_signal(&more_to_parse);
	pthread_mutex_unlock(&lock);
	(*out_for_parsing)++;
}

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

/* Prints a parsed page and follows its links on the same site. */
static void follow(sc_fetcher *f, const struct page *pg)
{
	size_t i;
	json_t *rec = pg->json ? json_loadb(pg->json, pg->len, 0, NULL) : NULL, *link;
	const char *url = json_string_value(json_object_get(rec, "url")),
	           *title = json_string_value(json_object_get(rec, "title"));

	if (!url) {
		json_decref(rec);
		return;
	}
	printf("%" JSON_INTEGER_FORMAT "\t%s\t%s\n",
	       json_integer_value(json_object_get(rec, "status")), url, title ? title : "");
	json_array_foreach(json_object_get(rec, "links"), i, link)
	{
		const char *to = json_string_value(link);
		if (to && origin_len(to) == origin_len(url) &&
		    strncmp(to, url, origin_len(url)) == 0)
			visit(f, to);
	}
	json_decref(rec);
}

/* Follows every page the parse threads handed back. */
static void follow_parsed(sc_fetcher *f)
{
	struct page *pg;

	for (;;) {
		pthread_mutex_lock(&lock);
		pg = dequeue(&parsed);
		pthread_mutex_unlock(&lock);
		if (!pg)
			return;
		follow(f, pg);
		sc_free(pg->json);
		free(pg);
		parsing--;
	}
}

/* Until every page is fetched and parsed: waits for the fetcher or a
 * parse thread, lets the fetcher work, and follows what was parsed. */
static void crawl(sc_fetcher *f)
{
	struct pollfd fds[2] = { { .fd = wake[0], .events = POLLIN }, { .events = POLLIN } };
	char bytes[256];

	while (sc_fetcher_pending(f) > 0 || parsing > 0) {
		fds[1].fd = sc_fetcher_fd(f);
		if (poll(fds, 2, (int)sc_fetcher_timeout(f)) > 0 && fds[0].revents &&
		    read(wake[0], bytes, sizeof(bytes)) < 0)
			return;
		sc_fetcher_perform(f);
		follow_parsed(f);
	}
}

int main(int argc, char **argv)
{
	char line[4096];
	pthread_t parsers[PARSE_THREADS];
	sc_fetcher *f;

	if (argc > 1)
		max_pages = strtoul(argv[1], NULL, 10);
	if (sc_version_num() < SC_VERSION_NUM || sc_global_init() != SC_OK ||
	    !hcreate(max_pages * 2 + 16) || pipe(wake) != 0 ||
	    !(f = sc_fetcher_new(on_fetched, &parsing)))
		return 1;
	sc_fetcher_setopt(f, SC_FETCHOPT_ROBOTS, NULL, NULL);
	sc_fetcher_setopt_long(f, SC_FETCHOPT_PER_HOST, 4, NULL);
	for (int i = 0; i < PARSE_THREADS; i++)
		if (pthread_create(&parsers[i], NULL, parse_pages, NULL) != 0)
			return 1;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (*line && *line != '#')
			visit(f, line);
	}
	crawl(f);
	pthread_mutex_lock(&lock);
	finished = true;
	pthread_cond_broadcast(&more_to_parse);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < PARSE_THREADS; i++)
		pthread_join(parsers[i], NULL);
	sc_fetcher_finish(f);
	sc_fetcher_free(f);
	sc_global_cleanup();
	return 0;
}
