/* utf8: checking and writing UTF-8, which records must be (sc-record(5)).
 * Well-formed means what jansson accepts: no overlong forms, no surrogates,
 * nothing above U+10FFFF. */
#ifndef SC_UTF8_H
#define SC_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length of the sequence lead byte c begins in well-formed UTF-8: 1
 * for ASCII, 2 to 4 for the rest, 0 for a byte no sequence begins with (a
 * continuation byte, 0xc0, 0xc1, 0xf5 and above). */
static inline size_t sc_utf8_lead_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	return c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
}

/* Length of the well-formed sequence at p (at most n bytes, n >= 1): 1 for
 * ASCII, 2 to 4 for the rest, 0 when the bytes there are not UTF-8.
 * Inline: it sits in the inner loops of the body encoders. */
static inline size_t sc_utf8_seq_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c < 0xf0) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0;
		return 3;
	}
	if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
		return 0;
	if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return 4;
}

/* True when all n bytes at s are well-formed UTF-8 (NUL included). */
bool sc_utf8_valid(const unsigned char *s, size_t n);

struct sc_buf;
/* The n bytes at s as the Encoding standard's UTF-8 decoder reads them
 * (JavaScript's TextDecoder, without its byte order mark rule): each
 * maximal ill-formed subpart (Unicode 3.9, "U+FFFD substitution of
 * maximal subparts") becomes one U+FFFD; appended to out. */
void sc_utf8_decode_lossy(const unsigned char *s, size_t n, struct sc_buf *out);

/* Writes code point cp (at most U+10FFFF) as UTF-8 at o, which has room
 * for 4 bytes; returns the end of what it wrote.  A surrogate is written
 * as its three bytes, which are not well-formed: for a caller that keeps
 * one as it came (sc-report's member names). */
char *sc_utf8_put(char *o, unsigned long cp);

#endif
