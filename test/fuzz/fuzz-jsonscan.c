/* libFuzzer target: lib/jsonscan against jansson, on random input lines.
 *
 * Built and run by `make fuzz` (mk/fuzz.mk); alone: make fuzz FUZZ_TARGETS=jsonscan.
 *
 * The promise checked, for both JSON_ALLOW_NUL settings:
 * - when sc_jsonscan_object() returns a value, json_loadb() with the same
 *   flags (and JSON_REJECT_DUPLICATES) returns an object equal to it, that
 *   encodes to the same bytes (member order, integer or real, -0.0);
 * - when it declines a line that jansson takes as an object, the line has
 *   one of the features it is documented to decline or leave to jansson:
 *   a backslash (an escaped name, say), a number 64 bytes long or more, an
 *   exponent (underflow), nesting deeper than SC_JSONSCAN_MAX_DEPTH, or
 *   a NUL byte (jansson skips one that ends a token, a quirk of its
 *   stream buffer: such lines are left to it). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/jsonscan.h"

static struct sc_jsonscan scratch;

static char *encode(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
}

/* Whether the decline of a line jansson accepts is one of the documented
 * kinds (see the header comment); a coarse look at the bytes suffices. */
static int decline_explained(const uint8_t *d, size_t n)
{
	size_t run = 0, depth = 0, deepest = 0;

	for (size_t i = 0; i < n; i++) {
		if (d[i] == '\\' || d[i] == '\0')
			return 1;
		if ((d[i] == 'e' || d[i] == 'E') && i > 0 && d[i - 1] >= '0' && d[i - 1] <= '9')
			return 1;
		run = (d[i] >= '0' && d[i] <= '9') || d[i] == '-' || d[i] == '.' ? run + 1 : 0;
		if (run >= 60)
			return 1;
		if (d[i] == '[' || d[i] == '{')
			depth++;
		if ((d[i] == ']' || d[i] == '}') && depth > 0)
			depth--;
		if (depth > deepest)
			deepest = depth;
	}
	return deepest > SC_JSONSCAN_MAX_DEPTH;
}

static void check(const uint8_t *data, size_t size, size_t flags)
{
	json_error_t err;
	json_t *ours = sc_jsonscan_object(&scratch, (const char *)data, size, flags);
	json_t *theirs = json_loadb((const char *)data, size, flags | JSON_REJECT_DUPLICATES, &err);

	if (ours) {
		if (!json_is_object(theirs) || !json_equal(ours, theirs)) {
			fprintf(stderr, "jsonscan took what jansson did not: %s\n",
			        theirs ? "different value" : err.text);
			abort();
		}
		char *a = encode(ours), *b = encode(theirs);
		if (!a || !b || strcmp(a, b) != 0) {
			fprintf(stderr, "encodings differ:\n%s\n%s\n", a ? a : "(none)",
			        b ? b : "(none)");
			abort();
		}
		free(a);
		free(b);
	} else if (json_is_object(theirs) && !decline_explained(data, size)) {
		fprintf(stderr, "jsonscan declined an object jansson took\n");
		abort();
	}
	json_decref(ours);
	json_decref(theirs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so that ASan catches a read past the
	 * line (the real lines are NUL-terminated; this one is not). */
	uint8_t *line = malloc(size ? size : 1);

	if (!line)
		return 0;
	memcpy(line, data, size);
	check(line, size, 0);
	check(line, size, JSON_ALLOW_NUL);
	free(line);
	return 0;
}
