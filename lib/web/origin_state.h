/* origin_state: what a crawl knows of each origin's pace, kept in an
 * SQLite file that every sc-fetch of the crawl shares (--origin-state).
 *
 * Each sc-fetch of a crawl in rounds is a new process; without this file
 * each would start its per-origin clocks afresh, and a host whose last
 * request came at the end of one round would be asked again at once by
 * the next.  One row per origin holds the time of its last start (set by
 * every start that a spacing governs), the pace the
 * controller learnt (lib/web/pace), its background refusal rate, and a
 * block with its reason.  A file written before the background was kept
 * opens: the column is added, empty (none measured).  Times
 * are wall-clock milliseconds since the epoch, the one clock that
 * processes (and hosts of a crawl) share.
 *
 * Several processes may use one file at once (core/sqlite_shared): a
 * start claims its slot in one immediate transaction, so two processes
 * never both start within an origin's spacing.  Each handle marks the
 * starts it claims as its own (the owner column, random per open), so
 * that a caller which spaces its own starts waits only on the others'.
 * Nothing here prints; an error's text goes into the caller's err, cut
 * to errlen bytes (lib/README.md), and err may be NULL. */
#ifndef SC_ORIGIN_STATE_H
#define SC_ORIGIN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sc_origin_state; /* an open file; opaque */

/* The pace of one origin as saved. */
struct sc_origin_pace {
	long limit;              /* requests in flight (pace.h) */
	double interval_ms;      /* spacing between starts */
	double ceiling_ms;       /* the spacing last refused; 0: none */
	double latency_floor_ms; /* 0: none yet */
	int block_level;
	int64_t blocked_until; /* wall ms; 0: not blocked */
	char reason[16];       /* why it was last blocked or slowed ("429", ...), or "" */
	double background;     /* refusal rate taken as the origin's own; < 0: none measured */
};

/* Opens or creates the file.  NULL with err on failure. */
struct sc_origin_state *sc_origin_state_open(const char *path, char *err, size_t errlen);
void sc_origin_state_close(struct sc_origin_state *s);

/* on: the caller spaces its own starts (sc-fetch's gates do, from the
 * request on the wire), so the last start claimed or sent through this
 * handle does not hold its next claim; a start of any other handle (or
 * process) still does, and so does a block.  Off when opened. */
void sc_origin_state_own_spacing(struct sc_origin_state *s, bool on);

/* Claims a start for origin at now (wall ms), gap_ms being the spacing in
 * force for it (the caller's: --delay, Crawl-delay, the learnt pace), so
 * the last start recorded by any process counts with the spacing known
 * now.  Returns 1 when it may start now (now becomes the last start), 0
 * when the last start or a block holds the origin until *not_before (wall
 * ms), -1 on error with err. */
int sc_origin_state_claim(struct sc_origin_state *s, const char *origin, int64_t now, double gap_ms,
                          int64_t *not_before, char *err, size_t errlen);

/* The claimed start's request went out at now (wall ms): the origin's
 * last start moves to now if that is later, so that the spacing counts
 * from the request on the wire, not from the claim.  0, or -1 with err. */
int sc_origin_state_sent(struct sc_origin_state *s, const char *origin, int64_t now, char *err,
                         size_t errlen);

/* The last start claimed (wall ms; 0 when the origin is not known) and,
 * when saved, its pace (*found).  0, or -1 with err. */
int sc_origin_state_get(struct sc_origin_state *s, const char *origin, int64_t *last_start,
                        struct sc_origin_pace *pace, bool *found, char *err, size_t errlen);

/* Saves the pace of origin (its start times stay as claimed).  0, or -1. */
int sc_origin_state_put(struct sc_origin_state *s, const char *origin,
                        const struct sc_origin_pace *pace, char *err, size_t errlen);

/* Whether the processes sharing the file have work to do now, for
 * --defer-after: a process whose only URLs wait on held origins hands
 * them on only once no other process of the crawl is busy, since while
 * one is, the round goes on anyway and the held origins may as well be
 * fetched.  The handle's process is busy until busy_until (wall ms; a
 * time in the past, or 0: not busy), which it renews while it is, so
 * that a process killed stops counting once its time has passed.  The
 * handle's row goes at close.  0, or -1 with err. */
int sc_origin_state_busy(struct sc_origin_state *s, int64_t busy_until, char *err, size_t errlen);

/* *busy: whether any other handle (process) on the file is busy at now
 * (wall ms).  0, or -1 with err. */
int sc_origin_state_others_busy(struct sc_origin_state *s, int64_t now, bool *busy, char *err,
                                size_t errlen);

/* Each origin of the file as one JSON line (sc-fetch --origin-state FILE
 * --show, sc-fetch(1); crawl-progress.sh reads it by position), in the
 * order of the origins, handed to line (len bytes, no newline).  Its
 * members, always all of them and in this order: origin, last_start
 * (wall ms; 0: none), then the saved pace, null when none was saved:
 * limit, interval_ms, ceiling_ms, latency_floor_ms, block_level,
 * blocked_until (wall ms; 0: not blocked), reason ("" when none) and
 * background (null: none measured).  Returns 0; line's first nonzero
 * return, which ends the walk; or -1 with the reason in err (errlen
 * bytes, lib/README.md). */
typedef int (*sc_origin_line_fn)(const char *line, size_t len, void *ctx);
int sc_origin_state_show(struct sc_origin_state *s, sc_origin_line_fn line, void *ctx, char *err,
                         size_t errlen);

#endif
