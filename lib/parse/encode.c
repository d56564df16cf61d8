/* encode: a record to its JSON text, as json_dumps(rec, SC_JSON_FLAGS)
 * writes it, byte for byte, without jansson's per-character callback.
 *
 * jansson's compact encoding: no spaces, members in insertion order,
 * strings in the one form of lib/jsonstr (jansson's), everything else as
 * it is (strings are valid UTF-8 by construction).  Reals, rare in
 * records, are left to jansson.  The other writers of JSON:
 * lib/record/jsonstr.h. */
#include "parse/parse.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "record/jsonstr.h"
#include "record/record.h"

/* What add_value returns besides 0. */
enum {
	REFUSED = -1,
	TOO_BIG = -2
};

/* Appends s[0..n), or fails past the maximum. */
#define ADD(b, s, n)                          \
	do {                                  \
		if (sc_buf_add(b, s, n) != 0) \
			return TOO_BIG;       \
	} while (0)

static int add_value(struct sc_buf *b, const json_t *v)
{
	char num[32];
	int n, rc;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		const json_t *member;
		bool first = true;
		ADD(b, "{", 1);
		json_object_foreach((json_t *)v, key, member)
		{
			if (!first)
				ADD(b, ",", 1);
			first = false;
			if (sc_jsonstr_quoted(b, key, strlen(key)) != 0)
				return TOO_BIG;
			ADD(b, ":", 1);
			if ((rc = add_value(b, member)) != 0)
				return rc;
		}
		ADD(b, "}", 1);
		return 0;
	}
	case JSON_ARRAY:
		ADD(b, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i > 0)
				ADD(b, ",", 1);
			if ((rc = add_value(b, json_array_get(v, i))) != 0)
				return rc;
		}
		ADD(b, "]", 1);
		return 0;
	case JSON_STRING:
		if (sc_jsonstr_quoted(b, json_string_value(v), json_string_length(v)) != 0)
			return TOO_BIG;
		return 0;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		ADD(b, num, (size_t)n);
		return 0;
	case JSON_REAL: {
		char *text = json_dumps(v, SC_JSON_FLAGS | JSON_ENCODE_ANY);
		if (!text)
			return REFUSED;
		rc = sc_buf_add(b, text, strlen(text));
		free(text);
		return rc == 0 ? 0 : TOO_BIG;
	}
	case JSON_TRUE:
		ADD(b, "true", 4);
		return 0;
	case JSON_FALSE:
		ADD(b, "false", 5);
		return 0;
	case JSON_NULL:
		ADD(b, "null", 4);
		return 0;
	}
	return REFUSED;
}

int parse_record_encode(struct sc_buf *b, const json_t *rec)
{
	size_t start = b->len;
	char *text;
	int rc = add_value(b, rec);

	if (rc == 0)
		return 0;
	sc_buf_truncate(b, start);
	if (rc == TOO_BIG)
		return -1;
	/* Whatever jansson makes of it (it says why it fails). */
	if (!(text = json_dumps(rec, SC_JSON_FLAGS)))
		sc_die(1, "out of memory");
	rc = sc_buf_add(b, text, strlen(text));
	free(text);
	return rc;
}
