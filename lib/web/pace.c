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
	p->window_refused = 0;
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
	p->paced_at = -INFINITY;
	p->background = SC_PACE_BACKGROUND;
	p->refusal_reason = SC_PACE_R_503;
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

/* The chance that k or more of n answers are refused when each is with
 * probability q: the binomial tail, its terms built from (1 - q)^n up
 * (n <= 64 and q < 1 keep them well inside a double's range). */
static double binomial_tail(int n, int k, double q)
{
	double term = pow(1 - q, n), tail = 0;

	for (int j = 0; j <= n; j++) {
		if (j >= k)
			tail += term;
		term *= (double)(n - j) / (double)(j + 1) * q / (1 - q);
	}
	return tail;
}

bool sc_pace_refusals_exceed(uint64_t bits, int n, double background)
{
	double q = fmax(0, background) + SC_PACE_EXCESS;
	int refused = 0;

	if (q >= 1)
		return false;
	if (n > 64)
		n = 64;
	/* Every stretch of the latest answers, one to n long.  Only one whose
	 * oldest answer is a refusal need be looked at: one reaching further
	 * back to an answer that went through has no more refusals and more
	 * answers.  The slack keeps a tail that equals the bound in exact
	 * arithmetic (0.1^4 against 1e-4) on the same side of it everywhere. */
	for (int k = 1; k <= n; k++) {
		if (!(bits >> (k - 1) & 1))
			continue;
		refused++;
		/* Under the rate itself a tail is never small: not worth its sum. */
		if ((double)refused <= q * k)
			continue;
		if (binomial_tail(k, refused, q) < SC_PACE_EVIDENCE * (1 - 1e-9))
			return true;
	}
	return false;
}

bool sc_pace_tally_exceeds(long answers, long refused, double background)
{
	double q = fmax(0, background) + SC_PACE_EXCESS;

	if (q >= 1 || answers <= 0 || (double)refused <= q * (double)answers)
		return false;
	double f = (double)refused / (double)answers;
	double kl = f * log(f / q) + (f < 1 ? (1 - f) * log((1 - f) / (1 - q)) : 0);
	return exp(-(double)answers * kl) < SC_PACE_EVIDENCE * (1 - 1e-9);
}

static double refused_share(uint64_t bits, int n)
{
	int refused = 0;

	for (int k = 0; k < n && k < 64; k++)
		refused += (int)(bits >> k & 1);
	return n > 0 ? (double)refused / (double)n : 0;
}

/* The pace changed: what its answers say starts afresh. */
static void paced(struct sc_pace *p, double now)
{
	p->paced_at = now;
	p->refusals = 0;
	p->answers = 0;
	p->tally_answers = 0;
	p->tally_refused = 0;
	p->here_answers = 0;
	p->here_refused = 0;
}

/* An answer as evidence of the pace in use; false when its request
 * started before the pace was (it is the earlier pace's). */
static bool note(struct sc_pace *p, double started_at, bool refused)
{
	if (started_at < p->paced_at)
		return false;
	p->refusals = p->refusals << 1 | (refused ? 1u : 0u);
	if (p->answers < SC_PACE_EVIDENCE_ANSWERS)
		p->answers++;
	p->tally_answers++;
	p->tally_refused += refused;
	p->here_answers++;
	p->here_refused += refused;
	return true;
}

static void fill(const struct sc_pace *p, double now, struct sc_pace_event *ev)
{
	ev->limit_new = p->limit;
	ev->interval_ms = p->interval_ms;
	ev->blocked_until = p->blocked_until > now ? p->blocked_until : 0;
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
	p->congested_at = now;
	p->checking = false;
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
	paced(p, now);
	window_reset(p, now);
	fill(p, now, ev);
}

/* Whether a wider pace's answers (n_wide, refused_wide) refuse no less
 * than a faster one's: with enough let through to tell a rate from none (a
 * server that refuses all is down; near all, a rate limiter lets twice the
 * share through at half the pace, which a few answers cannot show), and a
 * share refused not under the faster's by more than a standard error. */
static bool refuses_no_less(long n_wide, long refused_wide, long n_fast, long refused_fast)
{
	if (n_wide - refused_wide < SC_PACE_LET_THROUGH || n_fast <= 0)
		return false;
	double wide = (double)refused_wide / (double)n_wide;
	double fast = (double)refused_fast / (double)n_fast;
	double pooled = (double)(refused_wide + refused_fast) / (double)(n_wide + n_fast);
	double se = sqrt(pooled * (1 - pooled) * (1.0 / (double)n_wide + 1.0 / (double)n_fast));
	return fast - wide <= se;
}

/* Goes back to the pace a back-off on evidence left, what the wider one
 * refused being the origin's background.  After a look, the spacing
 * refused before it is kept; else the refusals that widened it were the
 * background's, not the pace's. */
static void come_back(struct sc_pace *p, double now, double wider, struct sc_pace_event *ev)
{
	p->background = wider;
	p->background_measured = true;
	p->limit = p->faster_limit;
	p->interval_ms = p->faster_interval_ms;
	p->ceiling_ms = p->look ? p->faster_ceiling_ms : 0;
	p->checking = false;
	sc_pace_bound(p, p->max_limit, p->min_interval_ms);
	paced(p, now);
	window_reset(p, now);
	ev->reason = SC_PACE_R_RECOVER;
	fill(p, now, ev);
}

/* Refusals beyond the background at this pace: back off as for a 429, and
 * keep the pace left and its tally for the check (check_back_off).  A look
 * (no slower pace measured) does not mark the spacing it leaves as
 * refused. */
static void back_off(struct sc_pace *p, double now, bool look, struct sc_pace_event *ev)
{
	long limit = p->limit, answers = p->here_answers, refused = p->here_refused;
	double interval = p->interval_ms, ceiling = p->ceiling_ms;

	react(p, now, false, ev);
	if (ev->gave_up)
		return;
	if (look)
		p->ceiling_ms = ceiling;
	p->checking = true;
	p->look = look;
	p->faster_limit = limit;
	p->faster_interval_ms = interval;
	p->faster_ceiling_ms = ceiling;
	p->faster_answers = answers;
	p->faster_refused = refused;
}

/* A back-off on evidence, once the wider pace has given its answers for
 * the check (its refusals meanwhile are not acted on: it is already
 * slower).  Too fast still by the background, a look looks one step
 * wider, unless the wider pace refuses no less than the faster did (when
 * that was measured as well: the answers that made the first back-off
 * were chosen by being many refusals, and would judge it unfairly); else
 * it comes back, with what the wider showed as the background to judge
 * the faster by afresh.  A back-off made against a measured background
 * stands unless the wider refuses no less (it bought nothing), lowering
 * the background if it refuses less; still too fast, the background is
 * stale (the origin may have turned flakier) and a look is made. */
static bool check_back_off(struct sc_pace *p, double now, struct sc_pace_event *ev)
{
	if (!p->checking || p->answers < SC_PACE_CHECK_ANSWERS)
		return false;
	long n = p->answers;
	long refused = (long)llround(refused_share(p->refusals, p->answers) * (double)n);
	double share = (double)refused / (double)n;
	bool too_fast = sc_pace_refusals_exceed(p->refusals, p->answers, p->background) ||
	                sc_pace_tally_exceeds(n, refused, p->background);
	bool no_less = refuses_no_less(n, refused, p->faster_answers, p->faster_refused);
	if (p->look) {
		bool background = share <= SC_PACE_BACKGROUND + SC_PACE_EXCESS;
		if (background || (no_less && p->faster_answers >= SC_PACE_CHECK_ANSWERS)) {
			come_back(p, now, share, ev);
			return true;
		}
		ev->reason = p->refusal_reason;
		back_off(p, now, true, ev);
		return true;
	}
	if (too_fast) {
		p->background = SC_PACE_BACKGROUND;
		p->background_measured = false;
		ev->reason = p->refusal_reason;
		back_off(p, now, true, ev);
		return true;
	}
	if (no_less) {
		come_back(p, now, share, ev);
		return true;
	}
	p->checking = false;
	p->background = fmin(p->background, share);
	return false;
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
	double share = refused_share(p->refusals, p->answers);
	bool measured = p->answers >= SC_PACE_CHECK_ANSWERS;
	/* Refusals within what the origin gives anyway leave a window clean. */
	bool clean = p->window_refused <=
	             (p->background + SC_PACE_EXCESS) * (p->window_answers + p->window_refused);
	if (busy && p->limit > 1 && mean > bound) {
		/* The gradient: at the same service rate, latency grows with what
		 * waits in the server's queue, so the limit that brings it back
		 * under the bound is the limit scaled by bound / mean. */
		long to = (long)((double)p->limit * bound / mean);
		p->limit = to < 1 ? 1 : to < p->limit ? to : p->limit - 1;
		p->reacted_at = now;
		ev->reason = SC_PACE_R_LATENCY;
		changed = true;
	} else if (busy && clean && !p->checking && recover(p)) {
		/* Leaving a slower pace: what it refused is the background,
		 * when it answered enough to tell and refused less. */
		if (measured && share <= p->background) {
			p->background = share;
			p->background_measured = true;
		}
		ev->reason = SC_PACE_R_RECOVER;
		changed = true;
		/* Its evidence is kept: a slower pace's refusals can only
		 * understate a faster one's. */
		p->here_answers = 0;
		p->here_refused = 0;
	}
	p->latency_floor_ms *= SC_PACE_LATENCY_RELAX;
	if (now - p->congested_at >= SC_PACE_FORGIVE_MS)
		p->block_level = 0;
	if (changed && ev->reason == SC_PACE_R_LATENCY)
		paced(p, now);
	window_reset(p, now);
	fill(p, now, ev);
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

/* A 429, or a Retry-After: the server said it, and the pace answers at once
 * (the first of an episode; a later Retry-After still moves the block). */
static bool told_to_slow(struct sc_pace *p, double now, double started_at, bool unreachable,
                         enum sc_pace_reason reason, struct sc_pace_event *ev)
{
	if (started_at < p->reacted_at && !unreachable) {
		if (reason != SC_PACE_R_RETRY_AFTER)
			return false;
		/* The episode's reaction is made; the new time is still news. */
		p->congested_at = now;
		ev->reason = SC_PACE_R_RETRY_AFTER;
		ev->limit_new = p->limit;
		ev->interval_ms = p->interval_ms;
		ev->blocked_until = p->blocked_until;
		return true;
	}
	ev->reason = reason;
	react(p, now, unreachable, ev);
	return true;
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
		note(p, started_at, false);
		if (check_back_off(p, now, ev))
			return true;
		if (p->window_answers < SC_PACE_WINDOW_ANSWERS ||
		    now - p->window_start < SC_PACE_WINDOW_MS)
			return false;
		return close_window(p, now, ev);
	}
	if (p->refusing_since < 0)
		p->refusing_since = now;
	if (signal == SC_PACE_TIMEOUT || signal == SC_PACE_RESET)
		p->failures_in_row++;
	bool told = retry_after_ms >= 0 && (signal == SC_PACE_429 || signal == SC_PACE_503);
	if (told)
		block(p, now, now + retry_after_ms);
	bool unreachable = p->limit == 1 && (p->failures_in_row >= SC_PACE_UNREACHABLE ||
	                                     now - p->refusing_since >= SC_PACE_REFUSING_MS);
	if (told)
		return told_to_slow(p, now, started_at, unreachable, SC_PACE_R_RETRY_AFTER, ev);
	if (signal == SC_PACE_429)
		return told_to_slow(p, now, started_at, unreachable, SC_PACE_R_429, ev);
	/* A refusal: congestion only on evidence that the pace causes it. */
	p->window_refused++;
	bool evidence = note(p, started_at, true);
	ev->reason = reason_of(signal);
	p->refusal_reason = ev->reason;
	if (unreachable) {
		react(p, now, true, ev);
		return true;
	}
	/* Under a check, only a pace that refuses all, or more than a flaky
	 * host is taken to (SC_PACE_FLAKY_MAX), is slowed at once. */
	double background = p->background;
	if (p->checking && p->tally_refused < p->tally_answers)
		background = fmax(background, SC_PACE_FLAKY_MAX);
	if (evidence && (sc_pace_refusals_exceed(p->refusals, p->answers, background) ||
	                 sc_pace_tally_exceeds(p->tally_answers, p->tally_refused, background))) {
		back_off(p, now, p->checking ? p->look : !p->background_measured, ev);
		return true;
	}
	return check_back_off(p, now, ev);
}
