/* sc-frontier: the next round's URLs, from the links of this round's pages.
 *
 * It reads records (sc-parse output), takes each page's links to canonical
 * form, keeps those within the seed's scope and depth, drops the ones a
 * seen set already holds, and writes one URL record per line.  It is a
 * many-to-many filter, so the count contract of the other stages does not
 * apply: a malformed line is a diagnostic on stderr and a count in the
 * summary, not a record (a bad_input record here would be fetched as a
 * URL by the next round).
 *
 * The order of writes keeps the seen set and the output in agreement:
 * this run's URLs are gathered in a temporary set, and are added to the
 * --seen file only after standard output has been written, flushed,
 * synced when it is a file, and closed without error.  A kill before that
 * loses nothing: the next run emits the same URLs again. */
#include <fcntl.h>
#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/sqlite_shared.h"
#include "core/util.h"
#include "frontier.h"
#include "kit/cli.h"
#include "kit/opt.h"
#include "record/metrics.h"

static const char *const reason_names[R_COUNT] = {
	[R_NOT_URL] = "not_url",   [R_NOT_HTTP] = "not_http", [R_DEPTH] = "depth",
	[R_SCOPE] = "scope",       [R_DENIED] = "denied",     [R_NOT_ALLOWED] = "not_allowed",
	[R_PER_HOST] = "per_host", [R_SEEN] = "seen",         [R_REPEATED] = "repeated",
};

/* Standard output, written and on disk when it is a file, then closed:
 * only after this may the seen set say that its URLs were emitted. */
static void finish_stdout(void)
{
	struct stat st;

	if (fflush(stdout) != 0)
		sc_die_write("error writing standard output:");
	if (fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) && fsync(STDOUT_FILENO) != 0)
		sc_die_write("error writing standard output:");
	sc_close_stdout();
}

static void summary(const struct counts *c, bool committing, uint64_t committed, bool adding,
                    uint64_t added)
{
	json_t *reasons = json_object();

	for (int i = 0; i < R_COUNT; i++)
		json_object_set_new(reasons, reason_names[i],
		                    json_integer((json_int_t)c->reason[i]));
	json_t *obj = json_pack(
	        "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "pages", (json_int_t)c->pages,
	        "links", (json_int_t)c->links, "emitted", (json_int_t)c->emitted, "duplicates",
	        (json_int_t)(c->reason[R_SEEN] + c->reason[R_REPEATED]), "out_of_scope",
	        (json_int_t)(c->reason[R_DEPTH] + c->reason[R_SCOPE] + c->reason[R_DENIED] +
	                     c->reason[R_NOT_ALLOWED] + c->reason[R_PER_HOST]),
	        "invalid", (json_int_t)(c->reason[R_NOT_URL] + c->reason[R_NOT_HTTP]), "malformed",
	        (json_int_t)c->malformed, "committed",
	        committing ? json_integer((json_int_t)committed) : json_null(), "reasons", reasons);
	json_object_set_new(obj, "added", adding ? json_integer((json_int_t)added) : json_null());
	sc_metrics_write(stderr, obj);
	json_decref(obj);
}

/* --add: a round file's URLs go into the seen set first, in their own
 * transaction, as sc-frontier --commit would add them: a crawl commits
 * one round and computes the next in one run (see sc-crawl(7)). */
static int add_round_file(const struct options *o, struct seen *s, struct counts *c,
                          uint64_t *added)
{
	struct options a = { .mode = MODE_COMMIT,
		             .links = "links",
		             .strip_query = o->strip_query,
		             .max_depth = -1,
		             .max_per_host = -1 };
	int fd = open(o->add, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0) {
		sc_warn("%s:", o->add);
		return -1;
	}
	seen_direct(s, true);
	rc = round_run(&a, s, fd, o->add, NULL, c);
	close(fd);
	if (rc == 0 && seen_commit(s, added) < 0) {
		sc_warn("%s: %s", o->seen, seen_error(s));
		rc = -1;
	}
	seen_direct(s, false);
	return rc;
}

/* The command line: the options round.c reads, and main's own. */
struct cli {
	struct options o;
	regex_t strip; /* o.strip_query's */
	bool quiet;
	bool filters; /* a scope, --allow or --deny was given */
};

static int compile(const struct sc_opt *row, const char *pattern, regex_t *re, char *err,
                   size_t errlen)
{
	char why[256];
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (rc == 0)
		return 0;
	regerror(rc, re, why, sizeof(why));
	return snprintf(err, errlen, "--%s: '%s': %s", row->name, pattern, why), -1;
}

/* --allow and --deny (row->tag 1). */
static int add_pattern(void *base, const struct sc_opt *row, const char *arg, char *err,
                       size_t errlen)
{
	struct cli *cli = base;
	int *n = row->tag ? &cli->o.ndeny : &cli->o.nallow;
	regex_t *re = row->tag ? cli->o.deny : cli->o.allow;

	if (*n == MAX_PATTERNS)
		return snprintf(err, errlen, "--%s: at most %d", row->name, MAX_PATTERNS), -1;
	if (compile(row, arg, &re[*n], err, errlen) != 0)
		return -1;
	(*n)++;
	cli->filters = true;
	return 0;
}

static int set_scope(void *base, const struct sc_opt *row, const char *arg, char *err,
                     size_t errlen)
{
	static const char *const names[] = { "host", "domain", "prefix", "any" };
	struct cli *cli = base;

	(void)row;
	for (int i = 0; i < 4; i++) {
		if (strcmp(arg, names[i]) == 0) {
			cli->o.scope = (enum scope)i;
			cli->filters = true;
			return 0;
		}
	}
	return snprintf(err, errlen, "--scope: '%s' is not host, domain, prefix or any", arg), -1;
}

static int set_strip_query(void *base, const struct sc_opt *row, const char *arg, char *err,
                           size_t errlen)
{
	struct cli *cli = base;

	if (cli->o.strip_query)
		return snprintf(err, errlen, "--strip-query: given twice (use one regex with |)"),
		       -1;
	if (compile(row, arg, &cli->strip, err, errlen) != 0)
		return -1;
	cli->o.strip_query = &cli->strip;
	return 0;
}

/* --seeds and --commit (row->tag: the mode). */
static int set_mode(void *base, const struct sc_opt *row, const char *arg, char *err, size_t errlen)
{
	struct cli *cli = base;

	(void)arg;
	if (cli->o.mode != MODE_LINKS)
		return snprintf(err, errlen, "--seeds and --commit: one or the other"), -1;
	cli->o.mode = (enum mode)row->tag;
	return 0;
}

#define AT(member) SC_OPT_AT(struct cli, member)

/* In the order of the usage line, which is the SYNOPSIS of sc-frontier(1). */
static const struct sc_opt rows[] = {
	SC_OPT_ROW_HELP(NULL),
	SC_OPT_ROW_FLAG("quiet", 'q', AT(quiet)),
	SC_OPT_ROW_VERSION(NULL),
	SC_OPT_ROW_WHOLE("max-depth", 'd', "n", AT(o.max_depth), 0, 1000000),
	SC_OPT_ROW_CALL("scope", 's', "scope", set_scope, 0),
	SC_OPT_ROW_CALL("allow", 0, "regex", add_pattern, 0),
	SC_OPT_ROW_CALL("deny", 0, "regex", add_pattern, 1),
	SC_OPT_ROW_STRING("links", 0, "name", AT(o.links)),
	SC_OPT_ROW_WHOLE("max-per-host", 0, "n", AT(o.max_per_host), 0, 1000000000000L),
	SC_OPT_ROW_CALL("strip-query", 0, "regex", set_strip_query, 0),
	{ .name = "seen",
	  .kind = SC_OPT_STRING,
	  .arg = "file",
	  AT(o.seen),
	  .usage = "[--seen file [--no-commit] [--add urls]]" },
	{ .name = "no-commit", .kind = SC_OPT_FLAG, AT(o.no_commit), .usage = "" },
	{ .name = "add", .kind = SC_OPT_STRING, .arg = "urls", AT(o.add), .usage = "" },
	SC_OPT_ROW_CALL("seeds", 0, NULL, set_mode, MODE_SEEDS),
	{ .name = "commit",
	  .kind = SC_OPT_CALL,
	  .call = set_mode,
	  .tag = MODE_COMMIT,
	  .usage = "" },
	{ 0 },
};

/* Bad combinations, by name, before any file is touched. */
static void check_options(const struct cli *cli)
{
	const struct options *o = &cli->o;
	bool filters = cli->filters || o->max_depth >= 0 || o->max_per_host >= 0;

	char why[512];

	if (o->seen && !*o->seen)
		sc_usage_error("--seen: empty file name");
	if (o->seen && sc_sqlite_name_problem(o->seen, why, sizeof(why)))
		sc_usage_error("--seen: %s", why);
	if (o->no_commit && !o->seen)
		sc_usage_error("--no-commit needs --seen");
	if (o->mode == MODE_COMMIT && !o->seen)
		sc_usage_error("--commit needs --seen");
	if (o->mode == MODE_COMMIT && o->no_commit)
		sc_usage_error("--commit and --no-commit: one or the other");
	if (o->add && !*o->add)
		sc_usage_error("--add: empty file name");
	if (o->add && !o->seen)
		sc_usage_error("--add needs --seen");
	if (o->add && o->mode == MODE_COMMIT)
		sc_usage_error("--add and --commit: --commit adds standard input already");
	if (o->mode == MODE_COMMIT && filters)
		sc_usage_error("--commit adds every URL it reads; it takes no scope, depth, "
		               "--allow, --deny or --max-per-host");
	if (!o->links || (o->mode != MODE_LINKS && strcmp(o->links, "links") != 0))
		sc_usage_error("--links: a seed or a URL record has no links");
	if (!o->links || !*o->links)
		sc_usage_error("--links: empty name");
}

/* Reads the command line into cli, or ends the run: --help, --version, a
 * usage error (exit 2). */
static void parse_options(struct cli *cli, int argc, char **argv)
{
	const struct sc_opt_set sets[] = { { rows, cli } };
	char err[600];
	int first = sc_opt_parse(sets, 1, argc, argv, err, sizeof(err));

	if (first == SC_OPT_PARSE_HELP)
		sc_print_help(sc_opt_usage(
		        sets, 1, "< records",
		        "       sc-frontier --commit --seen file [--strip-query regex] < urls\n"));
	if (first == SC_OPT_PARSE_VERSION)
		sc_print_version();
	if (first == SC_OPT_PARSE_ERROR)
		sc_usage_error("%s", err);
	if (first < argc)
		sc_usage_error("'%s': records are read from standard input", argv[first]);
	check_options(cli);
}

int main(int argc, char **argv)
{
	static struct cli cli = {
		.o = { .scope = SCOPE_HOST, .links = "links", .max_depth = -1, .max_per_host = -1 }
	};
	struct options *o = &cli.o;
	struct counts c = { 0 }, added_counts = { 0 };
	uint64_t committed = 0, added = 0;
	char err[600];

	sc_setprogname(argv[0]);
	sc_stdio_hold();
	parse_options(&cli, argc, argv);

	sc_signals_install(NULL);
	struct seen *s = seen_open(o->seen, err, sizeof(err));
	if (!s)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	if (o->add && add_round_file(o, s, &added_counts, &added) < 0) {
		seen_close(s);
		return SC_EXIT_FAILURE;
	}
	if (o->mode == MODE_COMMIT)
		seen_direct(s, true);
	/* The first signal does not stop the run: the input is read to its
	 * end, as the other later stages of a pipeline do, and the output
	 * that was written is committed. */
	if (round_run(o, s, STDIN_FILENO, "<stdin>", stdout, &c) < 0) {
		seen_close(s);
		return SC_EXIT_FAILURE;
	}
	if (o->mode != MODE_COMMIT)
		finish_stdout();
	bool committing = o->seen && !o->no_commit;
	if (committing && seen_commit(s, &committed) < 0) {
		sc_warn("%s: %s", o->seen, seen_error(s));
		seen_close(s);
		return SC_EXIT_FAILURE;
	}
	seen_close(s);
	if (!cli.quiet)
		summary(&c, committing, committed, o->add != NULL, added);
	for (int i = 0; i < o->nallow; i++)
		regfree(&o->allow[i]);
	for (int i = 0; i < o->ndeny; i++)
		regfree(&o->deny[i]);
	if (o->strip_query)
		regfree(o->strip_query);
	return sc_signals_exit_status(c.malformed || added_counts.malformed ? SC_EXIT_PARTIAL
	                                                                    : SC_EXIT_OK);
}
