/* libFuzzer target: lib/jsonstr's fast writers against its scalar
 * reference and against jansson, on random bytes.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=jsonstr` (mk/fuzz.mk), or by hand
 * from the top of the tree:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib test/fuzz/fuzz-jsonstr.c lib/jsonstr.c lib/buf.c lib/utf8.c lib/util.c -ljansson -o build/fuzz-jsonstr && build/fuzz-jsonstr -max_len=5000 build/fuzz-corpus test/fuzz/seeds-jsonstr
 *
 * The first byte chooses a maximum for the buffer (so that running out of
 * room is fuzzed too); the rest is the string.  The promise checked, for
 * each fast path this CPU has, the checked and the unchecked writer, with
 * and without SC_JSONSTR_NO_NUL:
 * - the fast writer returns what the reference returns, and leaves the
 *   buffer byte for byte as the reference does (content already there
 *   kept, nothing of a failed string left);
 * - the checked writers say "not UTF-8" exactly when lib/utf8 does (or
 *   for a NUL with SC_JSONSTR_NO_NUL);
 * - what is written for UTF-8 is what json_dumps writes for the string. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "record/jsonstr.h"

static void fail(const char *what)
{
	fprintf(stderr, "jsonstr: %s\n", what);
	abort();
}

/* The reference's result into ref, checked against jansson and lib/utf8. */
static int reference(struct sc_buf *ref, const char *s, size_t n, bool check, unsigned flags,
                     bool utf8)
{
	int rc = sc_jsonstr_escape_ref(ref, s, n, check, flags);

	if (check && rc != SC_JSONSTR_TOO_BIG &&
	    (rc == SC_JSONSTR_NOT_UTF8) !=
	            (!utf8 || ((flags & SC_JSONSTR_NO_NUL) && memchr(s, 0, n))))
		fail("the reference's verdict on UTF-8 is not lib/utf8's");
	if (rc == SC_JSONSTR_OK && utf8) {
		json_t *v = json_stringn(s, n);
		char *text = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
		if (!text)
			fail("jansson refused a UTF-8 string");
		size_t len = strlen(text);
		if (ref->len - 3 != len - 2 || memcmp(ref->p + 3, text + 1, len - 2) != 0)
			fail("the reference differs from json_dumps");
		free(text);
		json_decref(v);
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum sc_jsonstr_path paths[] = { SC_JSONSTR_WORDS, SC_JSONSTR_SSE2,
		                                      SC_JSONSTR_AVX2 };
	struct sc_buf ref, fast;

	if (size == 0)
		return 0;
	/* Odd first byte: a maximum somewhere between the input's size and
	 * six times it, so some strings do not fit. */
	size_t n = size - 1;
	size_t max = data[0] & 1 ? 3 + n + n * (data[0] >> 1) / 25 : (size_t)1 << 30;
	/* A copy of exactly n bytes, so that ASan catches a read past it. */
	char *s = malloc(n ? n : 1);
	if (!s)
		return 0;
	memcpy(s, data + 1, n);
	bool utf8 = sc_utf8_valid((const unsigned char *)s, n);

	sc_buf_init(&ref, max);
	sc_buf_init(&fast, max);
	for (int check = 0; check < 2; check++) {
		for (unsigned flags = 0; flags < 2; flags++) {
			sc_buf_reset(&ref);
			sc_buf_add(&ref, "pre", 3);
			int rr = reference(&ref, s, n, check, flags, utf8);
			for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
				if (!sc_jsonstr_use(paths[k]))
					continue;
				sc_buf_reset(&fast);
				sc_buf_add(&fast, "pre", 3);
				int rf = check ? sc_jsonstr_escape_checked(&fast, s, n, flags)
				               : sc_jsonstr_escape(&fast, s, n);
				if (rf != rr)
					fail("a fast writer's result is not the reference's");
				if (fast.len != ref.len || memcmp(fast.p, ref.p, ref.len) != 0 ||
				    fast.p[fast.len] != '\0')
					fail("a fast writer's output is not the reference's");
			}
			sc_jsonstr_use(SC_JSONSTR_AUTO);
		}
	}
	sc_buf_free(&ref);
	sc_buf_free(&fast);
	free(s);
	return 0;
}
