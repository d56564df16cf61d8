/* writer: WARC files that survive a kill (the write side of issue 20).
 *
 * Each record is its own gzip member, written whole with write(2), so a
 * file cut anywhere loses at most the member being written.  A file is
 * written as NAME.warc.gz.open and renamed to NAME.warc.gz when closed;
 * one found left over is cut back to its last whole member (mended) and
 * written on.  A warcinfo record opens every file, and every run's part
 * of it.
 *
 * Without a maximum size the file is the path given.  With one, the path
 * PREFIX.warc.gz names a series PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz
 * (WARC/1.1 Annex C: the 14-digit UTC time the file was begun, a five
 * digit serial from 00000, the host name), a new file begun when the
 * current one has reached the size. */
#ifndef SC_WARC_WRITER_H
#define SC_WARC_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sc_warc_writer;

struct sc_warc_writer_options {
	const char *path;  /* NAME.warc.gz (or the series' prefix) */
	int level;         /* zlib level, 0 to 9 */
	uint64_t max_size; /* 0: one file; else rotate at this size */
	const char *info;  /* the warcinfo block, application/warc-fields text
	                    * ("name: value\r\n" lines: software, format,
	                    * conformsTo, robots, ...); borrowed, it must
	                    * outlive the writer, which writes it in every file
	                    * it begins */
	size_t info_len;
	bool cdx; /* each file closed gets its CDXJ, NAME.cdxj beside
	             NAME.warc.gz (cdx.h) */
};

/* Where a record went: its gzip member's offset and length, in filename
 * (the base name, as a CDX names it; valid until the next write). */
struct sc_warc_location {
	const char *filename;
	uint64_t offset;
	uint64_t length;
};

/* One piece of a record's block. */
struct sc_warc_part {
	const void *data;
	size_t len;
};

/* Opens (or mends and reopens) the file and writes its warcinfo.  Returns
 * the writer, or NULL with the reason in err.  Free with close. */
struct sc_warc_writer *sc_warc_writer_open(const struct sc_warc_writer_options *o, char *err,
                                           size_t errlen);

/* Writes one record: head (a whole WARC header, record.h) and the block in
 * parts, as one gzip member.  Returns 0, or -1 with the reason in
 * sc_warc_writer_error.  loc (may be NULL) gets its place. */
int sc_warc_writer_write(struct sc_warc_writer *w, const char *head, size_t head_len,
                         const struct sc_warc_part *parts, size_t nparts,
                         struct sc_warc_location *loc);

/* With a maximum size: begins the next file if the current one has
 * reached it.  Called before a group of records that belong together (a
 * capture), so that they stay in one file.  Returns 0 or -1. */
int sc_warc_writer_rotate_if_full(struct sc_warc_writer *w);

/* The current file's final name (without .open), its base name. */
const char *sc_warc_writer_filename(const struct sc_warc_writer *w);
const char *sc_warc_writer_error(const struct sc_warc_writer *w);
/* The WARC-Record-ID of the current file's warcinfo, which every record
 * written to it names in WARC-Warcinfo-ID (valid until the next file). */
const char *sc_warc_writer_info_id(const struct sc_warc_writer *w);

/* Closes and renames the current file; frees w.  Returns 0, or -1 with
 * the reason in err (w is freed either way). */
int sc_warc_writer_close(struct sc_warc_writer *w, char *err, size_t errlen);

/* Cuts path (a left-over .open file, or any .warc.gz) back to the end of
 * its last whole gzip member.  Returns the bytes kept, or -1 with the
 * reason in err; *cut (may be NULL) gets the bytes cut off. */
int64_t sc_warc_mend(const char *path, uint64_t *cut, char *err, size_t errlen);

#endif
