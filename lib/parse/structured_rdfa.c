/* structured_rdfa: a page's RDFa as extruct gives it, which is pyRdfa's
 * RDFa Core 1.1 processing of the page as generic XML (its host language
 * when handed a DOM), serialised by rdflib as expanded JSON-LD: one node
 * object per subject, {"@id", "@type": [...], property IRI: [{"@value"}
 * or {"@id"}]}.
 *
 * What that processing is, and so what this file does: @vocab, @prefix,
 * xmlns:, the initial context's prefixes (and extruct's og, twitter, fb,
 * ...) and terms (license, describedby, role); @about, @resource, @href,
 * @src, @typeof, @property, @content, @datatype, @rel and @rev with their
 * incomplete triples; @role as xhv:role; xml:lang (not lang); the
 * document's <meta property> in the head, which are RDFa too.  Not done:
 * @inlist, rdf:XMLLiteral values (given as their text), xml:base.
 * A literal is its element's text as written, not normalised. */
#include "parse/structured.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "record/record.h"

#define XHV "http://www.w3.org/1999/xhtml/vocab#"
#define XSD_STRING "http://www.w3.org/2001/XMLSchema#string"
#define RDF_TYPE "@type"
/* Deeper than this, elements are not read (the recursion's bound). */
#define MAX_DEPTH 2048

/* pyRdfa's initial context, with extruct's additions. */
static const char *const initial_prefixes[][2] = {
	{ "as", "https://www.w3.org/ns/activitystreams#" },
	{ "csvw", "http://www.w3.org/ns/csvw#" },
	{ "dcat", "http://www.w3.org/ns/dcat#" },
	{ "dqv", "http://www.w3.org/ns/dqv#" },
	{ "duv", "https://www.w3.org/ns/duv#" },
	{ "qb", "http://purl.org/linked-data/cube#" },
	{ "org", "http://www.w3.org/ns/org#" },
	{ "owl", "http://www.w3.org/2002/07/owl#" },
	{ "gr", "http://purl.org/goodrelations/v1#" },
	{ "ctag", "http://commontag.org/ns#" },
	{ "cc", "http://creativecommons.org/ns#" },
	{ "grddl", "http://www.w3.org/2003/g/data-view#" },
	{ "jsonld", "http://www.w3.org/ns/json-ld#" },
	{ "ldp", "http://www.w3.org/ns/ldp#" },
	{ "oa", "http://www.w3.org/ns/oa#" },
	{ "rif", "http://www.w3.org/2007/rif#" },
	{ "sioc", "http://rdfs.org/sioc/ns#" },
	{ "skos", "http://www.w3.org/2004/02/skos/core#" },
	{ "xml", "http://www.w3.org/XML/1998/namespace" },
	{ "rr", "http://www.w3.org/ns/r2rml#" },
	{ "rdfs", "http://www.w3.org/2000/01/rdf-schema#" },
	{ "rev", "http://purl.org/stuff/rev#" },
	{ "rdfa", "http://www.w3.org/ns/rdfa#" },
	{ "dc", "http://purl.org/dc/terms/" },
	{ "dcterms", "http://purl.org/dc/terms/" },
	{ "dc11", "http://purl.org/dc/elements/1.1/" },
	{ "foaf", "http://xmlns.com/foaf/0.1/" },
	{ "void", "http://rdfs.org/ns/void#" },
	{ "ical", "http://www.w3.org/2002/12/cal/icaltzd#" },
	{ "vcard", "http://www.w3.org/2006/vcard/ns#" },
	{ "wdrs", "http://www.w3.org/2007/05/powder-s#" },
	{ "og", "http://ogp.me/ns#" },
	{ "wdr", "http://www.w3.org/2007/05/powder#" },
	{ "rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#" },
	{ "xhv", XHV },
	{ "xsd", "http://www.w3.org/2001/XMLSchema#" },
	{ "v", "http://rdf.data-vocabulary.org/#" },
	{ "skosxl", "http://www.w3.org/2008/05/skos-xl#" },
	{ "schema", "http://schema.org/" },
	{ "ssn", "http://www.w3.org/ns/ssn/" },
	{ "sosa", "http://www.w3.org/ns/sosa/" },
	{ "time", "http://www.w3.org/2006/time#" },
	{ "ma", "http://www.w3.org/ns/ma-ont#" },
	{ "sd", "http://www.w3.org/ns/sparql-service-description#" },
	{ "prov", "http://www.w3.org/ns/prov#" },
	{ "odrl", "http://www.w3.org/ns/odrl/2/" },
	/* extruct's */
	{ "twitter", "https://dev.twitter.com/cards#" },
	{ "fb", "http://ogp.me/ns/fb#" },
	{ "music", "http://ogp.me/ns/music#" },
	{ "video", "http://ogp.me/ns/video#" },
	{ "article", "http://ogp.me/ns/article#" },
	{ "book", "http://ogp.me/ns/book#" },
	{ "profile", "http://ogp.me/ns/profile#" },
};

static const char *const initial_terms[][2] = {
	{ "describedby", "http://www.w3.org/2007/05/powder-s#describedby" },
	{ "role", XHV "role" },
	{ "license", XHV "license" },
};

/* The whole page's: the graph and the names of blank nodes. */
struct rdfa {
	const struct page *page;
	const char *base;
	json_t *nodes;  /* subject -> node object, in order of first triple */
	json_t *labels; /* "_:x" as written -> its blank node */
	unsigned blanks;
};

/* What an element inherits (pyRdfa's ExecutionContext). */
/* The attributes RDFa reads, as bits of struct state's attrs: which of
 * them an element has, found in one pass over its attributes (enter), so
 * that the many "has it @rel?" of parse_element are a mask each, and an
 * element with none of them costs that one pass. */
enum {
	RDFA_ABOUT = 1 << 0,
	RDFA_CONTENT = 1 << 1,
	RDFA_DATATYPE = 1 << 2,
	RDFA_HREF = 1 << 3,
	RDFA_PREFIX = 1 << 4,
	RDFA_PROPERTY = 1 << 5,
	RDFA_REL = 1 << 6,
	RDFA_RESOURCE = 1 << 7,
	RDFA_REV = 1 << 8,
	RDFA_ROLE = 1 << 9,
	RDFA_SRC = 1 << 10,
	RDFA_TYPEOF = 1 << 11,
	RDFA_VOCAB = 1 << 12,
	RDFA_XML_LANG = 1 << 13,
	RDFA_XMLNS = 1 << 14, /* any xmlns:NAME */
};

struct state {
	const xmlNode *node;
	unsigned attrs;    /* the RDFA_* it has */
	const char *vocab; /* borrowed from the tree or the parent, or NULL */
	const char *lang;  /* likewise */
	json_t *prefixes;  /* borrowed from the parent, or owned when own_prefixes */
	bool own_prefixes;
};

/* A triple waiting for its subject or object (NULL) from below. */
struct pending {
	char *s, *p, *o;
};

struct pendings {
	struct pending *v;
	size_t n;
};

static char *strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		sc_die(1, "out of memory");
	va_end(ap);
	return s;
}

static char *new_blank(struct rdfa *r)
{
	char id[32];

	snprintf(id, sizeof(id), "_:sc%u", r->blanks++);
	return sc_strdup(id);
}

static bool is_blank(const char *iri)
{
	return strncmp(iri, "_:", 2) == 0;
}

static void add_triple(struct rdfa *r, const char *s, const char *p, json_t *o)
{
	json_t *node = json_object_get(r->nodes, s), *list;
	size_t i;
	json_t *v;

	if (!node) {
		node = json_pack("{s:s}", "@id", s);
		if (!node) /* not UTF-8 */
			node = json_pack("{s:o}", "@id", sc_json_string_lossy(s, strlen(s)));
		json_object_set_new(r->nodes, s, node);
	}
	if (!(list = json_object_get(node, p))) {
		list = json_array();
		json_object_set_new(node, p, list);
	}
	json_array_foreach(list, i, v)
	{
		if (json_equal(v, o)) {
			json_decref(o);
			return;
		}
	}
	json_array_append_new(list, o);
}

static json_t *iri_value(const char *iri)
{
	return json_pack("{s:o}", "@id", sc_json_string_lossy(iri, strlen(iri)));
}

static void add_iri_triple(struct rdfa *r, const char *s, const char *p, const char *o)
{
	if (strcmp(p, RDF_TYPE) == 0)
		add_triple(r, s, p, sc_json_string_lossy(o, strlen(o)));
	else
		add_triple(r, s, p, iri_value(o));
}

static const char *attr(const struct state *st, const char *name)
{
	return parse_structured_attr(st->node, name);
}

static bool has(const struct state *st, unsigned bit)
{
	return (st->attrs & bit) != 0;
}

/* The RDFA_* bit of an attribute name, or 0. */
static unsigned attr_bit(const char *name)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
		{ "about", RDFA_ABOUT },       { "content", RDFA_CONTENT },
		{ "datatype", RDFA_DATATYPE }, { "href", RDFA_HREF },
		{ "prefix", RDFA_PREFIX },     { "property", RDFA_PROPERTY },
		{ "rel", RDFA_REL },           { "resource", RDFA_RESOURCE },
		{ "rev", RDFA_REV },           { "role", RDFA_ROLE },
		{ "src", RDFA_SRC },           { "typeof", RDFA_TYPEOF },
		{ "vocab", RDFA_VOCAB },       { "xml:lang", RDFA_XML_LANG },
	};

	if (strncmp(name, "xmlns:", 6) == 0)
		return name[6] ? RDFA_XMLNS : 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].name[0] == name[0] && strcmp(names[i].name, name) == 0)
			return names[i].bit;
	return 0;
}

/* A URI reference resolved against the base (pyRdfa's _URI). */
static char *resolve(struct rdfa *r, const char *ref)
{
	json_t *v = parse_structured_url(r->page, ref);
	char *s = sc_strdup(json_string_value(v));

	json_decref(v);
	return s;
}

static bool is_ncname(const char *s, size_t n)
{
	if (n == 0 || !(((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z') || s[0] == '_' ||
	                (unsigned char)s[0] >= 0x80))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-' || s[i] == '.' || (unsigned char)s[i] >= 0x80))
			return false;
	return true;
}

/* A CURIE's IRI (pyRdfa's CURIE_to_URI), or NULL. */
static char *curie(struct rdfa *r, const struct state *st, const char *v, size_t n)
{
	const char *colon = memchr(v, ':', n);
	char prefix[128];
	size_t plen;
	const json_t *ns;

	if (!colon)
		return NULL;
	plen = (size_t)(colon - v);
	if (plen == 0)
		return strdup_printf(XHV "%.*s", (int)(n - 1), colon + 1);
	if (plen >= sizeof(prefix))
		return NULL;
	for (size_t i = 0; i < plen; i++)
		prefix[i] = (char)((v[i] >= 'A' && v[i] <= 'Z') ? v[i] + 32 : v[i]);
	prefix[plen] = '\0';
	if (strcmp(prefix, "_") == 0) {
		char *label = sc_strndup(v, n);
		json_t *b = json_object_get(r->labels, label);
		char *id;
		if (!b) {
			id = new_blank(r);
			json_object_set_new(r->labels, label, json_string(id));
		} else {
			id = sc_strdup(json_string_value(b));
		}
		free(label);
		return id;
	}
	if (!is_ncname(prefix, plen) || strncmp(colon + 1, "//", 2) == 0)
		return NULL;
	if (!(ns = json_object_get(st->prefixes, prefix)))
		return NULL;
	return strdup_printf("%s%.*s", json_string_value(ns), (int)(n - plen - 1), colon + 1);
}

/* One word of @property, @typeof, @rel, @rev, @datatype or @role
 * (_TERMorCURIEorAbsURI), or NULL. */
static char *term_curie_or_iri(struct rdfa *r, const struct state *st, const char *v, size_t n)
{
	char *iri;

	if (!memchr(v, ':', n)) {
		if (!is_ncname(v, n) && !memchr(v, '/', n))
			return NULL;
		if (st->vocab)
			return strdup_printf("%s%.*s", st->vocab, (int)n, v);
		for (size_t i = 0; i < sizeof(initial_terms) / sizeof(initial_terms[0]); i++)
			if (strlen(initial_terms[i][0]) == n &&
			    strncasecmp(initial_terms[i][0], v, n) == 0)
				return sc_strdup(initial_terms[i][1]);
		return NULL;
	}
	if ((iri = curie(r, st, v, n)))
		return iri;
	return sc_strndup(v, n);
}

/* @about or @resource (_CURIEorURI): a safe CURIE, a CURIE, or a URI. */
static char *curie_or_uri(struct rdfa *r, const struct state *st, const char *v)
{
	size_t n = strlen(v);
	char *iri;

	if (n >= 2 && v[0] == '[' && v[n - 1] == ']')
		return curie(r, st, v + 1, n - 2);
	if ((iri = curie(r, st, v, n)))
		return iri;
	return resolve(r, v);
}

/* The resource of the first of names present (getResource), or NULL. */
static char *resource_of(struct rdfa *r, const struct state *st, const char *const *names)
{
	for (; *names; names++) {
		const char *v = attr(st, *names);
		if (!v)
			continue;
		char *iri = strcmp(*names, "href") == 0 || strcmp(*names, "src") == 0
		                    ? resolve(r, v)
		                    : curie_or_uri(r, st, v);
		if (iri)
			return iri;
	}
	return NULL;
}

/* The next word of *rest that makes an IRI, malloced (the caller frees),
 * *rest moved past it; NULL when no word is left.  A loop over an
 * attribute's IRIs:
 *     for (const char *w = words(st, "rel"); (p = next_iri(r, st, &w)); free(p))
 */
static char *next_iri(struct rdfa *r, const struct state *st, const char **rest)
{
	while (**rest) {
		const char *word = *rest;
		size_t n = strcspn(word, " \t\n\r\f");
		*rest += n ? n : 1;
		char *iri = n ? term_curie_or_iri(r, st, word, n) : NULL;
		if (iri)
			return iri;
	}
	return NULL;
}

/* An attribute's words, "" where it is absent. */
static const char *words(const struct state *st, const char *name)
{
	const char *v = attr(st, name);
	return v ? v : "";
}

/* The text of an element as pyRdfa takes it: every text below, as is. */
static void element_text(const xmlNode *node, struct sc_buf *b)
{
	const xmlNode *cur = node->children;

	while (cur) {
		/* libxml2 makes a script's or style's text a CDATA node */
		if ((cur->type == XML_TEXT_NODE || cur->type == XML_CDATA_SECTION_NODE) &&
		    cur->content)
			sc_buf_adds(b, (const char *)cur->content);
		if (cur->type == XML_ELEMENT_NODE && cur->children) {
			cur = cur->children;
			continue;
		}
		while (cur != node && !cur->next)
			cur = cur->parent;
		if (cur == node)
			break;
		cur = cur->next;
	}
}

static json_t *literal(const char *text, size_t n, const char *lang, const char *datatype)
{
	json_t *v = json_pack("{s:o}", "@value", sc_json_string_lossy(text, n));

	if (datatype && *datatype) {
		if (strcmp(datatype, XSD_STRING) != 0)
			json_object_set_new(v, "@type",
			                    sc_json_string_lossy(datatype, strlen(datatype)));
	} else if (lang && *lang) {
		char *lower = sc_strdup(lang);
		for (char *c = lower; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c + 32);
		json_object_set_new(v, "@language", sc_json_string_lossy(lower, strlen(lower)));
		free(lower);
	}
	return v;
}

/* @property's object (pyRdfa's ProcessProperty.generate_1_1) for subject. */
static void add_property(struct rdfa *r, const struct state *st, const char *subject,
                         const char *typed)
{
	static const char *const irirefs[] = { "resource", "href", "src", NULL };
	json_t *object;

	if ((has(st, RDFA_RESOURCE) || has(st, RDFA_HREF) || has(st, RDFA_SRC)) &&
	    !has(st, RDFA_CONTENT) && !has(st, RDFA_DATATYPE) && !has(st, RDFA_REL) &&
	    !has(st, RDFA_REV)) {
		char *iri = resource_of(r, st, irirefs);
		object = iri_value(iri);
		free(iri);
	} else if (has(st, RDFA_TYPEOF) && !has(st, RDFA_CONTENT) && !has(st, RDFA_DATATYPE) &&
	           !has(st, RDFA_REL) && !has(st, RDFA_REV) && !has(st, RDFA_ABOUT) && typed) {
		object = iri_value(typed);
	} else {
		const char *dt = attr(st, "datatype"), *content = attr(st, "content");
		char *datatype = dt && *dt ? term_curie_or_iri(r, st, dt, strlen(dt)) : NULL;
		if (content) {
			object = literal(content, strlen(content), st->lang, datatype);
		} else {
			struct sc_buf b;
			sc_buf_init(&b, PARSE_BUF_MAX);
			sc_buf_add(&b, "", 0);
			element_text(st->node, &b);
			object = literal(b.p, b.len, st->lang, datatype);
			sc_buf_free(&b);
		}
		free(datatype);
	}
	char *prop;
	for (const char *w = words(st, "property"); (prop = next_iri(r, st, &w)); free(prop))
		if (!is_blank(prop))
			add_triple(r, subject, prop, json_incref(object));
	json_decref(object);
}

/* The element's own state: language, prefixes, vocabulary. */
static void enter(struct rdfa *r, struct state *st, const struct state *parent, const xmlNode *node)
{
	const char *v;

	*st = (struct state){ .node = node };
	st->vocab = parent ? parent->vocab : NULL;
	st->lang = parent ? parent->lang : NULL;
	st->prefixes = parent ? parent->prefixes : NULL;
	for (const xmlAttr *a = node->properties; a; a = a->next)
		st->attrs |= attr_bit((const char *)a->name);
	if (has(st, RDFA_XML_LANG) && (v = attr(st, "xml:lang")))
		st->lang = *v ? v : NULL;
	for (const xmlAttr *a = has(st, RDFA_XMLNS | RDFA_PREFIX) ? node->properties : NULL; a;
	     a = a->next) {
		bool xmlns = strncmp((const char *)a->name, "xmlns:", 6) == 0 && a->name[6];
		bool prefix = strcmp((const char *)a->name, "prefix") == 0;
		if (!xmlns && !prefix)
			continue;
		if (!st->own_prefixes) {
			st->prefixes = json_copy(st->prefixes);
			st->own_prefixes = true;
		}
		const char *value = a->children && a->children->content
		                            ? (const char *)a->children->content
		                            : "";
		if (xmlns) {
			char *name = sc_strdup((const char *)a->name + 6);
			for (char *c = name; *c; c++)
				if (*c >= 'A' && *c <= 'Z')
					*c = (char)(*c + 32);
			json_object_set_new(st->prefixes, name, json_string(value));
			free(name);
			continue;
		}
		/* "p1: iri1 p2: iri2" */
		for (const char *p = value; *p;) {
			p += strspn(p, " \t\n\r\f");
			size_t n = strcspn(p, " \t\n\r\f");
			if (n >= 2 && p[n - 1] == ':') {
				const char *iri = p + n;
				iri += strspn(iri, " \t\n\r\f");
				size_t m = strcspn(iri, " \t\n\r\f");
				if (m > 0) {
					char *name = sc_strndup(p, n - 1);
					for (char *c = name; *c; c++)
						if (*c >= 'A' && *c <= 'Z')
							*c = (char)(*c + 32);
					char *target = sc_strndup(iri, m);
					json_t *sv = json_string(target);
					if (sv && is_ncname(name, strlen(name)))
						json_object_set_new(st->prefixes, name, sv);
					else
						json_decref(sv);
					free(name);
					free(target);
				}
				p = iri + m;
			} else {
				p += n;
			}
		}
	}
	if (has(st, RDFA_VOCAB) && (v = attr(st, "vocab"))) {
		if (*v) {
			char *iri = resolve(r, v);
			/* The tree's attribute outlives the walk; the resolved IRI is
			 * kept in the labels object, owned there. */
			json_object_set_new(r->labels, iri, json_string(iri));
			st->vocab = json_string_value(json_object_get(r->labels, iri));
			add_iri_triple(r, r->base, "http://www.w3.org/ns/rdfa#usesVocabulary", iri);
			free(iri);
		} else {
			st->vocab = NULL;
		}
	}
}

static void leave(struct state *st)
{
	if (st->own_prefixes)
		json_decref(st->prefixes);
}

static void role(struct rdfa *r, const struct state *st)
{
	const char *roles = has(st, RDFA_ROLE) ? attr(st, "role") : NULL, *id;
	char *subject;

	if (!roles)
		return;
	id = attr(st, "id");
	subject = NULL;
	for (const char *p = roles; *p;) {
		p += strspn(p, " \t\n\r\f");
		size_t n = strcspn(p, " \t\n\r\f");
		if (n == 0)
			break;
		char *iri = is_ncname(p, n) && !memchr(p, ':', n)
		                    ? strdup_printf(XHV "%.*s", (int)n, p)
		                    : term_curie_or_iri(r, st, p, n);
		if (iri) {
			if (!subject) {
				if (id) {
					size_t a = strspn(id, " \t\n\r\f"), b = strlen(id);
					while (b > a && strchr(" \t\n\r\f", id[b - 1]))
						b--;
					subject = strdup_printf("%s#%.*s", r->base, (int)(b - a),
					                        id + a);
				} else {
					subject = new_blank(r);
				}
			}
			add_iri_triple(r, subject, XHV "role", iri);
			free(iri);
		}
		p += n;
	}
	free(subject);
}

static void add_pending(struct pendings *ps, const char *s, const char *p, const char *o)
{
	ps->v = sc_realloc(ps->v, (ps->n + 1) * sizeof(*ps->v));
	ps->v[ps->n++] =
	        (struct pending){ s ? sc_strdup(s) : NULL, sc_strdup(p), o ? sc_strdup(o) : NULL };
}

static void parse_element(struct rdfa *r, const xmlNode *node, const char *parent_object,
                          const struct state *parent, struct pendings *incoming, int depth);

static void parse_children(struct rdfa *r, const xmlNode *node, const char *object,
                           const struct state *st, struct pendings *ps, int depth)
{
	if (depth >= MAX_DEPTH)
		return;
	for (const xmlNode *c = node->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE)
			parse_element(r, c, object, st, ps, depth + 1);
}

/* pyRdfa's _parse_1_1 for one element and, through parse_children, those
 * below it. */
static void parse_element(struct rdfa *r, const xmlNode *node, const char *parent_object,
                          const struct state *parent, struct pendings *incoming, int depth)
{
	static const char *const about_first[] = { "about", "resource", "href", "src", NULL };
	static const char *const irirefs[] = { "resource", "href", "src", NULL };
	const unsigned any = RDFA_HREF | RDFA_RESOURCE | RDFA_ABOUT | RDFA_PROPERTY | RDFA_REL |
	                     RDFA_REV | RDFA_TYPEOF | RDFA_SRC | RDFA_VOCAB | RDFA_PREFIX;
	struct state st;
	char *subject = NULL, *object = NULL, *typed = NULL, *children_object;
	bool typed_is_subject = false, typed_is_object = false;
	struct pendings mine = { 0 };

	enter(r, &st, parent, node);
	role(r, &st);
	if (!has(&st, any)) {
		parse_children(r, node, parent_object, &st, incoming, depth);
		leave(&st);
		return;
	}
	if (has(&st, RDFA_REL) || has(&st, RDFA_REV)) {
		if (has(&st, RDFA_ABOUT)) {
			subject = curie_or_uri(r, &st, attr(&st, "about"));
			typed_is_subject = has(&st, RDFA_TYPEOF);
		}
		if (!subject && parent_object)
			subject = sc_strdup(parent_object);
		object = resource_of(r, &st, irirefs);
		if (has(&st, RDFA_TYPEOF) && !has(&st, RDFA_ABOUT)) {
			if (!object)
				object = new_blank(r);
			typed_is_object = true;
		}
	} else if (has(&st, RDFA_PROPERTY) && !has(&st, RDFA_CONTENT) && !has(&st, RDFA_DATATYPE)) {
		if (has(&st, RDFA_ABOUT)) {
			subject = curie_or_uri(r, &st, attr(&st, "about"));
			typed_is_subject = has(&st, RDFA_TYPEOF);
		}
		if (!subject && parent_object)
			subject = sc_strdup(parent_object);
		if (!(typed_is_subject && subject) && has(&st, RDFA_TYPEOF)) {
			typed_is_subject = false;
			typed = resource_of(r, &st, irirefs);
			if (!typed)
				typed = new_blank(r);
			object = sc_strdup(typed);
		} else if (subject) {
			object = sc_strdup(subject);
		}
	} else {
		subject = resource_of(r, &st, about_first);
		if (!subject)
			subject = has(&st, RDFA_TYPEOF)
			                  ? new_blank(r)
			                  : (parent_object ? sc_strdup(parent_object) : NULL);
		object = subject ? sc_strdup(subject) : NULL;
		typed_is_subject = has(&st, RDFA_TYPEOF);
	}
	if (!typed)
		typed = typed_is_subject && subject ? sc_strdup(subject)
		        : typed_is_object && object ? sc_strdup(object)
		                                    : NULL;
	char *p;
	for (const char *w = typed ? words(&st, "typeof") : ""; (p = next_iri(r, &st, &w)); free(p))
		add_iri_triple(r, typed, RDF_TYPE, p);
	if (subject) {
		/* A blank node is no predicate (pyRdfa drops it). */
		for (const char *w = words(&st, "rel"); (p = next_iri(r, &st, &w)); free(p))
			if (!is_blank(p) && object)
				add_iri_triple(r, subject, p, object);
			else if (!is_blank(p))
				add_pending(&mine, subject, p, NULL);
		for (const char *w = words(&st, "rev"); (p = next_iri(r, &st, &w)); free(p))
			if (!is_blank(p) && object)
				add_iri_triple(r, object, p, subject);
			else if (!is_blank(p))
				add_pending(&mine, NULL, p, subject);
		if (has(&st, RDFA_PROPERTY))
			add_property(r, &st, subject, typed);
	}
	children_object = object ? sc_strdup(object) : new_blank(r);
	parse_children(r, node, children_object, &st, &mine, depth);
	for (size_t i = 0; i < incoming->n && subject; i++) {
		struct pending *t = &incoming->v[i];
		add_iri_triple(r, t->s ? t->s : subject, t->p, t->o ? t->o : subject);
	}
	for (size_t i = 0; i < mine.n; i++)
		free(mine.v[i].s), free(mine.v[i].p), free(mine.v[i].o);
	free(mine.v);
	free(children_object);
	free(subject);
	free(object);
	free(typed);
	leave(&st);
}

json_t *parse_structured_rdfa(const struct page *page)
{
	const xmlNode *root = xmlDocGetRootElement(page->doc);
	struct rdfa r = { .page = page, .nodes = json_object(), .labels = json_object() };
	struct state top = { 0 };
	struct pendings none = { 0 };
	char *base = NULL;
	json_t *out = json_array(), *v;
	const char *key;

	if (page->base && curl_url_get(page->base, CURLUPART_URL, &base, 0) != CURLUE_OK)
		base = NULL;
	r.base = base ? base : "";
	top.prefixes = json_object();
	for (size_t i = 0; i < sizeof(initial_prefixes) / sizeof(initial_prefixes[0]); i++)
		json_object_set_new(top.prefixes, initial_prefixes[i][0],
		                    json_string(initial_prefixes[i][1]));
	top.own_prefixes = true;
	if (root)
		parse_element(&r, root, r.base, &top, &none, 0);
	json_object_foreach(r.nodes, key, v)
	{
		json_array_append(out, v);
	}
	leave(&top);
	json_decref(r.nodes);
	json_decref(r.labels);
	curl_free(base);
	return out;
}
