/* Unit tests for lib/: the line reader, records, the histogram, base64, the
 * rule for a value on a protocol's line. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base64.h"
#include "core/buf.h"
#include "core/hex.h"
#include "core/protocol.h"
#include "core/utf8.h"
#include "core/util.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/metrics.h"
#include "record/record.h"
#include "tap.h"

/* A reader over the bytes in data, through a pipe-less temp file. */
static struct sc_lines *reader_over(const char *data, size_t len)
{
	char path[] = "/tmp/sc-test-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	unlink(path);
	lseek(fd, 0, SEEK_SET);
	return sc_lines_open(fd, "<test>");
}

static void test_lines(void)
{
	struct sc_line line;
	const char data[] = "one\r\ntwo\n\nlast-without-newline";
	struct sc_lines *r = reader_over(data, sizeof(data) - 1);

	ok(sc_lines_next(r, &line) == 1, "first line read");
	is_str(line.text, "one", "CRLF ending is dropped");
	is_int(line.number, 1, "line number 1");
	sc_lines_next(r, &line);
	is_str(line.text, "two", "second line");
	sc_lines_next(r, &line);
	is_int(line.len, 0, "empty line has length 0");
	ok(sc_lines_next(r, &line) == 1, "a last line without newline is still a line");
	is_str(line.text, "last-without-newline", "its text");
	is_int(sc_lines_next(r, &line), 0, "then end of input");
	close(sc_lines_fd(r));
	sc_lines_close(r);
}

static void test_long_lines(void)
{
	struct sc_line line;
	size_t big = 300000;
	char *data = malloc(big + 16);

	if (!data)
		abort();
	memset(data, 'x', big);
	/* Not a C string: reader_over() takes the length. */
	memcpy(data + big, "\nshort\n", 7); // NOLINT(bugprone-not-null-terminated-result)
	setenv("SC_MAX_LINE", "100000", 1);
	struct sc_lines *r = reader_over(data, big + 7);
	unsetenv("SC_MAX_LINE");
	ok(sc_lines_next(r, &line) == 1 && line.too_long, "a line over the maximum is flagged");
	ok(line.len > 0 && line.len <= 4096, "and keeps only its head (%zu bytes)", line.len);
	ok(sc_lines_next(r, &line) == 1 && !line.too_long, "the next line is read normally");
	is_str(line.text, "short", "its text is intact");
	is_int(line.number, 2, "line numbers count the long line");
	close(sc_lines_fd(r));
	sc_lines_close(r);

	/* Long but allowed lines grow the buffer. */
	data[big] = '\n';
	r = reader_over(data, big + 1);
	ok(sc_lines_next(r, &line) == 1 && !line.too_long && line.len == big,
	   "a 300 kB line under the default maximum is read whole");
	close(sc_lines_fd(r));
	sc_lines_close(r);
	free(data);
}

/* On a non-blocking pipe, a line that arrives in pieces, and a too-long
 * line whose tail is still arriving, are not lost at EAGAIN. */
static void test_nonblocking(void)
{
	int fds[2];
	struct sc_line line;
	char chunk[50000];

	if (pipe(fds) < 0)
		abort();
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	setenv("SC_MAX_LINE", "1000", 1);
	struct sc_lines *r = sc_lines_open(fds[0], "<pipe>");
	unsetenv("SC_MAX_LINE");

	ok(write(fds[1], "hel", 3) == 3, "wrote a piece");
	ok(sc_lines_next(r, &line) == -1 && errno == EAGAIN, "no whole line yet: EAGAIN");
	ok(write(fds[1], "lo\n", 3) == 3, "wrote the rest");
	ok(sc_lines_next(r, &line) == 1 && strcmp(line.text, "hello") == 0,
	   "the line is whole once its end arrives");

	memset(chunk, 'y', sizeof(chunk));
	ok(write(fds[1], chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk), "wrote 50 kB");
	ok(sc_lines_next(r, &line) == -1 && errno == EAGAIN,
	   "a too-long line, tail pending: EAGAIN");
	ok(write(fds[1], chunk, 1000) == 1000 && write(fds[1], "\nnext\n", 6) == 6, "its tail");
	ok(sc_lines_next(r, &line) == 1 && line.too_long && line.number == 2,
	   "the too-long line is reported once its tail is skipped");
	ok(line.len > 0 && line.text[0] == 'y', "with its head");
	ok(sc_lines_next(r, &line) == 1 && strcmp(line.text, "next") == 0 && line.number == 3,
	   "and the next line follows");
	close(fds[0]);
	close(fds[1]);
	sc_lines_close(r);
}

static int count_items(void *ctx, const struct sc_lines *in, const struct sc_input_item *item)
{
	int *counts = ctx;

	(void)in;
	counts[item->bad ? 1 : 0]++;
	return 0;
}

static void test_input_and_records(void)
{
	const char data[] =
	        "{\"url\":\"http://a/\"}\n\nnot json\n[1,2]\n{\"url\":\"x\",\"url\":\"y\"}\n";
	struct sc_lines *r = reader_over(data, sizeof(data) - 1);
	int counts[2] = { 0, 0 };

	char read_err[SC_INPUT_ERRLEN];
	sc_input_run(r, &(struct sc_input_hooks){ .record = count_items }, counts, read_err);
	is_int(counts[0], 1, "one good record");
	is_int(counts[1], 3, "three bad ones (not JSON, not an object, duplicate key)");
	close(sc_lines_fd(r));
	sc_lines_close(r);

	json_t *bad = sc_record_bad_input(7, "\xff\xfe abc", 6, "why");
	is_str(json_string_value(json_object_get(json_object_get(bad, "error"), "kind")),
	       "bad_input", "bad_input kind");
	is_int(json_integer_value(json_object_get(bad, "line")), 7, "line number kept");
	is_str(json_string_value(json_object_get(bad, "raw")), "\xef\xbf\xbd\xef\xbf\xbd abc",
	       "invalid UTF-8 in raw becomes U+FFFD");
	ok(!sc_record_ok(bad), "a bad_input record is not ok");
	json_decref(bad);

	char raw[3000];
	memset(raw, 'a', sizeof(raw));
	raw[1023] = '\xc3', raw[1024] = '\xa9';
	bad = sc_record_bad_input(1, raw, sizeof(raw), "long");
	is_int(json_string_length(json_object_get(bad, "raw")), 1023,
	       "raw is cut to %d bytes without splitting a character", SC_RAW_MAX);
	json_decref(bad);

	json_error_t err;
	const char nul[] = "{\"body\":\"a\\u0000b\"}";
	json_t *rec = sc_record_parse(nul, sizeof(nul) - 1, NULL, &err);
	ok(rec && json_string_length(json_object_get(rec, "body")) == 3,
	   "an escaped NUL in a string is data, not a malformed line");
	struct sc_jsonscan fast = { 0 };
	json_t *fast_rec = sc_record_parse(nul, sizeof(nul) - 1, &fast, &err);
	ok(json_equal(rec, fast_rec), "the fast decoder gives the same record");
	json_decref(fast_rec);
	const char dup[] = "{\"a\":1,\"a\":2}";
	ok(!sc_record_parse(dup, sizeof(dup) - 1, &fast, &err) &&
	           strstr(err.text, "duplicate") != NULL,
	   "what it declines gets jansson's reason: %s", err.text);
	sc_jsonscan_free(&fast);
	json_decref(rec);

	is_str(sc_error_kind_name(SC_ERR_TOO_MANY_REDIRECTS), "too_many_redirects", "kind names");
	is_int(sc_error_kind_from_name("cancelled"), SC_ERR_CANCELLED, "kind from name");
	is_int(sc_error_kind_from_name("nope"), -1, "unknown kind name");
}

static void test_utf8(void)
{
	const unsigned char *u;
#define VALID(str) sc_utf8_valid((const unsigned char *)(str), sizeof(str) - 1)
	ok(VALID("plain ascii, long enough for the fast path"), "ASCII is valid");
	ok(VALID("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "2, 3 and 4 byte sequences");
	ok(VALID("a\0b"), "NUL is valid UTF-8");
	ok(!VALID("abcdefgh\xff"), "0xff after the fast path is not");
	ok(!VALID("\xc0\xaf"), "an overlong form is not");
	ok(!VALID("\xed\xa0\x80"), "a surrogate is not");
	ok(!VALID("\xf4\x90\x80\x80"), "beyond U+10FFFF is not");
	ok(!VALID("\xe2\x82"), "a cut sequence is not");
#undef VALID
	u = (const unsigned char *)"\xe2\x82\xac";
	is_int(sc_utf8_seq_len(u, 3), 3, "euro sign is 3 bytes");
	is_int(sc_utf8_seq_len(u, 2), 0, "not when only 2 bytes are there");

	char out[8];
	char *end = sc_utf8_put(out, 0x1F600);
	*end = '\0';
	is_str(out, "\xf0\x9f\x98\x80", "U+1F600 written as 4 bytes");
	end = sc_utf8_put(out, 0xE9);
	*end = '\0';
	is_str(out, "\xc3\xa9", "U+00E9 written as 2 bytes");
}

/* The lossy decoder, case by case against what TextDecoder("utf-8")
 * gives in node 18 (the BOM aside, which postkey.c drops itself). */
static void test_utf8_lossy(void)
{
	static const char *const cases[][2] = {
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80" },
		{ "a\xff"
		  "b",
		  "a\xef\xbf\xbd"
		  "b" },
		{ "\xe0\x80", "\xef\xbf\xbd\xef\xbf\xbd" }, /* 0x80 cannot follow 0xe0 */
		{ "\xf0\x9f\x98!", "\xef\xbf\xbd!" },       /* a cut sequence is one */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* a surrogate */
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },                 /* overlong */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xe2\x82", "\xef\xbf\xbd" }, /* cut at the end */
		{ "", "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct sc_buf b;
		sc_buf_init(&b, 1 << 10);
		sc_utf8_decode_lossy((const unsigned char *)cases[i][0], strlen(cases[i][0]), &b);
		is_str(b.p ? b.p : "", cases[i][1], "lossy decode of case %zu", i);
		sc_buf_free(&b);
	}
	is_int(sc_utf8_lead_len('a'), 1, "lead: ASCII");
	is_int(sc_utf8_lead_len(0xc2), 2, "lead: 0xc2 begins two bytes");
	is_int(sc_utf8_lead_len(0xef), 3, "lead: 0xef three");
	is_int(sc_utf8_lead_len(0xf4), 4, "lead: 0xf4 four");
	is_int(sc_utf8_lead_len(0xc0), 0, "lead: 0xc0 begins none");
	is_int(sc_utf8_lead_len(0x80), 0, "lead: a continuation byte begins none");
	is_int(sc_utf8_lead_len(0xf5), 0, "lead: 0xf5 begins none");
}

static void test_hex(void)
{
	const char *digits = "0123456789abcdefABCDEF";
	int want[] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 10, 11, 12, 13, 14, 15
	};
	int right = 0;

	for (int i = 0; digits[i]; i++)
		right += sc_hex_value((unsigned char)digits[i]) == want[i];
	is_int(right, 22, "every hex digit's value, either case");
	int none = 0;
	for (int c = 0; c < 256; c++)
		if (!strchr(digits, c) || c == 0)
			none += sc_hex_value((unsigned char)c) == -1;
	is_int(none, 256 - 22, "every other byte is no digit (G, g, @, `, 0xc1 too)");
	is_int(sc_hex4("00e9"), 0xe9, "hex4 00e9");
	is_int(sc_hex4("FFFF"), 0xffff, "hex4 FFFF");
	is_int(sc_hex4("d83D"), 0xd83d, "hex4 mixed case");
	is_int(sc_hex4("12g4"), -1, "hex4 refuses a non-digit");
}

static void test_hist(void)
{
	static struct sc_hist h;

	sc_hist_init(&h);
	is_int(sc_hist_percentile(&h, 50), 0, "empty histogram");
	for (uint64_t v = 1; v <= 100000; v++)
		sc_hist_add(&h, v);
	uint64_t p50 = sc_hist_percentile(&h, 50), p99 = sc_hist_percentile(&h, 99);
	ok(p50 > 50000 * 0.98 && p50 < 50000 * 1.02, "p50 of 1..100000 within 2%% (%lu)",
	   (unsigned long)p50);
	ok(p99 > 99000 * 0.98 && p99 < 99000 * 1.02, "p99 within 2%% (%lu)", (unsigned long)p99);
	is_int(sc_hist_percentile(&h, 100), 100000, "p100 is the max");
	sc_hist_init(&h);
	sc_hist_add(&h, 5);
	is_int(sc_hist_percentile(&h, 50), 5, "small values are exact");
	sc_hist_add(&h, (uint64_t)1 << 50);
	is_int(sc_hist_percentile(&h, 100), (uint64_t)1 << 50,
	       "huge values are clamped, max exact");

	char buf[SC_RFC3339_LEN];
	sc_rfc3339(1795970342123LL, buf);
	is_str(buf, "2026-11-29T16:39:02.123Z", "RFC 3339 timestamp");
}

/* RFC 4648's test vectors, both ways, and every length of binary bytes
 * round-tripped; what the decoder refuses. */
static void test_base64(void)
{
	static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const coded[] = { "",         "Zg==",     "Zm8=",    "Zm9v",
		                             "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	char out[64];
	unsigned char bytes[256];
	size_t n;

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		size_t len =
		        sc_base64_encode((const unsigned char *)plain[i], strlen(plain[i]), out);
		ok(len == SC_BASE64_LEN(strlen(plain[i])) && len == strlen(coded[i]) &&
		           memcmp(out, coded[i], len) == 0,
		   "base64 of \"%s\" is \"%s\"", plain[i], coded[i]);
		unsigned char *back = sc_base64_decode(coded[i], strlen(coded[i]), &n);
		ok(back && n == strlen(plain[i]) && memcmp(back, plain[i], n) == 0,
		   "\"%s\" decodes back", coded[i]);
		free(back);
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(255 - i);
	int all = 1;
	for (size_t len = 0; len <= sizeof(bytes); len++) {
		char *text = malloc(SC_BASE64_LEN(len));
		size_t tlen = sc_base64_encode(bytes, len, text);
		unsigned char *back = sc_base64_decode(text, tlen, &n);
		all &= back && n == len && memcmp(back, bytes, len) == 0;
		free(back);
		free(text);
	}
	ok(all, "every length of 0..256 binary bytes round-trips");
	ok(sc_base64_decode("Zm9v!", 5, &n) == NULL, "a byte outside the alphabet is refused");
	ok(sc_base64_decode("Zg==Zg", 6, &n) == NULL, "digits after padding are refused");
	ok(sc_base64_decode("Z", 1, &n) == NULL, "a lone sixth of a byte is refused");
	unsigned char *spaced = sc_base64_decode("Zm9v\nYmFy", 9, &n);
	ok(spaced && n == 6 && memcmp(spaced, "foobar", 6) == 0, "whitespace is skipped");
	free(spaced);
}

static void test_protocol_value(void)
{
	ok(sc_protocol_value_ok("bot/1.0 (x; y)\t\001\177", 17), "text, a tab, other controls: ok");
	ok(sc_protocol_value_ok("", 0), "nothing is ok");
	ok(!sc_protocol_value_ok("a\r\nX-Evil: 1", 13), "CR LF refused");
	ok(!sc_protocol_value_ok("a\nb", 3), "LF refused");
	ok(!sc_protocol_value_ok("a\rb", 3), "CR refused");
	ok(!sc_protocol_value_ok("a\0b", 3), "a NUL inside refused");
	ok(sc_protocol_value_ok("ab\n", 2), "only the n bytes are read");
}

int main(void)
{
	test_lines();
	test_long_lines();
	test_nonblocking();
	test_input_and_records();
	test_utf8();
	test_utf8_lossy();
	test_hex();
	test_hist();
	test_base64();
	test_protocol_value();
	return tap_done();
}
