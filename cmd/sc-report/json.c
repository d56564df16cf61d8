/* json: --json, the figures in the fixed schema of sc-report(1) (JSON
 * OUTPUT).  Members are never renamed or removed; new ones may come. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report.h"

static double r1(double v)
{
	return round(v * 10.0) / 10.0;
}

static json_t *moments_json(const struct moments *m)
{
	return json_pack("{s:f, s:f, s:f}", "mean", m->n ? r1(m->sum / (double)m->n) : 0.0, "min",
	                 r1(m->min), "max", r1(m->max));
}

static json_t *latency_json(const struct report *r)
{
	const struct moments *m = &r->t.latency;
	const struct fvec *v = &r->t.lat;

	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "min", r1(m->min), "mean",
	                 m->n ? r1(m->sum / (double)m->n) : 0.0, "p50", r1(percentile(v, 50)),
	                 "p90", r1(percentile(v, 90)), "p95", r1(percentile(v, 95)), "p99",
	                 r1(percentile(v, 99)), "max", r1(m->max));
}

static json_t *kinds_json(const uint64_t *kinds)
{
	json_t *o = json_object();

	for (int k = 0; k < KIND_COUNT; k++)
		if (kinds[k])
			json_object_set_new(o, kind_name(k), json_integer((json_int_t)kinds[k]));
	return o;
}

static json_t *reasons_json(const uint64_t *reasons)
{
	json_t *o = json_object();

	for (int i = 0; i < TR_COUNT; i++)
		if (reasons[i])
			json_object_set_new(o, throttle_reason_name(i),
			                    json_integer((json_int_t)reasons[i]));
	return o;
}

static json_t *status_json(const uint64_t status[600])
{
	json_t *o = json_object();
	char code[8];

	for (int s = 100; s < 600; s++) {
		if (status[s]) {
			snprintf(code, sizeof(code), "%d", s);
			json_object_set_new(o, code, json_integer((json_int_t)status[s]));
		}
	}
	if (status[0])
		json_object_set_new(o, "none", json_integer((json_int_t)status[0]));
	return o;
}

static json_t *host_json(const struct host *h)
{
	json_t *o = json_pack(
	        "{s:o, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I}", "host",
	        sc_json_string_lossy(h->key, h->keylen), "requests", (json_int_t)h->requests,
	        "bytes", (json_int_t)h->bytes, "ok", (json_int_t)h->ok, "errors",
	        (json_int_t)h->errors, "error_kinds", kinds_json(h->kinds), "robots_requests",
	        (json_int_t)h->robots_requests, "robots_refused", (json_int_t)h->robots_refused,
	        "status_429", (json_int_t)h->status429, "cooldowns", (json_int_t)h->cooldowns,
	        "not_modified", (json_int_t)h->not_modified, "throttles", (json_int_t)h->throttles);
	json_object_set_new(o, "throttle_reasons", reasons_json(h->reasons));
	json_object_set_new(o, "latency_ms",
	                    json_pack("{s:f, s:f}", "p50", r1(h->p50), "p95", r1(h->p95)));
	return o;
}

static json_t *hist_json(const struct report *r, const struct options *o)
{
	uint64_t counts[HIST_MAX + 1];
	json_t *a = json_array();

	if (!o->nhist)
		return a;
	hist_buckets(r, o, counts);
	for (size_t j = 0; j <= o->nhist; j++)
		json_array_append_new(
		        a, json_pack("{s:o, s:o, s:I}", "from_ms",
		                     j ? json_real(o->hist[j - 1]) : json_null(), "to_ms",
		                     j < o->nhist ? json_real(o->hist[j]) : json_null(), "count",
		                     (json_int_t)counts[j]));
	return a;
}

static json_t *ts_json(double ms)
{
	char ts[SC_RFC3339_LEN];

	if (ms <= 0)
		return json_null();
	sc_rfc3339((int64_t)ms, ts);
	return json_string(ts);
}

static json_t *rounds_json(const struct report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->nrounds; i++) {
		const struct round *rd = &r->rounds[i];
		json_t *last = json_array();
		for (size_t j = 0; j < rd->nhosts && j < ROUND_LAST_HOSTS; j++)
			json_array_append_new(last, json_pack("{s:s%, s:o}", "host",
			                                      rd->hosts[j].host->key,
			                                      rd->hosts[j].host->keylen, "last_ts",
			                                      ts_json(rd->hosts[j].last_ms)));
		json_array_append_new(
		        a, json_pack("{s:I, s:I, s:o, s:o, s:I, s:o, s:f}", "round",
		                     (json_int_t)rd->number, "requests", (json_int_t)rd->requests,
		                     "first_ts", ts_json(rd->first_ms), "last_ts",
		                     ts_json(rd->last_ms), "hosts", (json_int_t)rd->nhosts,
		                     "finished_last", last, "waited_s",
		                     round(round_waited_ms(rd)) / 1000.0));
	}
	return a;
}

static json_t *phases_json(const struct totals *t)
{
	json_t *o = json_object();

	for (int ph = 0; ph < PH_COUNT; ph++)
		json_object_set_new(o, phase_name((enum phase)ph), moments_json(&t->phase[ph]));
	return o;
}

static json_t *lines_json(const struct totals *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "read", (json_int_t)t->lines,
	                 "malformed", (json_int_t)t->malformed, "not_json",
	                 (json_int_t)t->text_lines, "summaries", (json_int_t)t->summaries,
	                 "records", (json_int_t)t->records, "other_events",
	                 (json_int_t)t->other_events);
}

static json_t *hosts_json(const struct report *r, const struct options *o)
{
	struct host **v = hosts_sorted(r, o->sort);
	json_t *a = json_array();

	for (size_t i = 0; i < r->nhosts; i++)
		json_array_append_new(a, host_json(v[i]));
	free(v);
	return a;
}

static json_t *thresholds_json(const struct report *r, const struct options *o)
{
	json_t *a = json_array();

	for (size_t i = 0; i < o->nfail; i++) {
		double v = 0;
		bool measured = threshold_measure(r, &o->fail[i], &v);
		json_array_append_new(
		        a, json_pack("{s:o, s:o, s:b}", "expr",
		                     sc_json_string_lossy(o->fail[i].text, strlen(o->fail[i].text)),
		                     "value", measured ? json_real(v) : json_null(), "ok",
		                     measured && threshold_holds(&o->fail[i], v)));
	}
	return a;
}

static json_t *report_json(const struct report *r, const struct options *o)
{
	const struct totals *t = &r->t;
	double d = duration_s(r);
	json_t *j = json_pack(
	        "{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:f, s:f, s:f}", "requests",
	        (json_int_t)t->requests, "ok", (json_int_t)t->ok, "errors", (json_int_t)t->errors,
	        "retries", (json_int_t)t->retries, "bytes", (json_int_t)t->bytes, "hosts_count",
	        (json_int_t)r->nhosts, "first_ts", ts_json(t->first_ms), "last_ts",
	        ts_json(t->first_ms > 0 ? t->last_ms : 0), "duration_s", round(d * 1000) / 1000,
	        "rate_rps", d > 0 ? r1((double)t->requests / d) : 0.0, "throughput_bps",
	        d > 0 ? round((double)t->bytes / d) : 0.0);

	json_object_set_new(j, "latency_ms", latency_json(r));
	json_object_set_new(j, "phases_ms", phases_json(t));
	json_object_set_new(j, "queue_ms", moments_json(&t->queue));
	json_object_set_new(j, "status", status_json(t->status));
	json_object_set_new(j, "error_kinds", kinds_json(t->kinds));
	json_object_set_new(j, "robots",
	                    json_pack("{s:I, s:I, s:o}", "requests", (json_int_t)t->robots_requests,
	                              "refused", (json_int_t)robots_refused(r), "status",
	                              status_json(t->robots_status)));
	json_object_set_new(
	        j, "rate_limits",
	        json_pack("{s:I, s:I, s:I, s:I, s:o}", "status_429", (json_int_t)t->status429,
	                  "cooldowns", (json_int_t)t->cooldowns, "not_modified",
	                  (json_int_t)t->not_modified, "throttles", (json_int_t)t->throttles,
	                  "throttle_reasons", reasons_json(t->reasons)));
	json_object_set_new(j, "histogram", hist_json(r, o));
	json_object_set_new(j, "hosts", hosts_json(r, o));
	json_object_set_new(j, "rounds", rounds_json(r));
	json_object_set_new(j, "lines", lines_json(t));
	json_object_set_new(j, "thresholds", thresholds_json(r, o));
	return j;
}

void json_write(FILE *out, const struct report *r, const struct options *o)
{
	json_t *j = report_json(r, o);

	if (json_dumpf(j, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) == 0)
		fputc('\n', out);
	json_decref(j);
}
