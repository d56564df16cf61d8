/* opt: command-line options as a table, one row per option, and the one
 * parser that reads argv with it.
 *
 * A program (or the engine, for the options sc-fetch and sc-retry share)
 * describes each option once: its long name, its letter, its kind (which
 * says how its argument is read and checked) and where its value goes.  The
 * parser builds getopt_long's arguments from the rows, reads argv, stores
 * each value, and turns every error into text in one place; it prints
 * nothing, the program prints the text as a usage error (sc_usage_error).
 * The usage line of --help is made from the same rows (sc_opt_usage), so
 * that the two cannot disagree.  (curl's src/tool_getparam.c: aliases[]
 * and ParameterError.)
 *
 *	#define AT(member) SC_OPT_AT(struct config, member)
 *	static const struct sc_opt rows[] = {
 *		SC_OPT_ROW_WHOLE("jobs", 'j', "N", AT(jobs), 1, 256),
 *		SC_OPT_ROW_FLAG("keep-body", 0, AT(keep_body)),
 *		SC_OPT_ROW_HELP(NULL),
 *		{ 0 },
 *	};
 *	const struct sc_opt_set sets[] = { { rows, &cfg } };
 *	int first = sc_opt_parse(sets, 1, argc, argv, err, sizeof(err));
 *
 * What no single row can judge (one option needs another, two exclude each
 * other) the program checks after parsing, by name, in one place.
 *
 * No argument may hold a CR, LF or NUL (core/protocol.h): most go on a
 * line of a protocol or of a file's header (a request header, a WARC
 * field, a file name written in one), and a line break there would start
 * a line of its own.  The parser refuses it before the row's kind or call
 * sees it, for every row but one that says .lines_ok: text that only sc
 * reads and that reaches no such line (sc-parse's selectors).
 *
 * The errors, with the option's long name whichever way it was given:
 *	--user-agent: a value may not hold a CR, LF or NUL
 *	--jobs: 'x' is not a whole number
 *	--jobs: '0' is out of range (1..256)
 *	--rate: 'x' is not a number
 *	--rate: '-1' is out of range (0..1e+06)
 * and getopt's own, in glibc's words: "unrecognized option '--x'",
 * "invalid option -- 'Z'", "option '--rate' requires an argument",
 * "option requires an argument -- 'c'", "option '--robots' doesn't allow
 * an argument", "option '--re' is ambiguous; possibilities: '--rate' ...". */
#ifndef SC_OPT_H
#define SC_OPT_H

#include <stdbool.h>
#include <stddef.h>

enum sc_opt_kind {
	SC_OPT_FLAG,    /* no argument: the bool at the row's place becomes true */
	SC_OPT_WHOLE,   /* a whole number within .whole, into an int or a 64-bit
	                   integer (long, long long, int64_t, uint64_t) */
	SC_OPT_NUMBER,  /* a number (double) within .number */
	SC_OPT_SECONDS, /* seconds, fractions allowed, within .number: stored as
	                   whole milliseconds, into an int or a 64-bit integer */
	SC_OPT_STRING,  /* a const char *, borrowed from argv; the last one given wins */
	SC_OPT_COPY,    /* a char *, a copy of the argument (the set's owner frees
	                   it; an earlier one is freed); the last one given wins */
	SC_OPT_CALL,    /* .call does it: repeatable options, arguments with a
	                   syntax of their own; .arg NULL: it takes none */
	SC_OPT_HELP,    /* -h/--help: sc_opt_parse returns SC_OPT_PARSE_HELP */
	SC_OPT_VERSION, /* -V/--version: sc_opt_parse returns SC_OPT_PARSE_VERSION */
};

struct sc_opt;

/* An SC_OPT_CALL row's action: base is the set's struct, arg the argument
 * (NULL for a row without one).  Returns 0, or -1 with the usage error in
 * err ("-f: 'title' is not NAME=SELECTOR"). */
typedef int (*sc_opt_call_fn)(void *base, const struct sc_opt *row, const char *arg, char *err,
                              size_t errlen);

/* One option.  A table is an array of rows ended by a row with no name. */
struct sc_opt {
	const char *name;      /* the long name, without "--" */
	char letter;           /* the short option, or 0 */
	enum sc_opt_kind kind; /* how the argument is read */
	const char *arg;       /* the argument's word in the usage ("secs"); NULL:
	                          the option takes no argument */
	size_t offset, size;   /* the value's place in the set's struct: SC_OPT_AT */
	struct {
		long min, max;
	} whole; /* SC_OPT_WHOLE's bounds */
	struct {
		double min, max;
	} number;            /* SC_OPT_NUMBER's and SC_OPT_SECONDS' bounds */
	sc_opt_call_fn call; /* SC_OPT_CALL's action */
	int tag;             /* for call: which of the rows that share it */
	bool many;           /* may be given more than once: "..." in the usage */
	bool lines_ok;       /* the argument may hold CR and LF: text only sc reads,
	                        which goes on no line of a protocol or a file's
	                        header (a selector); else they are refused */
	bool arg_optional;   /* the argument may be left out ("--structured" or
	                        "--structured=KINDS", never a separate word):
	                        the call gets NULL; "[--name[=ARG]]" in the usage */
	bool or_next;        /* this row and the next exclude each other (the
	                        last one given wins): "[--a | --b]" in the usage */
	const char *usage;   /* the row's text in the usage instead of the one
	                        made from it; "": none (another row shows it, or
	                        a line of the program's own) */
};

/* The place of member in type, for a row: .offset and .size. */
#define SC_OPT_AT(type, member) \
	.offset = offsetof(type, member), .size = sizeof(((type *)0)->member)

/* The usual rows, one line each (at: SC_OPT_AT(...)); a row with more to
 * say (its own usage text) is written out. */
#define SC_OPT_ROW_FLAG(name_, letter_, at)                                   \
	{                                                                     \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_FLAG, at \
	}
#define SC_OPT_ROW_WHOLE(name_, letter_, arg_, at, lo, hi)                                     \
	{                                                                                      \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_WHOLE, .arg = (arg_), at, \
		.whole.min = (lo), .whole.max = (hi)                                           \
	}
#define SC_OPT_ROW_NUMBER(name_, letter_, arg_, at, lo, hi)                                     \
	{                                                                                       \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_NUMBER, .arg = (arg_), at, \
		.number.min = (lo), .number.max = (hi)                                          \
	}
#define SC_OPT_ROW_SECONDS(name_, letter_, arg_, at, lo, hi)                                     \
	{                                                                                        \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_SECONDS, .arg = (arg_), at, \
		.number.min = (lo), .number.max = (hi)                                           \
	}
#define SC_OPT_ROW_STRING(name_, letter_, arg_, at)                                            \
	{                                                                                      \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_STRING, .arg = (arg_), at \
	}
#define SC_OPT_ROW_COPY(name_, letter_, arg_, at)                                            \
	{                                                                                    \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_COPY, .arg = (arg_), at \
	}
/* A call, once (CALL) or any number of times (CALLS: "..." in the usage). */
#define SC_OPT_ROW_CALL(name_, letter_, arg_, call_, tag_)                                \
	{                                                                                 \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_CALL, .arg = (arg_), \
		.call = (call_), .tag = (tag_)                                            \
	}
#define SC_OPT_ROW_CALLS(name_, letter_, arg_, call_, tag_)                               \
	{                                                                                 \
		.name = (name_), .letter = (letter_), .kind = SC_OPT_CALL, .arg = (arg_), \
		.call = (call_), .tag = (tag_), .many = true                              \
	}
#define SC_OPT_ROW_HELP(usage_)                                                       \
	{                                                                             \
		.name = "help", .letter = 'h', .kind = SC_OPT_HELP, .usage = (usage_) \
	}
#define SC_OPT_ROW_VERSION(usage_)                                                          \
	{                                                                                   \
		.name = "version", .letter = 'V', .kind = SC_OPT_VERSION, .usage = (usage_) \
	}

/* A table and the struct its rows' places are in (NULL when no row has one). */
struct sc_opt_set {
	const struct sc_opt *rows;
	void *base;
};

/* What sc_opt_parse returns instead of the first operand. */
#define SC_OPT_PARSE_ERROR (-1)   /* a usage error, its text in err */
#define SC_OPT_PARSE_HELP (-2)    /* an SC_OPT_HELP row was given */
#define SC_OPT_PARSE_VERSION (-3) /* an SC_OPT_VERSION row was given */

/* Reads argv's options (GNU style: operands may come between them) with the
 * rows of the n sets, storing each value as it comes; stops at the first
 * error, or at help or version.  Returns the index in argv of the first
 * operand (argc when there is none; argv is permuted so that the operands
 * come last), or one of SC_OPT_PARSE_*.  Prints nothing. */
int sc_opt_parse(const struct sc_opt_set *sets, size_t n, int argc, char **argv, char *err,
                 size_t errlen);

/* Stores one row's value into base as sc_opt_parse does for "--NAME ARG"
 * (arg NULL for a row without one), without getopt_long, whose state is
 * the process's: a library's setter, called while its caller may be in
 * the middle of its own getopt loop.  Returns 0, or -1 with the error in
 * err ("--rate: 'x' is not a number"). */
int sc_opt_store(const struct sc_opt *row, void *base, const char *arg, char *err, size_t errlen);

/* The usage line of the n sets' rows, for --help: "usage: PROG [-hkqV]
 * [-c N] [--per-host N] ... OPERANDS\n", wrapped before 80 columns; the
 * flags with a letter together first, then each row in table order (a row
 * with or_next and the next as one item, "[--adaptive | --no-adaptive]",
 * as a man page's SYNOPSIS writes two that exclude each other).  more
 * (NULL: none) follows as it is: the program's other forms.  Returns a
 * string the caller frees. */
char *sc_opt_usage(const struct sc_opt_set *sets, size_t n, const char *operands, const char *more);
/* The same for a program named progname (a library's caller). */
char *sc_opt_usage_of(const char *progname, const struct sc_opt_set *sets, size_t n,
                      const char *operands, const char *more);

#endif
