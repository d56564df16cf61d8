/* base64: base64 text (RFC 4648, section 4), as body_base64 holds it
 * (sc-record(5)). */
#ifndef SC_BASE64_H
#define SC_BASE64_H

#include <stddef.h>

/* Decodes s[0..len) (padding optional, whitespace ignored, the URL-safe
 * alphabet's '-' and '_' taken too).  Returns a buffer the caller frees,
 * its length in *outlen, or NULL if s is not base64. */
unsigned char *sc_base64_decode(const char *s, size_t len, size_t *outlen);

/* The length of n bytes' base64 text, padded. */
#define SC_BASE64_LEN(n) (4 * (((size_t)(n) + 2) / 3))

/* Writes the base64 text of s[0..n), padded, into out (SC_BASE64_LEN(n)
 * bytes; no NUL is added).  Returns its length. */
size_t sc_base64_encode(const unsigned char *s, size_t n, char *out);

#endif
