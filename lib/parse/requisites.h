/* requisites: what a page needs to be displayed (sc-parse --requisites),
 * as wget -p and Heritrix's embeds gather it: from an HTML page, its
 * stylesheets, scripts, images (src, srcset, picture sources), icons,
 * preloaded fonts, styles and scripts, media posters, and the url()s of
 * its style attributes and <style> blocks; from a stylesheet (content
 * type text/css), its @imports and url()s.  The caller fetches them, and
 * feeds the stylesheets among them back, for theirs.
 *
 *   requisites.c  the record's body, and the walk of an HTML page
 *   stylesheet.c  the references of CSS text (url(), @import) */
#ifndef SC_PARSE_REQUISITES_H
#define SC_PARSE_REQUISITES_H

#include <jansson.h>
#include <stddef.h>

#include "parse/parse.h"

/* The most URLs one page gives: past it the rest are dropped (a page of
 * a million <img> is a page no crawl should fetch all of). */
#define REQUISITES_MAX 4096

/* A page's requisites, gathered in document order without duplicates:
 * absolute http(s) URLs, without their fragments. */
struct requisites {
	const struct page *page; /* resolves the references (borrowed) */
	json_t *urls;            /* the array (owned until handed on) */
};

/* requisites.c */

/* rec's requisites: a new array of absolute URLs, or null (a new
 * reference too) when rec failed or its body is neither HTML nor CSS.
 * pp parses the HTML.  Returns 0, or -1 with a reason in why when rec's
 * body is malformed (body_base64 not base64). */
int parse_record_requisites(struct page_parser *pp, const json_t *rec, json_t **out, char *why,
                            size_t whysize);

/* Adds ref, resolved against r's page, when it is an http(s) URL not
 * there already. */
void requisites_add(struct requisites *r, const char *ref, size_t n);

/* stylesheet.c */

/* Adds the references of the CSS text s[0..n): every url(...) and every
 * @import's string, in order; comments skipped. */
void requisites_add_css(struct requisites *r, const char *s, size_t n);

#endif
