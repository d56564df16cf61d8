/* A batch through the seen set: the candidates sorted by key and looked
 * up in one transaction, in key order (so the B-tree is walked in order,
 * and equal keys in the batch sit side by side), then taken in input order
 * for --max-per-host and the output, so the output keeps the order of the
 * input and the first occurrence of a URL is the one emitted.  The batch's
 * URL records are written whole, then the batch is freed. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/jsonstr.h"

/* Candidates per batch: the larger the batch, the more its probes in key
 * order share B-tree pages (131,072 halves the CPU time of 32,768 against
 * a set of millions), the more memory it takes (about 150 bytes each, and
 * at most BATCH_BYTES of URLs, however long they are).  That pays only
 * against a set larger than its page cache, which each batch then reads
 * once: against a smaller one (a crawl's first hundred thousand URLs)
 * batches stay SMALL_BATCH_MAX and SMALL_BATCH_BYTES, so that a crawl's
 * memory does not grow with its rounds until the set is large. */
#define BATCH_MAX 131072
#define BATCH_BYTES (12u << 20)
#define SMALL_BATCH_MAX 16384
#define SMALL_BATCH_BYTES (3u << 20)
/* Output is written when this much has piled up, and at each batch's end. */
#define OUT_FLUSH (64 * 1024)

/* ---- output ---- */

/* A JSON string in the form every program writes (lib/record/jsonstr).
 * It cannot fail: the output buffer has no maximum to pass (batch_open),
 * and the strings are UTF-8 (canonical URLs are ASCII, and the rest came
 * in as JSON). */
static void out_quoted(struct run *r, const char *s, size_t n)
{
	(void)sc_jsonstr_quoted(&r->out_buf, s, n);
}

static void out_add(struct run *r, const char *s, size_t n)
{
	(void)sc_buf_add(&r->out_buf, s, n);
}

/* Writes out the whole lines gathered so far: a second signal waits until
 * they are written, so the next stage never sees half a record. */
static int flush_out(struct run *r)
{
	struct sc_buf *b = &r->out_buf;
	int rc = 0;

	if (b->len == 0)
		return 0;
	sc_signals_write_begin();
	if (fwrite(b->p, 1, b->len, r->out) != b->len || fflush(r->out) != 0)
		rc = -1;
	sc_signals_write_end();
	sc_buf_reset(b);
	/* Nothing is committed to the seen set after a failed write: exit
	 * now (a closed pipe quietly, 141; anything else with its message). */
	if (rc < 0)
		sc_die_write("error writing standard output:");
	return rc;
}

static const char *cand_url(const struct run *r, const struct cand *k)
{
	return r->urls.p + k->at;
}

static int emit(struct run *r, const struct cand *k)
{
	const struct page *p = &r->pages[k->page];
	const char *url = cand_url(r, k);
	size_t url_len = strlen(url);
	char depth[32];

	out_add(r, "{\"url\":", 7);
	out_quoted(r, url, url_len);
	int n = snprintf(depth, sizeof(depth), ",\"depth\":%ld,\"seed\":", p->depth);
	out_add(r, depth, (size_t)n);
	if (p->seed)
		out_quoted(r, p->seed, strlen(p->seed));
	else
		out_quoted(r, url, url_len); /* a seed is its own */
	out_add(r, ",\"from\":", 8);
	if (p->from)
		out_quoted(r, p->from, strlen(p->from));
	else
		out_add(r, "null", 4);
	out_add(r, ",\"host\":", 8);
	out_quoted(r, url + k->host_off, k->host_len);
	out_add(r, "}\n", 2);
	r->c->emitted++;
	return r->out_buf.len >= OUT_FLUSH ? flush_out(r) : 0;
}

/* ---- a batch through the seen set ---- */

/* A cache of keys known to be in the set, so that the links every page
 * has (the navigation, the index) cost no lookup after the first: exact,
 * as only keys found in the set or added to it are cached, and the set
 * only grows during a run.  Direct-mapped by the key's low bits. */
#define RECENT_SLOTS (1u << 16)

struct recent {
	uint64_t hi, lo;
	enum where where; /* NOWHERE: an empty slot */
};

static enum where recent_find(const struct run *r, const struct keyed *k)
{
	const struct recent *slot = &r->recent[k->lo & (RECENT_SLOTS - 1)];

	return slot->hi == k->hi && slot->lo == k->lo ? slot->where : NOWHERE;
}

static void recent_put(struct run *r, const struct keyed *k, enum where where)
{
	r->recent[k->lo & (RECENT_SLOTS - 1)] = (struct recent){ k->hi, k->lo, where };
}

/* The sort of a batch in key order, the first occurrence of a key first:
 * the keys are hashes, spread evenly, so a stable counting sort on their
 * top bits leaves buckets of a key or two, which an insertion sort
 * finishes (stable too).  Several times faster than qsort on 131,072. */
#define BUCKET_BITS 16
#define BUCKETS (1u << BUCKET_BITS)

static bool key_less(const struct keyed *x, const struct keyed *y)
{
	return x->hi < y->hi || (x->hi == y->hi && x->lo < y->lo);
}

static void sort_keys(struct run *r, size_t n)
{
	struct keyed *in = r->order, *out = r->sorting;
	uint32_t *count = r->bucket, sum = 0;

	memset(count, 0, BUCKETS * sizeof(*count));
	for (size_t i = 0; i < n; i++)
		count[in[i].hi >> (64 - BUCKET_BITS)]++;
	for (size_t b = 0; b < BUCKETS; b++) {
		uint32_t c = count[b];
		count[b] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		out[count[in[i].hi >> (64 - BUCKET_BITS)]++] = in[i];
	/* Insertion sort: each key moves only within its bucket. */
	for (size_t i = 1; i < n; i++) {
		struct keyed k = out[i];
		size_t j = i;
		while (j > 0 && key_less(&k, &out[j - 1])) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = k;
	}
	r->order = out;
	r->sorting = in;
}

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static bool same_key(const struct keyed *x, const struct keyed *y)
{
	return x->hi == y->hi && x->lo == y->lo;
}

/* The key as stored: big-endian, so that SQLite's memcmp order is ours. */
static void key_bytes(const struct keyed *k, uint8_t out[KEY_LEN])
{
	for (int i = 0; i < 8; i++) {
		out[i] = (uint8_t)(k->hi >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(k->lo >> (56 - 8 * i));
	}
}

static void free_batch(struct run *r)
{
	sc_buf_reset(&r->urls);
	for (size_t i = 0; i < r->npages; i++) {
		free(r->pages[i].from);
		free(r->pages[i].seed);
	}
	r->ncand = r->npages = 0;
	r->bytes = 0;
}

/* The URLs emitted for one host, added to its count in one step when the
 * next URL is another host's: a round's links come host by host. */
struct tally {
	const char *host; /* borrowed from a candidate */
	size_t len;
	long before; /* its count before, when --max-per-host needs it */
	long added;  /* emitted since */
};

static int tally_flush(struct seen *s, struct tally *t)
{
	int rc = t->added ? seen_host_add(s, t->host, t->len, t->added) : 0;

	t->added = 0;
	return rc;
}

/* The batch in key order: a counting sort when it is large, qsort else. */
static void sort_batch(struct run *r)
{
	if (r->ncand >= BUCKETS / 4)
		sort_keys(r, r->ncand);
	else
		qsort(r->order, r->ncand, sizeof(*r->order), by_key);
}

/* Where k is: in the set, met in this run, or NOWHERE (new).  With
 * --commit a new key is added now, one B-tree walk, and counted below as
 * new.  Returns 0, or -1 (the set's error). */
static int where_is(struct run *r, const struct keyed *k, enum where *where)
{
	uint8_t key[KEY_LEN];

	if ((*where = recent_find(r, k)))
		return 0;
	key_bytes(k, key);
	if (r->o->mode == MODE_COMMIT) {
		bool inserted;
		if (seen_insert(r->seen, key, &inserted) < 0)
			return -1;
		*where = inserted ? NOWHERE : IN_SET;
	} else if (seen_has(r->seen, key, where) < 0) {
		return -1;
	}
	if (*where)
		recent_put(r, k, *where);
	return 0;
}

/* Key order: each key once, against the set; r->fresh says which are
 * new.  Returns 0, or -1. */
static int look_up(struct run *r)
{
	size_t n = r->ncand;
	enum where where;

	for (size_t i = 0; i < n; i++) {
		const struct keyed *k = &r->order[i];
		/* The slots ahead, fetched while this key is looked up. */
		if (i + 16 < n)
			__builtin_prefetch(&r->recent[r->order[i + 16].lo & (RECENT_SLOTS - 1)]);
		if (i > 0 && same_key(k, k - 1)) {
			r->c->reason[R_REPEATED]++;
			continue;
		}
		if (where_is(r, k, &where) < 0)
			return -1;
		r->fresh[k->index] = where == NOWHERE;
		if (where)
			r->c->reason[where == IN_SET ? R_SEEN : R_REPEATED]++;
	}
	return 0;
}

/* Input order: --max-per-host, and the output (none with --commit).
 * Returns 0, -1 (the set's error) or -2 (the output's). */
static int take_in_order(struct run *r)
{
	const struct options *o = r->o;
	struct tally t = { 0 };

	for (size_t i = 0; i < r->ncand; i++) {
		struct cand *k = &r->cand[i];
		if (!r->fresh[i])
			continue;
		const char *host = cand_url(r, k) + k->host_off;
		if (t.added && (t.len != k->host_len || memcmp(t.host, host, t.len) != 0) &&
		    tally_flush(r->seen, &t) < 0)
			return -1;
		if (!t.added) {
			t.host = host;
			t.len = k->host_len;
			t.before = 0;
			if (o->max_per_host >= 0 &&
			    seen_host_count(r->seen, host, t.len, &t.before) < 0)
				return -1;
		}
		if (o->max_per_host >= 0 && t.before + t.added >= o->max_per_host) {
			r->fresh[i] = false;
			r->c->reason[R_PER_HOST]++;
			continue;
		}
		t.added++;
		if (o->mode != MODE_COMMIT && emit(r, k) < 0)
			return -2;
	}
	return tally_flush(r->seen, &t) < 0 ? -1 : 0;
}

/* Key order again, so that this run's set grows in order: the new keys
 * taken added (--commit added them as it looked).  Returns 0, or -1. */
static int add_taken(struct run *r)
{
	uint8_t key[KEY_LEN];

	if (r->o->mode == MODE_COMMIT)
		return 0;
	for (size_t i = 0; i < r->ncand; i++) {
		if (!r->fresh[r->order[i].index])
			continue;
		key_bytes(&r->order[i], key);
		if (seen_add(r->seen, key) < 0)
			return -1;
		recent_put(r, &r->order[i], IN_RUN);
	}
	return 0;
}

/* The batch against the seen set, in one transaction.  Returns 0, -1
 * (the set's error) or -2 (the output's). */
static int decide(struct run *r)
{
	int rc;

	sort_batch(r);
	if (seen_begin(r->seen) < 0 || look_up(r) < 0)
		return -1;
	if ((rc = take_in_order(r)) < 0)
		return rc;
	if (add_taken(r) < 0)
		return -1;
	return seen_end(r->seen);
}

/* The next batch's bounds, from the set's size now (it grows as batches
 * are added: a --commit of millions starts small and ends large). */
static void size_bounds(struct run *r)
{
	/* The set only grows during a run: once large, it need not be asked
	 * again (four PRAGMAs, after every batch, however small). */
	bool large = r->batch_max == BATCH_MAX || seen_larger_than_cache(r->seen);

	r->batch_max = large ? BATCH_MAX : SMALL_BATCH_MAX;
	r->batch_bytes = large ? BATCH_BYTES : SMALL_BATCH_BYTES;
}

int batch_run(struct run *r)
{
	int rc = r->ncand ? decide(r) : 0;

	if (rc == -1)
		sc_warn("%s", seen_error(r->seen));
	if (rc == 0)
		rc = flush_out(r);
	free_batch(r);
	size_bounds(r);
	return rc < 0 ? -1 : 0;
}

bool batch_full(const struct run *r)
{
	/* Pages whose links were all refused hold no candidate, but their
	 * strings count too. */
	return r->npages >= r->batch_max || r->bytes + r->urls.len >= r->batch_bytes;
}

void batch_open(struct run *r)
{
	r->cand = sc_calloc(BATCH_MAX, sizeof(*r->cand));
	r->order = sc_calloc(BATCH_MAX, sizeof(*r->order));
	r->sorting = sc_calloc(BATCH_MAX, sizeof(*r->sorting));
	r->bucket = sc_calloc(BUCKETS, sizeof(*r->bucket));
	r->fresh = sc_calloc(BATCH_MAX, sizeof(*r->fresh));
	r->recent = sc_calloc(RECENT_SLOTS, sizeof(*r->recent));
	sc_buf_init(&r->urls, SIZE_MAX / 2);
	sc_buf_init(&r->out_buf, SIZE_MAX / 2);
	size_bounds(r);
}

void batch_close(struct run *r)
{
	free_batch(r);
	free(r->cand);
	free(r->order);
	free(r->sorting);
	free(r->bucket);
	free(r->fresh);
	free(r->recent);
	sc_buf_free(&r->urls);
	free(r->pages);
	sc_buf_free(&r->out_buf);
}
