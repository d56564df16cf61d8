/* fields: the default fields (title, description, canonical, lang, h1,
 * links) read from a page's tree.  fields_sax.c gathers the same fields
 * while parsing, without a tree; the two must agree (fuzz-html checks). */
#include "parse/parse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hash.h"
#include "core/util.h"
#include "record/record.h"

const char *const default_field_names[] = { "title", "description", "canonical",
	                                    "lang",  "h1",          "links" };
const size_t default_field_count = sizeof(default_field_names) / sizeof(default_field_names[0]);

/* A set of strings for removing duplicate links: open addressing, grown
 * at half full.  Owns its strings (malloced). */
struct strset {
	const char **slots;
	size_t cap, count;
};

/* Adds s, taking ownership; returns false (and frees s) if it was there
 * already. */
static bool strset_add(struct strset *set, const char *s)
{
	if (set->count * 2 >= set->cap) {
		struct strset bigger = { sc_calloc(set->cap ? set->cap * 2 : 64, sizeof(char *)),
			                 set->cap ? set->cap * 2 : 64, 0 };
		for (size_t i = 0; i < set->cap; i++)
			if (set->slots[i])
				strset_add(&bigger, set->slots[i]); /* never a duplicate */
		free(set->slots);
		*set = bigger;
	}
	for (size_t i = sc_fnv1a_str(s) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i]) {
			set->slots[i] = s;
			set->count++;
			return true;
		}
		if (strcmp(set->slots[i], s) == 0) {
			free((char *)s);
			return false;
		}
	}
}

/* The value of attribute name on node without copying when it is one text
 * node (the usual case); *owned is set when the caller must xmlFree it. */
static const char *attr(const xmlNode *node, const char *name, xmlChar **owned)
{
	*owned = NULL;
	for (const xmlAttr *a = node->properties; a; a = a->next) {
		if (strcmp((const char *)a->name, name) != 0)
			continue;
		if (!a->children)
			return "";
		if (a->children->type == XML_TEXT_NODE && !a->children->next &&
		    a->children->content)
			return (const char *)a->children->content;
		*owned = xmlNodeGetContent((const xmlNode *)a);
		return *owned ? (const char *)*owned : "";
	}
	return NULL;
}

/* The default fields found so far: NULL until found. */
struct found {
	json_t *title, *description, *canonical, *lang, *h1;
	json_t *links;      /* an array, from the start */
	struct strset seen; /* the links' URLs */
};

/* An <a href>: its absolute http(s) URL, unless seen already. */
static void found_link(struct found *f, const struct page *page, const xmlNode *node)
{
	xmlChar *owned;
	const char *v = attr(node, "href", &owned);
	char *abs;

	if (!v)
		return;
	abs = parse_page_resolve(page, v, true);
	if (abs && !parse_has_http_prefix(abs)) {
		free(abs);
		abs = NULL;
	}
	if (abs && strset_add(&f->seen, abs))
		json_array_append_new(f->links, sc_json_string_lossy(abs, strlen(abs)));
	xmlFree(owned);
}

/* A <meta name=description content>. */
static void found_meta(struct found *f, const xmlNode *node, struct sc_buf *scratch)
{
	xmlChar *owned;
	const char *v = attr(node, "name", &owned);
	bool is_description;

	if (!v)
		return;
	is_description = strcasecmp(v, "description") == 0;
	xmlFree(owned);
	if (is_description && (v = attr(node, "content", &owned))) {
		f->description = parse_normalised_string(v, scratch);
		xmlFree(owned);
	}
}

/* A <link rel=canonical href>: its href made absolute (as given when it
 * cannot be). */
static void found_link_element(struct found *f, const struct page *page, const xmlNode *node)
{
	xmlChar *owned;
	const char *v = attr(node, "rel", &owned);
	bool is_canonical;

	if (!v)
		return;
	is_canonical = parse_has_word(v, "canonical");
	xmlFree(owned);
	if (is_canonical && (v = attr(node, "href", &owned))) {
		char *abs = parse_page_resolve(page, v, false);
		f->canonical = abs ? sc_json_string_lossy(abs, strlen(abs))
		                   : sc_json_string_lossy(v, strlen(v));
		free(abs);
		xmlFree(owned);
	}
}

/* What element node adds to the default fields. */
static void found_element(struct found *f, const struct page *page, const xmlNode *node,
                          struct sc_buf *scratch)
{
	const char *name = (const char *)node->name;
	const char *v;
	xmlChar *owned;

	switch (name[0]) {
	case 'a':
		if (name[1] == '\0')
			found_link(f, page, node);
		break;
	case 't':
		if (!f->title && strcmp(name, "title") == 0) {
			parse_node_text(node, scratch);
			f->title = sc_json_string_lossy(scratch->p, scratch->len);
		}
		break;
	case 'h':
		if (!f->h1 && strcmp(name, "h1") == 0) {
			parse_node_text(node, scratch);
			f->h1 = sc_json_string_lossy(scratch->p, scratch->len);
		} else if (!f->lang && strcmp(name, "html") == 0 &&
		           (v = attr(node, "lang", &owned))) {
			f->lang = parse_normalised_string(v, scratch);
			xmlFree(owned);
		}
		break;
	case 'm':
		if (!f->description && strcmp(name, "meta") == 0)
			found_meta(f, node, scratch);
		break;
	case 'l':
		if (!f->canonical && strcmp(name, "link") == 0)
			found_link_element(f, page, node);
		break;
	}
}

static json_t *or_null(json_t *v)
{
	return v ? v : json_null();
}

void parse_page_default_fields(const struct page *page, json_t *rec, struct sc_buf *scratch)
{
	struct found f = { 0 };
	const xmlNode *node;

	if (!page->doc) {
		for (size_t i = 0; i < default_field_count; i++)
			json_object_set_new(rec, default_field_names[i], json_null());
		return;
	}
	f.links = json_array();
	/* One pre-order walk over the whole document, without recursion. */
	node = page->doc->children;
	while (node) {
		if (node->type == XML_ELEMENT_NODE) {
			found_element(&f, page, node, scratch);
			if (node->children) {
				node = node->children;
				continue;
			}
		}
		while (node && !node->next)
			node = node->parent && node->parent != (const xmlNode *)page->doc
			               ? node->parent
			               : NULL;
		if (node)
			node = node->next;
	}
	for (size_t i = 0; i < f.seen.cap; i++)
		free((char *)f.seen.slots[i]);
	free(f.seen.slots);
	json_object_set_new(rec, "title", or_null(f.title));
	json_object_set_new(rec, "description", or_null(f.description));
	json_object_set_new(rec, "canonical", or_null(f.canonical));
	json_object_set_new(rec, "lang", or_null(f.lang));
	json_object_set_new(rec, "h1", or_null(f.h1));
	json_object_set_new(rec, "links", f.links);
}
