/* record: building one WARC/1.1 record's header (WARC/1.1 sections 4-5).
 *
 * A header is the version line, named fields in the order they were added,
 * and Content-Length; the writer (writer.h) puts the block and the two
 * CRLFs after it.  Owns the identifiers (urn:uuid from getrandom) and the
 * date format (WARC-Date, "2026-12-01T15:00:00.123Z": UTC to the
 * millisecond, as WARC/1.1 allows, so that a record read back keeps the
 * time the fetch gave it; readers take the fraction, and a CDX's
 * 14-digit time stamp leaves it out). */
#ifndef SC_WARC_RECORD_H
#define SC_WARC_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* "<urn:uuid:" 36 ">" and the NUL. */
#define SC_WARC_ID_LEN 48
/* "2026-12-01T15:00:00.123Z" and the NUL. */
#define SC_WARC_DATE_LEN 25

/* A fresh record identifier, "<urn:uuid:...>" (a version 4 UUID). */
void sc_warc_record_id(char out[SC_WARC_ID_LEN]);
/* wall_ms as a WARC-Date. */
void sc_warc_date(int64_t wall_ms, char out[SC_WARC_DATE_LEN]);

/* The header being built, in head (owned; sc_warc_head_free). */
struct sc_warc_head {
	struct sc_buf text;
};

/* Begins a header: "WARC/1.1", WARC-Type, WARC-Record-ID, WARC-Date. */
void sc_warc_head_begin(struct sc_warc_head *h, const char *type, const char *id, const char *date);
/* One more field.  Control characters in the value (a URL from outside)
 * are left out, so that a field never spills onto the next line. */
void sc_warc_head_add(struct sc_warc_head *h, const char *name, const char *value);
/* One "name: value" line of WARC's field syntax into b, the same way: a
 * header's field, or one of an application/warc-fields block (warcinfo's,
 * metadata's). */
void sc_warc_field_add(struct sc_buf *b, const char *name, const char *value);
/* The last field, Content-Length, and the blank line. */
void sc_warc_head_end(struct sc_warc_head *h, uint64_t content_length);
void sc_warc_head_free(struct sc_warc_head *h);

/* The reason phrase of a status (RFC 9110), or "" for one it lacks. */
const char *sc_warc_reason_phrase(int status);

/* Rewrites a response header block as received for WARC (which has no
 * HTTP/2 framing to show it in): a status line "HTTP/2 200" or "HTTP/3 200"
 * becomes "HTTP/1.1 200 OK"; the fields are kept as they came, and the
 * block ends with one blank line.  head is the status line and the fields,
 * CRLF or LF line ends (libcurl's header callback, line by line).  out is
 * appended to. */
void sc_warc_head_as_http11(const char *head, size_t len, struct sc_buf *out);

#endif
