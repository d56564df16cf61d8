/* reader: the records of a WARC file, gzipped (a member per record, or any
 * members) or plain, one after another (the read side of issue 20).
 *
 * The file is mapped; a gzipped record is inflated into the reader's
 * buffer, a plain one is read in place: a record's block is never copied
 * again.  Each record comes with its offset and its length in the file
 * (the gzip member's, as a CDX wants them) and its header fields, as C
 * strings.  A record that cannot be read is a problem with its offset and
 * a message; the reader then goes on at the next gzip member (or the next
 * "WARC/" line of a plain file) where the file allows, and ends where it
 * does not (a file cut short).  Nothing in a file can make it crash or
 * read out of bounds (test/fuzz/fuzz-warc.c). */
#ifndef SC_WARC_READER_H
#define SC_WARC_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sc_warc_reader;

struct sc_warc_field {
	const char *name;
	const char *value;
};

/* One record, valid until the next call on its reader. */
struct sc_warc_rec {
	uint64_t offset;     /* of its gzip member (or of its first byte) */
	uint64_t length;     /* of its gzip member (or header and block) */
	const char *version; /* "WARC/1.1" */
	const struct sc_warc_field *fields;
	size_t nfields;
	uint64_t content_length;
	const char *block; /* content_length bytes */
};

/* What went wrong with the bytes at offset. */
struct sc_warc_problem {
	uint64_t offset;
	char message[256];
};

enum sc_warc_next {
	SC_WARC_RECORD,  /* *rec is the next record */
	SC_WARC_PROBLEM, /* *problem says what; call again to go on */
	SC_WARC_END      /* no more */
};

/* Opens path.  Returns the reader, or NULL with the reason in err. */
struct sc_warc_reader *sc_warc_reader_open(const char *path, char *err, size_t errlen);
/* A reader over bytes in memory (the caller's, kept while it reads). */
struct sc_warc_reader *sc_warc_reader_mem(const void *data, size_t len);
void sc_warc_reader_close(struct sc_warc_reader *r);

enum sc_warc_next sc_warc_reader_next(struct sc_warc_reader *r, struct sc_warc_rec *rec,
                                      struct sc_warc_problem *problem);

/* Reads the record at offset (from a CDX line, or one seen before).
 * Returns SC_WARC_RECORD or SC_WARC_PROBLEM; the reader goes on after it. */
enum sc_warc_next sc_warc_reader_at(struct sc_warc_reader *r, uint64_t offset,
                                    struct sc_warc_rec *rec, struct sc_warc_problem *problem);

/* A field's value (the first of that name, case-insensitive), or NULL. */
const char *sc_warc_get(const struct sc_warc_rec *rec, const char *name);

#endif
