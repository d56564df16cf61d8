/* fetch_engine: the fetch engine's insides, shared by its files and by
 * nothing else (programs include fetch.h).
 *
 * The engine is one struct with its fields grouped by the file that owns
 * them; a job is one input item on its way to the output; an origin is
 * where admission holds jobs; a transfer is one curl easy handle at work.
 *
 *	fetch.c           the loop: engine new/free, run, epoll, signals, drain
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
 */
#ifndef SC_FETCH_ENGINE_H
#define SC_FETCH_ENGINE_H

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
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
size_t fetch_body_max(const struct sc_fetch_options *opts);
size_t fetch_line_max(const struct sc_fetch_options *opts, size_t input_line_max);

static inline double round1(double v)
{
	return round(v * 10.0) / 10.0;
}

struct hoststat;
struct job;

/* An origin, scheme://host:port: the unit of --per-host, --host-rate,
 * --delay and of a 429's pause.  Its jobs wait in its queue until
 * origin_admissible() (fetch_origin.c) lets the first one start. */
struct origin {
	char *key;                    /* "scheme://host:port" (owned) */
	struct origin *hnext;         /* hash chain */
	struct origin *rprev, *rnext; /* the admission ring, while in it */
	bool in_ring;
	struct job *qhead, *qtail; /* jobs ready to start, in order */
	size_t queued;
	long inflight;
	size_t refs; /* queued + in flight + waiting to retry */
	/* Admission gates: each says "not before" for the whole queue.  The
	 * robots.txt gate (robots, below; fetch_robots.c) is checked last in
	 * origin_admissible(): it holds the queue but for the robots.txt
	 * request while the answer is not known, then spaces starts by
	 * Crawl-delay.  Jobs it refuses never enter the queue (or are taken
	 * out of it when the answer comes), so the ring is never changed
	 * while fetch_admit walks it. */
	double tokens, tokens_at;    /* --host-rate bucket */
	double next_start;           /* --delay: no start before this (ms) */
	double paused_until;         /* a 429's Retry-After (ms) */
	struct hoststat *hs;         /* its latency statistics, if kept */
	struct robots_entry *robots; /* --robots: its robots.txt state (fetch_robots.c) */
};

struct hoststat {
	struct origin *owner; /* NULL once the origin is gone */
	char *key;            /* the origin's key (owned) */
	uint64_t requests, errors;
	struct sc_hist lat; /* microseconds */
};

/* One curl easy handle and what its callbacks learn of the response. */
struct transfer {
	CURL *easy;
	struct job *job;                /* the job it fetches for, while active */
	struct transfer *anext, *aprev; /* the engine's active list */
	struct sc_fetch_engine *engine;
	struct sc_buf body;
	bool too_large;
	/* Of the response whose headers are arriving: */
	bool has_location;  /* a Location header */
	bool encoded;       /* a Content-Encoding: its length is not the body's */
	bool redirecting;   /* a redirect being followed: its body is not ours */
	bool in_head;       /* its status line came, the blank line not yet */
	bool head_complete; /* its header block ended with the blank line */
	char *retry_after;  /* of the latest response (owned) */
	double started;
	char errbuf[CURL_ERROR_SIZE];
	struct transfer *next_free;
};

/* One input item: a record to fetch, or one to write as it is. */
struct job {
	uint64_t seq; /* input position */
	json_t *rec;  /* the record (owned) */
	char *raw;    /* or a passthrough line (owned) */
	size_t raw_len;
	bool done, failed;
	struct job *qnext; /* in its origin's queue */
	/* fetching */
	char *url;         /* owned copy of rec.url */
	char *metrics_url; /* url without credentials (owned) */
	struct origin *origin;
	int prior, attempts, max_attempts;
	double queued_at, ready_at, first_start;
	long long wait_ms; /* the wait before the coming attempt */
	size_t heap_index;
	struct curl_slist *req_headers; /* owned */
	char *req_method;               /* owned, or NULL */
	char *req_body;                 /* owned, or NULL */
	size_t req_body_len;
	bool has_body;
	const char *body; /* a body still in its transfer's buffer */
	size_t body_len;
	bool in_scratch;                 /* its output line is in e->line (job_encode) */
	struct robots_entry *robots_for; /* the robots.txt request of that origin:
	                                    no record, never counted as one */
};

/* How one attempt ended. */
struct outcome {
	long status; /* 0: no response */
	int kind;    /* -1: ok */
	char message[CURL_ERROR_SIZE + 64];
	double latency_ms;
	size_t bytes;
};

struct sc_fetch_engine {
	const struct sc_fetch_options *opts; /* borrowed */

	/* the loop (fetch.c) */
	CURLM *multi;
	int epfd;             /* curl's sockets, the wake pipe, the input */
	bool input_polled;    /* the input descriptor is in epfd */
	double curl_timer_at; /* when curl wants its timeout; INFINITY: none */
	struct sc_retry_state *retry;
	struct sc_lines *in; /* borrowed, during sc_fetch_run */
	sc_fetch_line_fn on_line;
	void *line_ctx;
	bool input_eof, input_wait, input_error;
	int in_flags;    /* the input's file status flags before the run */
	bool stopping;   /* a signal or a fatal error: draining */
	char error[256]; /* the fatal error that started the drain, if any */
	double grace_deadline;

	/* origins and admission (fetch_origin.c) */
	struct origin **htab; /* hash table of origins, hsize buckets */
	size_t hsize, origins, origins_at_sweep;
	struct origin *ring; /* admission cursor */
	size_t queued;       /* jobs in origin queues */
	long inflight;
	double tokens, tokens_at; /* --rate bucket */
	struct job **heap;        /* jobs waiting to retry, min by ready_at */
	size_t nheap, heapcap;

	/* items in (fetch_submit.c) */
	CURLU *urlh; /* scratch for parsing URLs */

	/* transfers (fetch_transfer.c) */
	struct transfer *free_xfers; /* idle handles kept for reuse */
	struct transfer *active;     /* transfers added to the multi handle */

	/* records out (fetch_output.c) */
	FILE *out;                   /* borrowed */
	struct sc_buf line;          /* scratch for encoding a record */
	uint64_t next_seq, next_out; /* input positions given and written */
	struct job **window;         /* --keep-order ring, wsize slots */
	size_t wsize;
	bool out_error;
	int out_errno; /* of the failed write: EPIPE is a reader gone, not an error */

	/* metrics (fetch_metrics.c) */
	FILE *metrics; /* o->metrics_path (own_metrics) or stderr */
	bool own_metrics;
	struct sc_buf mline; /* scratch for a request metrics line */
	double start_ms, last_stats;
	uint64_t records, records_failed, requests, bytes;
	uint64_t status_class[6];
	uint64_t attempt_errors[SC_ERR_KIND_COUNT], record_errors[SC_ERR_KIND_COUNT];
	struct sc_hist lat;
	struct hoststat *hosts[HOST_STATS_MAX];
	size_t nhosts;
	bool progress, progress_shown; /* --progress, on a terminal */
	double last_progress;
	long long total_lines; /* -1: unknown */

	/* --robots (fetch_robots.c), or NULL */
	struct fetch_robots *robots;
};

/* fetch.c */
void fetch_attempt_ended(struct sc_fetch_engine *e, struct job *job, struct transfer *xfer,
                         struct outcome *oc);

/* fetch_origin.c */
struct origin *fetch_origin_get(struct sc_fetch_engine *e, const char *key, double now);
void fetch_origins_free(struct sc_fetch_engine *e);
void fetch_origin_push(struct sc_fetch_engine *e, struct origin *origin, struct job *job,
                       bool front);
struct job *fetch_origin_pop(struct sc_fetch_engine *e, struct origin *origin);
void fetch_ring_update(struct sc_fetch_engine *e, struct origin *origin);
void fetch_ring_remove(struct sc_fetch_engine *e, struct origin *origin);
void fetch_heap_push(struct sc_fetch_engine *e, struct job *job);
struct job *fetch_heap_pop(struct sc_fetch_engine *e);
double fetch_admit(struct sc_fetch_engine *e, double now, bool *host_blocked);

/* fetch_transfer.c */
void fetch_job_start(struct sc_fetch_engine *e, struct job *job, double now);
void fetch_transfer_done(struct sc_fetch_engine *e, struct transfer *xfer, CURLcode rc);
void fetch_abort_inflight(struct sc_fetch_engine *e);
void fetch_xfers_free(struct sc_fetch_engine *e);

/* fetch_output.c */
struct job *fetch_job_new(struct sc_fetch_engine *e);
void fetch_job_finish(struct sc_fetch_engine *e, struct job *job);
void fetch_job_complete(struct sc_fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc, double now);
void fetch_job_done(struct sc_fetch_engine *e, struct job *job);
void fetch_history_add(struct job *job, const struct outcome *oc);
int fetch_write_json_line(FILE *out, const json_t *obj);

/* fetch_metrics.c */
void fetch_count_attempt(struct sc_fetch_engine *e, struct job *job, const struct outcome *oc);
void fetch_request_metrics(struct sc_fetch_engine *e, struct job *job, struct transfer *xfer,
                           const struct outcome *oc, const char *next);
void fetch_summary(struct sc_fetch_engine *e, bool final);
void fetch_progress_draw(struct sc_fetch_engine *e, double now);
void fetch_progress_clear(struct sc_fetch_engine *e);
void fetch_hoststats_free(struct sc_fetch_engine *e);

/* fetch_robots.c (every entry a no-op without --robots) */
bool fetch_robots_init(struct sc_fetch_engine *e, char err[256]);
void fetch_robots_free(struct sc_fetch_engine *e);
/* A job about to be queued on its origin: true when robots.txt refused it
 * (it is finished); else the origin's robots.txt request is queued first
 * if its answer is not known yet. */
bool fetch_robots_refuse(struct sc_fetch_engine *e, struct job *job);
/* The gate of origin_admissible: the queue is held while the answer is
 * not known (but for the robots.txt request itself), and Crawl-delay. */
bool fetch_robots_admissible(struct sc_fetch_engine *e, struct origin *origin, double now,
                             double *wake);
/* The robots.txt request's last attempt ended: the answer is known, the
 * held queue is sorted (refused jobs finished).  Before its metrics line. */
void fetch_robots_learn(struct sc_fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc);
/* Frees the robots.txt request's job (after its metrics line). */
void fetch_robots_job_end(struct sc_fetch_engine *e, struct job *job);
/* The robots members of a request metrics line; the summary's "robots". */
void fetch_robots_metrics(struct sc_fetch_engine *e, struct job *job, struct sc_buf *b);
void fetch_robots_summary(struct sc_fetch_engine *e, json_t *summary);
/* The body limit of a transfer: SC_ROBOTS_MAX_BYTES for robots.txt,
 * whose rest is cut, not an error. */
bool fetch_robots_body(struct transfer *xfer, const char *data, size_t n);

/* fetch_headers.c */
/* A 304 answering a conditional request (If-None-Match,
 * If-Modified-Since) is a success. */
bool fetch_not_modified(const struct sc_fetch_engine *e, const struct job *job, long status);
/* On a completed record: not_modified (a 304 that is ok, no body), and
 * with --headers, headers and http_version of the last response. */
void fetch_headers_complete(struct sc_fetch_engine *e, struct job *job, struct transfer *xfer,
                            const struct outcome *oc);

#endif
