/* libFuzzer target: sc-parse's CSS selector compiler (lib/parse/css.c).
 *
 * The promise checked, for any selector text (cut at its first NUL, as a
 * command-line argument is): parse_css_compile never crashes; when it refuses,
 * the error column lies within the selector (or just past its end) and
 * the message is not empty; when it compiles, libxml2's xmlXPathCompile
 * accepts the XPath it made. */
#include <libxml/xpath.h>
#include <string.h>

#include "fuzz.h"
#include "parse/css.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct css_compiled out;
	struct css_error err = { 0 };
	char *src = strndup((const char *)data, size);

	parse_quiet_libxml2();
	if (parse_css_compile(src, &out, &err) == 0) {
		xmlXPathCompExprPtr comp = xmlXPathCompile((const xmlChar *)out.xpath);
		if (!comp)
			fuzz_fail("parse_css_compile made XPath libxml2 refuses:\nCSS:   "
			          "%s\nXPath: %s",
			          src, out.xpath);
		xmlXPathFreeCompExpr(comp);
		free(out.xpath);
	} else {
		if (err.column < 1 || err.column > strlen(src) + 1)
			fuzz_fail("error column %zu outside the selector of %zu bytes: %s",
			          err.column, strlen(src), src);
		if (!err.message[0])
			fuzz_fail("parse_css_compile refused without a message: %s", src);
	}
	free(src);
	return 0;
}
