/* handle: one input line in, its output records out.
 *
 * Runs on a worker thread: it touches nothing shared but the read-only
 * configuration, and leaves diagnostics to the writer (struct output), so
 * that they come out in input order. */
#include "parse/maintext.h"
#include "parse/parse.h"
#include "parse/structured.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "core/util.h"
#include "parse/requisites.h"
#include "record/input.h"
#include "record/jsonscan.h"
#include "record/jsonstr.h"
#include "record/record.h"

static xmlXPathCompExprPtr compile_or_die(const char *xpath)
{
	xmlXPathCompExprPtr comp = xmlXPathCompile((const xmlChar *)xpath);

	/* sc_parser_new compiled every expression once already: only
	 * memory can fail now. */
	if (!comp)
		sc_die(1, "out of memory");
	return comp;
}

void parse_worker_init(struct worker *w, const struct config *cfg)
{
	memset(w, 0, sizeof(*w));
	w->cfg = cfg;
	sc_buf_init(&w->text, PARSE_BUF_MAX);
	w->pp = parse_page_parser_new();
	w->scanner = parse_page_scanner_new();
	/* Each thread compiles its own copies: libxml2 does not promise that
	 * one compiled expression may be evaluated by two threads at once. */
	w->comps = sc_calloc(cfg->nfields ? cfg->nfields : 1, sizeof(*w->comps));
	for (size_t i = 0; i < cfg->nfields; i++)
		if (!cfg->fields[i].structured)
			w->comps[i] = compile_or_die(cfg->fields[i].sel.xpath);
	if (cfg->has_each)
		w->each = compile_or_die(cfg->each.xpath);
}

void parse_worker_destroy(struct worker *w)
{
	for (size_t i = 0; i < w->cfg->nfields; i++)
		if (w->comps[i])
			xmlXPathFreeCompExpr(w->comps[i]);
	free(w->comps);
	if (w->each)
		xmlXPathFreeCompExpr(w->each);
	parse_page_parser_free(w->pp);
	parse_page_scanner_free(w->scanner);
	sc_jsonscan_free(&w->js);
	sc_buf_free(&w->text);
}

static void set_warning(struct output *out, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void set_warning(struct output *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&out->warning, fmt, ap) < 0)
		out->warning = NULL;
	va_end(ap);
}

/* The most one input line's output records may take: 8 times the line
 * maximum (--each with --keep-body copies the body into every item). */
static size_t output_max(const struct config *cfg)
{
	return cfg->max_line > ((size_t)-1 - 4096) / 8 ? (size_t)-1 - 4096 : cfg->max_line * 8;
}

/* Past the line's maximum, a record's text is cut back to where it began
 * and a too_large failure with its url stands in its place (let past the
 * maximum: the count contract holds). */
static void replace_too_large(struct output *out, size_t start, const json_t *rec)
{
	json_t *url = json_object_get(rec, "url");
	json_t *small = json_pack("{s:O}", "url", url ? url : json_null());
	size_t max = out->text.max;
	char why[128];

	snprintf(why, sizeof(why), "output records longer than %zu bytes", max);
	sc_record_set_error(small, SC_ERR_TOO_LARGE, why);
	sc_buf_truncate(&out->text, start);
	out->text.max = (size_t)-1;
	if ((start > 0 && sc_buf_addc(&out->text, '\n') != 0) ||
	    parse_record_encode(&out->text, small) != 0)
		sc_die(1, "out of memory");
	out->text.max = max;
	json_decref(small);
	if (!out->warning)
		set_warning(out, "%s", why);
	out->not_ok++;
}

/* Appends rec's text to the line's output. */
static void add_output(struct output *out, const json_t *rec)
{
	size_t start = out->text.len;

	if ((start > 0 && sc_buf_addc(&out->text, '\n') != 0) ||
	    parse_record_encode(&out->text, rec) != 0)
		replace_too_large(out, start, rec);
}

static void null_fields(const struct config *cfg, json_t *rec)
{
	if (cfg->nfields == 0) {
		for (size_t i = 0; i < default_field_count; i++)
			json_object_set_new(rec, default_field_names[i], json_null());
		return;
	}
	for (size_t i = 0; i < cfg->nfields; i++)
		json_object_set_new(rec, cfg->fields[i].name, json_null());
}

/* The page's structured data (structured.h): what the KIND:PATH fields
 * read, and what --structured outputs (a part of it when the fields read
 * kinds it does not show). */
struct structured {
	json_t *all; /* NULL: none asked for */
	json_t *shown;
	json_t *maintext; /* --main, --markdown, --simhash's members, or NULL */
};

static void structured_make(const struct config *cfg, const struct page *page,
                            struct sc_buf *scratch, struct structured *s)
{
	s->all = s->shown = NULL;
	s->maintext = cfg->maintext ? parse_page_maintext(page, cfg->maintext) : NULL;
	if (!cfg->structured_need)
		return;
	s->all = parse_page_structured(page, cfg->structured_need, scratch);
	if (!cfg->structured)
		return;
	if (cfg->structured == cfg->structured_need || !json_is_object(s->all)) {
		s->shown = json_incref(s->all);
		return;
	}
	s->shown = parse_page_structured(page, 0, scratch);
	const char *key;
	json_t *v;
	unsigned shown_kinds;
	json_object_foreach(s->all, key, v)
	{
		if (parse_structured_kinds(key, &shown_kinds, NULL, 0) == 0 &&
		    (shown_kinds & cfg->structured))
			json_object_set(s->shown, key, v);
	}
}

static void structured_set(const struct config *cfg, const struct structured *s, json_t *rec)
{
	if (cfg->structured)
		json_object_set(rec, "structured", s->shown ? s->shown : json_null());
}

static void structured_free(struct structured *s)
{
	json_decref(s->all);
	json_decref(s->shown);
	json_decref(s->maintext);
}

/* The members of --main, --markdown and --simhash (maintext.h), after
 * the fields: title replaces the default field's. */
static void maintext_set(const struct structured *st, json_t *rec)
{
	if (st->maintext)
		json_object_update(rec, st->maintext);
}

static void set_fields(struct worker *w, const struct page *page, xmlXPathContextPtr ctx,
                       xmlNodePtr at, const struct structured *st, json_t *rec)
{
	const struct config *cfg = w->cfg;

	if (!page->doc) {
		null_fields(cfg, rec);
		structured_set(cfg, st, rec);
		maintext_set(st, rec);
		return;
	}
	if (cfg->nfields == 0) {
		parse_page_default_fields(page, rec, &w->text);
		structured_set(cfg, st, rec);
		maintext_set(st, rec);
		return;
	}
	for (size_t i = 0; i < cfg->nfields; i++) {
		const struct field *f = &cfg->fields[i];
		json_object_set_new(
		        rec, f->name,
		        f->structured ? parse_structured_path_value(st->all, f->structured, f->path,
		                                                    f->many)
		                      : parse_field_value(page, ctx, w->comps[i], at, f, &w->text));
	}
	structured_set(cfg, st, rec);
	maintext_set(st, rec);
}

static bool is_empty(const json_t *v)
{
	return !v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0) ||
	       (json_is_array(v) && json_array_size(v) == 0);
}

/* --require: a record not failed (ok true, or no ok member) missing a
 * required field becomes not ok.
 * Records that were not ok already are data, and keep their error; a 304
 * (not_modified) has no page to parse, so nothing of it is required. */
static void validate(const struct config *cfg, json_t *rec, struct output *out)
{
	char why[256];

	if (sc_record_failed(rec) || json_is_true(json_object_get(rec, "not_modified")))
		return;
	for (size_t i = 0; i < cfg->nrequire; i++) {
		const json_t *v = json_object_get(rec, cfg->require[i]);
		if (is_empty(v)) {
			snprintf(why, sizeof(why), "required field '%s' is %s", cfg->require[i],
			         !v || json_is_null(v) ? "null" : "empty");
			sc_record_set_error(rec, SC_ERR_VALIDATION, why);
			out->not_ok++;
			return;
		}
	}
}

/* The input line as a record; a malformed line becomes a bad_input
 * record, with the warning that goes with it. */
static json_t *read_record(struct worker *w, const char *line, size_t len, size_t lineno,
                           bool too_long, struct output *out)
{
	const struct config *cfg = w->cfg;
	struct sc_line as_read = {
		.text = (char *)line, .len = len, .number = lineno, .too_long = too_long
	};
	struct sc_input_item item;

	sc_input_item_make(&as_read, cfg->max_line, &w->js, &item);
	if (item.bad) {
		out->bad_input = true;
		set_warning(out, "%s", item.why);
		out->not_ok++;
	}
	return item.rec;
}

static void set_scanned(json_t *rec, const struct scan_result *r)
{
	json_t *values[] = { r->title, r->description, r->canonical,
		             r->lang,  r->h1,          r->parsed ? parse_links_json(r) : NULL };

	for (size_t i = 0; i < default_field_count; i++)
		json_object_set_new(rec, default_field_names[i],
		                    r->parsed ? values[i] : json_null());
}

static bool has_default_member(const json_t *rec)
{
	for (size_t i = 0; i < default_field_count; i++)
		if (json_object_get(rec, default_field_names[i]))
			return true;
	return false;
}

/* Appends rec with the default fields after its members, as add_output
 * would after set_scanned when none of them is a member already: the
 * links are written from the scan's buffer, not made jansson values. */
static void add_scanned_output(struct output *out, json_t *rec, struct scan_result *r)
{
	struct sc_buf *b = &out->text;
	json_t *values[] = { r->title, r->description, r->canonical, r->lang, r->h1 };
	const char *link = r->links;
	size_t start = b->len;
	int rc = 0;

	if (start > 0)
		rc |= sc_buf_addc(b, '\n');
	rc |= parse_record_encode(b, rec);
	if (rc != 0) {
		for (size_t i = 0; r->parsed && i < sizeof(values) / sizeof(values[0]); i++)
			json_decref(values[i]);
		replace_too_large(out, start, rec);
		return;
	}
	sc_buf_truncate(b, b->len - 1); /* the '}' */
	for (size_t i = 0; i < default_field_count; i++) {
		if (b->p[b->len - 1] != '{')
			rc |= sc_buf_addc(b, ',');
		rc |= sc_jsonstr_quoted(b, default_field_names[i], strlen(default_field_names[i]));
		rc |= sc_buf_addc(b, ':');
		if (!r->parsed) {
			rc |= sc_buf_add(b, "null", 4);
		} else if (i < sizeof(values) / sizeof(values[0])) {
			rc |= parse_record_encode(b, values[i]);
			json_decref(values[i]);
		} else {
			rc |= sc_buf_addc(b, '[');
			for (size_t k = 0; k < r->nlinks; k++) {
				size_t n = strlen(link);
				if (k > 0)
					rc |= sc_buf_addc(b, ',');
				if (sc_utf8_valid((const unsigned char *)link, n)) {
					rc |= sc_jsonstr_quoted(b, link, n);
				} else {
					json_t *v = sc_json_string_lossy(link, n);
					rc |= parse_record_encode(b, v);
					json_decref(v);
				}
				link += n + 1;
			}
			rc |= sc_buf_addc(b, ']');
		}
	}
	rc |= sc_buf_addc(b, '}');
	if (rc != 0)
		replace_too_large(out, start, rec);
}

/* A body that cannot be read (bad base64, say) makes the record a
 * bad_input failure, with its warning. */
static void reject_body(json_t *rec, const char *why, struct output *out)
{
	set_warning(out, "%s", why);
	sc_record_set_error(rec, SC_ERR_BAD_INPUT, why);
	out->not_ok++;
}

/* The body leaves the record unless --keep-body. */
static void drop_body(const struct config *cfg, json_t *rec)
{
	if (!cfg->keep_body) {
		json_object_del(rec, "body");
		json_object_del(rec, "body_base64");
	}
}

/* The default fields without a tree (parse_page_scan_defaults), for a run with
 * no -f: what parse_worker_process does, less the document. */
static void process_defaults(struct worker *w, json_t *rec, struct output *out)
{
	const struct config *cfg = w->cfg;
	struct scan_result r = { 0 };
	char why[256];

	if (out->not_ok == 0 &&
	    parse_page_scan_defaults(w->scanner, rec, &r, &w->text, why, sizeof(why)) != 0)
		reject_body(rec, why, out);
	drop_body(cfg, rec);
	if (cfg->nrequire == 0 && !has_default_member(rec))
		add_scanned_output(out, rec, &r);
	else {
		set_scanned(rec, &r);
		validate(cfg, rec, out);
		add_output(out, rec);
	}
	json_decref(rec);
}

/* A sitemap or sitemap index: its <loc> URLs are the links, every other
 * field is null, and its record is never split by --each.  Returns false,
 * leaving rec alone, when the body is not one. */
static bool process_sitemap(struct worker *w, json_t *rec, struct output *out)
{
	const struct config *cfg = w->cfg;
	json_t *links;
	bool truncated;
	const char *kind = parse_sitemap_links(rec, &links, &truncated);

	if (!kind)
		return false;
	if (truncated)
		set_warning(out, "sitemap larger than %zu MiB uncompressed; read its start",
		            SITEMAP_MAX_BYTES >> 20);
	drop_body(cfg, rec);
	null_fields(cfg, rec);
	if (cfg->has_each)
		json_object_set_new(rec, "index", json_null());
	if (cfg->structured)
		json_object_set_new(rec, "structured", json_null());
	if (cfg->maintext) {
		struct page none = { 0 };
		json_t *m = parse_page_maintext(&none, cfg->maintext);
		json_object_update(rec, m);
		json_decref(m);
	}
	json_object_set_new(rec, "links", links);
	json_object_set_new(rec, "sitemap", json_string(kind));
	validate(cfg, rec, out);
	add_output(out, rec);
	json_decref(rec);
	return true;
}

/* --forms: a record per form of the page (forms.c), with the page's url
 * as "page" and the form's index; a page with none, or not parsed, still
 * gives one record (form and form_index null, its body dropped), so that
 * no page disappears. */
static void process_forms(struct worker *w, json_t *rec, struct output *out)
{
	struct page page = { 0 };
	char why[256];

	if (out->not_ok == 0 && parse_page_load(w->pp, rec, &page, why, sizeof(why)) != 0)
		reject_body(rec, why, out);
	json_t *forms = parse_page_forms(&page, parse_record_string(rec, "url"));
	if (json_array_size(forms) == 0) {
		drop_body(w->cfg, rec);
		json_object_set_new(rec, "form", json_null());
		json_object_set_new(rec, "form_index", json_null());
		add_output(out, rec);
	}
	size_t i;
	json_t *form;
	json_array_foreach(forms, i, form)
	{
		json_object_set(form, "page", json_object_get(rec, "url"));
		json_object_set_new(form, "form_index", json_integer((json_int_t)i));
		add_output(out, form);
	}
	json_decref(forms);
	parse_page_free(&page);
	json_decref(rec);
}

/* --requisites: rec's "requisites" member, before the fields (so that
 * every path below writes it, an --each item's copy too); null for a
 * record that failed or is neither HTML nor CSS. */
static void set_requisites(struct worker *w, json_t *rec, struct output *out)
{
	json_t *urls = NULL;
	char why[256];

	if (out->not_ok == 0 && parse_record_requisites(w->pp, rec, &urls, why, sizeof(why)) != 0)
		reject_body(rec, why, out);
	json_object_set_new(rec, "requisites", urls ? urls : json_null());
}

void parse_worker_process(struct worker *w, const char *line, size_t len, size_t lineno,
                          bool too_long, struct output *out)
{
	const struct config *cfg = w->cfg;
	struct page page = { 0 };
	xmlXPathContextPtr ctx = NULL;
	char why[256];
	json_t *rec;

	memset(out, 0, sizeof(*out));
	sc_buf_init(&out->text, output_max(cfg));
	rec = read_record(w, line, len, lineno, too_long, out);
	if (cfg->requisites)
		set_requisites(w, rec, out);
	if (out->not_ok == 0 && process_sitemap(w, rec, out))
		return;
	if (cfg->forms) {
		process_forms(w, rec, out);
		return;
	}
	if (cfg->nfields == 0 && !cfg->has_each && !cfg->tree_only && !cfg->structured_need &&
	    !cfg->maintext) {
		process_defaults(w, rec, out);
		return;
	}
	if (out->not_ok == 0 && parse_page_load(w->pp, rec, &page, why, sizeof(why)) != 0)
		reject_body(rec, why, out);
	drop_body(cfg, rec);
	struct structured st;
	structured_make(cfg, &page, &w->text, &st);
	if (page.doc && (cfg->nfields > 0 || cfg->has_each)) {
		ctx = xmlXPathNewContext(page.doc);
		if (!ctx)
			sc_die(1, "out of memory");
	}

	if (!cfg->has_each) {
		set_fields(w, &page, ctx, (xmlNodePtr)page.doc, &st, rec);
		validate(cfg, rec, out);
		add_output(out, rec);
	} else {
		xmlXPathObjectPtr items = NULL;
		int n = 0;

		if (ctx) {
			ctx->node = (xmlNodePtr)page.doc;
			items = xmlXPathCompiledEval(w->each, ctx);
			if (items && items->type == XPATH_NODESET && items->nodesetval)
				n = items->nodesetval->nodeNr;
		}
		if (n == 0) {
			/* No page disappears: one record with index null. */
			json_object_set_new(rec, "index", json_null());
			null_fields(cfg, rec);
			structured_set(cfg, &st, rec);
			maintext_set(&st, rec);
			validate(cfg, rec, out);
			add_output(out, rec);
		}
		for (int i = 0; i < n; i++) {
			json_t *item = json_copy(rec);
			xmlNodePtr at = items->nodesetval->nodeTab[i];
			/* A namespace node (xpath:namespace::*) is an xmlNs, not a
			 * node to stand on: evaluate at the document instead. */
			if (at->type == XML_NAMESPACE_DECL)
				at = (xmlNodePtr)page.doc;
			json_object_set_new(item, "index", json_integer(i));
			set_fields(w, &page, ctx, at, &st, item);
			validate(cfg, item, out);
			add_output(out, item);
			json_decref(item);
		}
		xmlXPathFreeObject(items);
	}
	if (ctx)
		xmlXPathFreeContext(ctx);
	structured_free(&st);
	parse_page_free(&page);
	json_decref(rec);
}
