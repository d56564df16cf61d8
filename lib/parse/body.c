/* body: which bytes of a record libxml2 parses (body or body_base64
 * decoded, NUL bytes blanked), and how it parses them (body.h). */
#include "parse/body.h"
#include "parse/bytes.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base64.h"
#include "core/util.h"
#include "parse/parse.h"
#include "record/record.h"

#define PARSE_OPTIONS                                                                        \
	(HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | \
	 HTML_PARSE_COMPACT | HTML_PARSE_IGNORE_ENC | XML_PARSE_HUGE)

/* How many interned names make a parser context worn (parse_parser_worn). */
#define DICT_RENEW_SIZE 50000

void parse_body_free(struct body *b)
{
	free(b->copy);
	free(b->decoded);
	b->copy = b->decoded = NULL;
}

int parse_body_of(const json_t *rec, struct body *b, char *why, size_t whysize)
{
	const json_t *body = json_object_get(rec, "body");
	const json_t *body64 = json_object_get(rec, "body_base64");
	const char *content_type = parse_record_string(rec, "content_type");
	const unsigned char *bytes;
	size_t n;

	memset(b, 0, sizeof(*b));
	b->encoding = "UTF-8";
	if (sc_record_failed(rec))
		return 0;
	if (body && !json_is_null(body)) {
		if (!json_is_string(body)) {
			snprintf(why, whysize, "body is not a string");
			return -1;
		}
		bytes = (const unsigned char *)json_string_value(body);
		n = json_string_length(body);
		if (parse_has_prefix(bytes, n, "\xef\xbb\xbf", 3))
			b->skip = 3;
	} else if (body64 && !json_is_null(body64)) {
		if (!json_is_string(body64) ||
		    !(b->decoded = sc_base64_decode(json_string_value(body64),
		                                    json_string_length(body64), &n))) {
			snprintf(why, whysize, "body_base64 is not base64");
			return -1;
		}
		bytes = b->decoded;
	} else {
		return 0;
	}
	if (n > INT_MAX || !parse_looks_like_html(content_type, bytes, n)) {
		parse_body_free(b);
		return 0;
	}
	if (b->decoded)
		b->encoding = parse_choose_encoding(content_type, bytes, n, &b->skip);
	/* libxml2 2.9 takes a NUL byte for the end of its input in places and
	 * drops the rest of the page; the HTML standard makes it a parse
	 * error and goes on.  Blank them out, except in UTF-16 where zero
	 * bytes are half of every ASCII character. */
	if (strncmp(b->encoding, "UTF-16", 6) != 0 && memchr(bytes, '\0', n)) {
		b->copy = sc_malloc(n);
		for (size_t i = 0; i < n; i++)
			b->copy[i] = bytes[i] ? bytes[i] : ' ';
		bytes = b->copy;
	}
	b->bytes = bytes;
	b->n = n;
	return 1;
}

htmlDocPtr parse_body_parse(htmlParserCtxtPtr ctxt, const struct body *b)
{
	return htmlCtxtReadMemory(ctxt, (const char *)b->bytes + b->skip, (int)(b->n - b->skip),
	                          NULL, b->encoding, PARSE_OPTIONS);
}

bool parse_parser_worn(htmlParserCtxtPtr ctxt)
{
	return xmlDictSize(ctxt->dict) > DICT_RENEW_SIZE;
}
