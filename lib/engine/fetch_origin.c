/* fetch_origin: origins and admission.  Owns the origin table (one
 * struct origin per scheme://host:port, swept when idle), each origin's
 * queue of jobs ready to start, the round-robin ring of origins that have
 * work and room, the token buckets of --rate and --host-rate, --delay and
 * a 429's pause, and the heap of jobs waiting out a retry delay
 * (struct fetch_origins, and an origin's admission part).
 * fetch_origins_next() hands the loop the next job that may start; the
 * loop starts it.  It calls nothing of the engine's other files: a later
 * gate (--robots) is installed as a function. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "engine/fetch_engine.h"

static struct origin *origin_of(struct sc_strtab_link *link)
{
	return link ? SC_STRTAB_ENTRY(link, struct origin, link) : NULL;
}

static void origin_free(struct fetch_origins *o, struct origin *origin)
{
	sc_strtab_remove(&o->table, &origin->link);
	free(origin->key);
	free(origin);
}

/* Frees origins that hold nothing and whose limits no longer bind, so the
 * table stays as small as the set of hosts in play. */
static void origin_sweep(struct fetch_origins *o, double now)
{
	for (struct sc_strtab_link *l = o->table.head, *next; l; l = next) {
		struct origin *origin = origin_of(l);
		next = l->next;
		bool idle = origin->refs == 0 && origin->next_start <= now &&
		            origin->paused_until <= now && origin->pace_next <= now &&
		            origin->pace_until <= now &&
		            (o->opts->host_rate <= 0 || now - origin->tokens_at > 10000);
		if (idle)
			origin_free(o, origin);
	}
	o->count_at_sweep = o->table.count;
}

struct origin *fetch_origin_get(struct fetch_origins *o, const char *key, double now)
{
	struct origin *origin = origin_of(sc_strtab_find(&o->table, key));

	if (origin)
		return origin;
	if (o->table.count >= 4096 && o->table.count >= 2 * o->count_at_sweep)
		origin_sweep(o, now);
	origin = sc_calloc(1, sizeof(*origin));
	origin->key = sc_strdup(key);
	origin->tokens = 1;
	origin->tokens_at = now;
	sc_strtab_add(&o->table, &origin->link, origin->key);
	return origin;
}

void fetch_origins_init(struct fetch_origins *o, const struct fetch_options *opts)
{
	o->opts = opts;
	o->tokens = 1;
}

void fetch_origins_start(struct fetch_origins *o, double now)
{
	o->tokens_at = now;
}

void fetch_origins_set_gate(struct fetch_origins *o, fetch_gate_fn gate, void *ctx)
{
	o->gate = gate;
	o->gate_ctx = ctx;
}

void fetch_origins_free(struct fetch_origins *o)
{
	while (o->table.head)
		origin_free(o, origin_of(o->table.head));
	sc_strtab_free(&o->table);
	free(o->heap);
	o->heap = NULL;
}

static void ring_add(struct fetch_origins *o, struct origin *origin)
{
	if (origin->in_ring)
		return;
	origin->in_ring = true;
	if (!o->ring) {
		origin->rnext = origin->rprev = origin;
		o->ring = origin;
		return;
	}
	/* Just before the cursor: the last to be visited in this round. */
	origin->rnext = o->ring;
	origin->rprev = o->ring->rprev;
	origin->rprev->rnext = origin;
	o->ring->rprev = origin;
}

void fetch_ring_remove(struct fetch_origins *o, struct origin *origin)
{
	if (!origin->in_ring)
		return;
	origin->in_ring = false;
	if (origin->rnext == origin) {
		o->ring = NULL;
	} else {
		origin->rprev->rnext = origin->rnext;
		origin->rnext->rprev = origin->rprev;
		if (o->ring == origin)
			o->ring = origin->rnext;
	}
	origin->rnext = origin->rprev = NULL;
}

/* An origin is in the ring while it has queued jobs and room under
 * --per-host; time-based limits are checked at admission. */
void fetch_ring_update(struct fetch_origins *o, struct origin *origin)
{
	bool room = (o->opts->per_host <= 0 || origin->inflight < o->opts->per_host) &&
	            (origin->pace_limit <= 0 || origin->inflight < origin->pace_limit);

	if (origin->queued > 0 && room)
		ring_add(o, origin);
	else
		fetch_ring_remove(o, origin);
}

void fetch_origin_push(struct fetch_origins *o, struct origin *origin, struct job *job, bool front)
{
	job->qnext = NULL;
	if (front) {
		job->qnext = origin->qhead;
		origin->qhead = job;
		if (!origin->qtail)
			origin->qtail = job;
	} else {
		if (origin->qtail)
			origin->qtail->qnext = job;
		else
			origin->qhead = job;
		origin->qtail = job;
	}
	origin->queued++;
	o->queued++;
	fetch_ring_update(o, origin);
}

struct job *fetch_origin_pop(struct fetch_origins *o, struct origin *origin)
{
	struct job *job = origin->qhead;

	origin->qhead = job->qnext;
	if (!origin->qhead)
		origin->qtail = NULL;
	job->qnext = NULL;
	origin->queued--;
	o->queued--;
	return job;
}

static void heap_swap(struct fetch_origins *o, size_t a, size_t b)
{
	struct job *t = o->heap[a];

	o->heap[a] = o->heap[b];
	o->heap[b] = t;
	o->heap[a]->heap_index = a;
	o->heap[b]->heap_index = b;
}

void fetch_heap_push(struct fetch_origins *o, struct job *job)
{
	if (o->nheap == o->heapcap) {
		o->heapcap = o->heapcap ? o->heapcap * 2 : 64;
		o->heap = sc_realloc(o->heap, o->heapcap * sizeof(*o->heap));
	}
	size_t i = o->nheap++;
	o->heap[i] = job;
	job->heap_index = i;
	while (i > 0 && o->heap[(i - 1) / 2]->ready_at > o->heap[i]->ready_at) {
		heap_swap(o, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

struct job *fetch_heap_pop(struct fetch_origins *o)
{
	struct job *top = o->heap[0];

	o->nheap--;
	if (o->nheap > 0) {
		o->heap[0] = o->heap[o->nheap];
		o->heap[0]->heap_index = 0;
		size_t i = 0;
		for (;;) {
			size_t l = 2 * i + 1, r = l + 1, m = i;
			if (l < o->nheap && o->heap[l]->ready_at < o->heap[m]->ready_at)
				m = l;
			if (r < o->nheap && o->heap[r]->ready_at < o->heap[m]->ready_at)
				m = r;
			if (m == i)
				break;
			heap_swap(o, i, m);
			i = m;
		}
	}
	return top;
}

/* Whether the head of origin's queue may start now; if not, *wake is
 * lowered to when it may.  Every gate that holds an origin's whole queue
 * is checked here, and only here.  The installed gate (--robots) comes
 * last: its own request obeys the time gates before it.  True means the
 * head starts now. */
static bool origin_admissible(struct fetch_origins *o, struct origin *origin, double now,
                              double *wake)
{
	double at = now;

	if (origin->paused_until > at)
		at = origin->paused_until;
	if (origin->next_start > at)
		at = origin->next_start;
	if (origin->pace_next > at)
		at = origin->pace_next;
	if (origin->pace_until > at)
		at = origin->pace_until;
	/* Spacing counts from when a request went out: until the last start's
	 * has, the next waits (fetch_origin_sent moves the clocks on). */
	if (origin->unsent > 0 && (o->opts->delay_ms > 0 || origin->pace_interval > 0))
		return false;
	if (o->opts->host_rate > 0) {
		double cap = fmax(1.0, o->opts->host_rate * 0.05);
		origin->tokens = fmin(cap, origin->tokens + (now - origin->tokens_at) *
		                                                    o->opts->host_rate / 1000.0);
		origin->tokens_at = now;
		if (origin->tokens < 1.0) {
			double t = now + (1.0 - origin->tokens) * 1000.0 / o->opts->host_rate;
			if (t > at)
				at = t;
		}
	}
	if (at > now) {
		if (at < *wake)
			*wake = at;
		return false;
	}
	return !o->gate || o->gate(o->gate_ctx, origin, now, wake);
}

bool fetch_origins_rate_allows(struct fetch_origins *o, double now, double *wake)
{
	if (o->opts->rate <= 0)
		return true;
	double cap = fmax(1.0, o->opts->rate * 0.05);
	o->tokens = fmin(cap, o->tokens + (now - o->tokens_at) * o->opts->rate / 1000.0);
	o->tokens_at = now;
	if (o->tokens >= 1.0)
		return true;
	*wake = fmin(*wake, now + (1.0 - o->tokens) * 1000.0 / o->opts->rate);
	return false;
}

struct job *fetch_origins_next(struct fetch_origins *o, double now, double *wake)
{
	struct origin *origin = o->ring, *found = NULL;

	if (!origin)
		return NULL;
	do {
		if (origin_admissible(o, origin, now, wake)) {
			found = origin;
			break;
		}
		origin = origin->rnext;
	} while (origin != o->ring);
	if (!found)
		return NULL;
	/* Round robin: the next search starts after this origin. */
	o->ring = found->rnext;
	struct job *job = fetch_origin_pop(o, found);
	fetch_ring_update(o, found);
	return job;
}

void fetch_origin_started(struct fetch_origins *o, struct origin *origin, double now)
{
	origin->inflight++;
	origin->unsent++;
	if (o->opts->delay_ms > 0)
		origin->next_start = now + (double)o->opts->delay_ms;
	if (origin->pace_interval > 0)
		origin->pace_next = now + origin->pace_interval;
	if (o->opts->host_rate > 0)
		origin->tokens -= 1.0;
	if (o->opts->rate > 0)
		o->tokens -= 1.0;
	fetch_ring_update(o, origin);
}

/* The start set the clocks from the decision to start; between it and the
 * request on the wire come the connection and the loop's other work, a
 * few ms under load, so a request that waited for its connection would
 * let the next arrive closer than --delay.  Counted again from here. */
void fetch_origin_sent(struct fetch_origins *o, struct origin *origin, bool first, double now)
{
	if (first)
		origin->unsent--;
	if (o->opts->delay_ms > 0)
		origin->next_start = fmax(origin->next_start, now + (double)o->opts->delay_ms);
	if (origin->pace_interval > 0)
		origin->pace_next = fmax(origin->pace_next, now + origin->pace_interval);
}

void fetch_origin_finished(struct fetch_origins *o, struct origin *origin, bool sent)
{
	origin->inflight--;
	if (!sent)
		origin->unsent--;
	fetch_ring_update(o, origin);
}

void fetch_origin_pause(struct origin *origin, double until)
{
	if (until > origin->paused_until)
		origin->paused_until = until;
}

void fetch_origin_set_pace(struct fetch_origins *o, struct origin *origin, long limit,
                           double interval, double until)
{
	/* A wider spacing counts from the last start; the start itself
	 * already set pace_next from the spacing then in force. */
	if (interval > origin->pace_interval && origin->pace_next > 0)
		origin->pace_next += interval - origin->pace_interval;
	origin->pace_limit = limit;
	origin->pace_interval = interval;
	origin->pace_until = until;
	fetch_ring_update(o, origin);
}

struct origin *fetch_origin_find(struct fetch_origins *o, const char *key)
{
	return origin_of(sc_strtab_find(&o->table, key));
}

void fetch_origin_ref(struct origin *origin)
{
	origin->refs++;
}

void fetch_origin_unref(struct origin *origin)
{
	origin->refs--;
}
