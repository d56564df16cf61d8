/* verify: is a record as WARC/1.1 says it must be (sc-warc check)?
 *
 * The mandatory fields, the date's form, a Target-URI without angle
 * brackets (WARC/1.1), the block digest, the payload digest (over the
 * entity body: a chunked payload is decoded first, and a digest over the
 * chunked bytes, wget's known error, is named as such), and a revisit's
 * profile and the fields it needs.  Content-Length and the record's
 * framing are the reader's (reader.h). */
#ifndef SC_WARC_VERIFY_H
#define SC_WARC_VERIFY_H

#include <stdbool.h>

#include "warc/reader.h"

/* Calls report(message, ctx) once for each thing wrong with rec; returns
 * how many there were. */
int sc_warc_verify(const struct sc_warc_rec *rec, void (*report)(const char *message, void *ctx),
                   void *ctx);

/* Is value a WARC-Date (YYYY-MM-DDThh:mm:ssZ, with an optional fraction
 * of a second)? */
bool sc_warc_date_valid(const char *value);

#endif
