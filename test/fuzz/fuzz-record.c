/* libFuzzer target: the line-to-record path every stage reads its input
 * with (lib/input's sc_input_item_from_line: blank-line rule, lib/record's
 * sc_record_parse with and without the jsonscan fast path, the bad_input
 * record), against jansson.
 *
 * The promise checked, on one input line:
 * - the fast path and jansson alone make the same item: both blank, both a
 *   record equal member for member and encoded to the same bytes, or both
 *   the same bad_input record;
 * - a record is made exactly when json_loadb (JSON_REJECT_DUPLICATES |
 *   JSON_ALLOW_NUL) takes the line as an object;
 * - a bad_input record is whole: url null, ok false, error.kind bad_input
 *   with a message, the line number, and raw as valid UTF-8 made from at
 *   most SC_RAW_MAX bytes of the line; it encodes and reads back equal. */
#include <jansson.h>
#include <string.h>

#include "fuzz.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/record.h"

static struct sc_jsonscan scratch;
static struct sc_lines *reader; /* only for its name and maximum */

static char *encode(const json_t *v)
{
	return json_dumps(v, SC_JSON_FLAGS | JSON_ENCODE_ANY);
}

static void check_bad_input(const json_t *rec)
{
	const json_t *err = json_object_get(rec, "error");
	const json_t *raw = json_object_get(rec, "raw");

	if (!json_is_null(json_object_get(rec, "url")) ||
	    !json_is_false(json_object_get(rec, "ok")))
		fuzz_fail("bad_input record without url null, ok false");
	if (!json_is_object(err) ||
	    strcmp(json_string_value(json_object_get(err, "kind")) ?: "", "bad_input") != 0 ||
	    !json_is_string(json_object_get(err, "message")))
		fuzz_fail("bad_input record without its error");
	if (json_integer_value(json_object_get(rec, "line")) != 1)
		fuzz_fail("bad_input record without its line number");
	if (!json_is_string(raw) || json_string_length(raw) > 3 * SC_RAW_MAX)
		fuzz_fail("bad_input record's raw is not a string of at most SC_RAW_MAX bytes");
	char *text = encode(rec);
	json_t *back = text ? json_loads(text, JSON_ALLOW_NUL, NULL) : NULL;
	if (!back || !json_equal(back, rec))
		fuzz_fail("bad_input record does not read back: %s", text ? text : "(no encoding)");
	json_decref(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sc_input_item fast, slow;
	struct sc_line line = { 0 };

	if (!reader)
		reader = sc_lines_open(-1, "<fuzz>");
	/* The line as the reader hands it: its own bytes, NUL-terminated,
	 * with no newline in it (a newline ends a line). */
	const uint8_t *nl = memchr(data, '\n', size);
	if (nl)
		size = (size_t)(nl - data);
	line.text = malloc(size + 1);
	memcpy(line.text, data, size);
	line.text[size] = '\0';
	line.len = size;
	line.number = 1;

	quiet_begin();
	bool has_fast = sc_input_item_from_line(reader, &line, &scratch, &fast);
	bool has_slow = sc_input_item_from_line(reader, &line, NULL, &slow);
	quiet_end();

	json_t *theirs =
	        json_loadb(line.text, line.len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	if (has_fast != has_slow)
		fuzz_fail("blank with one path and not the other");
	if (has_fast) {
		if (fast.bad != slow.bad || !json_equal(fast.rec, slow.rec))
			fuzz_fail("the fast path made a different item");
		char *a = encode(fast.rec), *b = encode(slow.rec);
		if (!a || !b || strcmp(a, b) != 0)
			fuzz_fail("encodings differ:\n%s\n%s", a ?: "(none)", b ?: "(none)");
		free(a);
		free(b);
		if (fast.bad == json_is_object(theirs))
			fuzz_fail("%s a line jansson %s", fast.bad ? "refused" : "took",
			          fast.bad ? "takes as an object" : "does not take as an object");
		if (!fast.bad && !json_equal(fast.rec, theirs))
			fuzz_fail("the record differs from jansson's object");
		if (fast.bad)
			check_bad_input(fast.rec);
		json_decref(fast.rec);
		json_decref(slow.rec);
	}
	json_decref(theirs);
	free(line.text);
	return 0;
}
