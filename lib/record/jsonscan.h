/* jsonscan: a fast decoder for the common input line, or a refusal.
 *
 * jansson's loader reads its input one character at a time through a
 * callback and a growing buffer; on records that are mostly one 20 KB body
 * string, or on 100,000 small flat records, that lexer is most of a stage's
 * time.  sc_jsonscan_object() decodes a line holding one JSON object
 * straight into the same jansson values that json_loadb() would build
 * (same types, same member order, same string bytes, same numbers), with a
 * scan that moves 8 bytes at a time over plain string content.
 *
 * It is strict and modest: whenever anything is unusual (not an object, a
 * syntax error, invalid UTF-8, a control character, an escaped member name,
 * a lone surrogate, \u0000 without JSON_ALLOW_NUL, a duplicate member, an
 * out-of-range number, nesting deeper than SC_JSONSCAN_MAX_DEPTH) it
 * declines by returning NULL, and the caller decodes the line with
 * jansson as before, which gives the same record or the same error message.
 * A refusal is therefore never an error by itself.
 *
 * test/fuzz/fuzz-jsonscan.c checks the promise against jansson.
 *
 * The other hand-written JSON readers, each apart for a reason of its own:
 * sc-report's scan (cmd/sc-report/scan.c: a metrics line's few members,
 * nothing built, nothing allocated per line: a million lines a second) and
 * lib/warc/json (JSON.parse's semantics for warcio's POST keys:
 * JavaScript's numbers and key order, which jansson values cannot hold).
 * This one builds exactly jansson's values, so it cannot serve either. */
#ifndef SC_JSONSCAN_H
#define SC_JSONSCAN_H

#include <jansson.h>
#include <stddef.h>

#define SC_JSONSCAN_MAX_DEPTH 64

/* Scratch space for unescaping strings, reused from line to line.  Zero it
 * before first use; one per thread; sc_jsonscan_free releases it. */
struct sc_jsonscan {
	char *buf;
	size_t cap;
};

/* Decodes text[0..len) as one JSON object, with the json_loadb flags that
 * matter here: JSON_REJECT_DUPLICATES is always in force (a duplicate
 * declines) and JSON_ALLOW_NUL allows \u0000 in string values.  text need
 * not be NUL-terminated.  Returns a new reference, or NULL to decline. */
json_t *sc_jsonscan_object(struct sc_jsonscan *js, const char *text, size_t len, size_t flags);

void sc_jsonscan_free(struct sc_jsonscan *js);

#endif
