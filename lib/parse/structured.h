/* structured: sc-parse --structured, the structured data of a page in
 * extruct 0.14's shapes, and the -f fields that read it (KIND:PATH).
 *
 *   structured.c            the kinds, the "structured" member of a page
 *   structured_jsonld.c     <script type="application/ld+json"> blocks,
 *                           broken JSON tolerated
 *   structured_microdata.c  W3C microdata items
 *   structured_text.c       an element's text as extruct's microdata gives
 *                           it (html_text's layout of blocks and spaces)
 *   structured_rdfa.c       RDFa 1.1 (Lite and the head's meta) as expanded
 *                           JSON-LD node objects
 *   structured_opengraph.c  the head's og:, article:, product:... meta
 *   structured_twitter.c    the head's twitter: card meta
 *   structured_path.c       a field's KIND:TYPE.key.key path into them
 *
 * Each reader takes the parsed page (parse.h's struct page) and returns a
 * new JSON array, empty when the page has none of its kind. */
#ifndef SC_PARSE_STRUCTURED_H
#define SC_PARSE_STRUCTURED_H

#include "parse/parse.h"

/* The kinds, as bits of struct config's structured and structured_need. */
enum {
	STRUCTURED_JSONLD = 1u << 0,
	STRUCTURED_MICRODATA = 1u << 1,
	STRUCTURED_RDFA = 1u << 2,
	STRUCTURED_OPENGRAPH = 1u << 3,
	STRUCTURED_TWITTER = 1u << 4,
	STRUCTURED_ALL = (1u << 5) - 1,
};

/* "json-ld,opengraph" to a set of kinds.  Returns 0, or -1 with the word
 * that is no kind in msg. */
int parse_structured_kinds(const char *list, unsigned *kinds, char *msg, size_t msgsize);

/* The "structured" member's value: an object with one array per kind in
 * kinds, in extruct's order of syntaxes; null when the page was not
 * parsed.  A new reference. */
json_t *parse_page_structured(const struct page *page, unsigned kinds, struct sc_buf *scratch);

json_t *parse_structured_jsonld(const struct page *page);
json_t *parse_structured_microdata(const struct page *page, struct sc_buf *scratch);
json_t *parse_structured_rdfa(const struct page *page);
json_t *parse_structured_opengraph(const struct page *page);
json_t *parse_structured_twitter(const struct page *page);

/* The text of an element as extruct's microdata gives it (lxml's Cleaner,
 * then html_text's etree_to_text), into b (replacing its content). */
void parse_structured_text(const xmlNode *node, struct sc_buf *b);

/* A reference made absolute as extruct's urljoin does: an absolute one
 * kept as written (less HTML whitespace at its ends), a relative one
 * resolved against the page's base.  A new JSON string. */
json_t *parse_structured_url(const struct page *page, const char *ref);

/* The element's attribute name, or NULL (a pointer into the tree). */
const char *parse_structured_attr(const xmlNode *el, const char *name);

/* A field's path, "jsonld:Product.offers.price": whether spec is one (and
 * then its kind and the path after "KIND:"). */
bool parse_structured_path_kind(const char *spec, unsigned *kind, const char **path);

/* Checks a path.  Returns 0, or -1 with why in msg. */
int parse_structured_path_check(const char *path, char *msg, size_t msgsize);

/* The value a path reads in structured (the "structured" object, which
 * has kind's array): the first match, or every match as an array when
 * many; null for none.  A new reference. */
json_t *parse_structured_path_value(const json_t *structured, unsigned kind, const char *path,
                                    bool many);

#endif
