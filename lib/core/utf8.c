#include "core/utf8.h"

#include <stdint.h>
#include <string.h>

#include "core/buf.h"

bool sc_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		/* Fast path over ASCII, eight bytes at a time: most bodies are
		 * mostly ASCII. */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		size_t len = sc_utf8_seq_len(s + i, n - i);
		if (len == 0)
			return false;
		i += len;
	}
	return true;
}

/* The length of the maximal subpart at s, which does not begin a
 * well-formed sequence: the lead byte and the continuation bytes after it
 * that could still have made one (at least 1). */
static size_t ill_formed_len(const unsigned char *s, size_t n)
{
	size_t need = sc_utf8_lead_len(s[0]), j = 1;
	unsigned c = s[0];
	/* The second byte's range is narrower after these leads: no
	 * overlong form, no surrogate, nothing above U+10FFFF. */
	unsigned lower = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	unsigned upper = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;

	while (need > 1 && j < need && j < n) {
		unsigned d = s[j];
		if (d < (j == 1 ? lower : 0x80) || d > (j == 1 ? upper : 0xbf))
			break;
		j++;
	}
	return j;
}

void sc_utf8_decode_lossy(const unsigned char *s, size_t n, struct sc_buf *out)
{
	size_t i = 0;

	while (i < n) {
		size_t start = i, k;
		while (i < n && (k = sc_utf8_seq_len(s + i, n - i)) > 0)
			i += k;
		if (i > start)
			sc_buf_add(out, s + start, i - start);
		if (i < n) {
			sc_buf_adds(out, "\xef\xbf\xbd");
			i += ill_formed_len(s + i, n - i);
		}
	}
}

char *sc_utf8_put(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}
