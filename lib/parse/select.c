/* select: selectors and the values of what they match. */
#include "parse/parse.h"

#include <libxml/HTMLtree.h>
#include <libxml/xpathInternals.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "parse/css.h"
#include "record/record.h"

#define XPATH_PREFIX "xpath:"

/* ---- compiling ---- */

struct xpath_error {
	bool seen;
	int offset;
	char message[128];
};

static void catch_xpath_error(void *ctx, xmlErrorPtr e)
{
	struct xpath_error *err = ctx;

	if (err->seen || !e)
		return;
	err->seen = true;
	err->offset = e->int1;
	snprintf(err->message, sizeof(err->message), "%s", e->message ? e->message : "error");
	/* libxml2's messages end in a newline. */
	err->message[strcspn(err->message, "\n")] = '\0';
}

static void ignore_error(void *ctx, xmlErrorPtr e)
{
	(void)ctx, (void)e;
}
static void ignore_generic(void *ctx, const char *msg, ...)
{
	(void)ctx, (void)msg;
}

void parse_quiet_libxml2(void)
{
	xmlSetStructuredErrorFunc(NULL, ignore_error);
	xmlSetGenericErrorFunc(NULL, ignore_generic);
}

/* Compiles xpath with libxml2 to check it.  Returns 0, or -1 with the byte
 * offset of the error and libxml2's message. */
static int check_xpath(const char *xpath, int *offset, char *msg, size_t msgsize)
{
	struct xpath_error err = { 0 };
	xmlXPathContextPtr ctx = xmlXPathNewContext(NULL);
	xmlXPathCompExprPtr comp;

	if (!ctx)
		sc_die(1, "out of memory");
	xmlSetStructuredErrorFunc(&err, catch_xpath_error);
	comp = xmlXPathCtxtCompile(ctx, (const xmlChar *)xpath);
	parse_quiet_libxml2();
	xmlXPathFreeContext(ctx);
	if (comp) {
		xmlXPathFreeCompExpr(comp);
		return 0;
	}
	*offset = err.seen ? err.offset : 0;
	snprintf(msg, msgsize, "%s", err.seen ? err.message : "invalid XPath expression");
	return -1;
}

int parse_selector_compile(const char *src, struct selector *out, size_t *column, char *msg,
                           size_t msgsize)
{
	const size_t plen = strlen(XPATH_PREFIX);
	int offset;

	out->source = src;
	out->outer_html = false;
	if (strncmp(src, XPATH_PREFIX, plen) == 0) {
		const char *expr = src + plen;
		if (check_xpath(expr, &offset, msg, msgsize) != 0) {
			size_t n = strlen(expr);
			*column = plen +
			          (offset < 0           ? 0
			           : (size_t)offset > n ? n
			                                : (size_t)offset) +
			          1;
			return -1;
		}
		out->xpath = sc_strdup(expr);
		return 0;
	}

	struct css_compiled css;
	struct css_error err;
	if (parse_css_compile(src, &css, &err) != 0) {
		*column = err.column;
		snprintf(msg, msgsize, "%s", err.message);
		return -1;
	}
	if (check_xpath(css.xpath, &offset, msg, msgsize) != 0) {
		/* The compiler made something libxml2 refuses: a bug here. */
		*column = 1;
		snprintf(msg, msgsize, "internal error: compiled to bad XPath %s", css.xpath);
		free(css.xpath);
		return -1;
	}
	out->xpath = css.xpath;
	out->outer_html = css.outer_html;
	return 0;
}

void parse_selector_free(struct selector *sel)
{
	free(sel->xpath);
	sel->xpath = NULL;
}

/* ---- values ---- */

/* True for attributes whose value is a URL. */
static bool is_url_attribute(const char *name)
{
	static const char *const names[] = {
		"href",     "src",  "action",   "formaction", "cite",     "poster", "background",
		"longdesc", "data", "manifest", "icon",       "codebase", "usemap", "profile",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static json_t *outer_html(const xmlNode *node)
{
	xmlBufferPtr buf = xmlBufferCreate();
	json_t *v;

	if (!buf)
		return json_null();
	htmlNodeDump(buf, node->doc, (xmlNodePtr)node);
	v = sc_json_string_lossy((const char *)xmlBufferContent(buf), (size_t)xmlBufferLength(buf));
	xmlBufferFree(buf);
	return v;
}

static json_t *owned_string(xmlChar *s)
{
	json_t *v = s ? sc_json_string_lossy((const char *)s, strlen((const char *)s))
	              : json_string("");

	xmlFree(s);
	return v;
}

json_t *parse_match_value(const struct page *page, const xmlNode *node, bool html,
                          struct sc_buf *scratch)
{
	switch (node->type) {
	case XML_ELEMENT_NODE:
		if (html)
			return outer_html(node);
		parse_node_text(node, scratch);
		return sc_json_string_lossy(scratch->p, scratch->len);
	case XML_DOCUMENT_NODE:
	case XML_HTML_DOCUMENT_NODE: {
		const xmlNode *root = xmlDocGetRootElement((xmlDocPtr)node);
		if (!root)
			return json_string("");
		return parse_match_value(page, root, html, scratch);
	}
	case XML_ATTRIBUTE_NODE: {
		xmlChar *value = xmlNodeGetContent(node);
		if (value && is_url_attribute((const char *)node->name)) {
			char *abs = parse_page_resolve(page, (const char *)value, false);
			if (abs) {
				json_t *v = sc_json_string_lossy(abs, strlen(abs));
				free(abs);
				xmlFree(value);
				return v;
			}
		}
		return owned_string(value);
	}
	case XML_NAMESPACE_DECL: {
		/* XPath node-sets can hold namespace nodes, which are xmlNs. */
		const xmlNs *ns = (const xmlNs *)node;
		const char *href = ns->href ? (const char *)ns->href : "";
		return sc_json_string_lossy(href, strlen(href));
	}
	default:
		return owned_string(xmlNodeGetContent(node));
	}
}

json_t *parse_field_value(const struct page *page, xmlXPathContextPtr ctx, xmlXPathCompExprPtr comp,
                          xmlNodePtr at, const struct field *f, struct sc_buf *scratch)
{
	xmlXPathObjectPtr res;
	json_t *value;

	ctx->node = at;
	res = xmlXPathCompiledEval(comp, ctx);
	if (!res)
		return f->many ? json_array() : json_null();
	if (res->type == XPATH_NODESET) {
		xmlNodeSetPtr set = res->nodesetval;
		int n = set ? set->nodeNr : 0;
		if (f->many) {
			value = json_array();
			for (int i = 0; i < n; i++)
				json_array_append_new(
				        value, parse_match_value(page, set->nodeTab[i],
				                                 f->sel.outer_html, scratch));
		} else {
			value = n > 0 ? parse_match_value(page, set->nodeTab[0], f->sel.outer_html,
			                                  scratch)
			              : json_null();
		}
	} else {
		/* A string, number or boolean expression (xpath:count(//a)). */
		xmlChar *s = xmlXPathCastToString(res);
		json_t *one = owned_string(s);
		if (f->many) {
			value = json_array();
			json_array_append_new(value, one);
		} else {
			value = one;
		}
	}
	xmlXPathFreeObject(res);
	return value;
}
