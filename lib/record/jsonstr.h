/* jsonstr: the one JSON string writer of the toolkit.
 *
 * Every program writes strings in one form, jansson's json_dumps form
 * (sc-record(5)): '"' as \", '\' as \\, the controls with a short escape as
 * \b \f \n \r \t, every other byte below 0x20 as \u00XX with upper-case
 * hex (NUL as \u0000), and everything else, '/' and DEL and UTF-8
 * sequences included, as it is.
 *
 * The writers append to a struct sc_buf (lib/buf.h) and never leave half
 * a string behind: on failure b->len is where it was.  They return
 *   SC_JSONSTR_OK        0   written
 *   SC_JSONSTR_TOO_BIG  -1   the buffer's maximum would be passed
 *   SC_JSONSTR_NOT_UTF8 -2   (checked writers) the bytes are not UTF-8
 *
 * Speed: the fast writers look at 32 bytes at a time (AVX2 when the CPU has
 * it, else SSE2 on x86-64, else eight-byte words), copy the runs between
 * the bytes to escape in bulk, and check UTF-8 only over the stretches of
 * non-ASCII bytes.  The scalar writer is the reference they are tested
 * against (test/unit/test-jsonstr.c, test/fuzz/fuzz-jsonstr.c).
 *
 * The other JSON writers write other forms on purpose: lib/parse/encode
 * (a whole record in jansson's compact form, strings through this file),
 * lib/warc/json (JavaScript's JSON.stringify form of CDXJ lines, as warcio
 * writes them: lower-case \u00xx, U+FFFD for bytes not UTF-8).  The
 * readers are jansson, lib/record/jsonscan, sc-report's scan and
 * lib/warc/json (jsonscan.h says why each). */
#ifndef SC_JSONSTR_H
#define SC_JSONSTR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

enum {
	SC_JSONSTR_OK = 0,
	SC_JSONSTR_TOO_BIG = -1,
	SC_JSONSTR_NOT_UTF8 = -2
};

/* Flags of the checked writers */
#define SC_JSONSTR_NO_NUL 1u /* a NUL byte makes the bytes "not UTF-8" (sc-fetch's bodies) */

/* s[0..n) known to be UTF-8 (a jansson string, a key): the inside of the
 * string, without quotes; and the whole string, with its quotes. */
int sc_jsonstr_escape(struct sc_buf *b, const char *s, size_t n);
int sc_jsonstr_quoted(struct sc_buf *b, const char *s, size_t n);

/* s[0..n) raw bytes (a response body): the inside of the string, or
 * SC_JSONSTR_NOT_UTF8 when they are not well-formed UTF-8 (as lib/utf8.h
 * defines it), so that the caller writes them another way (base64). */
int sc_jsonstr_escape_checked(struct sc_buf *b, const char *s, size_t n, unsigned flags);

/* The scalar reference: one byte at a time, the same output and results as
 * the two above (check false: sc_jsonstr_escape; true: the checked one). */
int sc_jsonstr_escape_ref(struct sc_buf *b, const char *s, size_t n, bool check, unsigned flags);

/* For the tests and the benchmark: which fast path the writers take.  AUTO
 * (the default) picks the best the CPU has.  Returns false, changing
 * nothing, when this build or CPU does not have the one asked for.  Not
 * to be called while another thread writes. */
enum sc_jsonstr_path {
	SC_JSONSTR_AUTO,
	SC_JSONSTR_WORDS,
	SC_JSONSTR_SSE2,
	SC_JSONSTR_AVX2
};
bool sc_jsonstr_use(enum sc_jsonstr_path path);
const char *sc_jsonstr_path_name(void); /* the path the writers take now */

#endif
