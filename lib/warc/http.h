/* http: the HTTP message in a request, response or revisit record's block
 * (application/http): its header and payload, its status and fields, and
 * the payload's decodings (chunked transfer coding; gzip, deflate and br
 * content codings, those sc-fetch's libcurl accepts).  Reads only the
 * bytes given, never past them. */
#ifndef SC_WARC_HTTP_H
#define SC_WARC_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

struct sc_warc_http {
	const char *head; /* the status line and fields, with the blank line */
	size_t head_len;
	const char *payload; /* what follows the blank line */
	size_t payload_len;
	int status; /* the response's code, or 0 (a request, or unreadable) */
};

/* Splits a block.  Returns false when it has no whole HTTP header (then
 * head is empty and payload the whole block). */
bool sc_warc_http_split(const char *block, size_t len, struct sc_warc_http *msg);

/* The value of a header field (the first of that name), as a malloced
 * string the caller frees, or NULL. */
char *sc_warc_http_field(const struct sc_warc_http *msg, const char *name);

/* Calls each(name, value, ctx) for each field, in order (names as sent),
 * each a NUL-terminated copy valid during the call. */
void sc_warc_http_fields(const struct sc_warc_http *msg,
                         void (*each)(const char *name, const char *value, void *ctx), void *ctx);

/* Does the field hold the token (comma-separated, case-insensitive)? */
bool sc_warc_http_has_token(const struct sc_warc_http *msg, const char *name, const char *token);

/* Removes the chunked transfer coding: the chunks' data appended to out.
 * Returns 0, or -1 when the framing is broken (out then holds what could
 * be read, the data of a chunk cut short included: a truncated record's
 * payload). */
int sc_warc_dechunk(const char *p, size_t n, struct sc_buf *out);

/* Undoes a Content-Encoding (gzip, x-gzip, deflate, br; identity or none
 * is a copy) into out.  Returns 0, or -1 with the reason in err (an
 * encoding not known, or bad data). */
int sc_warc_content_decode(const char *encoding, const char *p, size_t n, struct sc_buf *out,
                           char *err, size_t errlen);

#endif
