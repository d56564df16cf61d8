/* maintext_meta: the title, byline and published date of a page where it
 * says them: its meta (Open Graph, article:, author), its JSON-LD
 * (headline, author, datePublished), rel=author links, byline classes,
 * <time datetime>, and its <title>. */
#include "parse/maintext.h"

#include <string.h>
#include <strings.h>

#include "parse/structured.h"

/* What one walk of the page finds: pointers into the tree, NULL if not. */
struct found {
	const char *og_title, *tw_title, *author, *article_author, *published, *itemprop_date;
	const xmlNode *title, *rel_author, *byline, *time;
};

static bool attr_is(const xmlNode *el, const char *name, const char *value)
{
	const char *v = parse_structured_attr(el, name);

	return v && strcasecmp(v, value) == 0;
}

static void meta(const xmlNode *el, struct found *f)
{
	const char *content = parse_structured_attr(el, "content");

	if (!content || !*content)
		return;
	if (attr_is(el, "property", "og:title") && !f->og_title)
		f->og_title = content;
	else if (attr_is(el, "name", "twitter:title") && !f->tw_title)
		f->tw_title = content;
	else if (attr_is(el, "name", "author") && !f->author)
		f->author = content;
	else if ((attr_is(el, "property", "article:author") ||
	          attr_is(el, "name", "article:author")) &&
	         !f->article_author && !parse_has_http_prefix(content))
		f->article_author = content;
	else if ((attr_is(el, "property", "article:published_time") ||
	          attr_is(el, "name", "article:published_time")) &&
	         !f->published)
		f->published = content;
	else if ((attr_is(el, "itemprop", "datePublished") || attr_is(el, "name", "date") ||
	          attr_is(el, "name", "pubdate") || attr_is(el, "name", "dc.date")) &&
	         !f->itemprop_date)
		f->itemprop_date = content;
}

static void look(const xmlNode *el, struct found *f)
{
	const char *cls = parse_structured_attr(el, "class");
	const char *rel = parse_structured_attr(el, "rel");

	if (parse_maintext_is(el, "meta"))
		meta(el, f);
	else if (parse_maintext_is(el, "title") && !f->title)
		f->title = el;
	else if (parse_maintext_is(el, "time") && !f->time && parse_structured_attr(el, "datetime"))
		f->time = el;
	else if (!f->rel_author && rel && parse_has_word(rel, "author") &&
	         (parse_maintext_is(el, "a") || parse_maintext_is(el, "link")) &&
	         parse_maintext_is(el, "a"))
		f->rel_author = el;
	if (!f->byline && ((cls && strcasestr(cls, "byline")) || attr_is(el, "itemprop", "author")))
		f->byline = el;
}

static json_t *text_of(const xmlNode *el, struct sc_buf *b)
{
	parse_node_text(el, b);
	return b->len > 0 && b->len < 200 ? json_stringn(b->p, b->len) : NULL;
}

static json_t *string_or_null(const char *s, struct sc_buf *b)
{
	return s ? parse_normalised_string(s, b) : json_null();
}

/* A JSON-LD author: "Name", {"name": ...}, or an array of them. */
static const char *author_name(const json_t *a)
{
	if (json_is_array(a))
		a = json_array_get(a, 0);
	if (json_is_object(a))
		a = json_object_get(a, "name");
	return json_string_value(a);
}

/* The first of the JSON-LD objects (and their @graph) with key. */
static const json_t *jsonld_get(const json_t *objects, const char *key)
{
	size_t i;
	const json_t *o;

	json_array_foreach(objects, i, o)
	{
		const json_t *v = json_object_get(o, key);
		if (v)
			return v;
		const json_t *graph = json_object_get(o, "@graph");
		if (json_is_array(graph) && (v = jsonld_get(graph, key)))
			return v;
	}
	return NULL;
}

void parse_maintext_meta(const struct page *page, json_t *out)
{
	struct found f = { 0 };
	struct sc_buf b = { 0 };
	xmlNode *root = page->doc ? xmlDocGetRootElement(page->doc) : NULL;

	for (xmlNode *n = root; n; n = parse_next_in_order(n))
		if (n->type == XML_ELEMENT_NODE)
			look(n, &f);
	json_t *ld = page->doc ? parse_structured_jsonld(page) : json_array();
	const char *headline = json_string_value(jsonld_get(ld, "headline"));
	const char *ld_author = author_name(jsonld_get(ld, "author"));
	const char *ld_date = json_string_value(jsonld_get(ld, "datePublished"));

	const char *title = f.og_title ? f.og_title : f.tw_title ? f.tw_title : headline;
	json_t *t = title ? string_or_null(title, &b) : f.title ? text_of(f.title, &b) : NULL;
	json_object_set_new(out, "title", t ? t : json_null());

	const char *author = f.author ? f.author : f.article_author ? f.article_author : ld_author;
	json_t *by = author         ? string_or_null(author, &b)
	             : f.rel_author ? text_of(f.rel_author, &b)
	             : f.byline     ? text_of(f.byline, &b)
	                            : NULL;
	json_object_set_new(out, "byline", by ? by : json_null());

	const char *date = f.published       ? f.published
	                   : ld_date         ? ld_date
	                   : f.itemprop_date ? f.itemprop_date
	                   : f.time          ? parse_structured_attr(f.time, "datetime")
	                                     : NULL;
	json_object_set_new(out, "published", string_or_null(date, &b));
	json_decref(ld);
	sc_buf_free(&b);
}
