/* sc-sink: stream records into JSONL, CSV, TSV and SQLite files that are
 * never half-written.  See sc-sink(1). */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/sqlite_shared.h"
#include "core/util.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/metrics.h"
#include "record/record.h"
#include "sink.h"

enum kind {
	SINK_JSONL,
	SINK_CSV,
	SINK_TSV,
	SINK_SQLITE
};
static const char *const kind_names[] = { "jsonl", "csv", "tsv", "sqlite" };

struct sink {
	enum kind kind;
	const char *path; /* borrowed from argv */
	size_t records;
	union {
		struct outfile jsonl;
		struct csv_sink csv;
		struct sqlite_sink db;
	} u;
};

struct run {
	struct sink sinks[SINK_MAX];
	int nsinks;
	bool tee;
	bool have_columns; /* from -c, or once the first record is seen */
	bool started;      /* the columns are known and the sinks set up */
	struct columns columns;
	const char *key;
	size_t records, bad;
};

/* Adds a sink: 0, or -1 with the usage error in err. */
static int add_sink(struct run *run, enum kind kind, const char *path, char *err, size_t errlen)
{
	if (run->nsinks == SINK_MAX)
		return snprintf(err, errlen, "too many sinks (at most %d)", SINK_MAX), -1;
	run->sinks[run->nsinks].kind = kind;
	run->sinks[run->nsinks].path = path;
	run->nsinks++;
	return 0;
}

/* A bare FILE: the format from its extension. */
static int add_bare_sink(struct run *run, const char *path, char *err, size_t errlen)
{
	static const struct {
		const char *ext;
		enum kind kind;
	} exts[] = {
		{ ".jsonl", SINK_JSONL },    { ".ndjson", SINK_JSONL }, { ".csv", SINK_CSV },
		{ ".tsv", SINK_TSV },        { ".db", SINK_SQLITE },    { ".sqlite", SINK_SQLITE },
		{ ".sqlite3", SINK_SQLITE },
	};
	const char *dot = strrchr(path, '.');

	if (strcmp(path, "-") == 0)
		return add_sink(run, SINK_JSONL, path, err, errlen);
	for (size_t i = 0; dot && !strchr(dot, '/') && i < sizeof(exts) / sizeof(exts[0]); i++)
		if (strcasecmp(dot, exts[i].ext) == 0)
			return add_sink(run, exts[i].kind, path, err, errlen);
	return snprintf(err, errlen,
	                "%s: cannot tell the format from the name; "
	                "use --jsonl, --csv, --tsv or --sqlite",
	                path),
	       -1;
}

static bool has_kind(const struct run *run, int mask)
{
	for (int i = 0; i < run->nsinks; i++)
		if (mask & (1 << run->sinks[i].kind))
			return true;
	return false;
}

#define M_JSONL (1 << SINK_JSONL)
#define M_TEXT ((1 << SINK_CSV) | (1 << SINK_TSV))
#define M_SQLITE (1 << SINK_SQLITE)

/* A sink's write failed: the message names the file (a closed pipe, as
 * for `--jsonl - | head -1`, exits quietly: sc_die_write). */
static void die_sink(const struct sink *s, const char *what)
{
	sc_die_write("%s: %s:", s->path, what);
}

static void open_sinks(struct run *run, bool append, const struct csv_opts *copts,
                       const struct sqlite_opts *sopts, bool columns_given)
{
	char err[ERRLEN];

	for (int i = 0; i < run->nsinks; i++) {
		struct sink *s = &run->sinks[i];
		int rc = 0;
		switch (s->kind) {
		case SINK_JSONL:
			rc = outfile_open(&s->u.jsonl, s->path, append, i, err, sizeof(err));
			break;
		case SINK_CSV:
		case SINK_TSV:
			s->u.csv.opts = *copts;
			s->u.csv.opts.tsv = s->kind == SINK_TSV;
			rc = outfile_open(&s->u.csv.out, s->path, append, i, err, sizeof(err));
			if (rc == 0 && csv_read_header(&s->u.csv, err, sizeof(err)) < 0)
				rc = -1;
			break;
		case SINK_SQLITE:
			rc = sqlite_open(&s->u.db, s->path, sopts, err, sizeof(err));
			break;
		}
		if (rc < 0)
			sc_die(SC_EXIT_FAILURE, "%s", err);
		/* Appending to a file whose header says otherwise would mix up
		 * the columns. */
		if ((s->kind == SINK_CSV || s->kind == SINK_TSV) && columns_given &&
		    s->u.csv.cols == &s->u.csv.own) {
			bool same = s->u.csv.own.n == run->columns.n;
			for (size_t c = 0; same && c < run->columns.n; c++)
				same = strcmp(s->u.csv.own.v[c].name, run->columns.v[c].name) == 0;
			if (!same)
				sc_die(SC_EXIT_FAILURE, "%s: its header does not match --columns",
				       s->path);
		}
	}
}

/* The columns are known (or there will be no record): set up the sinks. */
static void start_sinks(struct run *run, const json_t *first)
{
	char err[ERRLEN];

	if (!run->have_columns && first) {
		columns_from_record(&run->columns, first);
		run->have_columns = true;
	}
	if (run->key)
		columns_add(&run->columns, run->key);
	for (int i = 0; i < run->nsinks; i++) {
		struct sink *s = &run->sinks[i];
		if ((s->kind == SINK_CSV || s->kind == SINK_TSV) &&
		    (run->have_columns || s->u.csv.cols)) {
			if (csv_start(&s->u.csv, &run->columns) < 0)
				die_sink(s, "write error");
		} else if (s->kind == SINK_SQLITE) {
			if (sqlite_start(&s->u.db, &run->columns, first, err, sizeof(err)) < 0)
				sc_die(SC_EXIT_FAILURE, "%s", err);
		}
	}
	run->started = true;
}

static int dump_to_outfile(const char *buffer, size_t size, void *data)
{
	outfile_put(data, buffer, size);
	return 0;
}

static void write_record(struct run *run, const struct sc_input_item *item)
{
	const char *text = item->bad ? NULL : item->line->text;
	size_t len = item->line->len;
	char err[ERRLEN];

	if (!run->started)
		start_sinks(run, item->rec);
	for (int i = 0; i < run->nsinks; i++) {
		struct sink *s = &run->sinks[i];
		int rc = 0;
		switch (s->kind) {
		case SINK_JSONL:
			/* A good record goes out byte for byte as it came in. */
			if (text)
				outfile_put(&s->u.jsonl, text, len);
			else
				json_dump_callback(item->rec, dump_to_outfile, &s->u.jsonl,
				                   SC_JSON_FLAGS);
			outfile_put(&s->u.jsonl, "\n", 1);
			rc = outfile_record_end(&s->u.jsonl);
			break;
		case SINK_CSV:
		case SINK_TSV:
			rc = csv_write(&s->u.csv, item->rec);
			break;
		case SINK_SQLITE:
			if (sqlite_write(&s->u.db, item->rec, text, len, err, sizeof(err)) < 0)
				sc_die(SC_EXIT_FAILURE, "%s", err);
			break;
		}
		if (rc < 0)
			die_sink(s, "write error");
		s->records++;
	}
	if (run->tee) {
		int rc = text ? sc_record_write_raw(stdout, text, len)
		              : sc_record_write(stdout, item->rec);
		if (rc < 0)
			sc_die_write("error writing standard output:");
	}
	run->records++;
	if (item->bad)
		run->bad++;
}

/* The input has nothing ready: let the next stage see what direct sinks
 * hold, and commit SQLite batches that are due while waiting. */
static void idle(struct run *run, int fd)
{
	char err[ERRLEN];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	for (int i = 0; i < run->nsinks; i++) {
		struct sink *s = &run->sinks[i];
		struct outfile *o = s->kind == SINK_JSONL    ? &s->u.jsonl
		                    : s->kind == SINK_SQLITE ? NULL
		                                             : &s->u.csv.out;
		if (o && o->mode == OUT_DIRECT && outfile_flush(o) < 0)
			die_sink(s, "write error");
	}
	for (;;) {
		long due = -1;
		for (int i = 0; i < run->nsinks; i++) {
			if (run->sinks[i].kind != SINK_SQLITE)
				continue;
			long d = sqlite_due_ms(&run->sinks[i].u.db);
			if (d >= 0 && (due < 0 || d < due))
				due = d;
		}
		if (due < 0)
			return;
		int n = due > 0 ? poll(&pfd, 1, due > 60000 ? 60000 : (int)due) : 0;
		if (n > 0 || (n < 0 && errno != EINTR))
			return;
		if (n < 0)
			continue;
		for (int i = 0; i < run->nsinks; i++)
			if (run->sinks[i].kind == SINK_SQLITE &&
			    sqlite_due_ms(&run->sinks[i].u.db) == 0 &&
			    sqlite_commit(&run->sinks[i].u.db, err, sizeof(err)) < 0)
				sc_die(SC_EXIT_FAILURE, "%s", err);
	}
}

/* The input hooks: each record to every sink (a malformed line as its
 * bad_input record, after a warning), and the idle time to the sinks. */
static int on_record(void *ctx, const struct sc_lines *in, const struct sc_input_item *item)
{
	if (item->bad) {
		char where[320];
		sc_input_warning(in, item, where);
		sc_warn("%s", where);
	}
	write_record(ctx, item);
	return 0;
}

static int on_idle(void *ctx, const struct sc_lines *in)
{
	idle(ctx, sc_lines_fd(in));
	return 0;
}

static void read_input(struct run *run)
{
	/* Records are parsed with lib/record/jsonscan, several times faster
	 * than jansson on the usual line (sc_input_run's record hook). */
	static const struct sc_input_hooks hooks = { .record = on_record, .idle = on_idle };
	struct sc_lines *r = sc_lines_open(STDIN_FILENO, "<stdin>");
	char err[SC_INPUT_ERRLEN];

	if (!r)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	if (sc_input_run(r, &hooks, run, err) == SC_INPUT_READ_ERROR)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	sc_lines_close(r);
}

/* Everything is written: sync every file, then put them in place, so a
 * failure before the renames replaces none of them. */
static void finish_sinks(struct run *run)
{
	char err[ERRLEN];

	if (!run->started)
		start_sinks(run, NULL);
	for (int i = 0; i < run->nsinks; i++) {
		struct sink *s = &run->sinks[i];
		int rc = 0;
		switch (s->kind) {
		case SINK_JSONL:
			rc = outfile_finish(&s->u.jsonl);
			break;
		case SINK_CSV:
		case SINK_TSV:
			rc = outfile_finish(&s->u.csv.out);
			break;
		case SINK_SQLITE:
			if (sqlite_finish(&s->u.db, err, sizeof(err)) < 0)
				sc_die(SC_EXIT_FAILURE, "%s", err);
			break;
		}
		if (rc < 0)
			die_sink(s, "write error");
	}
	for (int i = 0; i < run->nsinks; i++) {
		struct sink *s = &run->sinks[i];
		struct outfile *o = s->kind == SINK_JSONL    ? &s->u.jsonl
		                    : s->kind == SINK_SQLITE ? NULL
		                                             : &s->u.csv.out;
		if (!o)
			continue;
		if (outfile_commit(o) < 0)
			die_sink(s, "cannot rename the temporary file into place");
		outfile_discard(o);
		if (s->kind != SINK_JSONL)
			columns_free(&s->u.csv.own);
	}
}

/* The summary line on stderr.  Read by a shell step: crawl.sh's
 * commit_or_remove keeps a chunk only when it begins {"records":N, with N
 * the chunk's URLs (sc-sink.bats pins these bytes). */
static void summary(const struct run *run)
{
	json_t *sinks = json_array();

	for (int i = 0; i < run->nsinks; i++)
		json_array_append_new(sinks, json_pack("{s:s, s:s, s:I}", "format",
		                                       kind_names[run->sinks[i].kind], "file",
		                                       run->sinks[i].path, "records",
		                                       (json_int_t)run->sinks[i].records));
	json_t *obj = json_pack("{s:I, s:I, s:o}", "records", (json_int_t)run->records, "bad_input",
	                        (json_int_t)run->bad, "sinks", sinks);
	sc_metrics_write(stderr, obj);
	json_decref(obj);
}

/* The command line.  Unset: sopts.table NULL, sopts.batch_rows and
 * sopts.batch_ms 0 (the defaults come after the checks, which need to know
 * what was given). */
struct cli {
	struct run run;
	struct csv_opts copts;
	struct sqlite_opts sopts;
	const char *columns;
	bool append, quiet, no_header;
};

/* --jsonl, --csv, --tsv and --sqlite (row->tag: the kind). */
static int call_add_sink(void *base, const struct sc_opt *row, const char *arg, char *err,
                         size_t errlen)
{
	return add_sink(&((struct cli *)base)->run, (enum kind)row->tag, arg, err, errlen);
}

#define AT(member) SC_OPT_AT(struct cli, member)

/* In the order of the usage line, which is the SYNOPSIS of sc-sink(1). */
static const struct sc_opt rows[] = {
	SC_OPT_ROW_FLAG("append", 'a', AT(append)),
	SC_OPT_ROW_FLAG("quiet", 'q', AT(quiet)),
	SC_OPT_ROW_HELP(""),
	SC_OPT_ROW_VERSION(""),
	SC_OPT_ROW_FLAG("tee", 0, AT(run.tee)),
	SC_OPT_ROW_STRING("columns", 'c', "columns", AT(columns)),
	SC_OPT_ROW_FLAG("no-header", 0, AT(no_header)),
	SC_OPT_ROW_FLAG("formula-escape", 0, AT(copts.formula_escape)),
	SC_OPT_ROW_FLAG("crlf", 0, AT(copts.crlf)),
	SC_OPT_ROW_STRING("table", 0, "name", AT(sopts.table)),
	SC_OPT_ROW_STRING("key", 0, "column", AT(sopts.key)),
	SC_OPT_ROW_WHOLE("batch", 0, "rows", AT(sopts.batch_rows), 1, 1000000),
	SC_OPT_ROW_WHOLE("batch-ms", 0, "ms", AT(sopts.batch_ms), 1, 3600000),
	SC_OPT_ROW_CALL("jsonl", 0, "file", call_add_sink, SINK_JSONL),
	SC_OPT_ROW_CALL("csv", 0, "file", call_add_sink, SINK_CSV),
	SC_OPT_ROW_CALL("tsv", 0, "file", call_add_sink, SINK_TSV),
	SC_OPT_ROW_CALL("sqlite", 0, "file", call_add_sink, SINK_SQLITE),
	{ 0 },
};

/* Each sink once; standard output only for text. */
static void check_sinks(const struct run *run)
{
	char why[512];

	if (run->nsinks == 0)
		sc_usage_error("no sink given");
	for (int i = 0; i < run->nsinks; i++) {
		for (int j = 0; j < i; j++)
			if (strcmp(run->sinks[i].path, run->sinks[j].path) == 0)
				sc_usage_error("%s: given twice", run->sinks[i].path);
		if (run->sinks[i].kind == SINK_SQLITE && strcmp(run->sinks[i].path, "-") == 0)
			sc_usage_error("--sqlite: cannot write a database to standard output");
		if (run->sinks[i].kind == SINK_SQLITE &&
		    sc_sqlite_name_problem(run->sinks[i].path, why, sizeof(why)))
			sc_usage_error("--sqlite: %s", why);
		if (run->tee && strcmp(run->sinks[i].path, "-") == 0)
			sc_usage_error("--tee: standard output is already a sink ('-')");
	}
}

/* Bad combinations, by name, before any file is touched; then the
 * defaults of what was not given, and the columns. */
static void check_options(struct cli *cli)
{
	struct run *run = &cli->run;
	struct sqlite_opts *sopts = &cli->sopts;
	bool batch_given = sopts->batch_rows || sopts->batch_ms;
	char err[ERRLEN];

	check_sinks(run);
	if (sopts->table && !*sopts->table)
		sc_usage_error("--table: empty name");
	if (sopts->key && !*sopts->key)
		sc_usage_error("--key: empty name");
	if (sopts->key && strcasecmp(sopts->key, "record") == 0)
		sc_usage_error("--key: 'record' is the column of whole records");
	if ((sopts->table || sopts->key || batch_given) && !has_kind(run, M_SQLITE))
		sc_usage_error("--%s needs a --sqlite sink", sopts->table ? "table"
		                                             : sopts->key ? "key"
		                                                          : "batch");
	if ((cli->no_header || cli->copts.formula_escape || cli->copts.crlf) &&
	    !has_kind(run, M_TEXT))
		sc_usage_error("--%s needs a --csv or --tsv sink", cli->no_header ? "no-header"
		                                                   : cli->copts.formula_escape
		                                                           ? "formula-escape"
		                                                           : "crlf");
	if (cli->columns && !has_kind(run, M_TEXT | M_SQLITE))
		sc_usage_error("--columns needs a --csv, --tsv or --sqlite sink");
	if (cli->append && !has_kind(run, M_JSONL | M_TEXT))
		sc_usage_error("--append needs a --jsonl, --csv or --tsv sink");
	if (cli->columns) {
		if (columns_parse(&run->columns, cli->columns, err, sizeof(err)) < 0)
			sc_usage_error("%s", err);
		run->have_columns = true;
		if (sopts->key && columns_find(&run->columns, sopts->key) < 0)
			sc_usage_error("--key: '%s' is not one of --columns", sopts->key);
	}
	cli->copts.header = !cli->no_header;
	if (!sopts->table)
		sopts->table = "records";
	if (!sopts->batch_rows)
		sopts->batch_rows = 1000;
	if (!sopts->batch_ms)
		sopts->batch_ms = 1000;
	run->key = sopts->key;
}

/* Reads the command line into cli, or ends the run: --help, --version, a
 * usage error (exit 2). */
static void parse_options(struct cli *cli, int argc, char **argv)
{
	const struct sc_opt_set sets[] = { { rows, cli } };
	char err[ERRLEN];
	int first = sc_opt_parse(sets, 1, argc, argv, err, sizeof(err));

	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(sc_opt_usage(sets, 1, "[file ...]", NULL));
	if (first == SC_OPT_PARSE_VERSION) {
		/* Not sc_print_version: sc-sink does not link libcurl. */
		char libraries[128];
		snprintf(libraries, sizeof(libraries), "jansson %s, SQLite %s",
		         jansson_version_str(), sqlite3_libversion());
		sc_print_version_with(libraries);
	}
	if (first == SC_OPT_PARSE_ERROR)
		sc_usage_error("%s", err);
	for (int i = first; i < argc; i++)
		if (add_bare_sink(&cli->run, argv[i], err, sizeof(err)) != 0)
			sc_usage_error("%s", err);
	check_options(cli);
}

int main(int argc, char **argv)
{
	static struct cli cli;
	struct run *run = &cli.run;

	sc_setprogname(argv[0]);
	sc_stdio_hold();
	/* Before the options: a Ctrl-C while a stage starts must not end it
	 * with its input unread. */
	sc_signals_install(NULL);
	parse_options(&cli, argc, argv);

	/* atexit runs the last registered first: the temporary files go
	 * first, so that a full disk has room for SQLite's checkpoint. */
	if (atexit(sqlite_cleanup_all) != 0 || atexit(outfile_cleanup_all) != 0)
		sc_die(SC_EXIT_FAILURE, "cannot register the clean-up of temporary files");
	open_sinks(run, cli.append, &cli.copts, &cli.sopts, cli.columns != NULL);
	read_input(run);
	finish_sinks(run);
	if (run->tee)
		sc_close_stdout();
	if (!cli.quiet)
		summary(run);
	columns_free(&run->columns);
	return sc_exit_status(run->bad > 0 ? SC_EXIT_PARTIAL : SC_EXIT_OK);
}
