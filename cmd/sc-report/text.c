/* text: the report for a person: the summary, the per-host table and the
 * latency histogram, and the host order of --sort that every output
 * shares. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report.h"

static double column_value(const struct host *h, enum host_column c)
{
	switch (c) {
	case COL_REQUESTS:
		return (double)h->requests;
	case COL_BYTES:
		return (double)h->bytes;
	case COL_OK:
		return (double)h->ok;
	case COL_ERRORS:
		return (double)h->errors;
	case COL_ROBOTS:
		return (double)h->robots_refused;
	case COL_429:
		return (double)h->status429;
	case COL_COOLDOWNS:
		return (double)h->cooldowns;
	case COL_NOT_MODIFIED:
		return (double)h->not_modified;
	case COL_THROTTLES:
		return (double)h->throttles;
	case COL_P50:
		return h->p50;
	case COL_P95:
		return h->p95;
	default:
		return 0;
	}
}

static enum host_column sort_column;

/* Names ascending; numbers descending (the worst first), then by name. */
static int cmp_hosts(const void *a, const void *b)
{
	const struct host *x = *(struct host *const *)a, *y = *(struct host *const *)b;

	if (sort_column != COL_HOST) {
		double vx = column_value(x, sort_column), vy = column_value(y, sort_column);
		if (vx != vy)
			return vx < vy ? 1 : -1;
	}
	return strcmp(x->key, y->key);
}

struct host **hosts_sorted(const struct report *r, enum host_column col)
{
	struct host **v = sc_malloc((r->nhosts + 1) * sizeof(*v));

	memcpy(v, r->hosts, r->nhosts * sizeof(*v));
	sort_column = col;
	qsort(v, r->nhosts, sizeof(*v), cmp_hosts);
	return v;
}

/* "12.3 MB" */
static const char *human_bytes(double b, char *buf, size_t n)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB" };
	int u = 0;

	while (b >= 1000 && u < 4) {
		b /= 1000;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", b, units[u]);
	return buf;
}

static void write_counts(FILE *out, const struct report *r)
{
	const struct totals *t = &r->t;
	double d = duration_s(r);
	char tmp[32], first[SC_RFC3339_LEN], last[SC_RFC3339_LEN];

	fprintf(out, "requests     %llu (ok %llu, errors %llu, retries %llu, robots.txt %llu)\n",
	        (unsigned long long)t->requests, (unsigned long long)t->ok,
	        (unsigned long long)t->errors, (unsigned long long)t->retries,
	        (unsigned long long)t->robots_requests);
	if (t->first_ms > 0) {
		sc_rfc3339((int64_t)t->first_ms, first);
		sc_rfc3339((int64_t)t->last_ms, last);
		fprintf(out, "duration     %.3f s (%s to %s)\n", d, first, last);
	}
	fprintf(out, "rate         %.1f requests/s\n", d > 0 ? (double)t->requests / d : 0.0);
	/* sc-fetch's bytes are the bodies as decoded, not as they came (a
	 * WARC holds them compressed): said, so no one compares the two. */
	fprintf(out, "throughput   %s/s (%llu body bytes, decoded)\n",
	        human_bytes(d > 0 ? (double)t->bytes / d : 0.0, tmp, sizeof(tmp)),
	        (unsigned long long)t->bytes);
}

static void write_latency(FILE *out, const struct report *r)
{
	const struct totals *t = &r->t;
	const struct moments *lat = &t->latency;

	fprintf(out,
	        "latency      min %.1f  mean %.1f  p50 %.1f  p90 %.1f  p95 %.1f  p99 %.1f  "
	        "max %.1f ms\n",
	        lat->min, lat->n ? lat->sum / (double)lat->n : 0.0, percentile(&t->lat, 50),
	        percentile(&t->lat, 90), percentile(&t->lat, 95), percentile(&t->lat, 99),
	        lat->max);
	if (t->queue.n == 0)
		return;
	fprintf(out, "phases       ");
	for (int ph = 0; ph < PH_COUNT; ph++)
		fprintf(out, "%s %.1f  ", phase_name((enum phase)ph),
		        t->phase[ph].sum / (double)t->phase[ph].n);
	fprintf(out, "ms (mean)\n");
	fprintf(out, "queue        mean %.1f  max %.1f ms (before the request; not in latency)\n",
	        t->queue.sum / (double)t->queue.n, t->queue.max);
}

static void write_breakdowns(FILE *out, const struct report *r)
{
	const struct totals *t = &r->t;

	fprintf(out, "status      ");
	for (int s = 100; s < 600; s++)
		if (t->status[s])
			fprintf(out, " %d %llu", s, (unsigned long long)t->status[s]);
	if (t->status[0])
		fprintf(out, " none %llu", (unsigned long long)t->status[0]);
	fprintf(out, "\nerrors      ");
	for (int k = 0; k < KIND_COUNT; k++)
		if (t->kinds[k])
			fprintf(out, " %s %llu", kind_name(k), (unsigned long long)t->kinds[k]);
	fprintf(out, "%s\n", t->errors ? "" : " none");
	fprintf(out, "robots       %llu robots.txt requests",
	        (unsigned long long)t->robots_requests);
	const char *sep = " (";
	for (int s = 0; s < 600; s++)
		if (t->robots_status[s]) {
			if (s)
				fprintf(out, "%s%d %llu", sep, s,
				        (unsigned long long)t->robots_status[s]);
			else
				fprintf(out, "%snone %llu", sep,
				        (unsigned long long)t->robots_status[s]);
			sep = ", ";
		}
	fprintf(out, "%s, %llu URLs refused\n", *sep == ',' ? "; not in ok or errors)" : "",
	        (unsigned long long)robots_refused(r));
	fprintf(out, "rate limits  %llu answers 429, %llu cool-downs, %llu throttle events",
	        (unsigned long long)t->status429, (unsigned long long)t->cooldowns,
	        (unsigned long long)t->throttles);
	for (int i = 0; i < TR_COUNT; i++)
		if (t->reasons[i])
			fprintf(out, " %s:%llu", throttle_reason_name(i),
			        (unsigned long long)t->reasons[i]);
	fprintf(out,
	        "\nlines        %llu read, %llu malformed, %llu not JSON (skipped), "
	        "%llu summaries, %llu records\n",
	        (unsigned long long)t->lines, (unsigned long long)t->malformed,
	        (unsigned long long)t->text_lines, (unsigned long long)t->summaries,
	        (unsigned long long)t->records);
}

static void write_host_row(FILE *out, const struct host *h, int width)
{
	fprintf(out, "%-*s %8llu %11llu %7llu %6llu %6llu %5llu %9llu %12llu %9llu %8.1f %8.1f ",
	        width, h->key, (unsigned long long)h->requests, (unsigned long long)h->bytes,
	        (unsigned long long)h->ok, (unsigned long long)h->errors,
	        (unsigned long long)h->robots_refused, (unsigned long long)h->status429,
	        (unsigned long long)h->cooldowns, (unsigned long long)h->not_modified,
	        (unsigned long long)h->throttles, h->p50, h->p95);
	const char *sep = "";
	for (int k = 0; k < KIND_COUNT; k++) {
		if (h->kinds[k]) {
			fprintf(out, "%s%s:%llu", sep, kind_name(k),
			        (unsigned long long)h->kinds[k]);
			sep = ",";
		}
	}
	fputc('\n', out);
}

static void write_hosts(FILE *out, const struct report *r, const struct options *o)
{
	struct host **v = hosts_sorted(r, o->sort);
	size_t rows =
	        o->host_rows && (size_t)o->host_rows < r->nhosts ? (size_t)o->host_rows : r->nhosts;
	int width = 4;

	for (size_t i = 0; i < rows; i++)
		if ((int)strlen(v[i]->key) > width)
			width = (int)strlen(v[i]->key);
	fprintf(out, "\n%-*s %8s %11s %7s %6s %6s %5s %9s %12s %9s %8s %8s %s\n", width, "host",
	        "requests", "bytes", "ok", "errors", "robots", "429", "cooldowns", "not_modified",
	        "throttles", "p50_ms", "p95_ms", "error_kinds");
	for (size_t i = 0; i < rows; i++)
		write_host_row(out, v[i], width);
	if (rows < r->nhosts)
		fprintf(out, "(%zu more hosts; --hosts 0 shows all)\n", r->nhosts - rows);
	free(v);
}

/* Counts of sorted latencies per bucket: [b0, b1), ..., [bn, inf), and
 * those under b0 first. */
static void hist_counts(const struct report *r, const struct options *o, uint64_t *counts)
{
	size_t j = 0;

	memset(counts, 0, (o->nhist + 1) * sizeof(*counts));
	for (size_t i = 0; i < r->t.lat.n; i++) {
		while (j < o->nhist && r->t.lat.v[i] >= o->hist[j])
			j++;
		counts[j]++;
	}
}

static void write_hist(FILE *out, const struct report *r, const struct options *o)
{
	uint64_t counts[HIST_MAX + 1];
	uint64_t n = r->t.lat.n ? r->t.lat.n : 1;

	hist_counts(r, o, counts);
	fprintf(out, "\nlatency histogram (ms)\n");
	for (size_t j = 0; j <= o->nhist; j++) {
		char range[64];
		if (j == 0)
			snprintf(range, sizeof(range), "< %g", o->hist[0]);
		else if (j == o->nhist)
			snprintf(range, sizeof(range), ">= %g", o->hist[j - 1]);
		else
			snprintf(range, sizeof(range), "%g .. %g", o->hist[j - 1], o->hist[j]);
		if (j == 0 && counts[0] == 0)
			continue;
		int bar = (int)(40.0 * (double)counts[j] / (double)n + 0.5);
		fprintf(out, "  %-18s %10llu %6.2f%%  %.*s\n", range, (unsigned long long)counts[j],
		        100.0 * (double)counts[j] / (double)n, bar,
		        "########################################");
	}
}

void hist_buckets(const struct report *r, const struct options *o, uint64_t *counts)
{
	hist_counts(r, o, counts);
}

void text_write(FILE *out, const struct report *r, const struct options *o)
{
	if (r->t.requests == 0) {
		fprintf(out, "no request lines in the input (%llu lines, %llu malformed)\n",
		        (unsigned long long)r->t.lines, (unsigned long long)r->t.malformed);
		return;
	}
	write_counts(out, r);
	write_latency(out, r);
	write_breakdowns(out, r);
	write_hosts(out, r, o);
	if (o->nhist)
		write_hist(out, r, o);
}
