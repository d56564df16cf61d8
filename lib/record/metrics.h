/* metrics: one JSON object per line on a metrics stream, and a latency
 * histogram that answers p50/p95/p99 without keeping every sample.
 *
 * The histogram is log-linear, as HdrHistogram is: values below 128 are
 * exact, above that each power of two is split into 64 buckets, so any
 * percentile is within 1/64 (1.6 %) of the true sample.  It holds values
 * up to 2^40 in whatever unit the caller uses (microseconds here: 12 days). */
#ifndef SC_METRICS_H
#define SC_METRICS_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#define SC_HIST_SUB_BITS 6
#define SC_HIST_MAX_BITS 40
#define SC_HIST_BUCKETS ((SC_HIST_MAX_BITS - SC_HIST_SUB_BITS + 1) << SC_HIST_SUB_BITS)

struct sc_hist {
	uint64_t count;
	uint64_t max;
	double sum;
	uint64_t buckets[SC_HIST_BUCKETS];
};

void sc_hist_init(struct sc_hist *h);
void sc_hist_add(struct sc_hist *h, uint64_t value);
/* Adds every sample of from into into. */
void sc_hist_merge(struct sc_hist *into, const struct sc_hist *from);
/* The value at percentile p (0..100): a bucket's midpoint, capped at max.
 * 0 when the histogram is empty. */
uint64_t sc_hist_percentile(const struct sc_hist *h, double p);

/* Writes obj as one compact line to out and flushes it; obj is borrowed.
 * Returns 0, or -1 on a write error. */
int sc_metrics_write(FILE *out, const json_t *obj);

#endif
