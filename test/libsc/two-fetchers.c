/* two-fetchers: two fetchers in two threads at once (sc.h allows it), for
 * test/libsc.bats, which runs it under helgrind and valgrind
 * --track-fds=yes.  Reads URLs, one per line; each thread makes its own
 * fetcher, submits every URL, runs it until idle, checks that done came
 * exactly once per submit with the fetcher's context, finishes and frees
 * it.  Then, after sc_global_cleanup (with -g: sc_global_init first), the
 * process must hold the descriptors it held before its first libsc call:
 * it prints "descriptors left: N" and exits 1 otherwise.  -d adds a drain
 * (sc_fetcher_drain from the first done callback of each fetcher), so that
 * the wake-up reaches the right loop.  -r adds a race of its own (both
 * threads count their callbacks in one unguarded global), for the test to
 * see that helgrind and its reading of the report find one when there is
 * one.  It includes sc.h only. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc.h"

#define NTHREADS 2

static int race;            /* -r */
static unsigned long raced; /* -r: written by both threads, unguarded */

struct run {
	char **urls;
	size_t nurls;
	unsigned *seen; /* done calls per submit */
	size_t done;
	int drain;
	int failures;
};

static size_t open_descriptors(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *ent;
	size_t n = 0;

	if (!d)
		return 0;
	// cppcheck-suppress readdirCalled ; main's thread alone, its own DIR
	while ((ent = readdir(d)))
		n += ent->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* The test cannot run (no memory, no thread, no libcurl): exit 2. */
static _Noreturn void cannot(const char *what)
{
	fprintf(stderr, "two-fetchers: %s\n", what);
	exit(2);
}

static void on_done(sc_fetcher *f, const sc_result *r, void *user, void *ctx)
{
	struct run *run = ctx;
	unsigned *seen = user;

	if (seen >= run->seen && seen < run->seen + run->nurls)
		(*seen)++;
	else
		run->failures++;
	if (sc_result_user(r) != user)
		run->failures++;
	if (++run->done == 1 && run->drain)
		sc_fetcher_drain(f);
	if (race)
		raced++;
}

static void *fetch_all(void *arg)
{
	struct run *run = arg;
	sc_fetcher *f = sc_fetcher_new(on_done, run);
	char *err = NULL;

	if (!f || sc_fetcher_setopt_long(f, SC_FETCHOPT_CONCURRENCY, 4, &err) != SC_OK) {
		run->failures++;
		return NULL;
	}
	for (size_t i = 0; i < run->nurls; i++) {
		if (sc_fetcher_submit(f, run->urls[i], &run->seen[i], &err) != SC_OK) {
			fprintf(stderr, "two-fetchers: submit: %s\n", err ? err : "?");
			sc_free(err);
			err = NULL;
			run->failures++;
		}
	}
	if (sc_fetcher_run(f, 60000) != SC_OK)
		run->failures++;
	sc_fetcher_finish(f);
	sc_fetcher_free(f);
	for (size_t i = 0; i < run->nurls; i++)
		run->failures += run->seen[i] != 1;
	return NULL;
}

int main(int argc, char **argv)
{
	size_t before = open_descriptors(), nurls = 0, cap = 0, lcap = 0;
	char **urls = NULL, *line = NULL;
	struct run runs[NTHREADS] = { 0 };
	pthread_t threads[NTHREADS];
	int global = 0, drain = 0, failures = 0;
	ssize_t len;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-g") == 0)
			global = 1;
		else if (strcmp(argv[i], "-d") == 0)
			drain = 1;
		else if (strcmp(argv[i], "-r") == 0)
			race = 1;
		else
			return 2;
	}
	while ((len = getline(&line, &lcap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (nurls == cap) {
			cap = cap ? cap * 2 : 16;
			char **more = realloc(urls, cap * sizeof(*urls));
			if (!more)
				cannot("out of memory");
			urls = more;
		}
		if (!(urls[nurls++] = strdup(line)))
			cannot("out of memory");
	}
	free(line);
	if (global && sc_global_init() != SC_OK)
		cannot("sc_global_init failed");
	for (int t = 0; t < NTHREADS; t++) {
		runs[t] = (struct run){ .urls = urls, .nurls = nurls, .drain = drain };
		if (!(runs[t].seen = calloc(nurls + 1, sizeof(unsigned))))
			cannot("out of memory");
		if (pthread_create(&threads[t], NULL, fetch_all, &runs[t]) != 0)
			cannot("no thread");
	}
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(threads[t], NULL);
		if (runs[t].failures)
			fprintf(stderr, "two-fetchers: thread %d: %d broken\n", t,
			        runs[t].failures);
		failures += runs[t].failures;
		free(runs[t].seen);
	}
	if (global)
		sc_global_cleanup();
	size_t after = open_descriptors();
	if (after != before) {
		fprintf(stderr, "two-fetchers: descriptors left: %zd\n", (ssize_t)(after - before));
		failures++;
	}
	for (size_t i = 0; i < nurls; i++)
		free(urls[i]);
	free(urls);
	return failures ? 1 : 0;
}
