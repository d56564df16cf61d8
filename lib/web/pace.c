/* pace: the per-origin AIMD controller (pace.h says what it does and why
 * its constants are what they are). */
#include <math.h>
#include <string.h>

#include "web/pace.h"

const char *sc_pace_reason_name(enum sc_pace_reason r)
{
	switch (r) {
	case SC_PACE_R_429:
		return "429";
	case SC_PACE_R_503:
		return "503";
	case SC_PACE_R_TIMEOUT:
		return "timeout";
	case SC_PACE_R_RESET:
		return "reset";
	case SC_PACE_R_LATENCY:
		return "latency";
	case SC_PACE_R_RETRY_AFTER:
		return "retry_after";
	case SC_PACE_R_RECOVER:
		return "recover";
	}
	return "unknown";
}

static void window_reset(struct sc_pace *p, double now)
{
	p->window_start = now;
	p->window_answers = 0;
	p->window_starts = 0;
	p->window_busy = false;
	p->window_latency = 0;
}

void sc_pace_init(struct sc_pace *p, long max_limit, double min_interval_ms, double now,
                  uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->max_limit = max_limit < 1 ? 1 : max_limit;
	p->min_interval_ms = min_interval_ms > 0 ? min_interval_ms : 0;
	p->limit = p->max_limit;
	p->interval_ms = p->min_interval_ms;
	p->reacted_at = -INFINITY;
	p->congested_at = -INFINITY;
	p->refusing_since = -1;
	p->rng = seed ? seed : 0x9e3779b97f4a7c15ULL;
	window_reset(p, now);
}

void sc_pace_bound(struct sc_pace *p, long max_limit, double min_interval_ms)
{
	p->max_limit = max_limit < 1 ? 1 : max_limit;
	p->min_interval_ms = min_interval_ms > 0 ? min_interval_ms : 0;
	if (p->limit > p->max_limit)
		p->limit = p->max_limit;
	if (p->limit < 1)
		p->limit = 1;
	if (p->interval_ms < p->min_interval_ms)
		p->interval_ms = p->min_interval_ms;
}

void sc_pace_started(struct sc_pace *p, double now, bool more_waiting)
{
	(void)now;
	p->window_starts++;
	if (more_waiting)
		p->window_busy = true;
}

double sc_pace_next_start(const struct sc_pace *p, double last_start)
{
	double at = last_start >= 0 ? last_start + p->interval_ms : -INFINITY;

	return at > p->blocked_until ? at : p->blocked_until;
}

static double jitter(struct sc_pace *p)
{
	/* xorshift64*: uniform in [0.8, 1.2) */
	p->rng ^= p->rng >> 12;
	p->rng ^= p->rng << 25;
	p->rng ^= p->rng >> 27;
	uint64_t r = p->rng * 0x2545f4914f6cdd1dULL;
	return 0.8 + 0.4 * (double)(r >> 11) / 9007199254740992.0;
}

static void block(struct sc_pace *p, double now, double until)
{
	if (until <= p->blocked_until)
		return;
	p->blocked_ms += until - (p->blocked_until > now ? p->blocked_until : now);
	p->blocked_until = until;
}

/* The spacing the origin was actually asked at in this window: the pace's
 * own, or the one the answers' round trips made when that is wider. */
static double spacing_in_use(const struct sc_pace *p, double now)
{
	double s = p->interval_ms;
	double elapsed = now - p->window_start;

	if (p->window_starts > 0 && elapsed / p->window_starts > s)
		s = elapsed / p->window_starts;
	return s;
}

/* The first congestion of an episode: halve the limit, or widen the
 * spacing, or block an origin that refuses even the widest. */
static void react(struct sc_pace *p, double now, bool unreachable, struct sc_pace_event *ev)
{
	ev->gave_up = false;
	p->incidents++;
	p->reacted_at = now;
	if (p->limit > 1) {
		p->limit = p->limit / 2;
	} else {
		double in_use = spacing_in_use(p, now);
		if (unreachable || in_use >= SC_PACE_MAX_INTERVAL_MS) {
			double ms = SC_PACE_BLOCK_MS * ldexp(1.0, p->block_level);
			if (ms > SC_PACE_BLOCK_MAX_MS)
				ms = SC_PACE_BLOCK_MAX_MS;
			else
				p->block_level++;
			block(p, now, now + ms * jitter(p));
			ev->gave_up = true;
		} else {
			/* Refused while probing past a known refusal: the pace is
			 * already close, so the step back is small. */
			bool probing = p->ceiling_ms > 0 &&
			               p->interval_ms <= p->ceiling_ms * SC_PACE_MARGIN;
			double widen = probing ? SC_PACE_WIDEN_PROBING : SC_PACE_WIDEN;
			p->ceiling_ms = in_use;
			p->interval_ms = fmin(SC_PACE_MAX_INTERVAL_MS,
			                      fmax(in_use * widen, p->min_interval_ms));
		}
	}
	window_reset(p, now);
	ev->limit_new = p->limit;
	ev->interval_ms = p->interval_ms;
	ev->blocked_until = p->blocked_until > now ? p->blocked_until : 0;
}

/* A clean, busy window: narrow the spacing, then raise the limit. */
static bool recover(struct sc_pace *p)
{
	if (p->interval_ms > p->min_interval_ms) {
		double near = p->ceiling_ms * SC_PACE_MARGIN;
		double next = p->interval_ms > near ? fmax(near, p->interval_ms * SC_PACE_APPROACH)
		                                    : p->interval_ms * SC_PACE_PROBE;
		if (p->ceiling_ms > 0 && next < p->ceiling_ms * SC_PACE_FORGET_CEILING)
			p->ceiling_ms = 0;
		/* Under a millisecond of spacing is no spacing at all. */
		p->interval_ms = next < 1.0 ? 0 : next;
		if (p->interval_ms < p->min_interval_ms)
			p->interval_ms = p->min_interval_ms;
		return true;
	}
	if (p->limit < p->max_limit) {
		p->limit++;
		return true;
	}
	return false;
}

/* The window is over: was the server slowing under us, or is there room? */
static bool close_window(struct sc_pace *p, double now, struct sc_pace_event *ev)
{
	double mean = p->window_latency / p->window_answers;
	bool busy = p->window_busy;
	bool changed = false;

	double bound = SC_PACE_LATENCY_FACTOR * p->latency_floor_ms + SC_PACE_LATENCY_SLACK_MS;
	if (busy && p->limit > 1 && mean > bound) {
		/* The gradient: at the same service rate, latency grows with what
		 * waits in the server's queue, so the limit that brings it back
		 * under the bound is the limit scaled by bound / mean. */
		long to = (long)((double)p->limit * bound / mean);
		p->limit = to < 1 ? 1 : to < p->limit ? to : p->limit - 1;
		p->reacted_at = now;
		ev->reason = SC_PACE_R_LATENCY;
		changed = true;
	} else if (busy && recover(p)) {
		ev->reason = SC_PACE_R_RECOVER;
		changed = true;
	}
	p->latency_floor_ms *= SC_PACE_LATENCY_RELAX;
	if (now - p->congested_at >= SC_PACE_FORGIVE_MS)
		p->block_level = 0;
	window_reset(p, now);
	ev->limit_new = p->limit;
	ev->interval_ms = p->interval_ms;
	ev->blocked_until = p->blocked_until > now ? p->blocked_until : 0;
	return changed;
}

static enum sc_pace_reason reason_of(enum sc_pace_signal s)
{
	switch (s) {
	case SC_PACE_429:
		return SC_PACE_R_429;
	case SC_PACE_503:
		return SC_PACE_R_503;
	case SC_PACE_TIMEOUT:
		return SC_PACE_R_TIMEOUT;
	default:
		return SC_PACE_R_RESET;
	}
}

bool sc_pace_answered(struct sc_pace *p, double now, double started_at, double latency_ms,
                      enum sc_pace_signal signal, double retry_after_ms, struct sc_pace_event *ev)
{
	ev->limit_old = p->limit;
	ev->gave_up = false;
	if (signal == SC_PACE_ANSWER) {
		p->failures_in_row = 0;
		p->refusing_since = -1;
		p->window_answers++;
		p->window_latency += latency_ms > 0 ? latency_ms : 0;
		if (p->latency_floor_ms <= 0 || latency_ms < p->latency_floor_ms)
			p->latency_floor_ms = latency_ms > 0 ? latency_ms : 0.001;
		if (p->window_answers < SC_PACE_WINDOW_ANSWERS ||
		    now - p->window_start < SC_PACE_WINDOW_MS)
			return false;
		return close_window(p, now, ev);
	}
	p->congested_at = now;
	if (p->refusing_since < 0)
		p->refusing_since = now;
	if (signal == SC_PACE_TIMEOUT || signal == SC_PACE_RESET)
		p->failures_in_row++;
	bool told = retry_after_ms >= 0 && (signal == SC_PACE_429 || signal == SC_PACE_503);
	if (told)
		block(p, now, now + retry_after_ms);
	bool unreachable = p->limit == 1 && (p->failures_in_row >= SC_PACE_UNREACHABLE ||
	                                     now - p->refusing_since >= SC_PACE_REFUSING_MS);
	if (started_at < p->reacted_at && !unreachable) {
		if (!told)
			return false;
		/* The episode's reaction is made; the new time is still news. */
		ev->reason = SC_PACE_R_RETRY_AFTER;
		ev->limit_new = p->limit;
		ev->interval_ms = p->interval_ms;
		ev->blocked_until = p->blocked_until;
		return true;
	}
	ev->reason = told ? SC_PACE_R_RETRY_AFTER : reason_of(signal);
	react(p, now, unreachable, ev);
	return true;
}
