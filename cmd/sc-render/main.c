/* sc-render: render pages that JavaScript builds in a headless Chromium
 * driven over the DevTools pipe, one record per input record.  See
 * sc-render(1). */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/protocol.h"
#include "core/signals.h"
#include "core/util.h"
#include "engine/fetch.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/record.h"
#include "render.h"

static int stop_pipe[2] = { -1, -1 };
static struct browser *the_browser; /* for the exit: no orphan */

static void on_stop(void)
{
	ssize_t w = write(stop_pipe[1], "x", 1);
	(void)w;
}

static void kill_browser_at_exit(void)
{
	if (the_browser)
		browser_stop(the_browser);
}

static int add_arg(void *base, const struct sc_opt *row, const char *arg, char *err, size_t errlen)
{
	struct render_opts *o = base;
	(void)row;
	if (o->nargs >= (int)(sizeof(o->args) / sizeof(o->args[0])) - 8)
		return snprintf(err, errlen, "--browser-arg: too many (at most 24)"), -1;
	o->args[o->nargs++] = arg;
	return 0;
}

static int set_viewport(void *base, const struct sc_opt *row, const char *arg, char *err,
                        size_t errlen)
{
	struct render_opts *o = base;
	char *end;
	long w = strtol(arg, &end, 10), h = 0;
	(void)row;
	if (end != arg && *end == 'x' && end[1] >= '0' && end[1] <= '9')
		h = strtol(end + 1, &end, 10);
	if (*end || w < 1 || w > 16384 || h < 1 || h > 16384)
		return snprintf(err, errlen, "--viewport: '%s' is not WxH (each 1 to 16384)", arg),
		       -1;
	o->width = (int)w;
	o->height = (int)h;
	return 0;
}

static int add_block(void *base, const struct sc_opt *row, const char *arg, char *err,
                     size_t errlen)
{
	(void)row;
	return block_parse(base, arg, err, errlen);
}

static int add_from(void *base, const struct sc_opt *row, const char *arg, char *err, size_t errlen)
{
	struct render_opts *o = base;
	(void)row;
	if (o->nfrom >= (int)(sizeof(o->from_warc) / sizeof(o->from_warc[0])))
		return snprintf(err, errlen, "--from-warc: too many archives (at most 64)"), -1;
	o->from_warc[o->nfrom++] = arg;
	return 0;
}

/* -H 'Name: value' (or 'Name;' for an empty value), as sc-fetch's. */
static int add_header(void *base, const struct sc_opt *row, const char *arg, char *err,
                      size_t errlen)
{
	struct render_opts *o = base;
	const char *colon = strchr(arg, ':');
	const char *semi = strchr(arg, ';');

	(void)row;
	if (!colon && semi && semi[1] == '\0')
		colon = semi;
	if (!colon || !sc_protocol_header_name_ok(arg, (size_t)(colon - arg)))
		return snprintf(err, errlen, "--header: '%.200s' is not 'Name: value'", arg), -1;
	const char *value = colon + 1;
	value += strspn(value, " \t");
	if (!sc_protocol_header_value_ok(value, strlen(value)))
		return snprintf(err, errlen,
		                "--header: a value may hold no control character but a tab"),
		       -1;
	if (!o->headers)
		o->headers = json_object();
	char *name = sc_strndup(arg, (size_t)(colon - arg));
	json_object_set_new(o->headers, name, json_string(value));
	free(name);
	return 0;
}

static int set_agent(void *base, const struct sc_opt *row, const char *arg, char *err,
                     size_t errlen)
{
	struct render_opts *o = base;
	(void)row;
	if (!*arg || !sc_protocol_header_value_ok(arg, strlen(arg)))
		return snprintf(err, errlen,
		                "--user-agent: empty, or holds a control character but a tab"),
		       -1;
	o->user_agent = arg;
	return 0;
}

/* --contact: sc-fetch's check; the browser's agent is made with it when
 * the browser starts (start_browser). */
static int set_contact(void *base, const struct sc_opt *row, const char *arg, char *err,
                       size_t errlen)
{
	struct render_opts *o = base;
	(void)row;
	if (fetch_contact_check(arg, err, errlen) < 0)
		return -1;
	o->contact = arg;
	return 0;
}

#define AT(m) SC_OPT_AT(struct render_opts, m)
static const struct sc_opt rows[] = {
	SC_OPT_ROW_WHOLE("concurrency", 'c', "N", AT(concurrency), 1, 64),
	SC_OPT_ROW_SECONDS("timeout", 'm', "secs", AT(timeout_ms), 0.1, 3600),
	SC_OPT_ROW_STRING("wait", 0, "COND", AT(wait)),
	SC_OPT_ROW_SECONDS("command-timeout", 0, "secs", AT(command_ms), 0.1, 600),
	SC_OPT_ROW_WHOLE("tab-pages", 0, "K", AT(tab_pages), 1, 1000000),
	SC_OPT_ROW_WHOLE("browser-pages", 0, "M", AT(browser_pages), 1, 100000000),
	SC_OPT_ROW_WHOLE("browser-rss", 0, "MB", AT(browser_rss_mb), 0, 1000000),
	SC_OPT_ROW_STRING("browser", 0, "PATH", AT(browser)),
	SC_OPT_ROW_CALLS("browser-arg", 0, "ARG", add_arg, 0),
	SC_OPT_ROW_FLAG("no-sandbox", 0, AT(no_sandbox)),
	SC_OPT_ROW_WHOLE("scroll", 0, "N", AT(scroll), 0, 1000),
	SC_OPT_ROW_CALL("viewport", 0, "WxH", set_viewport, 0),
	SC_OPT_ROW_STRING("screenshot", 0, "DIR", AT(screenshot)),
	SC_OPT_ROW_STRING("js", 0, "FILE", AT(js)),
	SC_OPT_ROW_CALLS("block", 0, "LIST", add_block, 0),
	SC_OPT_ROW_FLAG("robots", 0, AT(robots)),
	SC_OPT_ROW_STRING("robots-cache", 0, "FILE", AT(robots_cache)),
	SC_OPT_ROW_WHOLE("delay", 0, "ms", AT(delay_ms), 0, 3600000),
	SC_OPT_ROW_FLAG("only-if-needed", 0, AT(only_needed)),
	SC_OPT_ROW_STRING("needed-if", 0, "SELECTOR", AT(needed_if)),
	SC_OPT_ROW_STRING("warc", 0, "FILE", AT(warc)),
	SC_OPT_ROW_FLAG("warc-cdx", 0, AT(warc_cdx)),
	SC_OPT_ROW_CALLS("from-warc", 0, "FILE", add_from, 0),
	SC_OPT_ROW_WHOLE("per-host", 0, "N", AT(per_host), 0, 100000),
	SC_OPT_ROW_STRING("origin-state", 0, "FILE", AT(origin_state)),
	SC_OPT_ROW_CALL("user-agent", 'A', "AGENT", set_agent, 0),
	SC_OPT_ROW_CALL("contact", 0, "url", set_contact, 0),
	SC_OPT_ROW_CALLS("header", 'H', "'NAME: VALUE'", add_header, 0),
	SC_OPT_ROW_STRING("cookies", 0, "FILE", AT(cookies)),
	SC_OPT_ROW_FLAG("keep-order", 0, AT(keep_order)),
	SC_OPT_ROW_HELP(NULL),
	SC_OPT_ROW_VERSION(NULL),
	{ 0 },
};

int wait_parse(const char *text, struct wait_spec *w, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	if (strcmp(text, "load") == 0)
		w->kind = WAIT_LOAD;
	else if (strcmp(text, "domcontentloaded") == 0)
		w->kind = WAIT_DCL;
	else if (strcmp(text, "networkidle") == 0)
		w->kind = WAIT_IDLE;
	else if (strncmp(text, "selector:", 9) == 0 && text[9])
		w->kind = WAIT_SELECTOR, w->arg = text + 9;
	else if (strncmp(text, "js:", 3) == 0 && text[3])
		w->kind = WAIT_JS, w->arg = text + 3;
	else if (strncmp(text, "stable:", 7) == 0) {
		char *end;
		long ms = strtol(text + 7, &end, 10);
		if (end == text + 7 || *end || ms < 1 || ms > 600000)
			return snprintf(err, errlen,
			                "--wait: '%s': stable:MS needs MS in 1..600000", text),
			       -1;
		w->kind = WAIT_STABLE, w->stable_ms = (int)ms;
	} else
		return snprintf(err, errlen,
		                "--wait: '%s' is not load, domcontentloaded, networkidle, "
		                "selector:CSS, js:EXPR or stable:MS",
		                text),
		       -1;
	return 0;
}

static const char *find_browser(void)
{
	static const char *const candidates[] = {
		"/usr/lib/chromium/chromium-headless-shell",
		"/usr/lib/chromium/chromium",
	};
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return candidates[0];
}

#define SCRIPT_MAX ((size_t)1 << 20) /* --js's file, at most */

/* --js's file, as the body of an async function: its return value,
 * awaited, is the result. */
static char *read_script(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = sc_malloc(SCRIPT_MAX + 1), *expr;

	if (!f)
		sc_die(SC_EXIT_FAILURE, "--js: %s:", path);
	size_t n = fread(text, 1, SCRIPT_MAX + 1, f);
	if (ferror(f))
		sc_die(SC_EXIT_FAILURE, "--js: error reading %s:", path);
	(void)fclose(f);
	if (n > SCRIPT_MAX)
		sc_die(SC_EXIT_FAILURE, "--js: %s: longer than %zu bytes", path, SCRIPT_MAX);
	if (memchr(text, '\0', n))
		sc_die(SC_EXIT_FAILURE, "--js: %s: holds a NUL byte", path);
	/* The newline: a file that ends in a // comment. */
	if (asprintf(&expr, "(async () => {\n%.*s\n})()", (int)n, text) < 0)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	free(text);
	return expr;
}

static void parse_options(struct render *r, int argc, char **argv)
{
	struct render_opts *o = &r->opts;
	const struct sc_opt_set sets[] = { { rows, o } };
	char err[300];
	static char env_args[4096];

	o->concurrency = 4;
	o->timeout_ms = 30000;
	o->command_ms = 10000;
	o->tab_pages = 50;
	o->browser_pages = 1000;
	o->browser_rss_mb = 2048;
	o->wait = "load";
	o->width = 1280;
	o->height = 800;
	int first = sc_opt_parse(sets, 1, argc, argv, err, sizeof(err));
	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(sc_opt_usage(sets, 1, "< urls", NULL));
	if (first == SC_OPT_PARSE_VERSION)
		sc_print_version_with("(jansson " JANSSON_VERSION ")");
	if (first == SC_OPT_PARSE_ERROR)
		sc_usage_error("%s", err);
	if (first < argc)
		sc_usage_error("unexpected argument '%s': URLs are read from standard input",
		               argv[first]);
	if (wait_parse(o->wait, &r->wait, err, sizeof(err)) < 0)
		sc_usage_error("%s", err);
	if (o->robots_cache && !o->robots)
		sc_usage_error("--robots-cache needs --robots");
	if (o->needed_if)
		o->only_needed = true;
	if (o->warc_cdx && !o->warc)
		sc_usage_error("--warc-cdx needs --warc");
	if (o->nfrom && (o->robots || o->delay_ms || o->per_host || o->origin_state))
		sc_usage_error("--from-warc asks nothing of the network: not with %s",
		               o->robots     ? "--robots"
		               : o->delay_ms ? "--delay"
		               : o->per_host ? "--per-host"
		                             : "--origin-state");
	if (needed_init(r, err, sizeof(err)) < 0)
		sc_usage_error("%s", err);
	struct stat st;
	if (o->screenshot && stat(o->screenshot, &st) == 0 && !S_ISDIR(st.st_mode))
		sc_die(SC_EXIT_FAILURE, "--screenshot: %s: %s", o->screenshot, strerror(ENOTDIR));
	if (o->screenshot && access(o->screenshot, W_OK | X_OK) < 0)
		sc_die(SC_EXIT_FAILURE, "--screenshot: %s:", o->screenshot);
	if (o->js)
		o->js_expr = read_script(o->js);
	if (!o->browser)
		o->browser = getenv("SC_RENDER_BROWSER");
	if (!o->browser || !*o->browser)
		o->browser = find_browser();
	/* SC_RENDER_BROWSER_ARGS: more arguments, one a line (the suite's
	 * --host-resolver-rules, which holds spaces). */
	const char *env = getenv("SC_RENDER_BROWSER_ARGS");
	if (env && strlen(env) < sizeof(env_args)) {
		memcpy(env_args, env, strlen(env) + 1);
		char *save = NULL;
		for (char *s = strtok_r(env_args, "\n", &save); s && o->nargs < 30;
		     s = strtok_r(NULL, "\n", &save))
			o->args[o->nargs++] = s;
	}
	if (geteuid() == 0)
		o->no_sandbox = true; /* Chromium's sandbox refuses to run as root */
}

struct sync_call {
	long id;
	json_t *reply;
};

static void on_sync(void *ctx, json_t *msg)
{
	struct sync_call *c = ctx;
	if (json_integer_value(json_object_get(msg, "id")) == c->id && !c->reply)
		c->reply = json_incref(msg);
}

/* Waits for the reply to id (at start-up only), for at most ms. */
static json_t *call_sync(struct browser *b, long id, int ms)
{
	double end = sc_now_ms() + ms;
	struct sync_call c = { id, NULL };

	while (!c.reply && sc_now_ms() < end) {
		struct pollfd p = { .fd = b->from, .events = POLLIN };
		if (poll(&p, 1, (int)(end - sc_now_ms()) + 1) < 0 && errno != EINTR)
			break;
		browser_drain_stderr(b);
		if (browser_read(b, on_sync, &c) < 0)
			break;
	}
	return c.reply;
}

/* --contact without -A: the agent is Chromium's own with the contact as
 * a comment, "... Safari/537.36 (+URL)", as sc-fetch names it in its own;
 * asked of the first browser, the same binary for the run. */
static int contact_agent(struct render *r, char *err, size_t errlen)
{
	json_t *reply = call_sync(&r->b, browser_send(&r->b, NULL, "Browser.getVersion", NULL),
	                          r->opts.command_ms);
	const char *ua =
	        json_string_value(json_object_get(json_object_get(reply, "result"), "userAgent"));

	if (!ua || !*ua) {
		json_decref(reply);
		browser_stop(&r->b);
		return snprintf(err, errlen, "%s: the browser did not say its User-Agent",
		                r->opts.browser),
		       -1;
	}
	if (asprintf(&r->agent, "%s (+%s)", ua, r->opts.contact) < 0)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	json_decref(reply);
	return 0;
}

static int start_browser(struct render *r, char *err, size_t errlen)
{
	if (browser_start(&r->b, &r->opts, err, errlen) < 0)
		return -1;
	long id = browser_send(&r->b, NULL, "Target.createBrowserContext",
	                       json_pack("{s:b}", "disposeOnDetach", 1));
	json_t *reply = call_sync(&r->b, id, r->opts.command_ms + 20000);
	const char *ctx = json_string_value(
	        json_object_get(json_object_get(reply, "result"), "browserContextId"));
	if (!ctx) {
		json_decref(reply);
		browser_stop(&r->b);
		return snprintf(err, errlen, "%s: the browser did not start", r->opts.browser), -1;
	}
	r->b.context = sc_strdup(ctx);
	json_decref(reply);
	cookies_browser_new(r);
	if (r->opts.contact && !r->opts.user_agent && !r->agent)
		return contact_agent(r, err, errlen);
	return 0;
}

static void on_message(void *ctx, json_t *msg)
{
	tab_on_message(ctx, msg);
}

static void enqueue(struct render *r, struct page *p)
{
	if (r->draining) {
		/* Read after the signal: its record now, in the input's place. */
		record_emit(r, p, NULL, NULL, NULL, "cancelled", "sc-render was interrupted");
		page_free(p);
		return;
	}
	p->next = NULL;
	if (r->queue_tail)
		r->queue_tail->next = p;
	else
		r->queue = p;
	r->queue_tail = p;
	r->queued++;
}

static void bad_line(struct render *r, const struct sc_lines *in, const struct sc_input_item *it)
{
	char warn[320];
	sc_input_warning(in, it, warn);
	sc_warn("%s", warn);
	out_json(r, r->inputs++, it->rec);
	r->failed++;
}

/* A URL the browser can be sent to: absolute, with a scheme. */
static bool is_url(const char *url, size_t len)
{
	CURLU *h = curl_url();
	char *copy = sc_strndup(url, len);
	bool ok = h && !memchr(url, ' ', len) && !memchr(url, '\t', len) &&
	          curl_url_set(h, CURLUPART_URL, copy, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK;

	curl_url_cleanup(h);
	free(copy);
	return ok;
}

static void bad_url(struct render *r, const struct sc_lines *in, const struct sc_line *line)
{
	struct sc_input_item it = { .line = line, .bad = true };

	it.rec = sc_record_bad_input(line->number, line->text, line->len, "not a URL");
	snprintf(it.why, sizeof(it.why), "not a URL");
	bad_line(r, in, &it);
	json_decref(it.rec);
}

/* One input line: a page queued, or its record written at once. */
static void take_line(struct render *r, const struct sc_lines *in, const struct sc_line *line)
{
	const char *url;
	size_t len;
	struct sc_input_item it;

	switch (sc_input_url_line(line, &url, &len)) {
	case SC_URL_LINE_SKIP:
		return;
	case SC_URL_LINE_URL:
		if (is_url(url, len))
			enqueue(r, page_from_item(NULL, url, len, line->number, r->inputs++));
		else
			bad_url(r, in, line);
		return;
	case SC_URL_LINE_NUL:
		it.rec = sc_record_bad_input(line->number, line->text, line->len,
		                             "the line holds a NUL byte");
		it.line = line;
		it.bad = true;
		snprintf(it.why, sizeof(it.why), "the line holds a NUL byte");
		bad_line(r, in, &it);
		json_decref(it.rec);
		return;
	case SC_URL_LINE_RECORD:
		break;
	}
	sc_input_item_make(line, sc_lines_max(in), NULL, &it);
	const char *u = json_string_value(json_object_get(it.rec, "url"));
	if (!it.bad && !u) {
		json_decref(it.rec);
		it.rec = sc_record_bad_input(line->number, line->text, line->len,
		                             "the record has no \"url\" string");
		it.bad = true;
		snprintf(it.why, sizeof(it.why), "the record has no \"url\" string");
	}
	const char *problem =
	        it.bad ? NULL : fetch_request_problem(json_object_get(it.rec, "request"));
	const json_t *session = it.bad ? NULL : json_object_get(it.rec, "session");
	if (!problem && session && (!json_is_string(session) || json_string_length(session) == 0))
		problem = "\"session\" is not a non-empty string"; /* sc-fetch's words */
	if (problem) {
		json_decref(it.rec);
		it.rec = sc_record_bad_input(line->number, line->text, line->len, problem);
		it.bad = true;
		snprintf(it.why, sizeof(it.why), "%s", problem);
	}
	if (it.bad) {
		bad_line(r, in, &it);
	} else if (!sc_record_failed(it.rec) && !is_url(u, strlen(u))) {
		bad_url(r, in, line);
	} else if (sc_record_failed(it.rec)) {
		/* A fetch that failed: nothing to render, it passes through. */
		out_raw(r, r->inputs++, line->text, line->len);
		r->failed++;
	} else if ((json_object_get(it.rec, "body") || json_object_get(it.rec, "body_base64")) &&
	           !needed(r, line->text, line->len)) {
		/* --only-if-needed: a fetched page whole without a browser. */
		out_raw(r, r->inputs++, line->text, line->len);
		r->passed++;
	} else {
		enqueue(r, page_from_item(it.rec, u, strlen(u), line->number, r->inputs++));
	}
	json_decref(it.rec);
}

/* The free tab for a page of jar j: one whose target is of j's context,
 * else one with no target, else one whose target must go; or NULL. */
static struct tab *free_tab(struct render *r, const struct jar *j)
{
	struct tab *best = NULL;
	int best_rank = 0;

	for (int i = 0; i < r->opts.concurrency; i++) {
		struct tab *t = &r->tabs[i];
		if (t->page || (t->state != TAB_FREE && t->state != TAB_IDLE))
			continue;
		int rank = t->state == TAB_FREE ? 2 : t->jar == j ? 3 : 1;
		if (rank > best_rank) {
			best = t;
			best_rank = rank;
		}
	}
	return best;
}

/* Hands queued pages to free tabs. */
static void assign(struct render *r)
{
	while (r->queue) {
		if (r->b.pages >= r->opts.browser_pages)
			return; /* the browser is recycled once its pages are done */
		struct page *p = r->queue;
		struct tab *t = free_tab(r, jar_of(r, p->session));
		if (!t)
			return;
		r->queue = p->next;
		if (!r->queue)
			r->queue_tail = NULL;
		r->queued--;
		tab_start_page(r, t, p);
	}
}

/* The queue's pages, each a record of error kind (a drain's cancelled
 * ones, or a browser that cannot start again). */
static void flush_queue(struct render *r, const char *kind, const char *why)
{
	while (r->queue) {
		struct page *p = r->queue;
		r->queue = p->next;
		record_emit(r, p, NULL, NULL, NULL, kind, why);
		page_free(p);
	}
	r->queue_tail = NULL;
	r->queued = 0;
}

/* What a tab holds freed; the tab empty (TAB_FREE) again. */
static void tab_clear(struct render *r, struct tab *t)
{
	warc_tab_free(r, t);
	json_decref(t->missing);
	free(t->target);
	free(t->session);
	free(t->doc_request);
	free(t->mime);
	free(t->loader);
	free(t->shot_path);
	free(t->js_error);
	free(t->refused_doc);
	json_decref(t->js_result);
	json_decref(t->request_ids);
	json_decref(t->dom);
	memset(t, 0, sizeof(*t));
}

static int restart_browser(struct render *r)
{
	char err[300];

	for (int i = 0; i < r->opts.concurrency; i++)
		tab_clear(r, &r->tabs[i]);
	browser_stop(&r->b);
	if (start_browser(r, err, sizeof(err)) < 0) {
		sc_warn("%s", err);
		flush_queue(r, "render", err);
		return -1;
	}
	return 0;
}

/* Reads one line and takes it; false at the end of the input. */
static bool read_line(struct render *r, struct sc_lines *in)
{
	struct sc_line line;
	int rc = sc_lines_next(in, &line);

	if (rc > 0) {
		take_line(r, in, &line);
		return true;
	}
	if (rc < 0) {
		sc_warn("%s: read error:", sc_lines_name(in));
		r->read_error = true;
	}
	r->input_done = true;
	return false;
}

/* Whether to read another line now.  --keep-order: a page slow to end
 * holds the records after it; past a bound, no more is read until it
 * ends.  A drain reads on to the end of the input, as sc-retry does: the
 * records an sc-fetch before it writes while it drains on the same signal
 * would otherwise be lost, and each line read keeps its record. */
static bool wants_input(const struct render *r)
{
	if (r->input_done || r->nheld >= (size_t)r->opts.concurrency * 16)
		return false;
	return r->draining || r->queued < (size_t)r->opts.concurrency;
}

static int run(struct render *r, struct sc_lines *in)
{
	for (;;) {
		/* A drain starts no page: what waits for a tab is a cancelled
		 * record at once, before any line read after the signal (each
		 * its own cancelled record as it is read: enqueue). */
		if (sc_stop_signal && !r->draining) {
			r->draining = true;
			flush_queue(r, "cancelled", "sc-render was interrupted");
		}
		if (r->draining && r->in_flight == 0)
			browser_stop(&r->b); /* no page will need it */
		bool want_input = wants_input(r);
		while (want_input && sc_lines_buffered(in) && read_line(r, in))
			want_input = wants_input(r);
		if (r->opts.browser_rss_mb && r->b.pages > r->rss_checked) {
			/* Past the bound: no more pages until it is restarted. */
			r->rss_checked = r->b.pages;
			if (browser_rss_kib(&r->b) / 1024 > r->opts.browser_rss_mb)
				r->b.pages = r->opts.browser_pages;
		}
		if (r->b.pages >= r->opts.browser_pages && r->in_flight == 0 && r->queue &&
		    restart_browser(r) < 0)
			return SC_EXIT_FAILURE;
		/* --only-if-needed starts the browser at the first page that
		 * needs it: a chunk of static pages starts none. */
		if (r->b.pid == 0 && r->queue && restart_browser(r) < 0)
			return SC_EXIT_FAILURE;
		assign(r);
		if (r->input_done && !r->queue && r->in_flight == 0)
			return r->read_error ? SC_EXIT_FAILURE : 0;
		double next = admit_next(r, tab_next_deadline(r));
		int ms = (int)(next - sc_now_ms());
		struct pollfd fds[5] = {
			{ .fd = r->b.from, .events = POLLIN },
			{ .fd = r->b.err, .events = POLLIN },
			{ .fd = stop_pipe[0], .events = POLLIN },
			{ .fd = want_input ? sc_lines_fd(in) : -1, .events = POLLIN },
			{ .fd = admit_fd(r), .events = POLLIN },
		};
		if (poll(fds, 5, ms < 0 ? 0 : ms + 1) < 0 && errno != EINTR)
			sc_die(SC_EXIT_FAILURE, "poll:");
		if (fds[1].revents)
			browser_drain_stderr(&r->b);
		if (fds[2].revents) {
			char c[16];
			ssize_t n = read(stop_pipe[0], c, sizeof(c));
			(void)n;
		}
		if (fds[3].revents)
			read_line(r, in);
		if (fds[0].revents && browser_read(&r->b, on_message, r) < 0) {
			/* EOF on fd 4: the browser died.  Its pages go again. */
			tabs_lost(r, "the browser crashed");
			if (restart_browser(r) < 0)
				return SC_EXIT_FAILURE;
			continue;
		}
		admit_perform(r);
		double now = sc_now_ms();
		for (int i = 0; i < r->opts.concurrency; i++)
			tab_tick(r, &r->tabs[i], now);
	}
}

int main(int argc, char **argv)
{
	static struct render r; /* static: the exit handler may reach its browser */
	char err[300];

	sc_stdio_hold();
	sc_setprogname(argv[0]);
	parse_options(&r, argc, argv);
	if (r.opts.user_agent)
		r.agent = sc_strdup(r.opts.user_agent);
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		sc_die(SC_EXIT_FAILURE, "pipe:");
	sc_signals_install(on_stop);
	struct sc_lines *in = sc_lines_open(0, "<stdin>");
	if (!in)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	r.tabs = sc_calloc((size_t)r.opts.concurrency, sizeof(*r.tabs));
	the_browser = &r.b;
	if (atexit(kill_browser_at_exit) != 0)
		sc_die(SC_EXIT_FAILURE, "atexit failed");
	browser_sweep();
	if (admit_init(&r, err, sizeof(err)) < 0 || replay_init(&r, err, sizeof(err)) < 0 ||
	    cookies_init(&r, err, sizeof(err)) < 0 ||
	    warc_init(&r, argc, argv, err, sizeof(err)) < 0)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	r.b.to = r.b.from = r.b.err = -1;
	if (!r.opts.only_needed && start_browser(&r, err, sizeof(err)) < 0)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	int status = run(&r, in);
	out_end(&r);
	browser_stop(&r.b);
	the_browser = NULL; /* r goes with main's frame */
	for (int i = 0; i < r.opts.concurrency; i++)
		tab_clear(&r, &r.tabs[i]);
	free(r.tabs);
	free(r.opts.js_expr);
	free(r.agent);
	json_decref(r.opts.headers);
	for (int i = 0; i < r.opts.nglobs; i++)
		free(r.opts.block_globs[i]);
	admit_free(&r);
	cookies_free(&r);
	needed_free(&r);
	replay_free(&r);
	if (warc_close(&r, err, sizeof(err)) < 0) {
		sc_warn("%s", err);
		status = SC_EXIT_FAILURE;
	}
	sc_lines_close(in);
	if (status == 0 && r.failed)
		status = SC_EXIT_PARTIAL;
	return sc_exit_status(status);
}
