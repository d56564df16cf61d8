/* opt: the one option parser and the usage line, from tables (see opt.h). */
#include "kit/opt.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/protocol.h"
#include "core/util.h"

/* getopt_long's val for a row without a letter: above every char. */
#define VAL_BASE 0x100

/* The rows of all the sets, numbered in order, each with its set's base. */
struct row_ref {
	const struct sc_opt *row;
	void *base;
};

struct rows {
	struct row_ref *v; /* malloced */
	size_t n;
};

static struct rows gather(const struct sc_opt_set *sets, size_t nsets)
{
	struct rows all = { 0 };

	for (size_t s = 0; s < nsets; s++)
		for (const struct sc_opt *r = sets[s].rows; r->name; r++)
			all.n++;
	all.v = sc_calloc(all.n ? all.n : 1, sizeof(*all.v));
	all.n = 0;
	for (size_t s = 0; s < nsets; s++)
		for (const struct sc_opt *r = sets[s].rows; r->name; r++)
			all.v[all.n++] = (struct row_ref){ r, sets[s].base };
	return all;
}

/* A whole number into an int or a 64-bit integer, whichever the place is
 * (the row's bounds keep it in range); a place of another size is left
 * alone rather than overrun. */
static void store_whole(void *at, size_t size, long value)
{
	if (size == sizeof(int)) {
		int i = (int)value;
		memcpy(at, &i, sizeof(i));
	} else if (size == sizeof(int64_t)) {
		int64_t w = value;
		memcpy(at, &w, sizeof(w));
	}
}

static int read_whole(const struct sc_opt *row, const char *arg, long *out, char *err,
                      size_t errlen)
{
	char *end;

	if (!arg)
		return snprintf(err, errlen, "--%s: needs a whole number", row->name), -1;
	errno = 0;
	*out = strtol(arg, &end, 10);
	if (end == arg || *end != '\0')
		return snprintf(err, errlen, "--%s: '%s' is not a whole number", row->name, arg),
		       -1;
	if (errno == ERANGE || *out < row->whole.min || *out > row->whole.max)
		return snprintf(err, errlen, "--%s: '%s' is out of range (%ld..%ld)", row->name,
		                arg, row->whole.min, row->whole.max),
		       -1;
	return 0;
}

static int read_number(const struct sc_opt *row, const char *arg, double *out, char *err,
                       size_t errlen)
{
	char *end;

	if (!arg)
		return snprintf(err, errlen, "--%s: needs a number", row->name), -1;
	errno = 0;
	*out = strtod(arg, &end);
	if (end == arg || *end != '\0' || isnan(*out))
		return snprintf(err, errlen, "--%s: '%s' is not a number", row->name, arg), -1;
	if (errno == ERANGE || *out < row->number.min || *out > row->number.max)
		return snprintf(err, errlen, "--%s: '%s' is out of range (%g..%g)", row->name, arg,
		                row->number.min, row->number.max),
		       -1;
	return 0;
}

/* Applies one option: 0, or -1 with the error in err. */
static int apply(const struct row_ref *ref, const char *arg, char *err, size_t errlen)
{
	const struct sc_opt *row = ref->row;
	char *at = (char *)ref->base + row->offset;
	long whole;
	double number;

	/* Before any kind or call sees it (opt.h); a row with an argument
	 * is always given one. */
	if (row->arg && arg && !row->lines_ok && !sc_protocol_value_ok(arg, strlen(arg)))
		return snprintf(err, errlen, "--%s: %s", row->name, SC_PROTOCOL_VALUE_REFUSED), -1;
	switch (row->kind) {
	case SC_OPT_FLAG:
		memcpy(at, &(bool){ true }, sizeof(bool));
		return 0;
	case SC_OPT_WHOLE:
		if (read_whole(row, arg, &whole, err, errlen) != 0)
			return -1;
		store_whole(at, row->size, whole);
		return 0;
	case SC_OPT_NUMBER:
		if (read_number(row, arg, &number, err, errlen) != 0)
			return -1;
		memcpy(at, &number, sizeof(number));
		return 0;
	case SC_OPT_SECONDS:
		if (read_number(row, arg, &number, err, errlen) != 0)
			return -1;
		store_whole(at, row->size, (long)llround(number * 1000.0));
		return 0;
	case SC_OPT_STRING:
		*(const char **)at = arg;
		return 0;
	case SC_OPT_COPY:
		free(*(char **)at);
		*(char **)at = sc_strdup(arg);
		return 0;
	case SC_OPT_CALL:
		return row->call(ref->base, row, arg, err, errlen);
	case SC_OPT_HELP:
	case SC_OPT_VERSION:
		break;
	}
	return 0;
}

int sc_opt_store(const struct sc_opt *row, void *base, const char *arg, char *err, size_t errlen)
{
	const struct row_ref ref = { row, base };

	return apply(&ref, arg, err, errlen);
}

/* getopt_long's long options and short option string, from the rows. */
static struct option *getopt_tables(const struct rows *all, char **shorts)
{
	struct option *longs = sc_calloc(all->n + 1, sizeof(*longs));
	char *s = sc_malloc(2 + 3 * all->n);
	size_t k = 0;

	/* ':' first: a missing argument is told apart from an unknown option. */
	s[k++] = ':';
	for (size_t i = 0; i < all->n; i++) {
		const struct sc_opt *row = all->v[i].row;
		longs[i].name = row->name;
		longs[i].has_arg = !row->arg           ? no_argument
		                   : row->arg_optional ? optional_argument
		                                       : required_argument;
		longs[i].val = row->letter ? (unsigned char)row->letter : VAL_BASE + (int)i;
		if (row->letter) {
			s[k++] = row->letter;
			if (row->arg)
				s[k++] = ':';
			if (row->arg && row->arg_optional)
				s[k++] = ':';
		}
	}
	s[k] = '\0';
	*shorts = s;
	return longs;
}

static const struct row_ref *find(const struct rows *all, int val)
{
	if (val >= VAL_BASE)
		return (size_t)(val - VAL_BASE) < all->n ? &all->v[val - VAL_BASE] : NULL;
	for (size_t i = 0; i < all->n; i++)
		if (val != 0 && all->v[i].row->letter == val)
			return &all->v[i];
	return NULL;
}

/* "--re" matches more than one long name and is none of them: glibc's
 * message, which getopt gives only when it prints. */
static bool ambiguous(const struct rows *all, const char *given, char *err, size_t errlen)
{
	const char *name = given + 2;
	size_t len = strcspn(name, "="), matches = 0, used;

	for (size_t i = 0; i < all->n; i++) {
		if (strncmp(all->v[i].row->name, name, len) != 0)
			continue;
		if (all->v[i].row->name[len] == '\0')
			return false;
		matches++;
	}
	if (matches < 2)
		return false;
	used = (size_t)snprintf(err, errlen,
	                        "option '--%.*s' is ambiguous; possibilities:", (int)len, name);
	for (size_t i = 0; i < all->n && used < errlen; i++)
		if (strncmp(all->v[i].row->name, name, len) == 0)
			used += (size_t)snprintf(err + used, errlen - used, " '--%s'",
			                         all->v[i].row->name);
	return true;
}

/* getopt's complaint about argv[optind - 1] (or the cluster at argv[optind]),
 * in glibc's words.  opt is ':' (a missing argument) or '?'. */
static void getopt_error(const struct rows *all, int opt, char **argv, char *err, size_t errlen)
{
	const char *given = argv[optind - 1];
	const struct row_ref *known = find(all, optopt);

	if (opt == ':') {
		/* Only at the end of argv, so argv[optind - 1] is the option. */
		if (strncmp(given, "--", 2) == 0 && known)
			snprintf(err, errlen, "option '--%s' requires an argument",
			         known->row->name);
		else
			snprintf(err, errlen, "option requires an argument -- '%c'", optopt);
	} else if (optopt == 0) {
		/* Only a long option leaves optopt 0. */
		if (!ambiguous(all, given, err, errlen))
			snprintf(err, errlen, "unrecognized option '%.200s'", given);
	} else if (known) {
		/* A known option that was given an argument: a short one never is. */
		snprintf(err, errlen, "option '--%s' doesn't allow an argument", known->row->name);
	} else {
		snprintf(err, errlen, "invalid option -- '%c'", optopt);
	}
}

int sc_opt_parse(const struct sc_opt_set *sets, size_t n, int argc, char **argv, char *err,
                 size_t errlen)
{
	struct rows all = gather(sets, n);
	char *shorts;
	struct option *longs = getopt_tables(&all, &shorts);
	int opt, rc = 0;

	/* getopt prints nothing: its complaints are returned like every other
	 * usage error.  optind 0: a fresh start, should argv be read twice. */
	opterr = 0;
	optind = 0;
	while (rc == 0 && (opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct row_ref *ref = opt == ':' || opt == '?' ? NULL : find(&all, opt);
		if (!ref) {
			getopt_error(&all, opt, argv, err, errlen);
			rc = SC_OPT_PARSE_ERROR;
		} else if (ref->row->kind == SC_OPT_HELP) {
			rc = SC_OPT_PARSE_HELP;
		} else if (ref->row->kind == SC_OPT_VERSION) {
			rc = SC_OPT_PARSE_VERSION;
		} else if (apply(ref, optarg, err, errlen) != 0) {
			rc = SC_OPT_PARSE_ERROR;
		}
	}
	free(longs);
	free(shorts);
	free(all.v);
	return rc < 0 ? rc : optind;
}

/* The flags with a letter and no usage text of their own, as one item:
 * "[-hkqV]", in the order of the alphabet, a lower case letter first. */
static void add_flag_cluster(struct sc_buf *item, const struct rows *all)
{
	char letters[128];
	size_t k = 0;

	for (size_t i = 0; i < all->n && k < sizeof(letters) - 1; i++) {
		const struct sc_opt *row = all->v[i].row;
		if (row->letter && !row->arg && !row->usage)
			letters[k++] = row->letter;
	}
	for (size_t i = 1; i < k; i++) {
		for (size_t j = i; j > 0; j--) {
			int a = tolower((unsigned char)letters[j - 1]);
			int b = tolower((unsigned char)letters[j]);
			if (a < b || (a == b && islower((unsigned char)letters[j - 1])))
				break;
			char t = letters[j];
			letters[j] = letters[j - 1];
			letters[j - 1] = t;
		}
	}
	if (k > 0)
		sc_buf_printf(item, "[-%.*s]", (int)k, letters);
}

/* A row's words inside its brackets: "-c N", "--per-host N", "--keep-order". */
static void add_row_words(struct sc_buf *item, const struct sc_opt *row)
{
	if (row->letter)
		sc_buf_printf(item, "-%c", row->letter);
	else
		sc_buf_printf(item, "--%s", row->name);
	if (row->arg && row->arg_optional)
		sc_buf_printf(item, "[=%s]", row->arg);
	else if (row->arg)
		sc_buf_printf(item, " %s", row->arg);
}

/* One row's item: "[-c N]", "[--per-host N]", "[--keep-order]",
 * "[-H 'name: value']..."; or its own usage text. */
static void add_row_item(struct sc_buf *item, const struct sc_opt *row)
{
	if (row->usage) {
		sc_buf_adds(item, row->usage);
		return;
	}
	if (row->letter && !row->arg)
		return; /* in the cluster */
	sc_buf_addc(item, '[');
	add_row_words(item, row);
	sc_buf_adds(item, row->many ? "]..." : "]");
}

/* Two rows that exclude each other, as one item: "[--adaptive | --no-adaptive]". */
static void add_pair_item(struct sc_buf *item, const struct sc_opt *row, const struct sc_opt *next)
{
	sc_buf_addc(item, '[');
	add_row_words(item, row);
	sc_buf_adds(item, " | ");
	add_row_words(item, next);
	sc_buf_addc(item, ']');
}

/* Appends item to the usage, on a new line indented by indent when it would
 * pass column 79. */
static void add_wrapped(struct sc_buf *out, size_t *column, size_t indent, struct sc_buf *item)
{
	if (item->len == 0)
		return;
	if (*column > indent && *column + 1 + item->len > 79) {
		sc_buf_printf(out, "\n%*s", (int)indent, "");
		*column = indent;
	} else if (*column > indent) {
		sc_buf_addc(out, ' ');
		(*column)++;
	}
	sc_buf_add(out, item->p, item->len);
	*column += item->len;
	sc_buf_reset(item);
}

char *sc_opt_usage(const struct sc_opt_set *sets, size_t n, const char *operands, const char *more)
{
	return sc_opt_usage_of(sc_progname, sets, n, operands, more);
}

char *sc_opt_usage_of(const char *progname, const struct sc_opt_set *sets, size_t n,
                      const char *operands, const char *more)
{
	struct rows all = gather(sets, n);
	struct sc_buf out, item;
	size_t column, indent;

	sc_buf_init(&out, SIZE_MAX / 2);
	sc_buf_init(&item, SIZE_MAX / 2);
	sc_buf_printf(&out, "usage: %s ", progname);
	indent = column = out.len;
	add_flag_cluster(&item, &all);
	add_wrapped(&out, &column, indent, &item);
	for (size_t i = 0; i < all.n; i++) {
		const struct sc_opt *row = all.v[i].row;
		if (row->or_next && i + 1 < all.n && !row->usage)
			add_pair_item(&item, row, all.v[++i].row);
		else
			add_row_item(&item, row);
		add_wrapped(&out, &column, indent, &item);
	}
	if (operands) {
		sc_buf_adds(&item, operands);
		add_wrapped(&out, &column, indent, &item);
	}
	sc_buf_addc(&out, '\n');
	if (more)
		sc_buf_adds(&out, more);
	sc_buf_free(&item);
	free(all.v);
	return sc_buf_take(&out, NULL);
}
