/* jsonstr: the one JSON string writer (see jsonstr.h).
 *
 * The fast loop (jsonstr_loop.h) is compiled once per instruction set:
 * with eight-byte words anywhere, with SSE2 (the x86-64 baseline), and with
 * AVX2 chosen at run time when the CPU has it. */
#include "record/jsonstr.h"

#include <stdint.h>
#include <string.h>

#include "core/utf8.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Output room kept ahead of the write position: the most one 32-byte
 * block can grow to (32 six-byte escapes) plus a 32-byte move past it. */
#define ROOM 256

/* The escape of each byte that has one, and its length (0: none). */
static const char escape_text[0x80][8] = {
	"\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004",       "\\u0005",       "\\u0006",
	"\\u0007", "\\b",     "\\t",     "\\n",     "\\u000B",       "\\f",           "\\r",
	"\\u000E", "\\u000F", "\\u0010", "\\u0011", "\\u0012",       "\\u0013",       "\\u0014",
	"\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",       "\\u001A",       "\\u001B",
	"\\u001C", "\\u001D", "\\u001E", "\\u001F", [0x22] = "\\\"", [0x5c] = "\\\\",
};
static const unsigned char escape_len[0x80] = {
	6, 6, 6, 6, 6, 6, 6, 6, 2, 2, 2, 6, 2, 2, 6, 6,          6,
	6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, [0x22] = 2, [0x5c] = 2,
};

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/* ---- the scalar reference ---- */

int sc_jsonstr_escape_ref(struct sc_buf *b, const char *s, size_t n, bool check, unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t start = b->len, len = start;

	if (start > b->max || n > b->max - start)
		return SC_JSONSTR_TOO_BIG;
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		char *o = sc_buf_space(b, len - b->len + 6);
		o += len - b->len;
		if (check && c >= 0x80) {
			size_t seq = sc_utf8_seq_len(u + i, n - i);
			if (seq == 0)
				goto not_utf8;
			memcpy(o, u + i, seq);
			len += seq;
			i += seq;
			continue;
		}
		if (check && c == 0 && (flags & SC_JSONSTR_NO_NUL))
			goto not_utf8;
		if (needs_escape(c)) {
			memcpy(o, escape_text[c], escape_len[c]);
			len += escape_len[c];
		} else {
			*o = (char)c;
			len++;
		}
		i++;
	}
	if (sc_buf_setlen(b, len) != 0) {
		sc_buf_truncate(b, start);
		return SC_JSONSTR_TOO_BIG;
	}
	return SC_JSONSTR_OK;
not_utf8:
	sc_buf_truncate(b, start);
	return SC_JSONSTR_NOT_UTF8;
}

/* ---- what the fast loops share ---- */

/* More room ahead of out (at least ROOM, and enough for the rest of the
 * input unescaped).  Returns the new out; *room_end is updated. */
static char *more_room(struct sc_buf *b, const char *out, size_t left, char **room_end)
{
	size_t used = (size_t)(out - b->p), len = b->len;

	b->len = used;
	sc_buf_space(b, left + ROOM + used / 2);
	b->len = len;
	*room_end = b->p + b->cap - 1;
	return b->p + used;
}

/* The stretch of non-ASCII characters at s + *i, checked and copied to out.
 * Returns the new out (*i past the stretch), or NULL at bytes that are not
 * UTF-8. */
static char *check_stretch(struct sc_buf *b, char *out, const unsigned char *s, size_t n, size_t *i,
                           char **room_end)
{
	size_t at = *i;

	while (at < n && s[at] >= 0x80) {
		size_t seq = sc_utf8_seq_len(s + at, n - at);
		if (seq == 0)
			return NULL;
		if (*room_end - out < ROOM)
			out = more_room(b, out, n - at, room_end);
		memcpy(out, s + at, seq);
		out += seq;
		at += seq;
	}
	*i = at;
	return out;
}

/* The end of a fast write: the length set, or the roll-back past the
 * maximum. */
static int finish(struct sc_buf *b, size_t start, char *out)
{
	if (sc_buf_setlen(b, (size_t)(out - b->p)) != 0) {
		sc_buf_truncate(b, start);
		return SC_JSONSTR_TOO_BIG;
	}
	return SC_JSONSTR_OK;
}

/* One block of len bytes at src (32 readable) to *out, stop marking the
 * bytes to escape and (when checking) the non-ASCII ones.  Returns len when
 * the block is done, the offset of a non-ASCII byte (the run before it
 * written), or -1 at a NUL refused by SC_JSONSTR_NO_NUL. */
static inline __attribute__((always_inline)) int
block_escapes(char **outp, const unsigned char *src, size_t len, uint32_t stop, unsigned flags)
{
	char *out = *outp;
	unsigned pos = 0;

	for (; stop; stop &= stop - 1) {
		unsigned k = (unsigned)__builtin_ctz(stop);
		unsigned char c = src[k];
		memcpy(out, src + pos, 32);
		out += k - pos;
		if (c >= 0x80) {
			*outp = out;
			return (int)k;
		}
		if (c == 0 && (flags & SC_JSONSTR_NO_NUL))
			return -1;
		memcpy(out, escape_text[c], 8);
		out += escape_len[c];
		pos = k + 1;
	}
	memcpy(out, src + pos, 32);
	*outp = out + (len - pos);
	return (int)len;
}

/* ---- eight-byte words: any CPU ---- */

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* The high bit of each byte of w that is zero (exact: no borrow across
 * bytes, unlike the usual haszero trick). */
static inline uint64_t zero_bytes(uint64_t w)
{
	return ~(((w & ~HIGHS) + ~HIGHS) | w) & HIGHS;
}

/* One bit per byte from the high bits of w (bit k for byte k). */
static inline uint32_t gather_highs(uint64_t h)
{
	return (uint32_t)(((h >> 7) * 0x0102040810204080ULL) >> 56);
}

static inline void mask_words(const unsigned char *p, uint32_t *esc, uint32_t *high)
{
	*esc = *high = 0;
	for (int k = 0; k < 4; k++) {
		uint64_t w, e;
		memcpy(&w, p + 8 * k, 8);
		/* below 0x20: no high bit, and adding 0x60 to the low seven
		 * leaves it clear. */
		e = ~(((w & ~HIGHS) + 0x6060606060606060ULL) | w) & HIGHS;
		e |= zero_bytes(w ^ ('"' * ONES)) | zero_bytes(w ^ ('\\' * ONES));
		*esc |= gather_highs(e) << (8 * k);
		*high |= gather_highs(w & HIGHS) << (8 * k);
	}
}

#define LOOP_NAME escape_words
#define LOOP_ATTR
#define LOOP_MASK mask_words
#include "record/jsonstr_loop.h"
#undef LOOP_NAME
#undef LOOP_ATTR
#undef LOOP_MASK

/* ---- SSE2 and AVX2: x86-64 ---- */

#if defined(__x86_64__)
static inline void mask_sse2(const unsigned char *p, uint32_t *esc, uint32_t *high)
{
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
	              c1f = _mm_set1_epi8(0x1f), zero = _mm_setzero_si128();
	__m128i lo = _mm_loadu_si128((const __m128i *)p);
	__m128i hi = _mm_loadu_si128((const __m128i *)(p + 16));
	/* v - 0x1f saturating is 0 exactly for the controls. */
	__m128i elo =
	        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(lo, quote), _mm_cmpeq_epi8(lo, backslash)),
	                     _mm_cmpeq_epi8(_mm_subs_epu8(lo, c1f), zero));
	__m128i ehi =
	        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(hi, quote), _mm_cmpeq_epi8(hi, backslash)),
	                     _mm_cmpeq_epi8(_mm_subs_epu8(hi, c1f), zero));

	*esc = (uint32_t)_mm_movemask_epi8(elo) | (uint32_t)_mm_movemask_epi8(ehi) << 16;
	*high = (uint32_t)_mm_movemask_epi8(lo) | (uint32_t)_mm_movemask_epi8(hi) << 16;
}

#define LOOP_NAME escape_sse2
#define LOOP_ATTR
#define LOOP_MASK mask_sse2
#include "record/jsonstr_loop.h"
#undef LOOP_NAME
#undef LOOP_ATTR
#undef LOOP_MASK

/* AVX2 (with SSSE3's byte shuffle and POPCNT, which every AVX2 CPU has).
 * A block whose escapes are all two bytes long ('"', '\', \b \f \n \r \t:
 * nearly all of them in HTML) is written without a branch per escape: each
 * eight bytes become sixteen (a backslash before every byte, its escape
 * letter or itself after), and one shuffle from a table indexed by which of
 * the eight are escaped keeps the bytes wanted. */
#define AVX2 __attribute__((target("avx2,popcnt")))

/* expand[m]: the shuffle for escape mask m of eight bytes (0x80: zero). */
static unsigned char expand[256][16];

__attribute__((constructor)) static void build_expand(void)
{
	for (unsigned m = 0; m < 256; m++) {
		unsigned o = 0;
		for (unsigned k = 0; k < 8; k++) {
			if (m >> k & 1)
				expand[m][o++] = (unsigned char)(2 * k);
			expand[m][o++] = (unsigned char)(2 * k + 1);
		}
		while (o < 16)
			expand[m][o++] = 0x80;
	}
}

AVX2 static inline void mask_avx2(const unsigned char *p, uint32_t *esc, uint32_t *high)
{
	const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'),
	              c1f = _mm256_set1_epi8(0x1f), zero = _mm256_setzero_si256();
	__m256i v = _mm256_loadu_si256((const __m256i *)p);
	__m256i e = _mm256_or_si256(
	        _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
	        _mm256_cmpeq_epi8(_mm256_subs_epu8(v, c1f), zero));

	*esc = (uint32_t)_mm256_movemask_epi8(e);
	*high = (uint32_t)_mm256_movemask_epi8(v);
}

/* Eight bytes (the low or high half of y, as unpack picks) with escape
 * mask m, expanded to out. */
AVX2 static inline __attribute__((always_inline)) void expand8(char *out, __m128i pairs, unsigned m)
{
	__m128i r = _mm_shuffle_epi8(pairs, _mm_loadu_si128((const __m128i *)expand[m]));

	_mm_storeu_si128((__m128i *)out, r);
}

/* When checking: the stretches of non-ASCII bytes that start in the block
 * at s + i (high: where its non-ASCII bytes are) are UTF-8.  *valid_to is
 * where the last stretch checked ended (it may be past the block). */
static bool stretches_valid(const unsigned char *s, size_t n, size_t i, uint32_t high,
                            size_t *valid_to)
{
	while (high) {
		size_t at = i + (size_t)__builtin_ctz(high);
		if (at >= *valid_to) {
			while (at < n && s[at] >= 0x80) {
				size_t seq = sc_utf8_seq_len(s + at, n - at);
				if (seq == 0)
					return false;
				at += seq;
			}
			*valid_to = at;
		}
		high &= *valid_to - i >= 32 ? 0 : ~0u << (*valid_to - i);
	}
	return true;
}

/* The blocks of 32 bytes from s + *ip on, while at least 64 bytes are left
 * and the output has ROOM, written by shuffles: each has no escape longer
 * than two bytes, and when checking its non-ASCII stretches are UTF-8
 * (checked in place; their bytes are copied like the rest).  Stops at the
 * first block that is not so, for block_escapes. */
AVX2 static inline __attribute__((always_inline)) void bulk_avx2(const unsigned char *s, size_t n,
                                                                 size_t *ip, char **outp,
                                                                 const char *room_end, bool check,
                                                                 size_t *valid_to)
{
	/* The letters of \b \t \n \f \r by the low four bits (0x08..0x0d). */
	const __m256i letters =
	        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0, 0, 0, 0,
	                         0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0);
	const __m256i zero = _mm256_setzero_si256(), c1f = _mm256_set1_epi8(0x1f),
	              c0f = _mm256_set1_epi8(0x0f), quote = _mm256_set1_epi8('"'),
	              backslash = _mm256_set1_epi8('\\');
	const __m128i backslash16 = _mm_set1_epi8('\\');
	size_t i = *ip;
	char *out = *outp;

	while (n - i >= 64 && room_end - out >= ROOM) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(s + i));
		__m256i ctrl = _mm256_cmpeq_epi8(_mm256_subs_epu8(v, c1f), zero);
		__m256i below16 = _mm256_cmpeq_epi8(_mm256_subs_epu8(v, c0f), zero);
		__m256i letter = _mm256_shuffle_epi8(letters, v);
		__m256i two = _mm256_andnot_si256(_mm256_cmpeq_epi8(letter, zero), below16);
		uint32_t esc = (uint32_t)_mm256_movemask_epi8(
		        _mm256_or_si256(ctrl, _mm256_or_si256(_mm256_cmpeq_epi8(v, quote),
		                                              _mm256_cmpeq_epi8(v, backslash))));
		uint32_t high = check ? (uint32_t)_mm256_movemask_epi8(v) : 0;

		if (_mm256_movemask_epi8(_mm256_andnot_si256(two, ctrl)))
			break; /* a \u00XX escape */
		if (high && !stretches_valid(s, n, i, high, valid_to))
			break;
		/* Each byte's second output byte: its letter, or itself.  A
		 * block without escapes goes the same way (no branch to
		 * mispredict); where each eight bytes go is computed from the
		 * mask at once, not one after the other. */
		__m256i y = _mm256_blendv_epi8(v, letter, two);
		__m128i y0 = _mm256_castsi256_si128(y), y1 = _mm256_extracti128_si256(y, 1);
		expand8(out, _mm_unpacklo_epi8(backslash16, y0), esc & 0xff);
		expand8(out + 8 + __builtin_popcount(esc & 0xff),
		        _mm_unpackhi_epi8(backslash16, y0), esc >> 8 & 0xff);
		expand8(out + 16 + __builtin_popcount(esc & 0xffff),
		        _mm_unpacklo_epi8(backslash16, y1), esc >> 16 & 0xff);
		expand8(out + 24 + __builtin_popcount(esc & 0xffffff),
		        _mm_unpackhi_epi8(backslash16, y1), esc >> 24);
		out += 32 + __builtin_popcount(esc);
		i += 32;
	}
	*ip = i;
	*outp = out;
}

#define AVX2_BULK                                              \
	bulk_avx2(s, n, &i, &out, room_end, check, &valid_to); \
	if (i >= n)                                            \
		break;

#define LOOP_NAME escape_avx2
#define LOOP_ATTR AVX2
#define LOOP_MASK mask_avx2
#define LOOP_BULK AVX2_BULK
#include "record/jsonstr_loop.h"
#undef LOOP_NAME
#undef LOOP_ATTR
#undef LOOP_MASK
#undef LOOP_BULK
#endif

/* ---- choosing a path ---- */

static enum sc_jsonstr_path chosen = SC_JSONSTR_AUTO;

static enum sc_jsonstr_path best_path(void)
{
#if defined(__x86_64__)
	return __builtin_cpu_supports("avx2") ? SC_JSONSTR_AVX2 : SC_JSONSTR_SSE2;
#else
	return SC_JSONSTR_WORDS;
#endif
}

bool sc_jsonstr_use(enum sc_jsonstr_path path)
{
	if (path == SC_JSONSTR_AUTO || path == SC_JSONSTR_WORDS) {
		chosen = path;
		return true;
	}
#if defined(__x86_64__)
	if (path == SC_JSONSTR_SSE2 ||
	    (path == SC_JSONSTR_AVX2 && __builtin_cpu_supports("avx2"))) {
		chosen = path;
		return true;
	}
#endif
	return false;
}

const char *sc_jsonstr_path_name(void)
{
	static const char *const names[] = { "auto", "words", "sse2", "avx2" };

	return names[chosen == SC_JSONSTR_AUTO ? best_path() : chosen];
}

static int escape_fast(struct sc_buf *b, const char *s, size_t n, bool check, unsigned flags)
{
	enum sc_jsonstr_path path = chosen == SC_JSONSTR_AUTO ? best_path() : chosen;
	const unsigned char *u = (const unsigned char *)s;

	switch (path) {
#if defined(__x86_64__)
	case SC_JSONSTR_AVX2:
		return escape_avx2(b, u, n, check, flags);
	case SC_JSONSTR_SSE2:
		return escape_sse2(b, u, n, check, flags);
#endif
	default:
		return escape_words(b, u, n, check, flags);
	}
}

int sc_jsonstr_escape(struct sc_buf *b, const char *s, size_t n)
{
	return escape_fast(b, s, n, false, 0);
}

int sc_jsonstr_escape_checked(struct sc_buf *b, const char *s, size_t n, unsigned flags)
{
	return escape_fast(b, s, n, true, flags);
}

int sc_jsonstr_quoted(struct sc_buf *b, const char *s, size_t n)
{
	size_t start = b->len;
	int rc;

	if (sc_buf_addc(b, '"') != 0)
		return SC_JSONSTR_TOO_BIG;
	rc = sc_jsonstr_escape(b, s, n);
	if (rc == SC_JSONSTR_OK && sc_buf_addc(b, '"') == 0)
		return SC_JSONSTR_OK;
	sc_buf_truncate(b, start);
	return SC_JSONSTR_TOO_BIG;
}
