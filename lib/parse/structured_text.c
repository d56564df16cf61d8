/* structured_text: an element's text as extruct's microdata reads it: the
 * element cleaned by lxml's Cleaner (scripts, styles, <meta>, <link>,
 * comments and processing instructions gone), then html_text's
 * etree_to_text: each run of text with its whitespace collapsed, a space
 * between runs unless a run begins with punctuation or follows "(", a
 * newline around block elements and a blank line around paragraphs,
 * headings and lists, the whole trimmed.  Whitespace is Python's \s,
 * Unicode's spaces included. */
#include "parse/structured.h"

#include <string.h>

/* html_text's NEWLINE_TAGS and DOUBLE_NEWLINE_TAGS. */
static const char *const newline_tags[] = { "article",    "aside",  "br",   "dd",
	                                    "details",    "div",    "dt",   "fieldset",
	                                    "figcaption", "footer", "form", "header",
	                                    "hr",         "legend", "li",   "main",
	                                    "nav",        "table",  "tr" };
static const char *const double_newline_tags[] = { "blockquote", "dl",  "figure", "h1", "h2",
	                                           "h3",         "h4",  "h5",     "h6", "ol",
	                                           "p",          "pre", "title",  "ul" };

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

/* The length of the whitespace character at s (Python's str \s), or 0. */
static size_t space_at(const unsigned char *s)
{
	if (*s == ' ' || (*s >= '\t' && *s <= '\r') || (*s >= 0x1c && *s <= 0x1f))
		return 1;
	if (s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
		return 2;
	if (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
		return 3; /* U+1680 */
	if (s[0] == 0xe2 && s[1] == 0x80 &&
	    ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
		return 3; /* U+2000-200A, 2028, 2029, 202F */
	if (s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
		return 3; /* U+205F */
	if (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
		return 3; /* U+3000 */
	return 0;
}

enum prev {
	PREV_TEXT,
	PREV_NEWLINE,
	PREV_DOUBLE
};

struct layout {
	struct sc_buf *out;
	struct sc_buf run; /* the raw text of the current run */
	enum prev prev;
	bool prev_space, prev_bracket; /* the last run ended in whitespace, in "(" */
};

static void add_newlines(struct layout *l, const char *tag)
{
	if (l->prev == PREV_DOUBLE)
		return;
	if (in_list(tag, double_newline_tags, sizeof(double_newline_tags) / sizeof(char *))) {
		sc_buf_adds(l->out, l->prev == PREV_NEWLINE ? "\n" : "\n\n");
		l->prev = PREV_DOUBLE;
	} else if (in_list(tag, newline_tags, sizeof(newline_tags) / sizeof(char *))) {
		if (l->prev != PREV_NEWLINE)
			sc_buf_addc(l->out, '\n');
		l->prev = PREV_NEWLINE;
	}
}

/* The run so far, normalised, onto the output (html_text's add_text). */
static void flush_run(struct layout *l)
{
	const unsigned char *s = (const unsigned char *)l->run.p, *end = s + l->run.len;
	bool first = true, pending = false;
	size_t n, last_len = 0;

	if (l->run.len == 0)
		return;
	while (s < end) {
		if ((n = space_at(s)) > 0) {
			pending = !first;
			s += n;
			continue;
		}
		if (first) {
			bool punct = strchr(",:;.!?\")", *s) != NULL;
			if (l->prev == PREV_TEXT && (l->prev_space || !(punct || l->prev_bracket)))
				sc_buf_addc(l->out, ' ');
			first = false;
		} else if (pending) {
			sc_buf_addc(l->out, ' ');
		}
		pending = false;
		sc_buf_addc(l->out, (char)*s++);
	}
	if (!first) {
		l->prev = PREV_TEXT;
		last_len = l->run.len;
		l->prev_bracket = l->run.p[last_len - 1] == '(';
		/* whitespace at the end of the raw run, as \s$ sees it */
		l->prev_space = false;
		for (const unsigned char *p = (const unsigned char *)l->run.p; p < end; p++) {
			size_t k = space_at(p);
			if (k > 0 && p + k == end)
				l->prev_space = true;
		}
	}
	sc_buf_reset(&l->run);
}

/* Cleaner's kill_tags: gone with their content, their tail kept. */
static bool killed(const xmlNode *n)
{
	const char *name = (const char *)n->name;

	return strcmp(name, "script") == 0 || strcmp(name, "style") == 0 ||
	       strcmp(name, "meta") == 0 || strcmp(name, "link") == 0;
}

void parse_structured_text(const xmlNode *node, struct sc_buf *b)
{
	struct layout l = { .out = b, .prev = PREV_DOUBLE };
	const xmlNode *cur = node;
	size_t start, end;

	parse_buf_clear(b);
	sc_buf_init(&l.run, PARSE_BUF_MAX);
	add_newlines(&l, (const char *)node->name);
	/* Pre-order without recursion; an element's start and end flush the
	 * run and lay out its newlines. */
	cur = node->children;
	while (cur) {
		bool down = false;
		if (cur->type == XML_TEXT_NODE || cur->type == XML_CDATA_SECTION_NODE) {
			if (cur->content)
				sc_buf_adds(&l.run, (const char *)cur->content);
		} else if (cur->type == XML_ELEMENT_NODE && !killed(cur)) {
			flush_run(&l);
			add_newlines(&l, (const char *)cur->name);
			down = cur->children != NULL;
			if (!down)
				add_newlines(&l, (const char *)cur->name);
		}
		if (down) {
			cur = cur->children;
			continue;
		}
		while (cur != node && !cur->next) {
			cur = cur->parent;
			if (cur == node)
				break;
			flush_run(&l);
			add_newlines(&l, (const char *)cur->name);
		}
		if (cur == node)
			break;
		cur = cur->next;
	}
	flush_run(&l);
	sc_buf_free(&l.run);
	/* ''.join(chunks).strip() */
	start = 0;
	end = b->len;
	while (start < end && space_at((const unsigned char *)b->p + start))
		start += space_at((const unsigned char *)b->p + start);
	while (end > start) {
		size_t k = 1;
		while (k <= 3 && k <= end - start &&
		       space_at((const unsigned char *)b->p + end - k) != k)
			k++;
		if (k > 3 || k > end - start)
			break;
		end -= k;
	}
	memmove(b->p, b->p + start, end - start);
	b->len = end - start;
	b->p[b->len] = '\0';
}
