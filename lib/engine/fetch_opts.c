/* fetch_opts: the command-line options sc-fetch and sc-retry share: their
 * defaults, their table (lib/kit/opt.h) and the checks of their combinations. */
#include "engine/fetch.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/protocol.h"
#include "core/sqlite_shared.h"
#include "core/util.h"
#include "core/version.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "web/url.h"

void fetch_options_init(struct fetch_options *opts)
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
	opts->adaptive = true;
	opts->warc_level = 1;
	opts->user_agent = sc_strdup("sc-fetch/" SC_VERSION);
	sc_retry_policy_defaults(&opts->retry);
}

void fetch_options_free(struct fetch_options *opts)
{
	free(opts->user_agent);
	free(opts->contact);
	opts->contact = NULL;
	curl_slist_free_all(opts->warc_info);
	opts->warc_info = NULL;
	free(opts->metrics_path);
	free(opts->robots_agent);
	free(opts->robots_cache_path);
	free(opts->origin_state_path);
	free(opts->cookies_path);
	free(opts->login_url);
	opts->login_url = NULL;
	free(opts->proxy);
	free(opts->proxy_list);
	opts->cookies_path = opts->proxy = opts->proxy_list = NULL;
	free(opts->warc_path);
	free(opts->warc_dedupe_path);
	free(opts->command_line);
	opts->warc_path = opts->warc_dedupe_path = opts->command_line = NULL;
	curl_slist_free_all(opts->headers);
	opts->user_agent = opts->metrics_path = NULL;
	opts->robots_agent = opts->robots_cache_path = opts->origin_state_path = NULL;
	opts->headers = NULL;
}

void fetch_options_set_command(struct fetch_options *opts, int argc, char **argv)
{
	struct sc_buf b;

	sc_buf_init(&b, (size_t)-1 / 2);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (i > 0)
			sc_buf_addc(&b, ' ');
		/* A word a shell would split is shown quoted; a line break
		 * never (the warcinfo record has one field a line). */
		bool plain = *a && strcspn(a, " \t'\"\\$`*?[]{}()<>|;&#~") == strlen(a);
		if (!plain)
			sc_buf_addc(&b, '\'');
		for (; *a; a++) {
			if (*a == '\r' || *a == '\n')
				sc_buf_addc(&b, ' ');
			else if (*a == '\'')
				sc_buf_adds(&b, "'\\''");
			else
				sc_buf_addc(&b, *a);
		}
		if (!plain)
			sc_buf_addc(&b, '\'');
	}
	free(opts->command_line);
	opts->command_line = sc_buf_take(&b, NULL);
}

/* -H: "Name: value", or curl's "Name;" for a header with an empty value;
 * a name and a value as a record's request.headers may send them (a CR,
 * LF or NUL never comes here: the option table refuses it first). */
static int add_header(void *base, const struct sc_opt *row, const char *arg, char *err,
                      size_t errlen)
{
	struct fetch_options *opts = base;
	const char *colon = strchr(arg, ':');
	const char *semi = strchr(arg, ';');

	(void)row;
	if (!colon && semi && semi[1] == '\0')
		colon = semi;
	if (!colon || !sc_protocol_header_name_ok(arg, (size_t)(colon - arg)))
		return snprintf(err, errlen, "--header: '%.200s' is not 'Name: value'", arg), -1;
	if (!sc_protocol_header_value_ok(colon + 1, strlen(colon + 1)))
		return snprintf(err, errlen,
		                "--header: a value may hold no control character but a tab"),
		       -1;
	struct curl_slist *l = curl_slist_append(opts->headers, arg);
	if (!l)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	opts->headers = l;
	return 0;
}

/* -A: the agent as given, which --contact then leaves alone. */
static int set_user_agent(void *base, const struct sc_opt *row, const char *arg, char *err,
                          size_t errlen)
{
	struct fetch_options *opts = base;

	(void)row;
	if (errlen > 0)
		err[0] = '\0';
	free(opts->user_agent);
	opts->user_agent = sc_strdup(arg);
	opts->user_agent_given = true;
	return 0;
}

/* --contact: an http(s) URL or a mailto: address where a site's operator
 * reaches whoever runs the crawl, named in the default User-Agent as a
 * comment, "sc-fetch/VERSION (+CONTACT)", as Heritrix requires of its
 * operators.  Visible ASCII without parentheses: it goes in a comment. */
int fetch_contact_check(const char *contact, char *err, size_t errlen)
{
	bool scheme = strncmp(contact, "http://", 7) == 0 || strncmp(contact, "https://", 8) == 0 ||
	              strncmp(contact, "mailto:", 7) == 0;
	const char *p = contact;
	while (*p > ' ' && *p < 0x7f && *p != '(' && *p != ')' && *p != '\\')
		p++;
	if (scheme && !*p && strlen(contact) >= 9)
		return 0;
	return snprintf(err, errlen,
	                "--contact: '%.200s' is not an http(s) URL or a mailto: address"
	                " (visible ASCII, no parentheses)",
	                contact),
	       -1;
}

static int set_contact(void *base, const struct sc_opt *row, const char *arg, char *err,
                       size_t errlen)
{
	struct fetch_options *opts = base;

	(void)row;
	if (fetch_contact_check(arg, err, errlen) < 0)
		return -1;
	free(opts->contact);
	opts->contact = sc_strdup(arg);
	if (!opts->user_agent_given) {
		/* The program's own agent (sc-fetch/VERSION, sc-retry/VERSION),
		 * without the contact an earlier --contact gave it. */
		const char *ua = opts->user_agent ? opts->user_agent : "sc-fetch/" SC_VERSION;
		const char *cut = strstr(ua, " (+");
		struct sc_buf b;
		sc_buf_init(&b, (size_t)-1 / 2);
		sc_buf_printf(&b, "%.*s (+%s)", (int)(cut ? (size_t)(cut - ua) : strlen(ua)), ua,
		              arg);
		free(opts->user_agent);
		opts->user_agent = sc_buf_take(&b, NULL);
	}
	return 0;
}

/* --warc-info KEY=VALUE: one more field of the warcinfo record (operator,
 * isPartOf, description, ...), KEY a field name (RFC 9110 token). */
static int add_warc_info(void *base, const struct sc_opt *row, const char *arg, char *err,
                         size_t errlen)
{
	struct fetch_options *opts = base;
	const char *eq = strchr(arg, '=');

	(void)row;
	if (!eq || eq == arg || !sc_protocol_header_name_ok(arg, (size_t)(eq - arg)))
		return snprintf(err, errlen, "--warc-info: '%.200s' is not KEY=VALUE", arg), -1;
	if (!sc_protocol_value_ok(eq + 1, strlen(eq + 1)))
		return snprintf(err, errlen, "--warc-info: a value may hold no line break"), -1;
	struct sc_buf b;
	sc_buf_init(&b, (size_t)-1 / 2);
	sc_buf_printf(&b, "%.*s: %s", (int)(eq - arg), arg, eq + 1);
	struct curl_slist *l = curl_slist_append(opts->warc_info, b.p);
	sc_buf_free(&b);
	if (!l)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	opts->warc_info = l;
	return 0;
}

/* --robots-agent: a product token (RFC 9309 section 2.2.1). */
static int set_robots_agent(void *base, const struct sc_opt *row, const char *arg, char *err,
                            size_t errlen)
{
	struct fetch_options *opts = base;

	(void)row;
	if (!*arg ||
	    strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-") != strlen(arg))
		return snprintf(err, errlen,
		                "--robots-agent: '%.100s' is not a product token ([A-Za-z_-]+)",
		                arg),
		       -1;
	free(opts->robots_agent);
	opts->robots_agent = sc_strdup(arg);
	return 0;
}

/* --adaptive (tag 1) and --no-adaptive (tag 0): the last one given wins.
 * It cannot fail; err is the call's signature (sc_opt_call_fn). */
static int set_adaptive(void *base, const struct sc_opt *row, const char *arg, char *err,
                        size_t errlen)
{
	struct fetch_options *opts = base;

	(void)arg;
	if (errlen > 0)
		err[0] = '\0';
	opts->adaptive = row->tag == 1;
	return 0;
}

#define AT(member) SC_OPT_AT(struct fetch_options, member)

/* In the order of the usage line. */
const struct sc_opt fetch_option_rows[] = {
	SC_OPT_ROW_FLAG("insecure", 'k', AT(insecure)),
	SC_OPT_ROW_FLAG("quiet", 'q', AT(quiet)),
	SC_OPT_ROW_WHOLE("concurrency", 'c', "N", AT(concurrency), 1, 100000),
	SC_OPT_ROW_SECONDS("timeout", 'm', "secs", AT(timeout_ms), 0, 86400),
	SC_OPT_ROW_CALL("user-agent", 'A', "agent", set_user_agent, 0),
	SC_OPT_ROW_CALL("contact", 0, "url", set_contact, 0),
	SC_OPT_ROW_CALLS("header", 'H', "'name: value'", add_header, 0),
	SC_OPT_ROW_WHOLE("per-host", 0, "N", AT(per_host), 0, 100000),
	SC_OPT_ROW_NUMBER("rate", 0, "R", AT(rate), 0, 1e6),
	SC_OPT_ROW_NUMBER("host-rate", 0, "R", AT(host_rate), 0, 1e6),
	SC_OPT_ROW_WHOLE("delay", 0, "ms", AT(delay_ms), 0, 86400000),
	SC_OPT_ROW_WHOLE("max-redirs", 0, "N", AT(max_redirs), 0, 1000),
	SC_OPT_ROW_SECONDS("connect-timeout", 0, "secs", AT(connect_timeout_ms), 0.001, 86400),
	SC_OPT_ROW_WHOLE("low-speed-limit", 0, "bytes", AT(low_speed_limit), 1, 1L << 30),
	SC_OPT_ROW_WHOLE("low-speed-time", 0, "secs", AT(low_speed_time), 0, 86400),
	SC_OPT_ROW_WHOLE("max-bytes", 0, "N", AT(max_bytes), 1, 1L << 40),
	SC_OPT_ROW_FLAG("keep-order", 0, AT(keep_order)),
	SC_OPT_ROW_WHOLE("retries", 0, "N", AT(retry.retries), 0, 100),
	SC_OPT_ROW_WHOLE("retry-base", 0, "ms", AT(retry.base_ms), 1, 3600000),
	SC_OPT_ROW_WHOLE("retry-max", 0, "ms", AT(retry.max_ms), 1, 86400000),
	SC_OPT_ROW_SECONDS("retry-max-wait", 0, "secs", AT(retry.max_wait_ms), 0, 86400),
	SC_OPT_ROW_NUMBER("retry-budget", 0, "pct", AT(retry.budget_pct), 0, 1000),
	SC_OPT_ROW_WHOLE("seed", 0, "N", AT(retry.seed), 0, 0x7fffffffffffffffL),
	SC_OPT_ROW_COPY("metrics", 0, "file", AT(metrics_path)),
	SC_OPT_ROW_NUMBER("stats-every", 0, "secs", AT(stats_every_s), 0, 86400),
	SC_OPT_ROW_FLAG("progress", 0, AT(progress)),
	SC_OPT_ROW_NUMBER("grace", 0, "secs", AT(grace_s), 0, 86400),
	SC_OPT_ROW_FLAG("robots", 0, AT(robots)),
	SC_OPT_ROW_CALL("robots-agent", 0, "token", set_robots_agent, 0),
	SC_OPT_ROW_SECONDS("max-crawl-delay", 0, "secs", AT(max_crawl_delay_ms), 0, 86400),
	SC_OPT_ROW_COPY("robots-cache", 0, "file", AT(robots_cache_path)),
	SC_OPT_ROW_FLAG("headers", 0, AT(response_headers)),
	{ .name = "adaptive",
	  .kind = SC_OPT_CALL,
	  .call = set_adaptive,
	  .tag = 1,
	  .or_next = true },
	SC_OPT_ROW_CALL("no-adaptive", 0, NULL, set_adaptive, 0),
	SC_OPT_ROW_COPY("origin-state", 0, "file", AT(origin_state_path)),
	SC_OPT_ROW_WHOLE("defer-after", 0, "ms", AT(defer_after_ms), 0, 86400000),
	{ .name = "cookies",
	  .kind = SC_OPT_COPY,
	  .arg = "file",
	  AT(cookies_path),
	  .or_next = true },
	SC_OPT_ROW_FLAG("no-cookies", 0, AT(no_cookies)),
	SC_OPT_ROW_COPY("login-url", 0, "prefix", AT(login_url)),
	SC_OPT_ROW_COPY("proxy", 0, "url", AT(proxy)),
	SC_OPT_ROW_COPY("proxy-list", 0, "file", AT(proxy_list)),
	SC_OPT_ROW_FLAG("proxy-sticky", 0, AT(proxy_sticky)),
	SC_OPT_ROW_COPY("warc", 0, "file", AT(warc_path)),
	SC_OPT_ROW_WHOLE("warc-max-size", 0, "N", AT(warc_max_size), 1, 1LL << 50),
	SC_OPT_ROW_WHOLE("warc-level", 0, "N", AT(warc_level), 0, 9),
	SC_OPT_ROW_FLAG("warc-cdx", 0, AT(warc_cdx)),
	SC_OPT_ROW_COPY("warc-dedupe", 0, "file", AT(warc_dedupe_path)),
	SC_OPT_ROW_CALLS("warc-info", 0, "key=value", add_warc_info, 0),
	{ 0 },
};

int fetch_options_check(const struct fetch_options *opts, char *err, size_t errlen)
{
	if (opts->metrics_path && !*opts->metrics_path)
		return snprintf(err, errlen, "--metrics: the file name is empty"), -1;
	if (opts->robots_cache_path && !*opts->robots_cache_path)
		return snprintf(err, errlen, "--robots-cache: the file name is empty"), -1;
	if (opts->origin_state_path && !*opts->origin_state_path)
		return snprintf(err, errlen, "--origin-state: the file name is empty"), -1;
	if (opts->warc_path && !*opts->warc_path)
		return snprintf(err, errlen, "--warc: the file name is empty"), -1;
	if (opts->warc_dedupe_path && !*opts->warc_dedupe_path)
		return snprintf(err, errlen, "--warc-dedupe: the file name is empty"), -1;
	if (opts->cookies_path && !*opts->cookies_path)
		return snprintf(err, errlen, "--cookies: the file name is empty"), -1;
	if (opts->cookies_path && opts->no_cookies)
		return snprintf(err, errlen, "--cookies and --no-cookies exclude each other"), -1;
	if (opts->login_url && !*opts->login_url)
		return snprintf(err, errlen, "--login-url: the URL is empty"), -1;
	if (opts->login_url && opts->no_cookies)
		return snprintf(err, errlen, "--login-url needs cookies (not --no-cookies)"), -1;
	if (opts->proxy && sc_url_proxy_problem(opts->proxy))
		return snprintf(err, errlen, "--proxy: %s", sc_url_proxy_problem(opts->proxy)), -1;
	if (opts->proxy && opts->proxy_list)
		return snprintf(err, errlen, "--proxy and --proxy-list exclude each other"), -1;
	if (opts->proxy_sticky && !opts->proxy_list)
		return snprintf(err, errlen, "--proxy-sticky needs --proxy-list"), -1;
	const struct {
		const char *name, *path;
	} databases[] = { { "robots-cache", opts->robots_cache_path },
		          { "origin-state", opts->origin_state_path },
		          { "warc-dedupe", opts->warc_dedupe_path } };
	for (size_t i = 0; i < sizeof(databases) / sizeof(databases[0]); i++) {
		char why[256];
		if (databases[i].path &&
		    sc_sqlite_name_problem(databases[i].path, why, sizeof(why)))
			return snprintf(err, errlen, "--%s: %.200s", databases[i].name, why), -1;
	}
	if (!opts->warc_path &&
	    (opts->warc_max_size || opts->warc_cdx || opts->warc_dedupe_path || opts->warc_info))
		return snprintf(err, errlen, "--%s needs --warc",
		                opts->warc_cdx           ? "warc-cdx"
		                : opts->warc_dedupe_path ? "warc-dedupe"
		                : opts->warc_info        ? "warc-info"
		                                         : "warc-max-size"),
		       -1;
	if (opts->retry.max_ms < opts->retry.base_ms)
		return snprintf(err, errlen, "--retry-max (%ld) is less than --retry-base (%ld)",
		                opts->retry.max_ms, opts->retry.base_ms),
		       -1;
	if (!opts->robots && (opts->robots_agent || opts->robots_cache_path))
		return snprintf(err, errlen, "--%s needs --robots",
		                opts->robots_agent ? "robots-agent" : "robots-cache"),
		       -1;
	return 0;
}
