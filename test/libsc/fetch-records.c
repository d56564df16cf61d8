/* fetch-records: sc-fetch through libsc's public API, for test/libsc.bats.
 * Reads sc-fetch's input (a URL or a record per line), submits each line
 * with its line number as the user pointer, runs the fetcher and prints
 * every record's JSON line (sc_result_json) as the done callback gets it.
 * Checks, and fails (exit 1) otherwise, that done came exactly once per
 * submit with that submit's pointer, and that the accessors agree with
 * the record.  Options: -c N (concurrency), -k (keep order), -m FILE
 * (metrics lines through the callback, to FILE), -e (drive the fetcher
 * from a poll(2) loop: sc_fetcher_fd, _timeout, _perform), -t MS (run
 * for MS milliseconds at most, then free the fetcher whatever is still
 * pending, and say how many were), -x N (sc_fetcher_cancel from the Nth
 * done callback), -d N (sc_fetcher_drain from the Nth), -w (warnings on
 * standard error, "LINE: why"), -g SECS (the drain's grace), -j FILE
 * (SC_FETCHOPT_COOKIES: the jar's cookies.txt), -p URL
 * (SC_FETCHOPT_PROXY).
 * It includes sc.h only: what a user of the installed library has. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc.h"

static unsigned *seen; /* done calls per submit */
static size_t **tags;  /* submit i's user pointer: a size_t holding i + 1 */
static size_t nseen, ndone, cancel_at, drain_at;
static int failures;

static void check(int ok, const char *what, size_t n)
{
	if (!ok) {
		fprintf(stderr, "fetch-records: submit %zu: %s\n", n, what);
		failures++;
	}
}

static void on_done(sc_fetcher *f, const sc_result *r, void *user, void *ctx)
{
	size_t n = *(const size_t *)user, len;
	const char *json = sc_result_json(r, &len);

	if (++ndone == cancel_at)
		sc_fetcher_cancel(f);
	if (ndone == drain_at)
		sc_fetcher_drain(f);
	check(n >= 1 && n <= nseen, "a user pointer that no submit gave", n);
	if (n >= 1 && n <= nseen)
		seen[n - 1]++;
	check(sc_result_user(r) == user, "sc_result_user differs", n);
	check(ctx == &ndone, "the fetcher's context differs", n);
	check(strlen(json) == len, "the JSON's length", n);
	check((sc_result_outcome(r) == SC_OUTCOME_OK) == (sc_result_error_name(r) == NULL),
	      "outcome and error name disagree", n);
	check(sc_result_status(r) == 0 || sc_result_final_url(r) != NULL,
	      "a status without a final URL", n);
	size_t blen;
	const char *body = sc_result_body(r, &blen);
	check(!body || sc_result_outcome(r) != SC_OUTCOME_BAD_INPUT, "a bad_input with a body", n);
	(void)fwrite(json, 1, len, stdout); /* checked at the end, by ferror */
	putchar('\n');
}

static void warn(size_t lineno, const char *why, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "%zu: %s\n", lineno, why);
}

static void to_file(const char *line, size_t len, void *ctx)
{
	(void)fwrite(line, 1, len, ctx); /* the test reads the file: a short one fails it */
	fputc('\n', ctx);
}

/* The caller's own loop: wait on the fetcher's descriptor for as long as
 * it says, then let it do what is ready. */
static void drive(sc_fetcher *f)
{
	while (sc_fetcher_perform(f) > 0) {
		struct pollfd p = { .fd = sc_fetcher_fd(f), .events = POLLIN };
		long timeout = sc_fetcher_timeout(f);
		poll(&p, 1, timeout < 0 ? 1000 : (int)timeout);
	}
}

int main(int argc, char **argv)
{
	sc_fetcher *f = sc_fetcher_new(on_done, &ndone);
	FILE *metrics = NULL;
	char *line = NULL, *err = NULL;
	size_t cap = 0;
	ssize_t len;
	int opt, event_loop = 0;
	long timeout_ms = -1;

	if (!f || sc_version_num() / 10000 != SC_VERSION_MAJOR || sc_version_num() < SC_VERSION_NUM)
		return 2;
	while ((opt = getopt(argc, argv, "c:km:et:x:d:wg:j:p:")) != -1) {
		int rc = SC_OK;
		if (opt == 'c')
			rc = sc_fetcher_setopt(f, SC_FETCHOPT_CONCURRENCY, optarg, &err);
		else if (opt == 'k')
			rc = sc_fetcher_setopt_long(f, SC_FETCHOPT_KEEP_ORDER, 1, &err);
		else if (opt == 'm' && (metrics = fopen(optarg, "w")))
			rc = sc_fetcher_set_metrics(f, to_file, metrics);
		else if (opt == 'e')
			event_loop = 1;
		else if (opt == 't')
			timeout_ms = strtol(optarg, NULL, 10);
		else if (opt == 'x')
			cancel_at = strtoul(optarg, NULL, 10);
		else if (opt == 'd')
			drain_at = strtoul(optarg, NULL, 10);
		else if (opt == 'w')
			rc = sc_fetcher_set_warning(f, warn, NULL);
		else if (opt == 'g')
			rc = sc_fetcher_setopt(f, SC_FETCHOPT_GRACE, optarg, &err);
		else if (opt == 'j')
			rc = sc_fetcher_setopt(f, SC_FETCHOPT_COOKIES, optarg, &err);
		else if (opt == 'p')
			rc = sc_fetcher_setopt(f, SC_FETCHOPT_PROXY, optarg, &err);
		else
			return 2;
		if (rc != SC_OK) {
			fprintf(stderr, "fetch-records: %s: %s\n", sc_strerror(rc), err ? err : "");
			sc_free(err);
			sc_fetcher_free(f);
			return 2;
		}
	}
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		unsigned *more = realloc(seen, (nseen + 1) * sizeof(*seen));
		size_t **more_tags = more ? realloc(tags, (nseen + 1) * sizeof(*tags)) : NULL;
		if (more)
			seen = more;
		if (more_tags)
			tags = more_tags;
		if (!more || !more_tags || !(tags[nseen] = malloc(sizeof(**tags))))
			return 2;
		seen[nseen] = 0;
		*tags[nseen] = nseen + 1;
		if (sc_fetcher_submit(f, line, tags[nseen], &err) != SC_OK) {
			sc_free(err); /* a blank line or a comment: no item */
			err = NULL;
			seen[nseen] = 1; /* as if done: nothing is owed */
		}
		nseen++;
	}
	if (event_loop) {
		drive(f);
	} else if (timeout_ms >= 0) {
		int rc = sc_fetcher_run(f, timeout_ms);
		fprintf(stderr, "fetch-records: %s, %zu pending\n", sc_strerror(rc),
		        sc_fetcher_pending(f));
		sc_fetcher_free(f); /* what it holds is dropped, without callbacks */
		f = NULL;
	} else if (sc_fetcher_run(f, -1) != SC_OK) {
		failures++;
	}
	for (size_t i = 0; f && i < nseen; i++)
		check(seen[i] == 1, "done was not called exactly once", i + 1);
	for (size_t i = 0; !f && i < nseen; i++)
		check(seen[i] <= 1, "done was called twice", i + 1);
	if (f) {
		sc_fetcher_finish(f);
		check(sc_fetcher_pending(f) == 0, "submits still pending", 0);
		sc_fetcher_free(f);
	}
	if (metrics && fclose(metrics) != 0)
		failures++;
	free(line);
	free(seen);
	for (size_t i = 0; i < nseen; i++)
		free(tags[i]);
	free(tags);
	return failures ? 1 : 0;
}
