/* refuse-lines: libsc refuses a CR, LF or NUL in an option's value, as
 * sc-fetch does, for test/libsc.bats (issue 26: SC_FETCHOPT_USER_AGENT
 * "ua\r\nX-Evil: 1" sent an X-Evil header).  Usage: refuse-lines URL.
 *
 * Every option number the fetcher knows is set to a value with CR LF, LF
 * alone and CR alone through sc_fetcher_setopt; each must be refused,
 * SC_EBADVALUE with a reason, and the first line of standard output per
 * option is that reason (CR and LF shown as \r and \n), for the test to
 * hold against sc-fetch's words and count against sc-fetch --help.  Then
 * sc_fetcher_setopt_argv with -A and --header=... likewise.  Last, a
 * fetcher whose user agent and header were refused fetches URL/echo and
 * a record whose header holds a line break, and prints each record's
 * outcome and error: the test then asks the server that no X-Evil came.
 * Exits 1 when a refusal was missing.  It includes sc.h only. */
#include <stdio.h>
#include <string.h>

#include "sc.h"

static int failures;

static void on_done(sc_fetcher *f, const sc_result *r, void *user, void *ctx)
{
	(void)f, (void)user, (void)ctx;
	if (sc_result_error_name(r))
		printf("done: %s %s\n", sc_result_error_name(r), sc_result_error_message(r));
	else
		printf("done: ok\n");
}

/* s with CR and LF written as \r and \n, on one line. */
static void print_escaped(const char *s)
{
	for (; *s; s++)
		if (*s == '\r')
			fputs("\\r", stdout);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	putchar('\n');
}

/* Each value refused, the same reason for each; prints it once. */
static void refused(int opt, int rc[3], char *err[3])
{
	for (int k = 0; k < 3; k++) {
		if (rc[k] != SC_EBADVALUE || !err[k] || !err[0] || strcmp(err[k], err[0]) != 0) {
			printf("broken: option %d: value %d not refused as the others (%s)\n", opt,
			       k, sc_strerror(rc[k]));
			failures++;
		}
	}
	print_escaped(err[0] ? err[0] : "(no reason)");
	for (int k = 0; k < 3; k++)
		sc_free(err[k]);
}

/* Every option the fetcher knows (it says SC_EINVAL of the others, so that
 * an option added later is tried too). */
static void every_option(void)
{
	static const char *const values[3] = { "1\r\nX-Evil: 1", "1\nX-Evil: 1", "1\rX-Evil: 1" };
	sc_fetcher *f = sc_fetcher_new(on_done, NULL);

	for (int opt = 1; opt < 1000; opt++) {
		int rc[3];
		char *err[3] = { NULL, NULL, NULL };
		for (int k = 0; k < 3; k++)
			rc[k] = sc_fetcher_setopt(f, (enum sc_fetcher_option)opt, values[k],
			                          &err[k]);
		if (rc[0] == SC_EINVAL && rc[1] == SC_EINVAL && rc[2] == SC_EINVAL) {
			for (int k = 0; k < 3; k++) /* no such option, and its text */
				sc_free(err[k]);
			continue;
		}
		refused(opt, rc, err);
	}
	sc_fetcher_free(f);
}

/* A command line with one bad value, through sc_fetcher_setopt_argv. */
static void one_argv(char *opt, char *value)
{
	char prog[] = "refuse-lines";
	char *argv[] = { prog, opt, value, NULL };
	int first, rc[3];
	char *err[3] = { NULL, NULL, NULL };
	sc_fetcher *f = sc_fetcher_new(on_done, NULL);

	rc[0] = rc[1] = rc[2] =
	        sc_fetcher_setopt_argv(f, value ? 3 : 2, argv, &first, NULL, &err[0]);
	if (err[0]) {
		err[1] = strdup(err[0]);
		err[2] = strdup(err[0]);
	}
	refused(0, rc, err);
	sc_fetcher_free(f);
}

int main(int argc, char **argv)
{
	char *err = NULL, url[512], record[1024];
	char opt_a[] = "-A", ua[] = "ua\r\nX-Evil: 1", header[] = "--header=X-A: 1\nX-Evil: 1";

	if (argc != 2 || strlen(argv[1]) > 400)
		return 2;
	every_option();
	one_argv(opt_a, ua);
	one_argv(header, NULL);

	sc_fetcher *f = sc_fetcher_new(on_done, NULL);
	if (sc_fetcher_setopt(f, SC_FETCHOPT_USER_AGENT, "ua\r\nX-Evil: 1", NULL) != SC_EBADVALUE ||
	    sc_fetcher_setopt(f, SC_FETCHOPT_HEADER, "X-A: 1\r\nX-Evil: 1", NULL) != SC_EBADVALUE) {
		printf("broken: a bad agent or header was taken\n");
		failures++;
	}
	snprintf(url, sizeof(url), "%s/echo", argv[1]);
	snprintf(record, sizeof(record),
	         "{\"url\":\"%s/echo\",\"request\":{\"headers\":{\"X-A\":\"1\\r\\nX-Evil: 1\"}}}",
	         argv[1]);
	if (sc_fetcher_submit(f, url, NULL, &err) != SC_OK ||
	    sc_fetcher_submit(f, record, NULL, &err) != SC_OK ||
	    sc_fetcher_run(f, 30000) != SC_OK) {
		printf("broken: the fetch: %s\n", err ? err : "");
		failures++;
	}
	sc_free(err);
	sc_fetcher_finish(f);
	sc_fetcher_free(f);
	return failures ? 1 : 0;
}
