/* Unit tests for lib/web/pace: the controller against simulated servers
 * (a token bucket that answers bare 429s, one that gives Retry-After, one
 * that slows with load, one that does not answer, a healthy one, flaky
 * ones that refuse a share of requests whatever the pace, one that refuses
 * requests that come too close, a token bucket that answers 503), in
 * simulated time with a 1 ms step, and the rule that tells refusals from
 * congestion on its own: deterministic, no clock, no network. */
#include <math.h>
#include <stdlib.h>

#include "tap.h"
#include "web/pace.h"

enum server_kind {
	BUCKET,
	BUCKET_RETRY_AFTER,
	SLOWS_WITH_LOAD,
	SILENT,
	HEALTHY,
	FLAKY,     /* refuses percent% of requests (503, or resets), whatever the pace */
	CLOSE_GAP, /* 503 to a request within gap_ms of the one before */
	BUCKET_503 /* a token bucket that answers 503 beyond its rate */
};

struct server {
	enum server_kind kind;
	double rate;   /* tokens per second */
	double burst;  /* bucket size */
	double tokens; /* now */
	double tokens_at;
	long inflight;
	double percent;              /* FLAKY */
	enum sc_pace_signal refusal; /* FLAKY: SC_PACE_503 or SC_PACE_RESET */
	double gap_ms;               /* CLOSE_GAP */
	double last_arrival;         /* CLOSE_GAP */
	uint64_t served;             /* requests so far */
	uint64_t salt;               /* FLAKY: which requests */
	double after_ms;             /* > 0: from then on ... */
	enum server_kind kind_after; /* ... this kind, */
	double percent_after;        /* ... refusing this share if FLAKY */
};

/* A request's place in the server's order, hashed (splitmix64): the same
 * requests are refused whatever their times, as a flaky backend's are. */
static bool flaky_refuses(uint64_t n, double percent)
{
	uint64_t z = n + 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z % 10000) < percent * 100;
}

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
	long events, back_offs; /* changes of pace; those for congestion */
	double slower_ms;       /* time the pace was slower than the caller's */
};

/* The server's answer to a request that arrives at now. */
static struct flight serve(struct server *s, double now)
{
	struct flight f = { .started = now, .signal = SC_PACE_ANSWER, .retry_after = -1 };

	s->tokens = fmin(s->burst, s->tokens + (now - s->tokens_at) * s->rate / 1000.0);
	s->tokens_at = now;
	s->served++;
	if (s->after_ms > 0 && now >= s->after_ms) {
		s->kind = s->kind_after;
		s->percent = s->percent_after;
		s->after_ms = 0;
	}
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
	case FLAKY:
		f.done = now + 5;
		if (flaky_refuses(s->served ^ s->salt << 40, s->percent))
			f.signal = s->refusal;
		break;
	case CLOSE_GAP:
		f.done = now + 5;
		if (s->served > 1 && now - s->last_arrival < s->gap_ms)
			f.signal = SC_PACE_503;
		s->last_arrival = now;
		break;
	case BUCKET_503:
		f.done = now + 5;
		if (s->tokens >= 1)
			s->tokens -= 1;
		else
			f.signal = SC_PACE_503;
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
	if (ev->reason != SC_PACE_R_RECOVER && ev->reason != SC_PACE_R_LATENCY)
		r->back_offs++;
	if (getenv("PACE_DEBUG"))
		printf("# t=%.0f %s limit %ld->%ld interval %.1f ceiling %.1f blocked %.0f"
		       " background %.3f\n",
		       now, sc_pace_reason_name(ev->reason), ev->limit_old, ev->limit_new,
		       ev->interval_ms, p->ceiling_ms, ev->blocked_until, p->background);
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
		if (now >= measure_from &&
		    (p->interval_ms > p->min_interval_ms || p->limit < p->max_limit))
			r.slower_ms++;
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

/* The share of answers refused in a run's measured part. */
static double refused_share(const struct run *r)
{
	return (double)r->refused / (double)(r->refused + r->answered_ok);
}

static void test_token_bucket(void)
{
	struct sc_pace p;
	struct server s = { .kind = BUCKET, .rate = 20, .burst = 5, .tokens = 5 };

	sc_pace_init(&p, 16, 0, 0, 1);
	/* Ten minutes; the last eight are measured. */
	struct run r = simulate(&p, &s, 600000, 120000);
	double secs = 480.0;
	double share = refused_share(&r);
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
	double share = refused_share(&r);
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
		ok(p.blocked_until == 0, "timeout %d in a row does not block yet", i + 1);
		now = sc_pace_next_start(&p, now - 1000) > now ? sc_pace_next_start(&p, now - 1000)
		                                               : now;
	}
	sc_pace_started(&p, now, true);
	now += 1000;
	ok(sc_pace_answered(&p, now, now - 1000, 1000, SC_PACE_TIMEOUT, -1, &ev),
	   "timeout %d in a row is news", SC_PACE_UNREACHABLE);
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
	/* Six refusals in a row make each step (a flaky host gives as many
	 * once in 15,625): 8 -> 1 in flight, then the spacing doubled from
	 * 1 ms to 10 s, six answers a step. */
	ok(requests < 100, "asked %d times meanwhile, spaced ever wider", requests);
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

/* The rule alone: how many refusals among the latest answers are
 * congestion, against the background taken at first and against others. */
static void test_rule(void)
{
	uint64_t run5 = 0x1f, run6 = 0x3f;

	ok(!sc_pace_refusals_exceed(1, 1, SC_PACE_BACKGROUND),
	   "a first refusal is no evidence of load");
	ok(!sc_pace_refusals_exceed(run5, 5, SC_PACE_BACKGROUND),
	   "nor five in a row at first (a 20%% rate gives them once in 3,125)");
	ok(sc_pace_refusals_exceed(run6, 6, SC_PACE_BACKGROUND),
	   "six in a row are (once in 15,625)");
	ok(sc_pace_refusals_exceed(run6, 64, SC_PACE_BACKGROUND),
	   "six in a row after 58 answers that went through: the latest stretch counts");
	ok(!sc_pace_refusals_exceed(0xf, 4, 0), "against a background of 0: four in a row are not");
	ok(sc_pace_refusals_exceed(0x1f, 5, 0), "five are");
	ok(!sc_pace_refusals_exceed(run6 << 20, 64, SC_PACE_BACKGROUND),
	   "six in a row 20 answers back, none since: not now");
	/* One refusal in eight over all 64 answers: what a 10% host gives. */
	uint64_t one_in_eight = 0x0101010101010101ULL;
	ok(!sc_pace_refusals_exceed(one_in_eight, 64, SC_PACE_BACKGROUND),
	   "one in eight, spread: background");
	/* One in two over 64 (alternating): against 10% + 10 points, clearly more. */
	uint64_t one_in_two = 0x5555555555555555ULL;
	ok(sc_pace_refusals_exceed(one_in_two, 64, SC_PACE_BACKGROUND), "one in two: congestion");
	ok(!sc_pace_refusals_exceed(one_in_two, 64, 0.45),
	   "not against a background of 45%% (a slower pace refused as much)");
	ok(!sc_pace_refusals_exceed(~0ULL, 64, 0.9), "a background of 90%%: nothing can exceed it");
	ok(!sc_pace_refusals_exceed(0, 64, 0), "no refusal, no congestion");

	/* Streaks: a million answers from a host that refuses 10% at random
	 * (a fixed seed), the latest 64 tested at each refusal as the pace
	 * does, restarting after each false alarm. */
	uint64_t bits = 0, x = 42;
	int n = 0;
	long alarms = 0, refused = 0;
	for (long i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bool r = x % 10 == 0;
		bits = bits << 1 | (r ? 1u : 0u);
		n = n < 64 ? n + 1 : 64;
		refused += r;
		if (r && sc_pace_refusals_exceed(bits, n, SC_PACE_BACKGROUND)) {
			alarms++;
			bits = 0;
			n = 0;
		}
	}
	ok(refused > 95000 && refused < 105000, "the host refused 10%% (%ld)", refused);
	ok(alarms <= 3, "a million answers with 10%% refused: %ld false alarms", alarms);
}

/* A host that refuses 10% of requests whatever the pace, at the caller's
 * spacing (as sc-fetch --delay 250 --per-host 1): the pace never changes. */
static void test_flaky(enum sc_pace_signal refusal, const char *what)
{
	struct sc_pace p;
	struct server s = { .kind = FLAKY, .percent = 10, .refusal = refusal };

	sc_pace_init(&p, 1, 250, 0, 10);
	struct run r = simulate(&p, &s, 1800000, 0);
	double share = refused_share(&r);
	ok(share > 0.08 && share < 0.12, "%s 10%%: it did refuse (%.1f%%)", what, share * 100);
	is_int(r.events, 0, "%s 10%% at 250 ms for half an hour: no change of pace", what);
	ok(p.interval_ms == 250 && p.limit == 1, "the spacing stays the caller's (%.0f ms)",
	   p.interval_ms);
	ok(r.starts >= 0.99 * 1800000 / 250, "and every slot is used (%ld starts)", r.starts);

	/* Without a spacing, 16 in flight: the limit stays at 16. */
	struct server t = { .kind = FLAKY, .percent = 10, .refusal = refusal };
	sc_pace_init(&p, 16, 0, 0, 11);
	r = simulate(&p, &t, 60000, 0);
	is_int(r.events, 0, "%s 10%%, 16 in flight: no change of pace (%ld refused)", what,
	       r.refused);
	is_int(r.limit_at_end, 16, "the limit stays at the cap");
}

/* A host that refuses 30% whatever the pace: more than taken at first, so
 * the pace backs off once, sees the wider spacing refuse as much, comes
 * back, and keeps what it learnt. */
static void test_flaky_learnt(void)
{
	struct sc_pace p;
	struct server s = { .kind = FLAKY, .percent = 30, .refusal = SC_PACE_503 };

	sc_pace_init(&p, 1, 100, 0, 12);
	struct run r = simulate(&p, &s, 1800000, 0);
	ok(r.back_offs >= 1 && r.back_offs <= 3, "30%% refused: %ld back-offs in half an hour",
	   r.back_offs);
	ok(p.interval_ms == 100, "the spacing came back to the caller's (%.0f ms)", p.interval_ms);
	ok(p.background > 0.15 && p.background < 0.45, "30%% is the origin's background (%.2f)",
	   p.background);
	/* A look or two: 64 answers at twice the spacing, 64 at four times
	 * (38 s); more than 90 s would be a ratchet. */
	ok(r.slower_ms < 0.05 * 1800000, "slower than the caller's for %.0f s of 1,800",
	   r.slower_ms / 1000);
}

/* A host that answers 503 to a request within 300 ms of the one before:
 * refusals that rise with the pace, which the pace backs off from. */
static void test_close_gap(void)
{
	struct sc_pace p;
	struct server s = { .kind = CLOSE_GAP, .gap_ms = 300 };

	sc_pace_init(&p, 1, 100, 0, 13);
	struct run r = simulate(&p, &s, 600000, 60000);
	double share = refused_share(&r);
	double goodput = (double)r.answered_ok / 540.0;
	ok(share < 0.1, "503 within 300 ms: after a minute %.1f%% refused", share * 100);
	ok(goodput >= 0.8 * 1000 / 300.0, "at %.2f/s of its 3.33", goodput);
	ok(r.back_offs > 0, "backed off (%ld times)", r.back_offs);
}

/* A token bucket that answers 503 (as nginx's limit_req does), 16 in
 * flight allowed: the pace finds its rate. */
static void test_bucket_503(void)
{
	struct sc_pace p;
	struct server s = { .kind = BUCKET_503, .rate = 20, .burst = 5, .tokens = 5 };

	sc_pace_init(&p, 16, 0, 0, 14);
	struct run r = simulate(&p, &s, 600000, 120000);
	double share = refused_share(&r);
	double goodput = (double)r.answered_ok / 480.0;
	/* A 503 is not a 429: refusals within 10 points of the background
	 * are taken as the origin's, so the pace settles a little past the
	 * bucket's rate (about 13% refused), all of its rate used. */
	ok(share < 0.15, "503s from a 20/s bucket: %.1f%% refused", share * 100);
	ok(goodput >= 0.9 * 20, "at %.1f/s of its 20", goodput);
	ok(r.max_inflight_seen <= 16, "never past the cap (%ld)", r.max_inflight_seen);
}

/* A host that turns flakier half-way (10% refused, then 40%, whatever the
 * pace): the background learnt is stale, a look finds the new one, and
 * the pace comes back; no ratchet. */
static void test_turns_flakier(void)
{
	struct sc_pace p;
	struct server s = { .kind = FLAKY,
		            .percent = 10,
		            .refusal = SC_PACE_503,
		            .after_ms = 600000,
		            .kind_after = FLAKY,
		            .percent_after = 40 };

	sc_pace_init(&p, 1, 100, 0, 15);
	struct run r = simulate(&p, &s, 1800000, 600000);
	ok(p.interval_ms == 100, "10%% then 40%% refused: back at the caller's spacing (%.0f ms)",
	   p.interval_ms);
	ok(r.slower_ms < 0.05 * 1200000, "slower for %.0f s of the last 1,200", r.slower_ms / 1000);
	ok(p.background > 0.25 && p.background < 0.55, "40%% learnt as the background (%.2f)",
	   p.background);
}

/* A flaky host (10%) that later refuses requests that come within 300 ms
 * of the one before: the rate now rises with the pace, and is backed off
 * from, though its refusals were once background. */
static void test_turns_crowded(void)
{
	struct sc_pace p;
	struct server s = { .kind = FLAKY,
		            .percent = 10,
		            .refusal = SC_PACE_503,
		            .after_ms = 300000,
		            .kind_after = CLOSE_GAP,
		            .gap_ms = 300 };

	sc_pace_init(&p, 1, 100, 0, 16);
	struct run r = simulate(&p, &s, 900000, 360000);
	double share = refused_share(&r);
	ok(share < 0.1, "crowded after 5 min: %.1f%% refused from 6 min on", share * 100);
	ok(p.interval_ms >= 250, "spaced near the 300 ms it needs (%.0f ms)", p.interval_ms);
}

/* A first refusal at the caller's pace is no evidence: nothing changes. */
static void test_first_refusal(void)
{
	struct sc_pace p;
	struct sc_pace_event ev;

	sc_pace_init(&p, 1, 250, 0, 17);
	sc_pace_started(&p, 0, true);
	ok(!sc_pace_answered(&p, 5, 0, 5, SC_PACE_503, -1, &ev), "a first 503: no change of pace");
	sc_pace_started(&p, 250, true);
	ok(!sc_pace_answered(&p, 255, 250, 5, SC_PACE_RESET, -1, &ev), "nor a reset after it");
	ok(p.interval_ms == 250 && p.incidents == 0, "the spacing is the caller's (%.0f ms)",
	   p.interval_ms);
	for (int i = 2; i < 5; i++) {
		sc_pace_started(&p, 250.0 * i, true);
		sc_pace_answered(&p, 250.0 * i + 5, 250.0 * i, 5, SC_PACE_503, -1, &ev);
	}
	ok(p.interval_ms == 250, "nor five in a row");
	sc_pace_started(&p, 1250, true);
	ok(sc_pace_answered(&p, 1255, 1250, 5, SC_PACE_503, -1, &ev), "the sixth in a row is");
	ok(ev.interval_ms == 500 && p.checking && p.look,
	   "a look at twice the spacing (%.0f ms), to be checked", ev.interval_ms);
	is_str(sc_pace_reason_name(ev.reason), "503", "its reason is 503");
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
	test_rule();
	test_flaky(SC_PACE_503, "503");
	test_flaky(SC_PACE_RESET, "resets");
	test_flaky_learnt();
	test_close_gap();
	test_bucket_503();
	test_turns_flakier();
	test_turns_crowded();
	test_first_refusal();
	return tap_done();
}
