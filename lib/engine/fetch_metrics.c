/* fetch_metrics: the metrics stream (sc-fetch(1) METRICS).  Owns the
 * request line written per attempt, the counters and latency histograms
 * (overall and for the busiest hosts), the summary line, and the
 * --progress line on the terminal. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/fetch_engine.h"
#include "kit/cli.h"
#include "record/jsonstr.h"

void fetch_progress_clear(struct sc_fetch_engine *e)
{
	if (e->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		e->progress_shown = false;
	}
}

static void metrics_line(struct sc_fetch_engine *e, json_t *obj)
{
	if (e->metrics == stderr)
		fetch_progress_clear(e);
	if (fetch_write_json_line(e->metrics, obj) != 0)
		clearerr(e->metrics); /* metrics are best effort; the records are what count */
	json_decref(obj);
}

static struct hoststat *hoststat_for(struct sc_fetch_engine *e, struct origin *origin)
{
	if (origin->hs)
		return origin->hs;
	for (size_t i = 0; i < e->nhosts; i++) {
		if (strcmp(e->hosts[i]->key, origin->key) == 0) {
			e->hosts[i]->owner = origin;
			return origin->hs = e->hosts[i];
		}
	}
	struct hoststat *hs;
	if (e->nhosts < HOST_STATS_MAX) {
		hs = sc_calloc(1, sizeof(*hs));
		e->hosts[e->nhosts++] = hs;
	} else {
		/* Full: the quietest host makes way (the busiest are what the
		 * summary reports). */
		hs = e->hosts[0];
		for (size_t i = 1; i < e->nhosts; i++)
			if (e->hosts[i]->requests < hs->requests)
				hs = e->hosts[i];
		if (hs->owner)
			hs->owner->hs = NULL;
		free(hs->key);
	}
	hs->key = sc_strdup(origin->key);
	hs->requests = hs->errors = 0;
	sc_hist_init(&hs->lat);
	hs->owner = origin;
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

void fetch_summary(struct sc_fetch_engine *e, bool final)
{
	double now = sc_now_ms();
	double elapsed = (now - e->start_ms) / 1000.0;
	char ts[SC_RFC3339_LEN];
	json_t *status = json_object(), *errors = json_object(), *rerrors = json_object();
	json_t *hosts = json_array();
	static const char *const classes[] = { "none", "1xx", "2xx", "3xx", "4xx", "5xx" };

	sc_rfc3339(sc_wall_ms(), ts);
	for (int i = 1; i < 6; i++)
		if (e->status_class[i])
			json_object_set_new(status, classes[i],
			                    json_integer((json_int_t)e->status_class[i]));
	for (int k = 0; k < SC_ERR_KIND_COUNT; k++) {
		if (e->attempt_errors[k])
			json_object_set_new(errors, sc_error_kind_name(k),
			                    json_integer((json_int_t)e->attempt_errors[k]));
		if (e->record_errors[k])
			json_object_set_new(rerrors, sc_error_kind_name(k),
			                    json_integer((json_int_t)e->record_errors[k]));
	}
	struct hoststat *sorted[HOST_STATS_MAX];
	memcpy(sorted, e->hosts, e->nhosts * sizeof(*sorted));
	qsort(sorted, e->nhosts, sizeof(*sorted), cmp_hosts);
	for (size_t i = 0; i < e->nhosts && i < 5; i++)
		json_array_append_new(hosts,
		                      json_pack("{s:s, s:I, s:I, s:o}", "host", sorted[i]->key,
		                                "requests", (json_int_t)sorted[i]->requests,
		                                "errors", (json_int_t)sorted[i]->errors,
		                                "latency_ms", latency_json(&sorted[i]->lat)));
	json_t *obj = json_pack(
	        "{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:f, s:f, s:o, s:o, s:I}",
	        "event", "summary", "ts", ts, "final", final, "records", (json_int_t)e->records,
	        "ok", (json_int_t)(e->records - e->records_failed), "not_ok",
	        (json_int_t)e->records_failed, "requests", (json_int_t)e->requests, "status",
	        status, "errors", errors, "record_errors", rerrors, "bytes", (json_int_t)e->bytes,
	        "elapsed_s", round(elapsed * 1000.0) / 1000.0, "rps",
	        elapsed > 0 ? round1((double)e->requests / elapsed) : 0.0, "latency_ms",
	        latency_json(&e->lat), "hosts", hosts, "inflight", (json_int_t)e->inflight);
	json_object_set_new(obj, "seed", json_integer((json_int_t)sc_retry_state_seed(e->retry)));
	fetch_robots_summary(e, obj);
	if (!final)
		json_object_set_new(obj, "queued",
		                    json_integer((json_int_t)(e->queued + e->nheap)));
	metrics_line(e, obj);
}

void fetch_progress_draw(struct sc_fetch_engine *e, double now)
{
	double elapsed = (now - e->start_ms) / 1000.0;
	char total[32] = "";

	if (e->total_lines >= 0)
		snprintf(total, sizeof(total), "/%lld", e->total_lines);
	fprintf(stderr, "\r\033[K%s: %llu%s done, %llu in flight, %.1f req/s, %llu not ok",
	        sc_progname, (unsigned long long)e->records, total, (unsigned long long)e->inflight,
	        elapsed > 0 ? (double)e->requests / elapsed : 0.0,
	        (unsigned long long)e->records_failed);
	fflush(stderr);
	e->progress_shown = true;
	e->last_progress = now;
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
void fetch_request_metrics(struct sc_fetch_engine *e, struct job *job, struct transfer *xfer,
                           const struct outcome *oc, const char *next)
{
	char ts[SC_RFC3339_LEN];
	struct sc_buf *b = &e->mline;

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
	if (oc->status)
		sc_buf_printf(b, ",\"status\":%ld,\"latency_ms\":", oc->status);
	else
		sc_buf_printf(b, ",\"status\":null,\"latency_ms\":");
	buf_real(b, round1(oc->latency_ms));
	sc_buf_printf(b, ",\"bytes\":%zu,\"attempt\":%d,\"error\":", oc->bytes, job->attempts);
	if (oc->kind >= 0)
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
		buf_real(b, round1(fmax(0.0, xfer->started - job->queued_at)));
		for (size_t i = 0; i < sizeof(timings) / sizeof(*timings); i++) {
			sc_buf_printf(b, ",\"%s\":", timings[i].name);
			buf_real(b, info_ms(xfer->easy, timings[i].info));
		}
		sc_buf_add(b, "}", 1);
	}
	fetch_robots_metrics(e, job, b);
	sc_buf_add(b, "}", 1);
	if (e->metrics == stderr)
		fetch_progress_clear(e);
	if (sc_record_write_raw(e->metrics, b->p, b->len) != 0)
		clearerr(e->metrics); /* metrics are best effort; the records are what count */
	sc_buf_shrink(b, BODY_KEEP_MAX);
}

void fetch_count_attempt(struct sc_fetch_engine *e, struct job *job, const struct outcome *oc)
{
	struct hoststat *hs = hoststat_for(e, job->origin);
	uint64_t us = (uint64_t)(oc->latency_ms * 1000.0);

	e->requests++;
	e->bytes += oc->bytes;
	if (oc->status >= 100 && oc->status < 600)
		e->status_class[oc->status / 100]++;
	if (oc->kind >= 0)
		e->attempt_errors[oc->kind]++;
	sc_hist_add(&e->lat, us);
	hs->requests++;
	if (oc->kind >= 0)
		hs->errors++;
	sc_hist_add(&hs->lat, us);
}

void fetch_hoststats_free(struct sc_fetch_engine *e)
{
	for (size_t i = 0; i < e->nhosts; i++) {
		free(e->hosts[i]->key);
		free(e->hosts[i]);
	}
	e->nhosts = 0;
}
