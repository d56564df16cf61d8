#include "record/jsonscan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/utf8.h"

struct scan {
	const unsigned char *p, *end;
	struct sc_jsonscan *js;
	size_t flags;
	int depth;
};

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether any byte of w is below n (n <= 128), or zero: exact for the
 * question "is there one", which is all that is asked. */
#define HAS_LESS(w, n) (((w)-ONES * (n)) & ~(w)&HIGHS)
#define HAS_ZERO(w) HAS_LESS(w, 1)

/* A byte that a string can hold as it is, with no escape and no UTF-8
 * sequence to check: printable ASCII other than '"' and '\\'. */
static inline bool plain_byte(unsigned c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The first byte at or after p that is not plain (or end).  Eight bytes
 * at a time while none is special: most of a body is plain ASCII. */
static const unsigned char *skip_plain(const unsigned char *p, const unsigned char *end)
{
	while (end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		if ((w & HIGHS) | HAS_LESS(w, 0x20) | HAS_ZERO(w ^ (ONES * '"')) |
		    HAS_ZERO(w ^ (ONES * '\\')))
			break;
		p += 8;
	}
	while (p < end && plain_byte(*p))
		p++;
	return p;
}

/* Decodes the escape at p (a backslash) into *o.  Returns the byte after
 * it, or NULL for anything jansson would refuse (or that we would rather
 * it judged). */
static const unsigned char *unescape(const unsigned char *p, const unsigned char *end, char **o,
                                     bool allow_nul)
{
	long cp, lo;

	if (end - p < 2)
		return NULL;
	switch (p[1]) {
	case '"':
	case '\\':
	case '/':
		*(*o)++ = (char)p[1];
		return p + 2;
	case 'b':
		*(*o)++ = '\b';
		return p + 2;
	case 'f':
		*(*o)++ = '\f';
		return p + 2;
	case 'n':
		*(*o)++ = '\n';
		return p + 2;
	case 'r':
		*(*o)++ = '\r';
		return p + 2;
	case 't':
		*(*o)++ = '\t';
		return p + 2;
	case 'u':
		break;
	default:
		return NULL;
	}
	if (end - p < 6 || (cp = sc_hex4((const char *)p + 2)) < 0)
		return NULL;
	p += 6;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
		    (lo = sc_hex4((const char *)p + 2)) < 0xdc00 || lo > 0xdfff)
			return NULL;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		p += 6;
	} else if ((cp >= 0xdc00 && cp <= 0xdfff) || (cp == 0 && !allow_nul)) {
		return NULL;
	}
	*o = sc_utf8_put(*o, (unsigned long)cp);
	return p;
}

/* The string whose opening quote is just behind s->p.  *val points into
 * the line when the string has no escape, else into the scratch buffer
 * (valid until the next string).  A member name (key) with an escape
 * declines: jansson then says what it thinks of it. */
static bool scan_string(struct scan *s, bool key, const char **val, size_t *vlen)
{
	const unsigned char *start = s->p, *p = start, *end = s->end;
	char *out = NULL, *o = NULL;

	for (;;) {
		const unsigned char *q = skip_plain(p, end);
		if (o) {
			memcpy(o, p, (size_t)(q - p));
			o += q - p;
		}
		p = q;
		if (p == end)
			return false;
		if (*p == '"')
			break;
		if (*p >= 0x80) {
			size_t n = sc_utf8_seq_len(p, (size_t)(end - p));
			if (n == 0)
				return false;
			if (o) {
				memcpy(o, p, n);
				o += n;
			}
			p += n;
			continue;
		}
		if (*p != '\\' || key)
			return false; /* a control character, or an escaped name */
		if (!o) {
			/* Unescaped text is never longer than its source, so
			 * the rest of the line bounds it. */
			size_t need = (size_t)(end - start);
			if (need > s->js->cap) {
				char *b = realloc(s->js->buf, need);
				if (!b)
					return false;
				s->js->buf = b;
				s->js->cap = need;
			}
			out = s->js->buf;
			memcpy(out, start, (size_t)(p - start));
			o = out + (p - start);
		}
		p = unescape(p, end, &o, (s->flags & JSON_ALLOW_NUL) != 0);
		if (!p)
			return false;
	}
	if (out) {
		*val = out;
		*vlen = (size_t)(o - out);
	} else {
		*val = (const char *)start;
		*vlen = (size_t)(p - start);
	}
	s->p = p + 1;
	return true;
}

static bool is_digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

static const unsigned char *skip_digits(const unsigned char *p, const unsigned char *end)
{
	while (is_digit(p, end))
		p++;
	return p;
}

/* A number as jansson reads it: an integer unless it has a fraction or an
 * exponent; one out of range declines. */
static json_t *scan_number(struct scan *s)
{
	const unsigned char *start = s->p, *p = start, *end = s->end;
	bool real = false;
	char buf[64], *stop;

	if (p < end && *p == '-')
		p++;
	if (!is_digit(p, end))
		return NULL;
	if (*p == '0') {
		if (is_digit(++p, end))
			return NULL;
	} else {
		p = skip_digits(p, end);
	}
	if (p < end && *p == '.') {
		if (!is_digit(++p, end))
			return NULL;
		p = skip_digits(p, end);
		real = true;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!is_digit(p, end))
			return NULL;
		p = skip_digits(p, end);
		real = true;
	}
	size_t n = (size_t)(p - start);
	if (n >= sizeof(buf))
		return NULL;
	memcpy(buf, start, n);
	buf[n] = '\0';
	s->p = p;
	errno = 0;
	if (real) {
		double d = strtod(buf, &stop);
		return errno || stop != buf + n ? NULL : json_real(d);
	}
	long long i = strtoll(buf, &stop, 10);
	return errno || stop != buf + n ? NULL : json_integer(i);
}

static void skip_space(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* The next non-space byte, or -1 at the end. */
static int scan_peek(struct scan *s)
{
	skip_space(s);
	return s->p < s->end ? *s->p : -1;
}

static bool literal(struct scan *s, const char *word, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	return true;
}

static json_t *scan_value(struct scan *s);

/* The members of an object whose '{' is behind s->p. */
static json_t *scan_object(struct scan *s)
{
	json_t *obj = json_object();
	const char *key;
	size_t klen;
	int c;

	if (!obj)
		return NULL;
	if (scan_peek(s) == '}') {
		s->p++;
		return obj;
	}
	for (;;) {
		if (scan_peek(s) != '"')
			break;
		s->p++;
		if (!scan_string(s, true, &key, &klen) || json_object_getn(obj, key, klen) ||
		    scan_peek(s) != ':')
			break;
		s->p++;
		skip_space(s);
		json_t *v = scan_value(s);
		if (!v || json_object_setn_new_nocheck(obj, key, klen, v) != 0)
			break;
		c = scan_peek(s);
		if (c != ',' && c != '}')
			break;
		s->p++;
		if (c == '}')
			return obj;
	}
	json_decref(obj);
	return NULL;
}

static json_t *scan_array(struct scan *s)
{
	json_t *arr = json_array();
	int c;

	if (!arr)
		return NULL;
	if (scan_peek(s) == ']') {
		s->p++;
		return arr;
	}
	for (;;) {
		skip_space(s);
		json_t *v = scan_value(s);
		if (!v || json_array_append_new(arr, v) != 0)
			break;
		c = scan_peek(s);
		if (c != ',' && c != ']')
			break;
		s->p++;
		if (c == ']')
			return arr;
	}
	json_decref(arr);
	return NULL;
}

/* The value at s->p (no space before it). */
static json_t *scan_value(struct scan *s)
{
	const char *str;
	size_t len;
	json_t *v = NULL;

	if (s->p == s->end || ++s->depth > SC_JSONSCAN_MAX_DEPTH)
		return NULL;
	switch (*s->p) {
	case '"':
		s->p++;
		if (scan_string(s, false, &str, &len))
			v = json_stringn_nocheck(str, len);
		break;
	case '{':
		s->p++;
		v = scan_object(s);
		break;
	case '[':
		s->p++;
		v = scan_array(s);
		break;
	case 't':
		v = literal(s, "true", 4) ? json_true() : NULL;
		break;
	case 'f':
		v = literal(s, "false", 5) ? json_false() : NULL;
		break;
	case 'n':
		v = literal(s, "null", 4) ? json_null() : NULL;
		break;
	default:
		v = scan_number(s);
		break;
	}
	s->depth--;
	return v;
}

json_t *sc_jsonscan_object(struct sc_jsonscan *js, const char *text, size_t len, size_t flags)
{
	struct scan s = {
		.p = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.js = js,
		.flags = flags,
		.depth = 1, /* the object itself */
	};
	json_t *obj;

	if (scan_peek(&s) != '{')
		return NULL;
	s.p++;
	obj = scan_object(&s);
	if (obj && scan_peek(&s) != -1) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

void sc_jsonscan_free(struct sc_jsonscan *js)
{
	free(js->buf);
	js->buf = NULL;
	js->cap = 0;
}
