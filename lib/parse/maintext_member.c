/* maintext_member: the members that --main, --markdown and --simhash add
 * to a record: title, byline, published, text, markdown, simhash. */
#include "parse/maintext.h"

#include <inttypes.h>
#include <stdio.h>

#include "record/record.h"

static void set_nulls(json_t *out, unsigned what)
{
	if (what & (MAINTEXT_TEXT | MAINTEXT_MARKDOWN)) {
		json_object_set_new(out, "title", json_null());
		json_object_set_new(out, "byline", json_null());
		json_object_set_new(out, "published", json_null());
	}
	if (what & MAINTEXT_TEXT)
		json_object_set_new(out, "text", json_null());
	if (what & MAINTEXT_MARKDOWN)
		json_object_set_new(out, "markdown", json_null());
	if (what & MAINTEXT_SIMHASH)
		json_object_set_new(out, "simhash", json_null());
}

json_t *parse_page_maintext(const struct page *page, unsigned what)
{
	json_t *out = json_object();
	struct maintext mt;
	struct sc_buf md = { 0 }, txt = { 0 };

	set_nulls(out, what);
	if (!page->doc || !parse_maintext_choose(page, &mt))
		return out;
	if (what & (MAINTEXT_TEXT | MAINTEXT_MARKDOWN))
		parse_maintext_meta(page, out);
	parse_buf_clear(&md);
	parse_buf_clear(&txt);
	parse_maintext_write(page, &mt, &md, &txt);
	parse_maintext_free(&mt);
	if (txt.len > 0) {
		if (what & MAINTEXT_TEXT)
			json_object_set_new(out, "text", sc_json_string_lossy(txt.p, txt.len));
		if (what & MAINTEXT_MARKDOWN)
			json_object_set_new(out, "markdown", sc_json_string_lossy(md.p, md.len));
		if (what & MAINTEXT_SIMHASH) {
			char hex[17];
			snprintf(hex, sizeof(hex), "%016" PRIx64, parse_simhash(txt.p, txt.len));
			json_object_set_new(out, "simhash", json_string(hex));
		}
	}
	sc_buf_free(&md);
	sc_buf_free(&txt);
	return out;
}
