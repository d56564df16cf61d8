/* options: sc-report's command line, parsed in one function
 * (parse_options) with every bound and every bad combination said there. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kit/cli.h"
#include "report.h"

static const char usage_text[] =
        "usage: sc-report [--json] [--html file] [--sort column] [--hosts N]\n"
        "                 [--hist bounds] [--fail-if expr ...] [--every secs]\n"
        "                 [file ...]\n";

enum {
	OPT_JSON = 256,
	OPT_HTML,
	OPT_SORT,
	OPT_HOSTS,
	OPT_HIST,
	OPT_FAIL_IF,
	OPT_EVERY
};

static const struct option long_options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "hosts", required_argument, NULL, OPT_HOSTS },
	{ "hist", required_argument, NULL, OPT_HIST },
	{ "fail-if", required_argument, NULL, OPT_FAIL_IF },
	{ "every", required_argument, NULL, OPT_EVERY },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

const char *column_name(enum host_column c)
{
	static const char *const names[COL_COUNT] = {
		"host", "requests",  "bytes",        "ok",        "errors", "robots",
		"429",  "cooldowns", "not_modified", "throttles", "p50",    "p95",
	};
	return names[c];
}

bool parse_duration_ms(const char *s, double *ms)
{
	/* Microseconds divide, so that 950000us is exactly 950 ms. */
	static const struct {
		const char *unit;
		double times, per;
	} units[] = {
		{ "", 1, 1 }, { "us", 1, 1000 }, { "ms", 1, 1 }, { "s", 1000, 1 }, { "m", 60000, 1 }
	};
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v < 0)
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			*ms = v * units[i].times / units[i].per;
			return true;
		}
	}
	return false;
}

static void parse_hist(const char *arg, struct options *o)
{
	char buf[1024];
	size_t len = strlen(arg);

	if (len >= sizeof(buf))
		sc_usage_error("--hist: too long");
	memcpy(buf, arg, len + 1);
	o->nhist = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		double ms;
		if (!parse_duration_ms(tok, &ms))
			sc_usage_error("--hist: '%s' is not a duration (like 250ms or 1s)", tok);
		if (o->nhist == HIST_MAX)
			sc_usage_error("--hist: at most %d bounds", HIST_MAX);
		if (o->nhist > 0 && ms <= o->hist[o->nhist - 1])
			sc_usage_error("--hist: the bounds must increase ('%s')", tok);
		o->hist[o->nhist++] = ms;
	}
	if (o->nhist == 0)
		sc_usage_error("--hist: no bounds");
}

static enum host_column parse_column(const char *arg)
{
	for (int c = 0; c < COL_COUNT; c++)
		if (strcmp(arg, column_name((enum host_column)c)) == 0)
			return (enum host_column)c;
	sc_usage_error("--sort: unknown column '%s' (host, requests, bytes, ok, errors, robots, "
	               "429, cooldowns, not_modified, throttles, p50, p95)",
	               arg);
}

static void add_threshold(const char *arg, struct options *o)
{
	char why[256];

	if (o->nfail == FAIL_MAX)
		sc_usage_error("--fail-if: at most %d", FAIL_MAX);
	if (!threshold_parse(arg, &o->fail[o->nfail], why, sizeof(why)))
		sc_usage_error("--fail-if '%s': %s", arg, why);
	o->nfail++;
}

void parse_options(int argc, char **argv, struct options *o)
{
	int ch;

	memset(o, 0, sizeof(*o));
	o->sort = COL_REQUESTS;
	o->host_rows = 25;
	while ((ch = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
		switch (ch) {
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_HTML:
			o->html = optarg;
			break;
		case OPT_SORT:
			o->sort = parse_column(optarg);
			break;
		case OPT_HOSTS:
			o->host_rows = sc_parse_long("--hosts", optarg, 0, 1000000);
			break;
		case OPT_HIST:
			parse_hist(optarg, o);
			break;
		case OPT_FAIL_IF:
			add_threshold(optarg, o);
			break;
		case OPT_EVERY:
			o->every_s = sc_parse_double("--every", optarg, 0.1, 86400);
			break;
		case 'h':
			sc_print_help(usage_text);
		case 'V':
			sc_print_version_with("jansson " JANSSON_VERSION);
		default:
			sc_usage_hint();
		}
	}
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	if (o->every_s > 0 && o->html)
		sc_usage_error(
		        "--every and --html cannot go together (run --html once at the end)");
}
