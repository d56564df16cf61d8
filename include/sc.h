/* sc.h: libsc, the public C API of sc: the fetch engine of sc-fetch(1) and
 * the field extraction of sc-parse(1), as a library.
 *
 * Everything here is prefixed sc_ (SC_ for macros and constants); every
 * handle is opaque; options are set through enums whose values are never
 * renumbered (new ones are added at the end).  The library prints nothing
 * (but SC_FETCHOPT_PROGRESS's status line, on standard error when it is a
 * terminal) and exits only when memory runs out: functions return an int code
 * (SC_OK, or one of enum sc_code, worded by sc_strerror) and, where there
 * is more to say, error text the caller frees.  See sc(3) for the overview,
 * sc_parser(3), sc_fetcher(3), sc_fetcher_argv(3), sc_result(3) and
 * sc_version(3).
 *
 * Threads: a handle is used from one thread at a time; different handles
 * may be used from different threads at once (fetchers share no state:
 * each has its own descriptors, libcurl's set-up is made under a lock).
 * sc_global_init and sc_global_cleanup are the exceptions: call them once,
 * before any other thread uses libsc, and after the last.  Each function
 * says so too.
 *
 * Memory: a char * that a function hands out is the caller's, freed with
 * sc_free; a const char * is borrowed from the handle it came from, valid
 * as that function says. */
#ifndef SC_H
#define SC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SC_EXPORT __attribute__((visibility("default")))
#else
#define SC_EXPORT
#endif

/* The version of this header: major * 10000 + minor * 100 + patch.  The
 * library's own is sc_version_num(); a program built against this header
 * runs with any library whose major is the same and whose number is at
 * least this one. */
#define SC_VERSION_MAJOR 0
#define SC_VERSION_MINOR 1
#define SC_VERSION_PATCH 0
#define SC_VERSION_NUM (SC_VERSION_MAJOR * 10000 + SC_VERSION_MINOR * 100 + SC_VERSION_PATCH)

/* Return codes.  Never renumbered. */
enum sc_code {
	SC_OK = 0,
	SC_EINVAL = 1,     /* a bad argument: NULL handle, unknown option, wrong type */
	SC_EBADVALUE = 2,  /* an option's or a spec's value is refused (error text says why) */
	SC_EBUSY = 3,      /* not now: the fetcher has started, options are fixed; or
	                      a run asked from inside one of its callbacks */
	SC_ESYSTEM = 4,    /* the system refused (a file, a descriptor); error text says why */
	SC_EBADRECORD = 5, /* the input is not a record (sc_parser_apply: the output is an
	                      error record all the same) */
	SC_ETIMEOUT = 6,   /* sc_fetcher_run: the time ran out before the fetcher was idle */
};

/* The number of the library that is running (SC_VERSION_NUM of its build).
 * Thread-safe. */
SC_EXPORT int sc_version_num(void);
/* The same as text: "0.1.0".  Static; thread-safe. */
SC_EXPORT const char *sc_version(void);
/* What code means, in a few words ("bad argument").  Static; thread-safe. */
SC_EXPORT const char *sc_strerror(int code);
/* Frees what libsc handed out as char * (error texts, JSON).  Thread-safe. */
SC_EXPORT void sc_free(void *p);

/* Sets up libcurl and libxml2 for the process, until sc_global_cleanup.
 * Optional: without it, libcurl is set up while a fetcher has started
 * (the first one of the process sets it up, the last one freed cleans it
 * up), and libxml2 at the first sc_parser_new; with it, fetchers do not
 * set libcurl up again.  A threaded program calls it once before its
 * threads start (libxml2's set-up is not thread-safe).  Returns SC_OK or
 * SC_ESYSTEM. */
SC_EXPORT int sc_global_init(void);
/* Undoes sc_global_init, after the last handle is freed.  Not thread-safe. */
SC_EXPORT void sc_global_cleanup(void);

/* ---- Parsing: sc_parser(3) ---------------------------------------------- */

typedef struct sc_parser sc_parser;

/* Flags of sc_parser_new. */
#define SC_PARSER_KEEP_BODY 1u /* sc-parse --keep-body: the body stays in the record */
#define SC_PARSER_FORMS 2u     /* sc-parse --forms: a record per form, as sc-fetch sends it */
#define SC_PARSER_STRUCTURED \
	4u /* sc-parse --structured: a "structured" member, every
                                   kind (SC_PARSEROPT_STRUCTURED picks) */
/* sc-parse --main: "title", "byline", "published" and "text", the page's
 * main content as text, boilerplate removed */
#define SC_PARSER_MAIN 8u
/* sc-parse --markdown: "title", "byline", "published" and "markdown", the
 * same content as Markdown */
#define SC_PARSER_MARKDOWN 16u
/* sc-parse --simhash: "simhash", the 64-bit simhash of the main text in hex */
#define SC_PARSER_SIMHASH 32u
/* sc-parse --requisites: a "requisites" member, the absolute URLs of what
 * the page (or stylesheet) needs to be displayed */
#define SC_PARSER_REQUISITES 64u

/* Compiles the specs of one sc-parse command line: fields[0..nfields) as
 * -f's NAME=SELECTOR (or NAME[]=SELECTOR), each as --each's SELECTOR (or
 * NULL), require[0..nrequire) as --require's NAMEs; no fields: the default
 * fields (title, description, canonical, lang, h1, links).  Returns the
 * parser, or NULL with the reason in *errmsg (if errmsg is not NULL; free
 * it with sc_free), worded as sc-parse's usage error ("-f x: invalid
 * selector at column 3: ...").  The strings are copied.  Thread-safe. */
SC_EXPORT sc_parser *sc_parser_new(const char *const *fields, size_t nfields, const char *each,
                                   const char *const *require, size_t nrequire, unsigned flags,
                                   char **errmsg);

/* A new parser with p's specs, for another thread (compiling them again
 * cannot fail).  p may be in use by another thread meanwhile. */
SC_EXPORT sc_parser *sc_parser_dup(const sc_parser *p);

/* Frees p (NULL: nothing).  One thread at a time per parser. */
SC_EXPORT void sc_parser_free(sc_parser *p);

/* Applies p to one fetch record, record_json[0..len) (one line of
 * sc-record(5), without its newline): *out_json is the output, exactly the
 * bytes sc-parse writes for that line: one record per line, each ending in
 * a newline (--each may make several).  *out_len (if not NULL) is its
 * length.  Returns SC_OK; SC_EBADRECORD when the input was malformed (the
 * output is then its bad_input record, as sc-parse writes it); SC_EINVAL
 * (nothing output) for a NULL argument.  A malformed record's line number
 * is the count of calls on p.  Free *out_json with sc_free.  One thread at
 * a time per parser. */
SC_EXPORT int sc_parser_apply(sc_parser *p, const char *record_json, size_t len, char **out_json,
                              size_t *out_len);

/* What the last sc_parser_apply on p made: the number of output records
 * that p made not ok (bad input, --require, a body it could not read),
 * and the diagnostic sc-parse would print for it without its "NAME:LINE: "
 * prefix, or NULL (borrowed: valid until p's next apply). */
SC_EXPORT size_t sc_parser_failed(const sc_parser *p);
SC_EXPORT const char *sc_parser_warning(const sc_parser *p);

/* sc-parse's input, as the line reader gives it: lineno names the line in
 * a bad_input record; SC_APPLY_TRUNCATED says record_json is the start of
 * a line cut at the line maximum (sc_parser_setopt SC_PARSEROPT_LINE_MAX).
 * Otherwise as sc_parser_apply. */
#define SC_APPLY_TRUNCATED 1u
SC_EXPORT int sc_parser_apply_line(sc_parser *p, const char *record_json, size_t len, size_t lineno,
                                   unsigned flags, char **out_json, size_t *out_len);

/* Parser options (long values).  Never renumbered. */
enum sc_parser_option {
	SC_PARSEROPT_LINE_MAX = 1,   /* the line maximum (SC_MAX_LINE of sc-record(5),
	                              256 MiB by default): it bounds the output */
	SC_PARSEROPT_TREE = 2,       /* 1: the default fields from a document tree
	                              (sc-parse's SC_PARSE_TREE=1; for tests) */
	SC_PARSEROPT_STRUCTURED = 3, /* the kinds of the "structured" member, SC_STRUCTURED_*
	                                ored (sc-parse --structured=KINDS); 0: none */
};
/* The kinds of structured data (sc-parse(1) --structured). */
#define SC_STRUCTURED_JSONLD 1L
#define SC_STRUCTURED_MICRODATA 2L
#define SC_STRUCTURED_RDFA 4L
#define SC_STRUCTURED_OPENGRAPH 8L
#define SC_STRUCTURED_TWITTER 16L
/* Returns SC_OK, or SC_EINVAL for an unknown option or a value out of
 * range.  One thread at a time per parser. */
SC_EXPORT int sc_parser_setopt(sc_parser *p, enum sc_parser_option opt, long value);

/* The XPath expression a selector (CSS, or XPath after "xpath:") becomes,
 * as sc-parse --explain prints it, or NULL with the reason in *errmsg
 * ("invalid selector at column N: ...").  Free both with sc_free.
 * Thread-safe. */
SC_EXPORT char *sc_selector_explain(const char *selector, char **errmsg);

/* ---- Fetching: sc_fetcher(3), sc_result(3) ------------------------------ */

typedef struct sc_fetcher sc_fetcher;
typedef struct sc_result sc_result;

/* The options of sc-fetch(1), by long name; each has the default it has
 * there.  Never renumbered. */
enum sc_fetcher_option {
	SC_FETCHOPT_INSECURE = 1,         /* -k: flag */
	SC_FETCHOPT_QUIET = 2,            /* -q: flag */
	SC_FETCHOPT_CONCURRENCY = 3,      /* -c N (20) */
	SC_FETCHOPT_TIMEOUT = 4,          /* -m secs (30) */
	SC_FETCHOPT_USER_AGENT = 5,       /* -A agent (sc-fetch/VERSION) */
	SC_FETCHOPT_HEADER = 6,           /* -H 'name: value', added each time */
	SC_FETCHOPT_PER_HOST = 7,         /* --per-host N (0) */
	SC_FETCHOPT_RATE = 8,             /* --rate R (0) */
	SC_FETCHOPT_HOST_RATE = 9,        /* --host-rate R (0) */
	SC_FETCHOPT_DELAY = 10,           /* --delay ms (0) */
	SC_FETCHOPT_MAX_REDIRS = 11,      /* --max-redirs N (5) */
	SC_FETCHOPT_CONNECT_TIMEOUT = 12, /* --connect-timeout secs (10) */
	SC_FETCHOPT_LOW_SPEED_LIMIT = 13, /* --low-speed-limit bytes (1) */
	SC_FETCHOPT_LOW_SPEED_TIME = 14,  /* --low-speed-time secs (30) */
	SC_FETCHOPT_MAX_BYTES = 15,       /* --max-bytes N (10 MiB) */
	SC_FETCHOPT_KEEP_ORDER = 16,      /* --keep-order: flag */
	SC_FETCHOPT_RETRIES = 17,         /* --retries N (2) */
	SC_FETCHOPT_RETRY_BASE = 18,      /* --retry-base ms (500) */
	SC_FETCHOPT_RETRY_MAX = 19,       /* --retry-max ms (30000) */
	SC_FETCHOPT_RETRY_MAX_WAIT = 20,  /* --retry-max-wait secs (60) */
	SC_FETCHOPT_RETRY_BUDGET = 21,    /* --retry-budget pct (20) */
	SC_FETCHOPT_SEED = 22,            /* --seed N (0: from time and pid) */
	SC_FETCHOPT_METRICS = 23,         /* --metrics file */
	SC_FETCHOPT_STATS_EVERY = 24,     /* --stats-every secs (0) */
	SC_FETCHOPT_GRACE = 25,           /* --grace secs (10) */
	SC_FETCHOPT_ROBOTS = 26,          /* --robots: flag */
	SC_FETCHOPT_ROBOTS_AGENT = 27,    /* --robots-agent token */
	SC_FETCHOPT_MAX_CRAWL_DELAY = 28, /* --max-crawl-delay secs (30) */
	SC_FETCHOPT_ROBOTS_CACHE = 29,    /* --robots-cache file */
	SC_FETCHOPT_HEADERS = 30,         /* --headers: flag */
	SC_FETCHOPT_ADAPTIVE = 31,        /* --adaptive (1, the default) or --no-adaptive (0) */
	SC_FETCHOPT_ORIGIN_STATE = 32,    /* --origin-state file */
	SC_FETCHOPT_WARC = 33,            /* --warc file (a .warc.gz) */
	SC_FETCHOPT_WARC_MAX_SIZE = 34,   /* --warc-max-size N (0: one file) */
	SC_FETCHOPT_WARC_LEVEL = 35,      /* --warc-level N (1) */
	SC_FETCHOPT_WARC_CDX = 36,        /* --warc-cdx: flag */
	SC_FETCHOPT_WARC_DEDUPE = 37,     /* --warc-dedupe file */
	SC_FETCHOPT_PROGRESS = 38,        /* --progress: flag; the status line is drawn on
	                                     standard error, when that is a terminal */
	SC_FETCHOPT_DEFER_AFTER = 39,     /* --defer-after ms (0: never): URLs left only on
	                                     origins held past it end as "deferred" */
	SC_FETCHOPT_COOKIES = 40,         /* --cookies file: the jar's Netscape cookies.txt */
	SC_FETCHOPT_NO_COOKIES = 41,      /* --no-cookies: flag; no cookie is kept or sent */
	SC_FETCHOPT_PROXY = 42,           /* --proxy url: every request through it */
	SC_FETCHOPT_PROXY_LIST = 43,      /* --proxy-list file: its proxies in turn */
	SC_FETCHOPT_PROXY_STICKY = 44,    /* --proxy-sticky: flag; one of the list per origin */
	SC_FETCHOPT_WARC_INFO = 45,       /* --warc-info key=value: a warcinfo field; again
	                                     for each */
	SC_FETCHOPT_CONTACT = 46,         /* --contact url: named in the default User-Agent */
	SC_FETCHOPT_LOGIN_URL = 47,       /* --login-url prefix: an answer that ends there is
	                                     "session_lost", and the default session's requests
	                                     not yet started end so too */
};

/* Called once per submit, when its record is made (in submission order
 * under SC_FETCHOPT_KEEP_ORDER), from inside sc_fetcher_run or
 * sc_fetcher_perform, on their thread, with the submit's user pointer and
 * the fetcher's ctx (sc_fetcher_new's).  r is valid during the call only.
 * It may submit more (that is how a crawler follows links), drain or
 * cancel; it may not run the fetcher (sc_fetcher_run is SC_EBUSY there). */
typedef void (*sc_done_fn)(sc_fetcher *f, const sc_result *r, void *user, void *ctx);
/* One metrics line (as sc-fetch(1) writes them) without its newline,
 * len bytes. */
typedef void (*sc_metrics_fn)(const char *line, size_t len, void *ctx);

/* A fetcher with sc-fetch's defaults; done is called for every submit
 * (with the submit's user pointer, and ctx).  Returns NULL only for a
 * NULL done (libcurl is set up at the first submit, unless sc_global_init
 * did it).  Thread-safe (each fetcher is its own). */
SC_EXPORT sc_fetcher *sc_fetcher_new(sc_done_fn done, void *ctx);

/* Frees f (NULL: nothing); submits that did not finish are cancelled and
 * dropped without their callback (run f until idle first to have them
 * all).  Not from a done callback.  One thread at a time per fetcher. */
SC_EXPORT void sc_fetcher_free(sc_fetcher *f);

/* Sets option opt as sc-fetch's command line would, value being the
 * option's argument (NULL for a flag, which it turns on) in the same units
 * ("2.5" seconds for SC_FETCHOPT_TIMEOUT).  _long and _double format the
 * number and do the same, for a flag or a number only (a string option is
 * SC_EINVAL); for a flag, 0 turns it off and anything else on.  Options
 * are fixed at the first submit.  Returns SC_OK, SC_EINVAL (a NULL f, an
 * unknown option, a number for a string option, NULL for an option that
 * takes a value), SC_EBUSY (after the first submit), or SC_EBADVALUE (a
 * value refused); but for SC_OK, with the reason in *errmsg if errmsg is
 * not NULL ("--timeout: 'x' is not a number"; free it with sc_free).  One
 * thread at a time per fetcher. */
SC_EXPORT int sc_fetcher_setopt(sc_fetcher *f, enum sc_fetcher_option opt, const char *value,
                                char **errmsg);
SC_EXPORT int sc_fetcher_setopt_long(sc_fetcher *f, enum sc_fetcher_option opt, long value,
                                     char **errmsg);
SC_EXPORT int sc_fetcher_setopt_double(sc_fetcher *f, enum sc_fetcher_option opt, double value,
                                       char **errmsg);

/* The metrics lines (sc-fetch(1)'s: one per request, throttle events, the
 * summary at sc_fetcher_finish) go to fn; by default they are dropped
 * (SC_FETCHOPT_METRICS writes them to a file instead).  Before the first
 * submit.  Returns SC_OK, or SC_EBUSY. */
SC_EXPORT int sc_fetcher_set_metrics(sc_fetcher *f, sc_metrics_fn fn, void *ctx);

/* Submits one item, as one line of sc-fetch's input: a URL, or a record
 * (a JSON object with "url" and optionally "request", sc-record(5)).
 * Whatever it is, done is called exactly once for it, with user: an item
 * that cannot be fetched makes its bad_input record (during a later run
 * or perform, like every other), whose "line" is the number of this call
 * among f's submits, as sc-fetch numbers its input's lines.  A blank line
 * or a '#' comment is no item: SC_EBADVALUE, and no callback.  The first
 * submit fixes the options; it fails with SC_ESYSTEM when the fetcher
 * cannot start (an unwritable --metrics file, ...), and then nothing was
 * submitted.  SC_EINVAL: a NULL argument, or a submit after
 * sc_fetcher_finish.  Every code but SC_OK comes with its reason in
 * *errmsg.  One thread at a time per fetcher (a done callback may
 * submit). */
SC_EXPORT int sc_fetcher_submit(sc_fetcher *f, const char *url_or_record, void *user,
                                char **errmsg);

/* Runs until every submit is done (SC_OK) or timeout_ms passed
 * (SC_ETIMEOUT; < 0: no limit).  Calls done and the metrics callback.
 * SC_EBUSY from inside one of f's callbacks: the run below it goes on
 * when the callback returns (it would otherwise run other callbacks
 * nested inside it).  One thread at a time per fetcher. */
SC_EXPORT int sc_fetcher_run(sc_fetcher *f, long timeout_ms);

/* Event-loop integration, for a caller that waits itself: the descriptor
 * to watch for reading (an epoll set: readable when there is work; it is
 * f's, not to be closed), how long at most to wait before calling
 * sc_fetcher_perform anyway (ms; 0: at once; -1: nothing pending), and
 * sc_fetcher_perform, which does what is ready without waiting and returns
 * the number of submits not done yet.  -1 from sc_fetcher_fd: the fetcher
 * has not started (nothing was submitted).  From inside one of f's
 * callbacks, _timeout is 0 and _perform does nothing (as sc_fetcher_run
 * is SC_EBUSY).  One thread at a time per fetcher. */
SC_EXPORT int sc_fetcher_fd(const sc_fetcher *f);
SC_EXPORT long sc_fetcher_timeout(sc_fetcher *f);
SC_EXPORT size_t sc_fetcher_perform(sc_fetcher *f);

/* How many submits are not done yet.  One thread at a time per fetcher. */
SC_EXPORT size_t sc_fetcher_pending(const sc_fetcher *f);

/* Ends the fetcher's run: the summary metrics line, as sc-fetch writes it
 * when its input ends.  Nothing may be submitted after it.  One thread at
 * a time per fetcher. */
SC_EXPORT void sc_fetcher_finish(sc_fetcher *f);

/* The outcome of a result, the kind of the record's "error"
 * (sc-record(5)).  Never renumbered. */
enum sc_outcome {
	SC_OUTCOME_OK = 0,
	SC_OUTCOME_HTTP = 1, /* a response that is not 2xx */
	SC_OUTCOME_TIMEOUT = 2,
	SC_OUTCOME_DNS = 3,
	SC_OUTCOME_CONNECT = 4,
	SC_OUTCOME_TLS = 5,
	SC_OUTCOME_TOO_MANY_REDIRECTS = 6,
	SC_OUTCOME_TOO_LARGE = 7,
	SC_OUTCOME_NETWORK = 8,
	SC_OUTCOME_BLOCKED_SCHEME = 9,
	SC_OUTCOME_BAD_INPUT = 10,
	SC_OUTCOME_CANCELLED = 11,
	SC_OUTCOME_RATE_LIMITED = 12,
	SC_OUTCOME_VALIDATION = 13,
	SC_OUTCOME_ROBOTS = 14, /* refused by robots.txt */
	SC_OUTCOME_INTERNAL = 15,
	SC_OUTCOME_OTHER = 16, /* a kind this library does not know */
};

/* A result's accessors.  Everything is borrowed from r, valid during the
 * done callback only; call them from the callback's thread. */
/* The record as the very JSON line sc-fetch prints, without its newline
 * (NUL-terminated); *len (if not NULL) its length. */
SC_EXPORT const char *sc_result_json(const sc_result *r, size_t *len);
/* The submit's user pointer. */
SC_EXPORT void *sc_result_user(const sc_result *r);
/* The HTTP status of the last response, or 0 for none. */
SC_EXPORT long sc_result_status(const sc_result *r);
/* The record's "url" and "final_url" (NULL when it has none). */
SC_EXPORT const char *sc_result_url(const sc_result *r);
SC_EXPORT const char *sc_result_final_url(const sc_result *r);
/* ok, or the kind of its error; _error_name is the kind as the record
 * names it ("timeout"), or NULL when ok; _message its message or NULL. */
SC_EXPORT enum sc_outcome sc_result_outcome(const sc_result *r);
SC_EXPORT const char *sc_result_error_name(const sc_result *r);
SC_EXPORT const char *sc_result_error_message(const sc_result *r);
/* The body (decoded from body_base64 if it came so), *len its length; NULL
 * when the record has none.  Not NUL-terminated in general. */
SC_EXPORT const char *sc_result_body(const sc_result *r, size_t *len);
/* The content type, or NULL. */
SC_EXPORT const char *sc_result_content_type(const sc_result *r);
/* elapsed_ms (the first attempt's start to the record) and the number of
 * attempts; -1 and 0 when the record has none (never fetched). */
SC_EXPORT double sc_result_elapsed_ms(const sc_result *r);
SC_EXPORT int sc_result_attempts(const sc_result *r);

/* ---- sc-fetch's front end: sc_fetcher_argv(3) ------------------------- */

/* A malformed item (a line that is no URL, a record without "url"): its
 * number among the input's lines (or the submits) and why, as sc-fetch(1)
 * warns "PROG: NAME:LINE: why".  Its bad_input record goes to done too. */
typedef void (*sc_warning_fn)(size_t lineno, const char *why, void *ctx);
/* Before the first submit.  Returns SC_OK, SC_EINVAL or SC_EBUSY. */
SC_EXPORT int sc_fetcher_set_warning(sc_fetcher *f, sc_warning_fn fn, void *ctx);

/* What sc_fetcher_setopt_argv found instead of options. */
#define SC_ARGV_HELP 1u    /* -h or --help */
#define SC_ARGV_VERSION 2u /* -V or --version */

/* Sets f's options from a command line as sc-fetch(1) reads its own:
 * argv[0] the program's name (the --progress line's prefix), then options
 * in GNU style (operands may come between them: argv is permuted so that
 * they come last).  The words are kept for SC_FETCHOPT_WARC's warcinfo
 * record.  *first is the index of the first operand (argc when there is
 * none).  -h/--help and -V/--version, which are the program's, stop the
 * parse: SC_OK with *asked (if not NULL) SC_ARGV_HELP or SC_ARGV_VERSION,
 * else 0.  Returns SC_OK, SC_EINVAL, SC_EBUSY, or SC_EBADVALUE with the
 * usage error as sc-fetch words it ("--timeout: 'x' is not a number",
 * "unrecognized option '--x'", "--robots-cache needs --robots"); every
 * code but SC_OK with its reason in *errmsg (free it with sc_free).  One
 * thread at a time per fetcher. */
SC_EXPORT int sc_fetcher_setopt_argv(sc_fetcher *f, int argc, char **argv, int *first,
                                     unsigned *asked, char **errmsg);

/* The options' usage, as sc-fetch --help shows it: "usage: PROGNAME
 * [-kq] [-c N] ... OPERANDS\n", wrapped before 80 columns.  Free it with
 * sc_free.  Thread-safe. */
SC_EXPORT char *sc_fetcher_usage(const char *progname, const char *operands);

/* Fetches the items read from descriptor fd, one per line as sc-fetch(1)
 * reads its standard input (name names it in bad_input warnings: "<stdin>"),
 * reading only when the fetcher wants more work, so that memory stays flat
 * however long the input; done is called for each item, in input order
 * under SC_FETCHOPT_KEEP_ORDER.  Runs until the input ends (or a drain or
 * a cancel stops it) and every item is done; writes the summary metrics
 * line (sc_fetcher_finish is then not needed).  fd is made non-blocking
 * for the run, and restored.  f must be fresh: no submit before, no run_fd
 * (SC_EBUSY).  Returns SC_OK, SC_ESYSTEM (the fetcher cannot start, a read
 * error: "<stdin>: Input/output error"), SC_EBADVALUE (options that do
 * not go together), SC_EINVAL (a NULL f, fd < 0); but for SC_OK, with its
 * reason in *errmsg.  One thread at a time per fetcher. */
SC_EXPORT int sc_fetcher_run_fd(sc_fetcher *f, int fd, const char *name, char **errmsg);

/* Starts the drain sc-fetch(1) makes on SIGINT or SIGTERM: no more input
 * is read and no more submits start (each is done as a cancelled record);
 * transfers in flight get SC_FETCHOPT_GRACE seconds to end, then are
 * cancelled.  Async-signal-safe: a signal handler may call it (on a
 * fetcher that is not being freed). */
SC_EXPORT void sc_fetcher_drain(sc_fetcher *f);

/* Ends the run at once, as sc-fetch does when its output fails: no more
 * input is read; every item not done, in flight included, is done as a
 * cancelled record.  May be called from a done callback; takes effect
 * when the callback returns.  One thread at a time per fetcher. */
SC_EXPORT void sc_fetcher_cancel(sc_fetcher *f);

/* How many done records were not ok so far (sc-fetch exits 3 when there
 * is one).  One thread at a time per fetcher. */
SC_EXPORT size_t sc_fetcher_failed(const sc_fetcher *f);

/* Applies p to r's record, as sc_parser_apply would to sc_result_json. */
SC_EXPORT int sc_parser_apply_result(sc_parser *p, const sc_result *r, char **out_json,
                                     size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif
