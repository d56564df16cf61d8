/* maintext: the main content of a page chosen as Mozilla's Readability
 * chooses it (sc-parse(1), MAIN TEXT): boilerplate elements left out,
 * paragraphs scored by their text and commas, the score given to their
 * ancestors, each candidate weighted by its class and id hints and by its
 * link density; an <article>, <main> or role=main element is preferred,
 * and the top candidate's siblings that look like content join it. */
#include "parse/maintext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "parse/structured.h"

/* The first letters compared before the whole name: a node is tested
 * against every name of a list, on every walk, and most differ at once. */
bool parse_maintext_is(const xmlNode *el, const char *name)
{
	return el && el->type == XML_ELEMENT_NODE && ((el->name[0] | 32) == (name[0] | 32)) &&
	       strcasecmp((const char *)el->name, name) == 0;
}

static bool name_in(const xmlNode *el, const char *const *names)
{
	for (; *names; names++)
		if (parse_maintext_is(el, *names))
			return true;
	return false;
}

static const char *const never[] = { "script", "style",  "noscript", "template", "svg",
	                             "nav",    "footer", "aside",    "form",     "button",
	                             "select", "input",  "textarea", "iframe",   "object",
	                             "embed",  "dialog", "menu",     "head",     NULL };

static const char *const unlikely_roles[] = { "navigation",    "banner", "contentinfo",
	                                      "complementary", "search", "dialog",
	                                      "alertdialog",   "menu",   "menubar",
	                                      "toolbar",       NULL };

/* Hints in class and id (substrings, without case). */
static const char *const negative[] = {
	"banner", "breadcrumb", "comment",    "community", "disqus",     "footer",    "header",
	"menu",   "related",    "remark",     "replies",   "shoutbox",   "sidebar",   "skyscraper",
	"social", "sponsor",    "popup",      "cookie",    "consent",    "share",     "nav",
	"promo",  "gdpr",       "pagination", "pager",     "newsletter", "subscribe", NULL
};
static const char *const maybe[] = { "and",     "article", "body",   "column",
	                             "content", "main",    "shadow", NULL };
static const char *const positive[] = { "article", "body", "content", "entry", "main",
	                                "post",    "text", "story",   "blog",  NULL };

/* Whether a hint occurs in s, without case.  One pass over s, each
 * position's letter against the hints' first letters: strcasestr for each
 * hint in turn was a fifth of --main's time (its set-up per call). */
static bool has_hint(const char *s, const char *const *hints)
{
	if (!s)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)(*s | 32);
		for (const char *const *h = hints; *h; h++)
			if ((unsigned char)(*h)[0] == c && strncasecmp(s, *h, strlen(*h)) == 0)
				return true;
	}
	return false;
}

/* "ad" and "ads" as a whole word of s (split at anything not a letter). */
static bool has_ad_word(const char *s)
{
	if (!s)
		return false;
	for (const char *p = s; *p;) {
		while (*p && !((*p | 32) >= 'a' && (*p | 32) <= 'z'))
			p++;
		const char *w = p;
		while ((*p | 32) >= 'a' && (*p | 32) <= 'z')
			p++;
		size_t n = (size_t)(p - w);
		if ((n == 2 && strncasecmp(w, "ad", 2) == 0) ||
		    (n == 3 && strncasecmp(w, "ads", 3) == 0) ||
		    (n == 6 && strncasecmp(w, "advert", 6) == 0))
			return true;
	}
	return false;
}

static bool hinted_negative(const char *s)
{
	return s && (has_hint(s, negative) || has_ad_word(s));
}

static bool hidden(const xmlNode *el)
{
	const char *aria = parse_structured_attr(el, "aria-hidden");
	const char *style = parse_structured_attr(el, "style");

	if (parse_structured_attr(el, "hidden") || (aria && strcasecmp(aria, "true") == 0))
		return true;
	return style && (strcasestr(style, "display:none") || strcasestr(style, "display: none") ||
	                 strcasestr(style, "visibility:hidden"));
}

static bool inside_article(const xmlNode *el)
{
	for (const xmlNode *p = el->parent; p && p->type == XML_ELEMENT_NODE; p = p->parent)
		if (parse_maintext_is(p, "article") || parse_maintext_is(p, "main"))
			return true;
	return false;
}

bool parse_maintext_skipped(const xmlNode *el)
{
	if (el->type != XML_ELEMENT_NODE)
		return el->type == XML_COMMENT_NODE || el->type == XML_PI_NODE;
	if (name_in(el, never) || hidden(el))
		return true;
	if (parse_maintext_is(el, "header") && !inside_article(el))
		return true;
	const char *role = parse_structured_attr(el, "role");
	for (size_t i = 0; role && unlikely_roles[i]; i++)
		if (strcasecmp(role, unlikely_roles[i]) == 0)
			return true;
	if (parse_maintext_is(el, "body") || parse_maintext_is(el, "article") ||
	    parse_maintext_is(el, "main") || parse_maintext_is(el, "html"))
		return false;
	const char *cls = parse_structured_attr(el, "class"), *id = parse_structured_attr(el, "id");
	if (!hinted_negative(cls) && !hinted_negative(id))
		return false;
	return !has_hint(cls, maybe) && !has_hint(id, maybe);
}

/* The next node in document order after node's subtree, within top. */
static const xmlNode *next_after(const xmlNode *node, const xmlNode *top)
{
	while (node && node != top && !node->next)
		node = node->parent;
	return node && node != top ? node->next : NULL;
}

/* Whether a walk under top leaves node out: top itself never. */
static bool walk_skips(const xmlNode *node, const xmlNode *top)
{
	return node != top && parse_maintext_skipped(node);
}

/* The next node in document order within top, not entering node when the
 * walk skips it (the caller's walk_skips, asked once per node: the test
 * reads attributes and hint lists, and every candidate walks its subtree). */
static const xmlNode *next_kept(const xmlNode *node, const xmlNode *top, bool skipped)
{
	if (node->children && !skipped)
		return node->children;
	return next_after(node, top);
}

/* The characters of a text node but whitespace. */
static size_t visible_chars(const xmlNode *text)
{
	size_t k = 0;

	for (const char *s = (const char *)text->content; *s; s++)
		k += !(*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r');
	return k;
}

/* The characters of text under el (whitespace not counted), and of those
 * inside links. */
static void text_counts(const xmlNode *el, size_t *all, size_t *linked)
{
	*all = *linked = 0;
	bool skip = false;
	for (const xmlNode *n = el; n; n = next_kept(n, el, skip)) {
		skip = walk_skips(n, el);
		if (skip || n->type != XML_TEXT_NODE || !n->content)
			continue;
		size_t k = visible_chars(n);
		*all += k;
		for (const xmlNode *p = n->parent; p && p != el->parent; p = p->parent)
			if (parse_maintext_is(p, "a")) {
				*linked += k;
				break;
			}
	}
}

static double link_density(const xmlNode *el)
{
	size_t all, linked;

	text_counts(el, &all, &linked);
	return all ? (double)linked / (double)all : 0;
}

static int class_weight(const xmlNode *el)
{
	int w = 0;
	const char *attrs[] = { parse_structured_attr(el, "class"),
		                parse_structured_attr(el, "id") };

	for (size_t i = 0; i < 2; i++) {
		if (!attrs[i] || !*attrs[i])
			continue;
		if (hinted_negative(attrs[i]))
			w -= 25;
		if (has_hint(attrs[i], positive))
			w += 25;
	}
	return w;
}

static double tag_score(const xmlNode *el)
{
	static const char *const minus3[] = { "address", "ol", "ul", "dl", "dd", "dt", "li", NULL };
	static const char *const minus5[] = { "h1", "h2", "h3", "h4", "h5", "h6", "th", NULL };

	if (parse_maintext_is(el, "div"))
		return 5;
	if (parse_maintext_is(el, "pre") || parse_maintext_is(el, "td") ||
	    parse_maintext_is(el, "blockquote"))
		return 3;
	if (name_in(el, minus3))
		return -3;
	return name_in(el, minus5) ? -5 : 0;
}

struct cand {
	const xmlNode *el;
	double score;
	size_t all, linked; /* text_counts of el (count_candidates) */
};

struct scoring {
	struct cand **c; /* each malloced, and el->_private points to it */
	size_t n, cap;
};

static struct cand *candidate(struct scoring *s, xmlNode *el)
{
	if (el->_private)
		return el->_private;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->c = sc_realloc(s->c, s->cap * sizeof(*s->c));
	}
	struct cand *c = sc_malloc(sizeof(*c));
	*c = (struct cand){ el, tag_score(el) + class_weight(el), 0, 0 };
	s->c[s->n++] = c;
	el->_private = c;
	return c;
}

static const char *const blocks[] = { "address", "article", "aside",  "blockquote", "div",
	                              "dl",      "figure",  "footer", "form",       "h1",
	                              "h2",      "h3",      "h4",     "h5",         "h6",
	                              "header",  "hr",      "main",   "ol",         "p",
	                              "pre",     "section", "table",  "ul",         NULL };

/* A paragraph that is scored: p, pre, td, dd, or a div with no block child. */
static bool scored(const xmlNode *el)
{
	static const char *const names[] = { "p", "pre", "td", "dd", NULL };

	if (name_in(el, names))
		return true;
	if (!parse_maintext_is(el, "div"))
		return false;
	for (const xmlNode *c = el->children; c; c = c->next)
		if (name_in(c, blocks))
			return false;
	return true;
}

static void score_paragraph(struct scoring *s, xmlNode *el, struct sc_buf *b)
{
	parse_node_text(el, b);
	if (b->len < 25)
		return;
	size_t hundreds = b->len / 100;
	double score = 1 + (double)(hundreds < 3 ? hundreds : 3);
	for (size_t i = 0; i < b->len; i++)
		score += b->p[i] == ',';
	int level = 0;
	for (xmlNode *a = el->parent; a && a->type == XML_ELEMENT_NODE && level < 5;
	     a = a->parent, level++)
		candidate(s, a)->score += level == 0   ? score
		                          : level == 1 ? score / 2
		                                       : score / (level * 3);
}

static xmlNode *body_of(const struct page *page)
{
	xmlNode *root = xmlDocGetRootElement(page->doc);

	for (xmlNode *c = root ? root->children : NULL; c; c = c->next)
		if (parse_maintext_is(c, "body"))
			return c;
	return root;
}

/* The one <article>, else <main>, else role=main, with text enough. */
static const xmlNode *preferred(const xmlNode *body)
{
	const xmlNode *article = NULL, *main = NULL, *role = NULL;
	size_t articles = 0;

	bool skip = false;
	for (const xmlNode *n = body; n; n = next_kept(n, body, skip)) {
		skip = walk_skips(n, body);
		if (n->type != XML_ELEMENT_NODE || skip)
			continue;
		const char *r = parse_structured_attr(n, "role");
		if (parse_maintext_is(n, "article") && articles++ == 0)
			article = n;
		else if (parse_maintext_is(n, "main") && !main)
			main = n;
		else if (r && strcasecmp(r, "main") == 0 && !role)
			role = n;
	}
	const xmlNode *best = articles == 1 ? article : main ? main : role;
	size_t all, linked;
	if (!best)
		return NULL;
	text_counts(best, &all, &linked);
	return all >= 140 && linked * 2 < all ? best : NULL;
}

static void add_root(struct maintext *mt, const xmlNode *el)
{
	mt->roots = sc_realloc(mt->roots, (mt->nroots + 1) * sizeof(*mt->roots));
	mt->roots[mt->nroots++] = el;
}

/* Readability's siblings that are paragraphs of prose: long with few
 * links, or short without links and with a sentence's end. */
static bool prose(const xmlNode *sib, struct sc_buf *b)
{
	if (!parse_maintext_is(sib, "p"))
		return false;
	parse_node_text(sib, b);
	double ld = link_density(sib);
	return (b->len > 80 && ld < 0.25) || (b->len > 0 && ld == 0 && strstr(b->p, ". "));
}

/* Every candidate's text_counts at once: each text node's characters go
 * up its ancestors to the candidates among them.  A walk per candidate
 * was most of --main's time: the body and its first levels are
 * candidates, so the page's text was counted once for each.  The same
 * counts, since no candidate is a node the walk skips (they are the
 * ancestors of paragraphs a walk that skips them found). */
static void count_candidates(const xmlNode *root)
{
	bool skip = false;

	for (const xmlNode *n = root; n; n = next_kept(n, root, skip)) {
		skip = walk_skips(n, root);
		if (skip || n->type != XML_TEXT_NODE || !n->content)
			continue;
		size_t k = visible_chars(n);
		bool in_link = false;
		for (const xmlNode *p = n->parent; k && p && p->type == XML_ELEMENT_NODE;
		     p = p->parent) {
			in_link = in_link || parse_maintext_is(p, "a");
			struct cand *c = p->_private;
			if (!c)
				continue;
			c->all += k;
			c->linked += in_link ? k : 0;
		}
	}
}

/* The top candidate, and its siblings that score a fifth of it (a bonus
 * for sharing its class) or are prose. */
static void choose_top(struct maintext *mt, struct scoring *s, struct sc_buf *b)
{
	struct cand *top = NULL;

	if (s->n)
		count_candidates(xmlDocGetRootElement(s->c[0]->el->doc));
	for (size_t i = 0; i < s->n; i++) {
		const struct cand *c = s->c[i];
		s->c[i]->score *= 1 - (c->all ? (double)c->linked / (double)c->all : 0);
		if (!top || s->c[i]->score > top->score)
			top = s->c[i];
	}
	if (!top)
		return;
	double threshold = top->score * 0.2 > 10 ? top->score * 0.2 : 10;
	const char *tc = parse_structured_attr(top->el, "class");
	for (const xmlNode *sib = top->el->parent ? top->el->parent->children : top->el; sib;
	     sib = sib->next) {
		if (sib->type != XML_ELEMENT_NODE || parse_maintext_skipped(sib))
			continue;
		const struct cand *c = sib->_private;
		const char *sc = parse_structured_attr(sib, "class");
		double bonus = tc && sc && *tc && strcmp(tc, sc) == 0 ? top->score * 0.2 : 0;
		if (sib == top->el || (c && c->score + bonus >= threshold) || prose(sib, b))
			add_root(mt, sib);
	}
}

bool parse_maintext_choose(const struct page *page, struct maintext *mt)
{
	xmlNode *body = page->doc ? body_of(page) : NULL;
	struct scoring s = { 0 };
	struct sc_buf b = { 0 };

	mt->roots = NULL;
	mt->nroots = 0;
	if (!body)
		return false;
	const xmlNode *pref = preferred(body);
	if (pref) {
		add_root(mt, pref);
		return true;
	}
	bool skip = false;
	for (xmlNode *n = body; n; n = (xmlNode *)next_kept(n, body, skip)) {
		skip = walk_skips(n, body);
		if (n->type == XML_ELEMENT_NODE && !skip && scored(n))
			score_paragraph(&s, n, &b);
	}
	choose_top(mt, &s, &b);
	for (size_t i = 0; i < s.n; i++) {
		((xmlNode *)s.c[i]->el)->_private = NULL;
		free(s.c[i]);
	}
	free(s.c);
	sc_buf_free(&b);
	if (mt->nroots == 0)
		add_root(mt, body);
	return true;
}

void parse_maintext_free(struct maintext *mt)
{
	free(mt->roots);
	mt->roots = NULL;
	mt->nroots = 0;
}
