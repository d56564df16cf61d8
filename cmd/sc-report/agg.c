/* agg: the figures.  Owns the totals, the hosts (a hash table of them),
 * the timeline's bins and the rounds.  Latencies are kept exactly, one
 * float per request overall and one per request in its host's vector (8
 * bytes a request), so that percentiles are exact.
 *
 * Its host table is its own, not lib/core/strtab's: a host is looked up
 * by the bytes of the metrics line being read (a key and its length, no
 * NUL, no copy made for a host already known), once per request line, and
 * the hosts are an array that the report sorts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/util.h"
#include "report.h"
#include "web/url.h"

void agg_init(struct report *r)
{
	memset(r, 0, sizeof(*r));
	r->hcap = 64;
	r->htab = sc_calloc(r->hcap, sizeof(*r->htab));
	r->hosts = sc_calloc(r->hcap, sizeof(*r->hosts));
	r->tl.width = 1;
	r->tl.bins = sc_calloc(BINS_MAX, sizeof(*r->tl.bins));
}

static void fvec_add(struct fvec *v, float x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->v = sc_realloc(v->v, v->cap * sizeof(*v->v));
	}
	v->v[v->n++] = x;
}

static void moments_add(struct moments *m, double x)
{
	if (m->n == 0 || x < m->min)
		m->min = x;
	if (m->n == 0 || x > m->max)
		m->max = x;
	m->n++;
	m->sum += x;
}

static void rehash(struct report *r)
{
	size_t cap = r->hcap * 2;
	struct host **tab = sc_calloc(cap, sizeof(*tab));

	for (size_t i = 0; i < r->nhosts; i++) {
		size_t b = sc_fnv1a(r->hosts[i]->key, r->hosts[i]->keylen) & (cap - 1);
		while (tab[b])
			b = (b + 1) & (cap - 1);
		tab[b] = r->hosts[i];
	}
	free(r->htab);
	r->htab = tab;
	r->hcap = cap;
	r->hosts = sc_realloc(r->hosts, cap * sizeof(*r->hosts));
}

static struct host *host_for(struct report *r, struct sv key)
{
	size_t b = sc_fnv1a(key.p, key.n) & (r->hcap - 1);

	/* By length: a name may hold a NUL byte (shown cut short, kept apart). */
	for (; r->htab[b]; b = (b + 1) & (r->hcap - 1)) {
		const struct host *h = r->htab[b];
		if (h->keylen == key.n && memcmp(h->key, key.p, key.n) == 0)
			return r->htab[b];
	}
	struct host *h = sc_calloc(1, sizeof(*h));
	h->key = sc_malloc(key.n + 1);
	memcpy(h->key, key.p, key.n);
	h->key[key.n] = '\0';
	h->keylen = key.n;
	r->htab[b] = h;
	r->hosts[r->nhosts++] = h;
	if (r->nhosts * 2 > r->hcap)
		rehash(r);
	return h;
}

static int64_t align_down(int64_t sec, int64_t width)
{
	return sec - ((sec % width) + width) % width;
}

/* Twice as wide bins, so that the span fits again. */
static void timeline_widen(struct timeline *tl)
{
	int64_t width = tl->width * 2;
	int64_t base = align_down(tl->base, width);
	struct bin *merged = sc_calloc(BINS_MAX, sizeof(*merged));
	size_t n = 0;

	for (size_t i = 0; i < tl->n; i++) {
		struct bin *from = &tl->bins[i], *to;
		size_t j = (size_t)((tl->base + (int64_t)i * tl->width - base) / width);
		to = &merged[j];
		to->requests += from->requests;
		to->ok += from->ok;
		to->errors += from->errors;
		to->throttles += from->throttles;
		for (int k = 0; k < SC_CLASSES; k++)
			to->status[k] += from->status[k];
		to->bytes += from->bytes;
		to->ok_sum += from->ok_sum;
		to->err_sum += from->err_sum;
		to->ok_max = fmaxf(to->ok_max, from->ok_max);
		to->err_max = fmaxf(to->err_max, from->err_max);
		n = j + 1;
	}
	free(tl->bins);
	tl->bins = merged;
	tl->base = base;
	tl->width = width;
	tl->n = n;
}

/* Bins the timeline would need to hold sec too. */
static size_t bins_needed(const struct timeline *tl, int64_t sec)
{
	int64_t lo = align_down(sec < tl->base ? sec : tl->base, tl->width);
	int64_t hi = tl->base + (int64_t)tl->n * tl->width;

	if (sec + 1 > hi)
		hi = sec + 1;
	return (size_t)((hi - lo + tl->width - 1) / tl->width);
}

/* The bin of a time, made room for (the timeline grows both ways: the
 * inputs need not come in time order). */
static struct bin *timeline_bin(struct timeline *tl, double ms)
{
	int64_t sec = (int64_t)floor(ms / 1000.0);

	if (tl->n == 0) {
		tl->base = align_down(sec, tl->width);
		tl->n = 1;
	}
	while (bins_needed(tl, sec) > BINS_MAX)
		timeline_widen(tl);
	if (sec < tl->base) {
		size_t shift = (size_t)((tl->base - align_down(sec, tl->width)) / tl->width);
		memmove(tl->bins + shift, tl->bins, tl->n * sizeof(*tl->bins));
		memset(tl->bins, 0, shift * sizeof(*tl->bins));
		tl->base -= (int64_t)shift * tl->width;
		tl->n += shift;
	}
	size_t i = (size_t)((sec - tl->base) / tl->width);
	if (i >= tl->n)
		tl->n = i + 1;
	return &tl->bins[i];
}

double phase_of(const double t[T_COUNT], enum phase ph)
{
	double connected = fmax(t[T_CONNECT], t[T_TLS]);

	switch (ph) {
	case PH_DNS:
		return t[T_DNS];
	case PH_CONNECT:
		return t[T_CONNECT] > 0 ? fmax(0.0, t[T_CONNECT] - t[T_DNS]) : 0.0;
	case PH_TLS:
		return t[T_TLS] > 0 ? fmax(0.0, t[T_TLS] - t[T_CONNECT]) : 0.0;
	case PH_FIRST_BYTE:
		return t[T_TTFB] > 0 ? fmax(0.0, t[T_TTFB] - connected) : 0.0;
	case PH_TRANSFER:
		return t[T_TTFB] > 0 ? fmax(0.0, t[T_TOTAL] - t[T_TTFB]) : 0.0;
	default:
		return 0.0;
	}
}

const char *phase_name(enum phase ph)
{
	static const char *const names[PH_COUNT] = { "dns", "connect", "tls", "first_byte",
		                                     "transfer" };
	return names[ph];
}

static void count_request_host(struct host *h, const struct mline *m)
{
	h->requests++;
	h->bytes += (uint64_t)m->bytes;
	/* robots.txt's requests are apart from ok and errors: its 404 says
	 * "no rules", not that the crawl failed (the crawl's end line agrees). */
	if (m->robots) {
		h->robots_requests++;
	} else if (m->kind < 0) {
		h->ok++;
	} else {
		h->errors++;
		h->kinds[m->kind]++;
	}
	if (m->status == 429) {
		h->status429++;
		h->cooldowns += m->next.n == 5 && memcmp(m->next.p, "again", 5) == 0;
	}
	h->not_modified += m->status == 304;
	fvec_add(&h->lat, (float)m->latency_ms);
}

static void count_request_bin(struct report *r, const struct mline *m)
{
	struct bin *b = timeline_bin(&r->tl, m->ts_ms);
	float lat = (float)m->latency_ms;

	b->requests++;
	b->bytes += (uint64_t)m->bytes;
	b->status[m->status / 100]++;
	if (m->robots) {
		/* neither ok nor an error (count_request_host) */
	} else if (m->kind < 0) {
		b->ok++;
		b->ok_sum += lat;
		b->ok_max = fmaxf(b->ok_max, lat);
	} else {
		b->errors++;
		b->err_sum += lat;
		b->err_max = fmaxf(b->err_max, lat);
	}
}

/* The host's entry in rd: found through the place it had last (the
 * requests of a round come together), else looked for, else added. */
static struct round_host *round_host_for(struct round *rd, struct host *h)
{
	if (h->round_slot < rd->nhosts && rd->hosts[h->round_slot].host == h)
		return &rd->hosts[h->round_slot];
	for (size_t i = 0; i < rd->nhosts; i++)
		if (rd->hosts[i].host == h)
			return &rd->hosts[h->round_slot = i];
	if (rd->nhosts == rd->hosts_cap) {
		rd->hosts_cap = rd->hosts_cap ? rd->hosts_cap * 2 : 16;
		rd->hosts = sc_realloc(rd->hosts, rd->hosts_cap * sizeof(*rd->hosts));
	}
	h->round_slot = rd->nhosts;
	rd->hosts[rd->nhosts] = (struct round_host){ .host = h, .last_ms = 0 };
	return &rd->hosts[rd->nhosts++];
}

static void count_round(struct report *r, long round, double ms, struct host *h)
{
	struct round *rd = NULL;

	for (size_t i = 0; i < r->nrounds; i++)
		if (r->rounds[i].number == round)
			rd = &r->rounds[i];
	if (!rd) {
		r->rounds = sc_realloc(r->rounds, (r->nrounds + 1) * sizeof(*r->rounds));
		rd = &r->rounds[r->nrounds++];
		*rd = (struct round){ .number = round, .first_ms = ms, .last_ms = ms };
	}
	rd->requests++;
	rd->first_ms = fmin(rd->first_ms, ms);
	rd->last_ms = fmax(rd->last_ms, ms);
	struct round_host *rh = round_host_for(rd, h);
	rh->last_ms = fmax(rh->last_ms, ms);
}

double round_waited_ms(const struct round *rd)
{
	return rd->nhosts > 1 ? rd->hosts[0].last_ms - rd->hosts[1].last_ms : 0;
}

static int by_last_desc(const void *a, const void *b)
{
	const struct round_host *x = a, *y = b;

	return x->last_ms < y->last_ms ? 1 : x->last_ms > y->last_ms ? -1 : 0;
}

static void count_request(struct report *r, const struct mline *m, long round)
{
	struct totals *t = &r->t;

	t->requests++;
	t->bytes += (uint64_t)m->bytes;
	t->retries += m->attempt > 1;
	t->robots_requests += m->robots;
	if (m->robots) {
		t->robots_status[m->status]++; /* apart (count_request_host) */
	} else {
		t->status[m->status]++;
		if (m->kind < 0) {
			t->ok++;
		} else {
			t->errors++;
			t->kinds[m->kind]++;
		}
	}
	t->status429 += m->status == 429;
	t->cooldowns += m->status == 429 && m->next.n == 5 && memcmp(m->next.p, "again", 5) == 0;
	t->not_modified += m->status == 304;
	moments_add(&t->latency, m->latency_ms);
	fvec_add(&t->lat, (float)m->latency_ms);
	if (m->has_timing) {
		moments_add(&t->queue, m->timing[T_QUEUE]);
		for (int ph = 0; ph < PH_COUNT; ph++)
			moments_add(&t->phase[ph], phase_of(m->timing, (enum phase)ph));
	}
	struct host *h = host_for(r, m->host);
	count_request_host(h, m);
	if (m->has_ts) {
		if (t->first_ms == 0 || m->ts_ms < t->first_ms)
			t->first_ms = m->ts_ms;
		t->last_ms = fmax(t->last_ms, m->ts_ms);
		count_request_bin(r, m);
		if (round >= 0)
			count_round(r, round, m->ts_ms, h);
	}
}

static void count_throttle(struct report *r, const struct mline *m)
{
	r->t.throttles++;
	r->t.reasons[m->reason]++;
	if (m->host.p) {
		struct host *h = host_for(r, m->host);
		h->throttles++;
		h->reasons[m->reason]++;
	}
	if (m->has_ts)
		timeline_bin(&r->tl, m->ts_ms)->throttles++;
}

static void count_record(struct report *r, const struct mline *m)
{
	r->t.records++;
	if (m->kind != SC_ERR_ROBOTS)
		return;
	r->t.robots_refused_records++;
	/* The record's origin, keyed as sc-fetch keys its metrics' host. */
	char *url = sc_strndup(m->url.p, m->url.n), *key = sc_url_origin_of(url);
	if (key)
		host_for(r, (struct sv){ key, strlen(key) })->robots_refused++;
	free(key);
	free(url);
}

uint64_t robots_refused(const struct report *r)
{
	/* Both count the same refusals: the records' per URL, when given. */
	return r->t.records ? r->t.robots_refused_records : r->t.robots_refused_summaries;
}

void agg_line(struct report *r, const struct mline *m, long round)
{
	r->finished = false;
	switch (m->event) {
	case EV_REQUEST:
		count_request(r, m, round); /* read.c made sure it has a host */
		break;
	case EV_THROTTLE:
		count_throttle(r, m);
		break;
	case EV_RECORD:
		count_record(r, m);
		break;
	case EV_SUMMARY:
		r->t.summaries++;
		if (m->final)
			r->t.robots_refused_summaries += (uint64_t)m->robots_refused;
		break;
	default:
		r->t.other_events++;
		break;
	}
}

/* LSD radix sort by the bits of the floats: latencies are never negative,
 * and the bits of non-negative floats sort as unsigned integers.  Four
 * passes over a million floats take a tenth of what qsort does. */
void sort_floats(float *v, size_t n)
{
	if (n < 64) {
		for (size_t i = 1; i < n; i++) /* insertion sort */
			for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
				float x = v[j];
				v[j] = v[j - 1];
				v[j - 1] = x;
			}
		return;
	}
	uint32_t *a = sc_malloc(n * sizeof(*a)), *b = sc_malloc(n * sizeof(*b));
	for (size_t i = 0; i < n; i++) {
		float x = v[i] > 0 ? v[i] : 0.0f; /* -0 and NaN sort as 0 */
		memcpy(&a[i], &x, sizeof(x));
	}
	for (int shift = 0; shift < 32; shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((a[i] >> shift) & 0xFF) + 1]++;
		for (int k = 0; k < 256; k++)
			count[k + 1] += count[k];
		for (size_t i = 0; i < n; i++)
			b[count[(a[i] >> shift) & 0xFF]++] = a[i];
		uint32_t *t = a;
		a = b;
		b = t;
	}
	memcpy(v, a, n * sizeof(*v));
	free(a);
	free(b);
}

float percentile(const struct fvec *v, double p)
{
	if (v->n == 0)
		return 0;
	double rank = ceil(p / 100.0 * (double)v->n);
	size_t i = rank < 1 ? 0 : (size_t)rank - 1;
	return v->v[i < v->n ? i : v->n - 1];
}

void agg_finish(struct report *r)
{
	if (r->finished)
		return;
	sort_floats(r->t.lat.v, r->t.lat.n);
	for (size_t i = 0; i < r->nhosts; i++) {
		struct host *h = r->hosts[i];
		sort_floats(h->lat.v, h->lat.n);
		h->p50 = percentile(&h->lat, 50);
		h->p95 = percentile(&h->lat, 95);
	}
	/* Each round's hosts, last first; each host's place set again (the
	 * later rounds' last, as count_round looks in the latest first). */
	for (size_t i = 0; i < r->nrounds; i++) {
		struct round *rd = &r->rounds[i];
		qsort(rd->hosts, rd->nhosts, sizeof(*rd->hosts), by_last_desc);
		for (size_t j = 0; j < rd->nhosts; j++)
			rd->hosts[j].host->round_slot = j;
	}
	r->finished = true;
}

double duration_s(const struct report *r)
{
	return r->t.first_ms > 0 ? (r->t.last_ms - r->t.first_ms) / 1000.0 : 0.0;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nhosts; i++) {
		free(r->hosts[i]->key);
		free(r->hosts[i]->lat.v);
		free(r->hosts[i]);
	}
	free(r->hosts);
	free(r->htab);
	free(r->t.lat.v);
	free(r->tl.bins);
	for (size_t i = 0; i < r->nrounds; i++)
		free(r->rounds[i].hosts);
	free(r->rounds);
	memset(r, 0, sizeof(*r));
}
