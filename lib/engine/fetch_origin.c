/* fetch_origin: origins and admission.  Owns the origin table (one
 * struct origin per scheme://host:port, swept when idle), each origin's
 * queue of jobs ready to start, the round-robin ring of origins that have
 * work and room, the token buckets of --rate and --host-rate, --delay and
 * a 429's pause, and the heap of jobs waiting out a retry delay.
 * fetch_admit() starts what may start now (fetch_job_start, in
 * fetch_transfer.c) and says when to look again. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "engine/fetch_engine.h"

static void origin_grow(struct sc_fetch_engine *e)
{
	size_t nsize = e->hsize ? e->hsize * 2 : 256;
	struct origin **nt = sc_calloc(nsize, sizeof(*nt));

	for (size_t i = 0; i < e->hsize; i++) {
		struct origin *origin = e->htab[i], *next;
		for (; origin; origin = next) {
			next = origin->hnext;
			size_t b = sc_fnv1a_str(origin->key) & (nsize - 1);
			origin->hnext = nt[b];
			nt[b] = origin;
		}
	}
	free(e->htab);
	e->htab = nt;
	e->hsize = nsize;
}

static void origin_free(struct sc_fetch_engine *e, struct origin *origin)
{
	if (origin->hs)
		origin->hs->owner = NULL;
	e->origins--;
	free(origin->key);
	free(origin);
}

/* Frees origins that hold nothing and whose limits no longer bind, so the
 * table stays as small as the set of hosts in play. */
static void origin_sweep(struct sc_fetch_engine *e, double now)
{
	for (size_t i = 0; i < e->hsize; i++) {
		struct origin **pp = &e->htab[i];
		while (*pp) {
			struct origin *origin = *pp;
			bool idle = origin->refs == 0 && origin->next_start <= now &&
			            origin->paused_until <= now &&
			            (e->opts->host_rate <= 0 || now - origin->tokens_at > 10000);
			if (idle) {
				*pp = origin->hnext;
				origin_free(e, origin);
			} else {
				pp = &origin->hnext;
			}
		}
	}
	e->origins_at_sweep = e->origins;
}

struct origin *fetch_origin_get(struct sc_fetch_engine *e, const char *key, double now)
{
	if (e->hsize == 0 || e->origins >= e->hsize)
		origin_grow(e);
	size_t b = sc_fnv1a_str(key) & (e->hsize - 1);
	for (struct origin *origin = e->htab[b]; origin; origin = origin->hnext)
		if (strcmp(origin->key, key) == 0)
			return origin;
	if (e->origins >= 4096 && e->origins >= 2 * e->origins_at_sweep) {
		origin_sweep(e, now);
		b = sc_fnv1a_str(key) & (e->hsize - 1);
	}
	struct origin *origin = sc_calloc(1, sizeof(*origin));
	origin->key = sc_strdup(key);
	origin->tokens = 1;
	origin->tokens_at = now;
	origin->hnext = e->htab[b];
	e->htab[b] = origin;
	e->origins++;
	return origin;
}

void fetch_origins_free(struct sc_fetch_engine *e)
{
	for (size_t i = 0; i < e->hsize; i++) {
		struct origin *origin = e->htab[i], *next;
		for (; origin; origin = next) {
			next = origin->hnext;
			origin_free(e, origin);
		}
	}
	free(e->htab);
	e->htab = NULL;
	e->hsize = 0;
}

static void ring_add(struct sc_fetch_engine *e, struct origin *origin)
{
	if (origin->in_ring)
		return;
	origin->in_ring = true;
	if (!e->ring) {
		origin->rnext = origin->rprev = origin;
		e->ring = origin;
		return;
	}
	/* Just before the cursor: the last to be visited in this round. */
	origin->rnext = e->ring;
	origin->rprev = e->ring->rprev;
	origin->rprev->rnext = origin;
	e->ring->rprev = origin;
}

void fetch_ring_remove(struct sc_fetch_engine *e, struct origin *origin)
{
	if (!origin->in_ring)
		return;
	origin->in_ring = false;
	if (origin->rnext == origin) {
		e->ring = NULL;
	} else {
		origin->rprev->rnext = origin->rnext;
		origin->rnext->rprev = origin->rprev;
		if (e->ring == origin)
			e->ring = origin->rnext;
	}
	origin->rnext = origin->rprev = NULL;
}

/* An origin is in the ring while it has queued jobs and room under
 * --per-host; time-based limits are checked at admission. */
void fetch_ring_update(struct sc_fetch_engine *e, struct origin *origin)
{
	bool room = e->opts->per_host <= 0 || origin->inflight < e->opts->per_host;

	if (origin->queued > 0 && room)
		ring_add(e, origin);
	else
		fetch_ring_remove(e, origin);
}

void fetch_origin_push(struct sc_fetch_engine *e, struct origin *origin, struct job *job,
                       bool front)
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
	e->queued++;
	fetch_ring_update(e, origin);
}

struct job *fetch_origin_pop(struct sc_fetch_engine *e, struct origin *origin)
{
	struct job *job = origin->qhead;

	origin->qhead = job->qnext;
	if (!origin->qhead)
		origin->qtail = NULL;
	job->qnext = NULL;
	origin->queued--;
	e->queued--;
	return job;
}

static void heap_swap(struct sc_fetch_engine *e, size_t a, size_t b)
{
	struct job *t = e->heap[a];

	e->heap[a] = e->heap[b];
	e->heap[b] = t;
	e->heap[a]->heap_index = a;
	e->heap[b]->heap_index = b;
}

void fetch_heap_push(struct sc_fetch_engine *e, struct job *job)
{
	if (e->nheap == e->heapcap) {
		e->heapcap = e->heapcap ? e->heapcap * 2 : 64;
		e->heap = sc_realloc(e->heap, e->heapcap * sizeof(*e->heap));
	}
	size_t i = e->nheap++;
	e->heap[i] = job;
	job->heap_index = i;
	while (i > 0 && e->heap[(i - 1) / 2]->ready_at > e->heap[i]->ready_at) {
		heap_swap(e, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

struct job *fetch_heap_pop(struct sc_fetch_engine *e)
{
	struct job *top = e->heap[0];

	e->nheap--;
	if (e->nheap > 0) {
		e->heap[0] = e->heap[e->nheap];
		e->heap[0]->heap_index = 0;
		size_t i = 0;
		for (;;) {
			size_t l = 2 * i + 1, r = l + 1, m = i;
			if (l < e->nheap && e->heap[l]->ready_at < e->heap[m]->ready_at)
				m = l;
			if (r < e->nheap && e->heap[r]->ready_at < e->heap[m]->ready_at)
				m = r;
			if (m == i)
				break;
			heap_swap(e, i, m);
			i = m;
		}
	}
	return top;
}

/* Whether the head of origin's queue may start now; if not, *wake is
 * lowered to when it may.  Every gate that holds an origin's whole queue
 * is checked here, and only here.  The robots.txt gate
 * (fetch_robots_admissible) comes last: the robots.txt request itself obeys
 * the time gates before it; until the answer is known only that request
 * may start (false without a time: the loop goes round again when the
 * answer arrives); then Crawl-delay.  True means the head starts now. */
static bool origin_admissible(struct sc_fetch_engine *e, struct origin *origin, double now,
                              double *wake)
{
	double at = now;

	if (origin->paused_until > at)
		at = origin->paused_until;
	if (origin->next_start > at)
		at = origin->next_start;
	if (e->opts->host_rate > 0) {
		double cap = fmax(1.0, e->opts->host_rate * 0.05);
		origin->tokens = fmin(cap, origin->tokens + (now - origin->tokens_at) *
		                                                    e->opts->host_rate / 1000.0);
		origin->tokens_at = now;
		if (origin->tokens < 1.0) {
			double t = now + (1.0 - origin->tokens) * 1000.0 / e->opts->host_rate;
			if (t > at)
				at = t;
		}
	}
	if (at > now) {
		if (at < *wake)
			*wake = at;
		return false;
	}
	return fetch_robots_admissible(e, origin, now, wake);
}

/* Starts what may start now.  Returns the time of the next possible start
 * (ms) if something waits on a clock, else INFINITY; *host_blocked is set
 * when free slots stay empty because no queued origin may start. */
double fetch_admit(struct sc_fetch_engine *e, double now, bool *host_blocked)
{
	double wake = INFINITY;

	*host_blocked = false;
	while (e->inflight < e->opts->concurrency && e->ring) {
		if (e->opts->rate > 0) {
			double cap = fmax(1.0, e->opts->rate * 0.05);
			e->tokens = fmin(cap,
			                 e->tokens + (now - e->tokens_at) * e->opts->rate / 1000.0);
			e->tokens_at = now;
			if (e->tokens < 1.0) {
				wake = fmin(wake, now + (1.0 - e->tokens) * 1000.0 / e->opts->rate);
				return wake;
			}
		}
		struct origin *origin = e->ring, *found = NULL;
		do {
			if (origin_admissible(e, origin, now, &wake)) {
				found = origin;
				break;
			}
			origin = origin->rnext;
		} while (origin != e->ring);
		if (!found)
			break;
		/* Round robin: the next search starts after this origin. */
		e->ring = found->rnext;
		struct job *job = fetch_origin_pop(e, found);
		fetch_ring_update(e, found);
		fetch_job_start(e, job, now);
	}
	if (e->inflight < e->opts->concurrency)
		*host_blocked = true;
	return wake;
}
