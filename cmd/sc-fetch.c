/* sc-fetch: fetch URLs concurrently, one NDJSON record per input line.
 * The work is in lib/fetch.c, which sc-retry shares; this is the command. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "fetch.h"
#include "lines.h"
#include "signals.h"
#include "util.h"

static const char usage[] =
        "usage: sc-fetch [-kq] [-c N] [-m SECS] [-A AGENT] [-H 'NAME: VALUE']...\n"
        "                [--per-host N] [--rate R] [--host-rate R] [--delay MS]\n"
        "                [--max-redirs N] [--connect-timeout SECS]\n"
        "                [--low-speed-limit BYTES] [--low-speed-time SECS]\n"
        "                [--max-bytes N] [--keep-order] [--retries N] [--retry-base MS]\n"
        "                [--retry-max MS] [--retry-max-wait SECS] [--retry-budget PCT]\n"
        "                [--seed N] [--metrics FILE] [--stats-every SECS] [--progress]\n"
        "                [--grace SECS] [--robots] [--robots-agent TOKEN]\n"
        "                [--max-crawl-delay SECS] [--robots-cache FILE] [--headers]\n"
        "                < urls\n"
        "       sc-fetch -h | --help | -V | --version\n";

int main(int argc, char **argv)
{
	struct sc_fetch_options opts;
	struct sc_fetch_cli cli = { .help = usage };
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
	int first = sc_fetch_options_parse(&opts, argc, argv, &cli);
	if (first < argc)
		sc_usage_error("unexpected operand '%s': URLs are read from standard input",
		               argv[first]);

	sc_signals_install(sc_fetch_signal_hook);
	engine = sc_fetch_engine_new(&opts, stdout, err);
	if (!engine)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	in = sc_lines_open(STDIN_FILENO, "<stdin>");
	if (!in)
		sc_die(SC_EXIT_FAILURE, "out of memory");

	status = sc_fetch_run(engine, in, NULL, NULL);

	sc_fetch_engine_free(engine);
	sc_lines_close(in);
	sc_fetch_options_free(&opts);
	if (status != SC_EXIT_FAILURE && (fflush(stdout) != 0 || ferror(stdout))) {
		sc_warn("error writing standard output:");
		status = SC_EXIT_FAILURE;
	}
	return sc_signals_exit_status(status);
}
