/* body: the bytes of a record's body that libxml2 parses, for parse_page_load
 * and parse_page_scan_defaults alike: which bytes (body.c), whether they are
 * HTML at all (sniff.c), in what encoding (charset.c), and how libxml2
 * reads them (body.c).
 *
 * Which bytes: "body" is a JSON string, so its bytes are UTF-8 already and
 * are parsed as UTF-8 whatever the page declares; "body_base64" holds the
 * page's bytes as fetched, decoded by the first of: a byte order mark, the
 * charset of content_type, a <meta charset> or <meta http-equiv> in the
 * first 4 KiB, UTF-8 if the bytes are valid UTF-8, else windows-1252 (the
 * web's default).  The charset is decided here, and libxml2 is told to
 * ignore the document's own hints, so that one rule holds. */
#ifndef SC_PARSE_BODY_H
#define SC_PARSE_BODY_H

#include <jansson.h>
#include <libxml/HTMLparser.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The bytes to parse: the body's, or body_base64's decoded, with the
 * encoding to read them in.  bytes points into the record, decoded or copy
 * (malloced, freed by parse_body_free). */
struct body {
	const unsigned char *bytes;
	size_t n, skip;
	const char *encoding;
	unsigned char *decoded, *copy;
};

/* body.c */

/* Returns 1 with the HTML to parse in b, 0 when there is none (record not
 * ok, no body, not HTML), or -1 with a reason in why when the record
 * itself is malformed (body_base64 not base64).  b is for parse_body_free
 * either way. */
int parse_body_of(const json_t *rec, struct body *b, char *why, size_t whysize);
void parse_body_free(struct body *b);

/* Parses b's bytes with ctxt, as every page is parsed (recovering from
 * errors, quietly, in b's encoding whatever the document says): the
 * document (the caller's to free), or NULL. */
htmlDocPtr parse_body_parse(htmlParserCtxtPtr ctxt, const struct body *b);

/* True when ctxt should be replaced by a new context before the next page:
 * libxml2 keeps interned names in the context's dictionary across pages,
 * and a context is renewed past a limit, so memory stays flat over an
 * endless stream of pages with ever-new attribute names. */
bool parse_parser_worn(htmlParserCtxtPtr ctxt);

/* sniff.c */

/* True when the n bytes at s, served as content_type (or NULL), are to be
 * parsed as HTML. */
bool parse_looks_like_html(const char *content_type, const unsigned char *s, size_t n);

/* charset.c */

/* The encoding to parse body_base64 bytes with.  *skip is the length of a
 * byte order mark to drop.  UTF-8 is named too: libxml2 given no encoding
 * follows the page's <meta> even with HTML_PARSE_IGNORE_ENC. */
const char *parse_choose_encoding(const char *content_type, const unsigned char *s, size_t n,
                                  size_t *skip);

#endif
