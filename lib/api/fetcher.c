/* fetcher: sc.h's fetcher (sc_fetcher_*): the engine of sc-fetch, fed by
 * submits instead of an input stream.  Its options are set through the
 * engine's own option table (the words and units of sc-fetch's command
 * line, the same defaults and checks); each submit is one line of
 * sc-fetch's input, held here until the engine wants more work (as
 * sc-fetch reads ahead) and then made an item by the rule sc-fetch uses
 * (fetch_submit_line); each record comes back through the engine's
 * record hook to the done callback, with the submit's user pointer. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/buf.h"
#include "core/protocol.h"
#include "core/util.h"
#include "engine/fetch.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/record.h"

/* A submit the engine has not taken yet. */
struct item {
	char *text; /* the line, NUL-terminated (owned) */
	size_t len;
	size_t number; /* its submit's number, for a bad_input record */
	void *user;
	struct item *next;
};

struct sc_fetcher {
	struct fetch_options opts;
	struct fetch_engine *engine; /* NULL until the first submit */
	sc_done_fn done;
	void *done_ctx;
	sc_metrics_fn metrics_fn;
	void *metrics_ctx;
	FILE *metrics;         /* the engine's metrics stream: lines to metrics_fn */
	struct sc_buf partial; /* a metrics line not complete yet */
	sc_warning_fn warning_fn;
	void *warning_ctx;
	char *progname; /* argv[0]'s last part, after sc_fetcher_setopt_argv (owned) */
	struct item *head, *tail;
	size_t submits; /* calls of sc_fetcher_submit so far: the last item's number */
	size_t pending; /* submitted, done not called yet */
	size_t failed;  /* records done that are not ok */
	volatile sig_atomic_t drain_asked; /* sc_fetcher_drain before the engine was made */
	unsigned calling;                  /* inside one of the caller's callbacks (nested: more) */
	bool finished;
	bool dropping; /* sc_fetcher_free: records no longer go to done */
};

/* Each option's long name in fetch_option_rows, by enum sc_fetcher_option. */
static const char *const option_names[] = {
	[SC_FETCHOPT_INSECURE] = "insecure",
	[SC_FETCHOPT_QUIET] = "quiet",
	[SC_FETCHOPT_CONCURRENCY] = "concurrency",
	[SC_FETCHOPT_TIMEOUT] = "timeout",
	[SC_FETCHOPT_USER_AGENT] = "user-agent",
	[SC_FETCHOPT_HEADER] = "header",
	[SC_FETCHOPT_PER_HOST] = "per-host",
	[SC_FETCHOPT_RATE] = "rate",
	[SC_FETCHOPT_HOST_RATE] = "host-rate",
	[SC_FETCHOPT_DELAY] = "delay",
	[SC_FETCHOPT_MAX_REDIRS] = "max-redirs",
	[SC_FETCHOPT_CONNECT_TIMEOUT] = "connect-timeout",
	[SC_FETCHOPT_LOW_SPEED_LIMIT] = "low-speed-limit",
	[SC_FETCHOPT_LOW_SPEED_TIME] = "low-speed-time",
	[SC_FETCHOPT_MAX_BYTES] = "max-bytes",
	[SC_FETCHOPT_KEEP_ORDER] = "keep-order",
	[SC_FETCHOPT_RETRIES] = "retries",
	[SC_FETCHOPT_RETRY_BASE] = "retry-base",
	[SC_FETCHOPT_RETRY_MAX] = "retry-max",
	[SC_FETCHOPT_RETRY_MAX_WAIT] = "retry-max-wait",
	[SC_FETCHOPT_RETRY_BUDGET] = "retry-budget",
	[SC_FETCHOPT_SEED] = "seed",
	[SC_FETCHOPT_METRICS] = "metrics",
	[SC_FETCHOPT_STATS_EVERY] = "stats-every",
	[SC_FETCHOPT_GRACE] = "grace",
	[SC_FETCHOPT_ROBOTS] = "robots",
	[SC_FETCHOPT_ROBOTS_AGENT] = "robots-agent",
	[SC_FETCHOPT_MAX_CRAWL_DELAY] = "max-crawl-delay",
	[SC_FETCHOPT_ROBOTS_CACHE] = "robots-cache",
	[SC_FETCHOPT_HEADERS] = "headers",
	[SC_FETCHOPT_ADAPTIVE] = "adaptive",
	[SC_FETCHOPT_ORIGIN_STATE] = "origin-state",
	[SC_FETCHOPT_WARC] = "warc",
	[SC_FETCHOPT_WARC_MAX_SIZE] = "warc-max-size",
	[SC_FETCHOPT_WARC_LEVEL] = "warc-level",
	[SC_FETCHOPT_WARC_CDX] = "warc-cdx",
	[SC_FETCHOPT_WARC_DEDUPE] = "warc-dedupe",
	[SC_FETCHOPT_PROGRESS] = "progress",
	[SC_FETCHOPT_DEFER_AFTER] = "defer-after",
	[SC_FETCHOPT_COOKIES] = "cookies",
	[SC_FETCHOPT_NO_COOKIES] = "no-cookies",
	[SC_FETCHOPT_PROXY] = "proxy",
	[SC_FETCHOPT_PROXY_LIST] = "proxy-list",
	[SC_FETCHOPT_PROXY_STICKY] = "proxy-sticky",
	[SC_FETCHOPT_WARC_INFO] = "warc-info",
	[SC_FETCHOPT_CONTACT] = "contact",
	[SC_FETCHOPT_LOGIN_URL] = "login-url",
};

/* sc_fetcher_setopt_argv runs getopt_long, whose state is the process's. */
static pthread_mutex_t getopt_lock = PTHREAD_MUTEX_INITIALIZER;

sc_fetcher *sc_fetcher_new(sc_done_fn done, void *ctx)
{
	struct sc_fetcher *f;

	if (!done)
		return NULL;
	sc_record_setup(); /* before this thread makes its first record */
	f = sc_calloc(1, sizeof(*f));
	f->done = done;
	f->done_ctx = ctx;
	fetch_options_init(&f->opts);
	sc_buf_init(&f->partial, SC_LINE_MAX);
	return f;
}

void sc_fetcher_free(sc_fetcher *f)
{
	if (!f)
		return;
	if (f->engine && f->pending > 0) {
		/* The engine ends what it holds (its records are dropped here);
		 * what it has not pulled yet is freed below. */
		f->dropping = true;
		fetch_cancel_all(f->engine);
	}
	fetch_engine_free(f->engine);
	if (f->metrics)
		(void)fclose(f->metrics); /* its lines went to the callback already */
	while (f->head) {
		struct item *next = f->head->next;
		free(f->head->text);
		free(f->head);
		f->head = next;
	}
	sc_buf_free(&f->partial);
	fetch_options_free(&f->opts);
	free(f->progname);
	free(f);
}

static const struct sc_opt *option_row(enum sc_fetcher_option opt)
{
	if ((size_t)opt >= sizeof(option_names) / sizeof(option_names[0]) || !option_names[opt])
		return NULL;
	for (const struct sc_opt *row = fetch_option_rows; row->name; row++)
		if (strcmp(row->name, option_names[opt]) == 0)
			return row;
	return NULL;
}

/* Returns rc, with text as its reason in *errmsg (if errmsg is not NULL;
 * text is copied). */
static int refuse(int rc, char **errmsg, const char *text)
{
	if (errmsg)
		*errmsg = sc_strdup(text);
	return rc;
}

static const char no_fetcher[] = "no fetcher (NULL)";
static const char started[] =
        "the fetcher has started: options and run_fd are before the first submit";

/* The option's row, or NULL with SC_EINVAL's reason in *errmsg: an
 * unknown option, a fetcher that has started. */
static const struct sc_opt *settable_row(sc_fetcher *f, enum sc_fetcher_option opt, int *rc,
                                         char **errmsg)
{
	const struct sc_opt *row = option_row(opt);

	if (errmsg)
		*errmsg = NULL;
	*rc = SC_EINVAL;
	if (!f) {
		refuse(SC_EINVAL, errmsg, no_fetcher);
		return NULL;
	}
	if (!row) {
		if (errmsg)
			*errmsg = sc_api_error("unknown option %d", (int)opt);
		return NULL;
	}
	if (f->engine) {
		*rc = SC_EBUSY;
		if (errmsg)
			*errmsg = sc_api_error("--%s: the options are fixed at the first submit",
			                       row->name);
		return NULL;
	}
	return row;
}

/* Whether a number is the option's kind of value: a flag's (0 off, else
 * on), or a number's; not a string's (a file, a header, an agent). */
static bool takes_number(const struct sc_opt *row)
{
	return !row->arg || row->kind == SC_OPT_WHOLE || row->kind == SC_OPT_NUMBER ||
	       row->kind == SC_OPT_SECONDS;
}

/* A flag, or --adaptive / --no-adaptive: on or off. */
static void set_flag(struct sc_fetcher *f, const struct sc_opt *row, bool on)
{
	if (row->kind == SC_OPT_FLAG)
		*(bool *)((char *)&f->opts + row->offset) = on;
	else
		f->opts.adaptive = on; /* the one flag that is a pair of calls */
}

/* The option's argument read by the engine's table, as sc-fetch reads
 * "--NAME VALUE" (without getopt: the caller may be in its own loop). */
static int parse_value(struct sc_fetcher *f, const struct sc_opt *row, const char *value,
                       char **errmsg)
{
	char err[600];

	if (sc_opt_store(row, &f->opts, value, err, sizeof(err)) == 0)
		return SC_OK;
	if (errmsg)
		*errmsg = sc_strdup(err);
	return SC_EBADVALUE;
}

/* sc_fetcher_setopt, once the row is known to be settable. */
static int set_row(sc_fetcher *f, const struct sc_opt *row, const char *value, char **errmsg)
{
	if (!row->arg) {
		/* In the option table's words (which a flag's value, read
		 * here, does not go through), and not echoed. */
		if (value && !sc_protocol_value_ok(value, strlen(value))) {
			if (errmsg)
				*errmsg = sc_api_error("--%s: %s", row->name,
				                       SC_PROTOCOL_VALUE_REFUSED);
			return SC_EBADVALUE;
		}
		if (value && strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
			if (errmsg)
				*errmsg =
				        sc_api_error("--%s: '%s' is not 0 or 1", row->name, value);
			return SC_EBADVALUE;
		}
		set_flag(f, row, !value || strcmp(value, "1") == 0);
		return SC_OK;
	}
	if (!value) {
		if (errmsg)
			*errmsg = sc_api_error("--%s needs a value (NULL is a flag's)", row->name);
		return SC_EINVAL;
	}
	return parse_value(f, row, value, errmsg);
}

int sc_fetcher_setopt(sc_fetcher *f, enum sc_fetcher_option opt, const char *value, char **errmsg)
{
	int rc;
	const struct sc_opt *row = settable_row(f, opt, &rc, errmsg);

	return row ? set_row(f, row, value, errmsg) : rc;
}

/* _long and _double: a number set as its text, on a flag or a number. */
static int set_number(sc_fetcher *f, enum sc_fetcher_option opt, bool nonzero, const char *text,
                      const char *setter, char **errmsg)
{
	int rc;
	const struct sc_opt *row = settable_row(f, opt, &rc, errmsg);

	if (!row)
		return rc;
	if (!takes_number(row)) {
		if (errmsg)
			*errmsg = sc_api_error("--%s takes a string, not a number: set it with "
			                       "sc_fetcher_setopt, not %s",
			                       row->name, setter);
		return SC_EINVAL;
	}
	return set_row(f, row, nonzero && !row->arg ? "1" : text, errmsg);
}

int sc_fetcher_setopt_long(sc_fetcher *f, enum sc_fetcher_option opt, long value, char **errmsg)
{
	char text[32];

	snprintf(text, sizeof(text), "%ld", value);
	return set_number(f, opt, value != 0, text, "sc_fetcher_setopt_long", errmsg);
}

int sc_fetcher_setopt_double(sc_fetcher *f, enum sc_fetcher_option opt, double value, char **errmsg)
{
	char text[64];

	snprintf(text, sizeof(text), "%.17g", value);
	return set_number(f, opt, value != 0, text, "sc_fetcher_setopt_double", errmsg);
}

int sc_fetcher_set_metrics(sc_fetcher *f, sc_metrics_fn fn, void *ctx)
{
	if (!f)
		return SC_EINVAL;
	if (f->engine)
		return SC_EBUSY;
	f->metrics_fn = fn;
	f->metrics_ctx = ctx;
	return SC_OK;
}

/* The caller's callbacks, each marked as one: a run, a perform or a wait
 * asked from inside a callback would run the loop, and other callbacks,
 * nested inside it (they are refused). */
static void metrics_line(struct sc_fetcher *f, const char *line, size_t len)
{
	if (!f->metrics_fn)
		return;
	f->calling++;
	f->metrics_fn(line, len, f->metrics_ctx);
	f->calling--;
}

static void warn(struct sc_fetcher *f, size_t lineno, const char *why)
{
	if (!f->warning_fn)
		return;
	f->calling++;
	f->warning_fn(lineno, why, f->warning_ctx);
	f->calling--;
}

/* The metrics stream's writes (fopencookie): whole lines to metrics_fn,
 * the rest kept for the next write. */
static ssize_t metrics_write(void *cookie, const char *buf, size_t size)
{
	struct sc_fetcher *f = cookie;
	const char *end = buf + size, *nl;

	while (buf < end && (nl = memchr(buf, '\n', (size_t)(end - buf)))) {
		if (f->partial.len > 0) {
			sc_buf_add(&f->partial, buf, (size_t)(nl - buf));
			metrics_line(f, f->partial.p, f->partial.len);
			sc_buf_reset(&f->partial);
		} else {
			metrics_line(f, buf, (size_t)(nl - buf));
		}
		buf = nl + 1;
	}
	if (buf < end)
		sc_buf_add(&f->partial, buf, (size_t)(end - buf));
	return (ssize_t)size;
}

/* The engine's record hook: done, once per submit. */
static void record_done(void *ctx, void *user, const char *line, size_t len, bool failed)
{
	struct sc_fetcher *f = ctx;
	struct sc_result r;

	f->pending--;
	f->failed += failed;
	if (f->dropping)
		return;
	sc_result_init(&r, line, len, user);
	f->calling++;
	f->done(f, &r, user, f->done_ctx);
	f->calling--;
	sc_result_clear(&r);
}

/* The engine's pull: the oldest submit not taken yet, as one line of
 * sc-fetch's input. */
static int pull_item(struct fetch_engine *e, void *ctx)
{
	struct sc_fetcher *f = ctx;
	struct item *it = f->head;
	char why[256];

	if (!it)
		return 1;
	f->head = it->next;
	if (!f->head)
		f->tail = NULL;
	struct sc_line line = { .text = it->text,
		                .len = it->len,
		                .number = it->number,
		                .too_long = it->len > SC_LINE_MAX };
	fetch_set_next_user(e, it->user);
	/* sc_fetcher_submit let only items through: the rule cannot skip. */
	int rc = fetch_submit_line(e, &line, SC_LINE_MAX, why, sizeof(why));
	if (rc < 0)
		fetch_submit_final(e, sc_record_bad_input(it->number, it->text, it->len, "no item"),
		                   true);
	else if (rc > 0)
		warn(f, it->number, why);
	fetch_set_next_user(e, NULL);
	free(it->text);
	free(it);
	return 0;
}

/* The engine, made with the options as they are (fixed from now on):
 * its records to done, its metrics lines to the callback, --progress on
 * standard error. */
static int make_engine(struct sc_fetcher *f, char **errmsg)
{
	static const cookie_io_functions_t io = { .write = metrics_write };
	char err[256];

	if (fetch_options_check(&f->opts, err, sizeof(err)) != 0) {
		if (errmsg)
			*errmsg = sc_strdup(err);
		return SC_EBADVALUE;
	}
	f->metrics = fopencookie(f, "w", io);
	if (!f->metrics)
		sc_die(1, "out of memory");
	/* The callback may write the metrics lines to the terminal that
	 * shows --progress (sc-fetch does): the line is cleared before each. */
	struct fetch_streams streams = { .metrics = f->metrics,
		                         .progress = f->opts.progress ? stderr : NULL,
		                         .progname = f->progname ? f->progname : "sc_fetcher",
		                         .metrics_on_progress =
		                                 f->metrics_fn && !f->opts.metrics_path };
	f->engine = fetch_engine_new(&f->opts, &streams, err, sizeof(err));
	if (!f->engine) {
		(void)fclose(f->metrics); /* nothing was written to it */
		f->metrics = NULL;
		if (errmsg)
			*errmsg = sc_strdup(err);
		return SC_ESYSTEM;
	}
	fetch_set_record_hook(f->engine, record_done, f);
	if (f->drain_asked)
		fetch_request_drain(f->engine);
	return SC_OK;
}

/* The engine, made at the first submit, pulling the submits. */
static int start(struct sc_fetcher *f, char **errmsg)
{
	int rc = make_engine(f, errmsg);

	if (rc == SC_OK)
		fetch_start(f->engine, pull_item, f);
	return rc;
}

int sc_fetcher_submit(sc_fetcher *f, const char *url_or_record, void *user, char **errmsg)
{
	struct item *it;
	const char *s;
	size_t n;
	int rc;

	if (errmsg)
		*errmsg = NULL;
	if (!f)
		return refuse(SC_EINVAL, errmsg, no_fetcher);
	if (!url_or_record)
		return refuse(SC_EINVAL, errmsg, "no item (NULL)");
	if (f->finished)
		return refuse(SC_EINVAL, errmsg,
		              "the fetcher has finished: nothing is submitted after "
		              "sc_fetcher_finish or sc_fetcher_run_fd");
	/* Every call is a line of the input: it numbers bad_input records as
	 * sc-fetch numbers a file's lines, skipped ones included. */
	struct sc_line line = { .text = (char *)url_or_record,
		                .len = strlen(url_or_record),
		                .number = ++f->submits };
	if (sc_input_url_line(&line, &s, &n) == SC_URL_LINE_SKIP) {
		if (errmsg)
			*errmsg = sc_strdup("a blank line or a '#' comment is no item");
		return SC_EBADVALUE;
	}
	if (!f->engine && (rc = start(f, errmsg)) != SC_OK)
		return rc;
	it = sc_calloc(1, sizeof(*it));
	it->text = sc_strdup(url_or_record);
	it->len = line.len;
	it->number = line.number;
	it->user = user;
	if (f->tail)
		f->tail->next = it;
	else
		f->head = it;
	f->tail = it;
	f->pending++;
	return SC_OK;
}

int sc_fetcher_run(sc_fetcher *f, long timeout_ms)
{
	double deadline;

	if (!f)
		return SC_EINVAL;
	if (f->calling)
		return SC_EBUSY; /* the loop is running already, below the callback */
	if (!f->engine)
		return SC_OK;
	deadline = timeout_ms < 0 ? INFINITY : sc_now_ms() + (double)timeout_ms;
	for (;;) {
		double left = deadline - sc_now_ms();
		if (left <= 0)
			return f->pending ? SC_ETIMEOUT : SC_OK;
		if (!fetch_step(f->engine, left))
			return SC_OK;
	}
}

int sc_fetcher_fd(const sc_fetcher *f)
{
	return f && f->engine ? fetch_fd(f->engine) : -1;
}

long sc_fetcher_timeout(sc_fetcher *f)
{
	double wait;

	if (!f || !f->engine)
		return -1;
	if (f->calling)
		return 0; /* what is pending is done once the callback returns */
	wait = fetch_wait(f->engine);
	return isinf(wait) ? -1 : (long)ceil(wait);
}

size_t sc_fetcher_perform(sc_fetcher *f)
{
	if (!f)
		return 0;
	if (f->engine && !f->calling)
		fetch_step(f->engine, 0);
	return f->pending;
}

size_t sc_fetcher_pending(const sc_fetcher *f)
{
	return f ? f->pending : 0;
}

void sc_fetcher_finish(sc_fetcher *f)
{
	if (!f || f->finished)
		return;
	f->finished = true;
	if (f->engine) {
		fetch_finish(f->engine);
		fflush(f->metrics);
	}
}

size_t sc_fetcher_failed(const sc_fetcher *f)
{
	return f ? f->failed : 0;
}

int sc_fetcher_set_warning(sc_fetcher *f, sc_warning_fn fn, void *ctx)
{
	if (!f)
		return SC_EINVAL;
	if (f->engine)
		return SC_EBUSY;
	f->warning_fn = fn;
	f->warning_ctx = ctx;
	return SC_OK;
}

/* -h and -V, which sc_fetcher_setopt_argv reports rather than takes. */
static const struct sc_opt asked_rows[] = {
	SC_OPT_ROW_HELP(""),
	SC_OPT_ROW_VERSION(""),
	{ 0 },
};

int sc_fetcher_setopt_argv(sc_fetcher *f, int argc, char **argv, int *first, unsigned *asked,
                           char **errmsg)
{
	char err[600];
	int at;

	if (errmsg)
		*errmsg = NULL;
	if (asked)
		*asked = 0;
	if (!f)
		return refuse(SC_EINVAL, errmsg, no_fetcher);
	if (argc < 1 || !argv || !first)
		return refuse(SC_EINVAL, errmsg, "no argv[0], or no argv or first (NULL)");
	if (f->engine)
		return refuse(SC_EBUSY, errmsg, started);
	const struct sc_opt_set sets[] = { { fetch_option_rows, &f->opts }, { asked_rows, NULL } };
	pthread_mutex_lock(&getopt_lock);
	at = sc_opt_parse(sets, 2, argc, argv, err, sizeof(err));
	pthread_mutex_unlock(&getopt_lock);
	if (at == SC_OPT_PARSE_HELP || at == SC_OPT_PARSE_VERSION) {
		if (asked)
			*asked = at == SC_OPT_PARSE_HELP ? SC_ARGV_HELP : SC_ARGV_VERSION;
		*first = argc;
		return SC_OK;
	}
	if (at == SC_OPT_PARSE_ERROR || fetch_options_check(&f->opts, err, sizeof(err)) != 0) {
		if (errmsg)
			*errmsg = sc_strdup(err);
		return SC_EBADVALUE;
	}
	const char *base = strrchr(argv[0], '/');
	free(f->progname);
	f->progname = sc_strdup(base ? base + 1 : argv[0]);
	fetch_options_set_command(&f->opts, argc, argv);
	*first = at;
	return SC_OK;
}

char *sc_fetcher_usage(const char *progname, const char *operands)
{
	const struct sc_opt_set sets[] = { { fetch_option_rows, NULL } };

	return sc_opt_usage_of(progname ? progname : "sc-fetch", sets, 1, operands, NULL);
}

void sc_fetcher_drain(sc_fetcher *f)
{
	if (!f)
		return;
	f->drain_asked = 1;
	if (f->engine)
		fetch_request_drain(f->engine);
}

void sc_fetcher_cancel(sc_fetcher *f)
{
	if (f && f->engine)
		fetch_request_cancel(f->engine);
}

/* sc_fetcher_run_fd's line handler: sc-fetch's rule for the line, and
 * the warning for a malformed one. */
static int on_input_line(struct fetch_engine *e, const struct sc_lines *in,
                         const struct sc_line *line, void *ctx)
{
	struct sc_fetcher *f = ctx;
	char why[256];

	f->pending++; /* an item, unless the rule skips the line: its record to done */
	int rc = fetch_submit_line(e, line, sc_lines_max(in), why, sizeof(why));
	if (rc < 0)
		f->pending--;
	if (rc > 0)
		warn(f, line->number, why);
	return 0;
}

int sc_fetcher_run_fd(sc_fetcher *f, int fd, const char *name, char **errmsg)
{
	struct sc_lines *in;
	char err[256] = "";
	int rc;

	if (errmsg)
		*errmsg = NULL;
	if (!f)
		return refuse(SC_EINVAL, errmsg, no_fetcher);
	if (fd < 0)
		return refuse(SC_EINVAL, errmsg, "no descriptor (fd < 0)");
	if (f->engine || f->finished)
		return refuse(SC_EBUSY, errmsg, started);
	if ((rc = make_engine(f, errmsg)) != SC_OK)
		return rc;
	in = sc_lines_open(fd, name ? name : "<input>");
	if (!in)
		sc_die(1, "out of memory");
	int status = fetch_run(f->engine, in, on_input_line, f, err, sizeof(err));
	sc_lines_close(in);
	f->finished = true;
	fflush(f->metrics);
	if (status == SC_EXIT_FAILURE && *err) {
		if (errmsg)
			*errmsg = sc_strdup(err);
		return SC_ESYSTEM;
	}
	return SC_OK;
}
