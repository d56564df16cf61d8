/* base64: body_base64 (sc-record(5)) written by sc-fetch and sc-warc, read
 * by the parser and the library's result accessors; and the base64 of a
 * WARC POST key. */
#include "core/base64.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/util.h"

/* A digit's value; the URL-safe alphabet's '-' and '_' are taken too. */
static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Decodes base64 (padding optional, whitespace ignored).  Returns a
 * malloced buffer and its length, or NULL if s is not base64. */
unsigned char *sc_base64_decode(const char *s, size_t len, size_t *outlen)
{
	unsigned char *out = sc_malloc(len / 4 * 3 + 4);
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	bool padding = false;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			padding = true;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || padding) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	if (bits >= 6) { /* a lone sixth of a byte: truncated */
		free(out);
		return NULL;
	}
	*outlen = o;
	return out;
}

size_t sc_base64_encode(const unsigned char *s, size_t n, char *out)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *w = out;
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
		*w++ = tab[v >> 18];
		*w++ = tab[(v >> 12) & 63];
		*w++ = tab[(v >> 6) & 63];
		*w++ = tab[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
		*w++ = tab[v >> 18];
		*w++ = tab[(v >> 12) & 63];
		*w++ = (char)(i + 1 < n ? tab[(v >> 6) & 63] : '=');
		*w++ = '=';
	}
	return (size_t)(w - out);
}
