/* structured_opengraph: the Open Graph protocol's properties of a page,
 * as extruct gives them: for each <head>, the <meta property content>
 * children whose prefix is one of Open Graph's (og, article, product,
 * ...) or declared in a prefix attribute of <html> or <head>, as
 * [property, content] pairs in page order (a repeated property, such as
 * og:image, is a pair each time), with the namespaces in use. */
#include "parse/structured.h"

#include <ctype.h>
#include <string.h>

#include "record/record.h"

static const char *const og_namespaces[][2] = {
	{ "og", "http://ogp.me/ns#" },
	{ "music", "http://ogp.me/ns/music#" },
	{ "video", "http://ogp.me/ns/video#" },
	{ "article", "http://ogp.me/ns/article#" },
	{ "book", "http://ogp.me/ns/book#" },
	{ "profile", "http://ogp.me/ns/profile#" },
	/* not Open Graph's, but on a tenth of product pages */
	{ "product", "http://ogp.me/ns/product#" },
};

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* "og: http://ogp.me/ns# fb: ..." into ns, as extruct's regex
 * \s*(\w+):\s*([^\s]+) finds them. */
static void add_prefixes(json_t *ns, const char *s)
{
	if (!s)
		return;
	while (*s) {
		const char *w = s;
		while (is_word(*w))
			w++;
		if (w == s || *w != ':') {
			s += w == s ? 1 : (size_t)(w - s);
			continue;
		}
		const char *v = w + 1;
		while (is_space(*v))
			v++;
		const char *e = v;
		while (*e && !is_space(*e))
			e++;
		if (e == v) {
			s = v;
			continue;
		}
		char name[128];
		size_t n = (size_t)(w - s) < sizeof(name) - 1 ? (size_t)(w - s) : sizeof(name) - 1;
		memcpy(name, s, n);
		name[n] = '\0';
		json_object_set_new(ns, name, sc_json_string_lossy(v, (size_t)(e - v)));
		s = e;
	}
}

/* The <head> elements of the page, in order, as //head finds them. */
static void add_head(json_t *out, const xmlNode *html, const xmlNode *head)
{
	json_t *ns = json_object(), *props = json_array();

	if (html)
		add_prefixes(ns, parse_structured_attr(html, "prefix"));
	add_prefixes(ns, parse_structured_attr(head, "prefix"));
	for (const xmlNode *m = head->children; m; m = m->next) {
		if (m->type != XML_ELEMENT_NODE || strcmp((const char *)m->name, "meta") != 0)
			continue;
		const char *prop = parse_structured_attr(m, "property");
		const char *content = parse_structured_attr(m, "content");
		if (!prop || !content)
			continue;
		char prefix[128];
		size_t n = strcspn(prop, ":");
		if (n >= sizeof(prefix))
			continue;
		memcpy(prefix, prop, n);
		prefix[n] = '\0';
		for (size_t i = 0; i < sizeof(og_namespaces) / sizeof(og_namespaces[0]); i++)
			if (strcmp(prefix, og_namespaces[i][0]) == 0)
				json_object_set_new(ns, prefix, json_string(og_namespaces[i][1]));
		if (json_object_get(ns, prefix)) {
			json_t *pair = json_array();
			json_array_append_new(pair, sc_json_string_lossy(prop, strlen(prop)));
			json_array_append_new(pair, sc_json_string_lossy(content, strlen(content)));
			json_array_append_new(props, pair);
		}
	}
	if (json_array_size(props) > 0)
		json_array_append_new(out,
		                      json_pack("{s:o,s:o}", "namespace", ns, "properties", props));
	else {
		json_decref(ns);
		json_decref(props);
	}
}

json_t *parse_structured_opengraph(const struct page *page)
{
	json_t *out = json_array();
	const xmlNode *root = xmlDocGetRootElement(page->doc);
	const xmlNode *html = root && strcmp((const char *)root->name, "html") == 0 ? root : NULL;

	/* libxml2 puts the one <head> under <html>. */
	for (const xmlNode *n = root ? root->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, "head") == 0)
			add_head(out, html, n);
	return out;
}
