/* fetch_engine: the fetch engine's insides, shared by its files and by
 * nothing else (programs include fetch.h).
 *
 * The engine is one struct of sub-structs, each written by one file
 * (struct fetch_engine, below); a job is one input item on its way to
 * the output; an origin is where admission holds jobs; a transfer is one
 * curl easy handle at work.
 *
 *	fetch.c           the loop: engine new/free, run, epoll, signals, drain,
 *	                  input lines, admission's starts, each attempt's end
 *	fetch_origin.c    origins and admission: per-origin queues, the
 *	                  round-robin ring, token buckets, --delay, 429 pauses,
 *	                  the retry heap
 *	fetch_submit.c    items in: a record's URL and request checked and made
 *	                  into a job
 *	fetch_transfer.c  the transfer: curl easy set-up and callbacks, how an
 *	                  attempt ended (error kinds)
 *	fetch_output.c    records out: complete, encode, keep-order window, write
 *	fetch_metrics.c   request lines, the summary, --progress
 *	fetch_opts.c      the shared command line
 *	fetch_robots.c    --robots: each origin's robots.txt, fetched through
 *	                  the engine before its first request, its gate on
 *	                  the origin's queue, Crawl-delay, the cache, sitemaps
 *	fetch_headers.c   --headers, http_version, a conditional request's 304
 *	fetch_pace.c      --adaptive: each origin's pace learnt from its answers;
 *	                  --origin-state: starts claimed in a file that other
 *	                  processes share
 *	fetch_warc.c      --warc: each attempt's exchanges as they crossed the
 *	                  wire, written as WARC/1.1 records (lib/warc)
 *	fetch_line.c      one line of sc-fetch's input made an item (a URL, a
 *	                  record, or a bad_input record), for sc-fetch and libsc
 */
#ifndef SC_FETCH_ENGINE_H
#define SC_FETCH_ENGINE_H

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "core/strtab.h"
#include "core/util.h"
#include "engine/fetch.h"
#include "record/metrics.h"
#include "record/record.h"

/* Per-host latency statistics are kept for at most this many hosts. */
#define HOST_STATS_MAX 64
/* Buffers grown above this size are freed after use rather than kept for
 * the next record. */
#define BODY_KEEP_MAX (256 * 1024)

/* The engine's buffers are lib/buf's.  Their maximums are what the
 * options and the input allow: a body is at most --max-bytes (or a
 * robots.txt's 500 KiB), and a record line at most its input line, its
 * fetch members and its body escaped (6 bytes for each byte at worst), so
 * an append past one is a record larger than any these let through. */
size_t fetch_body_max(const struct fetch_options *opts);
size_t fetch_line_max(const struct fetch_options *opts, size_t input_line_max);

static inline double round1(double v)
{
	return round(v * 10.0) / 10.0;
}

struct hoststat;
struct job;

/* An origin, scheme://host:port: the unit of --per-host, --host-rate,
 * --delay and of a 429's pause.  Its jobs wait in its queue until
 * fetch_origins_next() (fetch_origin.c) lets the first one start. */
struct origin {
	/* Admission: fetch_origin.c's. */
	char *key;                    /* "scheme://host:port" (owned) */
	struct sc_strtab_link link;   /* in fetch_origins' table, by key */
	struct origin *rprev, *rnext; /* the admission ring, while in it */
	bool in_ring;
	struct job *qhead, *qtail; /* jobs ready to start, in order */
	size_t queued;
	long inflight;
	long unsent; /* of those in flight, the requests not yet sent */
	size_t refs; /* queued + in flight + waiting to retry */
	/* Admission gates: each says "not before" for the whole queue.  The
	 * origins' gate (struct fetch_origins; --robots sets it) is checked
	 * last: it may hold the queue but for its head, then space starts.
	 * Jobs it refuses never enter the queue (or are taken out of it when
	 * the answer comes), so the ring is never changed while
	 * fetch_origins_next walks it. */
	double tokens, tokens_at; /* --host-rate bucket */
	double next_start;        /* --delay: no start before this (ms) */
	double paused_until;      /* a 429's Retry-After, a start another process holds (ms) */
	/* The learnt pace (fetch_pace.c sets it through fetch_origin_set_pace). */
	long pace_limit;      /* requests in flight; 0: none but --per-host */
	double pace_interval; /* spacing between starts (ms) */
	double pace_next;     /* no start before this: the last start + the spacing */
	double pace_until;    /* blocked until (ms) */
	/* Slots other files keep on an origin, each written by its file only: */
	struct hoststat *hs;         /* fetch_metrics.c: its statistics, if kept
	                                (a cache: hs->key says whose they are) */
	struct robots_entry *robots; /* fetch_robots.c: its robots.txt state */
	struct pace_entry *pace;     /* fetch_pace.c: its controller and saved state */
};

struct hoststat {
	char *key; /* the origin's key (owned) */
	uint64_t requests, errors;
	struct sc_hist lat; /* microseconds */
};

/* One curl easy handle and what its callbacks learn of the response:
 * fetch_transfer.c's (others read it). */
struct transfer {
	CURL *easy;
	struct job *job;                /* the job it fetches for, while active */
	struct transfer *anext, *aprev; /* the engine's active list */
	struct fetch_engine *engine;
	struct sc_buf body;
	bool too_large;
	bool set_cookie;     /* a response of this attempt set a cookie */
	curl_mime *mime;     /* fetch_form.c's multipart body of this attempt, or NULL */
	struct proxy *proxy; /* fetch_proxy.c's: the proxy of this attempt, or NULL */
	/* Of the response whose headers are arriving: */
	bool has_location;      /* a Location header */
	bool encoded;           /* a Content-Encoding: its length is not the body's */
	bool redirecting;       /* a redirect being followed: its body is not ours */
	bool in_head;           /* its status line came, the blank line not yet */
	bool head_complete;     /* its header block ended with the blank line */
	char *retry_after;      /* of the latest response (owned) */
	struct warc_xfer *warc; /* fetch_warc.c's: the exchanges so far, or NULL
	                           without --warc */
	double started;
	bool sent; /* its (first) request went out: fetch_origin_sent */
	char errbuf[CURL_ERROR_SIZE];
	struct transfer *next_free;
};

/* One input item: a record to fetch, or one to write as it is.  A job
 * passes from file to file; its parts are grouped by who sets them (the
 * small scalars last, each saying whose it is, so the struct packs). */
struct job {
	/* fetch_output.c: its place in the output. */
	uint64_t seq; /* input position */
	char *raw;    /* a passthrough line, or the line kept for its turn (owned) */
	size_t raw_len;
	const char *body; /* a body still in its transfer's buffer (or NULL:
	                     fetch_headers.c's 304) */
	size_t body_len;
	/* The record (owned), made by the program; its fetch members are
	 * fetch_output.c's, "headers" and "not_modified" fetch_headers.c's,
	 * and "error" whoever ends the job (fetch.c, fetch_submit.c,
	 * fetch_robots.c), which sets failed with it. */
	json_t *rec;
	/* fetch_submit.c (fetch_robots.c for its robots.txt request): what to
	 * fetch, never changed after. */
	char *url;         /* owned copy of rec.url */
	char *metrics_url; /* url without credentials (owned) */
	struct origin *origin;
	struct curl_slist *req_headers; /* owned */
	char *req_method;               /* owned, or NULL */
	char *req_body;                 /* owned, or NULL */
	size_t req_body_len;
	struct robots_entry *robots_for; /* the robots.txt request of that origin:
	                                    no record, never counted as one */
	/* fetch_origin.c: where it waits. */
	struct job *qnext; /* in its origin's queue */
	size_t heap_index; /* in the retry heap */
	/* Its attempts' clocks: fetch_submit.c (queued), fetch.c (the retry's
	 * wait, a cancellation), fetch_transfer.c (the first start). */
	double queued_at, ready_at, first_start;
	long long wait_ms;       /* the wait before the coming attempt */
	int prior, max_attempts; /* fetch_submit.c */
	int attempts;            /* fetch_transfer.c: made so far */
	bool done, in_scratch;   /* fetch_output.c; in_scratch: its output line is in
	                            e->output.line (job_encode) */
	bool failed;             /* with the record's "error", above */
	int64_t captured_ms;     /* fetch_warc.c: the last attempt's response's
	                            WARC-Date (wall ms), which its fetched_at
	                            is; 0: none (fetched_at is when it ended) */
	bool has_body;           /* fetch_submit.c: a request body */
	enum fetch_form_kind {
		FETCH_FORM_NONE,
		FETCH_FORM_URLENCODED, /* req_body is the encoded fields */
		FETCH_FORM_MULTIPART   /* form_fields, sent as curl_mime */
	} form;                        /* fetch_form.c: the record's "form", sent with POST */
	json_t *form_fields;           /* a copy of rec's form (owned), with FETCH_FORM_MULTIPART */
	void *user;                    /* fetch_output.c: the submitter's pointer
	                            (fetch_set_next_user), handed to the record hook */
};

/* How long an attempt waited in its origin's queue (ms, to 0.1): from
 * when it could start (submitted, or its retry's wait over) to its start,
 * held by the cap, the origin's pace or block, its robots.txt.  The
 * metrics line's timing.queue_ms and the history's queue_ms; 0 for an
 * attempt that never started. */
static inline double fetch_queue_ms(const struct job *job, const struct transfer *xfer)
{
	return xfer ? round1(fmax(0.0, xfer->started - job->queued_at)) : 0.0;
}

/* How one attempt ended. */
struct outcome {
	long status; /* 0: no response */
	int kind;    /* -1: ok */
	char message[CURL_ERROR_SIZE + 64];
	double latency_ms;
	size_t bytes;
};

/* The engine's state: one sub-struct per file, written by that file only
 * (others read it); a file that needs another's state changed calls a
 * function of the owner.  Calls among the files go one way, down this
 * list (fetch_transfer and fetch_submit beside each other):
 *
 *	fetch.c  >  fetch_submit, fetch_transfer  >  fetch_warc  >  fetch_metrics  >
 *	fetch_pace  >  fetch_robots  >  fetch_output  >  fetch_headers,
 *	fetch_origin
 *
 * Upward there are only libcurl's callbacks (into fetch.c and
 * fetch_transfer.c) and the origins' gate, a function --robots installs.
 *
 * A new concern is a new file with its own sub-struct here, called by the
 * loop where its moment is: each attempt's end (attempt_ended, fetch.c)
 * is where a transfer's outcome is handed on, a record leaves only through
 * write_job (fetch_output.c), a metrics line only through fetch_metrics.c,
 * and per-origin state of another file is a slot on struct origin. */

/* The loop (fetch.c): curl's multi handle, the epoll set, the retry
 * policy's state, the drain. */
struct fetch_loop {
	CURLM *multi;
	int epfd;             /* curl's sockets, the wake-up, the input */
	int wakefd;           /* an eventfd: fetch_wake (a signal, a drain) */
	double curl_timer_at; /* when curl wants its timeout; INFINITY: none */
	double started_at;    /* the run's start (ms): --defer-after waits as long */
	struct sc_retry_state *retry;
	bool stopping;     /* a signal or a fatal error: draining */
	bool aborted;      /* the grace ran out: transfers in flight were cancelled */
	bool host_blocked; /* the last admission left free slots empty (want_input) */
	char error[256];   /* the input's error that started the drain, if any */
	double grace_deadline;
	volatile sig_atomic_t drain_asked; /* fetch_request_drain: as a signal */
	bool cancel_asked;                 /* fetch_request_cancel: as an output error */
};

/* Input lines, read on demand (fetch.c). */
struct fetch_input {
	struct sc_lines *in; /* borrowed, during fetch_run */
	fetch_line_fn on_line;
	void *line_ctx;
	fetch_pull_fn pull; /* or items are pulled from the caller instead
	                          (fetch_start), in is NULL */
	void *pull_ctx;
	bool polled; /* the input descriptor is in the epoll set */
	bool eof, wait, error;
	int flags; /* the input's file status flags before the run */
};

/* Gates an origin's queue after the time gates (origin_admissible): true
 * when its head may start now, else false, lowering *wake to when it may
 * if a clock holds it. */
typedef bool (*fetch_gate_fn)(void *ctx, struct origin *origin, double now, double *wake);

/* Origins and admission (fetch_origin.c). */
struct fetch_origins {
	const struct fetch_options *opts; /* borrowed */
	struct sc_strtab table;           /* the origins (struct origin's link) */
	size_t count_at_sweep;
	struct origin *ring;      /* admission cursor */
	size_t queued;            /* jobs in origin queues */
	double tokens, tokens_at; /* --rate bucket */
	struct job **heap;        /* jobs waiting to retry, min by ready_at */
	size_t nheap, heapcap;
	fetch_gate_fn gate; /* or NULL */
	void *gate_ctx;
};

/* Items in (fetch_submit.c). */
struct fetch_submit_state {
	CURLU *urlh; /* scratch for parsing URLs */
};

/* Transfers (fetch_transfer.c). */
struct fetch_transfers {
	struct transfer *free;   /* idle handles kept for reuse */
	struct transfer *active; /* transfers added to the multi handle */
	long inflight;           /* how many */
};

/* Records out (fetch_output.c). */
struct fetch_output_state {
	FILE *out;                   /* borrowed */
	struct sc_buf line;          /* scratch for encoding a record */
	uint64_t next_seq, next_out; /* input positions given and written */
	struct job **window;         /* --keep-order ring, wsize slots */
	size_t wsize;
	bool error;
	int error_errno;   /* of the failed write: EPIPE is a reader gone, not an error */
	char message[256]; /* the failed write's error */
	uint64_t records, records_failed; /* records written or to be */
	uint64_t record_errors[SC_ERR_KIND_COUNT];
	fetch_record_fn hook; /* records go to it instead of out (fetch_set_record_hook) */
	void *hook_ctx;
	void *next_user; /* the user pointer of the next job (fetch_set_next_user) */
};

/* The metrics stream and --progress (fetch_metrics.c). */
struct fetch_metrics_state {
	FILE *stream; /* o->metrics_path (own_stream) or the program's */
	bool own_stream;
	struct sc_buf line; /* scratch for a request metrics line */
	double start_ms, last_stats;
	uint64_t requests, bytes;
	uint64_t status_class[6];
	uint64_t attempt_errors[SC_ERR_KIND_COUNT];
	struct sc_hist lat;
	struct hoststat *hosts[HOST_STATS_MAX];
	size_t nhosts;
	FILE *progress;       /* the program's stream for --progress (borrowed), or NULL */
	const char *progname; /* the progress line's prefix (borrowed) */
	bool on_progress;     /* metrics end on the progress line's terminal (streams) */
	bool progress_on;     /* --progress, and progress is a terminal */
	bool progress_shown;
	double last_progress;
	long long total_lines; /* -1: unknown */
};

struct fetch_engine {
	const struct fetch_options *opts; /* borrowed */
	struct fetch_loop loop;
	struct fetch_input input;
	struct fetch_origins origins;
	struct fetch_submit_state submit;
	struct fetch_transfers xfers;
	struct fetch_output_state output;
	struct fetch_metrics_state metrics;
	struct fetch_robots *robots;   /* fetch_robots.c's, or NULL without --robots */
	struct fetch_pace *pace;       /* fetch_pace.c's, or NULL with --no-adaptive and
	                                no --origin-state */
	struct fetch_warc *warc;       /* fetch_warc.c's, or NULL without --warc */
	struct fetch_cookies *cookies; /* fetch_cookies.c's, or NULL with --no-cookies */
	struct fetch_proxies *proxies; /* fetch_proxy.c's, or NULL: no proxy named */
};

/* fetch_origin.c */
void fetch_origins_init(struct fetch_origins *o, const struct fetch_options *opts);
void fetch_origins_free(struct fetch_origins *o);
/* The run starts: the --rate bucket fills from now. */
void fetch_origins_start(struct fetch_origins *o, double now);
void fetch_origins_set_gate(struct fetch_origins *o, fetch_gate_fn gate, void *ctx);
struct origin *fetch_origin_get(struct fetch_origins *o, const char *key, double now);
/* A job holds its origin from its submission to its end. */
void fetch_origin_ref(struct origin *origin);
void fetch_origin_unref(struct origin *origin);
void fetch_origin_push(struct fetch_origins *o, struct origin *origin, struct job *job, bool front);
struct job *fetch_origin_pop(struct fetch_origins *o, struct origin *origin);
void fetch_ring_update(struct fetch_origins *o, struct origin *origin);
void fetch_ring_remove(struct fetch_origins *o, struct origin *origin);
/* An attempt started on origin, its request went out (libcurl's prereq
 * callback: the connection is made and the request is about to be sent;
 * again for each redirect hop), or it ended (sent: whether it got that
 * far): its caps and clocks. */
void fetch_origin_started(struct fetch_origins *o, struct origin *origin, double now);
void fetch_origin_sent(struct fetch_origins *o, struct origin *origin, bool first, double now);
void fetch_origin_finished(struct fetch_origins *o, struct origin *origin, bool sent);
/* A 429, or a start another process holds: nothing starts on origin before
 * until (ms). */
void fetch_origin_pause(struct origin *origin, double until);
/* The learnt pace: at most limit in flight (0: no limit but --per-host),
 * starts spaced by interval ms, nothing before until (ms). */
void fetch_origin_set_pace(struct fetch_origins *o, struct origin *origin, long limit,
                           double interval, double until);
/* The origin of key if it is in the table, else NULL. */
struct origin *fetch_origin_find(struct fetch_origins *o, const char *key);
void fetch_heap_push(struct fetch_origins *o, struct job *job);
struct job *fetch_heap_pop(struct fetch_origins *o);
/* Whether --rate lets one more start now; if not, *wake is lowered to
 * when it will. */
bool fetch_origins_rate_allows(struct fetch_origins *o, double now, double *wake);
/* The job to start now, taken off its origin's queue (round robin), or
 * NULL when no origin may start one; *wake is lowered to when one may if
 * a clock holds it. */
struct job *fetch_origins_next(struct fetch_origins *o, double now, double *wake);

/* fetch_submit.c */
void fetch_submit_init(struct fetch_engine *e);
void fetch_submit_free(struct fetch_engine *e);

/* fetch_transfer.c: an attempt's transfer.  fetch_transfer_start starts
 * job's next attempt; false when curl refused the transfer, which is then
 * ended as curl would (fetch_transfer_end, CURLE_FAILED_INIT).  _end and
 * _cancel give the attempt's outcome and return its job; the transfer is
 * released (fetch_transfer_release) after the outcome is dealt with. */
bool fetch_transfer_start(struct fetch_engine *e, struct job *job, double now,
                          struct transfer **refused);
struct job *fetch_transfer_end(struct fetch_engine *e, struct transfer *xfer, CURLcode rc,
                               struct outcome *oc);
struct job *fetch_transfer_cancel(struct fetch_engine *e, struct transfer *xfer,
                                  struct outcome *oc);
void fetch_transfer_release(struct fetch_engine *e, struct transfer *xfer);
void fetch_xfers_free(struct fetch_engine *e);

/* fetch_output.c */
void fetch_output_init(struct fetch_engine *e, FILE *out);
void fetch_output_free(struct fetch_engine *e);
/* The run starts: its lines are at most line_max bytes. */
void fetch_output_start(struct fetch_engine *e, size_t line_max);
struct job *fetch_job_new(struct fetch_engine *e);
void fetch_job_finish(struct fetch_engine *e, struct job *job);
void fetch_job_complete(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc, double now);
void fetch_job_done(struct fetch_engine *e, struct job *job);
/* The attempt's entry in the record's history (xfer: NULL if it never
 * started). */
void fetch_history_add(struct job *job, const struct transfer *xfer, const struct outcome *oc);

/* fetch_metrics.c */
bool fetch_metrics_init(struct fetch_engine *e, const struct fetch_streams *streams, char *err,
                        size_t errlen);
void fetch_metrics_free(struct fetch_engine *e);
/* The run starts at now; its lines are at most line_max bytes.  Returns
 * whether --progress is drawn (the loop then counts the input's lines for
 * fetch_progress_total). */
bool fetch_metrics_start(struct fetch_engine *e, double now, size_t line_max);
void fetch_progress_total(struct fetch_engine *e, long long total_lines);
/* When the loop must call fetch_metrics_tick next (ms; INFINITY: never). */
double fetch_metrics_due(const struct fetch_engine *e);
/* Interim summaries (--stats-every) and the --progress line, when due. */
void fetch_metrics_tick(struct fetch_engine *e, double now);
/* The run ended: the progress line cleared, the final summary. */
void fetch_metrics_end(struct fetch_engine *e);
void fetch_count_attempt(struct fetch_engine *e, struct job *job, const struct outcome *oc);
void fetch_request_metrics(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                           const struct outcome *oc, const char *next);

/* fetch_robots.c (every entry a no-op without --robots) */
bool fetch_robots_init(struct fetch_engine *e, char *err, size_t errlen);
void fetch_robots_free(struct fetch_engine *e);
/* A job about to be queued on its origin: true when robots.txt refused it
 * (it is finished); else the origin's robots.txt request is queued first
 * if its answer is not known yet. */
bool fetch_robots_refuse(struct fetch_engine *e, struct job *job);
/* The robots.txt request's last attempt ended: the answer is known, the
 * held queue is sorted (refused jobs finished).  Before its metrics line.
 * archive (borrowed, may be NULL): the file its capture went to, which
 * --robots-cache's entry names. */
void fetch_robots_learn(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc, const char *archive);
/* Frees the robots.txt request's job (after its metrics line). */
void fetch_robots_job_end(struct fetch_engine *e, struct job *job);
/* The robots members of a request metrics line; the summary's "robots". */
void fetch_robots_metrics(const struct fetch_engine *e, const struct job *job, struct sc_buf *b);
void fetch_robots_summary(const struct fetch_engine *e, json_t *summary);

/* fetch_robots.c: the Crawl-delay in force on origin (ms; 0: none or not
 * known yet). */
double fetch_robots_delay_ms(const struct fetch_engine *e, const struct origin *origin);
/* Crawl-delay counts from the request on the wire: origin's first request
 * of a transfer went out at now (ms). */
void fetch_robots_sent(struct fetch_engine *e, struct origin *origin, double now);
/* The start the gate let through was held until until (ms; fetch_pace):
 * the next start waits for that, not for a Crawl-delay from a start that
 * was not made. */
void fetch_robots_hold(struct fetch_engine *e, struct origin *origin, double until);

/* fetch_proxy.c */
bool fetch_proxy_init(struct fetch_engine *e, char *err, size_t errlen);
void fetch_proxy_free(struct fetch_engine *e);
/* The proxy of job's attempt on xfer set on its handle (none named: as
 * libcurl would, from the environment). */
void fetch_proxy_setup(struct fetch_engine *e, struct transfer *xfer, const struct job *job,
                       double now);
/* The attempt ended with rc: a proxy that failed as one is set aside. */
void fetch_proxy_answered(struct transfer *xfer, CURLcode rc, double now);
/* The attempt's proxy as the metrics name it (no credentials), or NULL. */
const char *fetch_proxy_name(const struct transfer *xfer);
/* The summary's "proxies". */
void fetch_proxy_summary(const struct fetch_engine *e, json_t *summary);

/* fetch_form.c */
/* Why rec's "form" and "enctype" cannot be sent, or NULL. */
const char *fetch_form_problem(const json_t *rec);
/* job's request from rec's form (after its "request"): the query of a
 * GET, the body of a POST. */
void fetch_form_apply(struct job *job, json_t *rec);
/* A multipart form's body on the transfer about to start; and freed. */
void fetch_form_setup(struct transfer *xfer, const struct job *job);
void fetch_form_release(struct transfer *xfer);

/* fetch_cookies.c (every entry a no-op with --no-cookies) */
bool fetch_cookies_init(struct fetch_engine *e, char *err, size_t errlen);
void fetch_cookies_free(struct fetch_engine *e);
/* The jar of job's session (its record's "session", else the default)
 * for the transfer about to start on easy; the default jar's file loaded
 * first when another process changed it. */
void fetch_cookies_setup(struct fetch_engine *e, CURL *easy, const struct job *job);
/* A handle about to be reset or cleaned up: what setup left on it. */
void fetch_cookies_release(struct fetch_engine *e, CURL *easy);
/* A response of job's transfer set a cookie: the default jar's file is
 * written. */
void fetch_cookies_changed(struct fetch_engine *e, const struct job *job);
/* --login-url: whether job's answer, which ended at final_url, is the
 * login page it was not asked for; then oc is a session_lost error and
 * the default session is lost for the run. */
bool fetch_cookies_lost(struct fetch_engine *e, const struct job *job, const char *final_url,
                        struct outcome *oc);
/* Whether job may not start: its session is lost (counted). */
bool fetch_cookies_held(struct fetch_engine *e, const struct job *job);
/* job's record's "session" member, or NULL. */
const char *fetch_cookies_session(const struct job *job);
/* The summary's "cookies" (with --cookies). */
void fetch_cookies_summary(const struct fetch_engine *e, json_t *summary);

/* fetch_cookiefile.c: --cookies FILE, one Netscape cookies.txt shared by
 * processes (a lock and a merge for each write, a rename).  open: the
 * file checked (a file, readable; made when not there) and loaded into
 * share; NULL with err.  The result is the caller's (free); path is
 * borrowed and must outlive it. */
struct fetch_cookiefile;
struct fetch_cookiefile *fetch_cookiefile_open(const char *path, CURLSH *share, char *err,
                                               size_t errlen);
void fetch_cookiefile_free(struct fetch_cookiefile *c);
/* Before a request: the file into the jar when another process changed it. */
void fetch_cookiefile_load(struct fetch_cookiefile *c);
/* After a Set-Cookie: the jar's changes merged into the file as it is now. */
void fetch_cookiefile_save(struct fetch_cookiefile *c);
/* The summary's "cookies": loads, saves, merges, save_errors. */
void fetch_cookiefile_summary(const struct fetch_cookiefile *c, json_t *summary);

/* fetch_pace.c (every entry a no-op with --no-adaptive and no --origin-state) */
struct sc_pace_event;
bool fetch_pace_init(struct fetch_engine *e, char *err, size_t errlen);
void fetch_pace_free(struct fetch_engine *e);
/* job is about to start on its origin: true when it may; false when the
 * origin's pace, or a start another process claimed, holds it (the
 * origin is paused until then and the job goes back to its queue). */
bool fetch_pace_claim(struct fetch_engine *e, struct job *job, double now);
/* The claimed start's request goes out at now (libcurl's prereq
 * callback): the spacing counts from here.  The shared file learns it
 * from fetch_pace_record_sent, which the loop calls after handing curl
 * its events, once the request is written. */
void fetch_pace_sent(struct fetch_engine *e, struct job *job, double now);
void fetch_pace_record_sent(struct fetch_engine *e);
/* An attempt ended: the controller learns from it; true and *ev when the
 * origin's pace changed (a throttle event). */
bool fetch_pace_answered(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                         const struct outcome *oc, double now, struct sc_pace_event *ev);
/* An origin given up on, or blocked past --retry-max-wait, that still has
 * jobs queued: the loop ends them as failed with *kind and why ("the
 * origin is blocked until ..."), for a later run to fetch again.  NULL
 * when there is none. */
struct origin *fetch_pace_blocked_origin(struct fetch_engine *e, double now, int *kind, char *why,
                                         size_t whylen);
/* The summary's "pace" (origins whose pace changed) and "origin_state". */
void fetch_pace_summary(const struct fetch_engine *e, json_t *summary, double now);
/* --defer-after with --origin-state: tells the file whether this process
 * is busy (has work it may do before the bound: input, transfers,
 * retries, origins free soon) and, when it is not, returns whether
 * another process sharing the file is: while one is, the round goes on,
 * so URLs held here are fetched rather than handed on.  False without a
 * file (the process defers on its own state alone). */
bool fetch_pace_others_busy(struct fetch_engine *e, bool busy, double now);

/* fetch_metrics.c: a throttle event line for origin. */
void fetch_metrics_throttle(struct fetch_engine *e, const struct origin *origin,
                            const struct sc_pace_event *ev, double now);

/* fetch_warc.c (every entry a no-op without --warc) */
/* Opens the WARC file (a left-over NAME.open mended) and writes its
 * warcinfo; false with the reason in err. */
bool fetch_warc_init(struct fetch_engine *e, char *err, size_t errlen);
/* Closes the file (renamed from NAME.open, its CDXJ written with
 * --warc-cdx); false with the reason in err.  Frees the state. */
bool fetch_warc_free(struct fetch_engine *e, char *err, size_t errlen);
/* A transfer is set up: its request, response heads and bodies are kept
 * from now on (libcurl's debug callback). */
void fetch_warc_setup(struct fetch_engine *e, struct transfer *xfer);
/* A response header line, from the transfer's header callback. */
void fetch_warc_header(struct transfer *xfer, const char *line, size_t n);
/* An attempt ended: each exchange with a whole response head is written
 * as a capture (request, response, metadata), and a record's "warc"
 * member set to its last response record's place (null if none).  false
 * when the file could not be written (the reason in err): the run stops. */
bool fetch_warc_attempt(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc, char *err, size_t errlen);
/* Frees a transfer's kept exchanges (with the transfer). */
void fetch_warc_xfer_free(struct transfer *xfer);
/* The absolute path of the file the last capture went to (valid until
 * the next one), or NULL without --warc or before any capture. */
const char *fetch_warc_last_file(const struct fetch_engine *e);

/* fetch_headers.c */
/* A 304 answering a conditional request (If-None-Match,
 * If-Modified-Since) is a success. */
bool fetch_not_modified(const struct fetch_engine *e, const struct job *job, long status);
/* On a completed record: not_modified (a 304 that is ok, no body), and
 * with --headers, headers and http_version of the last response. */
void fetch_headers_complete(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                            const struct outcome *oc);

#endif
