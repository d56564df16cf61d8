/* fetch_escape: the JSON string escaper of the engine, used for bodies
 * spliced into records and for the request metrics line.  It writes
 * jansson's form, so that a record's bytes do not depend on which program
 * wrote which member (sc-record(5)).  One function, so that lib/jsonstr
 * can take its place. */
#include <stdint.h>
#include <string.h>

#include "fetch_engine.h"
#include "utf8.h"

typedef unsigned char v16u8 __attribute__((vector_size(16)));

/* Escapes s as the inside of a JSON string onto b, checking on the way that
 * it is UTF-8 without NUL (jansson's rule for strings).  The form is
 * jansson's, so every program writes the same bytes (sc-record(5)): \" \\
 * \b \f \n \r \t, \u00XX with upper-case hex for the other controls, and
 * '/' and DEL as they are.  Returns false, with
 * b->len where it was, if it is not.  Bodies are most of the output, so
 * this is one pass that moves sixteen plain bytes at a time and only stops
 * for a quote, a backslash, a control character or a non-ASCII byte. */
bool fetch_json_escape(struct fetch_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	size_t start = b->len, i = 0;

	fetch_buf_reserve(b, b->len + n + 16);
	while (i < n) {
		/* Plain runs: no byte < 0x20, '"', '\\' or >= 0x80, sixteen bytes
		 * at a time (GCC vector extensions: SSE2 on x86-64, NEON on arm64),
		 * with the output position kept in locals rather than in *b. */
		char *out = b->p + b->len;
		size_t at = i;
		while (at + 16 <= n) {
			v16u8 v;
			memcpy(&v, u + at, 16);
			v16u8 stop = (v16u8)((v16u8)(v - 0x20) >= 0x60) | (v16u8)(v == '"') |
			             (v16u8)(v == '\\');
			memcpy(out, &v, 16); /* room: n - at >= 16 bytes left */
			uint64_t lo, hi;
			memcpy(&lo, &stop, 8);
			memcpy(&hi, (const char *)&stop + 8, 8);
			if (!(lo | hi)) {
				out += 16;
				at += 16;
				continue;
			}
			size_t k = lo ? (size_t)__builtin_ctzll(lo) >> 3
			              : 8 + ((size_t)__builtin_ctzll(hi) >> 3);
			at += k;
			break;
		}
		b->len += at - i;
		i = at;
		if (i >= n)
			break;
		/* One character that is not plain ASCII (or the tail). */
		unsigned char c = u[i];
		if (b->cap - b->len < (n - i) + 6)
			fetch_buf_reserve(b, b->len + (n - i) + 6 + n / 8);
		char *dst = b->p + b->len;
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*dst = (char)c;
			b->len++;
			i++;
			continue;
		}
		if (c < 0x80) {
			if (c == 0)
				goto invalid;
			dst[0] = '\\';
			switch (c) {
			case '"':
				dst[1] = '"';
				b->len += 2;
				break;
			case '\\':
				dst[1] = '\\';
				b->len += 2;
				break;
			case '\n':
				dst[1] = 'n';
				b->len += 2;
				break;
			case '\r':
				dst[1] = 'r';
				b->len += 2;
				break;
			case '\t':
				dst[1] = 't';
				b->len += 2;
				break;
			case '\b':
				dst[1] = 'b';
				b->len += 2;
				break;
			case '\f':
				dst[1] = 'f';
				b->len += 2;
				break;
			default:
				dst[1] = 'u', dst[2] = '0', dst[3] = '0', dst[4] = hex[c >> 4],
				dst[5] = hex[c & 15];
				b->len += 6;
			}
			i++;
			continue;
		}
		size_t need = sc_utf8_seq_len(u + i, n - i);
		if (need == 0)
			goto invalid;
		memcpy(dst, u + i, need);
		b->len += need;
		i += need;
	}
	return true;
invalid:
	b->len = start;
	return false;
}
