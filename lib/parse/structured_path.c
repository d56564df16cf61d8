/* structured_path: the -f fields that read structured data,
 * NAME=KIND:PATH (sc-parse(1), "Fields from structured data").
 *
 *   jsonld:TYPE.key.key     json-ld objects (at any depth, @graph's
 *                           included) whose @type is TYPE, then their keys
 *   microdata:TYPE.key...   microdata items of type TYPE, then properties
 *   rdfa:TYPE.key...        RDFa nodes typed TYPE, then properties
 *   opengraph:og:title      an Open Graph property
 *   twitter:card            a Twitter card's twitter:card
 *
 * TYPE and a key match an IRI by its last segment ("Product" matches
 * "http://schema.org/Product"), "*" any type.  An array on the way is
 * looked through; a value that is a node reference ({"@id"} in RDFa) is
 * followed to its node when keys remain.  The value is the first one
 * found in page order, or all of them for NAME[]. */
#include "parse/structured.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static const struct {
	const char *prefix;
	unsigned kind;
} path_kinds[] = {
	{ "jsonld:", STRUCTURED_JSONLD },       { "json-ld:", STRUCTURED_JSONLD },
	{ "microdata:", STRUCTURED_MICRODATA }, { "rdfa:", STRUCTURED_RDFA },
	{ "opengraph:", STRUCTURED_OPENGRAPH }, { "twitter:", STRUCTURED_TWITTER },
};

static const char *kind_member(unsigned kind)
{
	switch (kind) {
	case STRUCTURED_JSONLD:
		return "json-ld";
	case STRUCTURED_MICRODATA:
		return "microdata";
	case STRUCTURED_RDFA:
		return "rdfa";
	case STRUCTURED_OPENGRAPH:
		return "opengraph";
	default:
		return "twitter";
	}
}

bool parse_structured_path_kind(const char *spec, unsigned *kind, const char **path)
{
	for (size_t i = 0; i < sizeof(path_kinds) / sizeof(path_kinds[0]); i++) {
		size_t n = strlen(path_kinds[i].prefix);
		if (strncmp(spec, path_kinds[i].prefix, n) == 0) {
			*kind = path_kinds[i].kind;
			*path = spec + n;
			return true;
		}
	}
	return false;
}

int parse_structured_path_check(const char *path, char *msg, size_t msgsize)
{
	if (!*path) {
		snprintf(msg, msgsize, "empty path");
		return -1;
	}
	if (path[0] == '.' || path[strlen(path) - 1] == '.' || strstr(path, "..")) {
		snprintf(msg, msgsize, "empty step in '%s'", path);
		return -1;
	}
	return 0;
}

/* Whether iri's last segment (after '/', '#' or ':') is name[0..n). */
static bool segment_is(const char *iri, const char *name, size_t n)
{
	size_t len = strlen(iri);
	const char *last = iri;

	if (n == 1 && name[0] == '*')
		return true;
	for (const char *p = iri; *p; p++)
		if ((*p == '/' || *p == '#' || *p == ':') && p[1])
			last = p + 1;
	return (len == n && strncmp(iri, name, n) == 0) ||
	       (strlen(last) == n && strncmp(last, name, n) == 0);
}

static bool type_matches(const json_t *types, const char *name, size_t n)
{
	size_t i;
	const json_t *t;

	if (json_is_string(types))
		return segment_is(json_string_value(types), name, n);
	json_array_foreach(types, i, t)
	{
		if (json_is_string(t) && segment_is(json_string_value(t), name, n))
			return true;
	}
	return false;
}

struct walk {
	unsigned kind;
	const json_t *all; /* the kind's array (RDFa: the nodes to follow @id to) */
	json_t *found;     /* array */
	bool many;
};

static bool done(const struct walk *w)
{
	return !w->many && json_array_size(w->found) > 0;
}

static const json_t *rdfa_node(const struct walk *w, const char *id)
{
	size_t i;
	const json_t *n;

	json_array_foreach(w->all, i, n)
	{
		const char *nid = json_string_value(json_object_get(n, "@id"));
		if (nid && strcmp(nid, id) == 0)
			return n;
	}
	return NULL;
}

/* The member of v named key[0..n): a json-ld key, a microdata property, an
 * RDFa property IRI whose last segment is key. */
static const json_t *member(const struct walk *w, const json_t *v, const char *key, size_t n)
{
	const char *k;
	const json_t *m;

	if (w->kind == STRUCTURED_MICRODATA)
		v = json_object_get(v, "properties");
	json_object_foreach((json_t *)v, k, m)
	{
		if (w->kind == STRUCTURED_RDFA ? k[0] != '@' && segment_is(k, key, n)
		                               : strlen(k) == n && strncmp(k, key, n) == 0)
			return m;
	}
	return NULL;
}

/* Follows path (keys separated by '.') from v, adding what it reaches. */
static void follow(struct walk *w, const json_t *v, const char *path)
{
	size_t i;
	const json_t *item;

	if (!v || done(w))
		return;
	if (json_is_array(v)) {
		json_array_foreach(v, i, item)
		{
			follow(w, item, path);
		}
		return;
	}
	if (w->kind == STRUCTURED_RDFA && json_is_object(v)) {
		const json_t *value = json_object_get(v, "@value");
		const char *id = json_string_value(json_object_get(v, "@id"));
		if (value && !*path) {
			json_array_append(w->found, (json_t *)value);
			return;
		}
		if (id && json_object_size(v) == 1) {
			const json_t *node = *path ? rdfa_node(w, id) : NULL;
			if (node)
				v = node;
			else if (!*path) {
				json_array_append_new(w->found, json_string(id));
				return;
			}
		}
	}
	if (!*path) {
		json_array_append(w->found, (json_t *)v);
		return;
	}
	if (!json_is_object(v))
		return;
	size_t n = strcspn(path, ".");
	follow(w, member(w, v, path, n), path[n] ? path + n + 1 : "");
}

/* Every object at or below v typed type[0..n), in page order, each
 * followed along rest. */
static void find_typed(struct walk *w, const json_t *v, const char *type, size_t n,
                       const char *rest)
{
	size_t i;
	const char *k;
	const json_t *m;

	if (done(w))
		return;
	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
		{
			find_typed(w, m, type, n, rest);
		}
		return;
	}
	if (!json_is_object(v))
		return;
	if (type_matches(json_object_get(v, w->kind == STRUCTURED_MICRODATA ? "type" : "@type"),
	                 type, n))
		follow(w, v, rest);
	/* RDFa's nodes are all at the top: nested ones are references. */
	if (w->kind == STRUCTURED_RDFA)
		return;
	json_object_foreach((json_t *)v, k, m)
	{
		find_typed(w, m, type, n, rest);
	}
}

/* Open Graph's [property, content] pairs, twitter's card objects. */
static void find_meta(struct walk *w, const json_t *all, const char *name)
{
	size_t i, k;
	const json_t *obj, *pair;

	json_array_foreach(all, i, obj)
	{
		if (w->kind == STRUCTURED_OPENGRAPH) {
			json_array_foreach(json_object_get(obj, "properties"), k, pair)
			{
				const char *prop = json_string_value(json_array_get(pair, 0));
				if (prop && strcmp(prop, name) == 0 && !done(w))
					json_array_append(w->found, json_array_get(pair, 1));
			}
		} else {
			char key[256];
			snprintf(key, sizeof(key), "%s%s",
			         strncmp(name, "twitter:", 8) ? "twitter:" : "", name);
			const json_t *v = json_object_get(obj, key);
			if (json_is_array(v))
				json_array_foreach(v, k, pair)
				{
					if (!done(w))
						json_array_append(w->found, (json_t *)pair);
				}
			else if (v && !done(w))
				json_array_append(w->found, (json_t *)v);
		}
	}
}

json_t *parse_structured_path_value(const json_t *structured, unsigned kind, const char *path,
                                    bool many)
{
	struct walk w = { .kind = kind, .found = json_array(), .many = many };
	json_t *out;

	w.all = json_object_get(structured, kind_member(kind));
	if (w.all) {
		if (kind == STRUCTURED_OPENGRAPH || kind == STRUCTURED_TWITTER) {
			find_meta(&w, w.all, path);
		} else {
			size_t n = strcspn(path, ".");
			find_typed(&w, w.all, path, n, path[n] ? path + n + 1 : "");
		}
	}
	if (many)
		return w.found;
	out = json_array_size(w.found) ? json_incref(json_array_get(w.found, 0)) : json_null();
	json_decref(w.found);
	return out;
}
