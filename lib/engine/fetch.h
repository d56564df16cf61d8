/* fetch: the concurrent fetch engine and the option table that sc-fetch and
 * sc-retry share.
 *
 * One thread, libcurl's multi interface driven by curl_multi_socket_action
 * from an epoll set that holds curl's sockets (CURLMOPT_SOCKETFUNCTION), the
 * self-pipe for signals and, while more work is wanted, the input
 * descriptor; curl's timer (CURLMOPT_TIMERFUNCTION) bounds the wait.  The
 * engine pulls input lines itself, only when it wants more work, so
 * read-ahead stays small and memory is flat in the number of URLs.
 *
 * The files (each opens with what it owns; lib/engine/fetch_engine.h is
 * their private header, not for programs):
 *	fetch.c           the loop: engine new/free, run, epoll, signals, drain
 *	fetch_origin.c    origins and admission: queues, ring, rates, retry heap
 *	fetch_submit.c    items in: url and request checked, made into a job
 *	fetch_transfer.c  the transfer: curl easy set-up, callbacks, error kinds
 *	fetch_output.c    records out: complete, encode, keep-order, write
 *	fetch_metrics.c   request lines, summary, progress
 *	fetch_opts.c      the shared command line
 *	fetch_robots.c    --robots: robots.txt per origin, its gate, the cache
 *	fetch_headers.c   --headers, http_version, 304 not_modified
 *	fetch_pace.c      --adaptive pace per origin, --origin-state claims
 *	fetch_warc.c      --warc: each exchange as WARC/1.1 records (lib/warc)
 *	fetch_line.c      sc-fetch's rule for one input line (libsc shares it)
 *
 * Typical use: a program is a main and a line handler (cmd/sc-retry.c,
 * and libsc's fetcher, lib/api/fetcher.c, which sc-fetch uses); lib/
 * prints nothing, the program says what went wrong.
 *
 *	struct fetch_options opts;
 *	char err[256];
 *	fetch_options_init(&opts);
 *	const struct sc_opt_set sets[] = { { fetch_option_rows, &opts }, { own_rows, NULL } };
 *	int first = sc_opt_parse(sets, 2, argc, argv, err, sizeof(err));
 *	if (first == SC_OPT_PARSE_ERROR || fetch_options_check(&opts, err, sizeof(err)) != 0)
 *		sc_usage_error("%s", err);   // exit 2
 *	sc_signals_install(on_stop);        // on_stop: fetch_wake(engine)
 *	struct fetch_streams io = { stdout, stderr, stderr, sc_progname };
 *	struct fetch_engine *e = fetch_engine_new(&opts, &io, err, sizeof(err));
 *	struct sc_lines *in = sc_lines_open(0, "<stdin>");
 *	int status = fetch_run(e, in, on_line, ctx, err, sizeof(err)); // on_line: the program's
 *	fetch_engine_free(e); sc_lines_close(in); fetch_options_free(&opts);
 *	return sc_exit_status(status);
 *
 * The line handler decides per line: fetch_submit_input() (sc-fetch) or
 * fetch_submit() (sc-retry, continuing a record's attempts) a record to
 * fetch, or fetch_submit_raw() / fetch_submit_final() an item to
 * write in its place. */
#ifndef SC_FETCH_H
#define SC_FETCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kit/opt.h"
#include "record/lines.h"
#include "web/retry.h"

struct curl_slist;

struct fetch_options {
	long concurrency;             /* -c/--concurrency: hard cap on requests and sockets (20) */
	long per_host;                /* --per-host: cap per origin; 0 = only the global cap */
	double rate;                  /* --rate: requests/s overall; 0 = unlimited */
	double host_rate;             /* --host-rate: requests/s per origin; 0 = unlimited */
	long delay_ms;                /* --delay: minimum gap between starts on one origin (0) */
	long max_redirs;              /* --max-redirs (5); 0 = follow none */
	long connect_timeout_ms;      /* --connect-timeout SECS (10 s) */
	long timeout_ms;              /* -m/--timeout SECS per attempt (30 s); 0 = none */
	long low_speed_limit;         /* --low-speed-limit BYTES/s (1) */
	long low_speed_time;          /* --low-speed-time SECS (30); 0 = no low-speed abort */
	long long max_bytes;          /* --max-bytes (10 MiB): larger bodies are too_large */
	char *user_agent;             /* -A/--user-agent (owned; default sc-fetch/VERSION,
	                                 with --contact "sc-fetch/VERSION (+CONTACT)") */
	bool user_agent_given;        /* -A came: --contact leaves it alone */
	char *contact;                /* --contact URL (owned), or NULL */
	struct curl_slist *warc_info; /* --warc-info KEY=VALUE, as "KEY: VALUE" (owned) */
	struct curl_slist *headers;   /* -H/--header, in order (owned) */
	bool insecure;                /* -k/--insecure: no TLS verification */
	bool keep_order;              /* --keep-order: output in input order */
	bool quiet;                   /* -q: only the summary line on the metrics stream */
	bool progress;                /* --progress: one-line status on the terminal */
	double stats_every_s;         /* --stats-every SECS: interim summaries; 0 = none */
	char *metrics_path;           /* --metrics FILE (owned); NULL = stderr */
	double grace_s;               /* --grace SECS (10): drain time after a signal */
	bool read_input_in_drain;     /* not an option: after SIGINT/SIGTERM keep reading
	                              input to its end (sc-retry, a later stage, must
	                              pass through what the stage before it drains);
	                              lines submitted then start no fetch
	                              (fetch_submit makes them cancelled records) */
	bool robots;                  /* --robots: obey each origin's robots.txt */
	char *robots_agent;           /* --robots-agent TOKEN (owned); NULL: -A's product token */
	long max_crawl_delay_ms;      /* --max-crawl-delay SECS (30 s): Crawl-delay's cap */
	char *robots_cache_path;      /* --robots-cache FILE (owned), or NULL */
	bool response_headers;        /* --headers: the final response's header fields */
	bool adaptive;                /* --adaptive (the default) / --no-adaptive: each
	                                 origin's pace learnt from its answers (web/pace.h) */
	bool no_cookies;              /* --no-cookies: no cookie engine at all */
	bool proxy_sticky;            /* --proxy-sticky: one proxy of the list per origin */
	long defer_after_ms;          /* --defer-after: 0, off */
	char *cookies_path;           /* --cookies FILE (owned): the default jar's file */
	char *login_url;              /* --login-url PREFIX (owned): the session lost there */
	char *proxy;                  /* --proxy URL (owned), or NULL */
	char *proxy_list;             /* --proxy-list FILE (owned), or NULL */
	char *origin_state_path;      /* --origin-state FILE (owned), or NULL: the origins'
	                                 next starts and learnt pace, shared by processes */
	struct sc_retry_policy retry; /* --retries, --retry-base, --retry-max,
	                                 --retry-max-wait, --retry-budget, --seed */
	char *warc_path;              /* --warc FILE (owned), or NULL: no capture */
	long long warc_max_size;      /* --warc-max-size N: rotate at N bytes; 0: one file */
	long warc_level;              /* --warc-level N (1): gzip level of the records */
	bool warc_cdx;                /* --warc-cdx: NAME.cdxj beside each file closed */
	char *warc_dedupe_path;       /* --warc-dedupe FILE (owned), or NULL: the payload
	                                 digests archived, for revisit records */
	char *command_line;           /* not an option: the program's words, for the
	                                 warcinfo record (owned, or NULL) */
};

/* Sets the defaults (the User-Agent "sc-fetch/VERSION" is a copy the
 * options own). */
void fetch_options_init(struct fetch_options *opts);
/* Frees what the options own (not o itself). */
void fetch_options_free(struct fetch_options *opts);

/* Keeps the program's words (argv), shown quoted as a shell would take
 * them, for the warcinfo record of --warc. */
void fetch_options_set_command(struct fetch_options *opts, int argc, char **argv);

/* The shared part of the command line: the rows of the fetch options, for
 * sc_opt_parse and sc_opt_usage (lib/kit/opt.h) with a struct
 * fetch_options as the set's base; a program adds its own rows (-h, -V)
 * in a set of its own.  Their order is the usage line's. */
extern const struct sc_opt fetch_option_rows[];

/* Rejects bad values and combinations by name, after parsing: 0, or -1
 * with the usage error in err ("--robots-cache needs --robots"). */
int fetch_options_check(const struct fetch_options *opts, char *err, size_t errlen);

/* The engine. */
struct fetch_engine;

/* Where an engine writes: the program's streams, borrowed (they must
 * outlive the engine).  The engine names no stream of its own. */
struct fetch_streams {
	FILE *out;                /* the records */
	FILE *metrics;            /* the metrics stream, unless --metrics FILE */
	FILE *progress;           /* --progress's line, drawn only if it is a terminal; or NULL */
	const char *progname;     /* the progress line's prefix ("sc-fetch") */
	bool metrics_on_progress; /* metrics end on progress's terminal all the same
	                             (a library's callback writes them there) */
};

/* Makes an engine: opts is borrowed and must outlive the engine.  Returns
 * NULL with a reason in err (e.g. "--metrics: FILE: No such file or
 * directory") when it cannot start. */
struct fetch_engine *fetch_engine_new(const struct fetch_options *opts,
                                      const struct fetch_streams *streams, char *err,
                                      size_t errlen);
void fetch_engine_free(struct fetch_engine *e);

/* Called once per input line that the engine reads (blank lines included).
 * It must submit exactly one item per record (fetch_submit*, see below)
 * and nothing for a line that is no record.  line is valid only during the
 * call.  Returns 0, or non-zero to stop reading input (fatal: run ends 1). */
typedef int (*fetch_line_fn)(struct fetch_engine *e, const struct sc_lines *in,
                             const struct sc_line *line, void *ctx);

/* Fetches rec["url"] (rec is stolen; it becomes the output record, with
 * the fetch members set on it).  prior_attempts is the number of attempts
 * already made (0 for a fresh record; sc-retry passes the record's
 * "attempts"): attempts continue from it, the existing "history" array is
 * appended to, and max attempts are prior_attempts + 1 + retries.
 * rec may carry "request": {"method", "headers", "body"}.  A record whose
 * url is missing or is not http(s) is finished at once (bad_input /
 * blocked_scheme) without a request. */
void fetch_submit(struct fetch_engine *e, json_t *rec, int prior_attempts);

/* fetch_submit for a fresh record read from line (prior attempts 0),
 * the way sc-fetch submits its input: a url that does not parse makes the
 * bad_input record of that line (its number and raw text) instead, and
 * returns false with the reason in why, for the program's warning
 * "PROG: NAME:LINE: why".  Returns true otherwise (rec is stolen either way). */
bool fetch_submit_input(struct fetch_engine *e, json_t *rec, const struct sc_line *line, char *why,
                        size_t whylen);

/* Why a record's "request" member cannot be sent ("request.method is not a
 * method name"), or NULL when it can (or there is none). */
const char *fetch_request_problem(const json_t *req);
/* Whether --contact's value can name the operator in a User-Agent's
 * comment: an http(s) URL or a mailto: address, visible ASCII without
 * parentheses or backslashes.  0, or -1 with the usage error in err. */
int fetch_contact_check(const char *contact, char *err, size_t errlen);
/* Why a record's url (n bytes) cannot be requested as it is ("not a
 * valid URL: it holds a control character"), or NULL. */
const char *fetch_url_problem(const char *url, size_t n);
/* The header lines of a request: given (the -H headers, "Name: value")
 * but those req's headers name, then req's (req checked by
 * fetch_request_problem; NULL: none), then what its body needs
 * (Content-Type for a JSON body, an empty Expect).  The caller frees the
 * list (curl_slist_free_all); NULL when it is empty. */
struct curl_slist *fetch_request_headers(const struct curl_slist *given, const json_t *req);

/* An item that needs no fetching: written as it is, in its input position
 * under --keep-order.  failed: count it as a record this program made that
 * is not ok (exit 3).  _final steals rec; _raw copies text (a whole line
 * without its newline), passed through byte for byte. */
void fetch_submit_final(struct fetch_engine *e, json_t *rec, bool failed);
void fetch_submit_raw(struct fetch_engine *e, const char *text, size_t len, bool failed);

/* Runs until the input ends (or a signal drains it) and every submitted item
 * is written; writes the summary line.  on_line is called for each input
 * line.  in's descriptor is switched to non-blocking for the run (and
 * back).  Returns SC_EXIT_OK (every record made is ok), SC_EXIT_PARTIAL,
 * SC_EXIT_PIPE (standard output's reader went away: no message) or
 * SC_EXIT_FAILURE: an output or input error, its message in err ("error
 * writing standard output: No space left on device"; empty when on_line
 * stopped the run), for the program to print.  The caller ends with
 * sc_exit_status (lib/cli.h), which also maps a signal. */
int fetch_run(struct fetch_engine *e, struct sc_lines *in, fetch_line_fn on_line, void *ctx,
              char *err, size_t errlen);

/* Wakes e's loop (its own eventfd), so that it sees a signal or a drain
 * at once: what a program's sc_signals_install hook calls, with the engine
 * it runs (NULL: nothing).  Async-signal-safe. */
void fetch_wake(struct fetch_engine *e);

/* libcurl's process-wide set-up (and jansson's seed), shared by every
 * engine of the process and held by each, safely from several threads
 * (fetch_global.c): the first hold sets libcurl up, the last release
 * cleans it up.  fetch_engine_new and _free hold and release it
 * themselves; sc_global_init holds it for the program.  Returns false
 * when libcurl cannot be set up. */
bool fetch_global_hold(void);
void fetch_global_release(void);

/* ---- Driven by a library caller (lib/api/fetcher.c) rather than an input
 * stream: items are pulled from the caller when the engine wants more
 * work (as fetch_run reads lines), records handed to a hook. */

/* Instead of being written to the streams' out, each record goes to fn,
 * as the line sc-fetch would write (without its newline, NUL-terminated;
 * valid during the call), with the user pointer of the submission that made it and whether
 * it counts as failed.  Set before the run; streams->out may then be NULL. */
typedef void (*fetch_record_fn)(void *ctx, void *user, const char *line, size_t len, bool failed);
void fetch_set_record_hook(struct fetch_engine *e, fetch_record_fn fn, void *ctx);

/* The user pointer of the items submitted until the next call (NULL by
 * default), handed to the record hook with their record. */
void fetch_set_next_user(struct fetch_engine *e, void *user);

/* Called when the engine wants one more item: it submits one
 * (fetch_submit_line or any fetch_submit*) and returns 0, or returns
 * 1 when it has none now. */
typedef int (*fetch_pull_fn)(struct fetch_engine *e, void *ctx);

/* sc-fetch's rule for one line of its input (a URL, trimmed, or a record
 * with "url" and maybe "request"; line->number names it in a bad_input
 * record), with line_max as the reader's maximum: the item submitted.
 * Returns 0; 1 when the line was malformed and made a bad_input record,
 * with the reason in why for the caller's warning; -1 for a line that is
 * no item (blank, or a '#' comment): nothing was submitted. */
int fetch_submit_line(struct fetch_engine *e, const struct sc_line *line, size_t line_max,
                      char *why, size_t whylen);

/* Starts a run without an input stream: pull is called for items.  Then
 * fetch_step until it returns false, as often as there is work, and
 * fetch_finish once at the end (the summary). */
void fetch_start(struct fetch_engine *e, fetch_pull_fn pull, void *ctx);

/* One turn of the loop: pulls and starts what may start, waits at most
 * max_wait_ms for a socket or a clock, hands curl what is ready, finishes
 * what ended.  Returns false, having waited for nothing, when the engine
 * is idle: no item to pull, nothing queued, in flight or waiting. */
bool fetch_step(struct fetch_engine *e, double max_wait_ms);

/* For a caller's own event loop: the descriptor to wait on for reading
 * (the engine's epoll set), and how long at most before fetch_step
 * must be called anyway (ms; 0: now; INFINITY: idle).  _wait admits what
 * may start now, as a step would. */
int fetch_fd(const struct fetch_engine *e);
double fetch_wait(struct fetch_engine *e);

/* Ends every item at once, as a drain whose grace ran out: queued, waiting
 * and in-flight ones become cancelled records, through the record hook;
 * nothing starts afterwards.  For a caller that stops before the engine
 * is idle (then fetch_engine_free). */
void fetch_cancel_all(struct fetch_engine *e);

/* Asks the engine to drain as a stop signal does: no more input, what is
 * in flight given --grace, the rest cancelled.  Async-signal-safe (a
 * handler may call it); the running loop wakes at once. */
void fetch_request_drain(struct fetch_engine *e);

/* Asks the engine to end at once, as after an output error: no more
 * input, every item not done a cancelled record (through the record
 * hook).  From the record hook too; takes effect at the loop's next turn. */
void fetch_request_cancel(struct fetch_engine *e);

/* Ends a run that fetch_start began: the summary line. */
void fetch_finish(struct fetch_engine *e);

#endif
