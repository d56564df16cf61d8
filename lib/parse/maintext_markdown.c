/* maintext_markdown: the chosen content written as Markdown and as text in
 * one walk.  Each line of the text is a line of the Markdown less its
 * syntax (sc-parse(1), MAIN TEXT): "# " of headings, "> " of quotes, list
 * markers and their indent, "*", "**", backticks, link and image syntax,
 * table pipes (cells are tab-separated in the text), backslash escapes;
 * code fences and a table's delimiter row have no text line. */
#include "parse/maintext.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "parse/structured.h"

#define MAX_DEPTH 200

struct writer {
	const struct page *page;
	struct sc_buf *md, *txt;
	struct sc_buf lmd, ltxt; /* the line being written */
	struct sc_buf pend;      /* inline openers not yet followed by text */
	unsigned gen;            /* counts the times pend was written */
	bool space;              /* a space is due before the next text */
	bool md_blank, txt_blank;
	int quote, last_quote;
	char indent[128]; /* continuation indent of list items */
	char marker[160]; /* the next line's prefix after the quotes: "## ", "  - " */
	int inline_depth; /* inside a link or emphasis: blocks do not break */
	int item_depth;
};

static void walk(struct writer *w, const xmlNode *el, int depth);
static void element(struct writer *w, const xmlNode *el, int depth);

static void add(struct sc_buf *b, const char *s, size_t n)
{
	if (sc_buf_add(b, s, n) != 0)
		sc_die(1, "out of memory");
}

static void adds(struct sc_buf *b, const char *s)
{
	add(b, s, strlen(s));
}

/* The line's separator in out: a newline, and a blank line when due. */
static void separate(struct writer *w, struct sc_buf *out, bool blank, bool is_md)
{
	if (out->len == 0)
		return;
	add(out, "\n", 1);
	if (!blank)
		return;
	int q = w->quote < w->last_quote ? w->quote : w->last_quote;
	for (int i = 0; is_md && i < q; i++)
		add(out, ">", 1);
	add(out, "\n", 1);
}

/* A whole line: md after the quotes' "> " and the prefix, txt (or none). */
static void put_line(struct writer *w, const char *md, size_t mdn, const char *txt, size_t tn,
                     bool has_txt)
{
	separate(w, w->md, w->md_blank, true);
	for (int i = 0; i < w->quote; i++)
		add(w->md, "> ", 2);
	adds(w->md, w->marker[0] ? w->marker : w->indent);
	add(w->md, md, mdn);
	w->md_blank = false;
	w->last_quote = w->quote;
	if (has_txt) {
		separate(w, w->txt, w->txt_blank, false);
		add(w->txt, txt, tn);
		w->txt_blank = false;
	}
	w->marker[0] = '\0';
}

static void flush_line(struct writer *w, bool blank_after)
{
	if (w->ltxt.len > 0)
		put_line(w, w->lmd.p, w->lmd.len, w->ltxt.p, w->ltxt.len, true);
	sc_buf_reset(&w->lmd);
	sc_buf_reset(&w->ltxt);
	sc_buf_reset(&w->pend);
	w->space = false;
	if (blank_after)
		w->md_blank = w->txt_blank = true;
}

/* s[0..n) into out with what Markdown would read as syntax escaped;
 * line_start: s begins a line. */
static void escape_into(struct sc_buf *out, const char *s, size_t n, bool line_start)
{
	size_t digits = line_start ? strspn(s, "0123456789") : 0;

	for (size_t i = 0; i < n; i++) {
		if (strchr("\\`*_[]!|<>#~&", s[i]) ||
		    (line_start && i == 0 && strchr("-+=", s[i])) ||
		    (digits > 0 && i == digits && (s[i] == '.' || s[i] == ')')))
			add(out, "\\", 1);
		add(out, s + i, 1);
	}
}

/* Before text: the due space, the pending openers. */
static void before_text(struct writer *w)
{
	if (w->space && w->ltxt.len > 0) {
		add(&w->lmd, " ", 1);
		add(&w->ltxt, " ", 1);
	}
	w->space = false;
	if (w->pend.len) {
		add(&w->lmd, w->pend.p, w->pend.len);
		sc_buf_reset(&w->pend);
		w->gen++;
	}
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static void text(struct writer *w, const char *s)
{
	while (*s) {
		if (is_space(*s)) {
			w->space = true;
			s++;
			continue;
		}
		size_t n = 0;
		while (s[n] && !is_space(s[n]))
			n++;
		before_text(w);
		/* After a heading's "# ", a line's start is no list nor rule. */
		escape_into(&w->lmd, s, n, w->ltxt.len == 0 && !strchr(w->marker, '#'));
		add(&w->ltxt, s, n);
		s += n;
	}
}

/* Text written whole: md as it is, txt its text. */
static void atom(struct writer *w, const char *md, size_t mdn, const char *txt, size_t tn)
{
	before_text(w);
	add(&w->lmd, md, mdn);
	add(&w->ltxt, txt, tn);
}

struct opened {
	unsigned gen;
	size_t at;
};

static struct opened open_inline(struct writer *w, const char *m)
{
	struct opened o = { w->gen, w->pend.len };

	adds(&w->pend, m);
	w->inline_depth++;
	return o;
}

/* Closes with m, or takes the opener back when no text followed it. */
static void close_inline(struct writer *w, struct opened o, const char *m)
{
	w->inline_depth--;
	if (o.gen == w->gen && w->pend.len >= o.at)
		sc_buf_truncate(&w->pend, o.at);
	else
		adds(&w->lmd, m);
}

/* A URL for Markdown: absolute, spaces and parentheses percent-encoded. */
static void url_into(struct sc_buf *b, const char *url)
{
	for (; *url; url++) {
		if (*url == ' ' || *url == '(' || *url == ')' || *url == '<' || *url == '>')
			sc_buf_printf(b, "%%%02X", (unsigned char)*url);
		else
			add(b, url, 1);
	}
}

static void link(struct writer *w, const xmlNode *el, int depth)
{
	const char *href = parse_structured_attr(el, "href");
	char *abs = href && *href && strncasecmp(href, "javascript:", 11) != 0
	                    ? parse_page_resolve(w->page, href, false)
	                    : NULL;
	struct sc_buf close = { 0 };

	if (!abs) {
		walk(w, el, depth);
		return;
	}
	sc_buf_init(&close, PARSE_BUF_MAX);
	adds(&close, "](");
	url_into(&close, abs);
	adds(&close, ")");
	free(abs);
	struct opened o = open_inline(w, "[");
	walk(w, el, depth);
	close_inline(w, o, close.p);
	sc_buf_free(&close);
}

static void emphasis(struct writer *w, const xmlNode *el, int depth, const char *m)
{
	struct opened o = open_inline(w, m);

	walk(w, el, depth);
	close_inline(w, o, m);
}

/* The longest run of backticks in s. */
static size_t backticks(const char *s)
{
	size_t most = 0, run = 0;

	for (; *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		most = run > most ? run : most;
	}
	return most;
}

static void code_span(struct writer *w, const xmlNode *el)
{
	struct sc_buf t = { 0 }, m = { 0 };

	parse_node_text(el, &t);
	if (t.len > 0) {
		size_t n = backticks(t.p) + 1;
		bool pad = t.p[0] == '`' || t.p[t.len - 1] == '`';
		sc_buf_init(&m, PARSE_BUF_MAX);
		for (size_t i = 0; i < n; i++)
			add(&m, "`", 1);
		if (pad)
			add(&m, " ", 1);
		add(&m, t.p, t.len);
		if (pad)
			add(&m, " ", 1);
		for (size_t i = 0; i < n; i++)
			add(&m, "`", 1);
		atom(w, m.p, m.len, t.p, t.len);
	}
	sc_buf_free(&t);
	sc_buf_free(&m);
}

static void image(struct writer *w, const xmlNode *el)
{
	const char *alt = parse_structured_attr(el, "alt");
	const char *src = parse_structured_attr(el, "src");
	struct sc_buf t = { 0 }, m = { 0 };

	if (!src || !*src)
		src = parse_structured_attr(el, "data-src");
	char *abs = alt && src && *src ? parse_page_resolve(w->page, src, false) : NULL;
	json_t *norm = abs ? parse_normalised_string(alt, &t) : NULL;
	const char *a = norm ? json_string_value(norm) : "";
	if (*a) {
		sc_buf_init(&m, PARSE_BUF_MAX);
		adds(&m, "![");
		escape_into(&m, a, strlen(a), false);
		adds(&m, "](");
		url_into(&m, abs);
		adds(&m, ")");
		atom(w, m.p, m.len, a, strlen(a));
	}
	json_decref(norm);
	free(abs);
	sc_buf_free(&t);
	sc_buf_free(&m);
}

static void break_block(struct writer *w)
{
	if (w->inline_depth > 0)
		w->space = true;
	else
		flush_line(w, true);
}

/* A code block's language: language-X or lang-X in the class of the
 * element or its first child, or Sphinx's highlight-X two levels up. */
static void language(const xmlNode *pre, char *out, size_t size)
{
	const xmlNode *at[] = { pre, pre->children, pre->parent,
		                pre->parent ? pre->parent->parent : NULL };
	static const char *const prefixes[] = { "language-", "lang-", "highlight-" };

	out[0] = '\0';
	for (size_t i = 0; i < 4; i++) {
		const char *cls = at[i] && at[i]->type == XML_ELEMENT_NODE
		                          ? parse_structured_attr(at[i], "class")
		                          : NULL;
		for (size_t k = 0; cls && k < (i < 2 ? 2u : 3u); k++) {
			const char *p = strstr(cls, prefixes[k]);
			if (p && (p == cls || is_space(p[-1]))) {
				p += strlen(prefixes[k]);
				size_t n = strcspn(p, " \t\n\r\f");
				snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), p);
				return;
			}
		}
	}
}

static void code_block(struct writer *w, const xmlNode *el)
{
	xmlChar *raw = xmlNodeGetContent(el);
	const char *s = raw ? (const char *)raw : "";
	char lang[64], fence[80];
	size_t n;

	if (*s == '\n')
		s++;
	n = strlen(s);
	while (n > 0 && is_space(s[n - 1]))
		n--;
	flush_line(w, true);
	if (n > 0) {
		size_t ticks = backticks(s) + 1;
		ticks = ticks < 3 ? 3 : ticks > 60 ? 60 : ticks;
		language(el, lang, sizeof(lang));
		snprintf(fence, sizeof(fence), "%.*s%s", (int)ticks,
		         "````````````````````````````````````````````````````````````", lang);
		put_line(w, fence, strlen(fence), NULL, 0, false);
		for (const char *line = s; line < s + n;) {
			const char *end = memchr(line, '\n', (size_t)(s + n - line));
			size_t len = end ? (size_t)(end - line) : (size_t)(s + n - line);
			put_line(w, line, len, line, len, true);
			line += len + 1;
		}
		put_line(w, fence, ticks, NULL, 0, false);
	}
	w->md_blank = w->txt_blank = true;
	xmlFree(raw);
}

static void list(struct writer *w, const xmlNode *el, int depth)
{
	bool ordered = parse_maintext_is(el, "ol");
	const char *start = ordered ? parse_structured_attr(el, "start") : NULL;
	long n = start ? strtol(start, NULL, 10) : 1;
	char saved[sizeof(w->indent)];

	if (w->item_depth > 0)
		flush_line(w, false);
	else
		flush_line(w, true);
	snprintf(saved, sizeof(saved), "%s", w->indent);
	for (const xmlNode *li = el->children; li; li = li->next) {
		if (parse_maintext_is(li, "ul") || parse_maintext_is(li, "ol")) {
			list(w, li, depth + 1);
			continue;
		}
		if (!parse_maintext_is(li, "li") || parse_maintext_skipped(li))
			continue;
		char mark[24] = "- ";
		if (ordered)
			snprintf(mark, sizeof(mark), "%ld. ", n++);
		flush_line(w, false);
		size_t k = strlen(saved), m = strlen(mark);
		if (k + m < sizeof(w->indent)) { /* deeper lists stay at the last indent */
			memcpy(w->marker, saved, k);
			memcpy(w->marker + k, mark, m + 1);
			memset(w->indent + k, ' ', m);
			w->indent[k + m] = '\0';
		} else {
			memcpy(w->marker, saved, k + 1);
		}
		w->item_depth++;
		walk(w, li, depth + 1);
		w->item_depth--;
		flush_line(w, false);
		w->marker[0] = '\0';
	}
	snprintf(w->indent, sizeof(w->indent), "%s", saved);
	flush_line(w, w->item_depth == 0);
}

static const char *const block_names[] = { "p",          "div",     "table",   "ul", "ol", "pre",
	                                   "h1",         "h2",      "h3",      "h4", "h5", "h6",
	                                   "blockquote", "section", "article", "dl", NULL };

static bool has_block(const xmlNode *el)
{
	for (const xmlNode *n = el->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		for (size_t i = 0; block_names[i]; i++)
			if (parse_maintext_is(n, block_names[i]))
				return true;
		if (has_block(n))
			return true;
	}
	return false;
}

/* The rows of a table (in thead, tbody, tfoot or directly). */
static void table_rows(struct writer *w, const xmlNode *parent, size_t *rows, int depth)
{
	for (const xmlNode *r = parent->children; r; r = r->next) {
		if (!parse_maintext_is(r, "tr")) {
			if (parse_maintext_is(r, "thead") || parse_maintext_is(r, "tbody") ||
			    parse_maintext_is(r, "tfoot"))
				table_rows(w, r, rows, depth);
			continue;
		}
		size_t cells = 0;
		w->inline_depth++;
		for (const xmlNode *c = r->children; c; c = c->next) {
			if (!parse_maintext_is(c, "td") && !parse_maintext_is(c, "th"))
				continue;
			if (cells++ > 0) {
				sc_buf_reset(&w->pend);
				w->space = false;
				add(&w->lmd, " | ", 3);
				add(&w->ltxt, "\t", 1);
			}
			walk(w, c, depth + 1);
		}
		w->inline_depth--;
		if (cells == 0)
			continue;
		struct sc_buf line = { 0 };
		sc_buf_init(&line, PARSE_BUF_MAX);
		adds(&line, "| ");
		add(&line, w->lmd.p ? w->lmd.p : "", w->lmd.len);
		adds(&line, " |");
		put_line(w, line.p, line.len, w->ltxt.p ? w->ltxt.p : "", w->ltxt.len, true);
		if ((*rows)++ == 0) {
			sc_buf_reset(&line);
			for (size_t i = 0; i < cells; i++)
				adds(&line, "|---");
			adds(&line, "|");
			put_line(w, line.p, line.len, NULL, 0, false);
		}
		sc_buf_free(&line);
		sc_buf_reset(&w->lmd);
		sc_buf_reset(&w->ltxt);
		sc_buf_reset(&w->pend);
		w->space = false;
	}
}

static void table(struct writer *w, const xmlNode *el, int depth)
{
	size_t rows = 0;

	if (w->inline_depth > 0 || has_block(el)) { /* layout, or inside a cell */
		break_block(w);
		walk(w, el, depth);
		break_block(w);
		return;
	}
	flush_line(w, true);
	table_rows(w, el, &rows, depth);
	w->md_blank = w->txt_blank = true;
}

static void heading(struct writer *w, const xmlNode *el, int depth)
{
	int level = el->name[1] - '0';

	if (w->inline_depth > 0) {
		walk(w, el, depth);
		return;
	}
	flush_line(w, true);
	snprintf(w->marker, sizeof(w->marker), "%s%.*s ", w->indent, level, "######");
	walk(w, el, depth);
	flush_line(w, true);
	w->marker[0] = '\0';
}

static void quote(struct writer *w, const xmlNode *el, int depth)
{
	if (w->inline_depth > 0) {
		walk(w, el, depth);
		return;
	}
	flush_line(w, true);
	w->quote++;
	walk(w, el, depth);
	flush_line(w, true);
	w->quote--;
}

static bool is_heading(const xmlNode *el)
{
	const char *n = (const char *)el->name;

	return (n[0] == 'h' || n[0] == 'H') && n[1] >= '1' && n[1] <= '6' && !n[2];
}

static void element(struct writer *w, const xmlNode *el, int depth)
{
	static const char *const em[] = { "em", "i", "cite", "dfn", NULL };
	static const char *const strong[] = { "strong", "b", NULL };
	static const char *const code[] = { "code", "kbd", "samp", "tt", NULL };
	static const char *const inl[] = { "a",    "span", "em",   "i",     "b",    "strong",
		                           "code", "kbd",  "samp", "tt",    "cite", "dfn",
		                           "sup",  "sub",  "abbr", "q",     "mark", "small",
		                           "u",    "s",    "img",  "label", "time", "var",
		                           "font", "del",  "ins",  "br",    NULL };

	if (parse_maintext_skipped(el))
		return;
	if (depth > MAX_DEPTH) {
		struct sc_buf t = { 0 };
		parse_node_text(el, &t);
		text(w, t.p);
		sc_buf_free(&t);
		return;
	}
	const char *const *which = NULL;
	for (size_t i = 0; em[i] && !which; i++)
		which = parse_maintext_is(el, em[i]) ? em : NULL;
	if (which) {
		emphasis(w, el, depth, "*");
		return;
	}
	for (size_t i = 0; strong[i]; i++)
		if (parse_maintext_is(el, strong[i])) {
			emphasis(w, el, depth, "**");
			return;
		}
	for (size_t i = 0; code[i]; i++)
		if (parse_maintext_is(el, code[i])) {
			code_span(w, el);
			return;
		}
	if (parse_maintext_is(el, "a")) {
		link(w, el, depth);
		return;
	}
	if (parse_maintext_is(el, "img")) {
		image(w, el);
		return;
	}
	if (parse_maintext_is(el, "br")) {
		if (w->inline_depth > 0)
			w->space = true;
		else
			flush_line(w, false);
		return;
	}
	if (is_heading(el)) {
		heading(w, el, depth);
		return;
	}
	if (parse_maintext_is(el, "pre")) {
		if (w->inline_depth > 0)
			walk(w, el, depth);
		else
			code_block(w, el);
		return;
	}
	if (parse_maintext_is(el, "ul") || parse_maintext_is(el, "ol")) {
		if (w->inline_depth > 0)
			walk(w, el, depth);
		else
			list(w, el, depth);
		return;
	}
	if (parse_maintext_is(el, "table")) {
		table(w, el, depth);
		return;
	}
	if (parse_maintext_is(el, "blockquote")) {
		quote(w, el, depth);
		return;
	}
	for (size_t i = 0; inl[i]; i++)
		if (parse_maintext_is(el, inl[i])) {
			walk(w, el, depth);
			return;
		}
	break_block(w); /* p, div, section, dt, dd, li outside a list... */
	walk(w, el, depth);
	break_block(w);
}

static void walk(struct writer *w, const xmlNode *el, int depth)
{
	for (const xmlNode *c = el->children; c; c = c->next) {
		if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content)
			text(w, (const char *)c->content);
		else if (c->type == XML_ELEMENT_NODE)
			element(w, c, depth + 1);
	}
}

void parse_maintext_write(const struct page *page, const struct maintext *mt, struct sc_buf *md,
                          struct sc_buf *txt)
{
	struct writer w = { .page = page, .md = md, .txt = txt };

	sc_buf_init(&w.lmd, PARSE_BUF_MAX);
	sc_buf_init(&w.ltxt, PARSE_BUF_MAX);
	sc_buf_init(&w.pend, PARSE_BUF_MAX);
	sc_buf_reset(md);
	sc_buf_reset(txt);
	for (size_t i = 0; i < mt->nroots; i++)
		element(&w, mt->roots[i], 0);
	flush_line(&w, false);
	add(md, "", 0);
	add(txt, "", 0);
	sc_buf_free(&w.lmd);
	sc_buf_free(&w.ltxt);
	sc_buf_free(&w.pend);
}
