/* structured_microdata: a page's W3C microdata items, as extruct's
 * LxmlMicrodataExtractor gives them (nested, not strict): every itemscope
 * element in page order not already read as another item's property,
 * {"type", "id", "properties"} or {"type", "value"} for an item with no
 * property; a property given once is its value, more often an array.
 * Values follow the microdata spec (meta content, src/href/data made
 * absolute, data and meter value, time datetime), then extruct's
 * additions: a content attribute on any element, else the element's text
 * (structured_text.c).  itemref is followed as extruct follows it, an
 * item read once: the second reading of one is null. */
#include "parse/structured.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "record/record.h"

/* The items read so far: a set of element pointers. */
struct seen {
	const xmlNode **slot;
	size_t cap, n;
};

static size_t slot_of(const struct seen *s, const xmlNode *n)
{
	size_t h = ((size_t)(uintptr_t)n >> 4) * 0x9E3779B97F4A7C15ull;

	for (h &= s->cap - 1; s->slot[h] && s->slot[h] != n; h = (h + 1) & (s->cap - 1))
		;
	return h;
}

/* Adds n; false when it was in the set already. */
static bool seen_add(struct seen *s, const xmlNode *n)
{
	if (2 * (s->n + 1) > s->cap) {
		struct seen bigger = { sc_calloc(s->cap ? 2 * s->cap : 64, sizeof(*s->slot)),
			               s->cap ? 2 * s->cap : 64, 0 };
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				bigger.slot[slot_of(&bigger, s->slot[i])] = s->slot[i], bigger.n++;
		free(s->slot);
		*s = bigger;
	}
	size_t h = slot_of(s, n);
	if (s->slot[h])
		return false;
	s->slot[h] = n;
	s->n++;
	return true;
}

struct reader {
	const struct page *page;
	struct seen seen;
	struct sc_buf *scratch;
};

static bool is_element(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static bool has_attr(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && parse_structured_attr(n, name) != NULL;
}

static json_t *read_item(struct reader *r, const xmlNode *node);

static json_t *attr_string(const xmlNode *n, const char *name)
{
	const char *v = parse_structured_attr(n, name);

	return sc_json_string_lossy(v ? v : "", v ? strlen(v) : 0);
}

static json_t *attr_url(struct reader *r, const xmlNode *n, const char *name)
{
	const char *v = parse_structured_attr(n, name);

	return parse_structured_url(r->page, v ? v : "");
}

/* http://www.w3.org/TR/microdata/#values, as extruct reads them. */
static json_t *property_value(struct reader *r, const xmlNode *n, bool force)
{
	static const char *const src_tags[] = { "audio",  "embed", "iframe", "img",
		                                "source", "track", "video" };
	const char *content;

	if (!force && has_attr(n, "itemscope")) {
		json_t *item = read_item(r, n);
		return item ? item : json_null();
	}
	if (is_element(n, "meta"))
		return attr_string(n, "content");
	for (size_t i = 0; i < sizeof(src_tags) / sizeof(src_tags[0]); i++)
		if (is_element(n, src_tags[i]))
			return attr_url(r, n, "src");
	if (is_element(n, "a") || is_element(n, "area") || is_element(n, "link"))
		return attr_url(r, n, "href");
	if (is_element(n, "object"))
		return attr_url(r, n, "data");
	if (is_element(n, "data") || is_element(n, "meter"))
		return attr_string(n, "value");
	if (is_element(n, "time"))
		return attr_string(n, "datetime");
	if ((content = parse_structured_attr(n, "content")) && *content)
		return sc_json_string_lossy(content, strlen(content));
	parse_structured_text(n, r->scratch);
	return sc_json_string_lossy(r->scratch->p, r->scratch->len);
}

/* Appends value under each of prop's itemprop names. */
static void add_property(struct reader *r, json_t *props, const xmlNode *prop)
{
	const char *names = parse_structured_attr(prop, "itemprop");
	json_t *value = property_value(r, prop, false);

	for (const char *p = names;;) {
		while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
			p++;
		size_t n = strcspn(p, " \t\n\v\f\r");
		if (n == 0)
			break;
		char *name = sc_strndup(p, n);
		json_t *list = json_object_get(props, name);
		if (!list) {
			list = json_array();
			json_object_set_new(props, name, list);
		}
		json_array_append(list, value);
		free(name);
		p += n;
	}
	json_decref(value);
}

/* The itemprop elements under node that belong to it: not inside an
 * itemscope below it (one with itemprop is itself a property). */
static void add_own_properties(struct reader *r, json_t *props, const xmlNode *node)
{
	const xmlNode *cur = node->children;

	while (cur) {
		bool down = false;
		if (cur->type == XML_ELEMENT_NODE) {
			if (has_attr(cur, "itemprop"))
				add_property(r, props, cur);
			down = cur->children && !has_attr(cur, "itemscope");
		}
		if (down) {
			cur = cur->children;
			continue;
		}
		while (cur != node && !cur->next)
			cur = cur->parent;
		if (cur == node)
			break;
		cur = cur->next;
	}
}

/* The nearest itemscope element at or above n (from n's parent when
 * strict), or NULL. */
static const xmlNode *scope_of(const xmlNode *n, bool strict)
{
	for (n = strict ? n->parent : n; n && n->type == XML_ELEMENT_NODE; n = n->parent)
		if (has_attr(n, "itemscope"))
			return n;
	return NULL;
}

/* The element of the page with id id (XPath's id(), the first), or NULL. */
static const xmlNode *element_by_id(const struct page *page, const char *id)
{
	xmlAttrPtr a = xmlGetID(page->doc, (const xmlChar *)id);

	return a && a->parent ? a->parent : NULL;
}

/* extruct's _extract_property_refs. */
static void add_ref_properties(struct reader *r, json_t *props, const char *id)
{
	const xmlNode *ref = element_by_id(r->page, id), *base, *cur;

	if (!ref)
		return;
	if (has_attr(ref, "itemprop") && has_attr(ref, "itemscope")) {
		add_property(r, props, ref);
		return;
	}
	base = scope_of(ref, false);
	for (cur = ref; cur;) {
		if (cur->type == XML_ELEMENT_NODE && has_attr(cur, "itemprop") &&
		    scope_of(cur, true) == base)
			add_property(r, props, cur);
		if (cur->children && cur->type == XML_ELEMENT_NODE) {
			cur = cur->children;
			continue;
		}
		while (cur != ref && !cur->next)
			cur = cur->parent;
		if (cur == ref)
			break;
		cur = cur->next;
	}
}

static json_t *words_value(const char *s)
{
	json_t *words = json_array();

	for (const char *p = s ? s : "";;) {
		while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
			p++;
		size_t n = strcspn(p, " \t\n\v\f\r");
		if (n == 0)
			break;
		json_array_append_new(words, sc_json_string_lossy(p, n));
		p += n;
	}
	return words;
}

static json_t *read_item(struct reader *r, const xmlNode *node)
{
	json_t *item, *types, *props, *refs, *v;
	size_t i;

	if (!seen_add(&r->seen, node))
		return NULL;
	item = json_object();
	types = words_value(parse_structured_attr(node, "itemtype"));
	if (json_array_size(types) > 0) {
		const char *id = parse_structured_attr(node, "itemid");
		json_object_set(item, "type",
		                json_array_size(types) == 1 ? json_array_get(types, 0) : types);
		if (id && *id) {
			/* Python's strip(): the ends only */
			size_t a = strspn(id, " \t\n\v\f\r"), b = strlen(id);
			while (b > a && strchr(" \t\n\v\f\r", id[b - 1]))
				b--;
			json_object_set_new(item, "id", sc_json_string_lossy(id + a, b - a));
		}
	}
	json_decref(types);
	props = json_object();
	add_own_properties(r, props, node);
	refs = words_value(parse_structured_attr(node, "itemref"));
	json_array_foreach(refs, i, v)
	{
		add_ref_properties(r, props, json_string_value(v));
	}
	json_decref(refs);
	if (json_object_size(props) > 0) {
		for (void *it = json_object_iter(props); it;
		     it = json_object_iter_next(props, it)) {
			v = json_object_iter_value(it);
			if (json_array_size(v) == 1)
				json_object_iter_set(props, it, json_array_get(v, 0));
		}
		json_object_set_new(item, "properties", props);
	} else {
		json_decref(props);
		json_object_set_new(item, "value", property_value(r, node, true));
	}
	return item;
}

json_t *parse_structured_microdata(const struct page *page, struct sc_buf *scratch)
{
	struct reader r = { .page = page, .scratch = scratch };
	json_t *out = json_array();
	const xmlNode *cur = xmlDocGetRootElement(page->doc);

	while (cur) {
		if (cur->type == XML_ELEMENT_NODE && has_attr(cur, "itemscope")) {
			json_t *item = read_item(&r, cur);
			if (item)
				json_array_append_new(out, item);
		}
		if (cur->children && cur->type == XML_ELEMENT_NODE) {
			cur = cur->children;
			continue;
		}
		while (cur && !cur->next)
			cur = cur->parent;
		if (cur)
			cur = cur->next;
	}
	free(r.seen.slot);
	return out;
}
