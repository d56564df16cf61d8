/* Unit tests for lib/kit/opt: each kind stored in its place, the bounds
 * and their messages, getopt's errors in glibc's words, help and version,
 * and the usage line made from the rows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kit/opt.h"
#include "tap.h"

struct opts {
	bool flag;
	long whole;
	int small;
	int64_t wide;
	double number;
	long ms;
	const char *string;
	char *copy;
	int calls;
};

static int count_call(void *base, const struct sc_opt *row, const char *arg, char *err,
                      size_t errlen)
{
	struct opts *o = base;

	if (strcmp(arg, "bad") == 0)
		return snprintf(err, errlen, "--%s: '%s' is bad", row->name, arg), -1;
	o->calls += row->tag;
	return 0;
}

#define AT(member) SC_OPT_AT(struct opts, member)

static const struct sc_opt rows[] = {
	SC_OPT_ROW_FLAG("flag", 'f', AT(flag)),
	SC_OPT_ROW_WHOLE("whole", 'w', "N", AT(whole), 1, 100),
	SC_OPT_ROW_WHOLE("small", 0, "n", AT(small), -5, 5),
	SC_OPT_ROW_WHOLE("wide", 0, "n", AT(wide), 0, 0x7fffffffffffffffL),
	SC_OPT_ROW_NUMBER("number", 0, "R", AT(number), 0, 1e6),
	SC_OPT_ROW_SECONDS("secs", 0, "secs", AT(ms), 0, 86400),
	SC_OPT_ROW_STRING("string", 0, "name", AT(string)),
	SC_OPT_ROW_COPY("copy", 0, "file", AT(copy)),
	SC_OPT_ROW_CALLS("call", 'C', "x", count_call, 10),
	{ .name = "hidden", .kind = SC_OPT_FLAG, AT(flag), .usage = "" },
	SC_OPT_ROW_HELP(NULL),
	SC_OPT_ROW_VERSION(NULL),
	{ 0 },
};

/* Parses the words of line (at most 31) into o; returns what sc_opt_parse
 * returns, the error in err.  The words stay until the next call: a
 * string option borrows its argument from argv, as from main's. */
static int parse(struct opts *o, const char *line, char err[256])
{
	static char copy[1024];
	char *argv[32] = { "prog" }, *save = NULL;
	int argc = 1;

	if (snprintf(copy, sizeof(copy), "%s", line) >= (int)sizeof(copy))
		abort();
	const struct sc_opt_set sets[] = { { rows, o } };

	for (char *w = strtok_r(copy, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	*err = '\0';
	return sc_opt_parse(sets, 1, argc, argv, err, 256);
}

static void test_kinds(void)
{
	struct opts o = { 0 };
	char err[256];

	is_int(parse(&o,
	             "-f -w 7 --small -5 --wide 9223372036854775807 --number 2.5 --secs 1.5 "
	             "--string s --copy a --copy b -C 1 --call 2",
	             err),
	       22, "every option read; the first operand is argc");
	ok(o.flag, "a flag is set");
	is_int(o.whole, 7, "a whole number into a long");
	is_int(o.small, -5, "a whole number into an int");
	ok(o.wide == INT64_MAX, "a whole number into a 64-bit integer");
	ok(o.number == 2.5, "a number");
	is_int(o.ms, 1500, "seconds as milliseconds");
	ok(o.string && strcmp(o.string, "s") == 0, "a string borrowed");
	is_str(o.copy, "b", "a copy: the last one wins");
	is_int(o.calls, 20, "a call for each time given");
	free(o.copy);
}

static void test_errors(void)
{
	struct opts o = { 0 };
	char err[256];

	is_int(parse(&o, "-w 0", err), SC_OPT_PARSE_ERROR, "out of range");
	is_str(err, "--whole: '0' is out of range (1..100)", "its message names the long option");
	parse(&o, "--whole 1.5", err);
	is_str(err, "--whole: '1.5' is not a whole number", "not a whole number");
	parse(&o, "--number x", err);
	is_str(err, "--number: 'x' is not a number", "not a number");
	parse(&o, "--number -1", err);
	is_str(err, "--number: '-1' is out of range (0..1e+06)", "a number out of range");
	parse(&o, "--secs nan", err);
	is_str(err, "--secs: 'nan' is not a number", "NaN is no number");
	parse(&o, "--call bad", err);
	is_str(err, "--call: 'bad' is bad", "a call's own error");
	parse(&o, "--nope", err);
	is_str(err, "unrecognized option '--nope'", "an unknown long option");
	parse(&o, "-fZ", err);
	is_str(err, "invalid option -- 'Z'", "an unknown letter");
	parse(&o, "--whole", err);
	is_str(err, "option '--whole' requires an argument", "a long option without its argument");
	parse(&o, "-w", err);
	is_str(err, "option requires an argument -- 'w'", "a letter without its argument");
	parse(&o, "--flag=1", err);
	is_str(err, "option '--flag' doesn't allow an argument", "a flag given an argument");
	parse(&o, "--s 1", err);
	is_str(err, "option '--s' is ambiguous; possibilities: '--small' '--secs' '--string'",
	       "an ambiguous abbreviation");
	is_int(parse(&o, "--wh 5", err), 3, "an unambiguous abbreviation");
	is_int(o.whole, 5, "is the option");
}

/* No argument holds a CR, LF or NUL (core/protocol.h), whatever its kind,
 * but a row's that says lines_ok; the value is never stored. */
static void test_line_breaks(void)
{
	struct opts o = { 0 };
	char err[256];
	const struct sc_opt selector = { .name = "selector",
		                         .kind = SC_OPT_STRING,
		                         .arg = "s",
		                         SC_OPT_AT(struct opts, string),
		                         .lines_ok = true };

	is_int(parse(&o, "--string a\r\nX-Evil:1", err), SC_OPT_PARSE_ERROR, "CR LF in a string");
	is_str(err, "--string: a value may not hold a CR, LF or NUL", "in the one words");
	ok(o.string == NULL, "and not stored");
	parse(&o, "--copy a\nb", err);
	is_str(err, "--copy: a value may not hold a CR, LF or NUL", "LF in a copy");
	ok(o.copy == NULL, "not copied");
	parse(&o, "-C a\rb", err);
	is_str(err, "--call: a value may not hold a CR, LF or NUL", "CR before a call sees it");
	is_int(o.calls, 0, "the call was not made");
	parse(&o, "-w 5\n", err);
	is_str(err, "--whole: a value may not hold a CR, LF or NUL", "a number's too");
	parse(&o, "--string=a\nb", err);
	is_str(err, "--string: a value may not hold a CR, LF or NUL", "given with =");
	is_int(sc_opt_store(&rows[6], &o, "a\r\nb", err, sizeof(err)), -1,
	       "sc_opt_store (libsc's setter) refuses it too");
	is_str(err, "--string: a value may not hold a CR, LF or NUL", "in the same words");
	is_int(sc_opt_store(&selector, &o, "div\n  p", err, sizeof(err)), 0,
	       "a lines_ok row takes a line break");
	is_str(o.string, "div\n  p", "as it is");
	is_int(sc_opt_store(&rows[6], &o, "a\tb", err, sizeof(err)), 0, "a tab is no line break");
}

static void test_help_version(void)
{
	struct opts o = { 0 };
	char err[256];

	is_int(parse(&o, "-h -w 0", err), SC_OPT_PARSE_HELP, "help stops the parse");
	is_int(parse(&o, "--version", err), SC_OPT_PARSE_VERSION, "version");
	is_int(parse(&o, "a -f b", err), 2, "operands after the options");
	ok(o.flag, "an option after an operand");
}

static void test_usage(void)
{
	const struct sc_opt_set sets[] = { { rows, NULL } };
	char *u = sc_opt_usage(sets, 1, "< in", "       prog --other\n");

	is_str(u,
	       "usage: prog [-fhV] [-w N] [--small n] [--wide n] [--number R] [--secs secs]\n"
	       "            [--string name] [--copy file] [-C x]... < in\n"
	       "       prog --other\n",
	       "the usage line: flags first, rows in order, wrapped");
	free(u);
}

/* Rows that exclude each other print as one item, as the SYNOPSIS of a
 * man page writes them; the rows around them are as before. */
static void test_usage_pairs(void)
{
	static const struct sc_opt pairs[] = {
		SC_OPT_ROW_WHOLE("small", 0, "n", AT(small), -5, 5),
		{ .name = "loud", .kind = SC_OPT_FLAG, AT(flag), .or_next = true },
		{ .name = "quiet", .kind = SC_OPT_FLAG, AT(flag) },
		{ .name = "whole",
		  .letter = 'w',
		  .kind = SC_OPT_WHOLE,
		  .arg = "N",
		  AT(whole),
		  .whole.min = 1,
		  .whole.max = 9,
		  .or_next = true },
		SC_OPT_ROW_STRING("string", 0, "name", AT(string)),
		{ .name = "last", .kind = SC_OPT_FLAG, AT(flag), .or_next = true },
		{ 0 },
	};
	const struct sc_opt_set sets[] = { { pairs, NULL } };
	char *u = sc_opt_usage(sets, 1, NULL, NULL);

	is_str(u, "usage: prog [--small n] [--loud | --quiet] [-w N | --string name] [--last]\n",
	       "the usage line: a pair as [--a | --b], a last row without a next as itself");
	free(u);
}

int main(void)
{
	sc_setprogname("prog");
	test_kinds();
	test_errors();
	test_line_breaks();
	test_help_version();
	test_usage();
	test_usage_pairs();
	return tap_done();
}
