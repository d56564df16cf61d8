/* robots_cache: robots.txt answers kept across runs in an SQLite file (see
 * robots.h).  One row per origin; the body is stored rather than the parsed
 * rules so that a later run with another agent reads the same entry.
 * Processes share the file safely (core/sqlite_shared), and each write is
 * a single INSERT OR REPLACE (one transaction). */
#include "web/robots.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sqlite_shared.h"
#include "core/util.h"

/* Long enough for make -j 8 writers, each writing one row at a time. */
#define BUSY_TIMEOUT_MS 10000

struct sc_robots_cache {
	sqlite3 *db;
	sqlite3_stmt *get, *put;
	bool archived; /* sc_robots_cache_want_archived */
};

static void db_msg(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	if (err)
		snprintf(err, errlen, "robots cache: %s: %s", what,
		         db ? sqlite3_errmsg(db) : "out of memory");
}

struct sc_robots_cache *sc_robots_cache_open(const char *path, char *err, size_t errlen)
{
	static const char schema[] = "CREATE TABLE IF NOT EXISTS robots ("
	                             " origin TEXT PRIMARY KEY,"
	                             " fetched_ms INTEGER NOT NULL,"
	                             " status INTEGER NOT NULL,"
	                             " body BLOB NOT NULL,"
	                             " archive TEXT)";
	struct sc_robots_cache *c = sc_calloc(1, sizeof *c);
	char step[64];
	const char *what = step;

	if (sc_sqlite_open_shared(path, BUSY_TIMEOUT_MS, &c->db, step, sizeof step) != 0)
		goto fail;
	what = "cannot create its table";
	if (sqlite3_exec(c->db, schema, NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	/* A cache made before the archive column: it is added (another
	 * process may just have, which is as good). */
	(void)sqlite3_exec(c->db, "ALTER TABLE robots ADD COLUMN archive TEXT", NULL, NULL, NULL);
	what = "not a robots cache";
	if (sqlite3_prepare_v2(
	            c->db, "SELECT fetched_ms, status, body, archive FROM robots WHERE origin = ?1",
	            -1, &c->get, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(c->db,
	                       "INSERT OR REPLACE INTO robots (origin, fetched_ms, status, body,"
	                       " archive) VALUES (?1, ?2, ?3, ?4, ?5)",
	                       -1, &c->put, NULL) != SQLITE_OK)
		goto fail;
	return c;
fail:
	if (err)
		snprintf(err, errlen, "robots cache: %s: %s: %s", path, what,
		         c->db ? sqlite3_errmsg(c->db) : "out of memory");
	sc_robots_cache_close(c);
	return NULL;
}

void sc_robots_cache_close(struct sc_robots_cache *c)
{
	if (!c)
		return;
	sqlite3_finalize(c->get);
	sqlite3_finalize(c->put);
	sqlite3_close(c->db);
	free(c);
}

void sc_robots_cache_want_archived(struct sc_robots_cache *c)
{
	c->archived = true;
}

/* Whether a row's capture is in an archive on disk (always, when the
 * handle does not ask).  A file of the name is enough: a chunk's
 * archive is removed whole with the chunk that did not finish. */
static bool archive_holds(const struct sc_robots_cache *c, const unsigned char *archive)
{
	return !c->archived || (archive && access((const char *)archive, F_OK) == 0);
}

int sc_robots_cache_get(struct sc_robots_cache *c, const char *origin, int64_t now_ms, long *status,
                        char **body, size_t *len, char *err, size_t errlen)
{
	int found = 0;

	sqlite3_bind_text(c->get, 1, origin, -1, SQLITE_STATIC);
	int rc = sqlite3_step(c->get);
	if (rc == SQLITE_ROW) {
		int64_t fetched = sqlite3_column_int64(c->get, 0);
		/* A fetch time in the future (a clock set back) is not trusted. */
		if (fetched <= now_ms && now_ms - fetched < SC_ROBOTS_CACHE_TTL_MS &&
		    archive_holds(c, sqlite3_column_text(c->get, 3))) {
			const void *b = sqlite3_column_blob(c->get, 2);
			size_t n = (size_t)sqlite3_column_bytes(c->get, 2);
			*status = (long)sqlite3_column_int64(c->get, 1);
			*body = sc_malloc(n + 1);
			if (n)
				memcpy(*body, b, n);
			(*body)[n] = '\0';
			*len = n;
			found = 1;
		}
	} else if (rc != SQLITE_DONE) {
		found = -1;
		db_msg(c->db, "lookup", err, errlen);
	}
	sqlite3_reset(c->get);
	sqlite3_clear_bindings(c->get);
	return found;
}

int sc_robots_cache_put(struct sc_robots_cache *c, const char *origin, int64_t now_ms, long status,
                        const char *body, size_t len, const char *archive, char *err, size_t errlen)
{
	if (sc_robots_kind_for_status(status) == SC_ROBOTS_DISALLOW_ALL)
		return 0;
	if (sc_robots_kind_for_status(status) == SC_ROBOTS_ALLOW_ALL || !body)
		len = 0; /* the body of a 404 page says nothing */
	/* One byte past the limit, so the parser still sees whether the
	 * limit cuts a line. */
	if (len > SC_ROBOTS_MAX_BYTES + 1)
		len = SC_ROBOTS_MAX_BYTES + 1;
	sqlite3_bind_text(c->put, 1, origin, -1, SQLITE_STATIC);
	sqlite3_bind_int64(c->put, 2, now_ms);
	sqlite3_bind_int64(c->put, 3, status);
	sqlite3_bind_blob(c->put, 4, len ? body : "", (int)len, SQLITE_STATIC);
	if (archive)
		sqlite3_bind_text(c->put, 5, archive, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(c->put, 5);
	int rc = sqlite3_step(c->put);
	sqlite3_reset(c->put);
	sqlite3_clear_bindings(c->put);
	if (rc != SQLITE_DONE) {
		db_msg(c->db, "store", err, errlen);
		return -1;
	}
	return 0;
}
