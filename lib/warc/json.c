/* json: JSON as JavaScript writes and reads it (see json.h). */
#include "warc/json.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/utf8.h"
#include "core/util.h"

/* Deeper JSON is taken as unreadable (JavaScript would overflow its
 * stack long after). */
#define JSON_MAX_DEPTH 256

static const char replacement[] = "\xef\xbf\xbd";

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
				sc_buf_adds(out, replacement);
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

/* --- JSON, as JSON.parse builds it --- */

struct json_parser {
	const char *p, *end;
	int depth;
};

void sc_warc_json_free(struct sc_warc_json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		if (j->keys)
			free(j->keys[i]);
		sc_warc_json_free(j->kids[i]);
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

/* The four hex digits at p, or -1 (also when fewer than four are left). */
static long hex4(const char *p, const char *end)
{
	return end - p < 4 ? -1 : sc_hex4(p);
}

/* A JSON string at ps->p (its opening quote) into out as UTF-8, a lone
 * surrogate as U+FFFD. */
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

static void add_kid(struct sc_warc_json *j, char *key, struct sc_warc_json *kid)
{
	if (key)
		for (size_t i = 0; i < j->n; i++)
			if (strcmp(j->keys[i], key) == 0) { /* the last value, the first place */
				sc_warc_json_free(j->kids[i]);
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
static void order_keys(struct sc_warc_json *j)
{
	for (size_t i = 1; i < j->n; i++) {
		unsigned long long vi, vk;
		if (!index_key(j->keys[i], &vi))
			continue;
		size_t k = i;
		while (k > 0 && (!index_key(j->keys[k - 1], &vk) || vk > vi)) {
			char *key = j->keys[k];
			struct sc_warc_json *kid = j->kids[k];
			j->keys[k] = j->keys[k - 1];
			j->kids[k] = j->kids[k - 1];
			j->keys[k - 1] = key;
			j->kids[k - 1] = kid;
			k--;
		}
	}
}

static struct sc_warc_json *json_value(struct json_parser *ps);

static bool json_members(struct json_parser *ps, struct sc_warc_json *j, bool object)
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
		struct sc_warc_json *kid = json_value(ps);
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

static struct sc_warc_json *json_value(struct json_parser *ps)
{
	struct sc_warc_json *j = sc_calloc(1, sizeof(*j));
	struct sc_buf text;
	bool ok = false;

	sc_buf_init(&text, (size_t)-1 / 2);
	skip_space(ps);
	if (ps->p >= ps->end || ++ps->depth > JSON_MAX_DEPTH) {
		ok = false;
	} else if (*ps->p == '{' || *ps->p == '[') {
		j->type = *ps->p == '{' ? SC_WARC_JSON_OBJECT : SC_WARC_JSON_ARRAY;
		ok = json_members(ps, j, j->type == SC_WARC_JSON_OBJECT);
		if (ok && j->type == SC_WARC_JSON_OBJECT)
			order_keys(j);
	} else if (*ps->p == '"') {
		j->type = SC_WARC_JSON_STRING;
		ok = json_string(ps, &text);
	} else if (json_literal(ps, "true")) {
		j->type = SC_WARC_JSON_BOOL;
		ok = sc_buf_adds(&text, "true") == 0;
	} else if (json_literal(ps, "false")) {
		j->type = SC_WARC_JSON_BOOL;
		ok = sc_buf_adds(&text, "false") == 0;
	} else if (json_literal(ps, "null")) {
		j->type = SC_WARC_JSON_NULL;
		ok = true;
	} else {
		j->type = SC_WARC_JSON_NUMBER;
		ok = json_number(ps, &text);
	}
	ps->depth--;
	j->text = text.p ? sc_buf_take(&text, NULL) : sc_strdup("");
	if (!ok) {
		sc_warc_json_free(j);
		return NULL;
	}
	return j;
}

struct sc_warc_json *sc_warc_json_parse(const char *text, size_t n)
{
	struct json_parser ps = { text, text + n, 0 };
	struct sc_warc_json *j = json_value(&ps);

	skip_space(&ps);
	if (j && ps.p != ps.end) {
		sc_warc_json_free(j);
		return NULL;
	}
	return j;
}
