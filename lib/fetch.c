/* fetch: the event loop, admission (global cap, per-origin queues, rate
 * buckets, delays, 429 pauses), retries and the output of records. */
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "input.h"
#include "metrics.h"
#include "record.h"
#include "signals.h"
#include "utf8.h"
#include "util.h"

/* Lines read beyond the work that can start now: enough that a finished
 * transfer is replaced at once, small enough to stay flat in memory. */
#define READAHEAD_BASE(c) ((size_t)(c) / 4 + 4)
/* When free slots cannot be filled because every queued URL waits on its
 * host's cap, reading goes on (so other hosts' URLs are not stuck behind
 * them), up to this many queued jobs. */
#define READAHEAD_MAX(c) ((size_t)(c)*4 + 10000)
/* The --keep-order window: records read but not yet written. */
#define ORDER_WINDOW(c) ((size_t)(c)*4 + 64)
/* Per-host latency statistics are kept for at most this many hosts. */
#define HOST_STATS_MAX 64
/* Bodies buffered above this size are freed after their transfer rather
 * than kept for the next one. */
#define BODY_KEEP_MAX (256 * 1024)

struct buf {
	char *p;
	size_t len, cap;
};

struct hoststat;
struct job;

/* An origin, scheme://host:port: the unit of --per-host, --host-rate,
 * --delay and of a 429's pause. */
struct origin {
	char *key;
	struct origin *hnext;         /* hash chain */
	struct origin *rprev, *rnext; /* the admission ring, while in it */
	bool in_ring;
	struct job *qhead, *qtail; /* jobs ready to start */
	size_t queued;
	long inflight;
	size_t refs;              /* queued + in flight + waiting to retry */
	double tokens, tokens_at; /* --host-rate bucket */
	double next_start;        /* --delay: no start before this (ms) */
	double paused_until;      /* a 429's Retry-After (ms) */
	struct hoststat *hs;
};

struct hoststat {
	struct origin *owner; /* NULL once the origin is gone */
	char *key;
	uint64_t requests, errors;
	struct sc_hist lat; /* microseconds */
};

struct transfer {
	CURL *easy;
	struct job *job;
	struct transfer *anext, *aprev; /* the engine's active list */
	struct sc_fetch_engine *e;
	struct buf body;
	bool too_large;
	/* Of the response whose headers are arriving: */
	bool has_location; /* a Location header */
	bool encoded;      /* a Content-Encoding: its length is not the body's */
	bool redirecting;  /* a redirect being followed: its body is not ours */
	char *retry_after; /* of the latest response */
	double started;
	char errbuf[CURL_ERROR_SIZE];
	struct transfer *next_free;
};

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
	struct curl_slist *req_headers;
	char *req_method;
	char *req_body;
	size_t req_body_len;
	bool has_body;
	const char *body; /* a body still in its transfer's buffer */
	size_t body_len;
	bool in_scratch; /* its output line is in e->line (job_encode) */
};

struct sc_fetch_engine {
	const struct sc_fetch_options *o;
	FILE *out, *metrics;
	bool own_metrics;
	CURLM *multi;
	int epfd;             /* curl's sockets, the wake pipe, the input */
	bool input_polled;    /* the input descriptor is in epfd */
	double curl_timer_at; /* when curl wants its timeout; INFINITY: none */
	CURLU *urlh;
	struct sc_retry_state *retry;
	struct sc_lines *in;
	sc_fetch_line_fn on_line;
	void *line_ctx;

	/* origins */
	struct origin **htab;
	size_t hsize, origins, origins_at_sweep;
	struct origin *ring; /* admission cursor */
	size_t queued;       /* jobs in origin queues */
	long inflight;
	double tokens, tokens_at; /* --rate bucket */

	/* retry timer heap (min by ready_at) */
	struct job **heap;
	size_t nheap, heapcap;

	struct transfer *free_xfers;
	struct transfer *active; /* transfers added to the multi handle */
	struct buf line;         /* scratch for encoding a record */
	struct buf mline;        /* scratch for a request metrics line */

	/* output */
	uint64_t next_seq, next_out;
	struct job **window; /* --keep-order ring, ORDER_WINDOW slots */
	size_t wsize;
	bool out_error;

	/* input */
	bool input_eof, input_wait, input_error;
	int in_flags;

	/* shutdown */
	bool stopping;
	double grace_deadline;

	/* statistics */
	double start_ms, last_stats;
	uint64_t records, records_failed, requests, bytes;
	uint64_t status_class[6];
	uint64_t attempt_errors[SC_ERR_KIND_COUNT], record_errors[SC_ERR_KIND_COUNT];
	struct sc_hist lat;
	struct hoststat *hosts[HOST_STATS_MAX];
	size_t nhosts;

	/* --progress */
	bool progress, progress_shown;
	double last_progress;
	long long total_lines; /* -1: unknown */
};

static int wake_pipe[2] = { -1, -1 };

void sc_fetch_signal_hook(void)
{
	int saved = errno;

	if (wake_pipe[1] >= 0) {
		ssize_t n = write(wake_pipe[1], "", 1);
		(void)n;
	}
	errno = saved;
}

/* ---- small helpers ---- */

static void buf_reserve(struct buf *b, size_t need)
{
	if (need <= b->cap && b->p)
		return;
	size_t cap = b->cap ? b->cap : 16384;
	while (cap < need)
		cap *= 2;
	b->p = sc_realloc(b->p, cap);
	b->cap = cap;
}

static json_t *base64(const unsigned char *s, size_t n)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t outlen = 4 * ((n + 2) / 3);
	char *out = sc_malloc(outlen + 1), *o = out;
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = tab[(v >> 6) & 63];
		*o++ = tab[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		if (i + 1 < n)
			*o++ = tab[(v >> 6) & 63];
		else
			*o++ = '=';
		*o++ = '=';
	}
	json_t *str = json_stringn_nocheck(out, outlen);
	free(out);
	return str;
}

static double round1(double v)
{
	return round(v * 10.0) / 10.0;
}

/* Writes obj as one line (whole, flushed; see sc_record_write_raw). */
static int write_line(FILE *out, const json_t *obj)
{
	char *text = json_dumps(obj, SC_JSON_FLAGS);
	int rc;

	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	rc = sc_record_write_raw(out, text, strlen(text));
	free(text);
	return rc;
}

/* ---- origins ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static void origin_grow(struct sc_fetch_engine *e)
{
	size_t nsize = e->hsize ? e->hsize * 2 : 256;
	struct origin **nt = sc_calloc(nsize, sizeof(*nt));

	for (size_t i = 0; i < e->hsize; i++) {
		struct origin *o = e->htab[i], *next;
		for (; o; o = next) {
			next = o->hnext;
			size_t b = hash_str(o->key) & (nsize - 1);
			o->hnext = nt[b];
			nt[b] = o;
		}
	}
	free(e->htab);
	e->htab = nt;
	e->hsize = nsize;
}

static void origin_free(struct sc_fetch_engine *e, struct origin *o)
{
	if (o->hs)
		o->hs->owner = NULL;
	e->origins--;
	free(o->key);
	free(o);
}

/* Frees origins that hold nothing and whose limits no longer bind, so the
 * table stays as small as the set of hosts in play. */
static void origin_sweep(struct sc_fetch_engine *e, double now)
{
	for (size_t i = 0; i < e->hsize; i++) {
		struct origin **pp = &e->htab[i];
		while (*pp) {
			struct origin *o = *pp;
			bool idle = o->refs == 0 && o->next_start <= now &&
			            o->paused_until <= now &&
			            (e->o->host_rate <= 0 || now - o->tokens_at > 10000);
			if (idle) {
				*pp = o->hnext;
				origin_free(e, o);
			} else {
				pp = &o->hnext;
			}
		}
	}
	e->origins_at_sweep = e->origins;
}

static struct origin *origin_get(struct sc_fetch_engine *e, const char *key, double now)
{
	if (e->hsize == 0 || e->origins >= e->hsize)
		origin_grow(e);
	size_t b = hash_str(key) & (e->hsize - 1);
	for (struct origin *o = e->htab[b]; o; o = o->hnext)
		if (strcmp(o->key, key) == 0)
			return o;
	if (e->origins >= 4096 && e->origins >= 2 * e->origins_at_sweep) {
		origin_sweep(e, now);
		b = hash_str(key) & (e->hsize - 1);
	}
	struct origin *o = sc_calloc(1, sizeof(*o));
	o->key = sc_strdup(key);
	o->tokens = 1;
	o->tokens_at = now;
	o->hnext = e->htab[b];
	e->htab[b] = o;
	e->origins++;
	return o;
}

static void ring_add(struct sc_fetch_engine *e, struct origin *o)
{
	if (o->in_ring)
		return;
	o->in_ring = true;
	if (!e->ring) {
		o->rnext = o->rprev = o;
		e->ring = o;
		return;
	}
	/* Just before the cursor: the last to be visited in this round. */
	o->rnext = e->ring;
	o->rprev = e->ring->rprev;
	o->rprev->rnext = o;
	e->ring->rprev = o;
}

static void ring_remove(struct sc_fetch_engine *e, struct origin *o)
{
	if (!o->in_ring)
		return;
	o->in_ring = false;
	if (o->rnext == o) {
		e->ring = NULL;
	} else {
		o->rprev->rnext = o->rnext;
		o->rnext->rprev = o->rprev;
		if (e->ring == o)
			e->ring = o->rnext;
	}
	o->rnext = o->rprev = NULL;
}

/* An origin is in the ring while it has queued jobs and room under
 * --per-host; time-based limits are checked at admission. */
static void ring_update(struct sc_fetch_engine *e, struct origin *o)
{
	bool room = e->o->per_host <= 0 || o->inflight < e->o->per_host;

	if (o->queued > 0 && room)
		ring_add(e, o);
	else
		ring_remove(e, o);
}

static void origin_push(struct sc_fetch_engine *e, struct origin *o, struct job *j, bool front)
{
	j->qnext = NULL;
	if (front) {
		j->qnext = o->qhead;
		o->qhead = j;
		if (!o->qtail)
			o->qtail = j;
	} else {
		if (o->qtail)
			o->qtail->qnext = j;
		else
			o->qhead = j;
		o->qtail = j;
	}
	o->queued++;
	e->queued++;
	ring_update(e, o);
}

static struct job *origin_pop(struct sc_fetch_engine *e, struct origin *o)
{
	struct job *j = o->qhead;

	o->qhead = j->qnext;
	if (!o->qhead)
		o->qtail = NULL;
	j->qnext = NULL;
	o->queued--;
	e->queued--;
	return j;
}

static void origin_unref(struct sc_fetch_engine *e, struct origin *o)
{
	(void)e;
	o->refs--;
}

/* ---- the retry heap ---- */

static void heap_swap(struct sc_fetch_engine *e, size_t a, size_t b)
{
	struct job *t = e->heap[a];

	e->heap[a] = e->heap[b];
	e->heap[b] = t;
	e->heap[a]->heap_index = a;
	e->heap[b]->heap_index = b;
}

static void heap_push(struct sc_fetch_engine *e, struct job *j)
{
	if (e->nheap == e->heapcap) {
		e->heapcap = e->heapcap ? e->heapcap * 2 : 64;
		e->heap = sc_realloc(e->heap, e->heapcap * sizeof(*e->heap));
	}
	size_t i = e->nheap++;
	e->heap[i] = j;
	j->heap_index = i;
	while (i > 0 && e->heap[(i - 1) / 2]->ready_at > e->heap[i]->ready_at) {
		heap_swap(e, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct job *heap_pop(struct sc_fetch_engine *e)
{
	struct job *top = e->heap[0];

	e->nheap--;
	if (e->nheap > 0) {
		e->heap[0] = e->heap[e->nheap];
		e->heap[0]->heap_index = 0;
		size_t i = 0;
		for (;;) {
			size_t l = 2 * i + 1, r = l + 1, m = i;
			if (l < e->nheap && e->heap[l]->ready_at < e->heap[m]->ready_at)
				m = l;
			if (r < e->nheap && e->heap[r]->ready_at < e->heap[m]->ready_at)
				m = r;
			if (m == i)
				break;
			heap_swap(e, i, m);
			i = m;
		}
	}
	return top;
}

/* ---- metrics ---- */

static void progress_clear(struct sc_fetch_engine *e)
{
	if (e->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		e->progress_shown = false;
	}
}

static void metrics_line(struct sc_fetch_engine *e, json_t *obj)
{
	if (e->metrics == stderr)
		progress_clear(e);
	if (write_line(e->metrics, obj) != 0)
		clearerr(e->metrics); /* metrics are best effort; the records are what count */
	json_decref(obj);
}

static struct hoststat *hoststat_for(struct sc_fetch_engine *e, struct origin *o)
{
	if (o->hs)
		return o->hs;
	for (size_t i = 0; i < e->nhosts; i++) {
		if (strcmp(e->hosts[i]->key, o->key) == 0) {
			e->hosts[i]->owner = o;
			return o->hs = e->hosts[i];
		}
	}
	struct hoststat *hs;
	if (e->nhosts < HOST_STATS_MAX) {
		hs = sc_calloc(1, sizeof(*hs));
		e->hosts[e->nhosts++] = hs;
	} else {
		/* Full: the quietest host makes way (the busiest are what the
		 * summary reports). */
		hs = e->hosts[0];
		for (size_t i = 1; i < e->nhosts; i++)
			if (e->hosts[i]->requests < hs->requests)
				hs = e->hosts[i];
		if (hs->owner)
			hs->owner->hs = NULL;
		free(hs->key);
	}
	hs->key = sc_strdup(o->key);
	hs->requests = hs->errors = 0;
	sc_hist_init(&hs->lat);
	hs->owner = o;
	return o->hs = hs;
}

static json_t *latency_json(const struct sc_hist *h)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f}", "p50",
	                 round1((double)sc_hist_percentile(h, 50) / 1000.0), "p95",
	                 round1((double)sc_hist_percentile(h, 95) / 1000.0), "p99",
	                 round1((double)sc_hist_percentile(h, 99) / 1000.0), "max",
	                 round1((double)h->max / 1000.0), "mean",
	                 h->count ? round1(h->sum / (double)h->count / 1000.0) : 0.0);
}

static int cmp_hosts(const void *a, const void *b)
{
	const struct hoststat *x = *(struct hoststat *const *)a, *y = *(struct hoststat *const *)b;

	return x->requests < y->requests ? 1 : x->requests > y->requests ? -1 : 0;
}

static void write_summary(struct sc_fetch_engine *e, bool final)
{
	double now = sc_now_ms();
	double elapsed = (now - e->start_ms) / 1000.0;
	char ts[SC_RFC3339_LEN];
	json_t *status = json_object(), *errors = json_object(), *rerrors = json_object();
	json_t *hosts = json_array();
	static const char *const classes[] = { "none", "1xx", "2xx", "3xx", "4xx", "5xx" };

	sc_rfc3339(sc_wall_ms(), ts);
	for (int i = 1; i < 6; i++)
		if (e->status_class[i])
			json_object_set_new(status, classes[i],
			                    json_integer((json_int_t)e->status_class[i]));
	for (int k = 0; k < SC_ERR_KIND_COUNT; k++) {
		if (e->attempt_errors[k])
			json_object_set_new(errors, sc_error_kind_name(k),
			                    json_integer((json_int_t)e->attempt_errors[k]));
		if (e->record_errors[k])
			json_object_set_new(rerrors, sc_error_kind_name(k),
			                    json_integer((json_int_t)e->record_errors[k]));
	}
	struct hoststat *sorted[HOST_STATS_MAX];
	memcpy(sorted, e->hosts, e->nhosts * sizeof(*sorted));
	qsort(sorted, e->nhosts, sizeof(*sorted), cmp_hosts);
	for (size_t i = 0; i < e->nhosts && i < 5; i++)
		json_array_append_new(hosts,
		                      json_pack("{s:s, s:I, s:I, s:o}", "host", sorted[i]->key,
		                                "requests", (json_int_t)sorted[i]->requests,
		                                "errors", (json_int_t)sorted[i]->errors,
		                                "latency_ms", latency_json(&sorted[i]->lat)));
	json_t *obj = json_pack(
	        "{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:f, s:f, s:o, s:o, s:I}",
	        "event", "summary", "ts", ts, "final", final, "records", (json_int_t)e->records,
	        "ok", (json_int_t)(e->records - e->records_failed), "not_ok",
	        (json_int_t)e->records_failed, "requests", (json_int_t)e->requests, "status",
	        status, "errors", errors, "record_errors", rerrors, "bytes", (json_int_t)e->bytes,
	        "elapsed_s", round(elapsed * 1000.0) / 1000.0, "rps",
	        elapsed > 0 ? round1((double)e->requests / elapsed) : 0.0, "latency_ms",
	        latency_json(&e->lat), "hosts", hosts, "inflight", (json_int_t)e->inflight);
	json_object_set_new(obj, "seed", json_integer((json_int_t)sc_retry_state_seed(e->retry)));
	if (!final)
		json_object_set_new(obj, "queued",
		                    json_integer((json_int_t)(e->queued + e->nheap)));
	metrics_line(e, obj);
}

static void progress_draw(struct sc_fetch_engine *e, double now)
{
	double elapsed = (now - e->start_ms) / 1000.0;
	char total[32] = "";

	if (e->total_lines >= 0)
		snprintf(total, sizeof(total), "/%lld", e->total_lines);
	fprintf(stderr, "\r\033[K%s: %llu%s done, %llu in flight, %.1f req/s, %llu not ok",
	        sc_progname, (unsigned long long)e->records, total, (unsigned long long)e->inflight,
	        elapsed > 0 ? (double)e->requests / elapsed : 0.0,
	        (unsigned long long)e->records_failed);
	fflush(stderr);
	e->progress_shown = true;
	e->last_progress = now;
}

/* ---- output ---- */

static void job_free(struct job *j)
{
	json_decref(j->rec);
	free(j->raw);
	free(j->url);
	free(j->metrics_url);
	free(j->req_method);
	free(j->req_body);
	curl_slist_free_all(j->req_headers);
	free(j);
}

/* Writes a whole line (its newline included) with write(2), past stdio's
 * buffer (empty: every line is flushed): a record with a body is mostly
 * body, and this spares copying it once more.  Like sc_record_write_raw, a
 * second signal never cuts it short. */
static int write_direct(FILE *out, const char *text, size_t len)
{
	int fd = fileno(out), rc = 0;

	if (fd < 0 || fflush(out) != 0)
		return fd < 0 ? sc_record_write_raw(out, text, len - 1) : -1;
	sc_signals_write_begin();
	while (len > 0) {
		ssize_t n = write(fd, text, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		text += n;
		len -= (size_t)n;
	}
	sc_signals_write_end();
	return rc;
}

static void write_job(struct sc_fetch_engine *e, struct job *j)
{
	int rc;

	if (e->out_error)
		return;
	if (j->in_scratch)
		rc = write_direct(e->out, e->line.p, e->line.len);
	else if (j->raw)
		rc = sc_record_write_raw(e->out, j->raw, j->raw_len);
	else
		rc = write_line(e->out, j->rec);
	if (rc != 0) {
		sc_warn("error writing standard output:");
		e->out_error = true;
	}
}

/* A job is finished: count it, and write it now or when its turn comes. */
static void job_finish(struct sc_fetch_engine *e, struct job *j)
{
	j->done = true;
	e->records++;
	if (j->failed) {
		e->records_failed++;
		const char *kind = json_string_value(
		        json_object_get(json_object_get(j->rec, "error"), "kind"));
		int k = kind ? sc_error_kind_from_name(kind) : -1;
		if (j->rec)
			e->record_errors[k < 0 ? SC_ERR_INTERNAL : k]++;
	}
	if (!e->o->keep_order) {
		write_job(e, j);
		job_free(j);
		e->next_out++;
		return;
	}
	if (j->in_scratch && j->seq != e->next_out) {
		/* It waits for its turn: its line cannot stay in the scratch. */
		j->raw_len = e->line.len - 1;
		j->raw = sc_malloc(e->line.len);
		memcpy(j->raw, e->line.p, j->raw_len);
		j->raw[j->raw_len] = '\0';
		j->in_scratch = false;
	}
	while ((j = e->window[e->next_out % e->wsize]) && j->done) {
		e->window[e->next_out % e->wsize] = NULL;
		write_job(e, j);
		job_free(j);
		e->next_out++;
	}
}

static struct job *job_new(struct sc_fetch_engine *e)
{
	struct job *j = sc_calloc(1, sizeof(*j));

	j->seq = e->next_seq++;
	if (e->o->keep_order)
		e->window[j->seq % e->wsize] = j;
	return j;
}

/* ---- submitting ---- */

void sc_fetch_submit_final(struct sc_fetch_engine *e, json_t *rec, bool failed)
{
	struct job *j = job_new(e);

	j->rec = rec;
	j->failed = failed;
	job_finish(e, j);
}

void sc_fetch_submit_raw(struct sc_fetch_engine *e, const char *text, size_t len, bool failed)
{
	struct job *j = job_new(e);

	j->raw = sc_malloc(len + 1);
	memcpy(j->raw, text, len);
	j->raw[len] = '\0';
	j->raw_len = len;
	j->failed = failed;
	job_finish(e, j);
}

/* Finishes a job that never reached the network. */
static void job_fail_early(struct sc_fetch_engine *e, struct job *j, enum sc_error_kind kind,
                           const char *message)
{
	json_object_set_new(j->rec, "status", json_null());
	sc_record_set_error(j->rec, kind, message);
	j->failed = true;
	job_finish(e, j);
}

/* Why a "request" member cannot be sent, or NULL when it can. */
static const char *request_problem(const json_t *req)
{
	const char *key;
	json_t *v;

	if (!req || json_is_null(req))
		return NULL;
	if (!json_is_object(req))
		return "request is not an object";
	v = json_object_get(req, "method");
	if (v && !json_is_null(v)) {
		const char *m = json_string_value(v);
		if (!m)
			return "request.method is not a string";
		if (!*m || strcspn(m, " \t\r\n") != strlen(m))
			return "request.method is not a method name";
	}
	v = json_object_get(req, "headers");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v))
			return "request.headers is not an object";
		json_t *hv;
		json_object_foreach(v, key, hv)
		{
			if (!json_is_string(hv))
				return "request.headers has a value that is not a string";
			if (!*key || strpbrk(key, ": \t\r\n") ||
			    strpbrk(json_string_value(hv), "\r\n"))
				return "request.headers has a malformed header";
		}
	}
	return NULL;
}

static bool header_named(const char *line, const char *name)
{
	size_t n = strlen(name);

	return strncasecmp(line, name, n) == 0 && (line[n] == ':' || line[n] == ';');
}

/* Builds the job's request from rec.request (already checked) and the -H
 * headers: the record's headers win over -H headers of the same name. */
static void job_request(struct sc_fetch_engine *e, struct job *j, const json_t *req)
{
	const json_t *hdrs = json_object_get(req, "headers");
	const json_t *body = json_object_get(req, "body");
	const char *key;
	json_t *hv;
	struct curl_slist *l = NULL;
	bool has_ctype = false;

	j->req_method = json_string_value(json_object_get(req, "method"))
	                        ? sc_strdup(json_string_value(json_object_get(req, "method")))
	                        : NULL;
	for (struct curl_slist *g = e->o->headers; g; g = g->next) {
		bool overridden = false;
		json_object_foreach((json_t *)hdrs, key, hv) if (header_named(g->data, key))
		        overridden = true;
		if (!overridden)
			l = curl_slist_append(l, g->data);
	}
	json_object_foreach((json_t *)hdrs, key, hv)
	{
		const char *val = json_string_value(hv);
		size_t n = strlen(key) + strlen(val) + 3;
		char *line = sc_malloc(n);
		/* "Name;" is how libcurl sends a header with an empty value. */
		if (*val)
			snprintf(line, n, "%s: %s", key, val);
		else
			snprintf(line, n, "%s;", key);
		l = curl_slist_append(l, line);
		free(line);
		if (strcasecmp(key, "content-type") == 0)
			has_ctype = true;
	}
	if (body && !json_is_null(body)) {
		j->has_body = true;
		if (json_is_string(body)) {
			j->req_body_len = json_string_length(body);
			j->req_body = sc_malloc(j->req_body_len + 1);
			memcpy(j->req_body, json_string_value(body), j->req_body_len + 1);
		} else {
			j->req_body = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
			j->req_body_len = strlen(j->req_body);
			if (!has_ctype)
				l = curl_slist_append(l, "Content-Type: application/json");
		}
		/* No "Expect: 100-continue" round trip. */
		l = curl_slist_append(l, "Expect:");
	}
	j->req_headers = l;
}

/* Parses url: its origin key into key, or an error.  Returns -1, or the
 * error kind with a message in why (SC_ERR_BAD_INPUT is 0: not "no error"). */
static int url_origin(struct sc_fetch_engine *e, const char *url, char *key, size_t keysize,
                      char **metrics_url, char *why, size_t whysize)
{
	char *scheme = NULL, *host = NULL, *port = NULL;
	CURLUcode uc;
	int rc = -1;

	/* Cleared first: a handle that holds a URL resolves the next one
	 * against it, which would make "x" mean "http://last-host/x". */
	curl_url_set(e->urlh, CURLUPART_URL, NULL, 0);
	uc = curl_url_set(e->urlh, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
	if (uc != CURLUE_OK) {
		snprintf(why, whysize, "not a valid URL: %s", curl_url_strerror(uc));
		return SC_ERR_BAD_INPUT;
	}
	curl_url_get(e->urlh, CURLUPART_SCHEME, &scheme, 0);
	if (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		snprintf(why, whysize, "scheme '%s' is not http or https", scheme ? scheme : "");
		rc = SC_ERR_BLOCKED_SCHEME;
		goto out;
	}
	if (curl_url_get(e->urlh, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(e->urlh, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		snprintf(why, whysize, "not a valid URL: no host");
		rc = SC_ERR_BAD_INPUT;
		goto out;
	}
	for (char *p = host; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	snprintf(key, keysize, "%s://%s:%s", scheme, host, port);
	if (strchr(url, '@')) {
		/* Metrics never show credentials. */
		char *clean = NULL;
		curl_url_set(e->urlh, CURLUPART_USER, NULL, 0);
		curl_url_set(e->urlh, CURLUPART_PASSWORD, NULL, 0);
		curl_url_get(e->urlh, CURLUPART_URL, &clean, 0);
		*metrics_url = sc_strdup(clean ? clean : key);
		curl_free(clean);
	} else {
		*metrics_url = sc_strdup(url);
	}
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	return rc;
}

/* Submits rec; line, when given, is its input line, for the warning and
 * the bad_input record of a URL that does not parse. */
static void submit(struct sc_fetch_engine *e, json_t *rec, int prior_attempts,
                   const struct sc_lines *in, const struct sc_line *line)
{
	struct job *j = job_new(e);
	const char *url = json_string_value(json_object_get(rec, "url"));
	const char *problem;
	char key[1024], why[256];
	int kind;
	double now = sc_now_ms();

	j->rec = rec;
	j->prior = j->attempts = prior_attempts > 0 ? prior_attempts : 0;
	j->max_attempts = j->attempts + 1 + e->o->retry.retries;
	if (!url) {
		job_fail_early(e, j, SC_ERR_BAD_INPUT, "no string member \"url\"");
		return;
	}
	if ((problem = request_problem(json_object_get(rec, "request")))) {
		job_fail_early(e, j, SC_ERR_BAD_INPUT, problem);
		return;
	}
	if ((kind = url_origin(e, url, key, sizeof(key), &j->metrics_url, why, sizeof(why))) >= 0) {
		if (kind == SC_ERR_BAD_INPUT && in && line) {
			sc_warn("%s:%zu: %s", sc_lines_name(in), line->number, why);
			json_t *bad = sc_record_bad_input(line->number, line->text, line->len, why);
			json_object_set(bad, "url", json_object_get(rec, "url"));
			json_decref(rec);
			j->rec = bad;
			j->failed = true;
			job_finish(e, j);
			return;
		}
		job_fail_early(e, j, kind, why);
		return;
	}
	if (e->stopping) {
		job_fail_early(e, j, SC_ERR_CANCELLED, "cancelled before it started");
		return;
	}
	j->url = sc_strdup(url);
	job_request(e, j, json_object_get(rec, "request"));
	j->origin = origin_get(e, key, now);
	j->origin->refs++;
	j->queued_at = now;
	origin_push(e, j->origin, j, false);
}

void sc_fetch_submit(struct sc_fetch_engine *e, json_t *rec, int prior_attempts)
{
	submit(e, rec, prior_attempts, NULL, NULL);
}

int sc_fetch_submit_line(struct sc_fetch_engine *e, const struct sc_lines *in,
                         const struct sc_line *line, void *ctx)
{
	const char *s = line->text;
	size_t n = line->len;
	struct sc_input_item item;

	(void)ctx;
	while (n > 0 && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (!line->too_long && (n == 0 || *s == '#'))
		return 0;
	if (line->too_long || *s == '{') {
		/* A JSON object (or something malformed): the shared rules. */
		if (!sc_input_item_from_line(in, line, NULL, &item))
			return 0;
		if (item.bad) {
			sc_fetch_submit_final(e, item.rec, true);
			return 0;
		}
		const char *problem = NULL;
		const char *url = json_string_value(json_object_get(item.rec, "url"));
		if (!url)
			problem = "no string member \"url\"";
		else if (!*url)
			problem = "\"url\" is empty";
		else
			problem = request_problem(json_object_get(item.rec, "request"));
		if (problem) {
			sc_warn("%s:%zu: %s", sc_lines_name(in), line->number, problem);
			json_t *bad =
			        sc_record_bad_input(line->number, line->text, line->len, problem);
			json_object_set(bad, "url",
			                url ? json_object_get(item.rec, "url") : json_null());
			json_decref(item.rec);
			sc_fetch_submit_final(e, bad, true);
			return 0;
		}
		submit(e, item.rec, 0, in, line);
		return 0;
	}
	if (memchr(s, '\0', n) || !sc_utf8_valid((const unsigned char *)s, n) ||
	    strcspn(s, " \t") < n) {
		const char *why = "not a URL";
		sc_warn("%s:%zu: %s", sc_lines_name(in), line->number, why);
		sc_fetch_submit_final(
		        e, sc_record_bad_input(line->number, line->text, line->len, why), true);
		return 0;
	}
	json_t *rec = json_object();
	json_object_set_new(rec, "url", json_stringn(s, n));
	submit(e, rec, 0, in, line);
	return 0;
}

/* ---- transfers ---- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	struct transfer *x = userp;
	size_t n = size * nmemb;
	long long max = x->e->o->max_bytes;

	/* libcurl skips the body of a redirect it follows; should it ever hand
	 * one over, it neither counts toward --max-bytes nor is kept. */
	if (x->redirecting)
		return n;
	if ((long long)(x->body.len + n) > max) {
		x->too_large = true;
		return 0; /* aborts with CURLE_WRITE_ERROR */
	}
	buf_reserve(&x->body, x->body.len + n);
	memcpy(x->body.p + x->body.len, data, n);
	x->body.len += n;
	return n;
}

static bool header_is(const char *data, size_t n, const char *name, size_t len)
{
	return n > len && data[len] == ':' && strncasecmp(data, name, len) == 0;
}

/* The end of a response's headers: a redirect that will be followed is
 * let through whatever its size; the final response is refused at once
 * when its Content-Length already says it is too large (unless it is
 * encoded: the decoded body is what counts), else its buffer is sized. */
static size_t headers_end(struct transfer *x, size_t n)
{
	const struct sc_fetch_options *o = x->e->o;
	long code = 0;
	curl_off_t cl = -1;

	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200)
		return n; /* 1xx: another response follows */
	if (o->max_redirs > 0 && code >= 300 && code < 400 && x->has_location) {
		x->redirecting = true;
		return n;
	}
	curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	if (cl > o->max_bytes && !x->encoded) {
		x->too_large = true;
		return 0; /* aborts with CURLE_WRITE_ERROR */
	}
	if (cl > 0 && cl <= o->max_bytes && cl <= (8 << 20))
		buf_reserve(&x->body, (size_t)cl);
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
	struct transfer *x = userp;
	size_t n = size * nmemb;

	if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		/* A new response (after a redirect or a 100): forget the last. */
		free(x->retry_after);
		x->retry_after = NULL;
		x->body.len = 0;
		x->has_location = x->encoded = x->redirecting = false;
	} else if (n <= 2 && (data[0] == '\r' || data[0] == '\n')) {
		return headers_end(x, n);
	} else if (header_is(data, n, "location", 8)) {
		x->has_location = true;
	} else if (header_is(data, n, "content-encoding", 16)) {
		x->encoded = true;
	} else if (header_is(data, n, "retry-after", 11)) {
		size_t len = n - 12;
		const char *v = data + 12;
		while (len > 0 && (*v == ' ' || *v == '\t'))
			v++, len--;
		while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
			len--;
		free(x->retry_after);
		x->retry_after = sc_strndup(v, len);
	}
	return n;
}

static struct transfer *xfer_get(struct sc_fetch_engine *e)
{
	struct transfer *x = e->free_xfers;

	if (x) {
		e->free_xfers = x->next_free;
		curl_easy_reset(x->easy);
	} else {
		x = sc_calloc(1, sizeof(*x));
		x->e = e;
		x->easy = curl_easy_init();
		if (!x->easy)
			sc_die(SC_EXIT_FAILURE, "cannot make a curl handle");
	}
	x->body.len = 0;
	x->too_large = x->has_location = x->encoded = x->redirecting = false;
	free(x->retry_after);
	x->retry_after = NULL;
	x->errbuf[0] = '\0';
	return x;
}

static void xfer_put(struct sc_fetch_engine *e, struct transfer *x)
{
	curl_multi_remove_handle(e->multi, x->easy);
	if (x->aprev)
		x->aprev->anext = x->anext;
	else
		e->active = x->anext;
	if (x->anext)
		x->anext->aprev = x->aprev;
	x->anext = x->aprev = NULL;
	x->job = NULL;
	if (x->body.cap > BODY_KEEP_MAX) {
		free(x->body.p);
		x->body.p = NULL;
		x->body.cap = 0;
	}
	x->next_free = e->free_xfers;
	e->free_xfers = x;
}

static void xfer_setup(struct sc_fetch_engine *e, struct transfer *x, struct job *j)
{
	const struct sc_fetch_options *o = e->o;
	CURL *c = x->easy;

	curl_easy_setopt(c, CURLOPT_URL, j->url);
	curl_easy_setopt(c, CURLOPT_PRIVATE, x);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, o->max_redirs > 0 ? 1L : 0L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, o->max_redirs);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	if (o->low_speed_time > 0) {
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_limit);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o->low_speed_time);
	}
	curl_easy_setopt(c, CURLOPT_USERAGENT, o->user_agent);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, j->req_headers ? j->req_headers : o->headers);
	/* Over TLS, wait for a multiplexed HTTP/2 stream rather than open one
	 * more connection: ALPN tells at the handshake whether it can.  Not
	 * for cleartext http, where libcurl would learn it only from the first
	 * response, so a slow one would hold up every other transfer. */
	if (strncasecmp(j->url, "https:", 6) == 0)
		curl_easy_setopt(c, CURLOPT_PIPEWAIT, 1L);
	if (o->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (j->req_method) {
		if (strcmp(j->req_method, "HEAD") == 0)
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		else if (strcmp(j->req_method, "GET") != 0 || j->has_body)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, j->req_method);
	}
	if (j->has_body || (j->req_method && strcmp(j->req_method, "POST") == 0)) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->req_body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, j->req_body ? j->req_body : "");
	}
}

static bool origin_admissible(struct sc_fetch_engine *e, struct origin *o, double now, double *wake)
{
	double at = now;

	if (o->paused_until > at)
		at = o->paused_until;
	if (o->next_start > at)
		at = o->next_start;
	if (e->o->host_rate > 0) {
		double cap = fmax(1.0, e->o->host_rate * 0.05);
		o->tokens = fmin(cap, o->tokens + (now - o->tokens_at) * e->o->host_rate / 1000.0);
		o->tokens_at = now;
		if (o->tokens < 1.0) {
			double t = now + (1.0 - o->tokens) * 1000.0 / e->o->host_rate;
			if (t > at)
				at = t;
		}
	}
	if (at > now) {
		if (at < *wake)
			*wake = at;
		return false;
	}
	return true;
}

static void start_job(struct sc_fetch_engine *e, struct job *j, double now)
{
	struct transfer *x = xfer_get(e);
	struct origin *o = j->origin;

	x->job = j;
	x->started = now;
	xfer_setup(e, x, j);
	if (j->first_start == 0)
		j->first_start = now;
	if (j->attempts == j->prior)
		sc_retry_note_first_attempt(e->retry, now);
	j->attempts++;
	o->inflight++;
	e->inflight++;
	if (e->o->delay_ms > 0)
		o->next_start = now + (double)e->o->delay_ms;
	if (e->o->host_rate > 0)
		o->tokens -= 1.0;
	if (e->o->rate > 0)
		e->tokens -= 1.0;
	ring_update(e, o);
	x->aprev = NULL;
	x->anext = e->active;
	if (e->active)
		e->active->aprev = x;
	e->active = x;
	CURLMcode mc = curl_multi_add_handle(e->multi, x->easy);
	if (mc != CURLM_OK)
		sc_die(SC_EXIT_FAILURE, "curl_multi_add_handle: %s", curl_multi_strerror(mc));
}

/* Starts what may start now.  Returns the time of the next possible start
 * (ms) if something waits on a clock, else INFINITY; *host_blocked is set
 * when free slots stay empty because no queued origin may start. */
static double admit(struct sc_fetch_engine *e, double now, bool *host_blocked)
{
	double wake = INFINITY;

	*host_blocked = false;
	while (e->inflight < e->o->concurrency && e->ring) {
		if (e->o->rate > 0) {
			double cap = fmax(1.0, e->o->rate * 0.05);
			e->tokens =
			        fmin(cap, e->tokens + (now - e->tokens_at) * e->o->rate / 1000.0);
			e->tokens_at = now;
			if (e->tokens < 1.0) {
				wake = fmin(wake, now + (1.0 - e->tokens) * 1000.0 / e->o->rate);
				return wake;
			}
		}
		struct origin *o = e->ring, *found = NULL;
		do {
			if (origin_admissible(e, o, now, &wake)) {
				found = o;
				break;
			}
			o = o->rnext;
		} while (o != e->ring);
		if (!found)
			break;
		/* Round robin: the next search starts after this origin. */
		e->ring = found->rnext;
		struct job *j = origin_pop(e, found);
		ring_update(e, found);
		start_job(e, j, now);
	}
	if (e->inflight < e->o->concurrency)
		*host_blocked = true;
	return wake;
}

/* ---- finishing attempts ---- */

static enum sc_error_kind kind_of(CURLcode rc, bool too_large)
{
	if (too_large)
		return SC_ERR_TOO_LARGE;
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return SC_ERR_DNS;
	case CURLE_COULDNT_CONNECT:
		return SC_ERR_CONNECT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_SSL_SHUTDOWN_FAILED:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CLIENTCERT:
	case CURLE_USE_SSL_FAILED:
		return SC_ERR_TLS;
	case CURLE_OPERATION_TIMEDOUT:
		return SC_ERR_TIMEOUT;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_HTTP3:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_BAD_CONTENT_ENCODING:
		return SC_ERR_NETWORK;
	case CURLE_TOO_MANY_REDIRECTS:
		return SC_ERR_TOO_MANY_REDIRECTS;
	case CURLE_UNSUPPORTED_PROTOCOL:
		return SC_ERR_BLOCKED_SCHEME;
	case CURLE_FILESIZE_EXCEEDED:
		return SC_ERR_TOO_LARGE;
	case CURLE_URL_MALFORMAT:
		return SC_ERR_BAD_INPUT;
	default:
		return SC_ERR_INTERNAL;
	}
}

static double info_ms(CURL *c, CURLINFO what)
{
	curl_off_t us = 0;

	curl_easy_getinfo(c, what, &us);
	return round1((double)us / 1000.0);
}

struct outcome {
	long status; /* 0: no response */
	int kind;    /* -1: ok */
	char message[CURL_ERROR_SIZE + 64];
	double latency_ms;
	size_t bytes;
};

static bool json_escape_utf8_into(struct buf *b, const char *s, size_t n);

static void buf_add(struct buf *b, const char *s, size_t n)
{
	buf_reserve(b, b->len + n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	buf_add(b, tmp, n < 0 ? 0 : (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A real as jansson writes it under JSON_REAL_PRECISION(12). */
static void buf_real(struct buf *b, double v)
{
	char tmp[40];
	int n = snprintf(tmp, sizeof(tmp), "%.12g", v);

	if (!strpbrk(tmp, ".e"))
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, ".0");
	buf_add(b, tmp, (size_t)n);
}

/* "key":"value", the value escaped; false if it is not UTF-8. */
static bool buf_string_member(struct buf *b, const char *key, const char *val)
{
	buf_printf(b, ",\"%s\":\"", key);
	if (!json_escape_utf8_into(b, val, strlen(val)))
		return false;
	buf_add(b, "\"", 1);
	return true;
}

/* The request metrics line, formatted by hand: it is written for every
 * attempt, and building and dumping a jansson object for it cost more than
 * the rest of the record's bookkeeping.  The same text jansson would make
 * (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)). */
static void write_request_metrics(struct sc_fetch_engine *e, struct job *j, struct transfer *x,
                                  const struct outcome *oc, const char *next)
{
	char ts[SC_RFC3339_LEN];
	struct buf *b = &e->mline;

	if (e->o->quiet)
		return;
	sc_rfc3339(sc_wall_ms(), ts);
	b->len = 0;
	buf_printf(b, "{\"event\":\"request\",\"ts\":\"%s\"", ts);
	if (!buf_string_member(b, "url", j->metrics_url) ||
	    !buf_string_member(b, "host", j->origin->key)) {
		/* Not UTF-8 (a host name can be anything): jansson's lossy way. */
		b->len = 0;
		buf_printf(b, "{\"event\":\"request\",\"ts\":\"%s\"", ts);
		json_t *pair = json_pack(
		        "{s:o, s:o}", "url",
		        sc_json_string_lossy(j->metrics_url, strlen(j->metrics_url)), "host",
		        sc_json_string_lossy(j->origin->key, strlen(j->origin->key)));
		char *text = json_dumps(pair, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(pair);
		if (!text)
			sc_die(SC_EXIT_FAILURE, "out of memory");
		b->p[b->len++] = ',';
		buf_add(b, text + 1, strlen(text) - 2);
		free(text);
	}
	if (oc->status)
		buf_printf(b, ",\"status\":%ld,\"latency_ms\":", oc->status);
	else
		buf_printf(b, ",\"status\":null,\"latency_ms\":");
	buf_real(b, round1(oc->latency_ms));
	buf_printf(b, ",\"bytes\":%zu,\"attempt\":%d,\"error\":", oc->bytes, j->attempts);
	if (oc->kind >= 0)
		buf_printf(b, "\"%s\"", sc_error_kind_name(oc->kind));
	else
		buf_add(b, "null", 4);
	buf_printf(b, ",\"wait_ms\":%lld,\"next\":\"%s\"", j->wait_ms, next);
	if (x) {
		static const struct {
			const char *name;
			CURLINFO info;
		} timings[] = {
			{ "dns_ms", CURLINFO_NAMELOOKUP_TIME_T },
			{ "connect_ms", CURLINFO_CONNECT_TIME_T },
			{ "tls_ms", CURLINFO_APPCONNECT_TIME_T },
			{ "ttfb_ms", CURLINFO_STARTTRANSFER_TIME_T },
			{ "redirect_ms", CURLINFO_REDIRECT_TIME_T },
			{ "total_ms", CURLINFO_TOTAL_TIME_T },
		};
		buf_add(b, ",\"timing\":{\"queue_ms\":", 22);
		buf_real(b, round1(fmax(0.0, x->started - j->queued_at)));
		for (size_t i = 0; i < sizeof(timings) / sizeof(*timings); i++) {
			buf_printf(b, ",\"%s\":", timings[i].name);
			buf_real(b, info_ms(x->easy, timings[i].info));
		}
		buf_add(b, "}", 1);
	}
	buf_add(b, "}", 1);
	if (e->metrics == stderr)
		progress_clear(e);
	if (sc_record_write_raw(e->metrics, b->p, b->len) != 0)
		clearerr(e->metrics); /* metrics are best effort; the records are what count */
	if (b->cap > BODY_KEEP_MAX) {
		free(b->p);
		b->p = NULL;
		b->cap = 0;
	}
}

static void count_attempt(struct sc_fetch_engine *e, struct job *j, const struct outcome *oc)
{
	struct hoststat *hs = hoststat_for(e, j->origin);
	uint64_t us = (uint64_t)(oc->latency_ms * 1000.0);

	e->requests++;
	e->bytes += oc->bytes;
	if (oc->status >= 100 && oc->status < 600)
		e->status_class[oc->status / 100]++;
	if (oc->kind >= 0)
		e->attempt_errors[oc->kind]++;
	sc_hist_add(&e->lat, us);
	hs->requests++;
	if (oc->kind >= 0)
		hs->errors++;
	sc_hist_add(&hs->lat, us);
}

static void history_add(struct job *j, const struct outcome *oc)
{
	json_t *h = json_object_get(j->rec, "history");

	if (!json_is_array(h)) {
		h = json_array();
		json_object_set_new(j->rec, "history", h);
	}
	json_array_append_new(
	        h,
	        json_pack("{s:i, s:o, s:o, s:I, s:f}", "attempt", j->attempts, "status",
	                  oc->status ? json_integer(oc->status) : json_null(), "error",
	                  oc->kind >= 0 ? json_string(sc_error_kind_name(oc->kind)) : json_null(),
	                  "wait_ms", (json_int_t)j->wait_ms, "latency_ms", round1(oc->latency_ms)));
}

/* Sets the fetch members on the record of a job whose last attempt it was. */
static void job_complete(struct sc_fetch_engine *e, struct job *j, struct transfer *x,
                         const struct outcome *oc, double now)
{
	json_t *r = j->rec;
	char ts[SC_RFC3339_LEN];
	char *final_url = NULL, *ctype = NULL;

	(void)e;
	if (x) {
		curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &final_url);
		curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ctype);
	}
	sc_rfc3339(sc_wall_ms(), ts);
	json_object_set_new(r, "final_url", json_string(final_url ? final_url : j->url));
	json_object_set_new(r, "status", oc->status ? json_integer(oc->status) : json_null());
	json_object_set_new(r, "ok", json_boolean(oc->kind < 0));
	json_object_set_new(r, "content_type", ctype ? json_string(ctype) : json_null());
	json_object_set_new(r, "bytes", json_integer((json_int_t)oc->bytes));
	json_object_set_new(r, "attempts", json_integer(j->attempts));
	json_object_set_new(r, "elapsed_ms", json_real(round1(now - j->first_start)));
	json_object_set_new(r, "fetched_at", json_string(ts));
	json_object_del(r, "body");
	json_object_del(r, "body_base64");
	if (x && oc->status && oc->kind != SC_ERR_TOO_LARGE) {
		/* Checked and encoded straight into the output line by job_encode
		 * (or made body_base64 there, if it is not UTF-8). */
		j->body = x->body.p ? x->body.p : "";
		j->body_len = x->body.len;
	} else {
		json_object_set_new(r, "body", json_null());
	}
	if (oc->kind >= 0) {
		sc_record_set_error(r, oc->kind, oc->message);
		j->failed = true;
	} else {
		json_object_del(r, "error");
		j->failed = false;
	}
	/* The history goes last, after the fetch members. */
	json_t *h = json_object_get(r, "history");
	if (h) {
		json_incref(h);
		json_object_del(r, "history");
		json_object_set_new(r, "history", h);
	}
}

typedef unsigned char v16u8 __attribute__((vector_size(16)));

/* Escapes s as the inside of a JSON string onto b, checking on the way that
 * it is UTF-8 without NUL (jansson's rule for strings).  The form is
 * jansson's, so every program writes the same bytes (sc-record(5)): \" \\
 * \b \f \n \r \t, \u00XX with upper-case hex for the other controls, and
 * '/' and DEL as they are.  Returns false, with
 * b->len where it was, if it is not.  Bodies are most of the output, so
 * this is one pass that moves sixteen plain bytes at a time and only stops
 * for a quote, a backslash, a control character or a non-ASCII byte. */
static bool json_escape_utf8_into(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	size_t start = b->len, i = 0;

	buf_reserve(b, b->len + n + 16);
	while (i < n) {
		/* Plain runs: no byte < 0x20, '"', '\\' or >= 0x80, sixteen bytes
		 * at a time (GCC vector extensions: SSE2 on x86-64, NEON on arm64),
		 * with the output position kept in locals rather than in *b. */
		char *out = b->p + b->len;
		size_t at = i;
		while (at + 16 <= n) {
			v16u8 v;
			memcpy(&v, u + at, 16);
			v16u8 stop = (v16u8)((v16u8)(v - 0x20) >= 0x60) | (v16u8)(v == '"') |
			             (v16u8)(v == '\\');
			memcpy(out, &v, 16); /* room: n - at >= 16 bytes left */
			uint64_t lo, hi;
			memcpy(&lo, &stop, 8);
			memcpy(&hi, (const char *)&stop + 8, 8);
			if (!(lo | hi)) {
				out += 16;
				at += 16;
				continue;
			}
			size_t k = lo ? (size_t)__builtin_ctzll(lo) >> 3
			              : 8 + ((size_t)__builtin_ctzll(hi) >> 3);
			at += k;
			break;
		}
		b->len += at - i;
		i = at;
		if (i >= n)
			break;
		/* One character that is not plain ASCII (or the tail). */
		unsigned char c = u[i];
		if (b->cap - b->len < (n - i) + 6)
			buf_reserve(b, b->len + (n - i) + 6 + n / 8);
		char *o = b->p + b->len;
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*o = (char)c;
			b->len++;
			i++;
			continue;
		}
		if (c < 0x80) {
			if (c == 0)
				goto invalid;
			o[0] = '\\';
			switch (c) {
			case '"':
				o[1] = '"';
				b->len += 2;
				break;
			case '\\':
				o[1] = '\\';
				b->len += 2;
				break;
			case '\n':
				o[1] = 'n';
				b->len += 2;
				break;
			case '\r':
				o[1] = 'r';
				b->len += 2;
				break;
			case '\t':
				o[1] = 't';
				b->len += 2;
				break;
			case '\b':
				o[1] = 'b';
				b->len += 2;
				break;
			case '\f':
				o[1] = 'f';
				b->len += 2;
				break;
			default:
				o[1] = 'u', o[2] = '0', o[3] = '0', o[4] = hex[c >> 4],
				o[5] = hex[c & 15];
				b->len += 6;
			}
			i++;
			continue;
		}
		size_t need = sc_utf8_seq_len(u + i, n - i);
		if (need == 0)
			goto invalid;
		memcpy(o, u + i, need);
		b->len += need;
		i += need;
	}
	return true;
invalid:
	b->len = start;
	return false;
}

/* Moves rec's member key (if any) to the end, keeping its value. */
static void move_last(json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);

	if (v) {
		json_incref(v);
		json_object_del(rec, key);
		json_object_set_new(rec, key, v);
	}
}

/* The record of a job with a body as its output line in e->line (newline
 * included): the record's members, then the body spliced in last.  A body
 * that is not UTF-8 becomes body_base64 on the record instead (before
 * "error" and "history"), and the record is written the ordinary way. */
static void job_encode(struct sc_fetch_engine *e, struct job *j)
{
	char *text;
	size_t len;

	if (!j->body)
		return;
	json_object_del(j->rec, "body");
	text = json_dumps(j->rec, SC_JSON_FLAGS);
	if (!text)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	len = strlen(text);
	struct buf *b = &e->line;
	if (b->cap > BODY_KEEP_MAX && j->body_len + len < BODY_KEEP_MAX / 2) {
		free(b->p); /* a big body's buffer is not kept for small ones */
		b->p = NULL;
		b->cap = 0;
	}
	b->len = 0;
	buf_reserve(b, len + j->body_len + 16);
	memcpy(b->p, text, len - 1); /* without its closing brace */
	b->len = len - 1;
	free(text);
	static const char key[] = ",\"body\":\"";
	const char *k = len > 2 ? key : key + 1; /* no comma after "{" */
	memcpy(b->p + b->len, k, strlen(k));
	b->len += strlen(k);
	if (!json_escape_utf8_into(b, j->body, j->body_len)) {
		json_object_set_new(j->rec, "body_base64",
		                    base64((const unsigned char *)j->body, j->body_len));
		move_last(j->rec, "error");
		move_last(j->rec, "history");
		j->body = NULL;
		return;
	}
	buf_reserve(b, b->len + 3);
	b->p[b->len++] = '"';
	b->p[b->len++] = '}';
	b->p[b->len++] = '\n';
	j->body = NULL;
	j->in_scratch = true;
}

static void job_done(struct sc_fetch_engine *e, struct job *j)
{
	struct origin *o = j->origin;

	job_encode(e, j);
	origin_unref(e, o);
	job_finish(e, j);
}

/* One attempt ended (x is NULL for a job cancelled while it waited). */
static void attempt_ended(struct sc_fetch_engine *e, struct job *j, struct transfer *x,
                          struct outcome *oc)
{
	double now = sc_now_ms();
	struct sc_retry_decision d = { .verdict = SC_RETRY_DONE };

	count_attempt(e, j, oc);
	history_add(j, oc);
	if (oc->kind != SC_ERR_CANCELLED && !e->stopping)
		d = sc_retry_decide(e->retry, j->attempts, j->max_attempts, oc->status, oc->kind,
		                    x ? x->retry_after : NULL, now, sc_wall_ms());
	write_request_metrics(e, j, x, oc, sc_retry_verdict_name(d.verdict));
	if (d.verdict == SC_RETRY_AGAIN) {
		j->wait_ms = d.delay_ms;
		j->ready_at = now + (double)d.delay_ms;
		if (d.pause_origin && j->ready_at > j->origin->paused_until)
			j->origin->paused_until = j->ready_at;
		heap_push(e, j);
		return;
	}
	job_complete(e, j, x, oc, now);
	if (d.verdict == SC_RETRY_RATE_LIMITED) {
		char msg[160];
		snprintf(msg, sizeof(msg),
		         "Retry-After of %lld s is beyond --retry-max-wait (%ld s)",
		         (d.delay_ms + 999) / 1000, e->o->retry.max_wait_ms / 1000);
		sc_record_set_error(j->rec, SC_ERR_RATE_LIMITED, msg);
		j->failed = true;
	}
	job_done(e, j);
}

static void transfer_done(struct sc_fetch_engine *e, struct transfer *x, CURLcode rc)
{
	struct job *j = x->job;
	struct outcome oc = { 0 };
	curl_off_t total_us = 0;

	e->inflight--;
	j->origin->inflight--;
	ring_update(e, j->origin);
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &oc.status);
	curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &total_us);
	oc.latency_ms = total_us > 0 ? (double)total_us / 1000.0 : sc_now_ms() - x->started;
	oc.bytes = x->body.len;
	oc.kind = -1;
	if (rc != CURLE_OK || x->too_large) {
		oc.kind = kind_of(rc, x->too_large);
		if (oc.kind == SC_ERR_TOO_LARGE)
			snprintf(oc.message, sizeof(oc.message),
			         "body larger than --max-bytes (%lld)", e->o->max_bytes);
		else
			snprintf(oc.message, sizeof(oc.message), "%s",
			         x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
		if (oc.kind == SC_ERR_TOO_LARGE)
			oc.bytes = 0;
	} else if (oc.status < 200 || oc.status > 299) {
		oc.kind = SC_ERR_HTTP;
		snprintf(oc.message, sizeof(oc.message), "HTTP %ld", oc.status);
	}
	attempt_ended(e, j, x, &oc);
	xfer_put(e, x);
}

static void cancel_transfer(struct sc_fetch_engine *e, struct transfer *x)
{
	struct job *j = x->job;
	struct outcome oc = { 0 };

	e->inflight--;
	j->origin->inflight--;
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &oc.status);
	oc.latency_ms = sc_now_ms() - x->started;
	oc.bytes = x->body.len;
	oc.kind = SC_ERR_CANCELLED;
	snprintf(oc.message, sizeof(oc.message), "cancelled by shutdown after --grace");
	attempt_ended(e, j, x, &oc);
	xfer_put(e, x);
}

/* A job that never started its next attempt (queued, or waiting to retry)
 * ends as cancelled; an earlier attempt's outcome stays in its history. */
static void cancel_waiting(struct sc_fetch_engine *e, struct job *j)
{
	double now = sc_now_ms();

	if (j->attempts == 0)
		j->first_start = now;
	job_complete(e, j, NULL, &(struct outcome){ .kind = SC_ERR_CANCELLED }, now);
	sc_record_set_error(j->rec, SC_ERR_CANCELLED, "cancelled by shutdown before it started");
	j->failed = true;
	job_done(e, j);
}

static void start_stopping(struct sc_fetch_engine *e)
{
	e->stopping = true;
	e->grace_deadline = sc_now_ms() + e->o->grace_s * 1000.0;
	/* Nothing new starts: queued and waiting jobs end now, as cancelled. */
	while (e->ring) {
		struct origin *o = e->ring;
		while (o->queued > 0)
			cancel_waiting(e, origin_pop(e, o));
		ring_remove(e, o);
	}
	while (e->nheap > 0)
		cancel_waiting(e, heap_pop(e));
	/* Jobs queued on origins that were not in the ring (at their cap). */
	for (size_t i = 0; i < e->hsize; i++)
		for (struct origin *o = e->htab[i]; o; o = o->hnext)
			while (o->queued > 0)
				cancel_waiting(e, origin_pop(e, o));
}

static void abort_inflight(struct sc_fetch_engine *e)
{
	while (e->active)
		cancel_transfer(e, e->active);
}

/* ---- the engine ---- */

/* curl's socket callback: mirrors what curl wants of a socket into epfd.
 * socketp is NULL until the socket is in the set (curl_multi_assign). */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct sc_fetch_engine *e = userp;
	struct epoll_event ev = { .data.fd = s };

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (socketp) {
			epoll_ctl(e->epfd, EPOLL_CTL_DEL, s, NULL); /* gone already if closed */
			curl_multi_assign(e->multi, s, NULL);
		}
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	int op = socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	if (epoll_ctl(e->epfd, op, s, &ev) != 0) {
		/* A descriptor number curl closed and reused, or one closed
		 * under us: the other operation fits. */
		op = op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
		if (epoll_ctl(e->epfd, op, s, &ev) != 0)
			return -1;
	}
	if (!socketp)
		curl_multi_assign(e->multi, s, e);
	return 0;
}

/* curl's timer callback: the loop calls curl back when the time comes. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct sc_fetch_engine *e = userp;

	(void)multi;
	/* 0 is "at once": due whatever clock reading the loop compares it to. */
	e->curl_timer_at = timeout_ms < 0    ? INFINITY
	                   : timeout_ms == 0 ? 0
	                                     : sc_now_ms() + (double)timeout_ms;
	return 0;
}

/* Adds or removes the input descriptor, so that epoll wakes for input only
 * while the engine wants more.  A regular file cannot be polled, and needs
 * not be: its reads never wait. */
static void poll_input(struct sc_fetch_engine *e, int fd, bool want)
{
	if (want == e->input_polled)
		return;
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	if (epoll_ctl(e->epfd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev) == 0 || !want)
		e->input_polled = want;
}

struct sc_fetch_engine *sc_fetch_engine_new(const struct sc_fetch_options *o, FILE *out,
                                            char err[256])
{
	struct sc_fetch_engine *e;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, 256, "cannot initialise libcurl");
		return NULL;
	}
	e = sc_calloc(1, sizeof(*e));
	e->o = o;
	e->out = out;
	e->metrics = stderr;
	if (o->metrics_path) {
		e->metrics = fopen(o->metrics_path, "a");
		if (!e->metrics) {
			snprintf(err, 256, "--metrics: %s: %s", o->metrics_path, strerror(errno));
			free(e);
			return NULL;
		}
		e->own_metrics = true;
	}
	e->multi = curl_multi_init();
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->epfd < 0)
		sc_die(SC_EXIT_FAILURE, "epoll_create1:");
	e->curl_timer_at = INFINITY;
	e->urlh = curl_url();
	e->retry = sc_retry_state_new(&o->retry);
	if (!e->multi || !e->urlh || !e->retry)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	/* The cap holds for sockets too, and the keep-alive pool matches it. */
	curl_multi_setopt(e->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, o->concurrency);
	if (o->per_host > 0)
		curl_multi_setopt(e->multi, CURLMOPT_MAX_HOST_CONNECTIONS, o->per_host);
	curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, o->concurrency);
	curl_multi_setopt(e->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	/* Event-driven: curl says which sockets to watch and when to call it;
	 * one epoll_wait then costs the ready sockets, not all of them. */
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
	if (o->keep_order) {
		e->wsize = ORDER_WINDOW(o->concurrency);
		e->window = sc_calloc(e->wsize, sizeof(*e->window));
	}
	e->tokens = 1;
	e->total_lines = -1;
	if (wake_pipe[0] < 0 && pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
		sc_die(SC_EXIT_FAILURE, "pipe:");
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = wake_pipe[0] };
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, wake_pipe[0], &ev) != 0)
		sc_die(SC_EXIT_FAILURE, "epoll_ctl:");
	return e;
}

void sc_fetch_engine_free(struct sc_fetch_engine *e)
{
	if (!e)
		return;
	while (e->free_xfers) {
		struct transfer *x = e->free_xfers;
		e->free_xfers = x->next_free;
		curl_easy_cleanup(x->easy);
		free(x->body.p);
		free(x->retry_after);
		free(x);
	}
	for (size_t i = 0; i < e->hsize; i++) {
		struct origin *o = e->htab[i], *next;
		for (; o; o = next) {
			next = o->hnext;
			origin_free(e, o);
		}
	}
	for (size_t i = 0; i < e->nhosts; i++) {
		free(e->hosts[i]->key);
		free(e->hosts[i]);
	}
	free(e->htab);
	free(e->heap);
	free(e->line.p);
	free(e->mline.p);
	free(e->window);
	curl_multi_cleanup(e->multi);
	close(e->epfd);
	curl_url_cleanup(e->urlh);
	sc_retry_state_free(e->retry);
	/* Metrics lines are flushed as they are written and their errors
	 * reported then; a failure here can only repeat one of those. */
	if (e->own_metrics)
		(void)fclose(e->metrics);
	free(e);
	curl_global_cleanup();
}

static bool want_input(struct sc_fetch_engine *e, bool host_blocked)
{
	size_t c = (size_t)e->o->concurrency;

	if (e->input_eof || e->input_error || e->out_error)
		return false;
	if (e->stopping && !e->o->read_input_in_drain)
		return false;
	if (e->o->keep_order && e->next_seq - e->next_out >= e->wsize)
		return false;
	if (e->queued < READAHEAD_BASE(c))
		return true;
	return host_blocked && e->queued < READAHEAD_MAX(c);
}

/* Reads and submits lines while the engine wants more work and the input
 * has some ready.  Returns after admitting what the new lines allow. */
static void read_input(struct sc_fetch_engine *e, double now)
{
	bool host_blocked;
	struct sc_line line;

	admit(e, now, &host_blocked);
	e->input_wait = false;
	while (want_input(e, host_blocked)) {
		int rc = sc_lines_next(e->in, &line);
		if (rc == 0) {
			e->input_eof = true;
			break;
		}
		if (rc < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				e->input_wait = true;
				break;
			}
			sc_warn("%s: read error:", sc_lines_name(e->in));
			e->input_error = true;
			break;
		}
		if (e->on_line(e, e->in, &line, e->line_ctx) != 0) {
			e->input_error = true;
			break;
		}
		admit(e, now, &host_blocked);
	}
}

static long long count_lines(int fd)
{
	struct stat st;
	char buf[1 << 16];
	long long lines = 0;
	off_t off = 0;
	ssize_t n;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	off = lseek(fd, 0, SEEK_CUR);
	if (off < 0)
		return -1;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))); p++)
			lines++;
		off += n;
	}
	return lines;
}

static void process_messages(struct sc_fetch_engine *e)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(e->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct transfer *x = NULL;
		CURL *easy = msg->easy_handle;
		CURLcode rc = msg->data.result;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
		transfer_done(e, x, rc);
	}
}

int sc_fetch_run(struct sc_fetch_engine *e, struct sc_lines *in, sc_fetch_line_fn on_line,
                 void *ctx)
{
	int fd = sc_lines_fd(in);
	bool aborted = false;

	e->in = in;
	e->on_line = on_line ? on_line : sc_fetch_submit_line;
	e->line_ctx = ctx;
	e->start_ms = e->last_stats = sc_now_ms();
	e->tokens_at = e->start_ms;
	e->progress = e->o->progress && isatty(STDERR_FILENO);
	if (e->progress)
		e->total_lines = count_lines(fd);
	e->in_flags = fcntl(fd, F_GETFL);
	if (e->in_flags >= 0 && !(e->in_flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, e->in_flags | O_NONBLOCK);

	for (;;) {
		double now = sc_now_ms();
		if ((sc_stop_signal || e->out_error || e->input_error) && !e->stopping) {
			start_stopping(e);
			if (e->out_error || e->input_error)
				e->grace_deadline = now;
		}
		if (e->stopping && !aborted && now >= e->grace_deadline) {
			aborted = true;
			abort_inflight(e);
		}
		/* Retries whose wait is over go to the front of their queue. */
		while (e->nheap > 0 && e->heap[0]->ready_at <= now) {
			struct job *j = heap_pop(e);
			j->queued_at = now;
			origin_push(e, j->origin, j, true);
		}
		read_input(e, now);
		bool host_blocked;
		double wake = admit(e, now, &host_blocked);
		bool input_done = e->input_eof || e->input_error || e->out_error ||
		                  (e->stopping && !e->o->read_input_in_drain);
		if (input_done && e->inflight == 0 && e->queued == 0 && e->nheap == 0)
			break;

		/* Sleep until a socket, the input, a signal or a clock. */
		double timeout = 1000;
		if (e->nheap > 0)
			timeout = fmin(timeout, e->heap[0]->ready_at - now);
		if (wake < INFINITY)
			timeout = fmin(timeout, wake - now);
		if (e->stopping && !aborted)
			timeout = fmin(timeout, e->grace_deadline - now);
		if (e->o->stats_every_s > 0)
			timeout = fmin(timeout, e->last_stats + e->o->stats_every_s * 1000 - now);
		if (e->progress)
			timeout = fmin(timeout, e->last_progress + 250 - now);
		/* read_input may have started transfers since now was read. */
		timeout = fmin(timeout, e->curl_timer_at - sc_now_ms());
		if (timeout < 0)
			timeout = 0;
		poll_input(e, fd, e->input_wait && want_input(e, host_blocked));
		struct epoll_event events[64];
		int nev = epoll_wait(e->epfd, events, 64, (int)ceil(timeout));
		int running;
		for (int i = 0; i < nev; i++) {
			int efd = events[i].data.fd;
			if (efd == wake_pipe[0]) {
				char drain[64];
				while (read(wake_pipe[0], drain, sizeof(drain)) > 0)
					;
			} else if (efd != fd || !e->input_polled) {
				uint32_t ev = events[i].events;
				int flags = (ev & EPOLLIN ? CURL_CSELECT_IN : 0) |
				            (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				            (ev & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
				curl_multi_socket_action(e->multi, efd, flags, &running);
			}
			/* The input: read at the top of the loop. */
		}
		if (sc_now_ms() >= e->curl_timer_at) {
			e->curl_timer_at = INFINITY;
			curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
		}
		process_messages(e);

		now = sc_now_ms();
		if (e->o->stats_every_s > 0 && now - e->last_stats >= e->o->stats_every_s * 1000) {
			e->last_stats = now;
			write_summary(e, false);
		}
		if (e->progress && now - e->last_progress >= 250)
			progress_draw(e, now);
	}
	if (e->progress)
		progress_clear(e);
	write_summary(e, true);
	poll_input(e, fd, false);
	if (e->in_flags >= 0 && !(e->in_flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, e->in_flags);
	if (e->out_error || e->input_error)
		return SC_EXIT_FAILURE;
	return e->records_failed ? SC_EXIT_PARTIAL : SC_EXIT_OK;
}
