/* scan: one metrics line into a struct mline.  A strict JSON reader that
 * keeps only the members sc-report uses and allocates nothing per line:
 * building a jansson tree for each of a million lines (even through
 * lib/record/jsonscan, which builds jansson's values) would cost more than
 * the whole report.  The other readers: jansson, lib/record/jsonscan (the
 * records) and lib/warc/json (JavaScript's semantics, for WARC POST keys);
 * lib/record/jsonscan.h says why each is apart.  Its escapes are decoded
 * with core's hex and UTF-8 (core/hex.h, core/utf8.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/utf8.h"
#include "core/util.h"
#include "report.h"

struct cur {
	const char *p, *end;
	struct scanner *s;
	size_t used; /* scratch bytes used by this line */
	const char *err;
};

#define MAX_DEPTH 32

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool fail(struct cur *c, const char *why)
{
	if (!c->err)
		c->err = why;
	return false;
}

static bool expect(struct cur *c, char ch)
{
	ws(c);
	if (c->p >= c->end || *c->p != ch)
		return fail(c, "not valid JSON");
	c->p++;
	return true;
}

/* The rest of a string with escapes, from q (after the opening quote),
 * unescaped into the scratch space (which has room for the whole line). */
static bool unescape(struct cur *c, const char *q, struct sv *out)
{
	char *o = c->s->scratch + c->used;
	size_t k = 0;

	while (q < c->end && *q != '"') {
		if ((unsigned char)*q < 0x20)
			return fail(c, "control character in a string");
		if (*q != '\\') {
			o[k++] = *q++;
			continue;
		}
		if (++q >= c->end)
			break;
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *e = strchr(from, *q);
		if (e && *q) {
			o[k++] = to[e - from];
			q++;
			continue;
		}
		if (*q != 'u' || c->end - q < 5)
			return fail(c, "bad escape in a string");
		long v = sc_hex4(q + 1);
		if (v < 0)
			return fail(c, "bad escape in a string");
		q += 5;
		/* A surrogate stays as it is (its three bytes): names only. */
		k = (size_t)(sc_utf8_put(o + k, (unsigned long)v) - o);
	}
	if (q >= c->end)
		return fail(c, "unterminated string");
	out->p = o;
	out->n = k;
	c->used += k;
	c->p = q + 1;
	return true;
}

static bool string(struct cur *c, struct sv *out)
{
	if (!expect(c, '"'))
		return false;
	/* memchr twice (SIMD in libc) beats a loop over each byte. */
	const char *q = memchr(c->p, '"', (size_t)(c->end - c->p));
	if (!q)
		return fail(c, "unterminated string");
	const char *bs = memchr(c->p, '\\', (size_t)(q - c->p));
	if (!bs) {
		/* A raw control character is let through here (checking each
		 * byte would cost a fifth of the run); sc-fetch never writes one. */
		out->p = c->p;
		out->n = (size_t)(q - c->p);
		c->p = q + 1;
		return true;
	}
	size_t head = (size_t)(bs - c->p);
	memcpy(c->s->scratch + c->used, c->p, head);
	c->used += head;
	struct sv rest;
	if (!unescape(c, bs, &rest))
		return false;
	out->p = rest.p - head;
	out->n = head + rest.n;
	return true;
}

/* A JSON number; the common short decimal without strtod. */
static bool number(struct cur *c, double *v)
{
	ws(c);
	const char *q = c->p, *start = q;
	bool neg = q < c->end && *q == '-';
	q += neg;
	if (q >= c->end || *q < '0' || *q > '9')
		return fail(c, "not valid JSON");
	if (*q == '0' && q + 1 < c->end && q[1] >= '0' && q[1] <= '9')
		return fail(c, "not valid JSON");
	uint64_t mant = 0;
	int digits = 0, scale = 0;
	for (; q < c->end && *q >= '0' && *q <= '9'; q++, digits++)
		mant = mant * 10 + (uint64_t)(*q - '0');
	if (q < c->end && *q == '.') {
		if (++q >= c->end || *q < '0' || *q > '9')
			return fail(c, "not valid JSON");
		for (; q < c->end && *q >= '0' && *q <= '9'; q++, digits++, scale++)
			mant = mant * 10 + (uint64_t)(*q - '0');
	}
	bool slow = digits > 15 || scale > 8;
	if (q < c->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < c->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= c->end || *q < '0' || *q > '9')
			return fail(c, "not valid JSON");
		while (q < c->end && *q >= '0' && *q <= '9')
			q++;
		slow = true;
	}
	static const double pow10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8 };
	if (slow) {
		char tmp[64];
		size_t n = (size_t)(q - start);
		if (n >= sizeof(tmp))
			n = sizeof(tmp) - 1;
		memcpy(tmp, start, n);
		tmp[n] = '\0';
		*v = strtod(tmp, NULL);
	} else {
		*v = (neg ? -(double)mant : (double)mant) / pow10[scale];
	}
	c->p = q;
	return true;
}

static bool literal(struct cur *c, const char *word)
{
	size_t n = strlen(word);

	ws(c);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return fail(c, "not valid JSON");
	c->p += n;
	return true;
}

static bool skip_value(struct cur *c, int depth);

static bool skip_container(struct cur *c, int depth, char close)
{
	if (depth > MAX_DEPTH)
		return fail(c, "nested too deep");
	c->p++;
	ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return true;
	}
	for (;;) {
		struct sv key;
		if (close == '}' && (!string(c, &key) || !expect(c, ':')))
			return false;
		if (!skip_value(c, depth + 1))
			return false;
		ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		return expect(c, close);
	}
}

static bool skip_value(struct cur *c, int depth)
{
	struct sv sv;
	double d;

	ws(c);
	if (c->p >= c->end)
		return fail(c, "not valid JSON");
	switch (*c->p) {
	case '{':
		return skip_container(c, depth, '}');
	case '[':
		return skip_container(c, depth, ']');
	case '"':
		return string(c, &sv);
	case 't':
		return literal(c, "true");
	case 'f':
		return literal(c, "false");
	case 'n':
		return literal(c, "null");
	default:
		return number(c, &d);
	}
}

static bool peek(struct cur *c, char ch)
{
	ws(c);
	return c->p < c->end && *c->p == ch;
}

/* A number, or null (as 0). */
static bool number_or_null(struct cur *c, double *v)
{
	*v = 0;
	if (peek(c, 'n'))
		return literal(c, "null");
	return number(c, v);
}

/* Members of an object: each key handed to member(), which reads its value. */
typedef bool (*member_fn)(struct cur *c, struct sv key, struct mline *m);

static bool object(struct cur *c, member_fn member, struct mline *m)
{
	if (!expect(c, '{'))
		return false;
	if (peek(c, '}')) {
		c->p++;
		return true;
	}
	for (;;) {
		struct sv key;
		if (!string(c, &key) || !expect(c, ':') || !member(c, key, m))
			return false;
		ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		return expect(c, '}');
	}
}

static bool is_n(struct sv key, const char *name, size_t n)
{
	return key.n == n && memcmp(key.p, name, n) == 0;
}
/* A member name against a literal, its length known at compile time. */
#define is(key, lit) is_n((key), "" lit, sizeof(lit) - 1)

static bool timing_member(struct cur *c, struct sv key, struct mline *m)
{
	static const struct {
		const char *name;
		size_t len;
	} names[T_COUNT] = { { "queue_ms", 8 }, { "dns_ms", 6 },  { "connect_ms", 10 },
		             { "tls_ms", 6 },   { "ttfb_ms", 7 }, { "total_ms", 8 } };
	for (int i = 0; i < T_COUNT; i++)
		if (is_n(key, names[i].name, names[i].len))
			return number_or_null(c, &m->timing[i]);
	return skip_value(c, 1);
}

static bool record_errors_member(struct cur *c, struct sv key, struct mline *m)
{
	if (is(key, "robots"))
		return number(c, &m->robots_refused);
	return skip_value(c, 1);
}

static int kind_of(struct sv name);

/* A record's error, {"kind": ..., "message": ...}: its kind. */
static bool record_error_member(struct cur *c, struct sv key, struct mline *m)
{
	struct sv v;

	if (!is(key, "kind"))
		return skip_value(c, 1);
	if (!string(c, &v))
		return false;
	m->kind = kind_of(v);
	return true;
}

static int kind_of(struct sv name)
{
	char tmp[32];

	if (name.n >= sizeof(tmp))
		return KIND_OTHER;
	memcpy(tmp, name.p, name.n);
	tmp[name.n] = '\0';
	int k = sc_error_kind_from_name(tmp);
	return k < 0 ? KIND_OTHER : k;
}

static int reason_of(struct sv name)
{
	for (int i = 0; i < TR_OTHER; i++)
		if (is_n(name, throttle_reason_name(i), strlen(throttle_reason_name(i))))
			return i;
	return TR_OTHER;
}

static bool limit_value(struct cur *c, struct mline *m)
{
	if (!peek(c, '['))
		return skip_value(c, 1);
	c->p++;
	if (!number_or_null(c, &m->limit_old) || !expect(c, ',') ||
	    !number_or_null(c, &m->limit_new) || !expect(c, ']'))
		return false;
	m->has_limit = true;
	return true;
}

static bool event_value(struct cur *c, struct mline *m)
{
	struct sv v;

	if (!string(c, &v))
		return false;
	m->event = is(v, "request")    ? EV_REQUEST
	           : is(v, "summary")  ? EV_SUMMARY
	           : is(v, "throttle") ? EV_THROTTLE
	                               : EV_OTHER;
	return true;
}

static bool string_or_null(struct cur *c, struct sv *v)
{
	v->p = NULL;
	v->n = 0;
	if (peek(c, 'n'))
		return literal(c, "null");
	return string(c, v);
}

/* The numbers of the top level, by name. */
static double *top_number(struct sv key, struct mline *m)
{
	if (is(key, "latency_ms"))
		return &m->latency_ms;
	if (is(key, "bytes"))
		return &m->bytes;
	if (is(key, "attempt"))
		return &m->attempt;
	return NULL;
}

static bool status_value(struct cur *c, struct mline *m)
{
	double st;

	if (!number_or_null(c, &st))
		return false;
	m->status = st >= 100 && st < 600 ? (int)st : 0;
	return true;
}

static bool error_value(struct cur *c, struct mline *m)
{
	struct sv v;

	if (!string_or_null(c, &v))
		return false;
	m->kind = v.p ? kind_of(v) : -1;
	return true;
}

static bool strings_member(struct cur *c, struct sv key, struct mline *m, bool *done)
{
	struct sv v = { 0 };

	*done = true;
	if (is(key, "ts")) {
		if (!string(c, &v))
			return false;
		m->has_ts = parse_rfc3339_ms(v.p, v.n, &m->ts_ms);
		return true;
	}
	if (is(key, "host") || is(key, "origin"))
		return string(c, &m->host);
	if (is(key, "next"))
		return string(c, &m->next);
	if (is(key, "url"))
		return string(c, &m->url);
	if (is(key, "reason")) {
		if (!string(c, &v))
			return false;
		m->reason = reason_of(v);
		return true;
	}
	*done = false;
	return true;
}

/* A value that is an object or an array where a number or a string is
 * looked for: another event's member of the same name (a summary's
 * "status" and "latency_ms" are objects), passed over. */
static bool container_ahead(struct cur *c)
{
	return peek(c, '{') || peek(c, '[');
}

static bool top_member(struct cur *c, struct sv key, struct mline *m)
{
	double *num = top_number(key, m);
	bool done;

	if (is(key, "error") && peek(c, '{'))
		return object(c, record_error_member, m);
	if (container_ahead(c) && !is(key, "timing") && !is(key, "limit") &&
	    !is(key, "record_errors"))
		return skip_value(c, 1);
	if (num)
		return number_or_null(c, num);
	if (!strings_member(c, key, m, &done) || done)
		return !c->err;
	if (is(key, "event"))
		return event_value(c, m);
	if (is(key, "status"))
		return status_value(c, m);
	if (is(key, "error"))
		return error_value(c, m);
	if (is(key, "timing")) {
		m->has_timing = true;
		return object(c, timing_member, m);
	}
	if (is(key, "robots") && (peek(c, 't') || peek(c, 'f'))) {
		m->robots = peek(c, 't');
		return literal(c, m->robots ? "true" : "false");
	}
	if (is(key, "ok") && (peek(c, 't') || peek(c, 'f'))) {
		m->has_ok = true;
		return literal(c, peek(c, 't') ? "true" : "false");
	}
	if (is(key, "final") && (peek(c, 't') || peek(c, 'f'))) {
		m->final = peek(c, 't');
		return literal(c, m->final ? "true" : "false");
	}
	if (is(key, "limit"))
		return limit_value(c, m);
	if (is(key, "record_errors") && peek(c, '{'))
		return object(c, record_errors_member, m);
	return skip_value(c, 1);
}

bool scan_line(struct scanner *s, const char *text, size_t len, struct mline *m, char *why,
               size_t whylen)
{
	struct cur c = { .p = text, .end = text + len, .s = s };

	if (s->cap < len + 1) {
		s->cap = len + 1 > 4096 ? len + 1 : 4096;
		free(s->scratch);
		s->scratch = sc_malloc(s->cap);
	}
	memset(m, 0, sizeof(*m));
	m->kind = -1;
	m->reason = TR_OTHER;
	if (object(&c, top_member, m)) {
		ws(&c);
		if (m->event == EV_NONE && m->has_ok && m->url.p)
			m->event = EV_RECORD;
		if (c.p == c.end)
			return true;
		fail(&c, "text after the JSON object");
	}
	snprintf(why, whylen, "%s at byte %zu", c.err ? c.err : "not valid JSON",
	         (size_t)(c.p - text) + 1);
	return false;
}

void scanner_free(struct scanner *s)
{
	free(s->scratch);
	s->scratch = NULL;
	s->cap = 0;
}

const char *throttle_reason_name(int reason)
{
	static const char *const names[TR_COUNT] = { "429",         "503",     "timeout", "latency",
		                                     "retry_after", "recover", "other" };
	return reason >= 0 && reason < TR_COUNT ? names[reason] : "other";
}

const char *kind_name(int kind)
{
	return kind == KIND_OTHER ? "other" : sc_error_kind_name(kind);
}

/* Days from 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned mo, unsigned d)
{
	y -= mo <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char *p, int n, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		*v = *v * 10 + (unsigned)(p[i] - '0');
	}
	return true;
}

bool parse_rfc3339_ms(const char *p, size_t n, double *ms)
{
	unsigned y, mo, d, h, mi, sec, frac = 0, scale = 1;

	if (n < 20 || !digits(p, 4, &y) || p[4] != '-' || !digits(p + 5, 2, &mo) || p[7] != '-' ||
	    !digits(p + 8, 2, &d) || (p[10] != 'T' && p[10] != 't') || !digits(p + 11, 2, &h) ||
	    p[13] != ':' || !digits(p + 14, 2, &mi) || p[16] != ':' || !digits(p + 17, 2, &sec))
		return false;
	size_t i = 19;
	if (p[i] == '.') {
		for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			if (scale < 1000000) {
				frac = frac * 10 + (unsigned)(p[i] - '0');
				scale *= 10;
			}
	}
	if (i + 1 != n || (p[i] != 'Z' && p[i] != 'z') || mo < 1 || mo > 12 || d < 1 || d > 31)
		return false;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	*ms = (double)secs * 1000.0 + (double)frac * 1000.0 / scale;
	return true;
}
