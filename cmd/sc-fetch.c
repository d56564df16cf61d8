/* sc-fetch: fetch URLs concurrently, one NDJSON record per input line.
 * The engine is lib/fetch*.c, which sc-retry shares; this is the command:
 * its main, and its input rules (on_line), the engine's line handler. */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/utf8.h"
#include "core/util.h"
#include "engine/fetch.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/record.h"

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

/* Whether s begins with "scheme://" (RFC 3986: a letter, then letters,
 * digits, '+', '-' and '.'). */
static bool has_scheme(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || !isalpha((unsigned char)s[0]))
		return false;
	while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
		i++;
	return n - i >= 3 && memcmp(s + i, "://", 3) == 0;
}

/* A JSON object (or something malformed) of the input: the shared record
 * rules, and a non-empty string "url" and a request member that can be
 * sent. */
static void on_record_line(struct sc_fetch_engine *e, const struct sc_lines *in,
                           const struct sc_line *line)
{
	struct sc_input_item item;
	char why[256];

	sc_input_item_make(line, sc_lines_max(in), NULL, &item);
	if (item.bad) {
		warn_line(in, line, item.why);
		sc_fetch_submit_final(e, item.rec, true);
		return;
	}
	const char *problem = NULL;
	const char *url = json_string_value(json_object_get(item.rec, "url"));
	if (!url)
		problem = "no string member \"url\"";
	else if (!*url)
		problem = "\"url\" is empty";
	else
		problem = sc_fetch_request_problem(json_object_get(item.rec, "request"));
	if (problem) {
		warn_line(in, line, problem);
		json_t *bad = sc_record_bad_input(line->number, line->text, line->len, problem);
		json_object_set(bad, "url", url ? json_object_get(item.rec, "url") : json_null());
		json_decref(item.rec);
		sc_fetch_submit_final(e, bad, true);
		return;
	}
	if (!sc_fetch_submit_input(e, item.rec, line, why))
		warn_line(in, line, why);
}

/* sc-fetch's input rules, the engine's line handler: a URL list's line
 * (lib/record/input's rule, as sc-frontier --seeds reads one: a URL,
 * trimmed; '#' lines are no record; or a record); a malformed line
 * becomes a bad_input record, with a warning. */
static int on_line(struct sc_fetch_engine *e, const struct sc_lines *in, const struct sc_line *line,
                   void *ctx)
{
	const char *s;
	size_t n;
	char why[256];

	(void)ctx;
	enum sc_url_line kind = sc_input_url_line(line, &s, &n);
	if (kind == SC_URL_LINE_SKIP)
		return 0;
	if (kind == SC_URL_LINE_RECORD) {
		on_record_line(e, in, line);
		return 0;
	}
	/* A space or a non-ASCII character is a URL as people paste it (the
	 * engine requests it percent-encoded: lib/url.h, sc_url_from_pasted)
	 * when the line begins with a scheme; words with spaces are no URL,
	 * and neither is a NUL byte or a tab. */
	if (kind == SC_URL_LINE_NUL || memchr(s, '\t', n) ||
	    !sc_utf8_valid((const unsigned char *)s, n) ||
	    (memchr(s, ' ', n) && !has_scheme(s, n))) {
		warn_line(in, line, "not a URL");
		sc_fetch_submit_final(
		        e, sc_record_bad_input(line->number, line->text, line->len, "not a URL"),
		        true);
		return 0;
	}
	json_t *rec = json_object();
	json_object_set_new(rec, "url", json_stringn(s, n));
	if (!sc_fetch_submit_input(e, rec, line, why))
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
