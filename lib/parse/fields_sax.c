/* fields_sax: the default fields without a tree.
 *
 * For the default fields alone, libxml2's parser calls back for each start
 * tag, end tag and run of text, and no tree is built or freed.  The
 * callbacks see what the tree builder (xmlSAX2*) sees, so they gather what
 * parse_page_default_fields reads from the tree: the first title and h1 and
 * their text (less script and style), the first html lang, meta
 * description, link rel=canonical and base href, and every a href, in
 * document order.  One difference to mind: when a start tag has no '>'
 * libxml2 pops the element without an end callback; the collectors notice
 * from the depth of libxml2's name stack. */
#include "parse/parse.h"

#include <libxml/parserInternals.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hash.h"
#include "core/util.h"
#include "parse/body.h"
#include "record/record.h"

/* What the SAX callbacks gather for the default fields.  A collector
 * follows the text of one element (the first title, the first h1) as
 * parse_node_text would read it from the tree. */
enum collector_state {
	COLLECT_NOT_SEEN,
	COLLECT_OPEN,
	COLLECT_DONE
};

struct collector {
	enum collector_state state;
	int depth;  /* the element's depth in libxml2's name stack */
	int skip;   /* depth of a script or style inside it, or 0 */
	bool space; /* a space is pending */
	struct sc_buf text;
};

struct scan {
	bool started; /* a document was begun: the tree path has a doc */
	struct collector title, h1;
	bool has_lang, has_description, has_canonical, has_base;
	struct sc_buf lang, description, canonical, base; /* raw values */
	struct sc_buf hrefs; /* every <a href>, each NUL-terminated, in order */
	size_t nhrefs;
};

/* The page's distinct links, in order: each NUL-terminated in text, and
 * an open-addressing set of their offsets (plus one; 0 is empty), grown at
 * half full. */
struct linkset {
	struct sc_buf text;
	size_t count;
	size_t *slots;
	size_t cap, used;
};

/* One per thread (struct worker): the parser context and the buffers of
 * the scan, reused from page to page. */
struct page_scanner {
	htmlParserCtxtPtr ctxt; /* owned, or NULL until first used */
	struct scan scan;
	struct linkset links;
};

struct page_scanner *parse_page_scanner_new(void)
{
	struct page_scanner *ps = sc_calloc(1, sizeof(*ps));
	struct sc_buf *bufs[] = { &ps->scan.title.text,  &ps->scan.h1.text,   &ps->scan.lang,
		                  &ps->scan.description, &ps->scan.canonical, &ps->scan.base,
		                  &ps->scan.hrefs,       &ps->links.text };

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		sc_buf_init(bufs[i], PARSE_BUF_MAX);
	return ps;
}

void parse_page_scanner_free(struct page_scanner *ps)
{
	if (!ps)
		return;
	if (ps->ctxt)
		htmlFreeParserCtxt(ps->ctxt);
	sc_buf_free(&ps->scan.title.text);
	sc_buf_free(&ps->scan.h1.text);
	sc_buf_free(&ps->scan.lang);
	sc_buf_free(&ps->scan.description);
	sc_buf_free(&ps->scan.canonical);
	sc_buf_free(&ps->scan.base);
	sc_buf_free(&ps->scan.hrefs);
	sc_buf_free(&ps->links.text);
	free(ps->links.slots);
	free(ps);
}

/* A JSON string of a URL: libcurl's are ASCII, which needs no check. */
static json_t *url_string(const char *url)
{
	size_t n = 0;
	bool ascii = true;

	for (; url[n]; n++)
		if ((unsigned char)url[n] >= 0x80)
			ascii = false;
	return ascii ? json_stringn_nocheck(url, n) : sc_json_string_lossy(url, n);
}

static struct scan *scan_of(void *ctx)
{
	return ((htmlParserCtxtPtr)ctx)->_private;
}

static int depth_of(void *ctx)
{
	return ((htmlParserCtxtPtr)ctx)->nameNr;
}

/* Closes c (or its skipped script) if its element is no longer open at
 * depth; inclusive: the element at depth is ending or being replaced. */
static void collector_sync(struct collector *c, int depth, bool inclusive)
{
	if (c->state != COLLECT_OPEN)
		return;
	if (c->depth > depth || (inclusive && c->depth == depth)) {
		c->state = COLLECT_DONE;
		return;
	}
	if (c->skip && (c->skip > depth || (inclusive && c->skip == depth)))
		c->skip = 0;
}

static void collector_start(struct collector *c, const char *name, const char *want, int depth)
{
	if (c->state == COLLECT_OPEN && !c->skip &&
	    (strcmp(name, "script") == 0 || strcmp(name, "style") == 0))
		c->skip = depth;
	else if (c->state == COLLECT_NOT_SEEN && strcmp(name, want) == 0) {
		c->state = COLLECT_OPEN;
		c->depth = depth;
		c->skip = 0;
		c->space = false;
		parse_buf_clear(&c->text);
	}
}

/* The value of attribute name (the first of that name), "" for one without
 * a value, NULL when absent. */
static const char *sax_attr(const xmlChar **atts, const char *name)
{
	for (size_t i = 0; atts && atts[i]; i += 2)
		if (strcmp((const char *)atts[i], name) == 0)
			return atts[i + 1] ? (const char *)atts[i + 1] : "";
	return NULL;
}

static void keep(struct sc_buf *b, bool *has, const char *v)
{
	parse_buf_clear(b);
	sc_buf_add(b, v, strlen(v));
	*has = true;
}

static void on_start_document(void *ctx)
{
	scan_of(ctx)->started = true;
}

static void on_start_element(void *ctx, const xmlChar *xname, const xmlChar **atts)
{
	struct scan *sc = scan_of(ctx);
	const char *name = (const char *)xname;
	int depth = depth_of(ctx);
	const char *v, *w;
	xmlChar *local = NULL, *prefix = NULL;

	/* The tree names "x:meta" meta (libxml2's SAX2 builder splits every
	 * element name as a QName, HTML too): read it as the tree does, or
	 * the two paths would disagree (found by fuzz-html). */
	if (strchr(name, ':') && (local = xmlSplitQName(ctx, xname, &prefix)))
		name = (const char *)local;

	collector_sync(&sc->title, depth, true);
	collector_sync(&sc->h1, depth, true);
	collector_start(&sc->title, name, "title", depth);
	collector_start(&sc->h1, name, "h1", depth);
	switch (name[0]) {
	case 'a':
		if (name[1] == '\0' && (v = sax_attr(atts, "href"))) {
			sc_buf_add(&sc->hrefs, v, strlen(v) + 1);
			sc->nhrefs++;
		}
		break;
	case 'h':
		if (!sc->has_lang && strcmp(name, "html") == 0 && (v = sax_attr(atts, "lang")))
			keep(&sc->lang, &sc->has_lang, v);
		break;
	case 'm':
		if (!sc->has_description && strcmp(name, "meta") == 0 &&
		    (v = sax_attr(atts, "name")) && strcasecmp(v, "description") == 0 &&
		    (w = sax_attr(atts, "content")))
			keep(&sc->description, &sc->has_description, w);
		break;
	case 'l':
		if (!sc->has_canonical && strcmp(name, "link") == 0 &&
		    (v = sax_attr(atts, "rel")) && parse_has_word(v, "canonical") &&
		    (w = sax_attr(atts, "href")))
			keep(&sc->canonical, &sc->has_canonical, w);
		break;
	case 'b':
		if (!sc->has_base && strcmp(name, "base") == 0 && (v = sax_attr(atts, "href")))
			keep(&sc->base, &sc->has_base, v);
		break;
	}
	xmlFree(local);
	xmlFree(prefix);
}

static void on_end_element(void *ctx, const xmlChar *name)
{
	struct scan *sc = scan_of(ctx);
	int depth = depth_of(ctx);

	(void)name;
	collector_sync(&sc->title, depth, true);
	collector_sync(&sc->h1, depth, true);
}

static void collector_text(struct collector *c, const char *s, size_t n, int depth)
{
	collector_sync(c, depth, false);
	if (c->state == COLLECT_OPEN && !c->skip)
		parse_text_add_normalised(&c->text, s, n, &c->space);
}

static void on_characters(void *ctx, const xmlChar *ch, int len)
{
	struct scan *sc = scan_of(ctx);
	int depth = depth_of(ctx);
	/* A text node's content ends at a NUL, as parse_node_text reads it. */
	size_t n = strnlen((const char *)ch, (size_t)len);

	collector_text(&sc->title, (const char *)ch, n, depth);
	collector_text(&sc->h1, (const char *)ch, n, depth);
}

static void linkset_reset(struct linkset *set)
{
	sc_buf_reset(&set->text);
	set->count = set->used = 0;
	if (set->cap > 4096) { /* after a page of very many links */
		free(set->slots);
		set->slots = NULL;
		set->cap = 0;
	} else if (set->cap) {
		memset(set->slots, 0, set->cap * sizeof(*set->slots));
	}
}

/* Finds the slot of the string at offset off (length n), or its empty
 * slot. */
static size_t *linkset_slot(const struct linkset *set, size_t off, size_t n)
{
	const char *s = set->text.p + off;

	for (size_t i = sc_fnv1a(s, n) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		size_t *slot = &set->slots[i];
		if (!*slot || strcmp(set->text.p + *slot - 1, s) == 0)
			return slot;
	}
}

/* Keeps the last string of set->text (from off) unless it is there
 * already. */
static void linkset_keep(struct linkset *set, size_t off)
{
	size_t n = set->text.len - off - 1, *slot;

	if (set->used * 2 >= set->cap) {
		size_t *old = set->slots, oldcap = set->cap;
		set->cap = oldcap ? oldcap * 2 : 256;
		set->slots = sc_calloc(set->cap, sizeof(*set->slots));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i]) {
				const char *k = set->text.p + old[i] - 1;
				*linkset_slot(set, old[i] - 1, strlen(k)) = old[i];
			}
		free(old);
	}
	slot = linkset_slot(set, off, n);
	if (*slot) {
		sc_buf_truncate(&set->text, off); /* a duplicate */
		return;
	}
	*slot = off + 1;
	set->used++;
	set->count++;
}

/* Adds the absolute form of href, if it is an http(s) URL not there yet;
 * as parse_page_default_fields does. */
static void link_add(struct linkset *set, const struct page *page, const char *href)
{
	size_t off = set->text.len;
	char *abs;

	if (page->origin && parse_is_plain_root_relative(href)) {
		/* parse_page_resolve's fast path, without its copy. */
		sc_buf_add(&set->text, page->origin, strlen(page->origin));
		sc_buf_add(&set->text, href, strlen(href) + 1);
	} else if ((abs = parse_page_resolve(page, href, true))) {
		if (parse_has_http_prefix(abs))
			sc_buf_add(&set->text, abs, strlen(abs) + 1);
		free(abs);
	}
	if (set->text.len > off)
		linkset_keep(set, off);
}

static htmlParserCtxtPtr scan_context(struct page_scanner *ps)
{
	xmlSAXHandler *sax;

	if (ps->ctxt && !parse_parser_worn(ps->ctxt))
		return ps->ctxt;
	if (ps->ctxt)
		htmlFreeParserCtxt(ps->ctxt);
	if (!(ps->ctxt = htmlNewParserCtxt()))
		sc_die(1, "out of memory");
	/* The context's own copy of the default (tree-building) handler:
	 * keep its error handling, replace what builds nodes. */
	sax = ps->ctxt->sax;
	sax->internalSubset = NULL;
	sax->externalSubset = NULL;
	sax->setDocumentLocator = NULL;
	sax->startDocument = on_start_document;
	sax->endDocument = NULL;
	sax->startElement = on_start_element;
	sax->endElement = on_end_element;
	sax->reference = NULL;
	sax->characters = on_characters;
	sax->cdataBlock = on_characters;
	sax->ignorableWhitespace = NULL; /* xmlSAX2IgnorableWhitespace does nothing */
	sax->processingInstruction = NULL;
	sax->comment = NULL;
	ps->ctxt->_private = &ps->scan;
	return ps->ctxt;
}

static void scan_reset(struct scan *sc)
{
	sc->started = false;
	sc->title.state = sc->h1.state = COLLECT_NOT_SEEN;
	sc->has_lang = sc->has_description = sc->has_canonical = sc->has_base = false;
	sc_buf_reset(&sc->hrefs);
	sc->nhrefs = 0;
}

static json_t *collected(const struct collector *c)
{
	if (c->state == COLLECT_NOT_SEEN)
		return json_null();
	return sc_json_string_lossy(c->text.p, c->text.len);
}

json_t *parse_links_json(const struct scan_result *r)
{
	json_t *links = json_array();
	const char *s = r->links;

	for (size_t i = 0; i < r->nlinks; i++) {
		json_array_append_new(links, url_string(s));
		s += strlen(s) + 1;
	}
	return links;
}

int parse_page_scan_defaults(struct page_scanner *ps, const json_t *rec, struct scan_result *out,
                             struct sc_buf *scratch, char *why, size_t whysize)
{
	struct scan *sc = &ps->scan;
	struct page page = { 0 };
	struct body b;
	htmlDocPtr doc;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = parse_body_of(rec, &b, why, whysize)) <= 0)
		return rc;
	scan_reset(sc);
	doc = parse_body_parse(scan_context(ps), &b);
	if (doc) /* not with these callbacks; to be sure */
		xmlFreeDoc(doc);
	parse_body_free(&b);
	if (!sc->started)
		return 0;

	parse_page_locate(&page, rec, sc->has_base ? sc->base.p : NULL);

	out->parsed = true;
	out->title = collected(&sc->title);
	out->description = sc->has_description ? parse_normalised_string(sc->description.p, scratch)
	                                       : json_null();
	if (sc->has_canonical) {
		char *abs = parse_page_resolve(&page, sc->canonical.p, false);
		out->canonical = abs ? sc_json_string_lossy(abs, strlen(abs))
		                     : sc_json_string_lossy(sc->canonical.p, sc->canonical.len);
		free(abs);
	} else {
		out->canonical = json_null();
	}
	out->lang = sc->has_lang ? parse_normalised_string(sc->lang.p, scratch) : json_null();
	out->h1 = collected(&sc->h1);
	linkset_reset(&ps->links);
	for (size_t i = 0, off = 0; i < sc->nhrefs; i++) {
		const char *href = sc->hrefs.p + off;
		off += strlen(href) + 1;
		link_add(&ps->links, &page, href);
	}
	out->links = ps->links.text.p;
	out->nlinks = ps->links.count;
	parse_page_free(&page);
	return 0;
}
