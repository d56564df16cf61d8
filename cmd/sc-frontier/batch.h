/* A batch of candidate URLs, and the run that gathers them: round.c adds
 * pages and candidates, batch.c decides a batch against the seen set and
 * writes its URL records.  The run owns every array here (batch_open
 * allocates them, batch_close frees them); a batch's pages and URLs are
 * freed when it has been decided. */
#ifndef SC_FRONTIER_BATCH_H
#define SC_FRONTIER_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "frontier.h"

struct page {
	char *from; /* the page's "url", or NULL */
	char *seed; /* the canonical seed URL, or NULL when there is none */
	long depth; /* the depth of its links */
};

/* A candidate's canonical URL is in the batch's one buffer of URLs
 * (r->urls), not a string of its own: a batch holds 131,072 of them. */
struct cand {
	size_t at;                   /* the URL: r->urls.p + at, NUL-terminated */
	uint32_t host_off, host_len; /* its host, within the URL */
	uint32_t page;
};

/* A candidate's key, sorted apart from the candidates so that the sort and
 * the walk in key order stay in a small contiguous array. */
struct keyed {
	uint64_t hi, lo; /* XXH3-128 of the canonical URL */
	uint32_t index;  /* the candidate, in input order */
};

struct run {
	const struct options *o;
	struct seen *seen;
	FILE *out;
	struct counts *c;
	struct cand *cand;
	size_t ncand;
	struct page *pages;
	size_t npages, cap_pages;
	struct sc_buf urls;            /* the candidates' URLs, one after another */
	size_t batch_max, batch_bytes; /* this batch's bounds (BATCH_MAX, batch.c) */
	size_t bytes;                  /* of the pages' strings the batch holds */
	struct keyed *order, *sorting; /* sorting: order's scratch, for the sort */
	uint32_t *bucket;              /* BUCKETS counts, for the sort */
	/* Per candidate, in input order: in no seen set, so emitted unless
	 * --max-per-host refuses.  Apart from the candidates, as the walk in
	 * key order sets them at random: a byte each stays in the cache. */
	bool *fresh;
	struct recent *recent; /* RECENT_SLOTS of them */
	struct sc_buf out_buf; /* URL records not yet written (OUT_FLUSH, batch.c) */
};

/* Allocates r's arrays and sets the first batch's bounds; r's o, seen, out
 * and c are set by the caller. */
void batch_open(struct run *r);
void batch_close(struct run *r);
/* Whether the batch is at its bounds: decide it before adding more. */
bool batch_full(const struct run *r);
/* Decides the batch (when it has candidates), writes its URL records,
 * frees it and sets the next one's bounds.  Returns 0, or -1 after a
 * diagnostic. */
int batch_run(struct run *r);

#endif
