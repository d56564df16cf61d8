#include "warc/postkey.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "core/utf8.h"
#include "core/util.h"
#include "warc/json.h"

/* warcio keeps this many UTF-16 units of the body. */
#define POST_KEY_MAX_UNITS 4096
/* Deeper JSON is taken as unreadable (JavaScript would overflow its
 * stack long after). */
#define JSON_MAX_DEPTH 256

static const char replacement[] = "\xef\xbf\xbd";

/* The bytes as a TextDecoder("utf-8") reads them: a leading byte order
 * mark dropped, each maximal ill-formed subpart one U+FFFD. */
static void utf8_decode(const unsigned char *b, size_t n, struct sc_buf *out)
{
	size_t i = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;

	while (i < n) {
		unsigned c = b[i];
		unsigned lower = 0x80, upper = 0xbf;
		size_t need;
		if (c < 0x80) {
			sc_buf_addc(out, (char)c);
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3;
		else
			need = 0;
		lower = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		upper = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		size_t j = 1;
		while (need > 0 && j <= need && i + j < n) {
			unsigned d = b[i + j];
			if (d < (j == 1 ? lower : 0x80) || d > (j == 1 ? upper : 0xbf))
				break;
			j++;
		}
		if (need > 0 && j == need + 1) {
			sc_buf_add(out, b + i, j);
			i += j;
		} else {
			sc_buf_adds(out, replacement);
			i += need > 0 ? j : 1;
		}
	}
}

/* --- JSON, as JSON.parse builds it --- */

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT
};

struct json_node {
	enum json_type type;
	char *text; /* a string's UTF-8, a number's or a boolean's JavaScript text */
	size_t n, cap;
	char **keys; /* an object's, in JavaScript's property order */
	struct json_node **kids;
};

struct json_parser {
	const char *p, *end;
	int depth;
};

static void json_free(struct json_node *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		if (j->keys)
			free(j->keys[i]);
		json_free(j->kids[i]);
	}
	free(j->keys);
	free(j->kids);
	free(j->text);
	free(j);
}

static void skip_space(struct json_parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long hex4(const char *p, const char *end)
{
	long v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = hex_digit(p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* A JSON string at ps->p (its opening quote) into out as UTF-8, a lone
 * surrogate as U+FFFD (what URLSearchParams makes of it). */
static bool json_string(struct json_parser *ps, struct sc_buf *out)
{
	char u8[4];

	ps->p++;
	while (ps->p < ps->end && *ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p;
		if (c < 0x20)
			return false;
		if (c != '\\') {
			sc_buf_addc(out, (char)c);
			ps->p++;
			continue;
		}
		if (++ps->p >= ps->end)
			return false;
		const char *esc = strchr("\"\\/bfnrt", *ps->p);
		if (esc && *ps->p) {
			sc_buf_addc(out, "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"]);
			ps->p++;
			continue;
		}
		if (*ps->p != 'u')
			return false;
		long cp = hex4(ps->p + 1, ps->end);
		if (cp < 0)
			return false;
		ps->p += 5;
		if (cp >= 0xd800 && cp <= 0xdbff && ps->end - ps->p >= 6 && ps->p[0] == '\\' &&
		    ps->p[1] == 'u') {
			long low = hex4(ps->p + 2, ps->end);
			if (low >= 0xdc00 && low <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
				ps->p += 6;
			}
		}
		if (cp >= 0xd800 && cp <= 0xdfff)
			sc_buf_adds(out, replacement);
		else
			sc_buf_add(out, u8, (size_t)(sc_utf8_put(u8, (unsigned long)cp) - u8));
	}
	if (ps->p >= ps->end)
		return false;
	ps->p++;
	return true;
}

/* Number::toString of x: the shortest digits that read back as x, in
 * JavaScript's plain or exponent form. */
static void js_number(double x, struct sc_buf *out)
{
	char tmp[40], digits[24];
	int p, exp10;

	if (isinf(x)) {
		sc_buf_adds(out, x < 0 ? "-Infinity" : "Infinity");
		return;
	}
	if (x == 0) {
		sc_buf_addc(out, '0');
		return;
	}
	if (x < 0) {
		sc_buf_addc(out, '-');
		x = -x;
	}
	for (p = 1; p < 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", p - 1, x);
	size_t k = 0;
	const char *t = tmp;
	for (; *t && *t != 'e'; t++)
		if (*t != '.')
			digits[k++] = *t;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	exp10 = (int)strtol(t + 1, NULL, 10);
	int n = exp10 + 1, kk = (int)k;
	if (kk <= n && n <= 21) {
		sc_buf_adds(out, digits);
		for (int i = 0; i < n - kk; i++)
			sc_buf_addc(out, '0');
	} else if (n > 0 && n <= 21) {
		sc_buf_add(out, digits, (size_t)n);
		sc_buf_addc(out, '.');
		sc_buf_adds(out, digits + n);
	} else if (n > -6 && n <= 0) {
		sc_buf_adds(out, "0.");
		for (int i = 0; i < -n; i++)
			sc_buf_addc(out, '0');
		sc_buf_adds(out, digits);
	} else {
		sc_buf_addc(out, digits[0]);
		if (k > 1) {
			sc_buf_addc(out, '.');
			sc_buf_adds(out, digits + 1);
		}
		sc_buf_printf(out, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
	}
}

static bool json_number(struct json_parser *ps, struct sc_buf *out)
{
	const char *s = ps->p, *p = s;

	if (p < ps->end && *p == '-')
		p++;
	if (p < ps->end && *p == '0')
		p++;
	else if (p < ps->end && *p >= '1' && *p <= '9')
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (p < ps->end && *p == '.') {
		if (++p >= ps->end || *p < '0' || *p > '9')
			return false;
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < ps->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < ps->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= ps->end || *p < '0' || *p > '9')
			return false;
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	char *copy = sc_strndup(s, (size_t)(p - s));
	js_number(strtod(copy, NULL), out);
	free(copy);
	ps->p = p;
	return true;
}

/* An array index as JavaScript orders an object's keys: "0" or no
 * leading zero, below 2^32 - 1. */
static bool index_key(const char *k, unsigned long long *value)
{
	unsigned long long v = 0;

	if (!*k || (k[0] == '0' && k[1]) || strlen(k) > 10)
		return false;
	for (; *k; k++) {
		if (*k < '0' || *k > '9')
			return false;
		v = v * 10 + (unsigned long long)(*k - '0');
	}
	*value = v;
	return v < 4294967295ULL;
}

static void add_kid(struct json_node *j, char *key, struct json_node *kid)
{
	if (key)
		for (size_t i = 0; i < j->n; i++)
			if (strcmp(j->keys[i], key) == 0) { /* the last value, the first place */
				json_free(j->kids[i]);
				j->kids[i] = kid;
				free(key);
				return;
			}
	if (j->n == j->cap) {
		j->cap = j->cap ? j->cap * 2 : 8;
		j->kids = sc_realloc(j->kids, j->cap * sizeof(*j->kids));
		if (key || j->keys)
			j->keys = sc_realloc(j->keys, j->cap * sizeof(*j->keys));
	}
	if (key)
		j->keys[j->n] = key;
	j->kids[j->n++] = kid;
}

/* Integer keys first, ascending, then the others as they came. */
static void order_keys(struct json_node *j)
{
	for (size_t i = 1; i < j->n; i++) {
		unsigned long long vi, vk;
		if (!index_key(j->keys[i], &vi))
			continue;
		size_t k = i;
		while (k > 0 && (!index_key(j->keys[k - 1], &vk) || vk > vi)) {
			char *key = j->keys[k];
			struct json_node *kid = j->kids[k];
			j->keys[k] = j->keys[k - 1];
			j->kids[k] = j->kids[k - 1];
			j->keys[k - 1] = key;
			j->kids[k - 1] = kid;
			k--;
		}
	}
}

static struct json_node *json_value(struct json_parser *ps);

static bool json_members(struct json_parser *ps, struct json_node *j, bool object)
{
	char close = object ? '}' : ']';

	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return true;
	}
	for (;;) {
		char *key = NULL;
		skip_space(ps);
		if (object) {
			struct sc_buf k;
			sc_buf_init(&k, (size_t)-1 / 2);
			if (ps->p >= ps->end || *ps->p != '"' || !json_string(ps, &k)) {
				sc_buf_free(&k);
				return false;
			}
			key = k.p ? sc_buf_take(&k, NULL) : sc_strdup("");
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				return false;
			}
			ps->p++;
		}
		struct json_node *kid = json_value(ps);
		if (!kid) {
			free(key);
			return false;
		}
		add_kid(j, key, kid);
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return true;
		}
		return false;
	}
}

static bool json_literal(struct json_parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return false;
	ps->p += n;
	return true;
}

static struct json_node *json_value(struct json_parser *ps)
{
	struct json_node *j = sc_calloc(1, sizeof(*j));
	struct sc_buf text;
	bool ok = false;

	sc_buf_init(&text, (size_t)-1 / 2);
	skip_space(ps);
	if (ps->p >= ps->end || ++ps->depth > JSON_MAX_DEPTH) {
		ok = false;
	} else if (*ps->p == '{' || *ps->p == '[') {
		j->type = *ps->p == '{' ? JSON_OBJECT : JSON_ARRAY;
		ok = json_members(ps, j, j->type == JSON_OBJECT);
		if (ok && j->type == JSON_OBJECT)
			order_keys(j);
	} else if (*ps->p == '"') {
		j->type = JSON_STRING;
		ok = json_string(ps, &text);
	} else if (json_literal(ps, "true")) {
		j->type = JSON_BOOL;
		ok = sc_buf_adds(&text, "true") == 0;
	} else if (json_literal(ps, "false")) {
		j->type = JSON_BOOL;
		ok = sc_buf_adds(&text, "false") == 0;
	} else if (json_literal(ps, "null")) {
		j->type = JSON_NULL;
		ok = true;
	} else {
		j->type = JSON_NUMBER;
		ok = json_number(ps, &text);
	}
	ps->depth--;
	j->text = text.p ? sc_buf_take(&text, NULL) : sc_strdup("");
	if (!ok) {
		json_free(j);
		return NULL;
	}
	return j;
}

/* JSON.parse of text, or NULL where it would throw. */
static struct json_node *json_parse(const char *text, size_t n)
{
	struct json_parser ps = { text, text + n, 0 };
	struct json_node *j = json_value(&ps);

	skip_space(&ps);
	if (j && ps.p != ps.end) {
		json_free(j);
		return NULL;
	}
	return j;
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

static void params_fill(struct params *q, const struct json_node *j, const char *name)
{
	const char *value = j->text;

	if (j->type == JSON_OBJECT || j->type == JSON_ARRAY) {
		for (size_t i = 0; i < j->n; i++)
			params_fill(q, j->kids[i], j->type == JSON_OBJECT ? j->keys[i] : name);
		return;
	}
	if (j->type == JSON_NULL)
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
	struct json_node *j = json_parse(text, n);
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
	json_free(j);
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

/* The length of the sequence a UTF-8 lead byte opens, 0 for none. */
static size_t utf8_length(unsigned char lead)
{
	if (lead < 0x80)
		return 1;
	if (lead >= 0xc0 && lead < 0xe0)
		return 2;
	if (lead >= 0xe0 && lead < 0xf0)
		return 3;
	return lead >= 0xf0 && lead < 0xf8 ? 4 : 0;
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
			if (at + 3 > n || s[at] != '%' || hex_digit(s[at + 1]) < 0 ||
			    hex_digit(s[at + 2]) < 0)
				return false;
			seq[k] = (unsigned char)(hex_digit(s[at + 1]) * 16 + hex_digit(s[at + 2]));
			if (k == 0)
				need = utf8_length(seq[0]);
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
		utf8_decode((const unsigned char *)body, len, d);
	} else if ((ct_len == 16 && strncmp(ct, "application/json", 16) == 0) ||
	           (ct_len == 10 && strncmp(ct, "text/plain", 10) == 0)) {
		utf8_decode((const unsigned char *)body, len, &text);
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
