/* sc-sink internals: the output file that is never half-written, the
 * columns of CSV/TSV/SQLite, and the three kinds of sink.
 *
 * Errors: these functions print nothing and return -1 with a message in the
 * caller's buffer (or errno), except where a comment says they die; main.c
 * decides what to say.  Every temporary file is registered so that an exit
 * on any path (sc_die, a second signal) removes it. */
#ifndef SC_SINK_H
#define SC_SINK_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/buf.h"

#define SINK_MAX 8 /* sinks per run: one abort slot each (signals.h) */
#define ERRLEN 512

/* ---- outfile.c: a file written whole ---- */

enum outfile_mode {
	OUT_REPLACE, /* a temporary file in the same directory, renamed at the end */
	OUT_APPEND,  /* whole records added to the end of an existing file */
	OUT_DIRECT   /* stdout, a FIFO, a device: written as it goes */
};

struct outfile {
	const char *path; /* as the user gave it, for messages; borrowed from argv */
	char *target;     /* where the file ends up (symlinks resolved); malloced */
	char *temp;       /* the temporary file; malloced, NULL once renamed or removed */
	enum outfile_mode mode;
	int fd;
	int slot;          /* abort slot for the temporary file */
	bool had_content;  /* append: the file was not empty (so no header) */
	off_t whole;       /* append: file size after the last whole flush */
	struct sc_buf buf; /* records not yet written (at most OUTFILE_MAX) */
	bool too_big;      /* a record went past OUTFILE_MAX: the write fails */
};

/* The most an outfile holds unwritten: one record (at most a line, 256 MiB
 * by default) quoted twice over, with room to spare.  Past it the record
 * is not written and its write fails with EFBIG. */
#define OUTFILE_MAX ((size_t)2 << 30)

/* Opens path for writing ("-" is stdout).  Returns 0, or -1 with errbuf set. */
int outfile_open(struct outfile *f, const char *path, bool append, int slot, char *errbuf,
                 size_t errlen);
/* Room for n more bytes at the end of f's buffer; the caller writes there
 * and then says how many it wrote with outfile_advance. */
char *outfile_reserve(struct outfile *f, size_t n);
void outfile_advance(struct outfile *f, size_t n);
void outfile_put(struct outfile *f, const void *bytes, size_t n);
/* A record is complete: writes the buffer out if it is big enough.
 * Returns 0 or -1 with errno (EFBIG: the record passed OUTFILE_MAX). */
int outfile_record_end(struct outfile *f);
/* Writes out everything buffered (records are whole).  0 or -1 with errno. */
int outfile_flush(struct outfile *f);
/* Flush, fsync, close; the temporary file is not renamed yet. */
int outfile_finish(struct outfile *f);
/* Renames the temporary file into place and syncs the directory. */
int outfile_commit(struct outfile *f);
/* Removes a temporary file left over (on failure); frees memory. */
void outfile_discard(struct outfile *f);
/* For atexit: removes every temporary file not yet committed. */
void outfile_cleanup_all(void);

/* ---- columns.c: dotted paths into a record ---- */

struct column {
	char *name;   /* header / SQLite column name; malloced */
	char **parts; /* the path, split at dots; malloced */
	size_t nparts;
	char *whole; /* the path as one member name, tried first, or NULL; malloced */
};

struct columns {
	struct column *v; /* malloced */
	size_t n;
};

/* Parses "-c title,host=meta.host".  Returns 0, or -1 with errbuf set. */
int columns_parse(struct columns *cols, const char *spec, char *errbuf, size_t errlen);
/* The first record's top-level members, without body and body_base64. */
void columns_from_record(struct columns *cols, const json_t *rec);
/* Columns from header names (an existing file's first row). */
void columns_from_names(struct columns *cols, char **names, size_t n);
/* Adds a column whose path is its name, unless one has that name. */
void columns_add(struct columns *cols, const char *name);
/* The column's value in rec (borrowed), or NULL when missing. */
json_t *column_value(const struct column *c, const json_t *rec);
int columns_find(const struct columns *cols, const char *name);
void columns_free(struct columns *cols);

/* ---- csv.c: CSV and TSV ---- */

struct csv_opts {
	bool tsv;
	bool header; /* write a header row (unless appending to a non-empty file) */
	bool formula_escape;
	bool crlf;
};

struct csv_sink {
	struct outfile out;
	struct csv_opts opts;
	struct columns own;         /* the existing file's header, when appending */
	const struct columns *cols; /* own, or the run's columns; NULL until known */
};

/* Reads the header row of an existing file being appended to; 1 when it
 * has one (cs->own is set), 0 when not, -1 with errbuf on error. */
int csv_read_header(struct csv_sink *cs, char *errbuf, size_t errlen);
/* The columns are known: writes the header row if there is to be one. */
int csv_start(struct csv_sink *cs, const struct columns *cols);
int csv_write(struct csv_sink *cs, const json_t *rec);

/* ---- sqlite.c ---- */

struct sqlite_opts {
	const char *table;
	const char *key; /* upsert on this column, or NULL */
	long batch_rows;
	long batch_ms;
};

struct sqlite_sink {
	const char *path; /* borrowed from argv */
	struct sqlite_opts opts;
	sqlite3 *db;
	sqlite3_stmt *insert;
	const struct columns *cols;
	size_t *colmap; /* which of cols are table columns; malloced */
	size_t ncol;
	bool in_batch;
	long pending;         /* rows in the open transaction */
	double batch_started; /* sc_now_ms() at its first row */
};

int sqlite_open(struct sqlite_sink *s, const char *path, const struct sqlite_opts *o, char *errbuf,
                size_t errlen);
/* Creates or extends the table; first is the first record, for the column
 * types, or NULL when there was none. */
int sqlite_start(struct sqlite_sink *s, const struct columns *cols, const json_t *first,
                 char *errbuf, size_t errlen);
/* line/len: the record's JSON text (NULL: encode rec). */
int sqlite_write(struct sqlite_sink *s, const json_t *rec, const char *text, size_t len,
                 char *errbuf, size_t errlen);
/* Milliseconds until the open batch must be committed; -1 when none is open. */
long sqlite_due_ms(const struct sqlite_sink *s);
int sqlite_commit(struct sqlite_sink *s, char *errbuf, size_t errlen);
/* Commits, checkpoints the WAL into the database and closes. */
int sqlite_finish(struct sqlite_sink *s, char *errbuf, size_t errlen);
/* Rolls back the open batch, checkpoints and closes. */
void sqlite_abandon(struct sqlite_sink *s);
/* For atexit: abandons every database still open (a failure elsewhere). */
void sqlite_cleanup_all(void);

#endif
