/* libFuzzer target: sc-parse's default fields, gathered while parsing (the
 * SAX path, parse_page_scan_defaults) against read from the tree (the path
 * SC_PARSE_TREE=1 forces, parse_page_load + parse_page_default_fields): a
 * differential target.  The whole of handle.c runs, as for a real line.
 *
 * The input: its first byte picks the record's url and content_type (so
 * base URLs, charsets and non-HTML types are reached), the rest is the body.
 * The promise checked: both paths write the same output, byte for byte. */
#include <string.h>

#include "fuzz.h"
#include "parse/parse.h"
#include "record/lines.h"
#include "record/record.h"

static struct config scan_cfg = { .max_line = SC_LINE_MAX };
static struct config tree_cfg = { .max_line = SC_LINE_MAX, .tree_only = true };
static struct worker scan_worker, tree_worker;

static const char *const urls[] = {
	"http://example.com/a/b.html",
	"https://user:pw@example.com:8443/dir/?q=1#frag",
	"http://127.0.0.1/",
	"not a url",
	"http://[::1]/x",
	"http://EXAMPLE.com/%7e/./../y",
	"file:///etc/passwd",
	"http://example.com",
};
static const char *const types[] = {
	"text/html",
	"text/html; charset=iso-8859-1",
	"text/html; charset=utf-16",
	"application/xhtml+xml",
	"text/plain",
	"",
	"TEXT/HTML;charset=\"windows-1252\"",
	"image/png",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct output a, b;

	if (size < 1)
		return 0;
	if (!scan_worker.cfg) {
		parse_quiet_libxml2();
		parse_worker_init(&scan_worker, &scan_cfg);
		parse_worker_init(&tree_worker, &tree_cfg);
	}
	json_t *rec = json_object();
	json_object_set_new(rec, "url", json_string(urls[data[0] & 7]));
	json_object_set_new(rec, "ok", json_true());
	if ((data[0] >> 3 & 7) != 5)
		json_object_set_new(rec, "content_type", json_string(types[data[0] >> 3 & 7]));
	json_object_set_new(rec, "body", sc_json_string_lossy((const char *)data + 1, size - 1));
	char *line = json_dumps(rec, SC_JSON_FLAGS);
	json_decref(rec);

	parse_worker_process(&scan_worker, line, strlen(line), 1, false, &a);
	parse_worker_process(&tree_worker, line, strlen(line), 1, false, &b);
	if (a.text.len != b.text.len || (a.text.len && memcmp(a.text.p, b.text.p, a.text.len) != 0))
		fuzz_fail("the SAX path and the tree differ:\nscan: %.*s\ntree: %.*s",
		          (int)a.text.len, a.text.p ? a.text.p : "", (int)b.text.len,
		          b.text.p ? b.text.p : "");
	if (a.not_ok != b.not_ok)
		fuzz_fail("not_ok differs: %zu and %zu", a.not_ok, b.not_ok);
	sc_buf_free(&a.text);
	free(a.warning);
	sc_buf_free(&b.text);
	free(b.warning);
	free(line);
	return 0;
}
