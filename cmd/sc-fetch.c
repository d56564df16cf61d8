/* sc-fetch: fetch URLs concurrently, one NDJSON record per input line.
 * The engine is lib/fetch*.c, which sc-retry shares; this is the command:
 * its main, and its input rules (on_line), the engine's line handler. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/util.h"
#include "engine/fetch.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/lines.h"

/* sc-fetch's own rows: the help and version options, on a line of their
 * own in the usage. */
static const struct sc_opt own_rows[] = {
	SC_OPT_ROW_HELP(""),
	SC_OPT_ROW_VERSION(""),
	{ 0 },
};

/* Reads the command line into opts, or ends the run: --help, --version, a
 * usage error (exit 2). */
static void parse_options(struct sc_fetch_options *opts, int argc, char **argv)
{
	const struct sc_opt_set sets[] = { { sc_fetch_opts, opts }, { own_rows, NULL } };
	char err[256];
	int first = sc_opt_parse(sets, 2, argc, argv, err, sizeof(err));

	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(sc_opt_usage(sets, 2, "< urls",
		                           "       sc-fetch -h | --help | -V | --version\n"));
	if (first == SC_OPT_PARSE_VERSION)
		sc_print_version();
	if (first == SC_OPT_PARSE_ERROR || sc_fetch_options_check(opts, err) != 0)
		sc_usage_error("%s", err);
	if (first < argc)
		sc_usage_error("unexpected operand '%s': URLs are read from standard input",
		               argv[first]);
}

/* Warns about input line `line` of in ("sc-fetch: <stdin>:LINE: why"). */
static void warn_line(const struct sc_lines *in, const struct sc_line *line, const char *why)
{
	sc_warn("%s:%zu: %s", sc_lines_name(in), line->number, why);
}

/* sc-fetch's input rules (lib/engine/fetch_line.c, which libsc's fetcher
 * shares), the engine's line handler; a malformed line becomes a
 * bad_input record, with a warning. */
static int on_line(struct sc_fetch_engine *e, const struct sc_lines *in, const struct sc_line *line,
                   void *ctx)
{
	char why[256];

	(void)ctx;
	if (sc_fetch_submit_line(e, line, sc_lines_max(in), why) > 0)
		warn_line(in, line, why);
	return 0;
}

int main(int argc, char **argv)
{
	struct sc_fetch_options opts;
	struct sc_fetch_engine *engine;
	struct sc_lines *in;
	char err[256];
	int status;

	sc_setprogname(argv[0]);
	/* Each record and metrics line goes out whole, in one write: every
	 * line is flushed on its own, so the buffers only need to hold one. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	setvbuf(stderr, NULL, _IOFBF, 1 << 16);
	sc_fetch_options_init(&opts);
	parse_options(&opts, argc, argv);
	sc_fetch_options_set_command(&opts, argc, argv);

	sc_signals_install(sc_fetch_signal_hook);
	struct sc_fetch_streams io = {
		.out = stdout, .metrics = stderr, .progress = stderr, .progname = sc_progname
	};
	engine = sc_fetch_engine_new(&opts, &io, err);
	if (!engine)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	in = sc_lines_open(STDIN_FILENO, "<stdin>");
	if (!in)
		sc_die(SC_EXIT_FAILURE, "out of memory");

	status = sc_fetch_run(engine, in, on_line, NULL, err);
	if (status == SC_EXIT_FAILURE && *err)
		sc_warn("%s", err);

	sc_fetch_engine_free(engine);
	sc_lines_close(in);
	sc_fetch_options_free(&opts);
	return sc_exit_status(status);
}
