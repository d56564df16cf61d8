/* requisites: a record's requisites (requisites.h): a stylesheet's body
 * read as CSS, an HTML page's tree walked for the elements and attributes
 * that a browser loads to display it. */
#include "parse/requisites.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "core/util.h"
#include "record/record.h"

void requisites_add(struct requisites *r, const char *ref, size_t n)
{
	char *s, *abs;
	size_t i;
	json_t *v;

	if (json_array_size(r->urls) >= REQUISITES_MAX || n == 0)
		return;
	s = sc_strndup(ref, n);
	abs = parse_page_resolve(r->page, s, true);
	free(s);
	if (!abs || !parse_has_http_prefix(abs)) {
		free(abs); /* data:, javascript:, about:, or no URL at all */
		return;
	}
	json_array_foreach(r->urls, i, v)
	{
		if (strcmp(json_string_value(v), abs) == 0) {
			free(abs);
			return;
		}
	}
	json_array_append_new(r->urls, sc_json_string_lossy(abs, strlen(abs)));
	free(abs);
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* The URLs of a srcset ("a.png 1x, b.png 2x"), as the HTML standard splits
 * it: a candidate's URL runs to white space (commas that end it are not
 * its own), its descriptors to the next comma outside parentheses. */
static void add_srcset(struct requisites *r, const char *s)
{
	size_t i = 0, n = strlen(s);

	while (i < n) {
		while (i < n && (is_space((unsigned char)s[i]) || s[i] == ','))
			i++;
		size_t start = i;
		while (i < n && !is_space((unsigned char)s[i]))
			i++;
		size_t end = i;
		bool descriptors = true;
		while (end > start && s[end - 1] == ',') {
			end--;
			descriptors = false; /* "a.png," ends its candidate */
		}
		requisites_add(r, s + start, end - start);
		for (int paren = 0; descriptors && i < n && (s[i] != ',' || paren); i++)
			paren += s[i] == '(' ? 1 : s[i] == ')' && paren ? -1 : 0;
	}
}

/* node's attribute name (xmlFree it), or NULL. */
static xmlChar *prop(const xmlNode *node, const char *name)
{
	return xmlGetProp(node, (const xmlChar *)name);
}

/* An attribute that holds one URL. */
static void add_prop(struct requisites *r, const xmlNode *node, const char *name)
{
	xmlChar *v = prop(node, name);

	if (v)
		requisites_add(r, (const char *)v, strlen((const char *)v));
	xmlFree(v);
}

static void add_prop_srcset(struct requisites *r, const xmlNode *node, const char *name)
{
	xmlChar *v = prop(node, name);

	if (v)
		add_srcset(r, (const char *)v);
	xmlFree(v);
}

/* Whether node's attribute name is one of the words of list, without case. */
static bool prop_is(const xmlNode *node, const char *name, const char *const *list)
{
	xmlChar *v = prop(node, name);
	bool yes = false;

	for (size_t i = 0; v && list[i] && !yes; i++)
		yes = parse_has_word((const char *)v, list[i]);
	xmlFree(v);
	return yes;
}

/* <link>: a stylesheet, an icon, or what a preload fetches for display. */
static void add_link(struct requisites *r, const xmlNode *node)
{
	static const char *const shown[] = { "stylesheet",
		                             "icon",
		                             "apple-touch-icon",
		                             "apple-touch-icon-precomposed",
		                             "mask-icon",
		                             "modulepreload",
		                             NULL };
	static const char *const preload[] = { "preload", NULL };
	static const char *const as[] = { "style", "font", "script", "image", NULL };

	if (prop_is(node, "rel", shown)) {
		add_prop(r, node, "href");
	} else if (prop_is(node, "rel", preload) && prop_is(node, "as", as)) {
		add_prop(r, node, "href");
		add_prop_srcset(r, node, "imagesrcset");
	}
}

/* <input type=image src>. */
static void add_input(struct requisites *r, const xmlNode *node)
{
	static const char *const image[] = { "image", NULL };

	if (prop_is(node, "type", image))
		add_prop(r, node, "src");
}

/* A <style> block's text. */
static void add_style_block(struct requisites *r, xmlNode *node)
{
	xmlChar *css = xmlNodeGetContent(node);

	if (css)
		requisites_add_css(r, (const char *)css, strlen((const char *)css));
	xmlFree(css);
}

static void add_element(struct requisites *r, xmlNode *node)
{
	const char *name = (const char *)node->name;

	if (strcmp(name, "link") == 0) {
		add_link(r, node);
	} else if (strcmp(name, "script") == 0) {
		add_prop(r, node, "src");
	} else if (strcmp(name, "img") == 0) {
		add_prop(r, node, "src");
		add_prop_srcset(r, node, "srcset");
	} else if (strcmp(name, "source") == 0) {
		/* A picture's sources are images; a video's, the media itself,
		 * which a page shows without (its poster stands in). */
		if (node->parent && node->parent->name &&
		    strcmp((const char *)node->parent->name, "picture") == 0)
			add_prop(r, node, "src");
		add_prop_srcset(r, node, "srcset");
	} else if (strcmp(name, "video") == 0) {
		add_prop(r, node, "poster");
	} else if (strcmp(name, "input") == 0) {
		add_input(r, node);
	} else if (strcmp(name, "body") == 0 || strcmp(name, "table") == 0 ||
	           strcmp(name, "td") == 0 || strcmp(name, "th") == 0) {
		add_prop(r, node, "background");
	} else if (strcmp(name, "style") == 0) {
		add_style_block(r, node);
	}
	xmlChar *style = prop(node, "style");
	if (style)
		requisites_add_css(r, (const char *)style, strlen((const char *)style));
	xmlFree(style);
}

/* Every element, in document order (a pre-order walk without recursion:
 * pages can nest deep). */
static void walk(struct requisites *r, xmlDocPtr doc)
{
	xmlNode *node = xmlDocGetRootElement(doc);

	while (node) {
		if (node->type == XML_ELEMENT_NODE && node->name)
			add_element(r, node);
		node = parse_next_in_order(node);
	}
}

/* Whether rec was served as CSS (text/css, any parameters). */
static bool is_stylesheet(const json_t *rec)
{
	const char *ct = parse_record_string(rec, "content_type");

	while (ct && (*ct == ' ' || *ct == '\t'))
		ct++;
	return ct && strncasecmp(ct, "text/css", 8) == 0 &&
	       (ct[8] == '\0' || ct[8] == ';' || ct[8] == ' ' || ct[8] == '\t');
}

/* A stylesheet's requisites, from its body or body_base64 (CSS's syntax is
 * ASCII: its URLs are found whatever the encoding but UTF-16's), resolved
 * against r's page, located here at the stylesheet's URL. */
static int stylesheet_requisites(const json_t *rec, struct requisites *r, struct page *page,
                                 char *why, size_t whysize)
{
	const json_t *body = json_object_get(rec, "body");
	const json_t *body64 = json_object_get(rec, "body_base64");

	parse_page_locate(page, rec, NULL);
	if (json_is_string(body)) {
		requisites_add_css(r, json_string_value(body), json_string_length(body));
	} else if (json_is_string(body64)) {
		size_t n;
		unsigned char *bytes =
		        sc_base64_decode(json_string_value(body64), json_string_length(body64), &n);
		if (!bytes) {
			snprintf(why, whysize, "body_base64 is not base64");
			return -1;
		}
		requisites_add_css(r, (const char *)bytes, n);
		free(bytes);
	}
	return 0;
}

int parse_record_requisites(struct page_parser *pp, const json_t *rec, json_t **out, char *why,
                            size_t whysize)
{
	struct page page = { 0 };
	struct requisites r = { .page = &page, .urls = json_array() };
	int rc;

	*out = NULL;
	if (sc_record_failed(rec)) {
		json_decref(r.urls);
		*out = json_null();
		return 0;
	}
	if (is_stylesheet(rec)) {
		rc = stylesheet_requisites(rec, &r, &page, why, whysize);
	} else if ((rc = parse_page_load(pp, rec, &page, why, whysize)) == 0 && page.doc) {
		walk(&r, page.doc);
	} else {
		json_decref(r.urls);
		r.urls = json_null();
	}
	parse_page_free(&page);
	if (rc != 0) {
		json_decref(r.urls);
		return -1;
	}
	*out = r.urls;
	return 0;
}
