/* structured_attr: what every reader of --structured and of --main asks of
 * an element (structured.h): an attribute's value, and a reference made
 * absolute as extruct makes it.  Apart from structured.c, which calls the
 * readers, so that they depend on it and it on them no more. */
#include "parse/structured.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "record/record.h"

const char *parse_structured_attr(const xmlNode *el, const char *name)
{
	for (const xmlAttr *a = el->properties; a; a = a->next)
		if (strcmp((const char *)a->name, name) == 0)
			return a->children && a->children->content
			               ? (const char *)a->children->content
			               : "";
	return NULL;
}

/* HTML's whitespace (w3lib's strip_html5_whitespace). */
static bool is_html_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

json_t *parse_structured_url(const struct page *page, const char *ref)
{
	size_t n;
	const char *colon;
	char *trimmed, *abs;
	json_t *v;

	while (is_html_space(*ref))
		ref++;
	n = strlen(ref);
	while (n > 0 && is_html_space(ref[n - 1]))
		n--;
	trimmed = sc_strndup(ref, n);
	/* A scheme ("https:", "mailto:") is urljoin's sign of an absolute
	 * reference, which it leaves as it is. */
	colon = strchr(trimmed, ':');
	if (colon && colon > trimmed && strcspn(trimmed, "/?#") > (size_t)(colon - trimmed)) {
		v = sc_json_string_lossy(trimmed, n);
		free(trimmed);
		return v;
	}
	abs = page->base ? parse_page_resolve(page, trimmed, false) : NULL;
	v = abs ? sc_json_string_lossy(abs, strlen(abs)) : sc_json_string_lossy(trimmed, n);
	free(abs);
	free(trimmed);
	return v;
}
