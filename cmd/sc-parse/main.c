/* sc-parse: extract fields from the HTML of fetch records.
 *
 * Reads sc-record(5) NDJSON on standard input and writes each record with
 * its fields added (title, description, canonical, lang, h1, links, or the
 * -f NAME=SELECTOR fields), one output record per input record, or one per
 * --each match.  See sc-parse(1). */
#include "sc-parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/lines.h"
#include "record/record.h"

#define MAX_JOBS 256

/* The command line: the specs, and what main does with them. */
struct cli {
	const char **fields; /* -f, in order (malloced array of borrowed strings) */
	size_t nfields;
	const char **require; /* --require, likewise */
	size_t nrequire;
	bool keep_body;
	bool forms;          /* --forms */
	bool requisites;     /* --requisites */
	bool structured;     /* --structured */
	bool main_text;      /* --main */
	bool markdown;       /* --markdown */
	bool simhash;        /* --simhash */
	long kinds;          /* and its kinds (SC_STRUCTURED_*) */
	const char *explain; /* --explain's selector, or NULL */
	const char *each;    /* --each's selector, or NULL */
	long jobs;
};

/* -f (row->tag 0) and --require (1), which may be given more than once:
 * checked by sc_parser_new once the command line is read. */
static int add_field_or_require(void *base, const struct sc_opt *row, const char *arg, char *err,
                                size_t errlen)
{
	struct cli *cli = base;
	const char ***list = row->tag == 0 ? &cli->fields : &cli->require;
	size_t *n = row->tag == 0 ? &cli->nfields : &cli->nrequire;

	if (errlen > 0)
		err[0] = '\0'; /* it cannot fail: sc_parser_new checks them */
	*list = sc_realloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = arg;
	return 0;
}

/* --structured[=json-ld,microdata,rdfa,opengraph,twitter]: every kind
 * without a list. */
static int set_structured(void *base, const struct sc_opt *row, const char *arg, char *err,
                          size_t errlen)
{
	static const char *const names[] = { "json-ld", "microdata", "rdfa", "opengraph",
		                             "twitter" };
	struct cli *cli = base;

	(void)row;
	cli->structured = true;
	cli->kinds = arg ? 0
	                 : SC_STRUCTURED_JSONLD | SC_STRUCTURED_MICRODATA | SC_STRUCTURED_RDFA |
	                             SC_STRUCTURED_OPENGRAPH | SC_STRUCTURED_TWITTER;
	for (const char *p = arg; p;) {
		size_t n = strcspn(p, ","), i = 0;
		while (i < 5 && !(strlen(names[i]) == n && strncmp(names[i], p, n) == 0))
			i++;
		if (i == 5) {
			snprintf(err, errlen,
			         "--structured: '%.*s' is not one of json-ld, microdata, rdfa, "
			         "opengraph, twitter",
			         (int)(n > 64 ? 64 : n), p);
			return -1;
		}
		cli->kinds |= 1L << i;
		p = p[n] ? p + n + 1 : NULL;
	}
	return 0;
}

#define AT(member) SC_OPT_AT(struct cli, member)

/* In the order of the usage line, which is the SYNOPSIS of sc-parse(1).
 * A selector, and a field's name with it, may be written over several
 * lines: they are read by sc alone, and a name goes into records as a
 * JSON member (lines_ok; lib/kit/opt.h). */
static const struct sc_opt rows[] = {
	SC_OPT_ROW_HELP(NULL),
	SC_OPT_ROW_VERSION(NULL),
	SC_OPT_ROW_WHOLE("jobs", 'j', "N", AT(jobs), 1, MAX_JOBS),
	SC_OPT_ROW_FLAG("keep-body", 0, AT(keep_body)),
	SC_OPT_ROW_FLAG("forms", 0, AT(forms)),
	SC_OPT_ROW_FLAG("requisites", 0, AT(requisites)),
	{ .name = "structured",
	  .kind = SC_OPT_CALL,
	  .arg = "KINDS",
	  .arg_optional = true,
	  .call = set_structured },
	SC_OPT_ROW_FLAG("main", 0, AT(main_text)),
	SC_OPT_ROW_FLAG("markdown", 0, AT(markdown)),
	SC_OPT_ROW_FLAG("simhash", 0, AT(simhash)),
	{ .name = "field",
	  .letter = 'f',
	  .kind = SC_OPT_CALL,
	  .arg = "NAME=SELECTOR",
	  .call = add_field_or_require,
	  .many = true,
	  .lines_ok = true },
	{ .name = "each", .kind = SC_OPT_STRING, .arg = "SELECTOR", AT(each), .lines_ok = true },
	{ .name = "require",
	  .kind = SC_OPT_CALL,
	  .arg = "NAME",
	  .call = add_field_or_require,
	  .tag = 1,
	  .many = true,
	  .lines_ok = true },
	{ .name = "explain",
	  .kind = SC_OPT_STRING,
	  .arg = "SELECTOR",
	  AT(explain),
	  .usage = "",
	  .lines_ok = true },
	{ 0 },
};

/* The parser of the specs, or ends the run with sc_parser_new's words as a
 * usage error.  NULL for --explain alone. */
static sc_parser *make_parser(const struct cli *cli)
{
	sc_parser *parser;
	char *err = NULL;

	if (cli->explain && cli->nfields == 0 && !cli->each && cli->nrequire == 0)
		return NULL;
	if (cli->explain) {
		/* A bad -f is reported first, as the options are read. */
		parser = sc_parser_new(cli->fields, cli->nfields, NULL, NULL, 0, 0, &err);
		if (!parser)
			sc_usage_error("%s", err);
		sc_parser_free(parser);
		sc_usage_error("--explain cannot be combined with -f, --each or --require");
	}
	if (cli->forms && (cli->nfields || cli->each || cli->nrequire || cli->keep_body ||
	                   cli->structured || cli->main_text || cli->markdown || cli->simhash))
		sc_usage_error(
		        "--forms cannot be combined with -f, --each, --require, --keep-body, "
		        "--structured, --main, --markdown or --simhash");
	unsigned flags =
	        (cli->keep_body ? SC_PARSER_KEEP_BODY : 0) | (cli->forms ? SC_PARSER_FORMS : 0) |
	        (cli->structured ? SC_PARSER_STRUCTURED : 0) |
	        (cli->requisites ? SC_PARSER_REQUISITES : 0) |
	        (cli->main_text ? SC_PARSER_MAIN : 0) | (cli->markdown ? SC_PARSER_MARKDOWN : 0) |
	        (cli->simhash ? SC_PARSER_SIMHASH : 0);
	parser = sc_parser_new(cli->fields, cli->nfields, cli->each, cli->require, cli->nrequire,
	                       flags, &err);
	if (!parser)
		sc_usage_error("%s", err);
	if (cli->structured)
		sc_parser_setopt(parser, SC_PARSEROPT_STRUCTURED, cli->kinds);
	return parser;
}

/* Reads the command line into cli, or ends the run: --help, --version, a
 * usage error (exit 2). */
static void parse_options(struct cli *cli, int argc, char **argv)
{
	const struct sc_opt_set sets[] = { { rows, cli } };
	char err[600];
	int first = sc_opt_parse(sets, 1, argc, argv, err, sizeof(err));

	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(sc_opt_usage(sets, 1, NULL, "       sc-parse --explain SELECTOR\n"));
	if (first == SC_OPT_PARSE_VERSION)
		sc_print_version();
	if (first == SC_OPT_PARSE_ERROR)
		sc_usage_error("%s", err);
	if (first < argc)
		sc_usage_error("unexpected argument '%s' (sc-parse reads standard input)",
		               argv[first]);
	if (cli->jobs < 1)
		cli->jobs = 1;
	if (cli->jobs > MAX_JOBS)
		cli->jobs = MAX_JOBS;
}

/* --explain: the XPath a selector becomes. */
static int explain(const char *selector)
{
	char *err = NULL, *xpath = sc_selector_explain(selector, &err);

	if (!xpath)
		sc_usage_error("--explain: %s", err);
	printf("%s\n", xpath);
	sc_free(xpath);
	sc_close_stdout();
	sc_global_cleanup();
	return SC_EXIT_OK;
}

int main(int argc, char **argv)
{
	static struct cli cli;
	const char *tree = getenv("SC_PARSE_TREE");
	sc_parser *parser;
	int status;

	sc_setprogname(argv[0]);
	sc_stdio_hold();
	/* First: a pipeline's Ctrl-C can come while this stage still starts
	 * (libcurl's and libxml2's set-up, the selectors compiled), and the
	 * default action would end it with the records upstream drains unread.
	 * Later stages keep reading after a first SIGINT until their input
	 * ends (sc-fetch drains): nothing here stops early. */
	sc_signals_install(NULL);
	/* Before any thread: libxml2's and
	 * libcurl's global state. */
	if (sc_global_init() != SC_OK)
		sc_die(SC_EXIT_FAILURE, "cannot initialise libcurl");
	cli.jobs = sysconf(_SC_NPROCESSORS_ONLN);
	parse_options(&cli, argc, argv);
	parser = make_parser(&cli);
	if (!parser)
		return explain(cli.explain);
	/* For tests: the default fields read from a tree, as -f fields are,
	 * rather than gathered while parsing. */
	sc_parser_setopt(parser, SC_PARSEROPT_TREE, tree && strcmp(tree, "1") == 0);

	{
		struct sc_lines *probe = sc_lines_open(0, "<stdin>");
		sc_parser_setopt(parser, SC_PARSEROPT_LINE_MAX,
		                 (long)(probe ? sc_lines_max(probe) : SC_LINE_MAX));
		sc_lines_close(probe);
	}
	status = run_pipeline(parser, "<stdin>", 0, (int)cli.jobs);
	sc_parser_free(parser);
	free(cli.fields);
	free(cli.require);
	sc_global_cleanup();
	return sc_exit_status(status);
}
