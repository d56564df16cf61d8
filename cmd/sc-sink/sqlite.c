/* sqlite: records into one table of a SQLite database, written in place.
 *
 * SQLite's own journal already guarantees that the database is never half
 * written, so there is no temporary file: the database is opened in WAL
 * mode and rows are inserted in transactions of --batch rows or --batch-ms
 * milliseconds, whichever comes first.  A run that is killed keeps every
 * committed batch.  Each row holds the columns plus "record", the whole
 * record as JSON text. */
#include "sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

/* Every database open, so that an exit on a failure elsewhere (sc_die)
 * still closes it properly: see sqlite_cleanup_all. */
static struct sqlite_sink *open_dbs[SINK_MAX];

static void track(struct sqlite_sink *s, bool open)
{
	for (int i = 0; i < SINK_MAX; i++)
		if (open ? !open_dbs[i] : open_dbs[i] == s) {
			open_dbs[i] = open ? s : NULL;
			return;
		}
}

static int db_error(struct sqlite_sink *s, char *errbuf, size_t errlen, const char *what)
{
	snprintf(errbuf, errlen, "%s: %s%s%s", s->path, what ? what : "", what ? ": " : "",
	         s->db ? sqlite3_errmsg(s->db) : "out of memory");
	return -1;
}

/* Runs sql (owned by sqlite3_mprintf, freed here). */
static int exec_owned(struct sqlite_sink *s, char *sql, char *errbuf, size_t errlen,
                      const char *what)
{
	int rc;

	if (!sql) {
		snprintf(errbuf, errlen, "%s: out of memory", s->path);
		return -1;
	}
	rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? 0 : db_error(s, errbuf, errlen, what);
}

static int exec(struct sqlite_sink *s, const char *sql, char *errbuf, size_t errlen,
                const char *what)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK
	               ? 0
	               : db_error(s, errbuf, errlen, what);
}

int sqlite_open(struct sqlite_sink *s, const char *path, const struct sqlite_opts *o, char *errbuf,
                size_t errlen)
{
	sqlite3_stmt *st;
	const char *mode;
	int rc;

	memset(s, 0, sizeof(*s));
	s->path = path;
	s->opts = *o;
	track(s, true);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK)
		return db_error(s, errbuf, errlen, NULL);
	sqlite3_busy_timeout(s->db, 5000);
	/* Switching to WAL writes the database header: an unwritable or
	 * non-database file fails here, before any input is read. */
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
		return db_error(s, errbuf, errlen, NULL);
	rc = sqlite3_step(st);
	mode = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	if (rc != SQLITE_ROW || !mode || strcasecmp(mode, "wal") != 0) {
		if (rc == SQLITE_ROW)
			snprintf(errbuf, errlen, "%s: cannot use WAL mode (journal mode stays %s)",
			         path, mode ? mode : "unknown");
		else
			db_error(s, errbuf, errlen, NULL);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	/* In WAL mode NORMAL loses no committed transaction when the process
	 * dies; only a power failure can roll back the last ones. */
	return exec(s, "PRAGMA synchronous=NORMAL", errbuf, errlen, NULL);
}

static const char *decl_type(const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_STRING:
	case JSON_OBJECT:
	case JSON_ARRAY:
		return " TEXT";
	case JSON_INTEGER:
	case JSON_TRUE:
	case JSON_FALSE:
		return " INTEGER";
	case JSON_REAL:
		return " REAL";
	case JSON_NULL:
		break;
	}
	return "";
}

/* The table's columns: cols minus "record" and names SQLite would take
 * for the same column (it compares them case-insensitively). */
static void map_columns(struct sqlite_sink *s, const struct columns *cols)
{
	s->cols = cols;
	s->colmap = sc_calloc(cols->n + 1, sizeof(*s->colmap));
	s->ncol = 0;
	for (size_t i = 0; i < cols->n; i++) {
		bool clash = strcasecmp(cols->v[i].name, "record") == 0;
		for (size_t j = 0; j < s->ncol && !clash; j++)
			clash = strcasecmp(cols->v[s->colmap[j]].name, cols->v[i].name) == 0;
		if (!clash)
			s->colmap[s->ncol++] = i;
	}
}

/* Adds the columns an existing table lacks; *have (malloced, as each name)
 * is then every column of the table. */
static int add_missing_columns(struct sqlite_sink *s, const json_t *first, char ***havep,
                               size_t *nhavep, char *errbuf, size_t errlen)
{
	sqlite3_stmt *st;
	char **have = NULL;
	size_t nhave = 0, ntable;
	int rc = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_error(s, errbuf, errlen, NULL);
	sqlite3_bind_text(st, 1, s->opts.table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		have = sc_realloc(have, (nhave + 1) * sizeof(*have));
		have[nhave++] = sc_strdup((const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	ntable = nhave;
	for (size_t k = 0; k <= s->ncol && rc == 0; k++) {
		const struct column *c = k < s->ncol ? &s->cols->v[s->colmap[k]] : NULL;
		const char *name = c ? c->name : "record";
		bool found = false;
		for (size_t j = 0; j < ntable && !found; j++)
			found = strcasecmp(have[j], name) == 0;
		if (found)
			continue;
		have = sc_realloc(have, (nhave + 1) * sizeof(*have));
		have[nhave++] = sc_strdup(name);
		rc = exec_owned(s,
		                sqlite3_mprintf("ALTER TABLE \"%w\" ADD COLUMN \"%w\"%s",
		                                s->opts.table, name,
		                                c ? decl_type(first ? column_value(c, first) : NULL)
		                                  : " TEXT"),
		                errbuf, errlen, "cannot add a column");
	}
	*havep = have;
	*nhavep = nhave;
	return rc;
}

static char *build_create(struct sqlite_sink *s, const json_t *first)
{
	char *sql = sqlite3_mprintf("CREATE TABLE IF NOT EXISTS \"%w\" (", s->opts.table);

	for (size_t k = 0; k < s->ncol && sql; k++) {
		const struct column *c = &s->cols->v[s->colmap[k]];
		char *next = sqlite3_mprintf("%s\"%w\"%s, ", sql, c->name,
		                             decl_type(first ? column_value(c, first) : NULL));
		sqlite3_free(sql);
		sql = next;
	}
	if (sql) {
		char *next = sqlite3_mprintf("%s\"record\" TEXT)", sql);
		sqlite3_free(sql);
		sql = next;
	}
	return sql;
}

/* With --key, a row that is there already becomes the new record: every
 * other column of the table is set, to NULL when this run has no value
 * for it, so the columns never disagree with "record". */
static char *build_set(struct sqlite_sink *s, char **table_cols, size_t n)
{
	char *set = sqlite3_mprintf(""), *next;

	for (size_t j = 0; j < n && set; j++) {
		bool ours = strcasecmp(table_cols[j], "record") == 0;
		if (strcasecmp(table_cols[j], s->opts.key) == 0)
			continue;
		for (size_t k = 0; k < s->ncol && !ours; k++)
			ours = strcasecmp(s->cols->v[s->colmap[k]].name, table_cols[j]) == 0;
		next = ours ? sqlite3_mprintf("%s\"%w\" = excluded.\"%w\", ", set, table_cols[j],
		                              table_cols[j])
		            : sqlite3_mprintf("%s\"%w\" = NULL, ", set, table_cols[j]);
		sqlite3_free(set);
		set = next;
	}
	return set;
}

static char *build_insert(struct sqlite_sink *s, char **table_cols, size_t ntable)
{
	char *cols = sqlite3_mprintf(""), *qs = sqlite3_mprintf("");
	char *set = s->opts.key ? build_set(s, table_cols, ntable) : sqlite3_mprintf("");
	char *sql = NULL, *next;

	for (size_t k = 0; k <= s->ncol && cols && qs; k++) {
		const char *name = k < s->ncol ? s->cols->v[s->colmap[k]].name : "record";
		next = sqlite3_mprintf("%s\"%w\", ", cols, name);
		sqlite3_free(cols);
		cols = next;
		next = sqlite3_mprintf("%s?, ", qs);
		sqlite3_free(qs);
		qs = next;
	}
	if (cols && qs && set) {
		/* Drop the trailing ", " of each list. */
		cols[strlen(cols) - 2] = qs[strlen(qs) - 2] = '\0';
		if (*set)
			set[strlen(set) - 2] = '\0';
		if (s->opts.key)
			sql = sqlite3_mprintf("INSERT INTO \"%w\" (%s) VALUES (%s) "
			                      "ON CONFLICT (\"%w\") DO UPDATE SET %s",
			                      s->opts.table, cols, qs, s->opts.key, set);
		else
			sql = sqlite3_mprintf("INSERT INTO \"%w\" (%s) VALUES (%s)", s->opts.table,
			                      cols, qs);
	}
	sqlite3_free(cols);
	sqlite3_free(qs);
	sqlite3_free(set);
	return sql;
}

int sqlite_start(struct sqlite_sink *s, const struct columns *cols, const json_t *first,
                 char *errbuf, size_t errlen)
{
	char *sql, **table_cols = NULL;
	size_t ntable = 0;
	int rc;

	map_columns(s, cols);
	if (exec_owned(s, build_create(s, first), errbuf, errlen, "cannot create the table") < 0)
		return -1;
	rc = add_missing_columns(s, first, &table_cols, &ntable, errbuf, errlen);
	sql = rc == 0 ? build_insert(s, table_cols, ntable) : NULL;
	for (size_t j = 0; j < ntable; j++)
		free(table_cols[j]);
	free(table_cols);
	if (rc < 0)
		return -1;
	if (!sql) {
		snprintf(errbuf, errlen, "%s: out of memory", s->path);
		return -1;
	}
	if (s->opts.key) {
		char *index = sqlite3_mprintf("%s_%s_key", s->opts.table, s->opts.key);
		rc = exec_owned(s,
		                sqlite3_mprintf("CREATE UNIQUE INDEX IF NOT EXISTS \"%w\" "
		                                "ON \"%w\" (\"%w\")",
		                                index ? index : "", s->opts.table, s->opts.key),
		                errbuf, errlen, "--key: cannot make the column unique");
		sqlite3_free(index);
		if (rc < 0) {
			sqlite3_free(sql);
			return -1;
		}
	}
	rc = sqlite3_prepare_v2(s->db, sql, -1, &s->insert, NULL);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? 0 : db_error(s, errbuf, errlen, NULL);
}

static void bind_value(sqlite3_stmt *st, int i, const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_STRING:
		sqlite3_bind_text(st, i, json_string_value(v), (int)json_string_length(v),
		                  SQLITE_STATIC);
		break;
	case JSON_INTEGER:
		sqlite3_bind_int64(st, i, json_integer_value(v));
		break;
	case JSON_REAL:
		sqlite3_bind_double(st, i, json_real_value(v));
		break;
	case JSON_TRUE:
		sqlite3_bind_int(st, i, 1);
		break;
	case JSON_FALSE:
		sqlite3_bind_int(st, i, 0);
		break;
	case JSON_NULL:
		sqlite3_bind_null(st, i);
		break;
	case JSON_OBJECT:
	case JSON_ARRAY:
		sqlite3_bind_text(st, i, json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER), -1,
		                  free);
		break;
	}
}

int sqlite_commit(struct sqlite_sink *s, char *errbuf, size_t errlen)
{
	if (!s->in_batch)
		return 0;
	s->in_batch = false;
	s->pending = 0;
	return exec(s, "COMMIT", errbuf, errlen, "commit");
}

int sqlite_write(struct sqlite_sink *s, const json_t *rec, const char *text, size_t len,
                 char *errbuf, size_t errlen)
{
	sqlite3_stmt *st = s->insert;
	int rc;

	if (!s->in_batch) {
		if (exec(s, "BEGIN IMMEDIATE", errbuf, errlen, NULL) < 0)
			return -1;
		s->in_batch = true;
		s->batch_started = sc_now_ms();
	}
	for (size_t k = 0; k < s->ncol; k++)
		bind_value(st, (int)k + 1, column_value(&s->cols->v[s->colmap[k]], rec));
	if (text)
		sqlite3_bind_text(st, (int)s->ncol + 1, text, (int)len, SQLITE_STATIC);
	else
		sqlite3_bind_text(st, (int)s->ncol + 1,
		                  json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER), -1, free);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_error(s, errbuf, errlen, "insert");
	if (++s->pending >= s->opts.batch_rows || sqlite_due_ms(s) == 0)
		return sqlite_commit(s, errbuf, errlen);
	return 0;
}

long sqlite_due_ms(const struct sqlite_sink *s)
{
	double left;

	if (!s->in_batch)
		return -1;
	left = s->batch_started + (double)s->opts.batch_ms - sc_now_ms();
	return left <= 0 ? 0 : (long)left + 1;
}

int sqlite_finish(struct sqlite_sink *s, char *errbuf, size_t errlen)
{
	int rc;

	if (sqlite_commit(s, errbuf, errlen) < 0)
		return -1;
	sqlite3_finalize(s->insert);
	s->insert = NULL;
	/* Fold the WAL into the database so the file alone is complete.  A
	 * reader holding the WAL open makes this BUSY: the data is committed
	 * anyway, so that is no failure. */
	rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		return db_error(s, errbuf, errlen, "checkpoint");
	if (sqlite3_close(s->db) != SQLITE_OK)
		return db_error(s, errbuf, errlen, "close");
	s->db = NULL;
	track(s, false);
	free(s->colmap);
	s->colmap = NULL;
	return 0;
}

void sqlite_abandon(struct sqlite_sink *s)
{
	sqlite3_finalize(s->insert);
	s->insert = NULL;
	if (s->db) {
		/* The open batch goes, as the other sinks' records do; the
		 * committed ones are folded into the database file, so that
		 * no -wal or -shm file is left (when the disk is full the
		 * checkpoint fails, and the WAL, which then holds committed
		 * rows, stays for SQLite to recover: it is not to be removed). */
		if (!sqlite3_get_autocommit(s->db))
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		sqlite3_close_v2(s->db);
	}
	s->db = NULL;
	track(s, false);
	free(s->colmap);
	s->colmap = NULL;
}

void sqlite_cleanup_all(void)
{
	for (int i = 0; i < SINK_MAX; i++)
		if (open_dbs[i])
			sqlite_abandon(open_dbs[i]);
}
