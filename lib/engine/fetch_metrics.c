/* fetch_metrics: the metrics stream (sc-fetch(1) METRICS).  Owns the
 * request line written per attempt, the counters and latency histograms
 * (overall and for the busiest hosts), the summary line, and the
 * --progress line on the terminal.
 *
 * Read by a shell step, byte for byte: crawl.mk's progress watcher
 * (share/sc/crawl-progress.sh, GROWN_AWK) takes a line that begins
 * {"event":"request" and holds no "next":"again" for a URL done, and
 * "error":" for a failed one (fetch_robots.c's "robots":true marks
 * robots.txt's), and its "host":"ORIGIN" and "ts":"...THH:MM:SS.mmmZ" for
 * the host's URLs done and their spacing.  Keep those bytes, or change
 * the awk with them (test/sc-fetch-robots.bats runs it on these lines). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/fetch_engine.h"
#include "kit/cli.h"
#include "record/jsonstr.h"
#include "web/pace.h"
#include "web/robots.h"

bool fetch_metrics_init(struct fetch_engine *e, const struct fetch_streams *streams, char *err,
                        size_t errlen)
{
	struct fetch_metrics_state *m = &e->metrics;

	m->total_lines = -1;
	m->progress = streams->progress;
	m->progname = streams->progname;
	m->on_progress = streams->metrics_on_progress;
	m->stream = streams->metrics;
	if (e->opts->metrics_path) {
		m->stream = fopen(e->opts->metrics_path, "a");
		if (!m->stream) {
			snprintf(err, errlen, "--metrics: %s: %s", e->opts->metrics_path,
			         strerror(errno));
			return false;
		}
		m->own_stream = true;
	}
	return true;
}

void fetch_metrics_free(struct fetch_engine *e)
{
	struct fetch_metrics_state *m = &e->metrics;

	for (size_t i = 0; i < m->nhosts; i++) {
		free(m->hosts[i]->key);
		free(m->hosts[i]);
	}
	m->nhosts = 0;
	sc_buf_free(&m->line);
	/* Metrics lines are flushed as they are written and their errors
	 * reported then; a failure here can only repeat one of those. */
	if (m->own_stream)
		(void)fclose(m->stream);
}

bool fetch_metrics_start(struct fetch_engine *e, double now, size_t line_max)
{
	struct fetch_metrics_state *m = &e->metrics;

	sc_buf_init(&m->line, line_max);
	m->start_ms = m->last_stats = now;
	m->progress_on = e->opts->progress && m->progress && isatty(fileno(m->progress));
	return m->progress_on;
}

void fetch_progress_total(struct fetch_engine *e, long long total_lines)
{
	e->metrics.total_lines = total_lines;
}

static void progress_clear(struct fetch_engine *e)
{
	if (e->metrics.progress_shown) {
		fputs("\r\033[K", e->metrics.progress);
		fflush(e->metrics.progress);
		e->metrics.progress_shown = false;
	}
}

/* A line on the metrics stream, when it is the progress line's too, first
 * clears that. */
static void clear_for_line(struct fetch_engine *e)
{
	if (e->metrics.stream == e->metrics.progress || e->metrics.on_progress)
		progress_clear(e);
}

static void metrics_line(struct fetch_engine *e, json_t *obj)
{
	clear_for_line(e);
	if (sc_record_write(e->metrics.stream, obj) != 0)
		clearerr(e->metrics
		                 .stream); /* metrics are best effort; the records are what count */
	json_decref(obj);
}

/* The statistics of origin's host, made (or taken from the quietest) if
 * need be.  origin->hs caches them; an entry given to another host since
 * says so by its key. */
static struct hoststat *hoststat_for(struct fetch_engine *e, struct origin *origin)
{
	if (origin->hs && strcmp(origin->hs->key, origin->key) == 0)
		return origin->hs;
	for (size_t i = 0; i < e->metrics.nhosts; i++)
		if (strcmp(e->metrics.hosts[i]->key, origin->key) == 0)
			return origin->hs = e->metrics.hosts[i];
	struct hoststat *hs;
	if (e->metrics.nhosts < HOST_STATS_MAX) {
		hs = sc_calloc(1, sizeof(*hs));
		e->metrics.hosts[e->metrics.nhosts++] = hs;
	} else {
		/* Full: the quietest host makes way (the busiest are what the
		 * summary reports). */
		hs = e->metrics.hosts[0];
		for (size_t i = 1; i < e->metrics.nhosts; i++)
			if (e->metrics.hosts[i]->requests < hs->requests)
				hs = e->metrics.hosts[i];
		free(hs->key);
	}
	hs->key = sc_strdup(origin->key);
	hs->requests = hs->errors = 0;
	sc_hist_init(&hs->lat);
	return origin->hs = hs;
}

static json_t *latency_json(const struct sc_hist *h)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f}", "p50",
	                 round1((double)sc_hist_percentile(h, 50) / 1000.0), "p95",
	                 round1((double)sc_hist_percentile(h, 95) / 1000.0), "p99",
	                 round1((double)sc_hist_percentile(h, 99) / 1000.0), "max",
	                 round1((double)h->max / 1000.0), "mean",
	                 h->count ? round1(h->sum / (double)h->count / 1000.0) : 0.0);
}

static int cmp_hosts(const void *a, const void *b)
{
	const struct hoststat *xfer = *(struct hoststat *const *)a,
	                      *y = *(struct hoststat *const *)b;

	return xfer->requests < y->requests ? 1 : xfer->requests > y->requests ? -1 : 0;
}

static void summary(struct fetch_engine *e, bool final)
{
	double now = sc_now_ms();
	double elapsed = (now - e->metrics.start_ms) / 1000.0;
	char ts[SC_RFC3339_LEN];
	json_t *status = json_object(), *errors = json_object(), *rerrors = json_object();
	json_t *hosts = json_array();
	static const char *const classes[] = { "none", "1xx", "2xx", "3xx", "4xx", "5xx" };

	sc_rfc3339(sc_wall_ms(), ts);
	for (int i = 1; i < 6; i++)
		if (e->metrics.status_class[i])
			json_object_set_new(status, classes[i],
			                    json_integer((json_int_t)e->metrics.status_class[i]));
	for (int k = 0; k < SC_ERR_KIND_COUNT; k++) {
		if (e->metrics.attempt_errors[k])
			json_object_set_new(errors, sc_error_kind_name(k),
			                    json_integer((json_int_t)e->metrics.attempt_errors[k]));
		if (e->output.record_errors[k])
			json_object_set_new(rerrors, sc_error_kind_name(k),
			                    json_integer((json_int_t)e->output.record_errors[k]));
	}
	struct hoststat *sorted[HOST_STATS_MAX];
	memcpy(sorted, e->metrics.hosts, e->metrics.nhosts * sizeof(*sorted));
	qsort(sorted, e->metrics.nhosts, sizeof(*sorted), cmp_hosts);
	for (size_t i = 0; i < e->metrics.nhosts && i < 5; i++)
		json_array_append_new(hosts,
		                      json_pack("{s:s, s:I, s:I, s:o}", "host", sorted[i]->key,
		                                "requests", (json_int_t)sorted[i]->requests,
		                                "errors", (json_int_t)sorted[i]->errors,
		                                "latency_ms", latency_json(&sorted[i]->lat)));
	json_t *obj = json_pack(
	        "{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:f, s:f, s:o, s:o, s:I}",
	        "event", "summary", "ts", ts, "final", final, "records",
	        (json_int_t)e->output.records, "ok",
	        (json_int_t)(e->output.records - e->output.records_failed), "not_ok",
	        (json_int_t)e->output.records_failed, "requests", (json_int_t)e->metrics.requests,
	        "status", status, "errors", errors, "record_errors", rerrors, "bytes",
	        (json_int_t)e->metrics.bytes, "elapsed_s", round(elapsed * 1000.0) / 1000.0, "rps",
	        elapsed > 0 ? round1((double)e->metrics.requests / elapsed) : 0.0, "latency_ms",
	        latency_json(&e->metrics.lat), "hosts", hosts, "inflight",
	        (json_int_t)e->xfers.inflight);
	json_object_set_new(obj, "seed",
	                    json_integer((json_int_t)sc_retry_state_seed(e->loop.retry)));
	fetch_robots_summary(e, obj);
	fetch_pace_summary(e, obj, now);
	fetch_cookies_summary(e, obj);
	fetch_proxy_summary(e, obj);
	if (!final)
		json_object_set_new(
		        obj, "queued",
		        json_integer((json_int_t)(e->origins.queued + e->origins.nheap)));
	metrics_line(e, obj);
}

/* A change of an origin's pace.  Written even with -q, which silences the
 * request lines only: a throttle is rare, and it is what explains them. */
void fetch_metrics_throttle(struct fetch_engine *e, const struct origin *origin,
                            const struct sc_pace_event *ev, double now)
{
	char ts[SC_RFC3339_LEN], until[SC_RFC3339_LEN];

	sc_rfc3339(sc_wall_ms(), ts);
	json_t *obj = json_pack("{s:s, s:s, s:o, s:s, s:[I, I], s:f}", "event", "throttle", "ts",
	                        ts, "origin",
	                        sc_json_string_lossy(origin->key, strlen(origin->key)), "reason",
	                        sc_pace_reason_name(ev->reason), "limit", (json_int_t)ev->limit_old,
	                        (json_int_t)ev->limit_new, "interval_ms", round1(ev->interval_ms));
	if (ev->blocked_until > now) {
		sc_rfc3339(sc_wall_ms() + (int64_t)llround(ev->blocked_until - now), until);
		json_object_set_new(obj, "blocked_until", json_string(until));
	} else {
		json_object_set_new(obj, "blocked_until", json_null());
	}
	metrics_line(e, obj);
}

static void progress_draw(struct fetch_engine *e, double now)
{
	double elapsed = (now - e->metrics.start_ms) / 1000.0;
	char total[32] = "";

	if (e->metrics.total_lines >= 0)
		snprintf(total, sizeof(total), "/%lld", e->metrics.total_lines);
	fprintf(e->metrics.progress,
	        "\r\033[K%s: %llu%s done, %llu in flight, %.1f req/s, %llu not ok",
	        e->metrics.progname, (unsigned long long)e->output.records, total,
	        (unsigned long long)e->xfers.inflight,
	        elapsed > 0 ? (double)e->metrics.requests / elapsed : 0.0,
	        (unsigned long long)e->output.records_failed);
	fflush(e->metrics.progress);
	e->metrics.progress_shown = true;
	e->metrics.last_progress = now;
}

double fetch_metrics_due(const struct fetch_engine *e)
{
	double due = INFINITY;

	if (e->opts->stats_every_s > 0)
		due = e->metrics.last_stats + e->opts->stats_every_s * 1000;
	if (e->metrics.progress_on)
		due = fmin(due, e->metrics.last_progress + 250);
	return due;
}

void fetch_metrics_tick(struct fetch_engine *e, double now)
{
	if (e->opts->stats_every_s > 0 &&
	    now - e->metrics.last_stats >= e->opts->stats_every_s * 1000) {
		e->metrics.last_stats = now;
		summary(e, false);
	}
	if (e->metrics.progress_on && now - e->metrics.last_progress >= 250)
		progress_draw(e, now);
}

void fetch_metrics_end(struct fetch_engine *e)
{
	if (e->metrics.progress_on)
		progress_clear(e);
	summary(e, true);
}

static double info_ms(CURL *c, CURLINFO what)
{
	curl_off_t us = 0;

	curl_easy_getinfo(c, what, &us);
	return round1((double)us / 1000.0);
}

/* A real as jansson writes it under JSON_REAL_PRECISION(12). */
static void buf_real(struct sc_buf *b, double v)
{
	char tmp[40];
	int n = snprintf(tmp, sizeof(tmp), "%.12g", v);

	if (!strpbrk(tmp, ".e"))
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, ".0");
	sc_buf_add(b, tmp, (size_t)n);
}

/* "key":"value", the value escaped; false if it is not UTF-8 (or would
 * pass the line's maximum). */
static bool buf_string_member(struct sc_buf *b, const char *key, const char *val)
{
	sc_buf_printf(b, ",\"%s\":\"", key);
	if (sc_jsonstr_escape_checked(b, val, strlen(val), SC_JSONSTR_NO_NUL) != SC_JSONSTR_OK)
		return false;
	sc_buf_addc(b, '"');
	return true;
}

/* The request metrics line, formatted by hand: it is written for every
 * attempt, and building and dumping a jansson object for it cost more than
 * the rest of the record's bookkeeping.  The same text jansson would make
 * (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)). */
/* The error an attempt counts as, or -1.  A robots.txt answered 4xx (but
 * 429) is an answer, not an error: RFC 9309's "unavailable", everything
 * allowed (web/robots), as most hosts without one answer; counted as an
 * HTTP error it put an error on nearly every host of a crawl. */
static int attempt_error(const struct job *job, const struct outcome *oc)
{
	if (job->robots_for && oc->kind == SC_ERR_HTTP &&
	    sc_robots_kind_for_status(oc->status) == SC_ROBOTS_ALLOW_ALL)
		return -1;
	return oc->kind;
}

void fetch_request_metrics(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                           const struct outcome *oc, const char *next)
{
	char ts[SC_RFC3339_LEN];
	struct sc_buf *b = &e->metrics.line;

	if (e->opts->quiet)
		return;
	sc_rfc3339(sc_wall_ms(), ts);
	sc_buf_reset(b);
	sc_buf_printf(b, "{\"event\":\"request\",\"ts\":\"%s\"", ts);
	if (!buf_string_member(b, "url", job->metrics_url) ||
	    !buf_string_member(b, "host", job->origin->key)) {
		/* Not UTF-8 (a host name can be anything): jansson's lossy way. */
		sc_buf_reset(b);
		sc_buf_printf(b, "{\"event\":\"request\",\"ts\":\"%s\"", ts);
		json_t *pair = json_pack(
		        "{s:o, s:o}", "url",
		        sc_json_string_lossy(job->metrics_url, strlen(job->metrics_url)), "host",
		        sc_json_string_lossy(job->origin->key, strlen(job->origin->key)));
		char *text = json_dumps(pair, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(pair);
		if (!text)
			sc_die(SC_EXIT_FAILURE, "out of memory");
		sc_buf_addc(b, ',');
		sc_buf_add(b, text + 1, strlen(text) - 2);
		free(text);
	}
	if (fetch_proxy_name(xfer))
		buf_string_member(b, "proxy", fetch_proxy_name(xfer));
	if (oc->status)
		sc_buf_printf(b, ",\"status\":%ld,\"latency_ms\":", oc->status);
	else
		sc_buf_printf(b, ",\"status\":null,\"latency_ms\":");
	buf_real(b, round1(oc->latency_ms));
	sc_buf_printf(b, ",\"bytes\":%zu,\"attempt\":%d,\"error\":", oc->bytes, job->attempts);
	if (attempt_error(job, oc) >= 0)
		sc_buf_printf(b, "\"%s\"", sc_error_kind_name(oc->kind));
	else
		sc_buf_add(b, "null", 4);
	sc_buf_printf(b, ",\"wait_ms\":%lld,\"next\":\"%s\"", job->wait_ms, next);
	if (xfer) {
		static const struct {
			const char *name;
			CURLINFO info;
		} timings[] = {
			{ "dns_ms", CURLINFO_NAMELOOKUP_TIME_T },
			{ "connect_ms", CURLINFO_CONNECT_TIME_T },
			{ "tls_ms", CURLINFO_APPCONNECT_TIME_T },
			{ "ttfb_ms", CURLINFO_STARTTRANSFER_TIME_T },
			{ "redirect_ms", CURLINFO_REDIRECT_TIME_T },
			{ "total_ms", CURLINFO_TOTAL_TIME_T },
		};
		sc_buf_add(b, ",\"timing\":{\"queue_ms\":", 22);
		buf_real(b, fetch_queue_ms(job, xfer));
		for (size_t i = 0; i < sizeof(timings) / sizeof(*timings); i++) {
			sc_buf_printf(b, ",\"%s\":", timings[i].name);
			buf_real(b, info_ms(xfer->easy, timings[i].info));
		}
		sc_buf_add(b, "}", 1);
	}
	fetch_robots_metrics(e, job, b);
	sc_buf_add(b, "}", 1);
	clear_for_line(e);
	if (sc_record_write_raw(e->metrics.stream, b->p, b->len) != 0)
		clearerr(e->metrics
		                 .stream); /* metrics are best effort; the records are what count */
	sc_buf_shrink(b, BODY_KEEP_MAX);
}

void fetch_count_attempt(struct fetch_engine *e, struct job *job, const struct outcome *oc)
{
	struct hoststat *hs = hoststat_for(e, job->origin);
	uint64_t us = (uint64_t)(oc->latency_ms * 1000.0);
	int error = attempt_error(job, oc);

	e->metrics.requests++;
	e->metrics.bytes += oc->bytes;
	if (oc->status >= 100 && oc->status < 600)
		e->metrics.status_class[oc->status / 100]++;
	if (error >= 0)
		e->metrics.attempt_errors[error]++;
	sc_hist_add(&e->metrics.lat, us);
	hs->requests++;
	if (error >= 0)
		hs->errors++;
	sc_hist_add(&hs->lat, us);
}
