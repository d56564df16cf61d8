/* bytes: what body.c, sniff.c and charset.c ask of a body's first bytes;
 * a header of its own, so that none of them depends on another for it. */
#ifndef SC_PARSE_BYTES_H
#define SC_PARSE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The n bytes at s begin with the m bytes of magic. */
static inline bool parse_has_prefix(const unsigned char *s, size_t n, const char *magic, size_t m)
{
	return n >= m && memcmp(s, magic, m) == 0;
}

#endif
