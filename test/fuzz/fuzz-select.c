/* libFuzzer target: sc-parse's selectors evaluated on random pages.
 *
 * The input: a CSS selector, a newline, and the page.  (Not XPath: an
 * XPath selector is the user's own program, whose run time is theirs to
 * answer for; the CSS compiler's output, and the page, are ours.)  A selector that compiles is run as the fields -f 'first=SEL' and
 * -f 'all[]=SEL' over the page (handle.c, as for a real line), once on the
 * whole page and once with --each SEL, each item taking 'first'.
 * The promise checked: no crash, no leak, and each output record reads back
 * as a JSON object (the values of whatever matched are valid JSON text). */
#include <string.h>

#include "fuzz.h"
#include "parse/parse.h"
#include "record/lines.h"
#include "record/record.h"

static void check_output(const struct output *out)
{
	const char *p = out->text.p, *end = out->text.p + out->text.len;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_error_t err;
		json_t *rec = json_loadb(p, n, JSON_ALLOW_NUL, &err);
		if (!json_is_object(rec))
			fuzz_fail("an output record does not read back: %s: %.*s", err.text, (int)n,
			          p);
		json_decref(rec);
		p += n + 1;
	}
}

static void run(struct config *cfg, const char *line)
{
	struct worker w;
	struct output out;

	parse_worker_init(&w, cfg);
	parse_worker_process(&w, line, strlen(line), 1, false, &out);
	check_output(&out);
	sc_buf_free(&out.text);
	free(out.warning);
	parse_worker_destroy(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	struct selector sel, sel2;
	char msg[256];
	size_t column;

	if (!nl)
		return 0;
	parse_quiet_libxml2();
	char *src = strndup((const char *)data, (size_t)(nl - data));
	if (strncmp(src, "xpath:", 6) == 0 ||
	    parse_selector_compile(src, &sel, &column, msg, sizeof(msg)) != 0) {
		free(src);
		return 0;
	}
	parse_selector_compile(src, &sel2, &column, msg, sizeof(msg));

	json_t *rec = json_pack(
	        "{s:s, s:b, s:s, s:o}", "url", "http://example.com/dir/page.html", "ok", 1,
	        "content_type", "text/html", "body",
	        sc_json_string_lossy((const char *)nl + 1, size - (size_t)(nl - data) - 1));
	char *line = json_dumps(rec, SC_JSON_FLAGS);
	json_decref(rec);

	struct field fields[2] = { { .name = "first", .sel = sel },
		                   { .name = "all", .many = true, .sel = sel2 } };
	struct config cfg = { .fields = fields, .nfields = 2, .max_line = SC_LINE_MAX };
	run(&cfg, line);
	cfg.has_each = true;
	cfg.each = sel;
	cfg.nfields = 1;
	run(&cfg, line);

	free(line);
	parse_selector_free(&sel);
	parse_selector_free(&sel2);
	free(src);
	return 0;
}
