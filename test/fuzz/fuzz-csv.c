/* libFuzzer target: sc-sink's CSV and TSV writer (cmd/sc-sink/csv.c),
 * round trip through readers written here: RFC 4180 for CSV, the backslash
 * escapes of sc-sink(1) for TSV.
 *
 * The input: a first byte of options (TSV or CSV, CRLF or LF, formula
 * escaping), then cells separated by 0xFF bytes, each a type byte and its
 * bytes: a string (as lossy UTF-8), an integer, a real, true, false, null,
 * or an array holding a string.  One record with those cells as members
 * c0, c1, ... is written with its header row.
 * The promise checked: reading the output back gives two rows, the header
 * (c0, c1, ...) and the record's cells: a string as it was (with the
 * apostrophe of formula escaping where it looks like a formula), an
 * integer in decimal, a real that reads back as the same double and still
 * reads as a real, true/false, an empty cell for null, the compact JSON of
 * an array. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "record/record.h"
#include "sc-sink/sink.h"

#define MAX_CELLS 64

struct cell {
	char *s;
	size_t n;
};

struct row {
	struct cell v[MAX_CELLS + 1];
	size_t n;
};

static void add(struct row *r, const char *s, size_t n)
{
	if (r->n > MAX_CELLS)
		fuzz_fail("more cells than were written");
	r->v[r->n].s = malloc(n + 1);
	memcpy(r->v[r->n].s, s, n);
	r->v[r->n].s[n] = '\0';
	r->v[r->n++].n = n;
}

/* One RFC 4180 row from *p: returns false at the end of the text. */
static bool csv_row(const char **p, const char *end, struct row *r)
{
	char *tmp = malloc((size_t)(end - *p) + 1);

	if (*p >= end) {
		free(tmp);
		return false;
	}
	for (;;) {
		size_t n = 0;
		if (*p < end && **p == '"') {
			for ((*p)++;; (*p)++) {
				if (*p >= end)
					fuzz_fail("a quoted cell does not end");
				if (**p == '"') {
					if (*p + 1 < end && (*p)[1] == '"')
						(*p)++;
					else
						break;
				}
				tmp[n++] = **p;
			}
			(*p)++;
			if (*p < end && **p != ',' && **p != '\r' && **p != '\n')
				fuzz_fail("text after a quoted cell: %.10s", *p);
		} else {
			while (*p < end && **p != ',' && **p != '\n' &&
			       !(**p == '\r' && *p + 1 < end && (*p)[1] == '\n')) {
				if (**p == '"')
					fuzz_fail("a double quote in an unquoted cell");
				tmp[n++] = *(*p)++;
			}
		}
		add(r, tmp, n);
		if (*p >= end)
			fuzz_fail("a row without its line end");
		if (**p == ',') {
			(*p)++;
			continue;
		}
		*p += **p == '\r' ? 2 : 1;
		free(tmp);
		return true;
	}
}

static bool tsv_row(const char **p, const char *end, struct row *r)
{
	char *tmp = malloc((size_t)(end - *p) + 1);
	size_t n = 0;

	if (*p >= end) {
		free(tmp);
		return false;
	}
	for (;; (*p)++) {
		if (*p >= end)
			fuzz_fail("a row without its line end");
		char c = **p;
		if (c == '\\') {
			static const char from[] = "tnr\\", to[] = "\t\n\r\\";
			const char *e = ++(*p) < end && **p ? strchr(from, **p) : NULL;
			if (!e)
				fuzz_fail("an unknown backslash escape");
			tmp[n++] = to[e - from];
		} else if (c == '\t' || c == '\n' ||
		           (c == '\r' && *p + 1 < end && (*p)[1] == '\n')) {
			add(r, tmp, n);
			n = 0;
			if (c == '\r')
				(*p)++;
			if (c != '\t') {
				(*p)++;
				free(tmp);
				return true;
			}
		} else if (c == '\r') {
			fuzz_fail("a raw CR in a TSV cell");
		} else {
			tmp[n++] = c;
		}
	}
}

static json_t *make_value(const uint8_t *d, size_t n)
{
	uint8_t type = n ? d[0] % 8 : 0;
	long long i = 0;
	double x = 0;

	if (n > 0) {
		d++;
		n--;
	}
	switch (type) {
	case 1:
		memcpy(&i, d, n < sizeof(i) ? n : sizeof(i));
		return json_integer(i);
	case 2:
		memcpy(&x, d, n < sizeof(x) ? n : sizeof(x));
		return json_real(isfinite(x) ? x : 0.5);
	case 3:
		return json_true();
	case 4:
		return json_false();
	case 5:
		return json_null();
	case 6:
		return json_pack("[o, i]", sc_json_string_lossy((const char *)d, n), 7);
	default:
		return sc_json_string_lossy((const char *)d, n);
	}
}

/* What the cell of v must read back as. */
static void check_cell(const json_t *v, const struct cell *c, bool escape)
{
	char want[64];
	const char *s = want;
	size_t n;

	switch (json_typeof(v)) {
	case JSON_STRING:
		s = json_string_value(v);
		n = json_string_length(v);
		if (escape && n > 0 && s[0] && strchr("=+-@\t\r", s[0])) {
			if (c->n != n + 1 || c->s[0] != '\'' || memcmp(c->s + 1, s, n) != 0)
				fuzz_fail("a formula-escaped string cell differs");
			return;
		}
		break;
	case JSON_INTEGER:
		n = (size_t)snprintf(want, sizeof(want), "%" JSON_INTEGER_FORMAT,
		                     json_integer_value(v));
		break;
	case JSON_REAL: {
		char *end;
		if (strtod(c->s, &end) != json_real_value(v) || *end || !strpbrk(c->s, ".eE"))
			fuzz_fail("real %.17g written as %s", json_real_value(v), c->s);
		return;
	}
	case JSON_TRUE:
	case JSON_FALSE:
		n = (size_t)snprintf(want, sizeof(want), "%s", json_is_true(v) ? "true" : "false");
		break;
	case JSON_NULL:
		n = 0;
		break;
	default: {
		char *dump = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (strlen(dump) != c->n || memcmp(dump, c->s, c->n) != 0)
			fuzz_fail("array written as %s, not %s", c->s, dump);
		free(dump);
		return;
	}
	}
	if (c->n != n || memcmp(c->s, s, n) != 0)
		fuzz_fail("cell \"%.*s\" read back as \"%s\"", (int)n, s, c->s);
}

static void free_row(struct row *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct csv_sink cs = { 0 };
	struct columns cols = { 0 };
	struct row header = { 0 }, row = { 0 };
	char name[16];
	size_t ncells = 0;

	if (size < 1 || size > 16384)
		return 0;
	cs.opts = (struct csv_opts){ .tsv = data[0] & 1,
		                     .header = true,
		                     .formula_escape = data[0] & 2,
		                     .crlf = data[0] & 4 };
	json_t *rec = json_object();
	for (size_t at = 1; at <= size && ncells < MAX_CELLS;) {
		const uint8_t *end = memchr(data + at, 0xff, size - at);
		size_t n = end ? (size_t)(end - data) - at : size - at;
		snprintf(name, sizeof(name), "c%zu", ncells++);
		json_object_set_new(rec, name, make_value(data + at, n));
		at += n + 1;
	}
	columns_from_record(&cols, rec);
	cs.out.mode = OUT_DIRECT;
	cs.out.fd = -1;
	sc_buf_init(&cs.out.buf, OUTFILE_MAX);
	if (csv_start(&cs, &cols) != 0 || csv_write(&cs, rec) != 0)
		fuzz_fail("csv_write failed");

	const char *p = cs.out.buf.p, *end = cs.out.buf.p + cs.out.buf.len;
	bool (*read_row)(const char **, const char *, struct row *) =
	        cs.opts.tsv ? tsv_row : csv_row;
	if (!read_row(&p, end, &header) || !read_row(&p, end, &row) || p != end)
		fuzz_fail("not two rows: %.*s", (int)cs.out.buf.len, cs.out.buf.p);
	if (header.n != ncells || row.n != ncells)
		fuzz_fail("%zu cells written, %zu and %zu read", ncells, header.n, row.n);
	for (size_t i = 0; i < ncells; i++) {
		snprintf(name, sizeof(name), "c%zu", i);
		if (strcmp(header.v[i].s, name) != 0)
			fuzz_fail("header cell %s read as %s", name, header.v[i].s);
		check_cell(json_object_get(rec, name), &row.v[i], cs.opts.formula_escape);
	}
	free_row(&header);
	free_row(&row);
	sc_buf_free(&cs.out.buf);
	columns_free(&cols);
	json_decref(rec);
	return 0;
}
