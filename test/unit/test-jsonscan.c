/* Unit tests for lib/jsonscan: what it decodes equals what jansson
 * decodes, byte for byte once encoded; what it must leave to jansson, it
 * declines.  test/fuzz/fuzz-jsonscan.c checks the same promise at random. */
#include <stdlib.h>
#include <string.h>

#include "record/jsonscan.h"
#include "tap.h"

static struct sc_jsonscan js;

static char *encode(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
}

/* jsonscan decodes text (len bytes) to what jansson does. */
static int same_as_jansson(const char *text, size_t len, size_t flags)
{
	json_error_t err;
	json_t *ours = sc_jsonscan_object(&js, text, len, flags);
	json_t *theirs = json_loadb(text, len, flags | JSON_REJECT_DUPLICATES, &err);
	int same = 0;

	if (ours && theirs && json_equal(ours, theirs)) {
		char *a = encode(ours), *b = encode(theirs);
		same = a && b && strcmp(a, b) == 0;
		free(a);
		free(b);
	}
	json_decref(ours);
	json_decref(theirs);
	return same;
}

static int declines(const char *text, size_t len, size_t flags)
{
	json_t *v = sc_jsonscan_object(&js, text, len, flags);

	json_decref(v);
	return v == NULL;
}

#define SAME(s, what) ok(same_as_jansson(s, sizeof(s) - 1, 0), "decodes %s", what)
#define DECLINES(s, what) ok(declines(s, sizeof(s) - 1, 0), "declines %s", what)

static void test_decodes(void)
{
	SAME("{}", "an empty object");
	SAME(" \t{ \"a\" : 1 ,\"b\":[ ] , \"c\" : { } }\r\n ", "with every kind of space");
	SAME("{\"url\":\"http://x/\",\"status\":200,\"ok\":true,\"error\":null,\"no\":false,"
	     "\"elapsed_ms\":1.25,\"big\":9223372036854775807,\"small\":-9223372036854775808}",
	     "a flat record, integers at both ends of the range");
	SAME("{\"z\":1,\"a\":2,\"m\":3}", "members in their order, not sorted");
	SAME("{\"n\":[0,-0,0.5,-0.0,1e5,1E+2,2.5e-3,123456789012345678]}",
	     "integers and reals as jansson tells them apart");
	SAME("{\"a\":[[1,[2,{\"b\":[{}]}]],\"x\"]}", "nested arrays and objects");
	SAME("{\"s\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"}", "every short escape");
	SAME("{\"s\":\"\\u00e9\\u20AC\\ud83d\\ude00\\u0041\"}", "\\u escapes, a surrogate pair");
	SAME("{\"s\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \x7f\"}",
	     "UTF-8 of two, three and four bytes, U+10FFFF, DEL");
	SAME("{\"\":\"\",\"caf\xc3\xa9\":\"\"}", "empty and non-ASCII member names");
	ok(same_as_jansson("{\"s\":\"a\\u0000b\"}", 16, JSON_ALLOW_NUL),
	   "decodes \\u0000 with JSON_ALLOW_NUL");

	json_t *v = sc_jsonscan_object(&js, "{\"s\":\"a\\u0000b\"}", 16, JSON_ALLOW_NUL);
	is_int(json_string_length(json_object_get(v, "s")), 3, "the NUL is in the string");
	json_decref(v);

	/* The line need not end at its length. */
	ok(same_as_jansson("{\"a\":1}garbage", 7, 0), "stops at the length given");
}

/* Specials at every offset from an 8-byte boundary, in strings long enough
 * for the 8-byte scan, and the scratch buffer reused from line to line. */
static void test_boundaries(void)
{
	static const char *const specials[] = { "\\\"",     "\\n",          "\\u00e9",
		                                "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
	char line[256];
	int all = 1, n = 0;

	for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
		for (int at = 0; at < 24; at++) {
			int len =
			        snprintf(line, sizeof(line), "{\"k\":\"%.*s%s%s\",\"e\":\"x%sy\"}",
			                 at, "abcdefghijklmnopqrstuvwxyz", specials[k],
			                 "0123456789abcdefghij", specials[k]);
			all &= same_as_jansson(line, (size_t)len, 0);
			n++;
		}
	}
	ok(all, "escapes and UTF-8 at every offset of the 8-byte scan (%d lines)", n);
}

static void test_declines(void)
{
	DECLINES("", "an empty line");
	DECLINES("   ", "a blank line");
	DECLINES("[1]", "an array");
	DECLINES("\"s\"", "a string");
	DECLINES("{\"a\":1} x", "text after the object");
	DECLINES("{\"a\":1}{}", "a second object");
	DECLINES("{\"a\":1,}", "a trailing comma");
	DECLINES("{\"a\" 1}", "a missing colon");
	DECLINES("{\"a\":1", "an unclosed object");
	DECLINES("{\"a\":[1,2}", "an unclosed array");
	DECLINES("{\"a\":\"x}", "an unterminated string");
	DECLINES("{\"a\":\"x\\", "an escape at the end");
	DECLINES("{a:1}", "a bare name");
	DECLINES("{\"a\\u0062\":1}", "an escaped member name (jansson judges it)");
	DECLINES("{\"a\":1,\"a\":2}", "a duplicate member");
	DECLINES("{\"o\":{\"a\":1,\"a\":2}}", "a duplicate member in a nested object");
	DECLINES("{\"a\":\"tab\there\"}", "a control character in a string");
	DECLINES("{\"a\":\"\\x\"}", "an unknown escape");
	DECLINES("{\"a\":\"\\u12G4\"}", "a bad \\u escape");
	DECLINES("{\"a\":\"\\ud800\"}", "a lone high surrogate");
	DECLINES("{\"a\":\"\\ud800\\u0041\"}", "a high surrogate with no low one");
	DECLINES("{\"a\":\"\\udc00\"}", "a lone low surrogate");
	DECLINES("{\"a\":\"\\u0000\"}", "\\u0000 without JSON_ALLOW_NUL");
	DECLINES("{\"a\":\"\xc0\xaf\"}", "an overlong UTF-8 form");
	DECLINES("{\"a\":\"\xed\xa0\x80\"}", "a UTF-8 surrogate");
	DECLINES("{\"a\":\"\xf4\x90\x80\x80\"}", "UTF-8 above U+10FFFF");
	DECLINES("{\"a\":\"\xe2\x82\"}", "a cut UTF-8 sequence");
	DECLINES("{\"a\":\"\x80\"}", "a stray continuation byte");
	DECLINES("{\"a\":\xc3\xa9}", "UTF-8 outside a string");
	DECLINES("{\"a\":01}", "a leading zero");
	DECLINES("{\"a\":1.}", "a fraction with no digits");
	DECLINES("{\"a\":.5}", "a fraction with no integer part");
	DECLINES("{\"a\":+1}", "a plus sign");
	DECLINES("{\"a\":-}", "a lone minus");
	DECLINES("{\"a\":1e}", "an exponent with no digits");
	DECLINES("{\"a\":9223372036854775808}", "an integer too big (jansson says so)");
	DECLINES("{\"a\":-9223372036854775809}", "an integer too small");
	DECLINES("{\"a\":1e400}", "a real that overflows");
	DECLINES("{\"a\":1e-400}", "a real that underflows (left to jansson)");
	DECLINES("{\"a\":tru}", "a cut literal");
	DECLINES("{\"a\":truex}", "a literal with more letters");
	DECLINES("{\"a\":NaN}", "NaN");
	ok(declines("{\"a\":1\0}", 8, 0), "declines a NUL byte outside a string");
}

static void test_depth(void)
{
	char line[2 * SC_JSONSCAN_MAX_DEPTH + 16];
	size_t n = 0;

	/* The object is depth 1; arrays fill the rest. */
	n += (size_t)sprintf(line, "{\"a\":");
	for (int i = 1; i < SC_JSONSCAN_MAX_DEPTH; i++)
		line[n++] = '[';
	for (int i = 1; i < SC_JSONSCAN_MAX_DEPTH; i++)
		line[n++] = ']';
	line[n++] = '}';
	ok(same_as_jansson(line, n, 0), "decodes nesting %d deep", SC_JSONSCAN_MAX_DEPTH);

	n = (size_t)sprintf(line, "{\"a\":");
	for (int i = 0; i < SC_JSONSCAN_MAX_DEPTH; i++)
		line[n++] = '[';
	for (int i = 0; i < SC_JSONSCAN_MAX_DEPTH; i++)
		line[n++] = ']';
	line[n++] = '}';
	ok(declines(line, n, 0), "declines nesting deeper (left to jansson)");
}

/* Lines of random tokens: whatever jsonscan decodes, jansson decodes the
 * same.  A seeded miniature of the fuzz target, run on every make test. */
static void test_random(void)
{
	static const char *const tokens[] = {
		"{",
		"}",
		"[",
		"]",
		":",
		",",
		"\"a\"",
		"\"b\"",
		"\"\"",
		"1",
		"-0",
		"2.5",
		"1e3",
		"true",
		"false",
		"null",
		" ",
		"\"x\\n\"",
		"\"\\u00e9\"",
		"\"\xc3\xa9\"",
		"\"\\ud83d\\ude00\"",
		"\"a\":",
		"\"b\":1",
		"{\"a\":",
		"\"abcdefghijklmnop\"",
		"\"\\\"q\\\"\"",
	};
	const size_t ntok = sizeof(tokens) / sizeof(tokens[0]);
	unsigned long long state = 42;
	char line[512];
	int bad = 0, decoded = 0;

	for (int i = 0; i < 200000; i++) {
		size_t n = 0;
		int count;
		line[n++] = '{';
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		count = (int)(state >> 60);
		for (int t = 0; t < count; t++) {
			state = state * 6364136223846793005ULL + 1442695040888963407ULL;
			const char *tok = tokens[(state >> 33) % ntok];
			size_t tl = strlen(tok);
			if (n + tl + 2 >= sizeof(line))
				break;
			memcpy(line + n, tok, tl + 1); /* room was checked */
			n += tl;
		}
		line[n++] = '}';
		json_t *ours = sc_jsonscan_object(&js, line, n, 0);
		if (ours) {
			decoded++;
			json_decref(ours);
			if (!same_as_jansson(line, n, 0) && bad++ == 0)
				printf("# differs: %.*s\n", (int)n, line);
		}
	}
	ok(bad == 0 && decoded > 1000, "random token lines: %d decoded, all as jansson does",
	   decoded);
}

int main(void)
{
	test_decodes();
	test_boundaries();
	test_declines();
	test_depth();
	test_random();
	sc_jsonscan_free(&js);
	return tap_done();
}
