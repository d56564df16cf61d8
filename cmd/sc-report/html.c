/* html: --html FILE, one self-contained page (no script, no network):
 * the summary, the charts gnuplot drew (inline SVG), the histogram and the
 * per-host table.  Written to a temporary name and renamed into place, so
 * a page that is there is whole. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "report.h"

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static const char style[] =
        "body{font:14px/1.4 sans-serif;margin:2em auto;max-width:1000px;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0}"
        "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
        "th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}"
        ".missing{background:#fff3cd;border:1px solid #e0c060;padding:.5em}"
        "figure{margin:1em 0}figcaption{font-weight:bold}";

static void row(FILE *f, const char *id, const char *label, const char *fmt, double v)
{
	fprintf(f, "<tr><td>%s</td><td id=\"%s\">", label, id);
	fprintf(f, fmt, v);
	fprintf(f, "</td></tr>\n");
}

static void write_summary(FILE *f, const struct report *r)
{
	const struct totals *t = &r->t;
	double d = duration_s(r), mean = t->latency.n ? t->latency.sum / (double)t->latency.n : 0;

	fprintf(f, "<h2>Summary</h2>\n<table>\n");
	row(f, "requests", "requests", "%.0f", (double)t->requests);
	row(f, "ok", "ok", "%.0f", (double)t->ok);
	row(f, "errors", "errors", "%.0f", (double)t->errors);
	row(f, "robots_requests", "robots.txt requests (not in ok or errors)", "%.0f",
	    (double)t->robots_requests);
	row(f, "bytes", "body bytes (decoded)", "%.0f", (double)t->bytes);
	row(f, "duration_s", "duration (s)", "%.3f", round(d * 1000) / 1000);
	row(f, "rate_rps", "rate (requests/s)", "%.1f", d > 0 ? (double)t->requests / d : 0);
	row(f, "lat-min", "latency min (ms)", "%.1f", t->latency.min);
	row(f, "lat-mean", "latency mean (ms)", "%.1f", round(mean * 10) / 10);
	static const double ps[] = { 50, 90, 95, 99 };
	for (size_t i = 0; i < 4; i++) {
		char id[32], label[48];
		snprintf(id, sizeof(id), "lat-p%g", ps[i]);
		snprintf(label, sizeof(label), "latency p%g (ms)", ps[i]);
		row(f, id, label, "%.1f", percentile(&t->lat, ps[i]));
	}
	row(f, "lat-max", "latency max (ms)", "%.1f", t->latency.max);
	for (int ph = 0; ph < PH_COUNT && t->queue.n; ph++) {
		char id[32], label[64];
		snprintf(id, sizeof(id), "phase-%s", phase_name((enum phase)ph));
		snprintf(label, sizeof(label), "%s, mean (ms)", phase_name((enum phase)ph));
		row(f, id, label, "%.1f", t->phase[ph].sum / (double)t->phase[ph].n);
	}
	if (t->queue.n)
		row(f, "queue-mean", "queue time, mean (ms)", "%.1f",
		    t->queue.sum / (double)t->queue.n);
	row(f, "status_429", "answers 429", "%.0f", (double)t->status429);
	row(f, "throttles", "throttle events", "%.0f", (double)t->throttles);
	row(f, "malformed", "malformed lines", "%.0f", (double)t->malformed);
	fprintf(f, "</table>\n");
}

static void write_status(FILE *f, const struct report *r)
{
	fprintf(f, "<h2>Status codes and "
	           "errors</h2>\n<table><tr><th>status</th><th>responses</th></tr>\n");
	for (int s = 100; s < 600; s++)
		if (r->t.status[s])
			fprintf(f, "<tr><td>%d</td><td>%llu</td></tr>\n", s,
			        (unsigned long long)r->t.status[s]);
	if (r->t.status[0])
		fprintf(f, "<tr><td>none</td><td>%llu</td></tr>\n",
		        (unsigned long long)r->t.status[0]);
	fprintf(f, "</table>\n<table><tr><th>error kind</th><th>attempts</th></tr>\n");
	for (int k = 0; k < KIND_COUNT; k++)
		if (r->t.kinds[k])
			fprintf(f, "<tr><td>%s</td><td>%llu</td></tr>\n", kind_name(k),
			        (unsigned long long)r->t.kinds[k]);
	fprintf(f, "</table>\n");
}

static void write_charts(FILE *f, const struct charts *c)
{
	fprintf(f, "<h2>Over time</h2>\n");
	for (int i = 0; i < CH_COUNT; i++) {
		fprintf(f, "<figure class=\"chart\" id=\"chart-%d\"><figcaption>%s</figcaption>\n",
		        i, chart_title((enum chart_id)i));
		if (c->svg[i])
			fprintf(f, "%s\n", c->svg[i]);
		else {
			fprintf(f, "<p class=\"missing\">This chart is missing: ");
			esc(f, c->why);
			fprintf(f, ".</p>\n");
		}
		fprintf(f, "</figure>\n");
	}
}

static void write_hosts(FILE *f, const struct report *r, const struct options *o)
{
	struct host **v = hosts_sorted(r, o->sort);
	size_t rows =
	        o->host_rows && (size_t)o->host_rows < r->nhosts ? (size_t)o->host_rows : r->nhosts;

	fprintf(f, "<h2>Hosts</h2>\n<table id=\"hosts\"><tr>");
	for (int c = 0; c < COL_COUNT; c++)
		fprintf(f, "<th>%s</th>", column_name((enum host_column)c));
	fprintf(f, "</tr>\n");
	for (size_t i = 0; i < rows; i++) {
		const struct host *h = v[i];
		fprintf(f, "<tr><td>");
		esc(f, h->key);
		fprintf(f,
		        "</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td>"
		        "<td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%.1f</td>"
		        "<td>%.1f</td></tr>\n",
		        (unsigned long long)h->requests, (unsigned long long)h->bytes,
		        (unsigned long long)h->ok, (unsigned long long)h->errors,
		        (unsigned long long)h->robots_refused, (unsigned long long)h->status429,
		        (unsigned long long)h->cooldowns, (unsigned long long)h->not_modified,
		        (unsigned long long)h->throttles, h->p50, h->p95);
	}
	fprintf(f, "</table>\n");
	if (rows < r->nhosts)
		fprintf(f, "<p>%zu more hosts (--hosts 0 shows all).</p>\n", r->nhosts - rows);
	free(v);
}

static void write_rounds(FILE *f, const struct report *r)
{
	if (!r->nrounds)
		return;
	fprintf(f, "<h2>Rounds</h2>\n<table><tr><th>round</th><th>requests</th>"
	           "<th>first</th><th>last</th><th>hosts</th><th>finished last</th>"
	           "<th>the rest waited (s)</th></tr>\n");
	for (size_t i = 0; i < r->nrounds; i++) {
		const struct round *rd = &r->rounds[i];
		char a[SC_RFC3339_LEN], b[SC_RFC3339_LEN];
		sc_rfc3339((int64_t)rd->first_ms, a);
		sc_rfc3339((int64_t)rd->last_ms, b);
		fprintf(f, "<tr><td>%ld</td><td>%llu</td><td>%s</td><td>%s</td><td>%zu</td><td>",
		        rd->number, (unsigned long long)rd->requests, a, b, rd->nhosts);
		for (size_t j = 0; j < rd->nhosts && j < ROUND_LAST_HOSTS; j++) {
			fputs(j ? ", " : "", f);
			esc(f, rd->hosts[j].host->key);
		}
		fprintf(f, "</td><td class=\"round-waited\">%.1f</td></tr>\n",
		        round_waited_ms(rd) / 1000.0);
	}
	fprintf(f, "</table>\n");
}

static void write_page(FILE *f, const struct report *r, const struct options *o,
                       const struct charts *c)
{
	fprintf(f,
	        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	        "<title>sc-report</title><style>%s</style></head><body>\n"
	        "<h1>sc-report</h1>\n",
	        style);
	if (r->t.requests == 0)
		fprintf(f, "<p class=\"missing\">No request lines in the input.</p>\n");
	write_summary(f, r);
	write_charts(f, c);
	write_status(f, r);
	write_rounds(f, r);
	write_hosts(f, r, o);
	fprintf(f, "</body></html>\n");
}

int html_write(const char *path, const struct report *r, const struct options *o)
{
	struct charts c;
	size_t tmplen = strlen(path) + 32;
	char *tmp = sc_malloc(tmplen);

	charts_draw(r, &c);
	if (!c.svg[0] || !c.svg[CH_COUNT - 1])
		sc_warn("%s: charts missing: %s", path, c.why);
	snprintf(tmp, tmplen, "%s.tmp%ld", path, (long)getpid());
	int rc = 0;
	FILE *f = fopen(tmp, "w");
	if (f) {
		write_page(f, r, o, &c);
		if ((ferror(f) | fclose(f)) != 0 || rename(tmp, path) != 0) {
			sc_warn("%s:", path);
			(void)unlink(tmp);
			rc = -1;
		}
	} else {
		sc_warn("%s:", tmp);
		rc = -1;
	}
	charts_free(&c);
	free(tmp);
	return rc;
}
