/* needed: whether a page sc-fetch fetched needs the browser at all
 * (--only-if-needed, --needed-if; sc-render(1), "Only the pages that need
 * it"), read from its fetched body with libsc's parser (sc_parser(3)): the
 * same libxml2 tree and selectors as sc-parse.  A page needs it when its
 * body's text is nearly empty while it carries a script, when a
 * <noscript> says JavaScript is needed, or when --needed-if's selector
 * matches. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "render.h"
#include "sc.h"

/* Under this many characters of text (white space made one space), a
 * page with a script is taken for a shell its script fills. */
#define NEARLY_EMPTY 200

int needed_init(struct render *r, char *err, size_t errlen)
{
	const char *fields[4] = { "scripts=xpath:count(//script)", "text=body",
		                  "noscript=noscript" };
	size_t n = 3;
	char *spec = NULL, *why = NULL;

	if (!r->opts.only_needed)
		return 0;
	if (r->opts.needed_if) {
		size_t size = strlen(r->opts.needed_if) + 8;
		spec = sc_malloc(size);
		snprintf(spec, size, "needed=%s", r->opts.needed_if);
		fields[n++] = spec;
	}
	r->needs = sc_parser_new(fields, n, NULL, NULL, 0, 0, &why);
	free(spec);
	if (!r->needs) {
		/* The parser words it as sc-parse's -f: "-f needed: ...". */
		const char *w = why ? why : "cannot compile it";
		const char *colon = strstr(w, ": ");
		snprintf(err, errlen, "--needed-if: %s", colon ? colon + 2 : w);
		sc_free(why);
		return -1;
	}
	return 0;
}

void needed_free(struct render *r)
{
	sc_parser_free(r->needs);
	r->needs = NULL;
}

/* Characters of UTF-8 text: its bytes but continuation bytes. */
static size_t characters(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* A field's text, or NULL. */
static const char *field(const json_t *rec, const char *name)
{
	return json_string_value(json_object_get(rec, name));
}

bool needed(struct render *r, const char *line, size_t len)
{
	char *out = NULL;
	size_t out_len = 0;

	if (!r->needs)
		return true;
	/* What the parser cannot read (not HTML, a bad body) is the browser's
	 * to try, as without --only-if-needed. */
	if (sc_parser_apply(r->needs, line, len, &out, &out_len) != SC_OK) {
		sc_free(out);
		return true;
	}
	json_t *rec = json_loadb(out, out_len, 0, NULL);
	sc_free(out);
	if (!rec)
		return true;
	const char *scripts = field(rec, "scripts"), *text = field(rec, "text");
	const char *noscript = field(rec, "noscript");
	/* The body's text as sc-parse gives it: scripts and styles left out,
	 * white space made one space; counted in characters. */
	bool shell = scripts && strtol(scripts, NULL, 10) > 0 &&
	             (!text || characters(text) < NEARLY_EMPTY);
	bool asks = noscript && strcasestr(noscript, "javascript");
	bool matched = r->opts.needed_if && field(rec, "needed");
	json_decref(rec);
	return shell || asks || matched;
}
