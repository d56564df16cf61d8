/* api-contract: what sc.h promises beyond the records, for test/libsc.bats:
 * the version check, the codes' words, the option setters' codes (an
 * unknown option, a flag's words, after the first submit), a submit that
 * is no item, the parser's refusals and NULL arguments.  Prints each
 * broken promise and exits 1; with an argument, prints what
 * sc_selector_explain makes of it instead (for comparing with sc-parse
 * --explain).  It includes sc.h only. */
#include <stdio.h>
#include <string.h>

#include "sc.h"

static int failures;

static void expect(int ok, const char *what)
{
	if (!ok) {
		printf("broken: %s\n", what);
		failures++;
	}
}

static void on_done(sc_fetcher *f, const sc_result *r, void *user, void *ctx)
{
	(void)f, (void)r, (void)user, (void)ctx;
}

/* What a done callback saw: its context, the depth of callbacks (a run
 * nested in a callback would make it 2), what run, perform and timeout
 * said inside it. */
struct inside {
	int calls, depth, deepest, run_rc;
	long timeout;
	size_t pending_after_perform;
};

static void on_done_inside(sc_fetcher *f, const sc_result *r, void *user, void *ctx)
{
	struct inside *in = ctx;

	(void)r, (void)user;
	in->calls++;
	if (++in->depth > in->deepest)
		in->deepest = in->depth;
	if (in->calls == 1) {
		in->run_rc = sc_fetcher_run(f, 1000);
		in->timeout = sc_fetcher_timeout(f);
		in->pending_after_perform = sc_fetcher_perform(f);
	}
	in->depth--;
}

/* A code and its reason: rc is want, and *err is set (then freed). */
static int refused(int rc, int want, char **err, const char *words)
{
	int ok = rc == want && *err && (!words || strstr(*err, words));

	sc_free(*err);
	*err = NULL;
	return ok;
}

static int explain(const char *selector)
{
	char *err = NULL, *xpath = sc_selector_explain(selector, &err);

	printf("%s\n", xpath ? xpath : err);
	sc_free(xpath);
	sc_free(err);
	return xpath ? 0 : 2;
}

static void fetcher_contract(void)
{
	sc_fetcher *f = sc_fetcher_new(on_done, NULL);
	char *err = NULL;

	expect(sc_fetcher_new(NULL, NULL) == NULL, "sc_fetcher_new(NULL) is NULL");
	expect(refused(sc_fetcher_setopt(f, (enum sc_fetcher_option)999, "1", &err), SC_EINVAL,
	               &err, "unknown option 999"),
	       "an unknown option is SC_EINVAL, with its reason");
	expect(refused(sc_fetcher_setopt_long(f, (enum sc_fetcher_option) - 3, 1, &err), SC_EINVAL,
	               &err, "unknown option -3"),
	       "an unknown option (negative) is SC_EINVAL, with its reason");
	expect(refused(sc_fetcher_setopt(NULL, SC_FETCHOPT_QUIET, NULL, &err), SC_EINVAL, &err,
	               "no fetcher"),
	       "a NULL fetcher is SC_EINVAL, with its reason");
	expect(refused(sc_fetcher_setopt_long(f, SC_FETCHOPT_USER_AGENT, 5, &err), SC_EINVAL, &err,
	               "--user-agent takes a string"),
	       "_long on a string option is SC_EINVAL, with its reason");
	expect(refused(sc_fetcher_setopt_double(f, SC_FETCHOPT_METRICS, 1.5, &err), SC_EINVAL, &err,
	               "--metrics takes a string"),
	       "_double on a file option is SC_EINVAL, with its reason");
	expect(refused(sc_fetcher_setopt_long(f, SC_FETCHOPT_HEADER, 1, &err), SC_EINVAL, &err,
	               "--header takes a string"),
	       "_long on -H is SC_EINVAL, with its reason");
	expect(sc_fetcher_setopt(f, SC_FETCHOPT_ROBOTS, NULL, &err) == SC_OK, "a flag on (NULL)");
	expect(sc_fetcher_setopt(f, SC_FETCHOPT_ROBOTS, "0", &err) == SC_OK, "a flag off (\"0\")");
	expect(sc_fetcher_setopt(f, SC_FETCHOPT_ROBOTS, "yes", &err) == SC_EBADVALUE && err,
	       "a flag's value other than 0 or 1 is refused, with a reason");
	sc_free(err);
	err = NULL;
	expect(sc_fetcher_setopt_long(f, SC_FETCHOPT_ADAPTIVE, 0, NULL) == SC_OK, "--no-adaptive");
	/* Every option of the enum names a row of sc-fetch's table (a
	 * fetcher of its own: the values are nonsense). */
	sc_fetcher *every = sc_fetcher_new(on_done, NULL);
	int unknown = 0;
	for (int opt = SC_FETCHOPT_INSECURE; opt <= SC_FETCHOPT_PROGRESS; opt++)
		unknown += sc_fetcher_setopt(every, (enum sc_fetcher_option)opt, "1", NULL) ==
		           SC_EINVAL;
	expect(unknown == 0, "every option of the enum is known");
	sc_fetcher_free(every);
	expect(sc_fetcher_setopt_long(f, SC_FETCHOPT_WARC_LEVEL, 10, &err) == SC_EBADVALUE && err &&
	               strstr(err, "--warc-level"),
	       "--warc-level 10 is refused in sc-fetch's words");
	sc_free(err);
	err = NULL;
	expect(sc_fetcher_setopt_long(f, SC_FETCHOPT_WARC_LEVEL, 6, NULL) == SC_OK,
	       "--warc-level 6");
	expect(sc_fetcher_setopt_double(f, SC_FETCHOPT_TIMEOUT, 2.5, NULL) == SC_OK, "-m 2.5");
	expect(refused(sc_fetcher_setopt(f, SC_FETCHOPT_TIMEOUT, NULL, &err), SC_EINVAL, &err,
	               "--timeout needs a value"),
	       "an option that takes a value, without one, is SC_EINVAL, with its reason");
	expect(sc_fetcher_setopt(f, SC_FETCHOPT_HEADER, "no colon", &err) == SC_EBADVALUE && err &&
	               strstr(err, "--header"),
	       "a bad -H is refused in sc-fetch's words");
	sc_free(err);
	err = NULL;
	expect(sc_fetcher_fd(f) == -1 && sc_fetcher_timeout(f) == -1,
	       "no descriptor before a submit");
	expect(sc_fetcher_submit(f, "   ", NULL, &err) == SC_EBADVALUE && err,
	       "a blank line is no item");
	sc_free(err);
	err = NULL;
	expect(sc_fetcher_submit(f, "# note", NULL, NULL) == SC_EBADVALUE, "a comment is no item");
	expect(sc_fetcher_pending(f) == 0, "nothing pending after no item");
	expect(sc_fetcher_submit(f, "not a url", NULL, NULL) == SC_OK, "a bad URL is an item");
	expect(refused(sc_fetcher_setopt_long(f, SC_FETCHOPT_CONCURRENCY, 2, &err), SC_EBUSY, &err,
	               "fixed at the first submit"),
	       "options are fixed at the first submit, and it says so");
	expect(refused(sc_fetcher_submit(f, NULL, NULL, &err), SC_EINVAL, &err, "no item"),
	       "a NULL item is SC_EINVAL, with its reason");
	expect(sc_fetcher_fd(f) >= 0, "a descriptor after the first submit");
	expect(sc_fetcher_run(f, 5000) == SC_OK && sc_fetcher_pending(f) == 0, "run until idle");
	expect(sc_fetcher_timeout(f) == -1, "no timeout when idle");
	sc_fetcher_finish(f);
	expect(refused(sc_fetcher_submit(f, "http://127.0.0.1/", NULL, &err), SC_EINVAL, &err,
	               "sc_fetcher_finish"),
	       "no submit after finish, and it says why");
	sc_fetcher_free(f);
	sc_fetcher_free(NULL);
}

/* Inside a done callback: the fetcher's context is there; a run is
 * refused (SC_EBUSY), a perform does nothing, the timeout is 0: no other
 * callback runs nested inside it. */
static void callback_contract(void)
{
	struct inside in = { .run_rc = -1, .timeout = -1 };
	sc_fetcher *f = sc_fetcher_new(on_done_inside, &in);

	/* Items that are no URLs: each is done at once, as a bad_input. */
	for (int i = 0; i < 3; i++)
		expect(sc_fetcher_submit(f, "not a url", NULL, NULL) == SC_OK,
		       "a bad URL is an item");
	expect(sc_fetcher_run(f, 5000) == SC_OK, "the run ends");
	expect(in.calls == 3, "done once per submit, with the fetcher's context");
	expect(in.run_rc == SC_EBUSY, "sc_fetcher_run inside a done callback is SC_EBUSY");
	expect(in.timeout == 0, "sc_fetcher_timeout inside a done callback is 0");
	expect(in.pending_after_perform == 2, "sc_fetcher_perform inside a callback does nothing");
	expect(in.deepest == 1, "no callback nested inside another");
	sc_fetcher_finish(f);
	sc_fetcher_free(f);
}

/* sc_fetcher_setopt_argv: sc-fetch's command line, its errors in
 * sc-fetch's words, -h and -V reported, operands found; the usage text. */
static void argv_contract(void)
{
	sc_fetcher *f = sc_fetcher_new(on_done, NULL);
	char *err = NULL, *usage;
	char prog[] = "/x/my-fetch", c[] = "-c", three[] = "3", op[] = "more",
	     robots[] = "--robots", m[] = "-m", x[] = "x", h[] = "--help",
	     rc[] = "--robots-cache=r.db";
	char *good[] = { prog, c, three, op, robots, NULL };
	char *bad[] = { prog, m, x, NULL };
	char *help[] = { prog, c, three, h, NULL };
	char *apart[] = { prog, rc, NULL };
	unsigned asked = 9;
	int first = -1;

	expect(sc_fetcher_setopt_argv(f, 5, good, &first, &asked, &err) == SC_OK && !err &&
	               asked == 0 && first == 4 && strcmp(good[4], "more") == 0,
	       "argv: options around an operand, permuted, the operand's index");
	expect(sc_fetcher_setopt_argv(f, 3, bad, &first, &asked, &err) == SC_EBADVALUE && err &&
	               strcmp(err, "--timeout: 'x' is not a number") == 0,
	       "argv: a bad value in sc-fetch's words");
	sc_free(err);
	err = NULL;
	expect(sc_fetcher_setopt_argv(f, 4, help, &first, &asked, NULL) == SC_OK &&
	               asked == SC_ARGV_HELP,
	       "argv: --help is reported");
	sc_fetcher *g = sc_fetcher_new(on_done, NULL);
	expect(sc_fetcher_setopt_argv(g, 2, apart, &first, NULL, &err) == SC_EBADVALUE && err &&
	               strstr(err, "--robots-cache"),
	       "argv: options checked together (--robots-cache needs --robots)");
	sc_free(err);
	err = NULL;
	expect(sc_fetcher_setopt_argv(g, 0, apart, &first, NULL, NULL) == SC_EINVAL,
	       "argv: argc 0 is SC_EINVAL");
	sc_fetcher_free(g);
	usage = sc_fetcher_usage("my-fetch", "< urls");
	expect(usage && strncmp(usage, "usage: my-fetch [-kq] [-c N]", 28) == 0 &&
	               strstr(usage, "--warc-dedupe file") && strstr(usage, "< urls\n"),
	       "the usage names the program and every option");
	sc_free(usage);
	expect(sc_fetcher_set_warning(f, NULL, NULL) == SC_OK, "a warning callback before start");
	expect(sc_fetcher_failed(f) == 0 && sc_fetcher_failed(NULL) == 0, "nothing failed yet");
	expect(refused(sc_fetcher_run_fd(f, -1, "x", &err), SC_EINVAL, &err, "no descriptor"),
	       "run_fd on no descriptor, with its reason");
	sc_fetcher_drain(NULL);
	sc_fetcher_cancel(NULL);
	sc_fetcher_free(f);
}

static void parser_contract(void)
{
	const char *bad[] = { "t=title", "t=h1" }, *good[] = { "t=title" };
	char *err = NULL, *out = NULL;
	size_t len = 1;
	sc_parser *p = sc_parser_new(bad, 2, NULL, NULL, 0, 0, &err);

	expect(!p && err && strcmp(err, "-f t: field named twice") == 0, "-f named twice");
	sc_free(err);
	err = NULL;
	expect(!sc_parser_new(NULL, 1, NULL, NULL, 0, 0, NULL), "fields NULL with a count");
	p = sc_parser_new(good, 1, NULL, NULL, 0, 0, &err);
	expect(p && !err, "a good spec");
	expect(sc_parser_apply(p, NULL, 0, &out, &len) == SC_EINVAL && !out,
	       "NULL input is SC_EINVAL, nothing output");
	expect(sc_parser_apply(p, "[1]", 3, &out, &len) == SC_EBADRECORD && out &&
	               strlen(out) == len && out[len - 1] == '\n' && sc_parser_failed(p) == 1 &&
	               sc_parser_warning(p) &&
	               strcmp(sc_parser_warning(p), "not a JSON object") == 0,
	       "a line that is no record: its bad_input record, counted, with its warning");
	sc_free(out);
	expect(sc_parser_setopt(p, (enum sc_parser_option)99, 1) == SC_EINVAL,
	       "an unknown parser option");
	expect(sc_parser_setopt(p, SC_PARSEROPT_LINE_MAX, 1) == SC_EINVAL, "a line maximum of 1");
	sc_parser_free(p);
	sc_parser_free(NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return explain(argv[1]);
	expect(sc_version_num() == SC_VERSION_NUM, "the library is this header's version");
	expect(strcmp(sc_version(), "0.1.0") == 0 || sc_version()[0] != '\0', "sc_version");
	expect(strcmp(sc_strerror(SC_OK), "success") == 0, "SC_OK's words");
	expect(strcmp(sc_strerror(SC_ETIMEOUT), "timed out") == 0, "SC_ETIMEOUT's words");
	expect(strcmp(sc_strerror(-1), "unknown error") == 0 &&
	               strcmp(sc_strerror(1000), "unknown error") == 0,
	       "an unknown code's words");
	expect(sc_global_init() == SC_OK, "sc_global_init");
	fetcher_contract();
	callback_contract();
	argv_contract();
	parser_contract();
	sc_global_cleanup();
	return failures ? 1 : 0;
}
