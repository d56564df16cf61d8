/* capture: one fetch as WARC records (issue 20), on writer.h.
 *
 * A capture is what one HTTP exchange put on the wire: the request header
 * as sent, the response's status line and header as received, and the
 * payload (the body after transfer decoding, before content decoding).
 * It becomes a request record and a response record (or a revisit) that
 * share one WARC-Date and name each other in WARC-Concurrent-To, and, when
 * the caller has figures to add, a metadata record after them.  All three
 * go into one file (a rotation waits for the next capture). */
#ifndef SC_WARC_CAPTURE_H
#define SC_WARC_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warc/digest.h"
#include "warc/record.h"
#include "warc/writer.h"

/* The WARC/1.1 revisit profiles (section 6.7). */
#define SC_WARC_PROFILE_IDENTICAL "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
#define SC_WARC_PROFILE_NOT_MODIFIED "http://netpreserve.org/warc/1.1/revisit/server-not-modified"

/* A capture that is a revisit: the response record becomes a revisit
 * record whose block is the response header only. */
struct sc_warc_revisit {
	const char *profile;    /* one of the two above */
	const char *refers_to;  /* the original's WARC-Record-ID, or NULL */
	const char *target_uri; /* the original's WARC-Target-URI, or NULL */
	const char *date;       /* the original's WARC-Date, or NULL */
};

struct sc_warc_capture {
	const char *url;      /* WARC-Target-URI, as requested */
	const char *ip;       /* WARC-IP-Address, or NULL */
	const char *protocol; /* WARC-Protocol: "http/1.1", "h2"; or NULL */
	const char *tls;      /* a second WARC-Protocol: "tls/1.3"; or NULL */
	int64_t date_ms;      /* when the request was sent (wall clock) */
	const char *request;  /* the request header as sent (and its body) */
	size_t request_len;
	const char *response; /* the status line and header as received, in
	                         * HTTP/1.1 form (sc_warc_head_as_http11) and
	                         * ending with the blank line */
	size_t response_len;
	const char *payload; /* the body, transfer-decoded only */
	size_t payload_len;
	const char *received; /* the body as received, when a transfer coding
	                       * (chunked) makes it differ from the payload: the
	                       * block holds it, the payload digest is the
	                       * payload's; NULL: the payload itself */
	size_t received_len;
	bool truncated;                        /* the payload was cut (--max-bytes) */
	const char *truncated_why;             /* WARC-Truncated's reason: "length"
	                                          (NULL), "time", "disconnect",
	                                          "unspecified" */
	const struct sc_warc_revisit *revisit; /* NULL: a response record */
	const char *metadata;                  /* application/warc-fields text, or NULL */
	size_t metadata_len;
};

/* What a capture wrote: the response (or revisit) record's place, its
 * identifier, date and payload digest (for a dedupe index). */
struct sc_warc_written {
	struct sc_warc_location response;
	char id[SC_WARC_ID_LEN];
	char date[SC_WARC_DATE_LEN];
	char payload_digest[SC_WARC_SHA1_LEN];
};

/* Writes the capture's records.  Returns 0, or -1 with the reason in
 * sc_warc_writer_error. */
int sc_warc_write_capture(struct sc_warc_writer *w, const struct sc_warc_capture *c,
                          struct sc_warc_written *out);

#endif
