/* css: compiles a CSS selector to an XPath 1.0 expression for libxml2.
 *
 * The grammar is documented in sc-parse(1).  Compiled expressions are
 * relative ("descendant-or-self::..."), as cssselect makes them, so the
 * same expression serves a whole page (evaluated at the document node) and
 * an --each item (evaluated at that element, which it may match itself).
 * The pseudo-elements ::text and ::attr(NAME) become XPath steps (text(),
 * @NAME); ::html cannot be said in XPath and is returned as a flag. */
#ifndef SC_PARSE_CSS_H
#define SC_PARSE_CSS_H

#include <stdbool.h>
#include <stddef.h>

struct css_error {
	size_t column; /* 1-based, in characters of the selector */
	char message[160];
};

struct css_compiled {
	char *xpath;     /* malloced; the caller frees */
	bool outer_html; /* ::html: matches are output as markup */
};

/* Compiles selector.  Returns 0, or -1 with err filled in (out untouched). */
int parse_css_compile(const char *selector, struct css_compiled *out, struct css_error *err);

#endif
