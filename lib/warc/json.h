/* json: JSON as warcio handles it, that is as JavaScript does: strings
 * written as JSON.stringify writes them (the CDXJ lines of cdx.c), and
 * text read as JSON.parse reads it (the JSON body of a POST that
 * postkey.c makes into query parameters): JavaScript's numbers and the
 * order of an object's keys.
 *
 * sc reads JSON in four places, each for a reason of its own: jansson
 * (the records, everywhere); lib/record/jsonscan (the common input line
 * decoded fast into the same jansson values, else jansson); sc-report's
 * scan (the metrics lines, only the members it counts, no allocation per
 * line); and this reader, for JavaScript's semantics, which neither
 * jansson nor jsonscan have (a key met again keeps its first place,
 * integer keys first, numbers as Number::toString spells them). */
#ifndef SC_WARC_JSON_H
#define SC_WARC_JSON_H

#include <stddef.h>

#include "core/buf.h"

/* A JSON string of text as JavaScript's JSON.stringify writes it (bytes
 * that are not UTF-8 as U+FFFD), appended to out. */
void sc_warc_json_string(const char *text, struct sc_buf *out);

enum sc_warc_json_type {
	SC_WARC_JSON_NULL,
	SC_WARC_JSON_BOOL,
	SC_WARC_JSON_NUMBER,
	SC_WARC_JSON_STRING,
	SC_WARC_JSON_ARRAY,
	SC_WARC_JSON_OBJECT
};

/* A value as JSON.parse builds it.  Everything is owned by the value
 * (sc_warc_json_free). */
struct sc_warc_json {
	enum sc_warc_json_type type;
	/* A string's UTF-8 (a lone surrogate as U+FFFD, as JavaScript turns
	 * it into UTF-8: TextEncoder, URLSearchParams), a number's text as
	 * JavaScript writes it ("1e+21", "0.1", "Infinity"), "true" or
	 * "false"; "" for null, an array and an object. */
	char *text;
	size_t n, cap;
	/* An object's names in JavaScript's property order (integer keys
	 * first, ascending, then the others as they came; a name met again
	 * keeps its first place and takes its last value); NULL for an
	 * array. */
	char **keys;
	struct sc_warc_json **kids; /* an array's or object's n values */
};

/* JSON.parse of the n bytes at text (UTF-8), or NULL where it would
 * throw; nesting deeper than 256 is taken as unreadable (JavaScript would
 * overflow its stack long after). */
struct sc_warc_json *sc_warc_json_parse(const char *text, size_t n);
void sc_warc_json_free(struct sc_warc_json *j);

#endif
