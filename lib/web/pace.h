/* pace: how fast one origin may be asked, learnt from its answers.
 *
 * One struct sc_pace per origin (scheme, host, port).  The engine tells it
 * of every request start and every answer; it keeps a limit on requests in
 * flight and a spacing between starts, and says until when the whole
 * origin is blocked.  It is an AIMD controller; what makes it slow down is
 * the server saying so, or evidence that the pace is what it refuses:
 *
 *   - a 429 (the server's own "too fast") halves the limit; at a limit of
 *     one it widens the spacing instead (SC_PACE_WIDEN; SC_PACE_WIDEN_PROBING
 *     when refused while probing close to a spacing refused before),
 *     remembering the spacing refused.  A Retry-After (on a 429 or 503)
 *     does the same and blocks the origin until the time given;
 *   - a 503 without Retry-After, a timeout or a reset is a refusal, which a
 *     flaky backend gives whatever the pace: alone it is no sign of load.
 *     Congestion is a refusal rate that rises with the pace.  The same
 *     back-off is made when the refusals at the pace in use are more than
 *     the origin's background rate plus SC_PACE_EXCESS would give by chance
 *     less often than SC_PACE_EVIDENCE: among any number of the latest
 *     SC_PACE_EVIDENCE_ANSWERS answers (a binomial tail, for a burst), or
 *     over all since the pace last slowed (a Chernoff bound, for a small
 *     excess that lasts).  See sc_pace_refusals_exceed, sc_pace_tally_exceeds;
 *   - the background is the rate the origin showed at a slower pace; before
 *     any was measured it is SC_PACE_BACKGROUND, so a first refusal, or five
 *     in a row, is no evidence (a host that fails one request in ten gives
 *     them anyway).  A back-off made against it is a look: the wider pace
 *     is measured over SC_PACE_CHECK_ANSWERS answers (its refusals are not
 *     acted on meanwhile, unless it refuses all); then, if it refuses what a
 *     background may (SC_PACE_BACKGROUND + SC_PACE_EXCESS) or no less than
 *     the faster pace measured as well, the pace comes back to the faster
 *     (halving the spacing, or doubling the limit), with what the wider
 *     showed as the background to judge it by afresh; else it looks one
 *     step wider.  "No less": SC_PACE_LET_THROUGH answers or more went
 *     through, and its share refused is not under the faster's by more than
 *     a standard error;
 *   - a back-off made against a measured background is checked the same
 *     way: the wider pace still too fast by it says the background is
 *     stale (the host turned flakier) and a look is made; refusing no less
 *     than the faster did, it bought nothing and the pace comes back, the
 *     refused spacing forgotten; else it stands, and lowers the background
 *     if it refuses less.  So a constant error rate costs its retries and,
 *     once at most, a look;
 *   - a window with no congestion and refusals within background +
 *     SC_PACE_EXCESS, while the origin had more work than its pace allowed
 *     (SC_PACE_WINDOW_MS and SC_PACE_WINDOW_ANSWERS), narrows the spacing,
 *     quickly to a margin short of the last refused one and slowly past it
 *     (SC_PACE_APPROACH, SC_PACE_MARGIN, SC_PACE_PROBE), and, once the
 *     spacing is at the caller's floor, raises the limit by one.  The
 *     evidence is kept across it (a slower pace's refusals can only
 *     understate a faster one's);
 *   - a window whose mean latency is over a bound set by the origin's
 *     floor (SC_PACE_LATENCY_FACTOR x floor + SC_PACE_LATENCY_SLACK_MS)
 *     scales the limit by bound / mean (at least one less), before the
 *     server starts refusing;
 *   - an origin that still refuses at the widest spacing
 *     (SC_PACE_MAX_INTERVAL_MS), or at a limit of one fails
 *     SC_PACE_UNREACHABLE times in a row (timeouts, resets: six, which a
 *     host that resets one connection in ten does once in a million) or
 *     gives no answer but refusals for SC_PACE_REFUSING_MS (a server that
 *     answers 503 to everything is broken, not busy: slowing down further
 *     would only hold the crawl), is blocked for SC_PACE_BLOCK_MS, doubling
 *     with each block up to SC_PACE_BLOCK_MAX_MS, with +-20% jitter; the
 *     doubling is forgiven after SC_PACE_FORGIVE_MS without congestion.
 *
 * The caller's limits bound it: the limit never exceeds max_limit, the
 * spacing is never under min_interval_ms.  Only the first 429 of an
 * episode counts, and only answers to requests started at the pace in use
 * are evidence of it: answers to requests started before the last change
 * are the earlier pace seen again.  Pure: every call takes the time (ms,
 * any clock the caller keeps consistent); no I/O, nothing printed, not
 * thread-safe (one pace belongs to one event loop).  The struct is plain
 * data owned by the caller, so it can be saved and restored (origin state
 * shared by several processes). */
#ifndef SC_PACE_H
#define SC_PACE_H

#include <stdbool.h>
#include <stdint.h>

#define SC_PACE_WIDEN 2.0             /* spacing factor on congestion at limit 1 */
#define SC_PACE_WIDEN_PROBING 1.25    /* ... when refused while probing past a refusal */
#define SC_PACE_APPROACH 0.8          /* spacing factor per clean window, down to ... */
#define SC_PACE_MARGIN 1.1            /* ... 10% wider than the spacing last refused */
#define SC_PACE_PROBE 0.99            /* spacing factor per clean window at or past it */
#define SC_PACE_FORGET_CEILING 0.9    /* past 90% of the refused spacing, forget it */
#define SC_PACE_WINDOW_MS 1000.0      /* a window lasts at least this long ... */
#define SC_PACE_WINDOW_ANSWERS 4      /* ... and holds at least this many answers */
#define SC_PACE_LATENCY_FACTOR 2.0    /* latency over factor x floor + slack ... */
#define SC_PACE_LATENCY_SLACK_MS 25.0 /* ... is the server slowing under us */
#define SC_PACE_LATENCY_RELAX \
	1.001 /* the floor drifts up per window: a server slower for all is learnt in minutes */
#define SC_PACE_MAX_INTERVAL_MS 30000.0 /* the widest spacing */
#define SC_PACE_REFUSING_MS 10000.0     /* refused this long with no answer between, at limit 1 */
#define SC_PACE_UNREACHABLE 6           /* failures in a row at limit 1: not answering */
#define SC_PACE_BLOCK_MS 60000.0        /* first block */
#define SC_PACE_BLOCK_MAX_MS 3600000.0  /* longest block */
#define SC_PACE_FORGIVE_MS 600000.0     /* quiet time that resets the block doubling */
#define SC_PACE_BACKGROUND 0.10         /* refusal rate taken as background at first */
#define SC_PACE_EXCESS 0.10             /* refusals are congestion only past background + this */
#define SC_PACE_EVIDENCE 1e-4           /* ... and as many as chance gives less often than this */
#define SC_PACE_EVIDENCE_ANSWERS 64     /* the latest answers at a pace the test looks at */
#define SC_PACE_CHECK_ANSWERS 64        /* answers at a wider pace before it is compared */
#define SC_PACE_LET_THROUGH 8           /* ... of which this many through to say "no less" */
#define SC_PACE_FLAKY_MAX 0.5           /* ... refusing clearly more, slowed at once */

/* What an answer says of the origin's load. */
enum sc_pace_signal {
	SC_PACE_ANSWER,  /* an answer that says nothing of load (any status but 429/503) */
	SC_PACE_429,     /* Too Many Requests */
	SC_PACE_503,     /* Service Unavailable */
	SC_PACE_TIMEOUT, /* no answer in time */
	SC_PACE_RESET    /* connection refused, reset or cut short */
};

/* Why the pace changed; names as on the metrics stream (sc_pace_reason_name). */
enum sc_pace_reason {
	SC_PACE_R_429,
	SC_PACE_R_503,
	SC_PACE_R_TIMEOUT,
	SC_PACE_R_RESET,
	SC_PACE_R_LATENCY,
	SC_PACE_R_RETRY_AFTER,
	SC_PACE_R_RECOVER
};
/* "429", "503", "timeout", "reset", "latency", "retry_after", "recover". */
const char *sc_pace_reason_name(enum sc_pace_reason r);

/* One change of pace, for the caller to report. */
struct sc_pace_event {
	enum sc_pace_reason reason;
	long limit_old, limit_new;
	double interval_ms;   /* spacing after the change */
	double blocked_until; /* ms; 0 when the origin is not blocked */
	bool gave_up;         /* the controller blocked the origin (not a Retry-After) */
};

struct sc_pace {
	/* The caller's bounds. */
	long max_limit;         /* --per-host, or the global cap */
	double min_interval_ms; /* --delay, Crawl-delay: the spacing floor */
	/* What the controller learnt. */
	long limit;              /* requests in flight allowed now, 1..max_limit */
	double interval_ms;      /* spacing between starts, >= min_interval_ms */
	double ceiling_ms;       /* the spacing last refused; 0: none known */
	double blocked_until;    /* no start before this (ms); 0: not blocked */
	int block_level;         /* blocks since the last forgiveness */
	double latency_floor_ms; /* lowest latency of an answer (drifting up); 0: none yet */
	/* The episode and the window. */
	double reacted_at;     /* the last reaction to congestion (ms) */
	double congested_at;   /* the last congestion seen (ms), for forgiveness */
	int failures_in_row;   /* timeouts and resets with no answer between */
	double refusing_since; /* the first congestion with no answer since (ms); -1: none */
	double window_start;   /* ms */
	int window_answers;    /* answers in the window */
	int window_refused;    /* refusals (503s, timeouts, resets) in the window */
	int window_starts;     /* starts in the window */
	bool window_busy;      /* work waited on the pace during the window */
	double window_latency; /* sum of the window's latencies (ms) */
	/* The refusal evidence (503s, timeouts, resets; not 429s). */
	double paced_at;   /* the pace last slowed or came back (ms): earlier starts are not its */
	uint64_t refusals; /* the latest answers at this pace, newest in bit 0: 1 refused */
	int answers;       /* how many of those bits are answers, <= 64 */
	long tally_answers, tally_refused; /* since the pace last slowed (not reset by recovery) */
	long here_answers, here_refused;   /* since the pace last changed at all */
	double background;        /* refusal rate at a slower pace, or SC_PACE_BACKGROUND */
	bool background_measured; /* false: SC_PACE_BACKGROUND, none seen yet */
	enum sc_pace_reason refusal_reason; /* of the latest refusal */
	bool checking;                      /* a back-off on evidence waits for its check, */
	bool look;                          /* ... made with no slower pace measured: */
	long faster_limit;                  /* ... the pace it left, */
	double faster_interval_ms, faster_ceiling_ms;
	long faster_answers, faster_refused; /* ... and its tally */
	/* For the summary. */
	uint64_t incidents; /* reactions to congestion, blocks included */
	double blocked_ms;  /* time blocked, all blocks added */
	uint64_t rng;       /* jitter of blocks */
};

/* Starts a pace at the caller's limits: max_limit >= 1 in flight, no
 * spacing under min_interval_ms.  seed makes the block jitter repeatable. */
void sc_pace_init(struct sc_pace *p, long max_limit, double min_interval_ms, double now,
                  uint64_t seed);

/* A new spacing floor (Crawl-delay learnt), or a new cap; what was learnt
 * is kept within the new bounds. */
void sc_pace_bound(struct sc_pace *p, long max_limit, double min_interval_ms);

/* A request starts at now; more_waiting says the origin still has work
 * that its pace holds back (the window was busy). */
void sc_pace_started(struct sc_pace *p, double now, bool more_waiting);

/* The answer to a request started at started_at came at now after
 * latency_ms.  retry_after_ms >= 0 is a 429's or 503's Retry-After (the
 * caller bounds it), < 0 none.  Returns true and fills *ev when the pace
 * changed. */
bool sc_pace_answered(struct sc_pace *p, double now, double started_at, double latency_ms,
                      enum sc_pace_signal signal, double retry_after_ms, struct sc_pace_event *ev);

/* The rule: whether the refusals among the latest answers (bits, newest in
 * bit 0, 1 refused; n of them, <= 64) are more, for some number of the
 * latest, than a refusal rate of background + SC_PACE_EXCESS would give by
 * chance with a probability under SC_PACE_EVIDENCE. */
bool sc_pace_refusals_exceed(uint64_t bits, int n, double background);

/* The same over a tally of any size: refused of answers, by the Chernoff
 * bound exp(-answers KL(refused/answers | background + SC_PACE_EXCESS)) on
 * the binomial tail (exact when all are refused, over it otherwise). */
bool sc_pace_tally_exceeds(long answers, long refused, double background);

/* The earliest time a request may start, given the last start (ms, or a
 * negative value for none); may be in the past. */
double sc_pace_next_start(const struct sc_pace *p, double last_start);

#endif
