/* origin_state: per-origin pace in an SQLite file shared by the processes
 * of a crawl (origin_state.h). */
#include "web/origin_state.h"

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sqlite_shared.h"
#include "core/util.h"

/* Long enough for make -j 8 processes claiming starts at once. */
#define BUSY_TIMEOUT_MS 10000

struct sc_origin_state {
	sqlite3 *db;
	int64_t owner;   /* this handle's mark on the starts it claims (never 0) */
	bool own_spaced; /* sc_origin_state_own_spacing */
	sqlite3_stmt *begin, *commit, *rollback, *select, *claim, *sent, *put;
	sqlite3_stmt *busy, *others_busy, *forget; /* the processes table */
};

static const char schema[] = "CREATE TABLE IF NOT EXISTS origins ("
                             " origin TEXT PRIMARY KEY,"
                             " last_start INTEGER NOT NULL DEFAULT 0,"
                             " has_pace INTEGER NOT NULL DEFAULT 0,"
                             " lim INTEGER, interval_ms REAL, ceiling_ms REAL,"
                             " latency_floor_ms REAL, block_level INTEGER,"
                             " blocked_until INTEGER, reason TEXT, background REAL, owner INTEGER);"
                             "CREATE TABLE IF NOT EXISTS processes ("
                             " owner INTEGER PRIMARY KEY, busy_until INTEGER NOT NULL)";

/* A file from before a column was kept (background, owner): the column
 * added, empty.  Another process may add it first; then it is there all
 * the same. */
static int add_column(sqlite3 *db, const char *name, const char *type)
{
	char probe[128], alter[128];
	sqlite3_stmt *st = NULL;

	snprintf(probe, sizeof probe, "SELECT %s FROM origins LIMIT 0", name);
	snprintf(alter, sizeof alter, "ALTER TABLE origins ADD COLUMN %s %s", name, type);
	if (sqlite3_prepare_v2(db, probe, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	if (sqlite3_exec(db, alter, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	if (sqlite3_prepare_v2(db, probe, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_finalize(st);
	return 0;
}

static void db_error(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	if (err && errlen > 0)
		snprintf(err, errlen, "origin state: %s: %s", what,
		         db ? sqlite3_errmsg(db) : "out of memory");
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	return sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK ? 0 : -1;
}

struct sc_origin_state *sc_origin_state_open(const char *path, char *err, size_t errlen)
{
	struct sc_origin_state *s = sc_calloc(1, sizeof *s);
	char step[64];
	const char *what = step;

	if (sc_sqlite_open_shared(path, BUSY_TIMEOUT_MS, &s->db, step, sizeof step) != 0)
		goto fail;
	what = "cannot create its table";
	if (sqlite3_exec(s->db, schema, NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	what = "cannot add its background column";
	if (add_column(s->db, "background", "REAL") != 0)
		goto fail;
	what = "cannot add its owner column";
	if (add_column(s->db, "owner", "INTEGER") != 0)
		goto fail;
	while (s->owner == 0)
		sqlite3_randomness(sizeof s->owner, &s->owner);
	what = "not an origin state file";
	if (prepare(s->db, "BEGIN IMMEDIATE", &s->begin) || prepare(s->db, "COMMIT", &s->commit) ||
	    prepare(s->db, "ROLLBACK", &s->rollback) ||
	    prepare(s->db,
	            "SELECT last_start, has_pace, lim, interval_ms, ceiling_ms, latency_floor_ms,"
	            " block_level, blocked_until, reason, background, owner FROM origins"
	            " WHERE origin = ?1",
	            &s->select) ||
	    prepare(s->db,
	            "INSERT INTO origins (origin, last_start, owner) VALUES (?1, ?2, ?3)"
	            " ON CONFLICT (origin) DO UPDATE SET last_start = excluded.last_start,"
	            " owner = excluded.owner",
	            &s->claim) ||
	    prepare(s->db,
	            "UPDATE origins SET last_start = ?2, owner = ?3 WHERE origin = ?1 AND "
	            "last_start < ?2",
	            &s->sent) ||
	    prepare(s->db,
	            "INSERT INTO origins (origin, has_pace, lim, interval_ms, ceiling_ms,"
	            " latency_floor_ms, block_level, blocked_until, reason, background)"
	            " VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
	            " ON CONFLICT (origin) DO UPDATE SET has_pace = 1, lim = excluded.lim,"
	            " interval_ms = excluded.interval_ms, ceiling_ms = excluded.ceiling_ms,"
	            " latency_floor_ms = excluded.latency_floor_ms,"
	            " block_level = excluded.block_level, blocked_until = excluded.blocked_until,"
	            " reason = excluded.reason, background = excluded.background",
	            &s->put) ||
	    prepare(s->db,
	            "INSERT INTO processes (owner, busy_until) VALUES (?1, ?2)"
	            " ON CONFLICT (owner) DO UPDATE SET busy_until = excluded.busy_until",
	            &s->busy) ||
	    prepare(s->db, "SELECT 1 FROM processes WHERE owner != ?1 AND busy_until > ?2 LIMIT 1",
	            &s->others_busy) ||
	    prepare(s->db, "DELETE FROM processes WHERE owner = ?1 OR busy_until < ?2", &s->forget))
		goto fail;
	return s;
fail:
	if (err && errlen > 0)
		snprintf(err, errlen, "origin state: %s: %s: %s", path, what,
		         s->db ? sqlite3_errmsg(s->db) : "out of memory");
	sc_origin_state_close(s);
	return NULL;
}

void sc_origin_state_own_spacing(struct sc_origin_state *s, bool on)
{
	s->own_spaced = on;
}

void sc_origin_state_close(struct sc_origin_state *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->begin);
	sqlite3_finalize(s->commit);
	sqlite3_finalize(s->rollback);
	sqlite3_finalize(s->select);
	sqlite3_finalize(s->claim);
	sqlite3_finalize(s->sent);
	sqlite3_finalize(s->put);
	if (s->forget) {
		/* This handle's row, and those of processes long gone (killed
		 * before they could remove theirs). */
		sqlite3_bind_int64(s->forget, 1, s->owner);
		sqlite3_bind_int64(s->forget, 2, sc_wall_ms() - 60000);
		sqlite3_step(s->forget);
	}
	sqlite3_finalize(s->busy);
	sqlite3_finalize(s->others_busy);
	sqlite3_finalize(s->forget);
	sqlite3_close(s->db);
	free(s);
}

/* Runs a statement that returns no row, then resets it. */
static int run(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Reads origin's row into *last_start and *pace; 1 found, 0 not, -1 error. */
static int read_row(struct sc_origin_state *s, const char *origin, int64_t *last_start,
                    struct sc_origin_pace *pace, bool *has_pace, int64_t *owner)
{
	sqlite3_stmt *st = s->select;
	int found = 0;

	sqlite3_bind_text(st, 1, origin, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		found = 1;
		*last_start = sqlite3_column_int64(st, 0);
		if (owner)
			*owner = sqlite3_column_int64(st, 10); /* NULL: 0, nobody's */
		*has_pace = sqlite3_column_int(st, 1) != 0;
		if (*has_pace && pace) {
			const unsigned char *reason = sqlite3_column_text(st, 8);
			pace->limit = (long)sqlite3_column_int64(st, 2);
			pace->interval_ms = sqlite3_column_double(st, 3);
			pace->ceiling_ms = sqlite3_column_double(st, 4);
			pace->latency_floor_ms = sqlite3_column_double(st, 5);
			pace->block_level = sqlite3_column_int(st, 6);
			pace->blocked_until = sqlite3_column_int64(st, 7);
			snprintf(pace->reason, sizeof pace->reason, "%s",
			         reason ? (const char *)reason : "");
			pace->background = sqlite3_column_type(st, 9) == SQLITE_NULL
			                           ? -1
			                           : sqlite3_column_double(st, 9);
		}
	} else if (rc != SQLITE_DONE) {
		found = -1;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return found;
}

int sc_origin_state_claim(struct sc_origin_state *s, const char *origin, int64_t now, double gap_ms,
                          int64_t *not_before, char *err, size_t errlen)
{
	struct sc_origin_pace pace = { 0 };
	bool has_pace = false;
	int64_t last = 0, owner = 0;

	if (run(s->begin) != 0)
		goto fail;
	int found = read_row(s, origin, &last, &pace, &has_pace, &owner);
	if (found < 0)
		goto fail_in_transaction;
	/* The last start this handle made itself is its caller's to space. */
	bool own = s->own_spaced && owner == s->owner;
	int64_t held = found && !own ? last + (int64_t)(gap_ms + 0.5) : 0;
	if (has_pace && pace.blocked_until > held)
		held = pace.blocked_until;
	if (held > now) {
		*not_before = held;
		run(s->rollback);
		return 0;
	}
	sqlite3_bind_text(s->claim, 1, origin, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->claim, 2, now);
	sqlite3_bind_int64(s->claim, 3, s->owner);
	if (run(s->claim) != 0 || run(s->commit) != 0)
		goto fail_in_transaction;
	*not_before = now;
	return 1;
fail_in_transaction:
	db_error(s->db, "claiming a start", err, errlen);
	run(s->rollback);
	return -1;
fail:
	db_error(s->db, "claiming a start", err, errlen);
	return -1;
}

int sc_origin_state_sent(struct sc_origin_state *s, const char *origin, int64_t now, char *err,
                         size_t errlen)
{
	sqlite3_bind_text(s->sent, 1, origin, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->sent, 2, now);
	sqlite3_bind_int64(s->sent, 3, s->owner);
	if (run(s->sent) == 0)
		return 0;
	db_error(s->db, "recording a request sent", err, errlen);
	return -1;
}

int sc_origin_state_get(struct sc_origin_state *s, const char *origin, int64_t *last_start,
                        struct sc_origin_pace *pace, bool *found, char *err, size_t errlen)
{
	bool has_pace = false;

	*last_start = 0;
	int rc = read_row(s, origin, last_start, pace, &has_pace, NULL);
	if (rc < 0) {
		db_error(s->db, "reading", err, errlen);
		return -1;
	}
	*found = rc == 1 && has_pace;
	return 0;
}

int sc_origin_state_put(struct sc_origin_state *s, const char *origin,
                        const struct sc_origin_pace *pace, char *err, size_t errlen)
{
	sqlite3_stmt *st = s->put;

	sqlite3_bind_text(st, 1, origin, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, pace->limit);
	sqlite3_bind_double(st, 3, pace->interval_ms);
	sqlite3_bind_double(st, 4, pace->ceiling_ms);
	sqlite3_bind_double(st, 5, pace->latency_floor_ms);
	sqlite3_bind_int(st, 6, pace->block_level);
	sqlite3_bind_int64(st, 7, pace->blocked_until);
	sqlite3_bind_text(st, 8, pace->reason, -1, SQLITE_STATIC);
	if (pace->background >= 0)
		sqlite3_bind_double(st, 9, pace->background);
	else
		sqlite3_bind_null(st, 9);
	if (run(st) != 0) {
		db_error(s->db, "saving", err, errlen);
		return -1;
	}
	return 0;
}

int sc_origin_state_busy(struct sc_origin_state *s, int64_t busy_until, char *err, size_t errlen)
{
	sqlite3_bind_int64(s->busy, 1, s->owner);
	sqlite3_bind_int64(s->busy, 2, busy_until);
	if (run(s->busy) == 0)
		return 0;
	db_error(s->db, "recording whether it is busy", err, errlen);
	return -1;
}

int sc_origin_state_others_busy(struct sc_origin_state *s, int64_t now, bool *busy, char *err,
                                size_t errlen)
{
	sqlite3_stmt *st = s->others_busy;

	sqlite3_bind_int64(st, 1, s->owner);
	sqlite3_bind_int64(st, 2, now);
	int rc = sqlite3_step(st);
	*busy = rc == SQLITE_ROW;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	db_error(s->db, "reading whether others are busy", err, errlen);
	return -1;
}

/* ---- the file as lines (sc_origin_state_show) ---------------------------- */

/* A real as the metrics write one: to a tenth. */
static json_t *tenth(sqlite3_stmt *st, int col)
{
	return json_real(round(sqlite3_column_double(st, col) * 10.0) / 10.0);
}

/* Column col as an integer, NULL as null. */
static json_t *integer_or_null(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL
	               ? json_null()
	               : json_integer((json_int_t)sqlite3_column_int64(st, col));
}

/* One row of the walk's statement as its line's object. */
static json_t *row_object(sqlite3_stmt *st)
{
	const char *origin = (const char *)sqlite3_column_text(st, 0);
	bool pace = sqlite3_column_int(st, 2) != 0;
	const char *reason = (const char *)sqlite3_column_text(st, 9);
	json_t *o = json_object();

	json_object_set_new(o, "origin", json_string(origin ? origin : ""));
	json_object_set_new(o, "last_start", json_integer((json_int_t)sqlite3_column_int64(st, 1)));
	json_object_set_new(o, "limit", pace ? integer_or_null(st, 3) : json_null());
	json_object_set_new(o, "interval_ms", pace ? tenth(st, 4) : json_null());
	json_object_set_new(o, "ceiling_ms", pace ? tenth(st, 5) : json_null());
	json_object_set_new(o, "latency_floor_ms", pace ? tenth(st, 6) : json_null());
	json_object_set_new(o, "block_level", pace ? integer_or_null(st, 7) : json_null());
	json_object_set_new(o, "blocked_until", pace ? integer_or_null(st, 8) : json_null());
	json_object_set_new(o, "reason", pace ? json_string(reason ? reason : "") : json_null());
	json_object_set_new(o, "background",
	                    pace && sqlite3_column_type(st, 10) != SQLITE_NULL
	                            ? json_real(sqlite3_column_double(st, 10))
	                            : json_null());
	return o;
}

int sc_origin_state_show(struct sc_origin_state *s, sc_origin_line_fn line, void *ctx, char *err,
                         size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = 0, step = SQLITE_DONE;

	if (prepare(s->db,
	            "SELECT origin, last_start, has_pace, lim, interval_ms, ceiling_ms,"
	            " latency_floor_ms, block_level, blocked_until, reason, background"
	            " FROM origins ORDER BY origin",
	            &st) != 0)
		goto fail;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = row_object(st);
		char *text =
		        json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
		json_decref(o);
		if (!text)
			sc_die(1, "out of memory");
		rc = line(text, strlen(text), ctx);
		free(text);
	}
	if (rc == 0 && step != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	return rc;
fail:
	if (err && errlen > 0)
		snprintf(err, errlen, "origin state: reading its origins: %s",
		         sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	return -1;
}
