/* The seen set: every URL a crawl has emitted, as a 128-bit hash of its
 * canonical form, in SQLite.
 *
 * Two databases on one connection.  "main" is the persistent set (the
 * --seen file, or a private temporary file for a run without one): the
 * keys in a WITHOUT ROWID table, so a key is stored once, in the B-tree
 * itself, and the per-host counts.  "run" is always a private temporary
 * file: the URLs this run has emitted and its per-host counts.  Nothing
 * is written to "main" until seen_commit(), which the program calls only
 * once its output is safely written (see main.c and the man page).
 *
 * Memory stays flat whatever the size of the set: each database's page
 * cache is bounded, memory-mapped I/O is off, and temporary storage is a
 * file.  Both tables are keyed by the hash, and round.c probes and inserts
 * a batch in key order, so the B-tree pages are visited in order. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "frontier.h"

/* Page caches, in KiB (negative cache_size is KiB in SQLite). */
#define MAIN_CACHE_KIB 8192
#define RUN_CACHE_KIB 4096

/* The page size of a new set: a batch's probes in key order touch most
 * leaves of a large set, so large pages read it in fewer, longer reads
 * (a sixteenth of the calls of 4 KiB pages) and make the tree shallower.
 * A set made with another page size keeps its own. */
#define PAGE_SIZE 65536

/* 'scFR': marks a database as a seen set, so another file is refused. */
#define APPLICATION_ID 0x73634652

enum stmt {
	S_HAS_MAIN,
	S_HAS_RUN,
	S_ADD,
	S_HOST_COUNT,
	S_HOST_ADD,
	S_INSERT_MAIN,
	S_HOST_ADD_MAIN,
	S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
	[S_HAS_MAIN] = "SELECT 1 FROM main.seen WHERE k = ?1",
	[S_HAS_RUN] = "SELECT 1 FROM run.seen WHERE k = ?1",
	[S_ADD] = "INSERT OR IGNORE INTO run.seen(k) VALUES (?1)",
	[S_HOST_COUNT] = "SELECT coalesce((SELECT n FROM main.hosts WHERE host = ?1), 0)"
	                 " + coalesce((SELECT n FROM run.hosts WHERE host = ?1), 0)",
	[S_HOST_ADD] = "INSERT INTO run.hosts(host, n) VALUES (?1, ?2)"
	               " ON CONFLICT(host) DO UPDATE SET n = n + excluded.n",
	[S_INSERT_MAIN] = "INSERT OR IGNORE INTO main.seen(k) VALUES (?1)",
	[S_HOST_ADD_MAIN] = "INSERT INTO main.hosts(host, n) VALUES (?1, ?2)"
	                    " ON CONFLICT(host) DO UPDATE SET n = n + excluded.n",
};

struct seen {
	sqlite3 *db;
	sqlite3_stmt *stmt[S_COUNT];
	bool persistent;
	bool direct;    /* --commit: straight into main, in one transaction */
	bool in_direct; /* that transaction is open */
	uint64_t inserted;
	char msg[512];
};

static int fail(struct seen *s, const char *what)
{
	snprintf(s->msg, sizeof(s->msg), "%s: %s", what, sqlite3_errmsg(s->db));
	return -1;
}

const char *seen_error(struct seen *s)
{
	return s->msg;
}

static int exec(struct seen *s, const char *sql)
{
	char *e = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &e) != SQLITE_OK) {
		snprintf(s->msg, sizeof(s->msg), "%s", e ? e : sqlite3_errmsg(s->db));
		sqlite3_free(e);
		return -1;
	}
	return 0;
}

static int pragma_int(struct seen *s, const char *sql, long *v)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(s, "reading the seen set");
	*v = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

/* Creates the tables, or checks that an existing file is a seen set.  The
 * tables are made in one transaction, so that a kill leaves a set whole
 * or not at all, and a second process making the same set at once waits,
 * then finds it made; a set left half-made by an earlier version, which
 * made them one by one, is completed.  A set that is whole is not written
 * to, so that one on a read-only file can be read. */
static int init_main(struct seen *s)
{
	long app, tables, ours;
	char sql[512];
	sqlite3_stmt *st;

	/* One statement, one read transaction: what another process commits
	 * meanwhile is seen whole or not at all. */
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT (SELECT application_id FROM main.pragma_application_id),"
	                       " count(*), count(CASE WHEN type = 'table' AND name IN"
	                       " ('seen', 'hosts') THEN 1 END) FROM main.sqlite_schema",
	                       -1, &st, NULL) != SQLITE_OK)
		return fail(s, "reading the seen set");
	if (sqlite3_step(st) != SQLITE_ROW) {
		fail(s, "reading the seen set");
		sqlite3_finalize(st);
		return -1;
	}
	app = (long)sqlite3_column_int64(st, 0);
	tables = (long)sqlite3_column_int64(st, 1);
	ours = (long)sqlite3_column_int64(st, 2);
	sqlite3_finalize(st);
	if (tables > 0 && app != APPLICATION_ID) {
		snprintf(s->msg, sizeof(s->msg), "not a seen set of sc-frontier");
		return -1;
	}
	if (ours == 2)
		return 0;
	snprintf(sql, sizeof(sql),
	         "PRAGMA main.page_size = %d; BEGIN IMMEDIATE;"
	         "PRAGMA main.application_id = %d;"
	         "CREATE TABLE IF NOT EXISTS main.seen(k BLOB PRIMARY KEY) WITHOUT ROWID;"
	         "CREATE TABLE IF NOT EXISTS main.hosts("
	         " host TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;"
	         "COMMIT;"
	         /* Again: SQLite turned the KiB into a number of pages of the
	          * size before, 4 KiB, and would keep sixteen times as much. */
	         "PRAGMA main.cache_size = -%d;",
	         PAGE_SIZE, APPLICATION_ID, MAIN_CACHE_KIB);
	if (exec(s, sql) < 0) {
		if (!sqlite3_get_autocommit(s->db))
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

struct seen *seen_open(const char *path, char *err, size_t errlen)
{
	struct seen *s = sc_calloc(1, sizeof(*s));
	char sql[512];

	s->persistent = path != NULL;
	/* No memory statistics: they take a global mutex at every allocation
	 * of SQLite's, a page per probe.  Refused, harmlessly, once SQLite is
	 * initialised. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* An empty name is a private temporary database, on disk. */
	if (sqlite3_open_v2(path ? path : "", &s->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path ? path : "temporary seen set",
		         s->db ? sqlite3_errmsg(s->db) : "cannot open");
		seen_close(s);
		return NULL;
	}
	sqlite3_busy_timeout(s->db, 60000);
	snprintf(sql, sizeof(sql),
	         "PRAGMA main.cache_size = -%d; PRAGMA mmap_size = 0; PRAGMA temp_store = FILE;"
	         "PRAGMA main.synchronous = FULL;"
	         "ATTACH '' AS run; PRAGMA run.page_size = %d; PRAGMA run.cache_size = -%d; PRAGMA "
	         "run.journal_mode = OFF;"
	         "CREATE TABLE run.seen(k BLOB PRIMARY KEY) WITHOUT ROWID;"
	         "CREATE TABLE run.hosts(host TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;",
	         MAIN_CACHE_KIB, PAGE_SIZE, RUN_CACHE_KIB);
	if (exec(s, sql) < 0 || init_main(s) < 0)
		goto fail;
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
		                       &s->stmt[i], NULL) != SQLITE_OK) {
			fail(s, "preparing");
			goto fail;
		}
	return s;
fail:
	snprintf(err, errlen, "%s: %s", path ? path : "temporary seen set", s->msg);
	seen_close(s);
	return NULL;
}

void seen_close(struct seen *s)
{
	if (!s)
		return;
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	sqlite3_close(s->db);
	free(s);
}

void seen_direct(struct seen *s, bool on)
{
	s->direct = on;
	s->inserted = 0;
}

int seen_begin(struct seen *s)
{
	if (!s->direct)
		return exec(s, "BEGIN");
	if (s->in_direct)
		return 0;
	s->in_direct = true;
	return exec(s, "BEGIN IMMEDIATE");
}

int seen_end(struct seen *s)
{
	return s->direct ? 0 : exec(s, "COMMIT");
}

/* Runs a statement that returns at most one row; 1 for a row, 0 for none. */
static int step_once(struct seen *s, sqlite3_stmt *st, sqlite3_int64 *value)
{
	int rc = sqlite3_step(st), row = rc == SQLITE_ROW;

	if (row && value)
		*value = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(s, "seen set");
	return row;
}

int seen_insert(struct seen *s, const uint8_t key[KEY_LEN], bool *inserted)
{
	sqlite3_stmt *st = s->stmt[S_INSERT_MAIN];

	sqlite3_bind_blob(st, 1, key, KEY_LEN, SQLITE_STATIC);
	if (step_once(s, st, NULL) < 0)
		return -1;
	*inserted = sqlite3_changes(s->db) > 0;
	s->inserted += *inserted;
	return 0;
}

int seen_has(struct seen *s, const uint8_t key[KEY_LEN], enum where *where)
{
	int rc;

	*where = NOWHERE;
	for (int i = S_HAS_MAIN; i <= S_HAS_RUN; i++) {
		/* A run without --seen has nothing in main to look at. */
		if (i == S_HAS_MAIN && !s->persistent)
			continue;
		sqlite3_bind_blob(s->stmt[i], 1, key, KEY_LEN, SQLITE_STATIC);
		if ((rc = step_once(s, s->stmt[i], NULL)) < 0)
			return -1;
		if (rc) {
			*where = i == S_HAS_MAIN ? IN_SET : IN_RUN;
			return 0;
		}
	}
	return 0;
}

int seen_add(struct seen *s, const uint8_t key[KEY_LEN])
{
	sqlite3_stmt *st = s->stmt[S_ADD];

	sqlite3_bind_blob(st, 1, key, KEY_LEN, SQLITE_STATIC);
	return step_once(s, st, NULL) < 0 ? -1 : 0;
}

int seen_host_count(struct seen *s, const char *host, size_t host_len, long *n)
{
	sqlite3_stmt *st = s->stmt[S_HOST_COUNT];
	sqlite3_int64 v = 0;

	sqlite3_bind_text(st, 1, host, (int)host_len, SQLITE_STATIC);
	if (step_once(s, st, &v) < 0)
		return -1;
	*n = (long)v;
	return 0;
}

int seen_host_add(struct seen *s, const char *host, size_t host_len, long n)
{
	sqlite3_stmt *st = s->stmt[s->direct ? S_HOST_ADD_MAIN : S_HOST_ADD];

	sqlite3_bind_text(st, 1, host, (int)host_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, n);
	return step_once(s, st, NULL) < 0 ? -1 : 0;
}

bool seen_larger_than_cache(struct seen *s)
{
	long main_pages = 0, main_size = 0, run_pages = 0, run_size = 0;

	if (pragma_int(s, "PRAGMA main.page_count", &main_pages) < 0 ||
	    pragma_int(s, "PRAGMA main.page_size", &main_size) < 0 ||
	    pragma_int(s, "PRAGMA run.page_count", &run_pages) < 0 ||
	    pragma_int(s, "PRAGMA run.page_size", &run_size) < 0)
		return true; /* the batches it was made for */
	return main_pages * main_size > MAIN_CACHE_KIB * 1024L ||
	       run_pages * run_size > RUN_CACHE_KIB * 1024L;
}

/* This run's keys were none of them in main when they were looked up, and
 * its host counts count exactly those keys; so with one writer at a time
 * the counts stay the number of keys per host.  A second commit of the
 * same URLs finds every key in main, adds no key and no count. */
int seen_commit(struct seen *s, uint64_t *added)
{
	*added = 0;
	if (!s->persistent)
		return 0;
	if (s->direct) {
		*added = s->inserted;
		if (!s->in_direct)
			return 0;
		s->in_direct = false;
		if (exec(s, "COMMIT") == 0)
			return 0;
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	if (exec(s, "BEGIN IMMEDIATE") < 0)
		return -1;
	if (exec(s, "INSERT OR IGNORE INTO main.seen(k) SELECT k FROM run.seen ORDER BY k") < 0)
		goto fail;
	*added = (uint64_t)sqlite3_changes64(s->db);
	if (exec(s, "INSERT INTO main.hosts(host, n) SELECT host, n FROM run.hosts WHERE true"
	            " ON CONFLICT(host) DO UPDATE SET n = n + excluded.n") < 0 ||
	    exec(s, "COMMIT") < 0)
		goto fail;
	return 0;
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}
