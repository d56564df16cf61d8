/* fetch_pace: each origin's pace (--adaptive, lib/web/pace.h) and the
 * origin state shared with the other processes of a crawl (--origin-state,
 * lib/web/origin_state.h).  Owns one entry per origin for the run (kept
 * after the origin itself is swept, as robots.txt answers are, so that
 * what was learnt is not forgotten), the claims of starts in the shared
 * file, the outcomes fed to the controller, the origins blocked past
 * --retry-max-wait (whose waiting jobs the loop then fails at once), and
 * the summary's "pace".  The loop calls it at each start
 * (fetch_pace_claim) and at each attempt's end (fetch_pace_answered); it
 * moves the origin's gates through fetch_origin_set_pace. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "engine/fetch_engine.h"
#include "web/origin_state.h"
#include "web/pace.h"
#include "web/retry.h"

struct pace_entry {
	char *key;                        /* the origin's key (owned) */
	struct sc_strtab_link link;       /* in fetch_pace's table, by key */
	struct pace_entry *dnext;         /* the list of blocked origins, while in it */
	struct pace_entry *snext;         /* the list of requests sent, while in it */
	bool sent_pending;                /* in that list */
	struct sc_pace pace;              /* with --adaptive */
	double last_start;                /* ms (the loop's clock); -1: none yet */
	enum sc_pace_reason block_reason; /* of the block, while blocked */
	bool blocked_long;                /* in the blocked list */
	uint64_t throttles;               /* changes of pace */
};

struct fetch_pace {
	bool adaptive;
	struct sc_origin_state *state; /* --origin-state, or NULL */
	struct sc_strtab table;        /* the entries, in order of first use */
	struct pace_entry *blocked;    /* blocked past --retry-max-wait */
	struct pace_entry *sent;       /* a claimed start went out: to record */
	uint64_t held, state_errors;   /* starts another process held; file errors */
	/* --defer-after: what the file was last told and read of the
	 * processes' business (fetch_pace_others_busy). */
	bool told_busy, others_busy;
	double told_at, read_at; /* ms, the loop's clock; 0: never */
};

static struct pace_entry *entry_of(struct sc_strtab_link *link)
{
	return link ? SC_STRTAB_ENTRY(link, struct pace_entry, link) : NULL;
}

bool fetch_pace_init(struct fetch_engine *e, char *err, size_t errlen)
{
	const struct fetch_options *o = e->opts;

	if (!o->adaptive && !o->origin_state_path)
		return true;
	struct fetch_pace *fp = sc_calloc(1, sizeof(*fp));
	e->pace = fp;
	fp->adaptive = o->adaptive;
	if (o->origin_state_path) {
		char why[512] = "cannot open";
		fp->state = sc_origin_state_open(o->origin_state_path, why, sizeof(why));
		if (!fp->state) {
			snprintf(err, errlen, "--origin-state: %.230s", why);
			return false;
		}
		/* The loop's gates space this process's own starts (from the
		 * request on the wire); the file holds it only on the others'. */
		sc_origin_state_own_spacing(fp->state, true);
	}
	return true;
}

void fetch_pace_free(struct fetch_engine *e)
{
	struct fetch_pace *fp = e->pace;

	if (!fp)
		return;
	for (struct sc_strtab_link *l = fp->table.head, *next; l; l = next) {
		struct pace_entry *en = entry_of(l);
		next = l->next;
		free(en->key);
		free(en);
	}
	sc_strtab_free(&fp->table);
	sc_origin_state_close(fp->state);
	free(fp);
	e->pace = NULL;
}

/* How long a process counts as busy after it last said so, and how often
 * it says so again: a process killed stops holding the others' deferral
 * within BUSY_FOR_MS; the file is written at most once a second. */
#define BUSY_FOR_MS 3000
#define BUSY_RENEW_MS 1000
/* How long what was read of the others holds. */
#define OTHERS_READ_MS 250

bool fetch_pace_others_busy(struct fetch_engine *e, bool busy, double now)
{
	struct fetch_pace *fp = e->pace;

	if (!fp || !fp->state)
		return false;
	bool renew = busy && (!fp->told_busy || now - fp->told_at >= BUSY_RENEW_MS);
	if (renew || busy != fp->told_busy) {
		int64_t until = busy ? sc_wall_ms() + BUSY_FOR_MS : 0;
		if (sc_origin_state_busy(fp->state, until, NULL, 0) == 0) {
			fp->told_busy = busy;
			fp->told_at = now;
		} else {
			fp->state_errors++;
		}
	}
	if (busy)
		return false;
	if (fp->read_at == 0 || now - fp->read_at >= OTHERS_READ_MS) {
		bool others = false;
		if (sc_origin_state_others_busy(fp->state, sc_wall_ms(), &others, NULL, 0) != 0) {
			fp->state_errors++;
			others = false;
		}
		fp->others_busy = others;
		fp->read_at = now;
	}
	return fp->others_busy;
}

/* The loop's clock and the wall clock the shared file keeps. */
static double loop_ms_of_wall(int64_t wall, double now)
{
	return now + (double)(wall - sc_wall_ms());
}

static int64_t wall_of_loop_ms(double ms, double now)
{
	return sc_wall_ms() + (int64_t)llround(ms - now);
}

static long max_limit(const struct fetch_options *o)
{
	return o->per_host > 0 ? o->per_host : o->concurrency;
}

/* The spacing floor the user set: --delay and robots.txt's Crawl-delay. */
static double spacing_floor(const struct fetch_engine *e, const struct origin *origin)
{
	return fmax((double)e->opts->delay_ms, fetch_robots_delay_ms(e, origin));
}

/* A pace saved by an earlier process, within this run's limits. */
static void restore(struct fetch_engine *e, struct pace_entry *en, double now)
{
	struct sc_origin_pace saved;
	int64_t last = 0;
	bool found = false;

	if (sc_origin_state_get(e->pace->state, en->key, &last, &saved, &found, NULL, 0) != 0) {
		e->pace->state_errors++;
		return;
	}
	if (!found)
		return;
	struct sc_pace *p = &en->pace;
	p->limit = saved.limit;
	p->interval_ms = saved.interval_ms;
	p->ceiling_ms = saved.ceiling_ms;
	p->latency_floor_ms = saved.latency_floor_ms;
	p->block_level = saved.block_level;
	if (saved.background >= 0) {
		p->background = saved.background;
		p->background_measured = true;
	}
	if (saved.blocked_until > 0)
		p->blocked_until = loop_ms_of_wall(saved.blocked_until, now);
	sc_pace_bound(p, p->max_limit, p->min_interval_ms);
}

static struct pace_entry *entry_new(struct fetch_engine *e, const char *key, double now)
{
	struct fetch_pace *fp = e->pace;
	struct pace_entry *en = sc_calloc(1, sizeof(*en));

	en->key = sc_strdup(key);
	en->last_start = -1;
	sc_pace_init(&en->pace, max_limit(e->opts), (double)e->opts->delay_ms, now,
	             sc_retry_state_seed(e->loop.retry) ^ sc_fnv1a_str(key));
	if (fp->adaptive && fp->state)
		restore(e, en, now);
	sc_strtab_add(&fp->table, &en->link, en->key);
	return en;
}

/* The origin's gates from its pace (with --adaptive). */
static void apply(struct fetch_engine *e, struct pace_entry *en, struct origin *origin)
{
	if (e->pace->adaptive)
		fetch_origin_set_pace(&e->origins, origin, en->pace.limit, en->pace.interval_ms,
		                      en->pace.blocked_until);
}

/* The origin's entry; a new origin struct (the old one swept) gets the
 * entry's gates again. */
static struct pace_entry *entry_for(struct fetch_engine *e, struct origin *origin, double now)
{
	struct fetch_pace *fp = e->pace;

	if (origin->pace)
		return origin->pace;
	struct pace_entry *en = entry_of(sc_strtab_find(&fp->table, origin->key));
	if (!en)
		en = entry_new(e, origin->key, now);
	origin->pace = en;
	apply(e, en, origin);
	return en;
}

/* Holds origin until until (ms): the start is not made now.  At least a
 * millisecond on, so that the loop does not spin on a clock's rounding.
 * The Crawl-delay gate, which let this start through and counted a
 * spacing from it, waits for the same time: a start not made is no start
 * to space from (else the next waited a second spacing). */
static bool hold(struct fetch_engine *e, struct origin *origin, double until, double now)
{
	until = fmax(until, now + 1);
	fetch_origin_pause(origin, until);
	fetch_robots_hold(e, origin, until);
	return false;
}

bool fetch_pace_claim(struct fetch_engine *e, struct job *job, double now)
{
	struct fetch_pace *fp = e->pace;

	if (!fp)
		return true;
	struct origin *origin = job->origin;
	struct pace_entry *en = entry_for(e, origin, now);
	double floor = spacing_floor(e, origin);
	double spacing = fp->adaptive ? fmax(floor, en->pace.interval_ms) : floor;
	if (fp->adaptive) {
		sc_pace_bound(&en->pace, max_limit(e->opts), floor);
		if (en->pace.blocked_until > now)
			return hold(e, origin, en->pace.blocked_until, now);
		/* A swept origin's struct forgot the last start; the entry did not. */
		if (en->last_start >= 0 && now < en->last_start + en->pace.interval_ms)
			return hold(e, origin, en->last_start + en->pace.interval_ms, now);
	}
	/* A start another process may be spacing from: claimed in the file.
	 * The robots.txt request always is (one per origin and process), so
	 * the next process sees it whatever Crawl-delay it then learns. */
	if (fp->state && (spacing > 0 || job->robots_for)) {
		if (e->opts->host_rate > 0)
			spacing = fmax(spacing, 1000.0 / e->opts->host_rate);
		int64_t not_before;
		int rc = sc_origin_state_claim(fp->state, origin->key, sc_wall_ms(), spacing,
		                               &not_before, NULL, 0);
		if (rc == 0) {
			fp->held++;
			return hold(e, origin, loop_ms_of_wall(not_before, now), now);
		}
		if (rc < 0)
			fp->state_errors++; /* the start goes on: the file is a help, not a gate */
	}
	en->last_start = now;
	if (fp->adaptive)
		sc_pace_started(&en->pace, now, origin->queued > 0);
	return true;
}

void fetch_pace_sent(struct fetch_engine *e, struct job *job, double now)
{
	struct fetch_pace *fp = e->pace;

	if (!fp)
		return;
	struct origin *origin = job->origin;
	struct pace_entry *en = entry_for(e, origin, now);
	en->last_start = fmax(en->last_start, now);
	bool spaced = spacing_floor(e, origin) > 0 || (fp->adaptive && en->pace.interval_ms > 0);
	if (!fp->state || !(spaced || job->robots_for) || en->sent_pending)
		return;
	en->sent_pending = true;
	en->snext = fp->sent;
	fp->sent = en;
}

void fetch_pace_record_sent(struct fetch_engine *e)
{
	struct fetch_pace *fp = e->pace;

	if (!fp || !fp->sent)
		return;
	/* The claim was made at the decision; another process counts from
	 * the request itself.  Recorded once libcurl has written it (the clock
	 * read after), never from inside its callback, where the file's write
	 * would come between the time taken and the request.  A failure costs
	 * only that precision.  The clock's next millisecond: a bound the
	 * request cannot be later than, as the file keeps whole ones. */
	int64_t now = sc_wall_ms() + 1;
	while (fp->sent) {
		struct pace_entry *en = fp->sent;
		fp->sent = en->snext;
		en->sent_pending = false;
		if (sc_origin_state_sent(fp->state, en->key, now, NULL, 0) != 0)
			fp->state_errors++;
	}
}

/* What an attempt's end says of the origin's load; false: nothing. */
static bool signal_of(const struct outcome *oc, enum sc_pace_signal *sig)
{
	if (oc->status == 429)
		*sig = SC_PACE_429;
	else if (oc->status == 503)
		*sig = SC_PACE_503;
	else if (oc->kind == SC_ERR_TIMEOUT)
		*sig = SC_PACE_TIMEOUT;
	else if (oc->kind == SC_ERR_CONNECT || oc->kind == SC_ERR_NETWORK)
		*sig = SC_PACE_RESET;
	else if (oc->status > 0)
		*sig = SC_PACE_ANSWER;
	else
		return false; /* dns, tls, cancelled, ...: nothing about its load */
	return true;
}

static void save(struct fetch_engine *e, struct pace_entry *en, double now)
{
	struct sc_origin_pace saved = {
		.limit = en->pace.limit,
		.interval_ms = en->pace.interval_ms,
		.ceiling_ms = en->pace.ceiling_ms,
		.latency_floor_ms = en->pace.latency_floor_ms,
		.block_level = en->pace.block_level,
		.background = en->pace.background_measured ? en->pace.background : -1,
		.blocked_until = en->pace.blocked_until > now
		                         ? wall_of_loop_ms(en->pace.blocked_until, now)
		                         : 0,
	};

	snprintf(saved.reason, sizeof(saved.reason), "%s", sc_pace_reason_name(en->block_reason));
	if (sc_origin_state_put(e->pace->state, en->key, &saved, NULL, 0) != 0)
		e->pace->state_errors++;
}

bool fetch_pace_answered(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                         const struct outcome *oc, double now, struct sc_pace_event *ev)
{
	struct fetch_pace *fp = e->pace;
	enum sc_pace_signal sig;

	if (!fp || !fp->adaptive || !signal_of(oc, &sig))
		return false;
	struct origin *origin = job->origin;
	struct pace_entry *en = entry_for(e, origin, now);
	double retry_after = -1;
	if ((sig == SC_PACE_429 || sig == SC_PACE_503) && xfer && xfer->retry_after) {
		long long ms = sc_retry_after_ms(xfer->retry_after, sc_wall_ms());
		if (ms >= 0)
			retry_after = fmin((double)ms, (double)e->opts->retry.max_wait_ms);
	}
	/* The attempt's own start: an answer to a request made before the
	 * last reaction is that episode seen again (web/pace.h). */
	double started = xfer ? xfer->started : now - oc->latency_ms;
	if (!sc_pace_answered(&en->pace, now, started, oc->latency_ms, sig, retry_after, ev))
		return false;
	en->throttles++;
	if (ev->reason != SC_PACE_R_RECOVER && ev->reason != SC_PACE_R_LATENCY)
		en->block_reason = ev->reason;
	apply(e, en, origin);
	if (fp->state)
		save(e, en, now);
	/* Given up on (not answering, or refusing everything), or blocked past
	 * what a retry would wait: the jobs waiting on it end now
	 * (fetch_pace_blocked_origin), to be fetched again by a later run,
	 * instead of holding this one (a crawl's round) for the block. */
	bool long_block =
	        ev->gave_up || ev->blocked_until > now + (double)e->opts->retry.max_wait_ms;
	if (long_block && !en->blocked_long) {
		en->blocked_long = true;
		en->dnext = fp->blocked;
		fp->blocked = en;
	}
	return true;
}

/* The record error of a job that an origin's block ends before it starts. */
static int kind_of_block(enum sc_pace_reason r)
{
	switch (r) {
	case SC_PACE_R_TIMEOUT:
		return SC_ERR_TIMEOUT;
	case SC_PACE_R_RESET:
		return SC_ERR_NETWORK;
	default:
		return SC_ERR_RATE_LIMITED;
	}
}

struct origin *fetch_pace_blocked_origin(struct fetch_engine *e, double now, int *kind, char *why,
                                         size_t whylen)
{
	struct fetch_pace *fp = e->pace;

	if (!fp)
		return NULL;
	for (struct pace_entry **pp = &fp->blocked; *pp;) {
		struct pace_entry *en = *pp;
		if (en->pace.blocked_until <= now) {
			*pp = en->dnext;
			en->blocked_long = false;
			continue;
		}
		struct origin *origin = fetch_origin_find(&e->origins, en->key);
		if (origin && origin->queued > 0) {
			char until[SC_RFC3339_LEN];
			sc_rfc3339(wall_of_loop_ms(en->pace.blocked_until, now), until);
			*kind = kind_of_block(en->block_reason);
			snprintf(why, whylen,
			         "the origin is blocked until %s (adaptive pace, reason %s)", until,
			         sc_pace_reason_name(en->block_reason));
			return origin;
		}
		pp = &en->dnext;
	}
	return NULL;
}

void fetch_pace_summary(const struct fetch_engine *e, json_t *summary, double now)
{
	struct fetch_pace *fp = e->pace;

	if (!fp)
		return;
	if (fp->adaptive) {
		json_t *all = json_object();
		for (struct sc_strtab_link *l = fp->table.head; l; l = l->next) {
			struct pace_entry *en = entry_of(l);
			if (en->throttles == 0)
				continue;
			double blocked = en->pace.blocked_ms;
			if (en->pace.blocked_until > now)
				blocked -= en->pace.blocked_until - now; /* not spent yet */
			json_t *background =
			        en->pace.background_measured
			                ? json_real(round(en->pace.background * 1000) / 1000)
			                : json_null();
			json_object_set_new(all, en->key,
			                    json_pack("{s:I, s:f, s:I, s:I, s:f, s:o}", "limit",
			                              (json_int_t)en->pace.limit, "interval_ms",
			                              round1(en->pace.interval_ms), "changes",
			                              (json_int_t)en->throttles, "incidents",
			                              (json_int_t)en->pace.incidents, "blocked_s",
			                              round(fmax(0, blocked)) / 1000.0,
			                              "background", background));
		}
		json_object_set_new(summary, "pace", all);
	}
	if (fp->state)
		json_object_set_new(summary, "origin_state",
		                    json_pack("{s:I, s:I}", "held", (json_int_t)fp->held, "errors",
		                              (json_int_t)fp->state_errors));
}
