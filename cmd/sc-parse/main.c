/* sc-parse: extract fields from the HTML of fetch records.
 *
 * Reads sc-record(5) NDJSON on standard input and writes each record with
 * its fields added (title, description, canonical, lang, h1, links, or the
 * -f NAME=SELECTOR fields), one output record per input record, or one per
 * --each match.  See sc-parse(1). */
#include "sc-parse.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kit/cli.h"
#include "record/lines.h"
#include "record/record.h"
#include "core/signals.h"
#include "core/util.h"

#define MAX_JOBS 256

static const char usage_text[] =
        "usage: sc-parse [-hV] [-j N] [--keep-body] [-f NAME=SELECTOR]...\n"
        "                [--each SELECTOR] [--require NAME]...\n"
        "       sc-parse --explain SELECTOR\n";

/* Members of a fetch record (sc-record(5)) and --each's index: a field by
 * one of these names would overwrite data, so it is refused. */
static const char *const reserved_names[] = {
	"url",        "final_url",  "status", "ok",          "content_type", "bytes",   "attempts",
	"elapsed_ms", "fetched_at", "body",   "body_base64", "error",        "history", "index",
};

enum {
	OPT_EACH = 256,
	OPT_REQUIRE,
	OPT_KEEP_BODY,
	OPT_EXPLAIN
};

static const struct option long_options[] = {
	{ "field", required_argument, NULL, 'f' },
	{ "each", required_argument, NULL, OPT_EACH },
	{ "require", required_argument, NULL, OPT_REQUIRE },
	{ "keep-body", no_argument, NULL, OPT_KEEP_BODY },
	{ "jobs", required_argument, NULL, 'j' },
	{ "explain", required_argument, NULL, OPT_EXPLAIN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
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

static bool is_reserved(const char *name)
{
	for (size_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
		if (strcmp(name, reserved_names[i]) == 0)
			return true;
	return false;
}

/* -f NAME=SELECTOR, or NAME[]=SELECTOR for every match. */
static void add_field(struct config *cfg, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct field *f;
	char what[300];
	size_t n;

	if (!eq || eq == arg)
		sc_usage_error("-f: '%s' is not NAME=SELECTOR", arg);
	cfg->fields = sc_realloc(cfg->fields, (cfg->nfields + 1) * sizeof(*cfg->fields));
	f = &cfg->fields[cfg->nfields];
	n = (size_t)(eq - arg);
	f->many = n > 2 && strncmp(eq - 2, "[]", 2) == 0;
	f->name = sc_strndup(arg, f->many ? n - 2 : n);
	if (is_reserved(f->name))
		sc_usage_error("-f %s: '%s' is a member of the fetch record; choose another name",
		               f->name, f->name);
	for (size_t i = 0; i < cfg->nfields; i++)
		if (strcmp(cfg->fields[i].name, f->name) == 0)
			sc_usage_error("-f %s: field named twice", f->name);
	if (eq[1] == '\0')
		sc_usage_error("-f %s: empty selector", f->name);
	snprintf(what, sizeof(what), "-f %s", f->name);
	compile_or_usage(what, eq + 1, &f->sel);
	cfg->nfields++;
}

static bool field_exists(const struct config *cfg, const char *name)
{
	if (cfg->nfields == 0) {
		for (size_t i = 0; i < default_field_count; i++)
			if (strcmp(default_field_names[i], name) == 0)
				return true;
		return false;
	}
	for (size_t i = 0; i < cfg->nfields; i++)
		if (strcmp(cfg->fields[i].name, name) == 0)
			return true;
	return false;
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

int main(int argc, char **argv)
{
	struct config cfg = { .input_name = "<stdin>" };
	const char *tree = getenv("SC_PARSE_TREE");
	const char *explain = NULL, *each = NULL;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	int c, status;

	sc_setprogname(argv[0]);
	/* Before anything else, and before any thread: libxml2's global
	 * state, and silence for its default error handlers. */
	xmlInitParser();
	quiet_libxml2();
	while ((c = getopt_long(argc, argv, "f:j:hV", long_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			add_field(&cfg, optarg);
			break;
		case OPT_EACH:
			each = optarg;
			break;
		case OPT_REQUIRE:
			cfg.require =
			        sc_realloc(cfg.require, (cfg.nrequire + 1) * sizeof(*cfg.require));
			cfg.require[cfg.nrequire++] = optarg;
			break;
		case OPT_KEEP_BODY:
			cfg.keep_body = true;
			break;
		case 'j':
			jobs = sc_parse_long("--jobs", optarg, 1, MAX_JOBS);
			break;
		case OPT_EXPLAIN:
			explain = optarg;
			break;
		case 'h':
			sc_print_help(usage_text);
		case 'V':
			sc_print_version();
		default:
			sc_usage_hint();
		}
	}

	if (optind < argc)
		sc_usage_error("unexpected argument '%s' (sc-parse reads standard input)",
		               argv[optind]);
	if (explain && (cfg.nfields > 0 || each || cfg.nrequire > 0))
		sc_usage_error("--explain cannot be combined with -f, --each or --require");
	if (each && cfg.nfields == 0)
		sc_usage_error("--each needs at least one -f to say what to extract per item");
	for (size_t i = 0; i < cfg.nrequire; i++)
		if (!field_exists(&cfg, cfg.require[i]))
			sc_usage_error("--require: no field named '%s'", cfg.require[i]);
	if (jobs < 1)
		jobs = 1;
	if (jobs > MAX_JOBS)
		jobs = MAX_JOBS;

	if (explain) {
		struct selector sel;
		compile_or_usage("--explain", explain, &sel);
		printf("%s\n", sel.xpath);
		selector_free(&sel);
		sc_close_stdout();
		xmlCleanupParser();
		return SC_EXIT_OK;
	}
	/* For tests: the default fields read from a tree, as -f fields are,
	 * rather than gathered while parsing. */
	cfg.tree_only = tree && strcmp(tree, "1") == 0;
	if (each) {
		compile_or_usage("--each", each, &cfg.each);
		cfg.has_each = true;
	}

	sc_signals_install(NULL);
	/* Later stages keep reading after a first SIGINT until their input
	 * ends (sc-fetch drains): nothing here stops early. */
	curl_global_init(CURL_GLOBAL_NOTHING);
	{
		struct sc_lines *probe = sc_lines_open(0, cfg.input_name);
		cfg.max_line = probe ? sc_lines_max(probe) : SC_LINE_MAX;
		sc_lines_close(probe);
	}
	status = run_pipeline(&cfg, 0, (int)jobs);
	free_config(&cfg);
	curl_global_cleanup();
	xmlCleanupParser();
	return sc_exit_status(status);
}
