/* fetch_opts: the command-line options sc-fetch and sc-retry share. */
#include "engine/fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kit/cli.h"

#ifndef SC_VERSION
#define SC_VERSION "unknown"
#endif

enum {
	OPT_PER_HOST = 0x1000,
	OPT_RATE,
	OPT_HOST_RATE,
	OPT_DELAY,
	OPT_MAX_REDIRS,
	OPT_CONNECT_TIMEOUT,
	OPT_LOW_SPEED_LIMIT,
	OPT_LOW_SPEED_TIME,
	OPT_MAX_BYTES,
	OPT_KEEP_ORDER,
	OPT_PROGRESS,
	OPT_STATS_EVERY,
	OPT_METRICS,
	OPT_GRACE,
	OPT_RETRIES,
	OPT_RETRY_BASE,
	OPT_RETRY_MAX,
	OPT_RETRY_MAX_WAIT,
	OPT_RETRY_BUDGET,
	OPT_SEED,
	OPT_ROBOTS,
	OPT_ROBOTS_AGENT,
	OPT_MAX_CRAWL_DELAY,
	OPT_ROBOTS_CACHE,
	OPT_HEADERS,
};

const struct option sc_fetch_long_options[] = {
	{ "concurrency", required_argument, NULL, 'c' },
	{ "per-host", required_argument, NULL, OPT_PER_HOST },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "host-rate", required_argument, NULL, OPT_HOST_RATE },
	{ "delay", required_argument, NULL, OPT_DELAY },
	{ "max-redirs", required_argument, NULL, OPT_MAX_REDIRS },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "timeout", required_argument, NULL, 'm' },
	{ "low-speed-limit", required_argument, NULL, OPT_LOW_SPEED_LIMIT },
	{ "low-speed-time", required_argument, NULL, OPT_LOW_SPEED_TIME },
	{ "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
	{ "user-agent", required_argument, NULL, 'A' },
	{ "header", required_argument, NULL, 'H' },
	{ "insecure", no_argument, NULL, 'k' },
	{ "keep-order", no_argument, NULL, OPT_KEEP_ORDER },
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "stats-every", required_argument, NULL, OPT_STATS_EVERY },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "retries", required_argument, NULL, OPT_RETRIES },
	{ "retry-base", required_argument, NULL, OPT_RETRY_BASE },
	{ "retry-max", required_argument, NULL, OPT_RETRY_MAX },
	{ "retry-max-wait", required_argument, NULL, OPT_RETRY_MAX_WAIT },
	{ "retry-budget", required_argument, NULL, OPT_RETRY_BUDGET },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "robots", no_argument, NULL, OPT_ROBOTS },
	{ "robots-agent", required_argument, NULL, OPT_ROBOTS_AGENT },
	{ "max-crawl-delay", required_argument, NULL, OPT_MAX_CRAWL_DELAY },
	{ "robots-cache", required_argument, NULL, OPT_ROBOTS_CACHE },
	{ "headers", no_argument, NULL, OPT_HEADERS },
	{ NULL, 0, NULL, 0 },
};

void sc_fetch_options_init(struct sc_fetch_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->concurrency = 20;
	opts->max_redirs = 5;
	opts->connect_timeout_ms = 10000;
	opts->timeout_ms = 30000;
	opts->low_speed_limit = 1;
	opts->low_speed_time = 30;
	opts->max_bytes = 10LL << 20;
	opts->grace_s = 10;
	opts->max_crawl_delay_ms = 30000;
	sc_retry_policy_defaults(&opts->retry);
}

void sc_fetch_options_free(struct sc_fetch_options *opts)
{
	free(opts->user_agent);
	free(opts->metrics_path);
	free(opts->robots_agent);
	free(opts->robots_cache_path);
	curl_slist_free_all(opts->headers);
	opts->user_agent = opts->metrics_path = NULL;
	opts->robots_agent = opts->robots_cache_path = NULL;
	opts->headers = NULL;
}

/* The bounded number parsers of cli.c, returning their message instead of
 * exiting with it (the same text: tests pin it). */
static int parse_long(const char *option, const char *arg, long min, long max, long *out,
                      char err[256])
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 10);
	if (end == arg || *end != '\0')
		return snprintf(err, 256, "%s: '%s' is not a whole number", option, arg), -1;
	if (errno == ERANGE || *out < min || *out > max)
		return snprintf(err, 256, "%s: '%s' is out of range (%ld..%ld)", option, arg, min,
		                max),
		       -1;
	return 0;
}

static int parse_double(const char *option, const char *arg, double min, double max, double *out,
                        char err[256])
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (end == arg || *end != '\0' || isnan(*out))
		return snprintf(err, 256, "%s: '%s' is not a number", option, arg), -1;
	if (errno == ERANGE || *out < min || *out > max)
		return snprintf(err, 256, "%s: '%s' is out of range (%g..%g)", option, arg, min,
		                max),
		       -1;
	return 0;
}

/* Seconds (fractions allowed) as milliseconds. */
static int parse_secs_ms(const char *option, const char *arg, double min, double max, long *out,
                         char err[256])
{
	double secs;

	if (parse_double(option, arg, min, max, &secs, err) != 0)
		return -1;
	*out = (long)llround(secs * 1000.0);
	return 0;
}

static int add_header(struct sc_fetch_options *opts, const char *arg, char err[256])
{
	const char *colon = strchr(arg, ':');
	const char *semi = strchr(arg, ';');

	/* "Name: value", or curl's "Name;" for a header with an empty value. */
	if (!colon && semi && semi[1] == '\0')
		colon = semi;
	if (!colon || colon == arg || strcspn(arg, " \t") < (size_t)(colon - arg))
		return snprintf(err, 256, "--header: '%.200s' is not 'Name: value'", arg), -1;
	if (strpbrk(arg, "\r\n"))
		return snprintf(err, 256, "--header: a header may not contain a line break"), -1;
	struct curl_slist *l = curl_slist_append(opts->headers, arg);
	if (!l)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	opts->headers = l;
	return 0;
}

static char *replace(char *old, const char *arg)
{
	free(old);
	return sc_strdup(arg);
}

int sc_fetch_option(struct sc_fetch_options *opts, int opt, const char *arg, char err[256])
{
	long l = 0;
	double d = 0;
	int rc = 0;

	switch (opt) {
	case 'c':
		rc = parse_long("--concurrency", arg, 1, 100000, &l, err);
		if (rc == 0)
			opts->concurrency = l;
		break;
	case OPT_PER_HOST:
		rc = parse_long("--per-host", arg, 0, 100000, &l, err);
		if (rc == 0)
			opts->per_host = l;
		break;
	case OPT_RATE:
		rc = parse_double("--rate", arg, 0, 1e6, &d, err);
		if (rc == 0)
			opts->rate = d;
		break;
	case OPT_HOST_RATE:
		rc = parse_double("--host-rate", arg, 0, 1e6, &d, err);
		if (rc == 0)
			opts->host_rate = d;
		break;
	case OPT_DELAY:
		rc = parse_long("--delay", arg, 0, 86400000, &l, err);
		if (rc == 0)
			opts->delay_ms = l;
		break;
	case OPT_MAX_REDIRS:
		rc = parse_long("--max-redirs", arg, 0, 1000, &l, err);
		if (rc == 0)
			opts->max_redirs = l;
		break;
	case OPT_CONNECT_TIMEOUT:
		rc = parse_secs_ms("--connect-timeout", arg, 0.001, 86400,
		                   &opts->connect_timeout_ms, err);
		break;
	case 'm':
		rc = parse_secs_ms("--timeout", arg, 0, 86400, &opts->timeout_ms, err);
		break;
	case OPT_LOW_SPEED_LIMIT:
		rc = parse_long("--low-speed-limit", arg, 1, 1L << 30, &l, err);
		if (rc == 0)
			opts->low_speed_limit = l;
		break;
	case OPT_LOW_SPEED_TIME:
		rc = parse_long("--low-speed-time", arg, 0, 86400, &l, err);
		if (rc == 0)
			opts->low_speed_time = l;
		break;
	case OPT_MAX_BYTES:
		rc = parse_long("--max-bytes", arg, 1, 1L << 40, &l, err);
		if (rc == 0)
			opts->max_bytes = l;
		break;
	case 'A':
		opts->user_agent = replace(opts->user_agent, arg);
		break;
	case 'H':
		rc = add_header(opts, arg, err);
		break;
	case 'k':
		opts->insecure = true;
		break;
	case OPT_KEEP_ORDER:
		opts->keep_order = true;
		break;
	case 'q':
		opts->quiet = true;
		break;
	case OPT_PROGRESS:
		opts->progress = true;
		break;
	case OPT_STATS_EVERY:
		rc = parse_double("--stats-every", arg, 0, 86400, &d, err);
		if (rc == 0)
			opts->stats_every_s = d;
		break;
	case OPT_METRICS:
		if (!*arg)
			return snprintf(err, 256, "--metrics: the file name is empty"), -1;
		opts->metrics_path = replace(opts->metrics_path, arg);
		break;
	case OPT_GRACE:
		rc = parse_double("--grace", arg, 0, 86400, &d, err);
		if (rc == 0)
			opts->grace_s = d;
		break;
	case OPT_RETRIES:
		rc = parse_long("--retries", arg, 0, 100, &l, err);
		if (rc == 0)
			opts->retry.retries = (int)l;
		break;
	case OPT_RETRY_BASE:
		rc = parse_long("--retry-base", arg, 1, 3600000, &l, err);
		if (rc == 0)
			opts->retry.base_ms = l;
		break;
	case OPT_RETRY_MAX:
		rc = parse_long("--retry-max", arg, 1, 86400000, &l, err);
		if (rc == 0)
			opts->retry.max_ms = l;
		break;
	case OPT_RETRY_MAX_WAIT:
		rc = parse_secs_ms("--retry-max-wait", arg, 0, 86400, &opts->retry.max_wait_ms,
		                   err);
		break;
	case OPT_RETRY_BUDGET:
		rc = parse_double("--retry-budget", arg, 0, 1000, &d, err);
		if (rc == 0)
			opts->retry.budget_pct = d;
		break;
	case OPT_SEED:
		rc = parse_long("--seed", arg, 0, 0x7fffffffffffffffL, &l, err);
		if (rc == 0)
			opts->retry.seed = (uint64_t)l;
		break;
	case OPT_ROBOTS:
		opts->robots = true;
		break;
	case OPT_ROBOTS_AGENT:
		/* A product token: RFC 9309 section 2.2.1. */
		if (!*arg ||
		    strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-") !=
		            strlen(arg))
			return snprintf(err, 256,
			                "--robots-agent: '%.100s' is not a product token "
			                "([A-Za-z_-]+)",
			                arg),
			       -1;
		opts->robots_agent = replace(opts->robots_agent, arg);
		break;
	case OPT_MAX_CRAWL_DELAY:
		rc = parse_secs_ms("--max-crawl-delay", arg, 0, 86400, &opts->max_crawl_delay_ms,
		                   err);
		break;
	case OPT_ROBOTS_CACHE:
		if (!*arg)
			return snprintf(err, 256, "--robots-cache: the file name is empty"), -1;
		opts->robots_cache_path = replace(opts->robots_cache_path, arg);
		break;
	case OPT_HEADERS:
		opts->response_headers = true;
		break;
	default:
		return 0;
	}
	return rc < 0 ? -1 : 1;
}

int sc_fetch_options_check(const struct sc_fetch_options *opts, char err[256])
{
	if (opts->retry.max_ms < opts->retry.base_ms)
		return snprintf(err, 256, "--retry-max (%ld) is less than --retry-base (%ld)",
		                opts->retry.max_ms, opts->retry.base_ms),
		       -1;
	if (!opts->robots && (opts->robots_agent || opts->robots_cache_path))
		return snprintf(err, 256, "--%s needs --robots",
		                opts->robots_agent ? "robots-agent" : "robots-cache"),
		       -1;
	return 0;
}

int sc_fetch_options_parse(struct sc_fetch_options *opts, int argc, char **argv, char err[256])
{
	static const struct option common[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
	};
	size_t nf = 0;
	int opt, rc = 0;

	while (sc_fetch_long_options[nf].name)
		nf++;
	struct option *longs = sc_calloc(nf + 3, sizeof(*longs));
	memcpy(longs, sc_fetch_long_options, nf * sizeof(*longs));
	memcpy(longs + nf, common, sizeof(common));
	if (!opts->user_agent)
		opts->user_agent = sc_strdup("sc-fetch/" SC_VERSION);

	/* getopt prints nothing (the leading ':' and opterr): its complaints
	 * are returned like every other usage error, in glibc's words. */
	opterr = 0;
	while (rc == 0 &&
	       (opt = getopt_long(argc, argv, ":" SC_FETCH_SHORTOPTS "hV", longs, NULL)) != -1) {
		const char *given = argv[optind - 1];
		bool is_long = strncmp(given, "--", 2) == 0;
		if (opt == 'h') {
			rc = SC_FETCH_PARSE_HELP;
		} else if (opt == 'V') {
			rc = SC_FETCH_PARSE_VERSION;
		} else if (opt == ':') {
			if (!is_long)
				snprintf(err, 256, "option requires an argument -- '%c'", optopt);
			else
				snprintf(err, 256, "option '%.200s' requires an argument", given);
			rc = SC_FETCH_PARSE_ERROR;
		} else if (opt == '?') {
			if (!is_long)
				snprintf(err, 256, "invalid option -- '%c'", optopt);
			else
				snprintf(err, 256, "unrecognized option '%.200s'", given);
			rc = SC_FETCH_PARSE_ERROR;
		} else if (sc_fetch_option(opts, opt, optarg, err) != 1) {
			rc = SC_FETCH_PARSE_ERROR;
		}
	}
	free(longs);
	if (rc == 0 && sc_fetch_options_check(opts, err) != 0)
		rc = SC_FETCH_PARSE_ERROR;
	return rc < 0 ? rc : optind;
}
