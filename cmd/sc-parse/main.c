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

/* Members of a fetch record (sc-record(5)) and --each's index: a field by
 * one of these names would overwrite data, so it is refused. */
static const char *const reserved_names[] = {
	"url",        "final_url",  "status", "ok",          "content_type", "bytes",   "attempts",
	"elapsed_ms", "fetched_at", "body",   "body_base64", "error",        "history", "index",
};

/* Compiles sel, or ends the run with a usage error naming what and the
 * column. */
static void compile_or_usage(const char *what, const char *src, struct selector *sel)
{
	char msg[256];
	size_t column;

	if (selector_compile(src, sel, &column, msg, sizeof(msg)) != 0)
		sc_usage_error("%s: invalid selector at column %zu: %s", what, column, msg);
}

/* Whether a -f field is named name. */
static bool field_exists_in(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->nfields; i++)
		if (strcmp(cfg->fields[i].name, name) == 0)
			return true;
	return false;
}

static bool is_reserved(const char *name)
{
	for (size_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
		if (strcmp(name, reserved_names[i]) == 0)
			return true;
	return false;
}

/* -f NAME=SELECTOR, or NAME[]=SELECTOR for every match. */
static int add_field(struct config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	size_t column, n;
	char msg[256];
	struct field f = { 0 };

	if (!eq || eq == arg)
		return snprintf(err, errlen, "-f: '%s' is not NAME=SELECTOR", arg), -1;
	n = (size_t)(eq - arg);
	f.many = n > 2 && strncmp(eq - 2, "[]", 2) == 0;
	f.name = sc_strndup(arg, f.many ? n - 2 : n);
	if (is_reserved(f.name))
		snprintf(err, errlen,
		         "-f %s: '%s' is a member of the fetch record; choose another name", f.name,
		         f.name);
	else if (field_exists_in(cfg, f.name))
		snprintf(err, errlen, "-f %s: field named twice", f.name);
	else if (eq[1] == '\0')
		snprintf(err, errlen, "-f %s: empty selector", f.name);
	else if (selector_compile(eq + 1, &f.sel, &column, msg, sizeof(msg)) != 0)
		snprintf(err, errlen, "-f %s: invalid selector at column %zu: %s", f.name, column,
		         msg);
	else {
		cfg->fields = sc_realloc(cfg->fields, (cfg->nfields + 1) * sizeof(*cfg->fields));
		cfg->fields[cfg->nfields++] = f;
		return 0;
	}
	free(f.name);
	return -1;
}

/* Whether the fields asked for (the default ones when no -f was given)
 * include name. */
static bool field_exists(const struct config *cfg, const char *name)
{
	if (cfg->nfields == 0) {
		for (size_t i = 0; i < default_field_count; i++)
			if (strcmp(default_field_names[i], name) == 0)
				return true;
		return false;
	}
	return field_exists_in(cfg, name);
}

static void free_config(struct config *cfg)
{
	for (size_t i = 0; i < cfg->nfields; i++) {
		free(cfg->fields[i].name);
		selector_free(&cfg->fields[i].sel);
	}
	free(cfg->fields);
	if (cfg->has_each)
		selector_free(&cfg->each);
	free(cfg->require);
}

/* The command line: the configuration, and what main does with the rest. */
struct cli {
	struct config cfg;
	const char *explain; /* --explain's selector, or NULL */
	const char *each;    /* --each's selector, or NULL */
	long jobs;
};

/* -f (row->tag 0) and --require (1), which may be given more than once. */
static int add_field_or_require(void *base, const struct sc_opt *row, const char *arg, char *err,
                                size_t errlen)
{
	struct config *cfg = &((struct cli *)base)->cfg;

	if (row->tag == 0)
		return add_field(cfg, arg, err, errlen);
	cfg->require = sc_realloc(cfg->require, (cfg->nrequire + 1) * sizeof(*cfg->require));
	cfg->require[cfg->nrequire++] = arg;
	return 0;
}

#define AT(member) SC_OPT_AT(struct cli, member)

/* In the order of the usage line, which is the SYNOPSIS of sc-parse(1). */
static const struct sc_opt rows[] = {
	SC_OPT_ROW_HELP(NULL),
	SC_OPT_ROW_VERSION(NULL),
	SC_OPT_ROW_WHOLE("jobs", 'j', "N", AT(jobs), 1, MAX_JOBS),
	SC_OPT_ROW_FLAG("keep-body", 0, AT(cfg.keep_body)),
	SC_OPT_ROW_CALLS("field", 'f', "NAME=SELECTOR", add_field_or_require, 0),
	SC_OPT_ROW_STRING("each", 0, "SELECTOR", AT(each)),
	SC_OPT_ROW_CALLS("require", 0, "NAME", add_field_or_require, 1),
	{ .name = "explain", .kind = SC_OPT_STRING, .arg = "SELECTOR", AT(explain), .usage = "" },
	{ 0 },
};

/* Bad combinations, by name; then --each compiled. */
static void check_options(struct cli *cli)
{
	struct config *cfg = &cli->cfg;

	if (cli->explain && (cfg->nfields > 0 || cli->each || cfg->nrequire > 0))
		sc_usage_error("--explain cannot be combined with -f, --each or --require");
	if (cli->each && cfg->nfields == 0)
		sc_usage_error("--each needs at least one -f to say what to extract per item");
	for (size_t i = 0; i < cfg->nrequire; i++)
		if (!field_exists(cfg, cfg->require[i]))
			sc_usage_error("--require: no field named '%s'", cfg->require[i]);
	if (cli->jobs < 1)
		cli->jobs = 1;
	if (cli->jobs > MAX_JOBS)
		cli->jobs = MAX_JOBS;
	if (cli->each) {
		compile_or_usage("--each", cli->each, &cfg->each);
		cfg->has_each = true;
	}
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
	check_options(cli);
}

/* --explain: the XPath a selector becomes. */
static int explain(const char *selector)
{
	struct selector sel;

	compile_or_usage("--explain", selector, &sel);
	printf("%s\n", sel.xpath);
	selector_free(&sel);
	sc_close_stdout();
	xmlCleanupParser();
	return SC_EXIT_OK;
}

int main(int argc, char **argv)
{
	static struct cli cli = { .cfg = { .input_name = "<stdin>" } };
	struct config *cfg = &cli.cfg;
	const char *tree = getenv("SC_PARSE_TREE");
	int status;

	sc_setprogname(argv[0]);
	/* Before anything else, and before any thread: libxml2's global
	 * state, and silence for its default error handlers. */
	xmlInitParser();
	quiet_libxml2();
	cli.jobs = sysconf(_SC_NPROCESSORS_ONLN);
	parse_options(&cli, argc, argv);
	if (cli.explain)
		return explain(cli.explain);
	/* For tests: the default fields read from a tree, as -f fields are,
	 * rather than gathered while parsing. */
	cfg->tree_only = tree && strcmp(tree, "1") == 0;

	sc_signals_install(NULL);
	/* Later stages keep reading after a first SIGINT until their input
	 * ends (sc-fetch drains): nothing here stops early. */
	curl_global_init(CURL_GLOBAL_NOTHING);
	{
		struct sc_lines *probe = sc_lines_open(0, cfg->input_name);
		cfg->max_line = probe ? sc_lines_max(probe) : SC_LINE_MAX;
		sc_lines_close(probe);
	}
	status = run_pipeline(cfg, 0, (int)cli.jobs);
	free_config(cfg);
	curl_global_cleanup();
	xmlCleanupParser();
	return sc_exit_status(status);
}
