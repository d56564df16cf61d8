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
#include <getopt.h>
#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kit/cli.h"
#include "frontier.h"
#include "record/metrics.h"
#include "core/signals.h"
#include "core/util.h"

/* A copy of the SYNOPSIS of man/sc-frontier.1. */
static const char usage_text[] =
        "usage: sc-frontier [-hqV] [-d n] [-s scope] [--allow regex] [--deny regex]\n"
        "                   [--links name] [--max-per-host n] [--strip-query regex]\n"
        "                   [--seen file [--no-commit] [--add urls]] [--seeds] < records\n"
        "       sc-frontier --commit --seen file [--strip-query regex] < urls\n";

enum {
	OPT_ALLOW = 256,
	OPT_DENY,
	OPT_LINKS,
	OPT_MAX_PER_HOST,
	OPT_STRIP_QUERY,
	OPT_SEEN,
	OPT_NO_COMMIT,
	OPT_SEEDS,
	OPT_COMMIT,
	OPT_ADD,
};

static const struct option long_options[] = {
	{ "add", required_argument, NULL, OPT_ADD },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "commit", no_argument, NULL, OPT_COMMIT },
	{ "deny", required_argument, NULL, OPT_DENY },
	{ "help", no_argument, NULL, 'h' },
	{ "links", required_argument, NULL, OPT_LINKS },
	{ "max-depth", required_argument, NULL, 'd' },
	{ "max-per-host", required_argument, NULL, OPT_MAX_PER_HOST },
	{ "no-commit", no_argument, NULL, OPT_NO_COMMIT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "scope", required_argument, NULL, 's' },
	{ "seeds", no_argument, NULL, OPT_SEEDS },
	{ "seen", required_argument, NULL, OPT_SEEN },
	{ "strip-query", required_argument, NULL, OPT_STRIP_QUERY },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static const char *const reason_names[R_COUNT] = {
	[R_NOT_URL] = "not_url",   [R_NOT_HTTP] = "not_http", [R_DEPTH] = "depth",
	[R_SCOPE] = "scope",       [R_DENIED] = "denied",     [R_NOT_ALLOWED] = "not_allowed",
	[R_PER_HOST] = "per_host", [R_SEEN] = "seen",         [R_REPEATED] = "repeated",
};

static void compile(const char *option, const char *pattern, regex_t *re)
{
	char why[256];
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (rc != 0) {
		regerror(rc, re, why, sizeof(why));
		sc_usage_error("%s: '%s': %s", option, pattern, why);
	}
}

static enum scope parse_scope(const char *arg)
{
	static const char *const names[] = { "host", "domain", "prefix", "any" };

	for (int i = 0; i < 4; i++)
		if (strcmp(arg, names[i]) == 0)
			return (enum scope)i;
	sc_usage_error("--scope: '%s' is not host, domain, prefix or any", arg);
}

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

int main(int argc, char **argv)
{
	static struct options o = {
		.scope = SCOPE_HOST, .links = "links", .max_depth = -1, .max_per_host = -1
	};
	static regex_t strip;
	struct counts c = { 0 }, added_counts = { 0 };
	bool quiet = false, filters = false;
	uint64_t committed = 0, added = 0;
	char err[600];
	int opt;

	sc_setprogname(argv[0]);
	while ((opt = getopt_long(argc, argv, "d:hqs:V", long_options, NULL)) != -1) {
		switch (opt) {
		case OPT_ALLOW:
		case OPT_DENY:
			if ((opt == OPT_ALLOW ? o.nallow : o.ndeny) == MAX_PATTERNS)
				sc_usage_error("--%s: at most %d",
				               opt == OPT_ALLOW ? "allow" : "deny", MAX_PATTERNS);
			if (opt == OPT_ALLOW)
				compile("--allow", optarg, &o.allow[o.nallow++]);
			else
				compile("--deny", optarg, &o.deny[o.ndeny++]);
			filters = true;
			break;
		case OPT_LINKS:
			o.links = optarg ? optarg : "";
			break;
		case 'd':
			o.max_depth = sc_parse_long("--max-depth", optarg, 0, 1000000);
			filters = true;
			break;
		case OPT_MAX_PER_HOST:
			o.max_per_host = sc_parse_long("--max-per-host", optarg, 0, 1000000000000L);
			filters = true;
			break;
		case 's':
			o.scope = parse_scope(optarg);
			filters = true;
			break;
		case OPT_STRIP_QUERY:
			if (o.strip_query)
				sc_usage_error("--strip-query: given twice (use one regex with |)");
			compile("--strip-query", optarg, &strip);
			o.strip_query = &strip;
			break;
		case OPT_SEEN:
			o.seen = optarg;
			break;
		case OPT_ADD:
			o.add = optarg;
			break;
		case OPT_NO_COMMIT:
			o.no_commit = true;
			break;
		case OPT_SEEDS:
		case OPT_COMMIT:
			if (o.mode != MODE_LINKS)
				sc_usage_error("--seeds and --commit: one or the other");
			o.mode = opt == OPT_SEEDS ? MODE_SEEDS : MODE_COMMIT;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			sc_print_help(usage_text);
		case 'V':
			sc_print_version();
		default:
			sc_usage_hint();
		}
	}

	/* Bad combinations, by name, before any file is touched. */
	if (optind < argc)
		sc_usage_error("'%s': records are read from standard input", argv[optind]);
	if (o.seen && !*o.seen)
		sc_usage_error("--seen: empty file name");
	if (o.no_commit && !o.seen)
		sc_usage_error("--no-commit needs --seen");
	if (o.mode == MODE_COMMIT && !o.seen)
		sc_usage_error("--commit needs --seen");
	if (o.mode == MODE_COMMIT && o.no_commit)
		sc_usage_error("--commit and --no-commit: one or the other");
	if (o.add && !*o.add)
		sc_usage_error("--add: empty file name");
	if (o.add && !o.seen)
		sc_usage_error("--add needs --seen");
	if (o.add && o.mode == MODE_COMMIT)
		sc_usage_error("--add and --commit: --commit adds standard input already");
	if (o.mode == MODE_COMMIT && filters)
		sc_usage_error("--commit adds every URL it reads; it takes no scope, depth, "
		               "--allow, --deny or --max-per-host");
	if (!o.links || (o.mode != MODE_LINKS && strcmp(o.links, "links") != 0))
		sc_usage_error("--links: a seed or a URL record has no links");
	if (!o.links || !*o.links)
		sc_usage_error("--links: empty name");

	sc_signals_install(NULL);
	struct seen *s = seen_open(o.seen, err, sizeof(err));
	if (!s)
		sc_die(SC_EXIT_FAILURE, "%s", err);
	if (o.add && add_round_file(&o, s, &added_counts, &added) < 0) {
		seen_close(s);
		return SC_EXIT_FAILURE;
	}
	if (o.mode == MODE_COMMIT)
		seen_direct(s, true);
	/* The first signal does not stop the run: the input is read to its
	 * end, as the other later stages of a pipeline do, and the output
	 * that was written is committed. */
	if (round_run(&o, s, STDIN_FILENO, "<stdin>", stdout, &c) < 0) {
		seen_close(s);
		return SC_EXIT_FAILURE;
	}
	if (o.mode != MODE_COMMIT)
		finish_stdout();
	bool committing = o.seen && !o.no_commit;
	if (committing && seen_commit(s, &committed) < 0) {
		sc_warn("%s: %s", o.seen, seen_error(s));
		seen_close(s);
		return SC_EXIT_FAILURE;
	}
	seen_close(s);
	if (!quiet)
		summary(&c, committing, committed, o.add != NULL, added);
	for (int i = 0; i < o.nallow; i++)
		regfree(&o.allow[i]);
	for (int i = 0; i < o.ndeny; i++)
		regfree(&o.deny[i]);
	if (o.strip_query)
		regfree(o.strip_query);
	return sc_signals_exit_status(c.malformed || added_counts.malformed ? SC_EXIT_PARTIAL
	                                                                    : SC_EXIT_OK);
}
