/* structured_jsonld: the JSON-LD of a page, each <script
 * type="application/ld+json"> block's objects, as extruct gives them.
 *
 * A block is read as JSON first.  When it is not JSON it is mended as
 * extruct mends it (a leading "//..." or "<!--...-->" line dropped, then
 * jstyleson's // and slash-star comments and trailing commas removed) and
 * further as real pages need: control characters inside strings escaped
 * (Python's strict=False takes them), a "<!--"/"-->" or CDATA wrapper over
 * several lines dropped, and several values one after the other read each
 * (extruct gives up on such a block).  An array's items are the block's
 * objects, null, false, 0, "", [] and {} left out as extruct leaves them. */
#include "parse/structured.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static bool is_json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Python's truth of a value: extruct keeps only the true ones. */
static bool is_truthy(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return json_object_size(v) > 0;
	case JSON_ARRAY:
		return json_array_size(v) > 0;
	case JSON_STRING:
		return json_string_length(v) > 0;
	case JSON_INTEGER:
		return json_integer_value(v) != 0;
	case JSON_REAL:
		return json_real_value(v) != 0;
	case JSON_TRUE:
		return true;
	default:
		return false;
	}
}

/* A block's value into out: an array's true items, an object itself;
 * anything else (a string, a number) gives none, as in extruct. */
static void add_value(json_t *out, json_t *v)
{
	if (json_is_array(v)) {
		size_t i;
		json_t *item;
		json_array_foreach(v, i, item)
		{
			if (is_truthy(item))
				json_array_append(out, item);
		}
	} else if (json_is_object(v) && json_object_size(v) > 0) {
		json_array_append(out, v);
	}
	json_decref(v);
}

/* The first line when it is a "//" or "<!--...-->" comment, with the
 * whitespace before it: extruct's HTML_OR_JS_COMMENTLINE. */
static size_t leading_comment_line(const char *s)
{
	size_t i = 0, eol;

	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' ||
	       s[i] == '\v')
		i++;
	eol = i + strcspn(s + i, "\n");
	if (strncmp(s + i, "//", 2) == 0)
		return eol;
	if (strncmp(s + i, "<!--", 4) == 0) {
		/* ".*-->": the last "-->" on the line. */
		for (size_t k = eol; k >= i + 7; k--)
			if (strncmp(s + k - 3, "-->", 3) == 0)
				return k;
	}
	return 0;
}

/* Removes the last ',' before b's end, past whitespace (jstyleson's
 * _remove_last_comma). */
static void drop_trailing_comma(struct sc_buf *b)
{
	size_t i = b->len;

	while (i > 0 && is_json_space(b->p[i - 1]))
		i--;
	if (i > 0 && b->p[i - 1] == ',')
		memmove(b->p + i - 1, b->p + i, b->len - i), b->len--;
}

/* s mended into b: comments outside strings dropped, trailing commas
 * dropped, control characters inside strings escaped, and a wrapper of
 * "<!--", "-->", "<![CDATA[" or "]]>" outside strings dropped. */
static void mend(const char *s, struct sc_buf *b)
{
	bool quoted = false;

	parse_buf_clear(b);
	sc_buf_reset(b);
	for (size_t i = 0; s[i];) {
		char c = s[i];
		if (quoted) {
			if (c == '\\' && s[i + 1]) {
				sc_buf_add(b, s + i, 2);
				i += 2;
				continue;
			}
			if (c == '"')
				quoted = false;
			if ((unsigned char)c < 0x20) {
				char esc[8];
				snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)c);
				sc_buf_add(b, esc, 6);
			} else {
				sc_buf_addc(b, c);
			}
			i++;
			continue;
		}
		if (c == '/' && s[i + 1] == '/') {
			i += strcspn(s + i, "\n");
			continue;
		}
		if (c == '/' && s[i + 1] == '*') {
			const char *end = strstr(s + i + 2, "*/");
			i = end ? (size_t)(end - s) + 2 : strlen(s);
			continue;
		}
		static const char *const wrappers[] = { "<!--", "-->", "<![CDATA[", "]]>" };
		size_t w = 0;
		while (w < 4 && strncmp(s + i, wrappers[w], strlen(wrappers[w])) != 0)
			w++;
		if (w < 4) {
			i += strlen(wrappers[w]);
			continue;
		}
		if (c == '}' || c == ']')
			drop_trailing_comma(b);
		if (c == '"')
			quoted = true;
		sc_buf_addc(b, c);
		i++;
	}
	sc_buf_addc(b, '\0');
	b->len--;
}

/* Each value of text, one after the other, into out.  Returns false when
 * the first is not JSON. */
static bool load_values(json_t *out, const char *text, size_t len)
{
	size_t at = 0;
	bool any = false;

	while (at < len) {
		json_error_t e;
		while (at < len && (is_json_space(text[at]) || text[at] == ';' || text[at] == ','))
			at++;
		if (at == len)
			break;
		json_t *v =
		        json_loadb(text + at, len - at,
		                   JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &e);
		if (!v)
			return any;
		add_value(out, v);
		any = true;
		at += (size_t)e.position;
	}
	return any;
}

static void add_block(json_t *out, const char *script, struct sc_buf *b)
{
	json_error_t e;
	json_t *v = json_loads(script, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);

	if (v) {
		add_value(out, v);
		return;
	}
	mend(script + leading_comment_line(script), b);
	if (load_values(out, b->p, b->len))
		return;
	/* "<!-- {...} -->" on one line: extruct drops the line, JSON and all. */
	mend(script, b);
	load_values(out, b->p, b->len);
}

json_t *parse_structured_jsonld(const struct page *page)
{
	json_t *out = json_array();
	struct sc_buf b = { 0 };
	xmlNode *cur = xmlDocGetRootElement(page->doc);

	/* Document order, without recursion (pages nest deep). */
	while (cur) {
		if (cur->type == XML_ELEMENT_NODE &&
		    strcmp((const char *)cur->name, "script") == 0) {
			const char *type = parse_structured_attr(cur, "type");
			if (type && strcmp(type, "application/ld+json") == 0) {
				xmlChar *text = xmlNodeGetContent(cur);
				if (!text)
					sc_die(1, "out of memory");
				add_block(out, (const char *)text, &b);
				xmlFree(text);
			}
		} else if (cur->children && cur->type == XML_ELEMENT_NODE) {
			cur = cur->children;
			continue;
		}
		while (cur && !cur->next)
			cur = cur->parent;
		if (cur)
			cur = cur->next;
	}
	sc_buf_free(&b);
	return out;
}
