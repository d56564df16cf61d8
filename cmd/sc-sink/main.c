/* sc-sink: stream records into JSONL, CSV, TSV and SQLite files that are
 * never half-written.  See sc-sink(1). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/metrics.h"
#include "record/record.h"
#include "sink.h"

static const char usage_text[] =
        "usage: sc-sink [-aq] [--tee] [-c columns] [--no-header] [--formula-escape]\n"
        "               [--crlf] [--table name] [--key column] [--batch rows]\n"
        "               [--batch-ms ms] [--jsonl file] [--csv file] [--tsv file]\n"
        "               [--sqlite file] [file ...]\n";

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

enum {
	OPT_JSONL = 256,
	OPT_CSV,
	OPT_TSV,
	OPT_SQLITE,
	OPT_TABLE,
	OPT_KEY,
	OPT_TEE,
	OPT_NO_HEADER,
	OPT_FORMULA,
	OPT_CRLF,
	OPT_BATCH,
	OPT_BATCH_MS
};

static const struct option long_options[] = {
	{ "jsonl", required_argument, NULL, OPT_JSONL },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "tsv", required_argument, NULL, OPT_TSV },
	{ "sqlite", required_argument, NULL, OPT_SQLITE },
	{ "table", required_argument, NULL, OPT_TABLE },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "columns", required_argument, NULL, 'c' },
	{ "tee", no_argument, NULL, OPT_TEE },
	{ "append", no_argument, NULL, 'a' },
	{ "no-header", no_argument, NULL, OPT_NO_HEADER },
	{ "formula-escape", no_argument, NULL, OPT_FORMULA },
	{ "crlf", no_argument, NULL, OPT_CRLF },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "batch-ms", required_argument, NULL, OPT_BATCH_MS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void add_sink(struct run *run, enum kind kind, const char *path)
{
	if (run->nsinks == SINK_MAX)
		sc_usage_error("too many sinks (at most %d)", SINK_MAX);
	run->sinks[run->nsinks].kind = kind;
	run->sinks[run->nsinks].path = path;
	run->nsinks++;
}

/* A bare FILE: the format from its extension. */
static void add_bare_sink(struct run *run, const char *path)
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

	if (strcmp(path, "-") == 0) {
		add_sink(run, SINK_JSONL, path);
		return;
	}
	for (size_t i = 0; dot && !strchr(dot, '/') && i < sizeof(exts) / sizeof(exts[0]); i++) {
		if (strcasecmp(dot, exts[i].ext) == 0) {
			add_sink(run, exts[i].kind, path);
			return;
		}
	}
	sc_usage_error("%s: cannot tell the format from the name; "
	               "use --jsonl, --csv, --tsv or --sqlite",
	               path);
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

int main(int argc, char **argv)
{
	static struct run run;
	struct csv_opts copts = { .header = true };
	struct sqlite_opts sopts = { .table = "records", .batch_rows = 1000, .batch_ms = 1000 };
	const char *columns = NULL;
	bool append = false, quiet = false, table_given = false, batch_given = false;
	char err[ERRLEN];
	int c;

	sc_setprogname(argv[0]);
	while ((c = getopt_long(argc, argv, "ac:qhV", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_JSONL:
			add_sink(&run, SINK_JSONL, optarg);
			break;
		case OPT_CSV:
			add_sink(&run, SINK_CSV, optarg);
			break;
		case OPT_TSV:
			add_sink(&run, SINK_TSV, optarg);
			break;
		case OPT_SQLITE:
			add_sink(&run, SINK_SQLITE, optarg);
			break;
		case OPT_TABLE:
			sopts.table = optarg;
			table_given = true;
			break;
		case OPT_KEY:
			sopts.key = optarg;
			break;
		case 'c':
			columns = optarg;
			break;
		case OPT_TEE:
			run.tee = true;
			break;
		case 'a':
			append = true;
			break;
		case OPT_NO_HEADER:
			copts.header = false;
			break;
		case OPT_FORMULA:
			copts.formula_escape = true;
			break;
		case OPT_CRLF:
			copts.crlf = true;
			break;
		case OPT_BATCH:
			sopts.batch_rows = sc_parse_long("--batch", optarg, 1, 1000000);
			batch_given = true;
			break;
		case OPT_BATCH_MS:
			sopts.batch_ms = sc_parse_long("--batch-ms", optarg, 1, 3600000);
			batch_given = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			sc_print_help(usage_text);
		case 'V': {
			/* Not sc_print_version: sc-sink does not link libcurl. */
			char libraries[128];
			snprintf(libraries, sizeof(libraries), "jansson %s, SQLite %s",
			         jansson_version_str(), sqlite3_libversion());
			sc_print_version_with(libraries);
		}
		default:
			sc_usage_hint();
		}
	}
	for (int i = optind; i < argc; i++)
		add_bare_sink(&run, argv[i]);

	/* Bad combinations, by name, before any file is touched. */
	if (run.nsinks == 0)
		sc_usage_error("no sink given");
	for (int i = 0; i < run.nsinks; i++) {
		for (int j = 0; j < i; j++)
			if (strcmp(run.sinks[i].path, run.sinks[j].path) == 0)
				sc_usage_error("%s: given twice", run.sinks[i].path);
		if (run.sinks[i].kind == SINK_SQLITE && strcmp(run.sinks[i].path, "-") == 0)
			sc_usage_error("--sqlite: cannot write a database to standard output");
		if (run.tee && strcmp(run.sinks[i].path, "-") == 0)
			sc_usage_error("--tee: standard output is already a sink ('-')");
	}
	if (table_given && !*sopts.table)
		sc_usage_error("--table: empty name");
	if (sopts.key && !*sopts.key)
		sc_usage_error("--key: empty name");
	if (sopts.key && strcasecmp(sopts.key, "record") == 0)
		sc_usage_error("--key: 'record' is the column of whole records");
	if ((table_given || sopts.key || batch_given) && !has_kind(&run, M_SQLITE))
		sc_usage_error("--%s needs a --sqlite sink", table_given ? "table"
		                                             : sopts.key ? "key"
		                                                         : "batch");
	if ((!copts.header || copts.formula_escape || copts.crlf) && !has_kind(&run, M_TEXT))
		sc_usage_error("--%s needs a --csv or --tsv sink", !copts.header ? "no-header"
		                                                   : copts.formula_escape
		                                                           ? "formula-escape"
		                                                           : "crlf");
	if (columns && !has_kind(&run, M_TEXT | M_SQLITE))
		sc_usage_error("--columns needs a --csv, --tsv or --sqlite sink");
	if (append && !has_kind(&run, M_JSONL | M_TEXT))
		sc_usage_error("--append needs a --jsonl, --csv or --tsv sink");
	if (columns) {
		if (columns_parse(&run.columns, columns, err, sizeof(err)) < 0)
			sc_usage_error("%s", err);
		run.have_columns = true;
		if (sopts.key && columns_find(&run.columns, sopts.key) < 0)
			sc_usage_error("--key: '%s' is not one of --columns", sopts.key);
	}
	run.key = sopts.key;

	sc_signals_install(NULL);
	/* atexit runs the last registered first: the temporary files go
	 * first, so that a full disk has room for SQLite's checkpoint. */
	if (atexit(sqlite_cleanup_all) != 0 || atexit(outfile_cleanup_all) != 0)
		sc_die(SC_EXIT_FAILURE, "cannot register the clean-up of temporary files");
	open_sinks(&run, append, &copts, &sopts, columns != NULL);
	read_input(&run);
	finish_sinks(&run);
	if (run.tee)
		sc_close_stdout();
	if (!quiet)
		summary(&run);
	columns_free(&run.columns);
	return sc_exit_status(run.bad > 0 ? SC_EXIT_PARTIAL : SC_EXIT_OK);
}
