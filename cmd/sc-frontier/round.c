/* One run over the input: pages (or seeds) in, the next round's URLs out.
 *
 * Each link becomes a candidate: canonical form first (lib/url), then the
 * cheap verdicts that need no lookup (depth, scope, --allow/--deny), then
 * a 128-bit key, XXH3-128 of the canonical URL.  Candidates gather in a
 * batch.  A batch is decided in one transaction: in key order against the
 * seen set (so the B-tree is walked in order, and equal keys in the batch
 * sit side by side), then in input order for --max-per-host and the
 * output, so the output keeps the order of the input and the first
 * occurrence of a URL is the one emitted.  The batch's URL records are
 * written whole, then the batch is freed: memory is bounded by the batch,
 * never by the input or the set. */
#include <jansson.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "buf.h"
#include "cli.h"
#include "frontier.h"
#include "input.h"
#include "jsonscan.h"
#include "lines.h"
#include "signals.h"
#include "url.h"
#include "util.h"

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
	size_t batch_max, batch_bytes; /* this batch's bounds (see BATCH_MAX) */
	size_t bytes;                  /* of the pages' strings the batch holds */
	struct keyed *order, *sorting; /* sorting: order's scratch, for the sort */
	uint32_t *bucket;              /* BUCKETS counts, for the sort */
	/* Per candidate, in input order: in no seen set, so emitted unless
	 * --max-per-host refuses.  Apart from the candidates, as the walk in
	 * key order sets them at random: a byte each stays in the cache. */
	bool *fresh;
	struct recent *recent; /* RECENT_SLOTS of them */
	char *buf;
	size_t len, cap;
};

/* ---- output ---- */

static void buf_add(struct run *r, const char *s, size_t n)
{
	if (r->len + n > r->cap) {
		while (r->len + n > r->cap)
			r->cap = r->cap ? r->cap * 2 : OUT_FLUSH * 2;
		r->buf = sc_realloc(r->buf, r->cap);
	}
	memcpy(r->buf + r->len, s, n);
	r->len += n;
}

/* A JSON string; s is valid UTF-8 (canonical URLs are ASCII, and the rest
 * comes from JSON input). */
static void buf_json_string(struct run *r, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run_start = 0;

	buf_add(r, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		buf_add(r, s + run_start, i - run_start);
		if (ch == '"' || ch == '\\') {
			char e[2] = { '\\', (char)ch };
			buf_add(r, e, 2);
		} else {
			char e[6] = { '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };
			buf_add(r, e, 6);
		}
		run_start = i + 1;
	}
	buf_add(r, s + run_start, n - run_start);
	buf_add(r, "\"", 1);
}

/* Writes out the whole lines gathered so far: a second signal waits until
 * they are written, so the next stage never sees half a record. */
static int flush_out(struct run *r)
{
	int rc = 0;

	if (r->len == 0)
		return 0;
	sc_signals_write_begin();
	if (fwrite(r->buf, 1, r->len, r->out) != r->len || fflush(r->out) != 0)
		rc = -1;
	sc_signals_write_end();
	r->len = 0;
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
	char depth[32];

	buf_add(r, "{\"url\":", 7);
	buf_json_string(r, url, strlen(url));
	int n = snprintf(depth, sizeof(depth), ",\"depth\":%ld,\"seed\":", p->depth);
	buf_add(r, depth, (size_t)n);
	if (p->seed)
		buf_json_string(r, p->seed, strlen(p->seed));
	else
		buf_json_string(r, url, strlen(url)); /* a seed is its own */
	buf_add(r, ",\"from\":", 8);
	if (p->from)
		buf_json_string(r, p->from, strlen(p->from));
	else
		buf_add(r, "null", 4);
	buf_add(r, ",\"host\":", 8);
	buf_json_string(r, url + k->host_off, k->host_len);
	buf_add(r, "}\n", 2);
	r->c->emitted++;
	return r->len >= OUT_FLUSH ? flush_out(r) : 0;
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

static int decide(struct run *r)
{
	const struct options *o = r->o;
	struct seen *s = r->seen;
	size_t n = r->ncand;
	enum where where;

	uint8_t key[KEY_LEN];

	if (n >= BUCKETS / 4)
		sort_keys(r, n);
	else
		qsort(r->order, n, sizeof(*r->order), by_key);
	if (seen_begin(s) < 0)
		return -1;
	/* Key order: each key once, against the set. */
	for (size_t i = 0; i < n; i++) {
		const struct keyed *k = &r->order[i];
		/* The slots ahead, fetched while this key is looked up. */
		if (i + 16 < n)
			__builtin_prefetch(&r->recent[r->order[i + 16].lo & (RECENT_SLOTS - 1)]);
		if (i > 0 && same_key(k, k - 1)) {
			r->c->reason[R_REPEATED]++;
			continue;
		}
		if (!(where = recent_find(r, k))) {
			key_bytes(k, key);
			if (o->mode == MODE_COMMIT) {
				/* Added now, counted below: one B-tree walk. */
				bool inserted;
				if (seen_insert(s, key, &inserted) < 0)
					return -1;
				where = inserted ? NOWHERE : IN_SET;
			} else if (seen_has(s, key, &where) < 0) {
				return -1;
			}
			if (where)
				recent_put(r, k, where);
		}
		r->fresh[k->index] = where == NOWHERE;
		if (where)
			r->c->reason[where == IN_SET ? R_SEEN : R_REPEATED]++;
	}
	/* Input order: the per-host limit, and the output. */
	struct tally t = { 0 };
	for (size_t i = 0; i < n; i++) {
		struct cand *k = &r->cand[i];
		if (!r->fresh[i])
			continue;
		const char *host = cand_url(r, k) + k->host_off;
		if (t.added && (t.len != k->host_len || memcmp(t.host, host, t.len) != 0) &&
		    tally_flush(s, &t) < 0)
			return -1;
		if (!t.added) {
			t.host = host;
			t.len = k->host_len;
			t.before = 0;
			if (o->max_per_host >= 0 && seen_host_count(s, host, t.len, &t.before) < 0)
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
	if (tally_flush(s, &t) < 0)
		return -1;
	/* Key order again: this run's set grows in order. */
	for (size_t i = 0; i < n; i++) {
		if (o->mode == MODE_COMMIT || !r->fresh[r->order[i].index])
			continue;
		key_bytes(&r->order[i], key);
		if (seen_add(s, key) < 0)
			return -1;
		recent_put(r, &r->order[i], IN_RUN);
	}
	return seen_end(s);
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

static int run_batch(struct run *r)
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

/* ---- candidates ---- */

static bool matches_any(const regex_t *re, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (regexec(&re[i], s, 0, NULL, 0) == 0)
			return true;
	return false;
}

/* The reference a scope compares with, from the canonical seed: its host,
 * registrable domain or directory.  NULL for --scope any. */
static char *scope_key(enum scope scope, const struct sc_url *seed)
{
	char *host;

	switch (scope) {
	case SCOPE_HOST:
		return sc_url_host(seed);
	case SCOPE_DOMAIN:
		host = sc_url_host(seed);
		char *domain = sc_url_registrable_domain(host);
		free(host);
		return domain;
	case SCOPE_PREFIX:
		return sc_url_directory(seed);
	case SCOPE_ANY:
		break;
	}
	return NULL;
}

static bool in_scope(enum scope scope, const char *key, const struct sc_url *u)
{
	const char *host = u->url + u->host_off;
	bool in;

	if (scope == SCOPE_ANY)
		return true;
	if (!key)
		return false;
	if (scope == SCOPE_PREFIX)
		return strncmp(u->url, key, strlen(key)) == 0;
	if (strlen(key) == u->host_len && memcmp(host, key, u->host_len) == 0)
		return true;
	if (scope == SCOPE_HOST)
		return false;
	char *h = sc_url_host(u), *domain = sc_url_registrable_domain(h);
	in = strcmp(domain, key) == 0;
	free(h);
	free(domain);
	return in;
}

/* Pages whose links were all refused hold no candidate, but their strings
 * count too: a batch is decided before it outgrows its bounds. */
static bool full(const struct run *r)
{
	return r->npages >= r->batch_max || r->bytes + r->urls.len >= r->batch_bytes;
}

/* One link of page p (the last page added): a candidate, or a reason. */
static int add_link(struct run *r, const char *link, const char *base, const char *key)
{
	const struct options *o = r->o;
	struct cand *k = &r->cand[r->ncand];
	struct sc_url u; /* a view of the URL in r->urls: nothing to free */
	const char *error;
	size_t at, before = r->urls.len;

	r->c->links++;
	if (sc_url_canonical_buf(link, base, o->strip_query, &r->urls, &at, &u, &error) < 0) {
		r->c->reason[strcmp(error, "not http or https") == 0 ? R_NOT_HTTP : R_NOT_URL]++;
		return 0;
	}
	u.url = r->urls.p + at;
	size_t len = r->urls.len - 1 - at;
	enum reason why = R_COUNT;
	if (len > UINT32_MAX)
		why = R_NOT_URL; /* no line is this long; the offsets are 32 bits */
	else if (o->mode == MODE_LINKS && !in_scope(o->scope, key, &u))
		why = R_SCOPE;
	else if (matches_any(o->deny, o->ndeny, u.url))
		why = R_DENIED;
	else if (o->nallow && !matches_any(o->allow, o->nallow, u.url))
		why = R_NOT_ALLOWED;
	if (why != R_COUNT) {
		r->c->reason[why]++;
		sc_buf_truncate(&r->urls, before);
		return 0;
	}
	XXH128_hash_t h = XXH3_128bits(u.url, len);
	r->order[r->ncand] = (struct keyed){ h.high64, h.low64, (uint32_t)r->ncand };
	*k = (struct cand){ .at = at,
		            .host_off = (uint32_t)u.host_off,
		            .host_len = (uint32_t)u.host_len,
		            .page = (uint32_t)(r->npages - 1) };
	r->fresh[r->ncand] = false;
	if (++r->ncand == r->batch_max || full(r))
		return run_batch(r);
	return 0;
}

static struct page *new_page(struct run *r)
{
	if (r->npages == r->cap_pages) {
		r->cap_pages = r->cap_pages ? r->cap_pages * 2 : 256;
		r->pages = sc_realloc(r->pages, r->cap_pages * sizeof(*r->pages));
	}
	struct page *p = &r->pages[r->npages++];
	memset(p, 0, sizeof(*p));
	return p;
}

static const char *member_string(const json_t *rec, const char *name)
{
	return json_string_value(json_object_get(rec, name));
}

/* A page record: its links, with depth and seed carried over. */
static int add_page(struct run *r, const struct sc_lines *in, const struct sc_line *line,
                    const json_t *rec)
{
	const struct options *o = r->o;
	const json_t *links = json_object_get(rec, o->links),
	             *depth_j = json_object_get(rec, "depth");
	const char *url = member_string(rec, "url"), *seed = member_string(rec, "seed");
	const char *base = member_string(rec, "final_url");
	struct sc_url seed_url = { 0 };
	const char *error;
	char *key = NULL;
	int rc = 0;

	r->c->pages++;
	if (!json_is_array(links)) {
		if (links && !json_is_null(links)) {
			sc_warn("%s:%zu: \"%s\" is not an array", sc_lines_name(in), line->number,
			        o->links);
			r->c->malformed++;
		}
		return 0;
	}
	/* A link is one deeper than its page; a page without a depth is a
	 * seed, at depth 0. */
	long depth = (json_is_integer(depth_j) && json_integer_value(depth_j) >= 0
	                      ? (long)json_integer_value(depth_j)
	                      : 0) +
	             1;
	if (o->max_depth >= 0 && depth > o->max_depth) {
		r->c->links += json_array_size(links);
		r->c->reason[R_DEPTH] += json_array_size(links);
		return 0;
	}
	/* A page without a seed is a seed itself. */
	if ((seed && sc_url_canonical(seed, NULL, o->strip_query, &seed_url, &error) == 0) ||
	    (url && sc_url_canonical(url, NULL, o->strip_query, &seed_url, &error) == 0))
		key = scope_key(o->scope, &seed_url);
	size_t i;
	const json_t *link;
	bool have_page = false;
	json_array_foreach(links, i, link)
	{
		if (!json_is_string(link)) {
			r->c->links++;
			r->c->reason[R_NOT_URL]++;
			continue;
		}
		/* The page's entry, made again when a batch decided in the
		 * middle of its links took the earlier one. */
		if (!have_page || r->npages == 0) {
			if (full(r) && (rc = run_batch(r)) < 0)
				break;
			struct page *p = new_page(r);
			have_page = true;
			p->depth = depth;
			p->from = url ? sc_strdup(url) : NULL;
			p->seed = seed_url.url ? sc_strdup(seed_url.url) : NULL;
			r->bytes +=
			        (url ? strlen(url) : 0) + (seed_url.url ? strlen(seed_url.url) : 0);
		}
		if ((rc = add_link(r, json_string_value(link), base ? base : url, key)) < 0)
			break;
	}
	sc_url_free(&seed_url);
	free(key);
	return rc;
}

/* A seed, or in --commit mode a URL record: the URL, at depth 0. */
static int add_seed(struct run *r, const char *url)
{
	if (full(r) && run_batch(r) < 0)
		return -1;
	new_page(r); /* no from, its own seed, depth 0 */
	return add_link(r, url, NULL, NULL);
}

/* ---- the input loop ---- */

/* True when the next read would wait for a slow producer: the batch so far
 * is decided first, so that the output is not held back (--commit writes
 * no output, and keeps its batches whole). */
static bool would_block(const struct sc_lines *in)
{
	struct pollfd pfd = { .fd = sc_lines_fd(in), .events = POLLIN };

	return !sc_lines_buffered(in) && poll(&pfd, 1, 0) == 0;
}

static int one_line(struct run *r, const struct sc_lines *in, const struct sc_line *line,
                    struct sc_jsonscan *fast)
{
	struct sc_input_item item;
	size_t skip = 0;
	int rc = 0;

	while (skip < line->len && (line->text[skip] == ' ' || line->text[skip] == '\t'))
		skip++;
	if (r->o->mode != MODE_LINKS && skip < line->len && line->text[skip] != '{' &&
	    !line->too_long) {
		if (memchr(line->text, '\0', line->len)) {
			sc_warn("%s:%zu: a NUL byte in a URL", sc_lines_name(in), line->number);
			r->c->malformed++;
			return 0;
		}
		return add_seed(r, line->text + skip);
	}
	if (!sc_input_item_from_line(in, line, fast, &item))
		return 0; /* blank */
	if (item.bad) {
		char where[320];
		sc_input_warning(in, &item, where);
		sc_warn("%s", where);
		r->c->malformed++;
	} else if (r->o->mode == MODE_LINKS) {
		rc = add_page(r, in, line, item.rec);
	} else {
		const char *url = member_string(item.rec, "url");
		if (url) {
			rc = add_seed(r, url);
		} else {
			sc_warn("%s:%zu: no \"url\" string", sc_lines_name(in), line->number);
			r->c->malformed++;
		}
	}
	json_decref(item.rec);
	return rc;
}

int round_run(const struct options *o, struct seen *s, int fd, const char *name, FILE *out,
              struct counts *c)
{
	struct run r = { .o = o, .seen = s, .out = out, .c = c };
	struct sc_lines *in = sc_lines_open(fd, name);
	struct sc_jsonscan fast = { 0 };
	struct sc_line line;
	int rc = 0, got;

	if (!in)
		sc_die(1, "out of memory");
	r.cand = sc_calloc(BATCH_MAX, sizeof(*r.cand));
	r.order = sc_calloc(BATCH_MAX, sizeof(*r.order));
	r.sorting = sc_calloc(BATCH_MAX, sizeof(*r.sorting));
	r.bucket = sc_calloc(BUCKETS, sizeof(*r.bucket));
	r.fresh = sc_calloc(BATCH_MAX, sizeof(*r.fresh));
	r.recent = sc_calloc(RECENT_SLOTS, sizeof(*r.recent));
	sc_buf_init(&r.urls, SIZE_MAX / 2);
	size_bounds(&r);
	while ((got = sc_lines_next(in, &line)) > 0) {
		if ((rc = one_line(&r, in, &line, &fast)) < 0)
			break;
		if (r.ncand && o->mode != MODE_COMMIT && would_block(in) &&
		    (rc = run_batch(&r)) < 0)
			break;
	}
	if (got < 0) {
		sc_warn("reading %s:", fd == STDIN_FILENO ? "standard input" : name);
		rc = -1;
	}
	if (rc == 0)
		rc = run_batch(&r);
	free_batch(&r);
	sc_jsonscan_free(&fast);
	sc_lines_close(in);
	free(r.cand);
	free(r.order);
	free(r.sorting);
	free(r.bucket);
	free(r.fresh);
	free(r.recent);
	sc_buf_free(&r.urls);
	free(r.pages);
	free(r.buf);
	return rc;
}
