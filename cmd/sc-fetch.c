/* sc-fetch: fetch URLs concurrently, one NDJSON record per input line.
 *
 * A client of libsc's public API (sc.h, sc_fetcher(3)), so that the
 * library and the command cannot drift: the fetcher takes the command
 * line (sc_fetcher_setopt_argv) and reads standard input itself, only as
 * it wants more work (sc_fetcher_run_fd).  This file is the program
 * around it: each record written whole to standard output, the metrics
 * lines to standard error, the warnings, the signals, the exit status.
 * One query is no fetch and has no libsc call: --origin-state FILE --show
 * prints the origin state's lines (web/origin_state.h, which owns the
 * file and the lines; crawl-progress.sh reads them). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sc.h>

#include "core/signals.h"
#include "core/sqlite_shared.h"
#include "core/util.h"
#include "kit/cli.h"
#include "web/origin_state.h"

static sc_fetcher *volatile fetcher; /* the signal hook's, until it is freed */
static int out_errno;                /* the first error writing standard output, or 0 */

/* SIGINT or SIGTERM: the fetcher drains (async-signal-safe). */
static void on_stop(void)
{
	sc_fetcher_drain(fetcher);
}

/* Writes text and a newline to fd in one writev (more only when the
 * kernel takes part of it), whole: a second signal does not cut it
 * (sc_signals_write_begin).  Returns 0, or -1 with errno set. */
static int write_line(int fd, const char *text, size_t len)
{
	struct iovec iov[2] = { { (void *)text, len }, { (void *)"\n", 1 } }, *v = iov;
	int left = 2, rc = 0, saved;

	sc_signals_write_begin();
	while (left > 0) {
		ssize_t n = writev(fd, v, left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		for (; left > 0 && (size_t)n >= v->iov_len; left--, v++)
			n -= (ssize_t)v->iov_len;
		if (left > 0) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= (size_t)n;
		}
	}
	saved = errno;
	sc_signals_write_end();
	errno = saved;
	return rc;
}

/* A record, once per item: to standard output.  After a write fails the
 * run ends at once (the rest become cancelled records, not written). */
static void on_record(sc_fetcher *f, const sc_result *r, void *user, void *ctx)
{
	size_t len;
	const char *json = sc_result_json(r, &len);

	(void)user, (void)ctx;
	if (out_errno)
		return;
	if (write_line(STDOUT_FILENO, json, len) != 0) {
		out_errno = errno;
		sc_fetcher_cancel(f);
	}
}

/* A metrics line: to standard error, best effort (the records count). */
static void on_metrics(const char *line, size_t len, void *ctx)
{
	(void)ctx;
	(void)write_line(STDERR_FILENO, line, len);
}

/* A malformed input line ("sc-fetch: <stdin>:LINE: why"); its bad_input
 * record follows. */
static void on_warning(size_t lineno, const char *why, void *ctx)
{
	(void)ctx;
	sc_warn("<stdin>:%zu: %s", lineno, why);
}

static _Noreturn void print_help(void)
{
	static const char more[] = "       %s --origin-state file --show\n"
	                           "       %s -h | --help | -V | --version\n";
	char *options = sc_fetcher_usage(sc_progname, "< urls");
	size_t size = strlen(options) + sizeof(more) + 2 * strlen(sc_progname);
	char *text = sc_malloc(size);

	snprintf(text, size, "%s", options);
	snprintf(text + strlen(options), size - strlen(options), more, sc_progname, sc_progname);
	sc_free(options);
	sc_print_help(text);
}

/* An origin state line: to standard output, whole; 1 (errno set) when
 * the write failed, which ends the walk. */
static int on_origin_line(const char *line, size_t len, void *ctx)
{
	(void)ctx;
	return write_line(STDOUT_FILENO, line, len) == 0 ? 0 : 1;
}

/* The file of --origin-state FILE --show: FILE, when argv is that and
 * nothing else (either order, --origin-state=FILE too); NULL when --show
 * is not among argv; a usage error otherwise. */
static const char *show_asked(int argc, char **argv)
{
	const char *path = NULL;
	bool show = false;

	for (int i = 1; i < argc; i++)
		show = show || strcmp(argv[i], "--show") == 0;
	if (!show)
		return NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--show") == 0)
			continue;
		if (strncmp(argv[i], "--origin-state=", 15) == 0 && !path)
			path = argv[i] + 15;
		else if (strcmp(argv[i], "--origin-state") == 0 && i + 1 < argc && !path)
			path = argv[++i];
		else
			sc_usage_error(
			        "--show takes --origin-state FILE and nothing else, not '%s'",
			        argv[i]);
	}
	if (!path)
		sc_usage_error("--show needs --origin-state FILE");
	if (!*path)
		sc_usage_error("--origin-state: the file name is empty");
	return path;
}

/* --origin-state FILE --show: one JSON line per origin of FILE (sc-fetch(1),
 * "Origin state"); FILE must exist (none is made for a look). */
static int show_origins(const char *path)
{
	char why[512];
	struct stat st;

	if (sc_sqlite_name_problem(path, why, sizeof why))
		sc_usage_error("--origin-state: %s", why);
	if (stat(path, &st) != 0)
		sc_die(SC_EXIT_FAILURE, "--origin-state: %s:", path);
	struct sc_origin_state *s = sc_origin_state_open(path, why, sizeof why);
	if (!s)
		sc_die(SC_EXIT_FAILURE, "%s", why);
	int rc = sc_origin_state_show(s, on_origin_line, NULL, why, sizeof why);
	int saved = errno;
	sc_origin_state_close(s);
	if (rc > 0) {
		errno = saved;
		sc_die_write("error writing standard output:");
	}
	if (rc < 0)
		sc_die(SC_EXIT_FAILURE, "%s", why);
	return SC_EXIT_OK;
}

/* Sets the fetcher's options from the command line, or ends the run:
 * --help, --version, a usage error (exit 2). */
static void parse_options(int argc, char **argv)
{
	char *err = NULL;
	unsigned asked;
	int first;

	if (sc_fetcher_setopt_argv(fetcher, argc, argv, &first, &asked, &err) != SC_OK)
		sc_usage_error("%s", err ? err : "bad arguments");
	if (asked == SC_ARGV_HELP)
		print_help();
	if (asked == SC_ARGV_VERSION)
		sc_print_version();
	if (first < argc)
		sc_usage_error("unexpected operand '%s': URLs are read from standard input",
		               argv[first]);
}

int main(int argc, char **argv)
{
	char *err = NULL;
	int status;

	sc_setprogname(argv[0]);
	sc_stdio_hold();
	const char *shown = show_asked(argc, argv);
	if (shown)
		return sc_exit_status(show_origins(shown));
	fetcher = sc_fetcher_new(on_record, NULL);
	if (!fetcher)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	parse_options(argc, argv);
	sc_fetcher_set_metrics(fetcher, on_metrics, NULL);
	sc_fetcher_set_warning(fetcher, on_warning, NULL);
	sc_signals_install(on_stop);

	if (sc_fetcher_run_fd(fetcher, STDIN_FILENO, "<stdin>", &err) != SC_OK) {
		sc_warn("%s", err ? err : "cannot run");
		status = SC_EXIT_FAILURE;
	} else {
		status = sc_fetcher_failed(fetcher) ? SC_EXIT_PARTIAL : SC_EXIT_OK;
	}
	sc_free(err);
	sc_fetcher *f = fetcher;
	fetcher = NULL; /* before it is freed: a signal then drains nothing */
	sc_fetcher_free(f);
	if (out_errno) {
		errno = out_errno;
		sc_die_write("error writing standard output:");
	}
	return sc_exit_status(status);
}
