/* sc-retry: fetches the failed records of an earlier run again.
 *
 * It reads fetch records (sc-record(5)).  Ok records and permanent failures
 * pass through as the same bytes; transient failures and records cancelled
 * by a shutdown are fetched again by the sc-fetch engine, with the same
 * options (the one shared table, lib/engine/fetch_opts.c) and the same retry
 * policy, re-sending their "request" when they have one.  The engine
 * continues the record's "attempts" and "history", so the output record
 * tells the whole story.  One output record per input record.
 *
 * Why lib/engine and not sc.h, as sc-fetch and sc-parse use: sc-retry
 * continues a record's attempts (its "attempts" and "history" carried on,
 * the retry budget counted from them), which libsc has no call for, and a
 * call made only for sc-retry would be the engine's interface under
 * another name (README.md, "libsc"). */
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/util.h"
#include "core/version.h"
#include "engine/fetch.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/record.h"
#include "web/retry.h"
#include "web/robots.h"

/* sc-retry's own rows: the help and version options. */
static const struct sc_opt own_rows[] = {
	SC_OPT_ROW_HELP(NULL),
	SC_OPT_ROW_VERSION(NULL),
	{ 0 },
};

/* Reads the command line into opts, or ends the run: --help, --version, a
 * usage error (exit 2). */
static void parse_options(struct fetch_options *opts, int argc, char **argv)
{
	const struct sc_opt_set sets[] = { { fetch_option_rows, opts }, { own_rows, NULL } };
	char err[256];

	free(opts->user_agent);
	opts->user_agent = sc_strdup("sc-retry/" SC_VERSION);
	int first = sc_opt_parse(sets, 2, argc, argv, err, sizeof(err));
	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(sc_opt_usage(sets, 2, "< records", NULL));
	if (first == SC_OPT_PARSE_VERSION)
		sc_print_version();
	if (first == SC_OPT_PARSE_ERROR || fetch_options_check(opts, err, sizeof(err)) != 0)
		sc_usage_error("%s", err);
	if (first < argc)
		sc_usage_error("unexpected argument '%s': records are read from standard input",
		               argv[first]);
	/* Here every attempt is one more for a record that already failed:
	 * --retries N allows N of them, the first of which the engine makes
	 * unasked (and outside the retry budget). */
	if (opts->retry.retries < 1)
		sc_usage_error("--retries: '%d' is out of range (1..100): sc-retry makes up to "
		               "N more attempts per failed record",
		               opts->retry.retries);
	opts->retry.retries -= 1;
}

/* What is done with one input record. */
enum disposition {
	PASS,      /* ok, or a permanent failure: the same bytes out */
	REFETCH,   /* a transient failure or a cancellation: fetch it again */
	NOT_FETCH, /* a JSON object that is no fetch record: bad_input */
};

/* A robots.txt that did not answer (a timeout, a network error) refused
 * every URL of its origin for that run only: worth asking again, but only
 * with --robots, which asks robots.txt again first. */
static bool robots_unreachable(const json_t *error)
{
	const char *message = json_string_value(json_object_get(error, "message"));

	return message && strcmp(message, SC_ROBOTS_UNREACHABLE) == 0;
}

static enum disposition classify(const json_t *rec, bool robots)
{
	const json_t *ok = json_object_get(rec, "ok");

	if (!json_is_boolean(ok))
		return NOT_FETCH;
	if (json_is_true(ok))
		return PASS;
	/* A shutdown in progress starts nothing new: the record passes as it
	 * came, data for the next run. */
	if (sc_stop_signal)
		return PASS;
	/* Without a url there is nothing to fetch; the record is data as it is. */
	if (!json_is_string(json_object_get(rec, "url")))
		return PASS;

	const json_t *status_j = json_object_get(rec, "status");
	long status = json_is_integer(status_j) ? (long)json_integer_value(status_j) : 0;
	const char *name =
	        json_string_value(json_object_get(json_object_get(rec, "error"), "kind"));
	int kind = name ? sc_error_kind_from_name(name) : -1;

	/* No kind we know: judge by the status, as an http failure. */
	if (kind < 0)
		kind = status ? SC_ERR_HTTP : SC_ERR_INTERNAL;
	/* A cancelled record was cut short by a shutdown, and a rate_limited
	 * one was refused only because that run would not wait as long as the
	 * server asked: both are worth asking again in a later run, although
	 * sc-fetch never retries them itself within one. */
	if (kind == SC_ERR_CANCELLED || kind == SC_ERR_RATE_LIMITED ||
	    sc_retry_is_transient(status, kind))
		return REFETCH;
	if (kind == SC_ERR_ROBOTS && robots && robots_unreachable(json_object_get(rec, "error")))
		return REFETCH;
	return PASS;
}

/* The record's "attempts", bounded so that adding retries cannot overflow. */
static int prior_attempts(const json_t *rec)
{
	const json_t *a = json_object_get(rec, "attempts");

	if (!json_is_integer(a) || json_integer_value(a) < 0)
		return 0;
	if (json_integer_value(a) > 1000000)
		return 1000000;
	return (int)json_integer_value(a);
}

/* The bad_input record for a JSON object that is no fetch record, with its
 * warning. */
static json_t *not_fetch_record(const struct sc_lines *in, const struct sc_line *line,
                                const json_t *rec)
{
	static const char why[] = "not a fetch record: no boolean \"ok\"";
	json_t *bad = sc_record_bad_input(line->number, line->text, line->len, why);
	const json_t *url = json_object_get(rec, "url");

	sc_warn("%s:%zu: %s", sc_lines_name(in), line->number, why);
	if (json_is_string(url))
		json_object_set(bad, "url", (json_t *)url);
	return bad;
}

/* The engine's line handler: each record passes, or is fetched again. */
static int on_line(struct fetch_engine *e, const struct sc_lines *in, const struct sc_line *line,
                   void *ctx)
{
	struct sc_input_item item;

	const struct fetch_options *opts = ctx;

	if (!sc_input_item_from_line(in, line, NULL, &item))
		return 0; /* a blank line is no record */
	if (item.bad) {
		char where[320];
		sc_input_warning(in, &item, where);
		sc_warn("%s", where);
		fetch_submit_final(e, item.rec, true);
		return 0;
	}

	switch (classify(item.rec, opts->robots)) {
	case PASS:
		fetch_submit_raw(e, line->text, line->len, false);
		json_decref(item.rec);
		break;
	case REFETCH:
		/* The engine replaces every fetch member (a stale error or body
		 * included) and continues "attempts" and "history". */
		fetch_submit(e, item.rec, prior_attempts(item.rec));
		break;
	case NOT_FETCH:
		fetch_submit_final(e, not_fetch_record(in, line, item.rec), true);
		json_decref(item.rec);
		break;
	}
	return 0;
}

static struct fetch_engine *volatile engine; /* the signal hook's, while it runs */

/* SIGINT or SIGTERM: the engine's loop wakes to drain (async-signal-safe;
 * before the engine is made, the loop sees the signal when it starts). */
static void on_stop(void)
{
	fetch_wake(engine);
}

int main(int argc, char **argv)
{
	struct fetch_options opts;
	char err[256];

	sc_setprogname(argv[0]);
	sc_stdio_hold();
	fetch_options_init(&opts);
	parse_options(&opts, argc, argv);
	fetch_options_set_command(&opts, argc, argv);
	/* A later stage of a pipeline: after a signal, the stage before us goes
	 * on writing the records it drains, and they must not be lost.  The
	 * engine keeps reading; classify() passes them through unfetched. */
	opts.read_input_in_drain = true;

	sc_signals_install(on_stop);
	struct fetch_streams io = {
		.out = stdout, .metrics = stderr, .progress = stderr, .progname = sc_progname
	};
	struct fetch_engine *e = fetch_engine_new(&opts, &io, err, sizeof(err));
	if (!e)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	engine = e;
	struct sc_lines *in = sc_lines_open(STDIN_FILENO, "<stdin>");
	if (!in)
		sc_die(SC_EXIT_FAILURE, "out of memory");

	int status = fetch_run(e, in, on_line, &opts, err, sizeof(err));
	if (status == SC_EXIT_FAILURE && *err)
		sc_warn("%s", err);

	engine = NULL; /* before it is freed: the handler then wakes nothing */
	fetch_engine_free(e);
	sc_lines_close(in);
	fetch_options_free(&opts);
	return sc_exit_status(status);
}
