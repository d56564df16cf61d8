/* pace: how fast one origin may be asked, learnt from its answers.
 *
 * One struct sc_pace per origin (scheme, host, port).  The engine tells it
 * of every request start and every answer; it keeps a limit on requests in
 * flight and a spacing between starts, and says until when the whole
 * origin is blocked.  It is an AIMD controller:
 *
 *   - congestion (a 429 or 503 without Retry-After, a timeout, a reset)
 *     halves the limit; at a limit of one it widens the spacing instead
 *     (SC_PACE_WIDEN; SC_PACE_WIDEN_PROBING when refused while probing
 *     close to a spacing refused before), remembering the spacing refused;
 *   - a window with no congestion while the origin had more work than its
 *     pace allowed (SC_PACE_WINDOW_MS and SC_PACE_WINDOW_ANSWERS) narrows
 *     the spacing, quickly to a margin short of the last refused one and
 *     slowly past it (SC_PACE_APPROACH, SC_PACE_MARGIN, SC_PACE_PROBE), and, once the spacing is at the
 *     caller's floor, raises the limit by one;
 *   - a window whose mean latency is over a bound set by the origin's
 *     floor (SC_PACE_LATENCY_FACTOR x floor + SC_PACE_LATENCY_SLACK_MS)
 *     scales the limit by bound / mean (at least one less), before the
 *     server starts refusing;
 *   - Retry-After blocks the origin until the time given;
 *   - an origin that still refuses at the widest spacing
 *     (SC_PACE_MAX_INTERVAL_MS), or at a limit of one fails
 *     SC_PACE_UNREACHABLE times in a row or gives no answer but refusals
 *     for SC_PACE_REFUSING_MS (a server that answers 503 to everything is
 *     broken, not busy: slowing down further would only hold the crawl),
 *     is blocked for SC_PACE_BLOCK_MS, doubling
 *     with each block up to SC_PACE_BLOCK_MAX_MS, with +-20% jitter; the
 *     doubling is forgiven after SC_PACE_FORGIVE_MS without congestion.
 *
 * The caller's limits bound it: the limit never exceeds max_limit, the
 * spacing is never under min_interval_ms.  Only the first congestion of an
 * episode counts: answers to requests started before the last reaction are
 * the same episode seen again.  Pure: every call takes the time (ms, any
 * clock the caller keeps consistent); no I/O, nothing printed, not
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
#define SC_PACE_UNREACHABLE 3           /* failures in a row at limit 1: not answering */
#define SC_PACE_BLOCK_MS 60000.0        /* first block */
#define SC_PACE_BLOCK_MAX_MS 3600000.0  /* longest block */
#define SC_PACE_FORGIVE_MS 600000.0     /* quiet time that resets the block doubling */

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
	int window_starts;     /* starts in the window */
	bool window_busy;      /* work waited on the pace during the window */
	double window_latency; /* sum of the window's latencies (ms) */
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

/* The earliest time a request may start, given the last start (ms, or a
 * negative value for none); may be in the past. */
double sc_pace_next_start(const struct sc_pace *p, double last_start);

#endif
