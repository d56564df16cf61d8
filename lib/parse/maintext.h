/* maintext: sc-parse --main, --markdown and --simhash: a page's main
 * content, boilerplate removed, as text and Markdown, and its fingerprint.
 *
 *   maintext.c           the blocks scored and the content chosen
 *                        (readability-style; sc-parse(1), MAIN TEXT)
 *   maintext_meta.c      title, byline and published, where the page says
 *   maintext_markdown.c  the chosen content written once as Markdown and
 *                        as text, in one walk, so that the text of the
 *                        Markdown is the text
 *   maintext_member.c    the members a record gets
 *   simhash.c            the 64-bit simhash of the text */
#ifndef SC_PARSE_MAINTEXT_H
#define SC_PARSE_MAINTEXT_H

#include <stdint.h>

#include "parse/parse.h"

/* What is asked for, as bits of struct config's maintext. */
enum {
	MAINTEXT_TEXT = 1u << 0,     /* --main: title, byline, published, text */
	MAINTEXT_MARKDOWN = 1u << 1, /* --markdown: title, byline, published, markdown */
	MAINTEXT_SIMHASH = 1u << 2,  /* --simhash: simhash */
};

/* The members that what adds to a record, as an object (null values when
 * the page was not parsed or has no main text).  A new reference. */
json_t *parse_page_maintext(const struct page *page, unsigned what);

/* The chosen content: the roots, in document order, whose subtrees are
 * the main content (less what maintext_skipped says is boilerplate). */
struct maintext {
	const xmlNode **roots; /* malloced */
	size_t nroots;
};

/* Chooses the main content of page (a parsed document).  Returns false
 * when there is none (no body, no text). */
bool parse_maintext_choose(const struct page *page, struct maintext *mt);
void parse_maintext_free(struct maintext *mt);

/* An element that is never main content: scripts, navigation, footers,
 * asides, hidden elements, and class or id hints of boilerplate. */
bool parse_maintext_skipped(const xmlNode *el);

/* The lower-case name of an element compared with name. */
bool parse_maintext_is(const xmlNode *el, const char *name);

/* Writes the content as Markdown (md, may be NULL) and as text (txt) at
 * once.  Links and images made absolute against the page's base. */
void parse_maintext_write(const struct page *page, const struct maintext *mt, struct sc_buf *md,
                          struct sc_buf *txt);

/* title, byline, published: new JSON strings or null. */
void parse_maintext_meta(const struct page *page, json_t *out);

/* The simhash of text[0..n): its words of four bytes or more, FNV-1a 64 mixed. */
uint64_t parse_simhash(const char *text, size_t n);

#endif
