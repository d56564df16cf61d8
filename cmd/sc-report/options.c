/* options: sc-report's command line, parsed in one function
 * (parse_options) with every bound and every bad combination said there. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kit/cli.h"
#include "kit/opt.h"
#include "report.h"

const char *column_name(enum host_column c)
{
	static const char *const names[COL_COUNT] = {
		"host", "requests",  "bytes",        "ok",        "errors", "robots",
		"429",  "cooldowns", "not_modified", "throttles", "p50",    "p95",
	};
	return names[c];
}

/* The --hist, --sort and --fail-if rows: each returns 0, or -1 with the
 * usage error in err. */
static int call_hist(void *base, const struct sc_opt *row, const char *arg, char *err,
                     size_t errlen)
{
	struct options *o = base;
	char buf[1024];
	size_t len = strlen(arg);

	(void)row;
	if (len >= sizeof(buf))
		return snprintf(err, errlen, "--hist: too long"), -1;
	memcpy(buf, arg, len + 1);
	o->nhist = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		double ms;
		if (!parse_duration_ms(tok, &ms))
			return snprintf(err, errlen,
			                "--hist: '%s' is not a duration (like 250ms or 1s)", tok),
			       -1;
		if (o->nhist == HIST_MAX)
			return snprintf(err, errlen, "--hist: at most %d bounds", HIST_MAX), -1;
		if (o->nhist > 0 && ms <= o->hist[o->nhist - 1])
			return snprintf(err, errlen, "--hist: the bounds must increase ('%s')",
			                tok),
			       -1;
		o->hist[o->nhist++] = ms;
	}
	if (o->nhist == 0)
		return snprintf(err, errlen, "--hist: no bounds"), -1;
	return 0;
}

static int call_sort(void *base, const struct sc_opt *row, const char *arg, char *err,
                     size_t errlen)
{
	struct options *o = base;

	(void)row;
	for (int c = 0; c < COL_COUNT; c++) {
		if (strcmp(arg, column_name((enum host_column)c)) == 0) {
			o->sort = (enum host_column)c;
			return 0;
		}
	}
	snprintf(err, errlen,
	         "--sort: unknown column '%s' (host, requests, bytes, ok, errors, robots, "
	         "429, cooldowns, not_modified, throttles, p50, p95)",
	         arg);
	return -1;
}

static int call_fail_if(void *base, const struct sc_opt *row, const char *arg, char *err,
                        size_t errlen)
{
	struct options *o = base;
	char why[256];

	(void)row;
	if (o->nfail == FAIL_MAX)
		return snprintf(err, errlen, "--fail-if: at most %d", FAIL_MAX), -1;
	if (!threshold_parse(arg, &o->fail[o->nfail], why, sizeof(why)))
		return snprintf(err, errlen, "--fail-if '%s': %s", arg, why), -1;
	o->nfail++;
	return 0;
}

#define AT(member) SC_OPT_AT(struct options, member)
static const struct sc_opt rows[] = {
	SC_OPT_ROW_HELP(""),
	SC_OPT_ROW_VERSION(""),
	SC_OPT_ROW_FLAG("json", 0, AT(json)),
	SC_OPT_ROW_STRING("html", 0, "file", AT(html)),
	SC_OPT_ROW_CALL("sort", 0, "column", call_sort, 0),
	SC_OPT_ROW_WHOLE("hosts", 0, "N", AT(host_rows), 0, 1000000),
	SC_OPT_ROW_CALL("hist", 0, "bounds", call_hist, 0),
	SC_OPT_ROW_CALLS("fail-if", 0, "expr", call_fail_if, 0),
	SC_OPT_ROW_NUMBER("every", 0, "secs", AT(every_s), 0.1, 86400),
	{ 0 },
};

void parse_options(int argc, char **argv, struct options *o)
{
	const struct sc_opt_set sets[] = { { rows, o } };
	char err[512];

	memset(o, 0, sizeof(*o));
	o->sort = COL_REQUESTS;
	o->host_rows = 25;
	int first = sc_opt_parse(sets, 1, argc, argv, err, sizeof(err));
	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(sc_opt_usage(sets, 1, "[file ...]",
		                           "       sc-report -h | --help | -V | --version\n"));
	if (first == SC_OPT_PARSE_VERSION)
		sc_print_version_with("jansson " JANSSON_VERSION);
	if (first == SC_OPT_PARSE_ERROR)
		sc_usage_error("%s", err);
	o->inputs = argv + first;
	o->ninputs = argc - first;
	if (o->every_s > 0 && o->html)
		sc_usage_error(
		        "--every and --html cannot go together (run --html once at the end)");
}
