/* base64: decoding base64 text, as body_base64 holds it (sc-record(5)). */
#ifndef SC_BASE64_H
#define SC_BASE64_H

#include <stddef.h>

/* Decodes s[0..len) (padding optional, whitespace ignored, the URL-safe
 * alphabet's '-' and '_' taken too).  Returns a buffer the caller frees,
 * its length in *outlen, or NULL if s is not base64. */
unsigned char *sc_base64_decode(const char *s, size_t len, size_t *outlen);

#endif
