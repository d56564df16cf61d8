/* cdx: CDXJ index lines, in the form warcio's cdx-index (2.4) and pywb
 * write: "SURT TIMESTAMP JSON", the JSON's members url, mime, status,
 * digest, length, offset, filename (absent when the record has no value;
 * status, length and offset as strings).  Which records are indexed and
 * what each member holds follows warcio: request and warcinfo records and
 * application/warc-fields metadata are left out; a revisit's mime is
 * "warc/revisit"; a response or revisit next to a request that is not a
 * GET is keyed by the request's method and body (warc/postkey.h) and
 * gets the members method and requestBody.  The caller sorts the lines
 * (bytewise: sc_warc_cdx_write_sorted). */
#ifndef SC_WARC_CDX_H
#define SC_WARC_CDX_H

#include <stdbool.h>
#include <stdio.h>

#include "core/buf.h"
#include "warc/reader.h"

/* The SURT form of url, as warcio's getSurt computes it: "www." (and
 * "www2." ...) dropped, lower case, the host's labels reversed and joined
 * by commas, the port unless it is the scheme's, ")", the path, and the
 * query's parameters sorted.  Appended to out. */
void sc_warc_surt(const char *url, struct sc_buf *out);

/* Appends rec's index line (with its newline) to out, rec taken alone
 * (not paired with a request); false when rec is not indexed.  filename
 * is the file's base name. */
bool sc_warc_cdx_line(const struct sc_warc_rec *rec, const char *filename, struct sc_buf *out);

/* A file's index lines, the records given in file order: each line is
 * appended to out once the record after it is seen (a request pairs with
 * the response before or after it), the last by sc_warc_cdx_end, which
 * frees the indexer.  filename (the file's base name) is copied; out is
 * the caller's. */
struct sc_warc_cdx;
struct sc_warc_cdx *sc_warc_cdx_new(const char *filename, struct sc_buf *out);
void sc_warc_cdx_add(struct sc_warc_cdx *c, const struct sc_warc_rec *rec);
void sc_warc_cdx_end(struct sc_warc_cdx *c);

/* Writes the lines of text (len bytes, each line ending in a newline)
 * sorted bytewise into f: a CDXJ index in its order, for sc-warc cdx and
 * sc_warc_cdx_file alike.  The newlines are made NULs while it works.
 * Returns 0, or -1 when a write failed (errno says why). */
int sc_warc_cdx_write_sorted(FILE *f, char *text, size_t len);

/* Writes the sorted CDXJ of the WARC file at warc_path to cdx_path
 * (under cdx_path.tmp, then renamed), the lines sc-warc cdx would write.
 * Returns 0, or -1 with the reason in err. */
int sc_warc_cdx_file(const char *warc_path, const char *cdx_path, char *err, size_t errlen);

#endif
