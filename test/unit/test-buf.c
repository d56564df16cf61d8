/* Unit tests for lib/buf: appends, the hard maximum (an error, the buffer
 * as it was), truncation, taking the content, shrinking. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tap.h"

static void test_appends(void)
{
	struct sc_buf b;

	sc_buf_init(&b, 1000);
	ok(b.p == NULL && b.len == 0, "init allocates nothing");
	ok(sc_buf_add(&b, "abc", 3) == 0 && sc_buf_addc(&b, 'd') == 0 && sc_buf_adds(&b, "ef") == 0,
	   "add, addc, adds succeed");
	is_str(b.p, "abcdef", "the content, NUL-terminated");
	is_int(b.len, 6, "len counts the content, not the NUL");
	ok(sc_buf_printf(&b, "-%d-%s", 42, "x") == 0, "printf succeeds");
	is_str(b.p, "abcdef-42-x", "printf appends");
	char big[300];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(sc_buf_printf(&b, "%s", big) == 0, "printf longer than its stack buffer succeeds");
	is_int(b.len, 11 + 299, "and appends all of it");
	ok(b.p[b.len] == '\0' && b.p[11] == 'z', "still NUL-terminated");
	ok(sc_buf_add(&b, "", 0) == 0 && b.len == 310, "adding nothing is fine");
	sc_buf_free(&b);
	ok(b.p == NULL && b.len == 0 && b.max == 1000, "free leaves it empty with its maximum");
}

static void test_maximum(void)
{
	struct sc_buf b;

	sc_buf_init(&b, 8);
	ok(sc_buf_add(&b, "12345678", 8) == 0, "exactly the maximum fits");
	ok(sc_buf_addc(&b, '9') == -1, "one byte past it is an error");
	ok(sc_buf_add(&b, "9", 1) == -1 && sc_buf_adds(&b, "9") == -1, "for every append");
	ok(sc_buf_printf(&b, "%d", 9) == -1, "and for printf");
	is_str(b.p, "12345678", "the content as it was");
	sc_buf_truncate(&b, 5);
	ok(sc_buf_printf(&b, "%d", 123456) == -1, "a printf that does not fit adds nothing");
	is_str(b.p, "12345", "after a refused printf");
	ok(sc_buf_reserve(&b, 3) == 0 && sc_buf_reserve(&b, 4) == -1, "reserve obeys the maximum");
	ok(sc_buf_add(&b, "x", (size_t)-1) == -1, "a huge length is refused, not allocated");
	ok(sc_buf_setlen(&b, 9) == -1 && b.len == 5, "setlen past the maximum is refused");
	sc_buf_free(&b);

	sc_buf_init(&b, 0);
	ok(sc_buf_addc(&b, 'a') == -1 && b.len == 0, "a zero maximum holds nothing");
	sc_buf_free(&b);
}

static void test_growth(void)
{
	struct sc_buf b;
	size_t i;

	sc_buf_init(&b, 1 << 20);
	for (i = 0; i < 100000; i++)
		if (sc_buf_addc(&b, (char)('a' + i % 26)) != 0)
			break;
	is_int(i, 100000, "100000 single-byte appends");
	ok(b.p[0] == 'a' && b.p[99999] == (char)('a' + 99999 % 26) && b.p[100000] == '\0',
	   "keep every byte");
	ok(b.cap < 2 * 100001 + 64, "with capacity at most doubled past need");
	sc_buf_shrink(&b, 1 << 10);
	ok(b.p == NULL && b.len == 0, "shrink releases a buffer bigger than keep");
	sc_buf_add(&b, "abc", 3);
	sc_buf_shrink(&b, 1 << 10);
	ok(b.p != NULL && b.len == 0 && b.p[0] == '\0', "and keeps a small one, emptied");
	sc_buf_free(&b);
}

static void test_take(void)
{
	struct sc_buf b;
	size_t len = 99;
	char *p;

	sc_buf_init(&b, 100);
	p = sc_buf_take(&b, &len);
	ok(p && p[0] == '\0' && len == 0, "taking from an empty buffer gives an empty string");
	free(p);
	sc_buf_adds(&b, "hello");
	p = sc_buf_take(&b, &len);
	ok(strcmp(p, "hello") == 0 && len == 5, "take hands over the content");
	ok(b.p == NULL && b.len == 0 && b.max == 100, "and leaves the buffer empty");
	free(p);
	sc_buf_free(&b);
}

static void test_space(void)
{
	struct sc_buf b;

	sc_buf_init(&b, 4);
	char *o = sc_buf_space(&b, 16);
	ok(o != NULL && b.cap >= 17, "space allocates look-ahead past the maximum");
	memcpy(o, "abcdefgh", 8);
	ok(sc_buf_setlen(&b, 8) == -1 && b.len == 0, "but the length cannot pass it");
	ok(sc_buf_setlen(&b, 4) == 0 && strcmp(b.p, "abcd") == 0, "up to it, it can");
	sc_buf_free(&b);
}

int main(void)
{
	test_appends();
	test_maximum();
	test_growth();
	test_take();
	test_space();
	return tap_done();
}
