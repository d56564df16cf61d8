/* encode: a record to its JSON text, as json_dumps(rec, SC_JSON_FLAGS)
 * writes it, byte for byte, without jansson's per-character callback.
 *
 * jansson's compact encoding: no spaces, members in insertion order, '"',
 * '\\' and control characters escaped (\b \f \n \r \t, else \u00XX in
 * upper case), everything else as it is (strings are valid UTF-8 by
 * construction).  Reals, rare in records, are left to jansson. */
#include "sc-parse.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "util.h"

static void add_char(struct strbuf *b, char c)
{
	if (b->len + 2 > b->cap) {
		b->cap = (b->len + 2) * 2;
		b->s = sc_realloc(b->s, b->cap);
	}
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void encode_string(struct strbuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
	char esc[8];

	add_char(b, '"');
	for (; p < end; p++) {
		unsigned char c = *p;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		strbuf_add(b, (const char *)run, (size_t)(p - run));
		switch (c) {
		case '"':
			strbuf_add(b, "\\\"", 2);
			break;
		case '\\':
			strbuf_add(b, "\\\\", 2);
			break;
		case '\b':
			strbuf_add(b, "\\b", 2);
			break;
		case '\f':
			strbuf_add(b, "\\f", 2);
			break;
		case '\n':
			strbuf_add(b, "\\n", 2);
			break;
		case '\r':
			strbuf_add(b, "\\r", 2);
			break;
		case '\t':
			strbuf_add(b, "\\t", 2);
			break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", c);
			strbuf_add(b, esc, 6);
		}
		run = p + 1;
	}
	strbuf_add(b, (const char *)run, (size_t)(p - run));
	add_char(b, '"');
}

/* Returns 0, or -1 when jansson would refuse the value. */
static int add_value(struct strbuf *b, const json_t *v)
{
	char num[32];
	int n;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		const json_t *member;
		bool first = true;
		add_char(b, '{');
		json_object_foreach((json_t *)v, key, member)
		{
			if (!first)
				add_char(b, ',');
			first = false;
			encode_string(b, key, strlen(key));
			add_char(b, ':');
			if (add_value(b, member) != 0)
				return -1;
		}
		add_char(b, '}');
		return 0;
	}
	case JSON_ARRAY:
		add_char(b, '[');
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i > 0)
				add_char(b, ',');
			if (add_value(b, json_array_get(v, i)) != 0)
				return -1;
		}
		add_char(b, ']');
		return 0;
	case JSON_STRING:
		encode_string(b, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		strbuf_add(b, num, (size_t)n);
		return 0;
	case JSON_REAL: {
		char *text = json_dumps(v, SC_JSON_FLAGS | JSON_ENCODE_ANY);
		if (!text)
			return -1;
		strbuf_add(b, text, strlen(text));
		free(text);
		return 0;
	}
	case JSON_TRUE:
		strbuf_add(b, "true", 4);
		return 0;
	case JSON_FALSE:
		strbuf_add(b, "false", 5);
		return 0;
	case JSON_NULL:
		strbuf_add(b, "null", 4);
		return 0;
	}
	return -1;
}

void record_encode(struct strbuf *b, const json_t *rec)
{
	size_t start = b->len;
	char *text;

	if (add_value(b, rec) == 0)
		return;
	/* Whatever jansson makes of it (it says why it fails). */
	b->len = start;
	if (!(text = json_dumps(rec, SC_JSON_FLAGS)))
		sc_die(1, "out of memory");
	strbuf_add(b, text, strlen(text));
	free(text);
}
