/* Unit tests for lib/jsonstr: the form (fixed cases), then the fast
 * writers on every path against the scalar reference and against jansson's
 * json_dumps, on many random byte strings biased towards what matters:
 * quotes, backslashes, controls, non-ASCII, bytes that are not UTF-8 at
 * the 32- and 64-byte boundaries of the fast loop, every alignment.
 * test/fuzz/fuzz-jsonstr.c checks the same promise on fuzzer input. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "record/jsonstr.h"
#include "tap.h"

/* What jansson writes for s (UTF-8), without the quotes; malloced. */
static char *jansson_form(const char *s, size_t n)
{
	json_t *v = json_stringn(s, n);
	char *text = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;

	json_decref(v);
	if (!text)
		return NULL;
	size_t len = strlen(text);
	memmove(text, text + 1, len - 2);
	text[len - 2] = '\0';
	return text;
}

static int form_is(const char *s, size_t n, const char *want)
{
	struct sc_buf b;
	int same;

	sc_buf_init(&b, 1 << 20);
	same = sc_jsonstr_escape(&b, s, n) == 0 && b.len == strlen(want) &&
	       memcmp(b.p, want, b.len) == 0;
	sc_buf_reset(&b);
	same = same && sc_jsonstr_escape_ref(&b, s, n, false, 0) == 0 && b.len == strlen(want) &&
	       memcmp(b.p, want, b.len) == 0;
	if (!same)
		printf("#   got: '%.*s'\n#   want: '%s'\n", (int)b.len, b.p ? b.p : "", want);
	sc_buf_free(&b);
	return same;
}

#define FORM(s, want, what) ok(form_is(s, sizeof(s) - 1, want), "writes %s", what)

static void test_form(void)
{
	FORM("", "", "nothing for nothing");
	FORM("plain text", "plain text", "plain text as it is");
	FORM("\"\\", "\\\"\\\\", "a quote and a backslash escaped");
	FORM("\b\f\n\r\t", "\\b\\f\\n\\r\\t", "the five short escapes");
	FORM("\x01\x0b\x1f", "\\u0001\\u000B\\u001F", "other controls as \\u00XX, upper case");
	FORM("\0", "\\u0000", "NUL as \\u0000");
	FORM("/\x7f", "/\x7f", "'/' and DEL as they are");
	FORM("caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80", "UTF-8 as it is");
	FORM("<a href=\"x\">\n</a>\" and the rest of a long line, longer than 64 bytes, ok\n",
	     "<a href=\\\"x\\\">\\n</a>\\\" and the rest of a long line, longer than 64 bytes, "
	     "ok\\n",
	     "a line longer than the fast loop's block");
}

static void test_quoted_and_maximum(void)
{
	struct sc_buf b;

	sc_buf_init(&b, 10);
	sc_buf_adds(&b, "ab");
	ok(sc_jsonstr_quoted(&b, "c\"", 2) == 0 && strcmp(b.p, "ab\"c\\\"\"") == 0,
	   "quoted writes the quotes around");
	ok(sc_jsonstr_quoted(&b, "xy", 2) == SC_JSONSTR_TOO_BIG && strcmp(b.p, "ab\"c\\\"\"") == 0,
	   "past the maximum: TOO_BIG, the buffer as it was");
	sc_buf_truncate(&b, 2);
	ok(sc_jsonstr_escape(&b, "\n\n\n\n\n", 5) == SC_JSONSTR_TOO_BIG && strcmp(b.p, "ab") == 0,
	   "escapes that grow past the maximum are rolled back");
	ok(sc_jsonstr_escape_ref(&b, "\n\n\n\n\n", 5, false, 0) == SC_JSONSTR_TOO_BIG &&
	           strcmp(b.p, "ab") == 0,
	   "by the reference too");
	ok(sc_jsonstr_escape(&b, "12345678", 8) == 0 && b.len == 10, "exactly the maximum fits");
	sc_buf_free(&b);

	sc_buf_init(&b, 100);
	sc_buf_adds(&b, "keep");
	ok(sc_jsonstr_escape_checked(&b, "ok\xff", 3, 0) == SC_JSONSTR_NOT_UTF8 &&
	           strcmp(b.p, "keep") == 0,
	   "bytes that are not UTF-8: NOT_UTF8, the buffer as it was");
	ok(sc_jsonstr_escape_checked(&b, "a\0b", 3, SC_JSONSTR_NO_NUL) == SC_JSONSTR_NOT_UTF8,
	   "NO_NUL refuses a NUL");
	ok(sc_jsonstr_escape_checked(&b, "a\0b", 3, 0) == 0 && strcmp(b.p, "keepa\\u0000b") == 0,
	   "without it, NUL is \\u0000");
	sc_buf_free(&b);
}

/* ---- random strings ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t below)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 32) % below;
}

/* Bytes of one kind at d (room for 4); returns how many. */
static size_t piece(unsigned char *d, int kind)
{
	static const unsigned char bad[][4] = {
		{ 0x80 },
		{ 0xbf },
		{ 0xc0, 0x80 },
		{ 0xc1, 0xbf },
		{ 0xf5 },
		{ 0xff },
		{ 0xe0, 0x80, 0x80 },
		{ 0xed, 0xa0, 0x80 },
		{ 0xf0, 0x80, 0x80, 0x80 },
		{ 0xf4, 0x90, 0x80, 0x80 },
		{ 0xc3 },
		{ 0xe2, 0x82 },
		{ 0xf0, 0x9f, 0x98 },
	};
	static const size_t badlen[] = { 1, 1, 2, 2, 1, 1, 3, 3, 4, 4, 1, 2, 3 };
	size_t k;

	switch (kind) {
	case 0:
		d[0] = (unsigned char)"\"\\"[rnd(2)];
		return 1;
	case 1:
		d[0] = (unsigned char)rnd(0x20);
		return 1;
	case 2:
		d[0] = (unsigned char)"/\x7f\n\t"[rnd(4)];
		return 1;
	case 3:
		d[0] = (unsigned char)(0xc2 + rnd(30)), d[1] = (unsigned char)(0x80 + rnd(64));
		return 2;
	case 4: /* U+0800..U+FFFF, no surrogates */
		d[0] = (unsigned char)(0xe1 + rnd(12)), d[1] = (unsigned char)(0x80 + rnd(64)),
		d[2] = (unsigned char)(0x80 + rnd(64));
		if (d[0] == 0xed)
			d[1] &= 0x9f;
		return 3;
	case 5:
		d[0] = 0xf0, d[1] = (unsigned char)(0x90 + rnd(48)), d[2] = 0x9f, d[3] = 0x98;
		return 4;
	case 6:
		k = rnd(sizeof(badlen) / sizeof(badlen[0]));
		memcpy(d, bad[k], badlen[k]);
		return badlen[k];
	case 7:
		d[0] = (unsigned char)rnd(256);
		return 1;
	default:
		d[0] = (unsigned char)(0x20 + rnd(0x5f));
		if (d[0] == '"' || d[0] == '\\')
			d[0] = 'x';
		return 1;
	}
}

/* A random string in d (room for max + 4): how dense the special bytes
 * are varies from string to string; sometimes one bad sequence is put
 * right at a block boundary. */
static size_t random_string(unsigned char *d, size_t max, bool allow_bad)
{
	size_t n = rnd(5) == 0 ? rnd(80) : rnd((uint32_t)max + 1), len = 0;
	uint32_t density = 1 + rnd(64);

	while (len < n) {
		int kind = rnd(density) == 0 ? (int)rnd(allow_bad ? 8 : 6) : 8;
		len += piece(d + len, kind);
	}
	if (allow_bad && len > 0 && rnd(3) == 0) {
		static const size_t at[] = { 0, 1, 30, 31, 32, 33, 62, 63, 64, 65 };
		size_t back = at[rnd(sizeof(at) / sizeof(at[0]))];
		if (back < len)
			piece(d + len - 1 - back, 6);
	}
	return len;
}

static const char *const path_names[] = { "words", "sse2", "avx2" };
static const enum sc_jsonstr_path paths[] = { SC_JSONSTR_WORDS, SC_JSONSTR_SSE2, SC_JSONSTR_AVX2 };

/* One string: every path, checked and not, with something already in the
 * buffer, against the reference and (when UTF-8) jansson.  Returns a
 * description of the first difference, or NULL. */
static const char *differs(const unsigned char *given, size_t n)
{
	static const char *why;
	struct sc_buf ref, fast;
	/* A copy of its own size, so that ASan sees any read past the end. */
	unsigned char *s = malloc(n ? n : 1);
	memcpy(s, given, n);
	bool utf8 = sc_utf8_valid(s, n);
	char *theirs = utf8 ? jansson_form((const char *)s, n) : NULL;

	why = NULL;
	sc_buf_init(&ref, (size_t)1 << 30);
	sc_buf_init(&fast, (size_t)1 << 30);
	for (int check = 0; check < 2 && !why; check++) {
		for (unsigned flags = 0; flags < 2 && !why; flags++) {
			sc_buf_reset(&ref);
			sc_buf_adds(&ref, "pre");
			int rr = sc_jsonstr_escape_ref(&ref, (const char *)s, n, check, flags);
			if (check &&
			    rr != (utf8 && !(flags && memchr(s, 0, n)) ? 0 : SC_JSONSTR_NOT_UTF8))
				why = "the reference's verdict on UTF-8";
			if (rr == 0 && theirs &&
			    (ref.len != 3 + strlen(theirs) ||
			     memcmp(ref.p + 3, theirs, ref.len - 3) != 0))
				why = "the reference against jansson";
			for (size_t k = 0; k < 3 && !why; k++) {
				if (!sc_jsonstr_use(paths[k]))
					continue;
				sc_buf_reset(&fast);
				sc_buf_adds(&fast, "pre");
				int rf = check ? sc_jsonstr_escape_checked(&fast, (const char *)s,
				                                           n, flags)
				               : sc_jsonstr_escape(&fast, (const char *)s, n);
				if (rf != rr || fast.len != ref.len ||
				    memcmp(fast.p, ref.p, ref.len) != 0 || fast.p[fast.len] != '\0')
					why = path_names[k];
			}
			sc_jsonstr_use(SC_JSONSTR_AUTO);
		}
	}
	free(theirs);
	free(s);
	sc_buf_free(&ref);
	sc_buf_free(&fast);
	return why;
}

static void test_random(void)
{
	enum {
		MAX = 5000,
		ROUNDS = 4000
	};
	unsigned char *block = malloc(MAX + 64 + 4);
	const char *why = NULL;
	int round, utf8 = 0;

	for (round = 0; round < ROUNDS && !why; round++) {
		size_t align = rnd(32);
		size_t n = random_string(block + align, MAX, round % 2);
		utf8 += sc_utf8_valid(block + align, n);
		why = differs(block + align, n);
		if (why)
			printf("#   round %d: length %zu at alignment %zu\n", round, n, align);
	}
	ok(!why, "%d random strings: every path equals the reference and jansson%s%s", round,
	   why ? ", not: " : "", why ? why : "");
	ok(utf8 > ROUNDS / 3 && utf8 < ROUNDS, "and %d of them were UTF-8, the others not", utf8);
	free(block);
}

/* Every short length and alignment of a string dense with escapes and a
 * bad byte at each place: the tail path, byte by byte. */
static void test_every_length(void)
{
	unsigned char s[200] = { 0 };
	const char *why = NULL;

	for (size_t n = 0; n <= 130 && !why; n++) {
		for (size_t i = 0; i < n; i++)
			s[i] = (unsigned char)"a\"b\\c\nd\x01\xc3\xa9"[i % 10];
		why = differs(s, n);
		for (size_t bad = 0; bad < n && !why; bad++) {
			unsigned char keep = s[bad];
			s[bad] = 0xff;
			why = differs(s, n);
			s[bad] = keep;
		}
	}
	ok(!why, "lengths 0..130 with a bad byte at every place%s%s", why ? ", not: " : "",
	   why ? why : "");
}

int main(void)
{
	printf("# fast path: %s\n", sc_jsonstr_path_name());
	test_form();
	test_quoted_and_maximum();
	test_every_length();
	test_random();
	return tap_done();
}
