/* columns: which values of a record become CSV cells and SQLite columns.
 *
 * A column is a name and a dotted path: "meta.host" is the member host of
 * the member meta; a part that is all digits indexes an array
 * ("links.0").  -c names each column by its path unless renamed
 * ("host=meta.host"). */
#include "sink.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static void split_path(struct column *c, const char *path)
{
	const char *p = path;

	c->nparts = 1;
	for (const char *q = path; *q; q++)
		c->nparts += *q == '.';
	c->parts = sc_calloc(c->nparts, sizeof(*c->parts));
	for (size_t i = 0; i < c->nparts; i++) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		c->parts[i] = sc_strndup(p, n);
		p += n + 1;
	}
}

static struct column *add(struct columns *cols)
{
	cols->v = sc_realloc(cols->v, (cols->n + 1) * sizeof(*cols->v));
	memset(&cols->v[cols->n], 0, sizeof(cols->v[0]));
	return &cols->v[cols->n++];
}

int columns_find(const struct columns *cols, const char *name)
{
	for (size_t i = 0; i < cols->n; i++)
		if (strcmp(cols->v[i].name, name) == 0)
			return (int)i;
	return -1;
}

int columns_parse(struct columns *cols, const char *spec, char *errbuf, size_t errlen)
{
	char *copy = sc_strdup(spec), *rest = copy, *item;
	int rc = 0;

	while ((item = strsep(&rest, ","))) {
		char *eq = strchr(item, '=');
		const char *name = item, *path = item;
		if (eq) {
			*eq = '\0';
			path = eq + 1;
		}
		if (!*name || !*path || path[0] == '.' || path[strlen(path) - 1] == '.' ||
		    strstr(path, "..")) {
			snprintf(errbuf, errlen,
			         "--columns: '%s%s%s' is not a column (NAME or NAME=PATH)", item,
			         eq ? "=" : "", eq ? path : "");
			rc = -1;
			break;
		}
		if (columns_find(cols, name) >= 0) {
			snprintf(errbuf, errlen, "--columns: column '%s' given twice", name);
			rc = -1;
			break;
		}
		struct column *c = add(cols);
		c->name = sc_strdup(name);
		split_path(c, path);
	}
	if (rc == 0 && cols->n == 0) {
		snprintf(errbuf, errlen, "--columns: no column given");
		rc = -1;
	}
	free(copy);
	return rc;
}

void columns_add(struct columns *cols, const char *name)
{
	if (columns_find(cols, name) >= 0)
		return;
	struct column *c = add(cols);
	c->name = sc_strdup(name);
	c->nparts = 1;
	c->parts = sc_calloc(1, sizeof(*c->parts));
	c->parts[0] = sc_strdup(name);
}

void columns_from_record(struct columns *cols, const json_t *rec)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)rec, key, value)
	{
		if (strcmp(key, "body") == 0 || strcmp(key, "body_base64") == 0)
			continue;
		columns_add(cols, key);
	}
}

void columns_from_names(struct columns *cols, char **names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (columns_find(cols, names[i]) >= 0)
			continue;
		struct column *c = add(cols);
		c->name = sc_strdup(names[i]);
		/* A header may be a member's own name or a -c path: try both. */
		c->whole = sc_strdup(names[i]);
		split_path(c, names[i]);
	}
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

json_t *column_value(const struct column *c, const json_t *rec)
{
	json_t *v = (json_t *)rec;

	if (c->whole && (v = json_object_get(rec, c->whole)))
		return v;
	v = (json_t *)rec;
	for (size_t i = 0; i < c->nparts && v; i++) {
		if (json_is_object(v))
			v = json_object_get(v, c->parts[i]);
		else if (json_is_array(v) && all_digits(c->parts[i]))
			v = json_array_get(v, strtoul(c->parts[i], NULL, 10));
		else
			v = NULL;
	}
	return v;
}

void columns_free(struct columns *cols)
{
	for (size_t i = 0; i < cols->n; i++) {
		for (size_t j = 0; j < cols->v[i].nparts; j++)
			free(cols->v[i].parts[j]);
		free(cols->v[i].parts);
		free(cols->v[i].name);
		free(cols->v[i].whole);
	}
	free(cols->v);
	cols->v = NULL;
	cols->n = 0;
}
