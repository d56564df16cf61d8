#include <string.h>

#include "core/utf8.h"
#include "warc/json.h"

void sc_warc_json_string(const char *text, struct sc_buf *out)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);

	sc_buf_addc(out, '"');
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t k = sc_utf8_seq_len(s + i, n - i);
			if (k == 0) {
				sc_buf_adds(out, "\xef\xbf\xbd");
				i++;
			} else {
				sc_buf_add(out, s + i, k);
				i += k;
			}
			continue;
		}
		if (c == '"' || c == '\\') {
			sc_buf_addc(out, '\\');
			sc_buf_addc(out, (char)c);
		} else if (c == '\n') {
			sc_buf_adds(out, "\\n");
		} else if (c == '\r') {
			sc_buf_adds(out, "\\r");
		} else if (c == '\t') {
			sc_buf_adds(out, "\\t");
		} else if (c == '\b') {
			sc_buf_adds(out, "\\b");
		} else if (c == '\f') {
			sc_buf_adds(out, "\\f");
		} else if (c < 0x20) {
			sc_buf_printf(out, "\\u%04x", c);
		} else {
			sc_buf_addc(out, (char)c);
		}
		i++;
	}
	sc_buf_addc(out, '"');
}
