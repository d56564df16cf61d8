/* parse: sc-parse's extraction, the insides of sc.h's parser (lib/api/parser.c
 * is its only caller): what the files of lib/parse share.
 *
 *   handle.c   one input line in, its output records out
 *   body.c     the bytes of a record's body that libxml2 parses (body.h),
 *   sniff.c    whether they are HTML,
 *   charset.c  and in what encoding
 *   load.c     a record's body to a libxml2 document
 *   resolve.c  a page's base URL and origin, references made absolute
 *   text.c     the normalised text of nodes and values, which the default
 *              fields and select.c share
 *   fields.c   the default fields, read from the tree
 *   fields_sax.c  the same fields gathered while parsing, without a tree,
 *              when they are all that is asked for (tree_only forces the
 *              tree, for tests)
 *   select.c   selectors (CSS via css.c, or XPath) and the values of matches
 *   encode.c   records to JSON text, as jansson writes them
 *   sitemap.c  the <loc> URLs of sitemaps and sitemap indexes (plain or gzip)
 *
 * Who calls whom, without a cycle: handle.c calls load.c, fields.c,
 * fields_sax.c, select.c and sitemap.c; load.c and fields_sax.c read the
 * body through body.h (fields_sax.c frees its page with load.c's
 * parse_page_free); fields*.c and select.c use resolve.c and text.c, which call
 * nothing of lib/parse's.
 *
 * A configuration is built once (lib/api/parser.c) and only read
 * afterwards.  Each struct worker is used by one thread at a time: its
 * parser context, its compiled XPath expressions and its buffers. */
#ifndef SC_PARSE_H
#define SC_PARSE_H

#include <curl/curl.h>
#include <jansson.h>
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "core/buf.h"
#include "record/jsonscan.h"

/* A compiled selector: the XPath that libxml2 evaluates. */
struct selector {
	const char *source; /* as given on the command line (borrowed) */
	char *xpath;        /* malloced */
	bool outer_html;    /* ::html: element matches are output as markup */
};

struct field {
	char *name; /* malloced; the output member, without "[]" */
	bool many;  /* NAME[]: every match, as an array */
	struct selector sel;
	unsigned structured; /* a KIND:PATH field (structured.h): the kind, 0 for a selector */
	const char *path;    /* and the path after "KIND:" (borrowed from the spec) */
};

struct config {
	struct field *fields; /* malloced; none: the default fields */
	size_t nfields;
	bool has_each;
	struct selector each; /* --each */
	const char **require; /* malloced array of borrowed names (--require) */
	size_t nrequire;
	bool keep_body;
	bool forms;               /* --forms: a record per form (forms.c) */
	bool requisites;          /* --requisites: what the page needs to display (requisites.h) */
	bool tree_only;           /* default fields from the tree too (SC_PARSEROPT_TREE) */
	unsigned structured;      /* --structured's kinds (structured.h), 0: none */
	unsigned structured_need; /* the kinds read: structured and the KIND:PATH fields' */
	unsigned maintext;        /* --main, --markdown, --simhash (maintext.h's MAINTEXT_*) */
	size_t max_line;
};

/* A parsed page: the document and its base URL. */
struct page {
	xmlDocPtr doc; /* NULL: not parsed (not ok, not HTML, empty) */
	CURLU *base;   /* NULL: no usable base URL */
	char *origin;  /* what libcurl makes of "/" against base, less the "/"
	                         ("http://host:port"), for root-relative links; malloced */
	char *dir;     /* the base's path up to its last '/', as libcurl spells it,
	                         for relative links; malloced, or NULL (no origin, or a
	                         path libcurl would spell otherwise once joined) */
	char *self;    /* the base as libcurl spells it, less its fragment, for
	                         "#name" links; malloced, or NULL (no origin) */
};

/* The maximum of sc-parse's scratch buffers (lib/buf.h): 8 times the
 * default line maximum (SC_LINE_MAX).  A value comes from one page, at
 * most a line long, so it stays far below.  (The output of one line has
 * its own maximum, from the line maximum: handle.c.) */
#define PARSE_BUF_MAX ((size_t)2 << 30)

/* rec's member key when it is a non-empty string, else NULL. */
static inline const char *parse_record_string(const json_t *rec, const char *key)
{
	const char *s = json_string_value(json_object_get(rec, key));

	return s && *s ? s : NULL;
}

/* b set up (it may have been zeroed) and holding "" (b->p not NULL). */
static inline void parse_buf_clear(struct sc_buf *b)
{
	if (b->max == 0)
		sc_buf_init(b, PARSE_BUF_MAX);
	sc_buf_reset(b);
	sc_buf_add(b, "", 0);
}

/* text.c */

/* The whitespace-normalised text of node and its descendants, without the
 * contents of script and style elements, into b (replacing its content). */
void parse_node_text(const xmlNode *node, struct sc_buf *b);

/* Appends s[0..n) to b with runs of whitespace collapsed; *space carries a
 * pending space between calls, so text split over nodes joins correctly. */
void parse_text_add_normalised(struct sc_buf *b, const char *s, size_t n, bool *space);

/* s with runs of whitespace collapsed and none at either end, as a new
 * JSON string (scratch is overwritten). */
json_t *parse_normalised_string(const char *s, struct sc_buf *scratch);

/* True when word is one of the whitespace-separated words of list,
 * compared without case (rel="alternate canonical"). */
bool parse_has_word(const char *list, const char *word);

/* select.c */

/* Compiles src (CSS, or XPath after "xpath:").  Returns 0, or -1 with the
 * 1-based column and a message. */
int parse_selector_compile(const char *src, struct selector *out, size_t *column, char *msg,
                           size_t msgsize);
void parse_selector_free(struct selector *sel);

/* The output value of one node of an XPath result (an element's text or
 * markup, an attribute's value made absolute if it is a URL, ...). */
json_t *parse_match_value(const struct page *page, const xmlNode *node, bool html,
                          struct sc_buf *scratch);

/* Evaluates comp with at as the context node: the first match's value or
 * null, or every match's as an array for a NAME[] field. */
json_t *parse_field_value(const struct page *page, xmlXPathContextPtr ctx, xmlXPathCompExprPtr comp,
                          xmlNodePtr at, const struct field *f, struct sc_buf *scratch);

/* encode.c */

/* Appends rec as json_dumps(rec, SC_JSON_FLAGS) writes it to b.  Returns
 * 0, or -1 (b as it was) past b's maximum. */
int parse_record_encode(struct sc_buf *b, const json_t *rec);

/* resolve.c */

/* Sets the page's base URL (rec's final_url, else its url), replaced by
 * base_href (the first <base href>, or NULL) resolved against it, and the
 * origin that goes with it. */
void parse_page_locate(struct page *page, const json_t *rec, const char *base_href);

/* The absolute form of ref against the page's base URL, or NULL when it
 * cannot be made one.  strip_fragment removes "#...".  Malloced. */
char *parse_page_resolve(const struct page *page, const char *ref, bool strip_fragment);

/* forms.c: the page's forms, each as the record sc-fetch sends for it
 * (url, request.method, enctype for a POST, form), in document order;
 * page_url for a form without an action.  An array (the caller's), empty
 * without a document. */
json_t *parse_page_forms(const struct page *page, const char *page_url);

/* A root-relative reference ("/p/1.html?ref=in") that libcurl would copy
 * as it is after the base's origin: no "//" authority, no dot segment,
 * nothing to percent-encode or decode, no fragment, no empty query (which
 * libcurl drops).  Most links on most sites; the rest go to libcurl. */
bool parse_is_plain_root_relative(const char *ref);

/* url begins with "http://" or "https://" (as libcurl spells them). */
static inline bool parse_has_http_prefix(const char *url)
{
	return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

/* load.c */

/* One per thread: libxml2's parser context is reused between pages. */
struct page_parser;
struct page_parser *parse_page_parser_new(void);
void parse_page_parser_free(struct page_parser *pp);

/* Parses rec's body (body or body_base64) unless rec is "ok": false, and the body is
 * HTML.  Returns 0 (page->doc may still be NULL), or -1 with a reason in
 * why when the record itself is malformed (body_base64 not base64). */
int parse_page_load(struct page_parser *pp, const json_t *rec, struct page *page, char *why,
                    size_t whysize);
void parse_page_free(struct page *page);
/* The node after node in document order (pre-order, without recursion:
 * pages nest deep), never leaving the root element; NULL at the end. */
xmlNode *parse_next_in_order(xmlNode *node);

/* fields.c */

/* Adds the default fields (title, description, canonical, lang, h1,
 * links) to rec; null when the page was not parsed. */
void parse_page_default_fields(const struct page *page, json_t *rec, struct sc_buf *scratch);
extern const char *const default_field_names[];
extern const size_t default_field_count;

/* fields_sax.c */

/* One per thread: the parser context and buffers of parse_page_scan_defaults,
 * reused between pages. */
struct page_scanner;
struct page_scanner *parse_page_scanner_new(void);
void parse_page_scanner_free(struct page_scanner *ps);

/* The default fields, from parse_page_scan_defaults: new references, or all
 * NULL when the page was not parsed.  The links are nlinks strings, each
 * NUL-terminated, one after the other, in a buffer of the page_scanner
 * (valid until its next page); parse_links_json makes them the "links" value. */
struct scan_result {
	bool parsed;
	json_t *title, *description, *canonical, *lang, *h1;
	const char *links;
	size_t nlinks;
};
json_t *parse_links_json(const struct scan_result *r);

/* Parses rec's body as parse_page_load does and gathers the default fields as
 * parse_page_default_fields would give them, without building a tree.  Returns
 * 0, or -1 with a reason in why as parse_page_load does. */
int parse_page_scan_defaults(struct page_scanner *ps, const json_t *rec, struct scan_result *out,
                             struct sc_buf *scratch, char *why, size_t whysize);

/* sitemap.c */

/* The most a gzip-compressed sitemap is inflated to (sitemaps.org's limit
 * on a sitemap's size). */
#define SITEMAP_MAX_BYTES ((size_t)50 * 1024 * 1024)

/* When rec is ok (or has no ok) and its body is a sitemap or a sitemap
 * index, returns "urlset" or "sitemapindex" and sets *links to a new array
 * of its <loc> URLs (absolute http/https, trimmed, deduplicated, in
 * order); *truncated when it was inflated only up to SITEMAP_MAX_BYTES.
 * Otherwise NULL, and the body is left to the HTML path. */
const char *parse_sitemap_links(const json_t *rec, json_t **links, bool *truncated);

/* handle.c */

struct worker {
	const struct config *cfg;
	struct page_parser *pp;       /* parse_page_load's */
	struct page_scanner *scanner; /* parse_page_scan_defaults' */
	xmlXPathCompExprPtr *comps;   /* one per field */
	xmlXPathCompExprPtr each;
	struct sc_buf text;    /* scratch for values */
	struct sc_jsonscan js; /* the fast line decoder's scratch */
};

void parse_worker_init(struct worker *w, const struct config *cfg);
void parse_worker_destroy(struct worker *w);

/* What one input line became. */
struct output {
	struct sc_buf
	        text;   /* the output records, '\n'-separated, no final newline; empty for none */
	char *warning;  /* malloced diagnostic, without the input's name and line
	                  number, or NULL */
	bool bad_input; /* the line was no record: text is its bad_input record */
	size_t not_ok;  /* records this program made not ok */
};

/* Processes one input line (number lineno, too_long as the reader saw it). */
void parse_worker_process(struct worker *w, const char *line, size_t len, size_t lineno,
                          bool too_long, struct output *out);

/* libxml2 reports errors through per-thread handlers: each thread that
 * parses calls this first so nothing reaches stderr. */
void parse_quiet_libxml2(void);

#endif
