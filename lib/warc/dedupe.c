#include "warc/dedupe.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sqlite_shared.h"
#include "core/util.h"

/* A writer of another process is waited for this long. */
#define BUSY_TIMEOUT_MS 10000

struct sc_warc_dedupe {
	sqlite3 *db;
	sqlite3_stmt *find, *find_uri, *add;
};

static const char schema[] =
        "CREATE TABLE IF NOT EXISTS payloads ("
        " digest TEXT PRIMARY KEY, id TEXT NOT NULL, uri TEXT NOT NULL, date TEXT NOT NULL);"
        "CREATE INDEX IF NOT EXISTS payloads_uri ON payloads (uri, date);";

/* find_uri's latest record is the latest by time, not by text: WARC-Date has
 * had milliseconds since issue 30, and as text "...:05Z" sorts after
 * "...:05.900Z" ('Z' > '.'), so an index kept from an earlier crawl would
 * give that crawl's record of the same second as the latest.  julianday()
 * reads both (to the millisecond); rowid breaks a tie by the record
 * learnt last. */
struct sc_warc_dedupe *sc_warc_dedupe_open(const char *path, char *err, size_t errlen)
{
	struct sc_warc_dedupe *d = sc_calloc(1, sizeof(*d));
	char step[64];
	const char *what = step;

	if (sc_sqlite_open_shared(path, BUSY_TIMEOUT_MS, &d->db, step, sizeof step) != 0)
		goto fail;
	what = "cannot create its table";
	if (sqlite3_exec(d->db, schema, NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	what = "cannot prepare its statements";
	if (sqlite3_prepare_v2(d->db, "SELECT id, uri, date FROM payloads WHERE digest = ?1", -1,
	                       &d->find, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(d->db,
	                       "SELECT id, uri, date FROM payloads WHERE uri = ?1"
	                       " ORDER BY julianday(date) DESC, rowid DESC LIMIT 1",
	                       -1, &d->find_uri, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(d->db,
	                       "INSERT OR IGNORE INTO payloads (digest, id, uri, date)"
	                       " VALUES (?1, ?2, ?3, ?4)",
	                       -1, &d->add, NULL) != SQLITE_OK)
		goto fail;
	return d;
fail:
	snprintf(err, errlen, "%s: %s: %s", path, what,
	         d->db ? sqlite3_errmsg(d->db) : "out of memory");
	sc_warc_dedupe_close(d);
	return NULL;
}

void sc_warc_dedupe_close(struct sc_warc_dedupe *d)
{
	if (!d)
		return;
	sqlite3_finalize(d->find);
	sqlite3_finalize(d->find_uri);
	sqlite3_finalize(d->add);
	sqlite3_close(d->db);
	free(d);
}

static void copy_column(sqlite3_stmt *st, int col, char *out, size_t size)
{
	const unsigned char *v = sqlite3_column_text(st, col);

	snprintf(out, size, "%s", v ? (const char *)v : "");
}

/* Runs a lookup whose one parameter is key: its row into *out. */
static bool lookup(sqlite3_stmt *st, const char *key, struct sc_warc_original *out)
{
	bool found = false;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		copy_column(st, 0, out->id, sizeof(out->id));
		copy_column(st, 1, out->uri, sizeof(out->uri));
		copy_column(st, 2, out->date, sizeof(out->date));
		found = true;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return found;
}

bool sc_warc_dedupe_find(struct sc_warc_dedupe *d, const char *digest, struct sc_warc_original *out)
{
	return lookup(d->find, digest, out);
}

bool sc_warc_dedupe_find_uri(struct sc_warc_dedupe *d, const char *uri,
                             struct sc_warc_original *out)
{
	return strlen(uri) < sizeof(out->uri) && lookup(d->find_uri, uri, out);
}

int sc_warc_dedupe_add(struct sc_warc_dedupe *d, const char *digest, const char *id,
                       const char *uri, const char *date, char *err, size_t errlen)
{
	sqlite3_stmt *st = d->add;
	int rc;

	/* A URI too long to be given back is not kept: find_uri cannot
	 * return it whole, and a revisit must name its original exactly. */
	if (strlen(uri) >= sizeof(((struct sc_warc_original *)0)->uri))
		return 0;
	sqlite3_bind_text(st, 1, digest, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, uri, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, date, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "the dedupe index: %s", sqlite3_errmsg(d->db));
		return -1;
	}
	return 0;
}

/* Runs sql on d, or says why not in err. */
static int exec_or_say(struct sc_warc_dedupe *d, const char *sql, char *err, size_t errlen)
{
	if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "the dedupe index: %s", sqlite3_errmsg(d->db));
	return -1;
}

/* The ids into the temporary table forget.ids. */
static int forget_fill(struct sc_warc_dedupe *d, const char *const *ids, size_t n, char *err,
                       size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE;

	if (exec_or_say(d,
	                "CREATE TEMP TABLE IF NOT EXISTS forget (id TEXT PRIMARY KEY);"
	                "DELETE FROM temp.forget;",
	                err, errlen) != 0)
		return -1;
	if (sqlite3_prepare_v2(d->db, "INSERT OR IGNORE INTO temp.forget (id) VALUES (?1)", -1, &st,
	                       NULL) != SQLITE_OK)
		rc = SQLITE_ERROR;
	for (size_t i = 0; i < n && rc == SQLITE_DONE; i++) {
		sqlite3_bind_text(st, 1, ids[i], -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	snprintf(err, errlen, "the dedupe index: %s", sqlite3_errmsg(d->db));
	return -1;
}

long sc_warc_dedupe_forget(struct sc_warc_dedupe *d, const char *const *ids, size_t n, char *err,
                           size_t errlen)
{
	long forgotten;

	if (exec_or_say(d, "BEGIN IMMEDIATE", err, errlen) != 0)
		return -1;
	if (forget_fill(d, ids, n, err, errlen) != 0 ||
	    exec_or_say(d, "DELETE FROM payloads WHERE id IN (SELECT id FROM temp.forget)", err,
	                errlen) != 0) {
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	forgotten = (long)sqlite3_changes(d->db);
	if (exec_or_say(d, "COMMIT", err, errlen) != 0) {
		sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return forgotten;
}
