/* structured: the kinds of --structured, and the "structured" member of a
 * page made of the readers' arrays (structured.h). */
#include "parse/structured.h"

#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "core/util.h"
#include "record/record.h"

/* In extruct's order of syntaxes (its SYNTAXES), twitter last: extruct 0.14
 * has none. */
static const struct {
	const char *name;
	unsigned bit;
} kinds_table[] = {
	{ "microdata", STRUCTURED_MICRODATA }, { "json-ld", STRUCTURED_JSONLD },
	{ "opengraph", STRUCTURED_OPENGRAPH }, { "rdfa", STRUCTURED_RDFA },
	{ "twitter", STRUCTURED_TWITTER },
};

int parse_structured_kinds(const char *list, unsigned *kinds, char *msg, size_t msgsize)
{
	*kinds = 0;
	for (const char *p = list;;) {
		size_t n = strcspn(p, ",");
		size_t i = 0;
		while (i < sizeof(kinds_table) / sizeof(kinds_table[0]) &&
		       !(strlen(kinds_table[i].name) == n &&
		         strncmp(kinds_table[i].name, p, n) == 0))
			i++;
		if (i == sizeof(kinds_table) / sizeof(kinds_table[0])) {
			snprintf(
			        msg, msgsize,
			        "'%.*s' is not one of json-ld, microdata, rdfa, opengraph, twitter",
			        (int)(n > 64 ? 64 : n), p);
			return -1;
		}
		*kinds |= kinds_table[i].bit;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

json_t *parse_page_structured(const struct page *page, unsigned kinds, struct sc_buf *scratch)
{
	json_t *out;

	if (!page->doc)
		return json_null();
	out = json_object();
	for (size_t i = 0; i < sizeof(kinds_table) / sizeof(kinds_table[0]); i++) {
		unsigned bit = kinds_table[i].bit;
		json_t *v;
		if (!(kinds & bit))
			continue;
		switch (bit) {
		case STRUCTURED_JSONLD:
			v = parse_structured_jsonld(page);
			break;
		case STRUCTURED_MICRODATA:
			v = parse_structured_microdata(page, scratch);
			break;
		case STRUCTURED_RDFA:
			v = parse_structured_rdfa(page);
			break;
		case STRUCTURED_OPENGRAPH:
			v = parse_structured_opengraph(page);
			break;
		default:
			v = parse_structured_twitter(page);
			break;
		}
		json_object_set_new(out, kinds_table[i].name, v);
	}
	return out;
}
