/* forms: the forms of a page as the records sc-fetch sends (sc-parse
 * --forms; sc-fetch(1), "Forms"): each <form>'s action resolved against
 * the page's base, its method and enctype, and the fields a browser would
 * submit with their defaults (HTML's "constructing the entry list"):
 * inputs with their value, hidden CSRF tokens included; checked boxes and
 * radios ("on" without a value); each select's selected options (else its
 * first); textareas' text; the first submit button's name and value.
 * Disabled controls, unchecked boxes, other buttons and file inputs (no
 * file to send) are left out; a control outside its form (form="ID") is
 * not seen.  A name met twice becomes an array, in document order. */
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "parse/parse.h"

/* An attribute's value (xmlFree it), or NULL. */
static char *attr(const xmlNode *n, const char *name)
{
	return (char *)xmlGetProp((xmlNodePtr)n, (const xmlChar *)name);
}

static bool attr_is(const xmlNode *n, const char *name, const char *value)
{
	char *v = attr(n, name);
	bool is = v && strcasecmp(v, value) == 0;
	xmlFree(v);
	return is;
}

static bool has_attr(const xmlNode *n, const char *name)
{
	return xmlHasProp((xmlNodePtr)n, (const xmlChar *)name) != NULL;
}

static bool is_element(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && strcasecmp((const char *)n->name, name) == 0;
}

/* Adds name=value to fields; a second value of a name makes an array. */
static void add_field(json_t *fields, const char *name, const char *value)
{
	json_t *have = json_object_get(fields, name);
	json_t *v = json_string(value);

	if (!v) /* not UTF-8: libxml2 gives UTF-8, so only a broken page */
		v = json_string("");
	if (!have) {
		json_object_set_new(fields, name, v);
	} else if (json_is_array(have)) {
		json_array_append_new(have, v);
	} else {
		json_t *list = json_array();
		json_array_append(list, have);
		json_array_append_new(list, v);
		json_object_set_new(fields, name, list);
	}
}

/* An element's text, as it is (a textarea's, an option's). */
static char *raw_text(const xmlNode *n)
{
	return (char *)xmlNodeGetContent((xmlNodePtr)n);
}

/* The value an option submits: its value attribute, else its text. */
static void add_option(const xmlNode *o, const char *name, json_t *fields)
{
	char *v = has_attr(o, "value") ? attr(o, "value") : raw_text(o);
	add_field(fields, name, v ? v : "");
	xmlFree(v);
}

struct options {
	const xmlNode *first; /* the first option that may be chosen */
	bool any, multiple;
};

static void add_options(const xmlNode *n, const char *name, json_t *fields, struct options *o)
{
	for (; n; n = n->next) {
		if (is_element(n, "optgroup")) {
			add_options(n->children, name, fields, o);
			continue;
		}
		if (!is_element(n, "option") || has_attr(n, "disabled"))
			continue;
		if (!o->first)
			o->first = n;
		if (has_attr(n, "selected") && (o->multiple || !o->any)) {
			add_option(n, name, fields);
			o->any = true;
		}
	}
}

/* A select's selected options; none selected: its first (a list box of
 * several shows none and sends none). */
static void add_select(const xmlNode *sel, const char *name, json_t *fields)
{
	struct options o = { .multiple = has_attr(sel, "multiple") };

	add_options(sel->children, name, fields, &o);
	if (!o.any && o.first && !o.multiple)
		add_option(o.first, name, fields);
}

/* One control of the form. */
static void add_control(const xmlNode *n, json_t *fields, bool *submitted)
{
	char *name = attr(n, "name");

	if (!name || !*name || has_attr(n, "disabled")) {
		xmlFree(name);
		return;
	}
	if (is_element(n, "input")) {
		char *type = attr(n, "type");
		const char *t = type ? type : "text";
		char *value = attr(n, "value");
		if (strcasecmp(t, "submit") == 0 || strcasecmp(t, "image") == 0) {
			/* The first submit button is the one a user presses. */
			if (!*submitted && strcasecmp(t, "submit") == 0)
				add_field(fields, name, value ? value : "Submit");
			*submitted = true;
		} else if (strcasecmp(t, "checkbox") == 0 || strcasecmp(t, "radio") == 0) {
			if (has_attr(n, "checked"))
				add_field(fields, name, value ? value : "on");
		} else if (strcasecmp(t, "button") != 0 && strcasecmp(t, "reset") != 0 &&
		           strcasecmp(t, "file") != 0) {
			add_field(fields, name, value ? value : "");
		}
		xmlFree(value);
		xmlFree(type);
	} else if (is_element(n, "button")) {
		if (!has_attr(n, "type") || attr_is(n, "type", "submit")) {
			if (!*submitted) {
				char *value = attr(n, "value");
				add_field(fields, name, value ? value : "");
				xmlFree(value);
			}
			*submitted = true;
		}
	} else if (is_element(n, "select")) {
		add_select(n, name, fields);
	} else if (is_element(n, "textarea")) {
		char *text = raw_text(n);
		add_field(fields, name, text ? text : "");
		xmlFree(text);
	}
	xmlFree(name);
}

/* The controls below n, in document order (a nested form's too: HTML
 * parsers drop a nested <form> tag, libxml2 keeps the element). */
static void walk(const xmlNode *n, json_t *fields, bool *submitted)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		add_control(n, fields, submitted);
		if (!is_element(n, "select") && !is_element(n, "textarea"))
			walk(n->children, fields, submitted);
	}
}

/* One form's record. */
static json_t *form_record(const struct page *page, const char *page_url, const xmlNode *form)
{
	char *action = attr(form, "action");
	char *method = attr(form, "method");
	char *enctype = attr(form, "enctype");
	bool post = method && strcasecmp(method, "post") == 0;
	char *url = action && *action ? parse_page_resolve(page, action, true) : NULL;
	json_t *fields = json_object();
	bool submitted = false;

	walk(form->children, fields, &submitted);
	json_t *rec = json_pack("{s:s, s:{s:s}}", "url", url ? url : page_url, "request", "method",
	                        post ? "POST" : "GET");
	if (!rec)
		sc_die(1, "out of memory");
	if (post)
		json_object_set_new(
		        rec, "enctype",
		        json_string(enctype && strcasecmp(enctype, "multipart/form-data") == 0
		                            ? "multipart/form-data"
		                            : "application/x-www-form-urlencoded"));
	json_object_set_new(rec, "form", fields);
	free(url);
	xmlFree(action);
	xmlFree(method);
	xmlFree(enctype);
	return rec;
}

static void collect(const struct page *page, const char *page_url, const xmlNode *n, json_t *out)
{
	for (; n; n = n->next) {
		if (is_element(n, "form"))
			json_array_append_new(out, form_record(page, page_url, n));
		else if (n->type == XML_ELEMENT_NODE)
			collect(page, page_url, n->children, out);
	}
}

json_t *parse_page_forms(const struct page *page, const char *page_url)
{
	json_t *out = json_array();

	if (page->doc && page_url)
		collect(page, page_url, xmlDocGetRootElement(page->doc), out);
	return out;
}
