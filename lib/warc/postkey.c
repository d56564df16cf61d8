#include "warc/postkey.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "core/hex.h"
#include "core/utf8.h"
#include "core/util.h"
#include "warc/json.h"

/* warcio keeps this many UTF-16 units of the body. */
#define POST_KEY_MAX_UNITS 4096

static const char replacement[] = "\xef\xbf\xbd";

/* The bytes as a TextDecoder("utf-8") reads them: a leading byte order
 * mark dropped, each maximal ill-formed subpart one U+FFFD. */
static void text_decode(const unsigned char *b, size_t n, struct sc_buf *out)
{
	size_t bom = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;

	sc_utf8_decode_lossy(b + bom, n - bom, out);
}

/* --- URLSearchParams, as warcio's jsonToQueryParams fills it --- */

struct params {
	size_t n, cap;
	char **names, **values;
	size_t nseen;
	char **seen; /* names met again, with their counts */
	long *counts;
};

static long param_index(const struct params *q, const char *name)
{
	for (size_t i = 0; i < q->n; i++)
		if (strcmp(q->names[i], name) == 0)
			return (long)i;
	return -1;
}

/* URLSearchParams.set: the first of that name gets the value. */
static void params_set(struct params *q, char *name, const char *value)
{
	long at = param_index(q, name);

	if (at >= 0 && q->values) {
		free(q->values[at]);
		q->values[at] = sc_strdup(value);
		free(name);
		return;
	}
	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 16;
		q->names = sc_realloc(q->names, q->cap * sizeof(*q->names));
		q->values = sc_realloc(q->values, q->cap * sizeof(*q->values));
	}
	q->names[q->n] = name;
	q->values[q->n++] = sc_strdup(value);
}

/* The names Object.prototype has: warcio counts them in a plain object,
 * so that "++" meets a function and the count is NaN. */
static bool prototype_name(const char *name)
{
	static const char *const names[] = {
		"constructor",      "__defineGetter__", "__defineSetter__", "hasOwnProperty",
		"__lookupGetter__", "__lookupSetter__", "isPrototypeOf",    "propertyIsEnumerable",
		"toString",         "valueOf",          "__proto__",        "toLocaleString",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* A name met again is NAME.2_, NAME.3_ ... */
static char *param_name(struct params *q, const char *name)
{
	struct sc_buf b;
	size_t i;

	if (param_index(q, name) < 0)
		return sc_strdup(name);
	sc_buf_init(&b, (size_t)-1 / 2);
	if (prototype_name(name)) {
		sc_buf_printf(&b, "%s.NaN_", name);
		return sc_buf_take(&b, NULL);
	}
	for (i = 0; i < q->nseen && strcmp(q->seen[i], name) != 0; i++)
		;
	if (i == q->nseen) {
		q->seen = sc_realloc(q->seen, (q->nseen + 1) * sizeof(*q->seen));
		q->counts = sc_realloc(q->counts, (q->nseen + 1) * sizeof(*q->counts));
		q->seen[i] = sc_strdup(name);
		q->counts[i] = 1;
		q->nseen++;
	}
	sc_buf_printf(&b, "%s.%ld_", name, ++q->counts[i]);
	return sc_buf_take(&b, NULL);
}

static void params_fill(struct params *q, const struct sc_warc_json *j, const char *name)
{
	const char *value = j->text;

	if (j->type == SC_WARC_JSON_OBJECT || j->type == SC_WARC_JSON_ARRAY) {
		for (size_t i = 0; i < j->n; i++)
			params_fill(q, j->kids[i],
			            j->type == SC_WARC_JSON_OBJECT ? j->keys[i] : name);
		return;
	}
	if (j->type == SC_WARC_JSON_NULL)
		value = "null";
	if (*value)
		params_set(q, param_name(q, name), value);
}

/* application/x-www-form-urlencoded serializing of a UTF-8 string. */
static void form_encode(const char *s, struct sc_buf *out)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '*' || c == '-' || c == '.' || c == '_')
			sc_buf_addc(out, (char)c);
		else if (c == ' ')
			sc_buf_addc(out, '+');
		else
			sc_buf_printf(out, "%%%02X", c);
	}
}

static void params_free(struct params *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->names[i]);
		free(q->values[i]);
	}
	for (size_t i = 0; i < q->nseen; i++)
		free(q->seen[i]);
	free(q->names);
	free(q->values);
	free(q->seen);
	free(q->counts);
}

/* The JSON text's values as query parameters, or an empty string when
 * it is not JSON. */
static void json_to_query(const char *text, size_t n, struct sc_buf *out)
{
	struct sc_warc_json *j = sc_warc_json_parse(text, n);
	struct params q = { 0 };

	if (!j)
		return;
	params_fill(&q, j, "");
	for (size_t i = 0; i < q.n; i++) {
		if (i)
			sc_buf_addc(out, '&');
		form_encode(q.names[i], out);
		sc_buf_addc(out, '=');
		form_encode(q.values[i], out);
	}
	params_free(&q);
	sc_warc_json_free(j);
}

/* The first POST_KEY_MAX_UNITS UTF-16 units of the (well-formed) UTF-8
 * text: its byte length, and in *half the high surrogate left alone when
 * the cut falls inside a pair (else 0). */
static size_t utf16_prefix(const char *s, size_t n, unsigned *half)
{
	size_t i = 0, units = 0;

	*half = 0;
	while (i < n && units < POST_KEY_MAX_UNITS) {
		size_t k = sc_utf8_seq_len((const unsigned char *)s + i, n - i);
		if (k == 0)
			k = 1;
		if (k == 4 && units + 2 > POST_KEY_MAX_UNITS) {
			unsigned long cp = ((unsigned long)(s[i] & 0x07) << 18) |
			                   ((unsigned long)(s[i + 1] & 0x3f) << 12) |
			                   ((unsigned long)(s[i + 2] & 0x3f) << 6);
			*half = (unsigned)(0xd800 + ((cp - 0x10000) >> 10));
			break;
		}
		units += k == 4 ? 2 : 1;
		i += k;
	}
	return i;
}

/* decodeURI: escapes decoded but those of ";/?:@&=+$,#"; false where it
 * throws (a bad escape, or bytes that are not UTF-8). */
static bool decode_uri(const char *s, size_t n, struct sc_buf *out)
{
	for (size_t i = 0; i < n;) {
		if (s[i] != '%') {
			sc_buf_addc(out, s[i++]);
			continue;
		}
		unsigned char seq[4];
		size_t k = 0, need = 1;
		for (; k < need; k++) {
			size_t at = i + 3 * k;
			int hi, lo;
			if (at + 3 > n || s[at] != '%' ||
			    (hi = sc_hex_value((unsigned char)s[at + 1])) < 0 ||
			    (lo = sc_hex_value((unsigned char)s[at + 2])) < 0)
				return false;
			seq[k] = (unsigned char)(hi * 16 + lo);
			/* A lead byte that begins no sequence throws, as one that
			 * begins a sequence that is not UTF-8 does below. */
			if (k == 0)
				need = sc_utf8_lead_len(seq[0]);
			if (need == 0)
				return false;
		}
		if (need == 1 && seq[0] && strchr(";/?:@&=+$,#", seq[0]))
			sc_buf_add(out, s + i, 3);
		else if (need == 1)
			sc_buf_addc(out, (char)seq[0]);
		else if (sc_utf8_seq_len(seq, need) != need)
			return false;
		else
			sc_buf_add(out, seq, need);
		i += 3 * need;
	}
	return true;
}

/* What warcio's postToGetUrl makes of the body, before it is cut. */
static void body_params(const char *content_type, const char *body, size_t len, struct sc_buf *d)
{
	const char *ct = content_type ? content_type : "";
	size_t ct_len = strcspn(ct, ";");
	struct sc_buf text;

	sc_buf_init(&text, (size_t)-1 / 2);
	if (ct_len == 33 && strncmp(ct, "application/x-www-form-urlencoded", 33) == 0) {
		text_decode((const unsigned char *)body, len, d);
	} else if ((ct_len == 16 && strncmp(ct, "application/json", 16) == 0) ||
	           (ct_len == 10 && strncmp(ct, "text/plain", 10) == 0)) {
		text_decode((const unsigned char *)body, len, &text);
		json_to_query(text.p ? text.p : "", text.len, d);
	} else {
		sc_buf_adds(d, "__wb_post_data=");
		char *b64 = sc_malloc(SC_BASE64_LEN(len) + 1);
		sc_buf_add(d, b64, sc_base64_encode((const unsigned char *)body, len, b64));
		free(b64);
	}
	sc_buf_free(&text);
}

void sc_warc_post_key(const char *url, const char *method, const char *content_type,
                      const char *body, size_t len, struct sc_buf *key_url,
                      struct sc_buf *body_json)
{
	struct sc_buf d, decoded;
	unsigned half;

	sc_buf_init(&d, (size_t)-1 / 2);
	sc_buf_init(&decoded, (size_t)-1 / 2);
	body_params(content_type, body, len, &d);
	const char *text = d.p ? d.p : "";
	size_t cut = utf16_prefix(text, d.len, &half);
	if (cut > 0 || half) {
		char *kept = sc_strndup(text, cut);
		sc_warc_json_string(kept, body_json);
		free(kept);
		if (half) {
			sc_buf_truncate(body_json, body_json->len - 1);
			sc_buf_printf(body_json, "\\u%04x\"", half);
		}
	}
	if (!decode_uri(text, cut, &decoded)) {
		sc_buf_reset(&decoded);
		half = 0;
	}
	sc_buf_adds(key_url, url);
	sc_buf_adds(key_url, strchr(url, '?') && url[0] != '?' ? "&" : "?");
	sc_buf_printf(key_url, "__wb_method=%s&", method);
	sc_buf_add(key_url, decoded.p ? decoded.p : "", decoded.len);
	if (half)
		sc_buf_adds(key_url, replacement);
	sc_buf_free(&decoded);
	sc_buf_free(&d);
}
