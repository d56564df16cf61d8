/* hex: hexadecimal digits, read for the decoders of percent-encodings
 * (lib/web/url, lib/web/robots, lib/warc/postkey) and of JSON's \uXXXX
 * escapes (lib/record/jsonscan, lib/warc/json, sc-report's scan), and
 * written for the percent-encoders (lib/web/url, lib/web/robots,
 * lib/engine/fetch_form).  Inline: the JSON scanners call it in their
 * loops. */
#ifndef SC_HEX_H
#define SC_HEX_H

/* The value of the hexadecimal digit c (either case), or -1. */
static inline int sc_hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The uppercase digit of v's low four bits, as percent-encoding writes
 * it (RFC 3986 2.1: uppercase is the normal form). */
static inline char sc_hex_digit(unsigned v)
{
	return "0123456789ABCDEF"[v & 15];
}

/* The four hexadecimal digits at p (which has four bytes) as a number,
 * or -1 when one is not a digit. */
static inline long sc_hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int h = sc_hex_value((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

#endif
