/* parser: sc.h's parser (sc_parser_*): sc-parse's command-line specs (-f
 * NAME=SELECTOR, --each, --require) checked and compiled into the
 * configuration of lib/parse, and one of its workers (handle.c) that
 * applies it to records.  sc-parse is a client of these functions; its
 * words for a bad spec are theirs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "api/api.h"
#include "core/util.h"
#include "parse/maintext.h"
#include "parse/parse.h"
#include "parse/structured.h"
#include "record/lines.h"
#include "record/record.h"
#include "sc.h"

struct sc_parser {
	struct config cfg;
	struct worker w;
	/* The specs as given, kept for sc_parser_dup (owned copies). */
	char **fields;
	size_t nfields;
	char *each;
	unsigned flags;
	size_t calls; /* sc_parser_apply's line numbers */
	/* The last apply's diagnostic (owned) and count of records made not ok. */
	char *warning;
	size_t failed;
};

/* Members of a fetch record (sc-record(5)) and --each's index: a field by
 * one of these names would overwrite data, so it is refused. */
static const char *const reserved_names[] = {
	"url",        "final_url",  "status", "ok",          "content_type", "bytes",   "attempts",
	"elapsed_ms", "fetched_at", "body",   "body_base64", "error",        "history", "index",
};

static bool is_reserved(const char *name)
{
	for (size_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
		if (strcmp(name, reserved_names[i]) == 0)
			return true;
	return false;
}

/* Whether a -f field is named name. */
static bool field_exists_in(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->nfields; i++)
		if (strcmp(cfg->fields[i].name, name) == 0)
			return true;
	return false;
}

/* Whether the fields asked for (the default ones when no -f was given)
 * include name. */
/* A member that --main, --markdown or --simhash writes (cfg->maintext). */
static bool maintext_member(const struct config *cfg, const char *name)
{
	bool meta = cfg->maintext & (MAINTEXT_TEXT | MAINTEXT_MARKDOWN);

	return (meta && (strcmp(name, "title") == 0 || strcmp(name, "byline") == 0 ||
	                 strcmp(name, "published") == 0)) ||
	       ((cfg->maintext & MAINTEXT_TEXT) && strcmp(name, "text") == 0) ||
	       ((cfg->maintext & MAINTEXT_MARKDOWN) && strcmp(name, "markdown") == 0) ||
	       ((cfg->maintext & MAINTEXT_SIMHASH) && strcmp(name, "simhash") == 0);
}

static bool field_exists(const struct config *cfg, const char *name)
{
	if (maintext_member(cfg, name))
		return true;
	if (cfg->nfields == 0) {
		for (size_t i = 0; i < default_field_count; i++)
			if (strcmp(default_field_names[i], name) == 0)
				return true;
		return false;
	}
	return field_exists_in(cfg, name);
}

static char *append_field(struct config *cfg, struct field f)
{
	cfg->fields = sc_realloc(cfg->fields, (cfg->nfields + 1) * sizeof(*cfg->fields));
	cfg->fields[cfg->nfields++] = f;
	cfg->structured_need |= f.structured;
	return NULL;
}

/* -f NAME=SELECTOR (or NAME=KIND:PATH), or NAME[]=SELECTOR for every match, added to cfg
 * (spec is borrowed and must outlive cfg).  NULL, or the error text. */
static char *add_field(struct config *cfg, const char *spec)
{
	const char *eq = strchr(spec, '=');
	size_t column, n;
	char msg[256], *err = NULL;
	struct field f = { 0 };

	if (!eq || eq == spec)
		return sc_api_error("-f: '%s' is not NAME=SELECTOR", spec);
	n = (size_t)(eq - spec);
	f.many = n > 2 && strncmp(eq - 2, "[]", 2) == 0;
	f.name = sc_strndup(spec, f.many ? n - 2 : n);
	if (is_reserved(f.name))
		err = sc_api_error(
		        "-f %s: '%s' is a member of the fetch record; choose another name", f.name,
		        f.name);
	else if (field_exists_in(cfg, f.name))
		err = sc_api_error("-f %s: field named twice", f.name);
	else if (cfg->structured && strcmp(f.name, "structured") == 0)
		err = sc_api_error("-f structured: --structured outputs a member by that name; "
		                   "choose another name");
	else if (maintext_member(cfg, f.name))
		err = sc_api_error("-f %s: --main, --markdown or --simhash outputs a member by "
		                   "that name; choose another name",
		                   f.name);
	else if (eq[1] == '\0')
		err = sc_api_error("-f %s: empty selector", f.name);
	else if (parse_structured_path_kind(eq + 1, &f.structured, &f.path)) {
		if (parse_structured_path_check(f.path, msg, sizeof(msg)) != 0)
			err = sc_api_error("-f %s: invalid path: %s", f.name, msg);
		else
			return append_field(cfg, f);
	} else if (parse_selector_compile(eq + 1, &f.sel, &column, msg, sizeof(msg)) != 0)
		err = sc_api_error("-f %s: invalid selector at column %zu: %s", f.name, column,
		                   msg);
	else
		return append_field(cfg, f);
	free(f.name);
	return err;
}

static void free_config(struct config *cfg)
{
	for (size_t i = 0; i < cfg->nfields; i++) {
		free(cfg->fields[i].name);
		parse_selector_free(&cfg->fields[i].sel);
	}
	free(cfg->fields);
	if (cfg->has_each)
		parse_selector_free(&cfg->each);
	for (size_t i = 0; i < cfg->nrequire; i++)
		free((char *)cfg->require[i]);
	free(cfg->require);
}

/* The specs into p->cfg, in sc-parse's order of checks: the fields, then
 * --each's need of a field, then --require's names, then --each compiled.
 * NULL, or the error text. */
static char *compile_specs(struct sc_parser *p, const char *const *require, size_t nrequire)
{
	struct config *cfg = &p->cfg;
	char msg[256], *err;
	size_t column;

	for (size_t i = 0; i < p->nfields; i++)
		if ((err = add_field(cfg, p->fields[i])))
			return err;
	if (cfg->requisites && cfg->forms)
		return sc_api_error("--forms cannot be combined with --requisites");
	if (cfg->requisites && field_exists_in(cfg, "requisites"))
		return sc_api_error(
		        "-f requisites: --requisites writes that member; choose another name");
	if (p->each && cfg->nfields == 0)
		return sc_api_error("--each needs at least one -f to say what to extract per item");
	for (size_t i = 0; i < nrequire; i++) {
		if (!field_exists(cfg, require[i]))
			return sc_api_error("--require: no field named '%s'", require[i]);
		cfg->require =
		        sc_realloc(cfg->require, (cfg->nrequire + 1) * sizeof(*cfg->require));
		cfg->require[cfg->nrequire++] = sc_strdup(require[i]);
	}
	if (p->each) {
		if (parse_selector_compile(p->each, &cfg->each, &column, msg, sizeof(msg)) != 0)
			return sc_api_error("--each: invalid selector at column %zu: %s", column,
			                    msg);
		cfg->has_each = true;
	}
	return NULL;
}

sc_parser *sc_parser_new(const char *const *fields, size_t nfields, const char *each,
                         const char *const *require, size_t nrequire, unsigned flags, char **errmsg)
{
	struct sc_parser *p;
	char *err;

	if (errmsg)
		*errmsg = NULL;
	if ((nfields && !fields) || (nrequire && !require)) {
		if (errmsg)
			*errmsg = sc_api_error("%s", sc_strerror(SC_EINVAL));
		return NULL;
	}
	/* Idempotent; sc_global_init's part for threaded programs. */
	xmlInitParser();
	sc_record_setup(); /* before this thread makes its first record */
	p = sc_calloc(1, sizeof(*p));
	p->fields = sc_calloc(nfields ? nfields : 1, sizeof(*p->fields));
	for (size_t i = 0; i < nfields; i++)
		p->fields[p->nfields++] = sc_strdup(fields[i]);
	p->each = each ? sc_strdup(each) : NULL;
	p->flags = flags;
	p->cfg.keep_body = flags & SC_PARSER_KEEP_BODY;
	p->cfg.forms = flags & SC_PARSER_FORMS;
	p->cfg.requisites = flags & SC_PARSER_REQUISITES;
	p->cfg.structured = flags & SC_PARSER_STRUCTURED ? STRUCTURED_ALL : 0;
	p->cfg.structured_need = p->cfg.structured;
	p->cfg.maintext = (flags & SC_PARSER_MAIN ? MAINTEXT_TEXT : 0) |
	                  (flags & SC_PARSER_MARKDOWN ? MAINTEXT_MARKDOWN : 0) |
	                  (flags & SC_PARSER_SIMHASH ? MAINTEXT_SIMHASH : 0);
	p->cfg.max_line = SC_LINE_MAX;
	if ((err = compile_specs(p, require, nrequire))) {
		if (errmsg)
			*errmsg = err;
		else
			free(err);
		free_config(&p->cfg);
		for (size_t i = 0; i < p->nfields; i++)
			free(p->fields[i]);
		free(p->fields);
		free(p->each);
		free(p);
		return NULL;
	}
	parse_quiet_libxml2();
	parse_worker_init(&p->w, &p->cfg);
	return p;
}

sc_parser *sc_parser_dup(const sc_parser *p)
{
	struct sc_parser *copy;

	if (!p)
		return NULL;
	copy = sc_parser_new((const char *const *)p->fields, p->nfields, p->each, p->cfg.require,
	                     p->cfg.nrequire, p->flags, NULL);
	if (copy) {
		copy->cfg.max_line = p->cfg.max_line;
		copy->cfg.tree_only = p->cfg.tree_only;
		sc_parser_setopt(copy, SC_PARSEROPT_STRUCTURED, (long)p->cfg.structured);
	}
	return copy;
}

void sc_parser_free(sc_parser *p)
{
	if (!p)
		return;
	parse_worker_destroy(&p->w);
	free_config(&p->cfg);
	for (size_t i = 0; i < p->nfields; i++)
		free(p->fields[i]);
	free(p->fields);
	free(p->each);
	free(p->warning);
	free(p);
}

int sc_parser_setopt(sc_parser *p, enum sc_parser_option opt, long value)
{
	if (!p)
		return SC_EINVAL;
	switch (opt) {
	case SC_PARSEROPT_LINE_MAX:
		if (value < 64)
			return SC_EINVAL;
		p->cfg.max_line = (size_t)value;
		return SC_OK;
	case SC_PARSEROPT_TREE:
		p->cfg.tree_only = value != 0;
		return SC_OK;
	case SC_PARSEROPT_STRUCTURED:
		if (value < 0 || value > STRUCTURED_ALL)
			return SC_EINVAL;
		p->cfg.structured = (unsigned)value;
		p->cfg.structured_need = p->cfg.structured;
		for (size_t i = 0; i < p->cfg.nfields; i++)
			p->cfg.structured_need |= p->cfg.fields[i].structured;
		return SC_OK;
	}
	return SC_EINVAL;
}

int sc_parser_apply_line(sc_parser *p, const char *record_json, size_t len, size_t lineno,
                         unsigned flags, char **out_json, size_t *out_len)
{
	struct output out;

	if (!p || !record_json || !out_json)
		return SC_EINVAL;
	/* libxml2's error handlers are per thread: this one's silenced too. */
	parse_quiet_libxml2();
	parse_worker_process(&p->w, record_json, len, lineno, flags & SC_APPLY_TRUNCATED, &out);
	free(p->warning);
	p->warning = out.warning;
	p->failed = out.not_ok;
	if (out.text.len > 0) {
		out.text.max = (size_t)-1;
		if (sc_buf_addc(&out.text, '\n') != 0)
			sc_die(1, "out of memory");
	}
	if (out_len)
		*out_len = out.text.len;
	if (!out.text.p)
		out.text.p = sc_strdup("");
	/* The buffer is the caller's now. */
	*out_json = out.text.p;
	return out.bad_input ? SC_EBADRECORD : SC_OK;
}

int sc_parser_apply(sc_parser *p, const char *record_json, size_t len, char **out_json,
                    size_t *out_len)
{
	if (!p)
		return SC_EINVAL;
	return sc_parser_apply_line(p, record_json, len, ++p->calls, 0, out_json, out_len);
}

size_t sc_parser_failed(const sc_parser *p)
{
	return p ? p->failed : 0;
}

const char *sc_parser_warning(const sc_parser *p)
{
	return p ? p->warning : NULL;
}

char *sc_selector_explain(const char *selector, char **errmsg)
{
	struct selector sel;
	char msg[256], *xpath;
	size_t column;

	if (errmsg)
		*errmsg = NULL;
	if (!selector) {
		if (errmsg)
			*errmsg = sc_api_error("%s", sc_strerror(SC_EINVAL));
		return NULL;
	}
	xmlInitParser();
	if (parse_selector_compile(selector, &sel, &column, msg, sizeof(msg)) != 0) {
		if (errmsg)
			*errmsg = sc_api_error("invalid selector at column %zu: %s", column, msg);
		return NULL;
	}
	xpath = sel.xpath;
	sel.xpath = NULL;
	parse_selector_free(&sel);
	return xpath;
}

int sc_parser_apply_result(sc_parser *p, const sc_result *r, char **out_json, size_t *out_len)
{
	if (!r)
		return SC_EINVAL;
	return sc_parser_apply(p, r->line, r->len, out_json, out_len);
}
