/* Unit tests for lib/web/pace: the controller against simulated servers
 * (a token bucket that answers bare 429s, one that gives Retry-After, one
 * that slows with load, one that does not answer, a healthy one), in
 * simulated time with a 1 ms step: deterministic, no clock, no network. */
#include <math.h>
#include <stdlib.h>

#include "tap.h"
#include "web/pace.h"

enum server_kind {
	BUCKET,
	BUCKET_RETRY_AFTER,
	SLOWS_WITH_LOAD,
	SILENT,
	HEALTHY
};

struct server {
	enum server_kind kind;
	double rate;   /* tokens per second */
	double burst;  /* bucket size */
	double tokens; /* now */
	double tokens_at;
	long inflight;
};

struct flight {
	double started, done;
	enum sc_pace_signal signal;
	double retry_after;
};

struct run {
	long max_inflight_seen, starts, refused, answered_ok;
	long starts_before_block_end; /* starts while a Retry-After block held */
	double min_gap_seen;          /* smallest gap between two starts */
	long limit_at_end;
	long events;
};

/* The server's answer to a request that arrives at now. */
static struct flight serve(struct server *s, double now)
{
	struct flight f = { .started = now, .signal = SC_PACE_ANSWER, .retry_after = -1 };

	s->tokens = fmin(s->burst, s->tokens + (now - s->tokens_at) * s->rate / 1000.0);
	s->tokens_at = now;
	switch (s->kind) {
	case BUCKET:
	case BUCKET_RETRY_AFTER:
		f.done = now + 5;
		if (s->tokens >= 1) {
			s->tokens -= 1;
		} else {
			f.signal = SC_PACE_429;
			if (s->kind == BUCKET_RETRY_AFTER)
				f.retry_after = 2000;
		}
		break;
	case SLOWS_WITH_LOAD:
		f.done = now + 20.0 * (double)(s->inflight + 1);
		break;
	case SILENT:
		f.done = now + 10000;
		f.signal = SC_PACE_TIMEOUT;
		break;
	case HEALTHY:
		f.done = now + 0.5 + 0.2 * (double)(s->inflight + 1);
		break;
	}
	return f;
}

#define MAX_FLIGHTS 64

/* Counts a change of pace; PACE_DEBUG=1 in the environment prints each, to
 * see how the controller moved when a figure below fails. */
static void note_event(struct run *r, double now, const struct sc_pace *p,
                       const struct sc_pace_event *ev)
{
	r->events++;
	if (getenv("PACE_DEBUG"))
		printf("# t=%.0f %s limit %ld->%ld interval %.1f ceiling %.1f blocked %.0f\n", now,
		       sc_pace_reason_name(ev->reason), ev->limit_old, ev->limit_new,
		       ev->interval_ms, p->ceiling_ms, ev->blocked_until);
}

/* Drives one pace against one server for ms of simulated time with
 * endless work; counts from measure_from on. */
static struct run simulate(struct sc_pace *p, struct server *s, double ms, double measure_from)
{
	struct flight fl[MAX_FLIGHTS];
	long n = 0;
	double last_start = -1, block_end = 0;
	struct run r = { .min_gap_seen = INFINITY };

	for (long tick = 0; tick < (long)ms; tick++) {
		double now = (double)tick;
		for (long i = 0; i < n;) {
			if (fl[i].done > now) {
				i++;
				continue;
			}
			struct sc_pace_event ev;
			if (sc_pace_answered(p, now, fl[i].started, fl[i].done - fl[i].started,
			                     fl[i].signal, fl[i].retry_after, &ev))
				note_event(&r, now, p, &ev);
			if (fl[i].retry_after >= 0 && now + fl[i].retry_after > block_end)
				block_end = now + fl[i].retry_after;
			if (now >= measure_from) {
				if (fl[i].signal == SC_PACE_ANSWER)
					r.answered_ok++;
				else
					r.refused++;
			}
			fl[i] = fl[--n];
			s->inflight--;
		}
		while (n < p->limit && n < MAX_FLIGHTS &&
		       sc_pace_next_start(p, last_start) <= now) {
			if (now < block_end)
				r.starts_before_block_end++;
			if (last_start >= 0 && now - last_start < r.min_gap_seen)
				r.min_gap_seen = now - last_start;
			sc_pace_started(p, now, true);
			fl[n++] = serve(s, now);
			s->inflight++;
			last_start = now;
			if (now >= measure_from)
				r.starts++;
			if (n > r.max_inflight_seen)
				r.max_inflight_seen = n;
		}
	}
	r.limit_at_end = p->limit;
	return r;
}

static void test_token_bucket(void)
{
	struct sc_pace p;
	struct server s = { .kind = BUCKET, .rate = 20, .burst = 5, .tokens = 5 };

	sc_pace_init(&p, 16, 0, 0, 1);
	/* Ten minutes; the last eight are measured. */
	struct run r = simulate(&p, &s, 600000, 120000);
	double secs = 480.0;
	double share = (double)r.refused / (double)(r.refused + r.answered_ok);
	double goodput = (double)r.answered_ok / secs;
	ok(share < 0.01, "bare 429s from a 20/s bucket: under 1%% refused (%.2f%%)", share * 100);
	ok(goodput >= 0.9 * 20, "bare 429s from a 20/s bucket: at least 90%% of it (%.1f/s)",
	   goodput);
	ok(r.max_inflight_seen <= 16, "never past the cap of 16 in flight (%ld)",
	   r.max_inflight_seen);
}

static void test_token_bucket_fast(void)
{
	struct sc_pace p;
	struct server s = { .kind = BUCKET, .rate = 200, .burst = 10, .tokens = 10 };

	sc_pace_init(&p, 8, 0, 0, 2);
	struct run r = simulate(&p, &s, 300000, 60000);
	double share = (double)r.refused / (double)(r.refused + r.answered_ok);
	double goodput = (double)r.answered_ok / 240.0;
	ok(share < 0.01, "a 200/s bucket: under 1%% refused (%.2f%%)", share * 100);
	ok(goodput >= 0.9 * 200, "a 200/s bucket: at least 90%% of it (%.1f/s)", goodput);
}

static void test_retry_after(void)
{
	struct sc_pace p;
	struct server s = { .kind = BUCKET_RETRY_AFTER, .rate = 10, .burst = 2, .tokens = 2 };

	sc_pace_init(&p, 4, 0, 0, 3);
	struct run r = simulate(&p, &s, 120000, 0);
	is_int(r.starts_before_block_end, 0, "no start before a Retry-After's time");
	ok(r.refused > 0, "the server did refuse (%ld)", r.refused);

	struct sc_pace q;
	struct sc_pace_event ev;
	sc_pace_init(&q, 4, 0, 0, 3);
	sc_pace_started(&q, 100, true);
	ok(sc_pace_answered(&q, 110, 100, 10, SC_PACE_503, 5000, &ev),
	   "a 503 with Retry-After is news");
	is_str(sc_pace_reason_name(ev.reason), "retry_after", "its reason is retry_after");
	ok(ev.blocked_until == 5110, "blocked until the time given (%.0f)", ev.blocked_until);
	ok(sc_pace_next_start(&q, 105) >= 5110, "the whole origin waits for it");
	is_int(ev.limit_old, 4, "limit before");
	is_int(ev.limit_new, 2, "and halved after");
	/* A later Retry-After of the same episode still moves the block. */
	ok(sc_pace_answered(&q, 120, 101, 19, SC_PACE_429, 8000, &ev), "a later time is news too");
	ok(ev.blocked_until == 8120 && ev.limit_new == 2, "moved, not halved again");
}

static void test_slows_with_load(void)
{
	struct sc_pace p;
	struct server s = { .kind = SLOWS_WITH_LOAD };

	sc_pace_init(&p, 16, 0, 0, 4);
	struct run r = simulate(&p, &s, 120000, 60000);
	ok(r.limit_at_end >= 1 && r.limit_at_end <= 4,
	   "latency 20 ms x in flight: the limit settles where latency stays near its floor (%ld)",
	   r.limit_at_end);
	is_int(r.refused, 0, "nothing refused");
}

static void test_silent(void)
{
	struct sc_pace p;
	struct sc_pace_event ev;
	double now = 0;

	sc_pace_init(&p, 1, 0, 0, 5);
	for (int i = 0; i < SC_PACE_UNREACHABLE - 1; i++) {
		sc_pace_started(&p, now, true);
		now += 1000;
		sc_pace_answered(&p, now, now - 1000, 1000, SC_PACE_TIMEOUT, -1, &ev);
		ok(ev.blocked_until == 0, "timeout %d widens, does not block yet", i + 1);
		now = sc_pace_next_start(&p, now - 1000) > now ? sc_pace_next_start(&p, now - 1000)
		                                               : now;
	}
	sc_pace_started(&p, now, true);
	now += 1000;
	ok(sc_pace_answered(&p, now, now - 1000, 1000, SC_PACE_TIMEOUT, -1, &ev),
	   "the third timeout in a row is news");
	double first = ev.blocked_until - now;
	ok(first >= 0.8 * SC_PACE_BLOCK_MS && first <= 1.2 * SC_PACE_BLOCK_MS,
	   "blocked for about a minute (%.0f ms)", first);
	is_str(sc_pace_reason_name(ev.reason), "timeout", "reason timeout");
	now = ev.blocked_until;
	sc_pace_started(&p, now, true);
	now += 1000;
	sc_pace_answered(&p, now, now - 1000, 1000, SC_PACE_TIMEOUT, -1, &ev);
	double second = ev.blocked_until - now;
	ok(second >= 0.8 * 2 * SC_PACE_BLOCK_MS && second <= 1.2 * 2 * SC_PACE_BLOCK_MS,
	   "the next block doubles (%.0f ms)", second);
	for (int i = 0; i < 12; i++) {
		now = ev.blocked_until;
		sc_pace_started(&p, now, true);
		now += 1000;
		sc_pace_answered(&p, now, now - 1000, 1000, SC_PACE_TIMEOUT, -1, &ev);
	}
	ok(ev.blocked_until - now <= 1.2 * SC_PACE_BLOCK_MAX_MS, "blocks are capped (%.0f ms)",
	   ev.blocked_until - now);
	ok(p.blocked_ms > 0 && p.incidents >= 14, "time blocked and incidents are counted");
	/* Quiet for long enough: the doubling is forgiven. */
	now += SC_PACE_FORGIVE_MS;
	for (int i = 0; i < SC_PACE_WINDOW_ANSWERS; i++) {
		now += SC_PACE_WINDOW_MS;
		sc_pace_started(&p, now - 5, true);
		sc_pace_answered(&p, now, now - 5, 5, SC_PACE_ANSWER, -1, &ev);
	}
	is_int(p.block_level, 0, "forgiven after a quiet period");
}

/* A server that answers 503 to everything, quickly: the spacing grows,
 * and after SC_PACE_REFUSING_MS of nothing but refusals it is given up. */
static void test_refusing(void)
{
	struct sc_pace p;
	struct sc_pace_event ev = { 0 };
	double now = 0, last = -1;
	int requests = 0;

	sc_pace_init(&p, 8, 0, 0, 9);
	while (!ev.gave_up && now < 120000) {
		double at = sc_pace_next_start(&p, last);
		now = at > now ? at : now;
		sc_pace_started(&p, now, true);
		last = now;
		requests++;
		now += 1;
		sc_pace_answered(&p, now, now - 1, 1, SC_PACE_503, -1, &ev);
	}
	ok(ev.gave_up, "refused for %.0f ms: given up (%d requests)", now, requests);
	ok(now >= SC_PACE_REFUSING_MS && now < 2 * SC_PACE_REFUSING_MS + SC_PACE_MAX_INTERVAL_MS,
	   "after the refusing time, not minutes later (%.0f ms)", now);
	ok(ev.blocked_until >= now + 0.8 * SC_PACE_BLOCK_MS, "and blocked");
	ok(requests < 40, "asked %d times meanwhile, spaced ever wider", requests);
}

static void test_healthy(void)
{
	struct sc_pace p;
	struct server s = { .kind = HEALTHY };

	sc_pace_init(&p, 20, 0, 0, 6);
	struct run r = simulate(&p, &s, 60000, 0);
	is_int(r.events, 0, "a healthy server that slows a little with load: no change of pace");
	is_int(r.limit_at_end, 20, "the limit stays at the cap");
}

static void test_bounds(void)
{
	struct sc_pace p;
	struct server s = { .kind = BUCKET, .rate = 50, .burst = 5, .tokens = 5 };

	sc_pace_init(&p, 4, 250, 0, 7);
	struct run r = simulate(&p, &s, 60000, 0);
	ok(r.min_gap_seen >= 250, "never under the caller's spacing (%.0f ms)", r.min_gap_seen);
	ok(r.max_inflight_seen <= 4, "never over the caller's cap (%ld)", r.max_inflight_seen);
	is_int(r.refused, 0, "a bucket faster than the caller's spacing never refuses");

	sc_pace_init(&p, 8, 0, 0, 8);
	p.interval_ms = 400;
	sc_pace_bound(&p, 2, 1000);
	ok(p.limit == 2 && p.interval_ms == 1000, "new bounds hold what was learnt within them");
}

int main(void)
{
	test_token_bucket();
	test_token_bucket_fast();
	test_retry_after();
	test_slows_with_load();
	test_silent();
	test_refusing();
	test_healthy();
	test_bounds();
	return tap_done();
}
