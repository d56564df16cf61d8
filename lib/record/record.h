/* record: the NDJSON record format of sc-record(5), on jansson.
 *
 * Ownership follows jansson: a function returning json_t * returns a new
 * reference that the caller must json_decref; arguments are borrowed unless
 * a comment says the reference is stolen. */
#ifndef SC_RECORD_H
#define SC_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "record/jsonscan.h"

/* The closed set of error kinds (sc-record(5)).  Keep in step with the
 * names in record.c and the man page. */
enum sc_error_kind {
	SC_ERR_BAD_INPUT,          /* input line not JSON, or no usable url */
	SC_ERR_DNS,                /* host name could not be resolved */
	SC_ERR_CONNECT,            /* connection refused or unreachable */
	SC_ERR_TLS,                /* TLS handshake or certificate failure */
	SC_ERR_TIMEOUT,            /* connect, transfer or low-speed timeout */
	SC_ERR_NETWORK,            /* connection reset, transfer cut short */
	SC_ERR_HTTP,               /* complete response with a non-2xx status */
	SC_ERR_TOO_LARGE,          /* body beyond --max-bytes */
	SC_ERR_TOO_MANY_REDIRECTS, /* more than --max-redirs */
	SC_ERR_BLOCKED_SCHEME,     /* not http or https */
	SC_ERR_RATE_LIMITED,       /* Retry-After beyond --retry-max-wait */
	SC_ERR_CANCELLED,          /* aborted by shutdown */
	SC_ERR_VALIDATION,         /* sc-parse --require failed */
	SC_ERR_ROBOTS,             /* robots.txt disallows it (sc-fetch --robots) */
	SC_ERR_INTERNAL,           /* anything else; the message says what */
	SC_ERR_DEFERRED,           /* not requested: its origin held past --defer-after */
	SC_ERR_RENDER,             /* the browser failed the page (sc-render) */
	SC_ERR_SESSION_LOST,       /* the answer was the login page (sc-fetch --login-url) */
	SC_ERR_KIND_COUNT
};

const char *sc_error_kind_name(enum sc_error_kind kind);
/* Returns the kind with that name, or -1. */
int sc_error_kind_from_name(const char *name);

/* How much of a malformed line a bad_input record keeps. */
#define SC_RAW_MAX 1024

/* Parses one input line as a JSON object.  Returns the object, or NULL with
 * the reason in err->text ("not valid JSON: ...", "not a JSON object").
 * fast is NULL, or the caller's scratch for lib/jsonscan's decoder, which
 * is then tried first with the same rules: the record is the same either
 * way, only faster on the usual line. */
json_t *sc_record_parse(const char *text, size_t len, struct sc_jsonscan *fast, json_error_t *err);

/* A bad_input record for input line number lineno:
 *   {"url": <url or null>, "ok": false, "status": null,
 *    "error": {"kind": "bad_input", "message": message},
 *    "line": lineno, "raw": <first SC_RAW_MAX bytes, as valid UTF-8>} */
json_t *sc_record_bad_input(size_t lineno, const char *raw, size_t rawlen, const char *message);

/* Sets "ok": false and "error": {"kind", "message"} on rec. */
void sc_record_set_error(json_t *rec, enum sc_error_kind kind, const char *message);

/* rec's "ok" member is true. */
bool sc_record_ok(const json_t *rec);

/* rec's "ok" member is false: a failure recorded by an earlier stage.  A
 * record without "ok" (made by hand, {url, body}) is not failed. */
bool sc_record_failed(const json_t *rec);

/* A JSON string from bytes that may not be valid UTF-8: invalid sequences
 * become U+FFFD.  Never NULL. */
json_t *sc_json_string_lossy(const char *bytes, size_t len);

/* A body that is not UTF-8, as body_base64 holds it: a JSON string of the
 * bytes' base64 text (lib/core/base64).  Never NULL. */
json_t *sc_json_base64(const void *bytes, size_t len);

/* Sets up what jansson shares among threads (its hash seed), once per
 * process: called before a thread of a library's caller makes its first
 * record (a fetcher, a parser).  Thread-safe. */
void sc_record_setup(void);

/* How records are encoded: compact, members in their order, and reals with
 * 15 significant digits, so a computed 0.1 reads 0.1 and not
 * 0.10000000000000001, while every number of up to 15 significant digits
 * that came in goes out unchanged (sc-record(5)). */
#define SC_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

/* Writes rec as one compact line and flushes it, so the next stage sees it
 * at once.  The write is whole: a second signal arriving meanwhile is
 * acted on only after it (see signals.h).  Returns 0, or -1 with errno. */
int sc_record_write(FILE *out, const json_t *rec);

/* Writes an already-encoded line (without its newline) the same way:
 * passes input through byte for byte. */
int sc_record_write_raw(FILE *out, const char *text, size_t len);

#endif
