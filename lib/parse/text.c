/* text: the text that sc-parse outputs, with whitespace normalised: an
 * element's text (for selectors and the default fields alike), an
 * attribute's value, a word in a space-separated list. */
#include "parse/parse.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "record/record.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

void parse_text_add_normalised(struct sc_buf *b, const char *s, size_t n, bool *space)
{
	const char *run = s, *end = s + n;

	for (; s < end; s++) {
		if (!is_space(*s))
			continue;
		if (s > run) {
			if (*space && b->len > 0)
				sc_buf_add(b, " ", 1);
			sc_buf_add(b, run, (size_t)(s - run));
			*space = false;
		}
		*space = true;
		run = s + 1;
	}
	if (s > run) {
		if (*space && b->len > 0)
			sc_buf_add(b, " ", 1);
		sc_buf_add(b, run, (size_t)(s - run));
		*space = false;
	}
}

static bool skipped_element(const xmlNode *n)
{
	return n->type == XML_ELEMENT_NODE && (strcmp((const char *)n->name, "script") == 0 ||
	                                       strcmp((const char *)n->name, "style") == 0);
}

void parse_node_text(const xmlNode *node, struct sc_buf *b)
{
	const xmlNode *cur = node;
	bool space = false;

	parse_buf_clear(b);
	/* Pre-order over node's subtree, without recursion (pages can nest
	 * 10,000 deep), skipping scripts and styles inside it. */
	while (cur) {
		if ((cur->type == XML_TEXT_NODE || cur->type == XML_CDATA_SECTION_NODE) &&
		    cur->content)
			parse_text_add_normalised(b, (const char *)cur->content,
			                          strlen((const char *)cur->content), &space);
		if (cur->children &&
		    (cur == node || (cur->type == XML_ELEMENT_NODE && !skipped_element(cur)))) {
			cur = cur->children;
			continue;
		}
		if (cur == node)
			break;
		while (!cur->next) {
			cur = cur->parent;
			if (!cur || cur == node)
				return;
		}
		cur = cur->next;
	}
}

bool parse_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if ((size_t)(p - start) == n && strncasecmp(start, word, n) == 0)
			return true;
	}
	return false;
}

json_t *parse_normalised_string(const char *s, struct sc_buf *scratch)
{
	bool space = false;

	parse_buf_clear(scratch);
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f') {
			space = scratch->len > 0;
			continue;
		}
		if (space)
			sc_buf_add(scratch, " ", 1);
		space = false;
		sc_buf_add(scratch, s, 1);
	}
	return sc_json_string_lossy(scratch->p ? scratch->p : "", scratch->len);
}
