/* structured_twitter: a page's Twitter (X) card, the <meta> elements whose
 * name (or property, as many pages write it) begins "twitter:", with
 * their content (or value, the older spelling).  extruct 0.14 has no
 * twitter syntax: the shape is sc's, one object per page holding each
 * name once, in page order, a repeated name as an array of its values
 * ("twitter:image" given twice); no card, no object. */
#include "parse/structured.h"

#include <string.h>

#include "record/record.h"

static void add_meta(json_t *card, const xmlNode *m)
{
	const char *name = parse_structured_attr(m, "name");
	const char *content = parse_structured_attr(m, "content");
	json_t *had, *v;

	if (!name || strncmp(name, "twitter:", 8) != 0)
		name = parse_structured_attr(m, "property");
	if (!name || strncmp(name, "twitter:", 8) != 0 || !name[8])
		return;
	if (!content)
		content = parse_structured_attr(m, "value");
	if (!content)
		return;
	v = sc_json_string_lossy(content, strlen(content));
	had = json_object_get(card, name);
	if (!had) {
		json_object_set_new(card, name, v);
	} else if (json_is_array(had)) {
		json_array_append_new(had, v);
	} else {
		json_t *both = json_array();
		json_array_append(both, had);
		json_array_append_new(both, v);
		json_object_set_new(card, name, both);
	}
}

json_t *parse_structured_twitter(const struct page *page)
{
	json_t *out = json_array(), *card = json_object();
	xmlNode *cur = xmlDocGetRootElement(page->doc);

	while (cur) {
		if (cur->type == XML_ELEMENT_NODE && strcmp((const char *)cur->name, "meta") == 0)
			add_meta(card, cur);
		if (cur->children && cur->type == XML_ELEMENT_NODE) {
			cur = cur->children;
			continue;
		}
		while (cur && !cur->next)
			cur = cur->parent;
		if (cur)
			cur = cur->next;
	}
	if (json_object_size(card) > 0)
		json_array_append_new(out, card);
	else
		json_decref(card);
	return out;
}
