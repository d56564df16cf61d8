/* load: a record's page as a libxml2 tree (parse_page_load), its base URL set
 * from the record and the first <base href>. */
#include "parse/parse.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "parse/body.h"

struct page_parser {
	htmlParserCtxtPtr ctxt; /* owned */
};

struct page_parser *parse_page_parser_new(void)
{
	struct page_parser *pp = sc_calloc(1, sizeof(*pp));

	pp->ctxt = htmlNewParserCtxt();
	if (!pp->ctxt)
		sc_die(1, "out of memory");
	return pp;
}

void parse_page_parser_free(struct page_parser *pp)
{
	if (!pp)
		return;
	htmlFreeParserCtxt(pp->ctxt);
	free(pp);
}

xmlNode *parse_next_in_order(xmlNode *node)
{
	if (node->type == XML_ELEMENT_NODE && node->children)
		return node->children;
	while (node && !node->next)
		node = node->parent && node->parent->type == XML_ELEMENT_NODE ? node->parent : NULL;
	return node ? node->next : NULL;
}

/* The href of the first <base href> (xmlFree it), or NULL. */
static xmlChar *first_base_href(xmlDocPtr doc)
{
	xmlNode *node = xmlDocGetRootElement(doc);

	while (node) {
		if (node->type == XML_ELEMENT_NODE &&
		    strcmp((const char *)node->name, "base") == 0) {
			xmlChar *href = xmlGetProp(node, (const xmlChar *)"href");
			if (href)
				return href;
		}
		node = parse_next_in_order(node);
	}
	return NULL;
}

/* The context, renewed when its dictionary has grown too big. */
static htmlParserCtxtPtr fresh_context(htmlParserCtxtPtr *ctxt)
{
	if (parse_parser_worn(*ctxt)) {
		htmlFreeParserCtxt(*ctxt);
		if (!(*ctxt = htmlNewParserCtxt()))
			sc_die(1, "out of memory");
	}
	return *ctxt;
}

int parse_page_load(struct page_parser *pp, const json_t *rec, struct page *page, char *why,
                    size_t whysize)
{
	struct body b;
	xmlChar *base_href;
	int rc;

	page->doc = NULL;
	page->base = NULL;
	page->origin = NULL;
	if ((rc = parse_body_of(rec, &b, why, whysize)) <= 0)
		return rc;
	page->doc = parse_body_parse(fresh_context(&pp->ctxt), &b);
	parse_body_free(&b);

	base_href = page->doc ? first_base_href(page->doc) : NULL;
	parse_page_locate(page, rec, (const char *)base_href);
	if (base_href)
		xmlFree(base_href);
	return 0;
}

void parse_page_free(struct page *page)
{
	if (page->doc)
		xmlFreeDoc(page->doc);
	curl_url_cleanup(page->base);
	free(page->origin);
	free(page->dir);
	free(page->self);
	page->doc = NULL;
	page->base = NULL;
	page->origin = page->dir = page->self = NULL;
}
