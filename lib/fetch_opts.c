/* fetch_opts: the command-line options sc-fetch and sc-retry share. */
#include "fetch.h"

#include <curl/curl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util.h"

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

/* Seconds (fractions allowed) as milliseconds. */
static long parse_secs_ms(const char *option, const char *arg, double min, double max)
{
	return (long)llround(sc_parse_double(option, arg, min, max) * 1000.0);
}

static void add_header(struct sc_fetch_options *opts, const char *arg)
{
	const char *colon = strchr(arg, ':');
	const char *semi = strchr(arg, ';');

	/* "Name: value", or curl's "Name;" for a header with an empty value. */
	if (!colon && semi && semi[1] == '\0')
		colon = semi;
	if (!colon || colon == arg || strcspn(arg, " \t") < (size_t)(colon - arg))
		sc_usage_error("--header: '%s' is not 'Name: value'", arg);
	if (strpbrk(arg, "\r\n"))
		sc_usage_error("--header: a header may not contain a line break");
	struct curl_slist *l = curl_slist_append(opts->headers, arg);
	if (!l)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	opts->headers = l;
}

static char *replace(char *old, const char *arg)
{
	free(old);
	return sc_strdup(arg);
}

bool sc_fetch_option(struct sc_fetch_options *opts, int opt, const char *arg)
{
	switch (opt) {
	case 'c':
		opts->concurrency = sc_parse_long("--concurrency", arg, 1, 100000);
		break;
	case OPT_PER_HOST:
		opts->per_host = sc_parse_long("--per-host", arg, 0, 100000);
		break;
	case OPT_RATE:
		opts->rate = sc_parse_double("--rate", arg, 0, 1e6);
		break;
	case OPT_HOST_RATE:
		opts->host_rate = sc_parse_double("--host-rate", arg, 0, 1e6);
		break;
	case OPT_DELAY:
		opts->delay_ms = sc_parse_long("--delay", arg, 0, 86400000);
		break;
	case OPT_MAX_REDIRS:
		opts->max_redirs = sc_parse_long("--max-redirs", arg, 0, 1000);
		break;
	case OPT_CONNECT_TIMEOUT:
		opts->connect_timeout_ms = parse_secs_ms("--connect-timeout", arg, 0.001, 86400);
		break;
	case 'm':
		opts->timeout_ms = parse_secs_ms("--timeout", arg, 0, 86400);
		break;
	case OPT_LOW_SPEED_LIMIT:
		opts->low_speed_limit = sc_parse_long("--low-speed-limit", arg, 1, 1L << 30);
		break;
	case OPT_LOW_SPEED_TIME:
		opts->low_speed_time = sc_parse_long("--low-speed-time", arg, 0, 86400);
		break;
	case OPT_MAX_BYTES:
		opts->max_bytes = sc_parse_long("--max-bytes", arg, 1, 1L << 40);
		break;
	case 'A':
		opts->user_agent = replace(opts->user_agent, arg);
		break;
	case 'H':
		add_header(opts, arg);
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
		opts->stats_every_s = sc_parse_double("--stats-every", arg, 0, 86400);
		break;
	case OPT_METRICS:
		if (!*arg)
			sc_usage_error("--metrics: the file name is empty");
		opts->metrics_path = replace(opts->metrics_path, arg);
		break;
	case OPT_GRACE:
		opts->grace_s = sc_parse_double("--grace", arg, 0, 86400);
		break;
	case OPT_RETRIES:
		opts->retry.retries = (int)sc_parse_long("--retries", arg, 0, 100);
		break;
	case OPT_RETRY_BASE:
		opts->retry.base_ms = sc_parse_long("--retry-base", arg, 1, 3600000);
		break;
	case OPT_RETRY_MAX:
		opts->retry.max_ms = sc_parse_long("--retry-max", arg, 1, 86400000);
		break;
	case OPT_RETRY_MAX_WAIT:
		opts->retry.max_wait_ms = parse_secs_ms("--retry-max-wait", arg, 0, 86400);
		break;
	case OPT_RETRY_BUDGET:
		opts->retry.budget_pct = sc_parse_double("--retry-budget", arg, 0, 1000);
		break;
	case OPT_SEED:
		opts->retry.seed = (uint64_t)sc_parse_long("--seed", arg, 0, 0x7fffffffffffffffL);
		break;
	case OPT_ROBOTS:
		opts->robots = true;
		break;
	case OPT_ROBOTS_AGENT:
		/* A product token: RFC 9309 section 2.2.1. */
		if (!*arg ||
		    strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-") !=
		            strlen(arg))
			sc_usage_error("--robots-agent: '%s' is not a product token ([A-Za-z_-]+)",
			               arg);
		opts->robots_agent = replace(opts->robots_agent, arg);
		break;
	case OPT_MAX_CRAWL_DELAY:
		opts->max_crawl_delay_ms = parse_secs_ms("--max-crawl-delay", arg, 0, 86400);
		break;
	case OPT_ROBOTS_CACHE:
		if (!*arg)
			sc_usage_error("--robots-cache: the file name is empty");
		opts->robots_cache_path = replace(opts->robots_cache_path, arg);
		break;
	case OPT_HEADERS:
		opts->response_headers = true;
		break;
	default:
		return false;
	}
	return true;
}

void sc_fetch_options_check(const struct sc_fetch_options *opts)
{
	if (opts->retry.max_ms < opts->retry.base_ms)
		sc_usage_error("--retry-max (%ld) is less than --retry-base (%ld)",
		               opts->retry.max_ms, opts->retry.base_ms);
	if (!opts->robots && (opts->robots_agent || opts->robots_cache_path))
		sc_usage_error("--%s needs --robots",
		               opts->robots_agent ? "robots-agent" : "robots-cache");
}

static size_t count_options(const struct option *l)
{
	size_t n = 0;

	while (l && l[n].name)
		n++;
	return n;
}

int sc_fetch_options_parse(struct sc_fetch_options *opts, int argc, char **argv,
                           const struct sc_fetch_cli *cli)
{
	static const struct option common[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
	};
	size_t nf = count_options(sc_fetch_long_options);
	size_t nx = count_options(cli->extra_long);
	struct option *longs = sc_calloc(nf + nx + 3, sizeof(*longs));
	char shorts[128];
	int opt;

	memcpy(longs, sc_fetch_long_options, nf * sizeof(*longs));
	if (nx)
		memcpy(longs + nf, cli->extra_long, nx * sizeof(*longs));
	memcpy(longs + nf + nx, common, sizeof(common));
	snprintf(shorts, sizeof(shorts), "%shV%s", SC_FETCH_SHORTOPTS,
	         cli->extra_short ? cli->extra_short : "");
	if (!opts->user_agent)
		opts->user_agent = sc_strdup("sc-fetch/" SC_VERSION);

	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (opt == 'h')
			sc_print_help(cli->help);
		if (opt == 'V')
			sc_print_version();
		if (opt == '?' || opt == ':')
			sc_usage_hint();
		if (sc_fetch_option(opts, opt, optarg))
			continue;
		if (cli->extra && cli->extra(cli->ctx, opt, optarg))
			continue;
		sc_usage_hint();
	}
	free(longs);
	sc_fetch_options_check(opts);
	return optind;
}
