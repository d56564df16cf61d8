#include "record/metrics.h"

#include <string.h>

#include "record/record.h"

#define SUB_COUNT (1u << SC_HIST_SUB_BITS)

void sc_hist_init(struct sc_hist *h)
{
	memset(h, 0, sizeof(*h));
}

static unsigned bucket_of(uint64_t v)
{
	unsigned top, shift;

	if (v < 2 * SUB_COUNT)
		return (unsigned)v;
	top = 63u - (unsigned)__builtin_clzll(v); /* index of the highest set bit */
	if (top >= SC_HIST_MAX_BITS)
		return SC_HIST_BUCKETS - 1;
	shift = top - SC_HIST_SUB_BITS;
	/* (v >> shift) is in [SUB_COUNT, 2*SUB_COUNT): its low bits pick the
	 * sub-bucket within this power of two. */
	return (top - SC_HIST_SUB_BITS) * SUB_COUNT + (unsigned)(v >> shift);
}

/* The smallest value in bucket b, and its width. */
static void bucket_range(unsigned b, uint64_t *low, uint64_t *width)
{
	if (b < 2 * SUB_COUNT) {
		*low = b;
		*width = 1;
		return;
	}
	unsigned shift = b / SUB_COUNT - 1;
	uint64_t sub = b % SUB_COUNT + SUB_COUNT;
	*low = sub << shift;
	*width = (uint64_t)1 << shift;
}

void sc_hist_add(struct sc_hist *h, uint64_t value)
{
	h->buckets[bucket_of(value)]++;
	h->count++;
	h->sum += (double)value;
	if (value > h->max)
		h->max = value;
}

void sc_hist_merge(struct sc_hist *into, const struct sc_hist *from)
{
	for (unsigned b = 0; b < SC_HIST_BUCKETS; b++)
		into->buckets[b] += from->buckets[b];
	into->count += from->count;
	into->sum += from->sum;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t sc_hist_percentile(const struct sc_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	if (p <= 0)
		p = 0;
	if (p >= 100)
		return h->max;
	/* The sample of rank ceil(p% of count), 1-based: the nearest-rank method. */
	rank = (uint64_t)((p / 100.0) * (double)h->count + 0.9999999);
	if (rank == 0)
		rank = 1;
	for (unsigned b = 0; b < SC_HIST_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			uint64_t low, width;
			bucket_range(b, &low, &width);
			uint64_t mid = low + width / 2;
			return mid > h->max ? h->max : mid;
		}
	}
	return h->max;
}

int sc_metrics_write(FILE *out, const json_t *obj)
{
	return sc_record_write(out, obj);
}
