/* sqlite_shared: open an SQLite file for several processes at once
 * (sqlite_shared.h). */
#include "core/sqlite_shared.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Switching to WAL needs a lock a concurrent opener may hold for a moment,
 * and SQLite does not always wait for it through the busy handler. */
static int enable_wal(sqlite3 *db)
{
	for (int attempt = 0; attempt < 200; attempt++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
			return -1;
		int rc = sqlite3_step(st);
		bool wal = rc == SQLITE_ROW &&
		           strcasecmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
		sqlite3_finalize(st);
		if (wal)
			return 0;
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			return -1;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return -1;
}

int sc_sqlite_open_shared(const char *path, int busy_ms, sqlite3 **db, char *err, size_t errlen)
{
	const char *step = "cannot open it";

	*db = NULL;
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(*db, busy_ms);
	step = "cannot use WAL mode";
	if (enable_wal(*db) != 0)
		goto fail;
	step = "cannot set synchronous=NORMAL";
	if (sqlite3_exec(*db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	return 0;
fail:
	if (err && errlen > 0)
		snprintf(err, errlen, "%s", step);
	return -1;
}

const char *sc_sqlite_name_problem(const char *path, char *why, size_t whylen)
{
	/* sqlite3ParseUri's test, and openDatabase's names of a database in
	 * memory, exactly: "FILE:x" is a file. */
	if (strncmp(path, "file:", 5) == 0)
		snprintf(why, whylen,
		         "'%.200s' is a URI to SQLite, not a file name (write ./%.200s)", path,
		         path);
	else if (!*path || strcmp(path, ":memory:") == 0)
		snprintf(why, whylen, "'%s' is a database in memory to SQLite, not a file%s", path,
		         *path ? " (write ./:memory:)" : "");
	else
		return NULL;
	return why;
}
