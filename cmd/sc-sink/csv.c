/* csv: records as CSV (RFC 4180 quoting) or TSV (backslash escapes).
 *
 * A cell is quoted only when it must be: it holds a comma, a double quote,
 * CR or LF (or it was formula-escaped).  Strings are written as they are
 * (UTF-8), numbers in the shortest form that reads back the same, booleans
 * as true/false, null and missing values as an empty cell, objects and
 * arrays as compact JSON. */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

#define HEADER_READ_MAX ((size_t)1 << 20)

/* Characters that force a CSV cell into quotes. */
static const unsigned char csv_special[256] = {
	[','] = 1,
	['"'] = 1,
	['\n'] = 1,
	['\r'] = 1,
};
/* Characters a TSV cell writes as a backslash escape, and their letter. */
static const char tsv_escape[256] = {
	['\t'] = 't',
	['\n'] = 'n',
	['\r'] = 'r',
	['\\'] = '\\',
};

/* OWASP's CSV injection advice: a cell a spreadsheet would take for a
 * formula gets a leading apostrophe. */
static bool looks_like_formula(const char *s, size_t n)
{
	return n > 0 && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' ||
	                 s[0] == '\r');
}

static void put_csv_text(struct outfile *o, const char *s, size_t n, bool formula_escape)
{
	bool escape = formula_escape && looks_like_formula(s, n);
	bool quote = escape;
	char *p;

	for (size_t i = 0; i < n && !quote; i++)
		quote = csv_special[(unsigned char)s[i]];
	if (!quote) {
		outfile_put(o, s, n);
		return;
	}
	p = outfile_reserve(o, 2 * n + 3);
	char *start = p;
	*p++ = '"';
	if (escape)
		*p++ = '\'';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			*p++ = '"';
		*p++ = s[i];
	}
	*p++ = '"';
	outfile_advance(o, (size_t)(p - start));
}

static void put_tsv_text(struct outfile *o, const char *s, size_t n, bool formula_escape)
{
	char *p = outfile_reserve(o, 2 * n + 1), *start = p;

	if (formula_escape && looks_like_formula(s, n))
		*p++ = '\'';
	for (size_t i = 0; i < n; i++) {
		char e = tsv_escape[(unsigned char)s[i]];
		if (e) {
			*p++ = '\\';
			*p++ = e;
		} else {
			*p++ = s[i];
		}
	}
	outfile_advance(o, (size_t)(p - start));
}

static void put_text(struct csv_sink *cs, const char *s, size_t n)
{
	if (cs->opts.tsv)
		put_tsv_text(&cs->out, s, n, cs->opts.formula_escape);
	else
		put_csv_text(&cs->out, s, n, cs->opts.formula_escape);
}

static void put_integer(struct outfile *o, json_int_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	outfile_put(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* A real written as %.15g writes it, when that is fixed notation of a
 * decimal with at most 6 fraction digits and 15 significant digits that
 * reads back as v (the usual case: 123.456, 0.25): the digits are those of
 * the integer m = v * 10^k.  Returns the length written to out (at least
 * 24 bytes), or 0 when v needs the general path.  Why this matches %.15g:
 * v is the double nearest to m / 10^k, within 2^-53 of it relatively,
 * while 15-digit decimals lie at least 10^-15 apart relatively, so %.15g
 * rounds v back to exactly m / 10^k. */
static size_t real_fixed(char *out, double v)
{
	static const double pow10[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
	double a = v < 0 ? -v : v;

	if (!(a >= 1e-4 && a < 1e15))
		return 0;
	for (int k = 0; k < (int)(sizeof(pow10) / sizeof(pow10[0])); k++) {
		double s = a * pow10[k];
		if (s >= 1e15)
			return 0;
		double m = nearbyint(s);
		if (m / pow10[k] != a)
			continue;
		char digits[24], *p = digits + sizeof(digits), *o = out;
		unsigned long long u = (unsigned long long)m;
		int frac = k;
		while (frac > 0 && u % 10 == 0) { /* trailing zeros go, as in %g */
			u /= 10;
			frac--;
		}
		int n = 0;
		do {
			*--p = (char)('0' + u % 10);
			n++;
		} while ((u /= 10) || n <= frac);
		if (v < 0)
			*o++ = '-';
		memcpy(o, p, (size_t)(n - frac));
		o += n - frac;
		*o++ = '.';
		if (frac == 0) {
			*o++ = '0'; /* a whole real stays a real: 285.0 */
		} else {
			memcpy(o, p + n - frac, (size_t)frac);
			o += frac;
		}
		return (size_t)(o - out);
	}
	return 0;
}

/* The shortest %g that reads back as the same double. */
static void put_real(struct outfile *o, double v)
{
	char tmp[40];
	int n = 0;

	size_t fixed = real_fixed(tmp, v);
	if (fixed > 0) {
		outfile_put(o, tmp, fixed);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	/* A real that is whole stays a real, as it was written: 285.0, not 285. */
	if (strspn(tmp, "-0123456789") == (size_t)n && n + 2 < (int)sizeof(tmp)) {
		memcpy(tmp + n, ".0", 3);
		n += 2;
	}
	outfile_put(o, tmp, (size_t)n);
}

static int dump_append(const char *buffer, size_t size, void *data)
{
	return sc_buf_add(data, buffer, size) == 0 ? 0 : -1;
}

static void put_value(struct csv_sink *cs, const json_t *v)
{
	/* Reused for objects and arrays; the largest one is kept. */
	static struct sc_buf scratch = { .max = OUTFILE_MAX };

	switch (json_typeof(v)) {
	case JSON_STRING:
		put_text(cs, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		put_integer(&cs->out, json_integer_value(v));
		break;
	case JSON_REAL:
		put_real(&cs->out, json_real_value(v));
		break;
	case JSON_TRUE:
		outfile_put(&cs->out, "true", 4);
		break;
	case JSON_FALSE:
		outfile_put(&cs->out, "false", 5);
		break;
	case JSON_NULL:
		break;
	case JSON_OBJECT:
	case JSON_ARRAY:
		sc_buf_reset(&scratch);
		if (json_dump_callback(v, dump_append, &scratch,
		                       JSON_COMPACT | JSON_PRESERVE_ORDER) != 0)
			cs->out.too_big = true; /* the record fails at its end */
		put_text(cs, scratch.p ? scratch.p : "", scratch.len);
		break;
	}
}

static void put_eol(struct csv_sink *cs)
{
	if (cs->opts.crlf)
		outfile_put(&cs->out, "\r\n", 2);
	else
		outfile_put(&cs->out, "\n", 1);
}

int csv_start(struct csv_sink *cs, const struct columns *cols)
{
	char sep = cs->opts.tsv ? '\t' : ',';

	if (!cs->cols)
		cs->cols = cols;
	if (!cs->opts.header || cs->out.had_content)
		return 0;
	for (size_t i = 0; i < cs->cols->n; i++) {
		if (i > 0)
			outfile_put(&cs->out, &sep, 1);
		put_text(cs, cs->cols->v[i].name, strlen(cs->cols->v[i].name));
	}
	put_eol(cs);
	return outfile_record_end(&cs->out);
}

int csv_write(struct csv_sink *cs, const json_t *rec)
{
	char sep = cs->opts.tsv ? '\t' : ',';

	for (size_t i = 0; i < cs->cols->n; i++) {
		json_t *v = column_value(&cs->cols->v[i], rec);
		if (i > 0)
			outfile_put(&cs->out, &sep, 1);
		if (v)
			put_value(cs, v);
	}
	put_eol(cs);
	return outfile_record_end(&cs->out);
}

/* The character a TSV backslash escape stands for. */
static char tsv_unescape(char e)
{
	switch (e) {
	case 't':
		return '\t';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	default:
		return e;
	}
}

/* Splits the first row of text into names, reading CSV quotes or TSV
 * escapes.  Returns the number of names; *names is malloced, as each name. */
static size_t split_header(const char *text, size_t len, bool tsv, char ***names)
{
	size_t n = 0, cap = 0, i = 0;
	char *cell = sc_malloc(len + 1);
	size_t clen;
	bool quoted, end = false;

	*names = NULL;
	while (!end) {
		clen = 0;
		quoted = !tsv && i < len && text[i] == '"';
		if (quoted)
			i++;
		for (; i < len; i++) {
			char c = text[i];
			if (quoted) {
				if (c == '"' && i + 1 < len && text[i + 1] == '"') {
					cell[clen++] = '"';
					i++;
				} else if (c == '"') {
					quoted = false;
				} else {
					cell[clen++] = c;
				}
			} else if (c == (tsv ? '\t' : ',')) {
				i++;
				break;
			} else if (c == '\n' || c == '\r') {
				end = true;
				break;
			} else if (tsv && c == '\\' && i + 1 < len) {
				cell[clen++] = tsv_unescape(text[++i]);
			} else {
				cell[clen++] = c;
			}
		}
		if (i >= len)
			end = true;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			*names = sc_realloc(*names, cap * sizeof(**names));
		}
		(*names)[n++] = sc_strndup(cell, clen);
	}
	free(cell);
	return n;
}

int csv_read_header(struct csv_sink *cs, char *errbuf, size_t errlen)
{
	char *text, **names;
	ssize_t got;
	size_t n;
	int fd;

	if (cs->out.mode != OUT_APPEND || !cs->out.had_content || !cs->opts.header)
		return 0;
	fd = open(cs->out.target, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(errbuf, errlen, "%s: %s", cs->out.path, strerror(errno));
		return -1;
	}
	text = sc_malloc(HEADER_READ_MAX);
	got = pread(fd, text, HEADER_READ_MAX, 0);
	close(fd);
	if (got <= 0) {
		snprintf(errbuf, errlen, "%s: cannot read the header: %s", cs->out.path,
		         got < 0 ? strerror(errno) : "empty");
		free(text);
		return -1;
	}
	n = split_header(text, (size_t)got, cs->opts.tsv, &names);
	free(text);
	columns_from_names(&cs->own, names, n);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	cs->cols = &cs->own;
	return 1;
}
