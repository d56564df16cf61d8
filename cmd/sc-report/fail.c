/* fail: --fail-if thresholds.  Owns their grammar,
 * "[host:HOST ]METRIC OP VALUE[UNIT]", the table of metrics and how each
 * is measured over the whole run or one host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report.h"

/* A duration with its unit (us, ms, s, m; none: ms), for thresholds and
 * --hist alike. */
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

enum metric_type {
	M_LATENCY,
	M_COUNT,
	M_RATE
};

/* Counts go by the request; a kind of error is a metric of its own. */
enum metric_id {
	MI_MIN,
	MI_MEAN,
	MI_P50,
	MI_P90,
	MI_P95,
	MI_P99,
	MI_MAX,
	MI_ERRORS,
	MI_RATE_LIMITED,
	MI_NOT_MODIFIED,
	MI_COOLDOWNS,
	MI_THROTTLES,
	MI_RETRIES,
	MI_REQUESTS,
	MI_RATE,
	MI_MALFORMED,
	MI_KIND /* + kind */
};

static const struct {
	const char *name;
	enum metric_type type;
	double pct; /* latency percentile; 0 min, -1 mean, 100 max */
} metrics[] = {
	[MI_MIN] = { "min", M_LATENCY, 0 },
	[MI_MEAN] = { "mean", M_LATENCY, -1 },
	[MI_P50] = { "p50", M_LATENCY, 50 },
	[MI_P90] = { "p90", M_LATENCY, 90 },
	[MI_P95] = { "p95", M_LATENCY, 95 },
	[MI_P99] = { "p99", M_LATENCY, 99 },
	[MI_MAX] = { "max", M_LATENCY, 100 },
	[MI_ERRORS] = { "errors", M_COUNT, 0 },
	[MI_RATE_LIMITED] = { "rate_limited", M_COUNT, 0 },
	[MI_NOT_MODIFIED] = { "not_modified", M_COUNT, 0 },
	[MI_COOLDOWNS] = { "cooldowns", M_COUNT, 0 },
	[MI_THROTTLES] = { "throttles", M_COUNT, 0 },
	[MI_RETRIES] = { "retries", M_COUNT, 0 },
	[MI_REQUESTS] = { "requests", M_COUNT, 0 },
	[MI_RATE] = { "rate", M_RATE, 0 },
	[MI_MALFORMED] = { "malformed", M_COUNT, 0 },
};
#define NMETRICS (sizeof(metrics) / sizeof(*metrics))

enum op {
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_EQ,
	OP_NE
};
static const char *const op_names[] = { "<", "<=", ">", ">=", "==", "!=" };

static bool parse_metric(const char *name, size_t n, struct threshold *t)
{
	for (size_t i = 0; i < NMETRICS; i++) {
		if (strlen(metrics[i].name) == n && memcmp(metrics[i].name, name, n) == 0) {
			t->metric = (int)i;
			return true;
		}
	}
	for (int k = 0; k < KIND_COUNT; k++) {
		const char *kn = kind_name(k);
		if (strlen(kn) == n && memcmp(kn, name, n) == 0) {
			t->metric = MI_KIND + k;
			return true;
		}
	}
	return false;
}

static enum metric_type type_of(int metric)
{
	return metric >= MI_KIND ? M_COUNT : metrics[metric].type;
}

/* The operator at *p (the longest that fits), or -1. */
static int parse_op(const char **p)
{
	for (int i = (int)(sizeof(op_names) / sizeof(*op_names)) - 1; i >= 0; i--) {
		size_t n = strlen(op_names[i]);
		if (strncmp(*p, op_names[i], n) == 0 && (n == 2 || (*p)[1] != '=')) {
			*p += n;
			return i;
		}
	}
	return -1;
}

static bool parse_value(const char *v, struct threshold *t, char *why, size_t whylen)
{
	enum metric_type type = type_of(t->metric);
	char *end;

	while (*v == ' ')
		v++;
	if (type == M_LATENCY) {
		if (!parse_duration_ms(v, &t->value)) {
			snprintf(why, whylen, "'%s' is not a duration (like 800ms or 1.5s)", v);
			return false;
		}
		return true;
	}
	t->value = strtod(v, &end);
	if (end == v || !isfinite(t->value) || t->value < 0) {
		snprintf(why, whylen, "'%s' is not a number", v);
		return false;
	}
	t->share = strcmp(end, "%") == 0;
	if (*end && (!t->share || type != M_COUNT)) {
		snprintf(why, whylen, "'%s': %s takes %s", end,
		         metrics[t->metric < MI_KIND ? t->metric : MI_ERRORS].name,
		         type == M_COUNT ? "a count or a percentage (N%)"
		                         : "a number (requests/s)");
		return false;
	}
	if (t->share)
		t->value /= 100.0;
	return true;
}

bool threshold_parse(const char *text, struct threshold *t, char *why, size_t whylen)
{
	const char *p = text;

	memset(t, 0, sizeof(*t));
	t->text = text;
	while (*p == ' ')
		p++;
	if (strncmp(p, "host:", 5) == 0) {
		const char *h = p + 5, *sp = strchr(h, ' ');
		if (!sp || sp == h || (size_t)(sp - h) >= sizeof(t->host)) {
			snprintf(why, whylen, "host:NAME must be followed by a space and a metric");
			return false;
		}
		memcpy(t->host, h, (size_t)(sp - h));
		p = sp;
		while (*p == ' ')
			p++;
	}
	size_t n = strcspn(p, "<>=! ");
	if (!parse_metric(p, n, t)) {
		snprintf(why, whylen, "unknown metric '%.*s'", (int)n, p);
		return false;
	}
	p += n;
	while (*p == ' ')
		p++;
	if ((t->op = parse_op(&p)) < 0) {
		snprintf(why, whylen, "expected one of < <= > >= == != after the metric");
		return false;
	}
	return parse_value(p, t, why, whylen);
}

/* Whether a host key ("http://h:80") is the host a threshold names: the
 * whole key, or without its scheme, or without its port as well. */
static bool host_matches(const char *key, const char *want)
{
	const char *rest = strstr(key, "://");

	if (strcmp(key, want) == 0)
		return true;
	if (!rest)
		return false;
	rest += 3;
	size_t n = strlen(want);
	return strcmp(rest, want) == 0 ||
	       (strncmp(rest, want, n) == 0 && rest[n] == ':' && !strchr(rest + n + 1, ':'));
}

static uint64_t count_of(int metric, const struct host *h)
{
	switch (metric) {
	case MI_ERRORS:
		return h->errors;
	case MI_RATE_LIMITED:
		return h->status429;
	case MI_NOT_MODIFIED:
		return h->not_modified;
	case MI_COOLDOWNS:
		return h->cooldowns;
	case MI_THROTTLES:
		return h->throttles;
	case MI_REQUESTS:
		return h->requests;
	default:
		return metric >= MI_KIND ? h->kinds[metric - MI_KIND] : 0;
	}
}

/* The hosts a threshold names, merged into one (a temporary the caller
 * frees with host_merged_free); false when none has a line. */
static bool host_merged(const struct report *r, const char *want, struct host *m)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < r->nhosts; i++) {
		const struct host *h = r->hosts[i];
		if (!host_matches(h->key, want))
			continue;
		m->requests += h->requests;
		m->errors += h->errors;
		m->status429 += h->status429;
		m->not_modified += h->not_modified;
		m->cooldowns += h->cooldowns;
		m->throttles += h->throttles;
		for (int k = 0; k < KIND_COUNT; k++)
			m->kinds[k] += h->kinds[k];
		m->lat.v = sc_realloc(m->lat.v, (m->lat.n + h->lat.n + 1) * sizeof(float));
		memcpy(m->lat.v + m->lat.n, h->lat.v, h->lat.n * sizeof(float));
		m->lat.n += h->lat.n;
		m->key = (char *)h->key; /* borrowed, only to say one was found */
	}
	return m->key != NULL;
}

static double latency_of(double pct, const struct fvec *v)
{
	double sum = 0;

	if (v->n == 0)
		return 0;
	if (pct >= 0)
		return pct == 0 ? v->v[0] : percentile(v, pct);
	for (size_t i = 0; i < v->n; i++)
		sum += v->v[i];
	return sum / (double)v->n;
}

static double measure_in(const struct report *r, const struct threshold *t, const struct host *h)
{
	enum metric_type type = type_of(t->metric);

	if (type == M_LATENCY)
		return latency_of(metrics[t->metric].pct, &h->lat);
	if (t->metric == MI_RATE) {
		double d = duration_s(r);
		return d > 0 ? (double)h->requests / d : 0;
	}
	if (t->metric == MI_MALFORMED)
		return t->share ? (r->t.lines ? (double)r->t.malformed / (double)r->t.lines : 0)
		                : (double)r->t.malformed;
	double n = (double)count_of(t->metric, h);
	if (t->share)
		return h->requests ? n / (double)h->requests : 0;
	return n;
}

bool threshold_measure(const struct report *r, const struct threshold *t, double *value)
{
	struct host whole = { 0 };

	if (t->host[0]) {
		if (!host_merged(r, t->host, &whole)) {
			free(whole.lat.v);
			return false;
		}
		sort_floats(whole.lat.v, whole.lat.n);
		*value = measure_in(r, t, &whole);
		free(whole.lat.v);
		return true;
	}
	whole.requests = r->t.requests;
	whole.errors = r->t.errors;
	whole.status429 = r->t.status429;
	whole.not_modified = r->t.not_modified;
	whole.cooldowns = r->t.cooldowns;
	whole.throttles = r->t.throttles;
	memcpy(whole.kinds, r->t.kinds, sizeof(whole.kinds));
	whole.lat = r->t.lat; /* borrowed, sorted by agg_finish */
	*value = t->metric == MI_RETRIES
	                 ? (t->share && r->t.requests ? (double)r->t.retries / (double)r->t.requests
	                                              : (double)r->t.retries)
	                 : measure_in(r, t, &whole);
	return true;
}

bool threshold_holds(const struct threshold *t, double v)
{
	switch (t->op) {
	case OP_LT:
		return v < t->value;
	case OP_LE:
		return v <= t->value;
	case OP_GT:
		return v > t->value;
	case OP_GE:
		return v >= t->value;
	case OP_EQ:
		return v == t->value;
	default:
		return v != t->value;
	}
}

/* "812.0ms", "1.20%", "3": a measured value as the threshold gives it. */
static void format_value(const struct threshold *t, double v, char *out, size_t n)
{
	if (type_of(t->metric) == M_LATENCY)
		snprintf(out, n, "%.1fms", v);
	else if (t->share)
		snprintf(out, n, "%.3g%%", v * 100.0);
	else
		snprintf(out, n, "%.6g", v);
}

size_t thresholds_check(const struct report *r, const struct options *o)
{
	size_t broken = 0;

	for (size_t i = 0; i < o->nfail; i++) {
		const struct threshold *t = &o->fail[i];
		double v;
		char shown[64];
		if (r->t.requests == 0) {
			/* An empty run is no evidence that a crawl was fine. */
			sc_warn("threshold broken: '%s': no request lines", t->text);
			broken++;
			continue;
		}
		if (!threshold_measure(r, t, &v)) {
			sc_warn("threshold broken: '%s': no request to that host", t->text);
			broken++;
			continue;
		}
		format_value(t, v, shown, sizeof(shown));
		if (!threshold_holds(t, v)) {
			sc_warn("threshold broken: '%s' (measured %s)", t->text, shown);
			broken++;
		}
	}
	return broken;
}
