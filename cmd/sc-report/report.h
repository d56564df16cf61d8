/* sc-report: the figures of a crawl from sc-fetch's metrics lines.
 *
 * The parts: scan (one metrics line into a struct mline, no allocation),
 * read (inputs, lines, --every's tailing), agg (the figures: totals, hosts,
 * time bins, rounds), text, json and html (the three outputs), chart (the
 * gnuplot child that draws the HTML's SVG), fail (--fail-if), options
 * (the command line).  Ownership: struct report owns everything it points
 * to; report_free releases it. */
#ifndef SC_REPORT_H
#define SC_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/record.h"

/* ---- one metrics line (scan.c) ---- */

struct sv {
	const char *p; /* borrowed: into the line or the scanner's scratch */
	size_t n;
};

/* EV_RECORD: not a metrics line but one of sc-fetch's records
 * (sc-record(5)), read for the URLs that robots.txt refused, which have
 * no metrics line. */
enum mline_event {
	EV_NONE,
	EV_REQUEST,
	EV_SUMMARY,
	EV_THROTTLE,
	EV_RECORD,
	EV_OTHER
};

/* The timing members, in the order of sc-fetch's line. */
enum timing {
	T_QUEUE,
	T_DNS,
	T_CONNECT,
	T_TLS,
	T_TTFB,
	T_TOTAL,
	T_COUNT
};

/* Error kinds: sc-record(5)'s, and one more for a name it does not know. */
#define KIND_OTHER SC_ERR_KIND_COUNT
#define KIND_COUNT (SC_ERR_KIND_COUNT + 1)

enum throttle_reason {
	TR_429,
	TR_503,
	TR_TIMEOUT,
	TR_LATENCY,
	TR_RETRY_AFTER,
	TR_RECOVER,
	TR_OTHER,
	TR_COUNT
};

struct mline {
	enum mline_event event;
	bool has_ts;
	double ts_ms; /* ms since the epoch */
	struct sv host;
	struct sv url;
	bool has_ok; /* an "ok" member: a record */
	int status;  /* 0: null or absent */
	double latency_ms, bytes, attempt;
	int kind; /* -1: no error */
	struct sv next;
	bool robots;
	bool has_timing;
	double timing[T_COUNT];
	/* throttle events */
	int reason; /* enum throttle_reason */
	bool has_limit;
	double limit_old, limit_new;
	/* summary lines */
	bool final;
	double robots_refused;
};

struct scanner {
	char *scratch; /* owned: unescaped strings of the current line */
	size_t cap;
};

/* Fills *m from text[0..len) (a JSON object); false, with why, when the
 * line is not one. */
bool scan_line(struct scanner *s, const char *text, size_t len, struct mline *m, char *why,
               size_t whylen);
void scanner_free(struct scanner *s);
const char *throttle_reason_name(int reason);
const char *kind_name(int kind);

/* Milliseconds since the epoch of "YYYY-MM-DDTHH:MM:SS[.fff]Z"; false if
 * it is not that. */
bool parse_rfc3339_ms(const char *p, size_t n, double *ms);

/* ---- the figures (agg.c) ---- */

struct fvec {
	float *v; /* owned */
	size_t n, cap;
};

struct moments {
	uint64_t n;
	double sum, min, max;
};

struct host {
	char *key; /* owned */
	size_t keylen;
	uint64_t requests, bytes, ok, errors, robots_requests, robots_refused;
	uint64_t status429, cooldowns, not_modified, throttles;
	uint64_t kinds[KIND_COUNT];
	uint64_t reasons[TR_COUNT];
	struct fvec lat;
	float p50, p95;    /* after agg_finish */
	size_t round_slot; /* its place in the hosts of the round last seen */
};

enum status_class {
	SC_NONE,
	SC_1XX,
	SC_2XX,
	SC_3XX,
	SC_4XX,
	SC_5XX,
	SC_CLASSES
};

/* A time bin of the timeline (its start is base + i * width seconds). */
struct bin {
	uint32_t requests, ok, errors, throttles;
	uint32_t status[SC_CLASSES];
	uint64_t bytes;
	float ok_sum, ok_max, err_sum, err_max;
};

#define BINS_MAX 2048

struct timeline {
	int64_t base;  /* seconds since the epoch of bin 0 */
	int64_t width; /* seconds per bin: 1, doubled whenever the span passes BINS_MAX */
	size_t n;
	struct bin *bins; /* owned: BINS_MAX of them */
};

/* A host's last request in a round. */
struct round_host {
	struct host *host; /* borrowed from the report */
	double last_ms;
};

struct round {
	long number;
	double first_ms, last_ms;
	uint64_t requests;
	struct round_host *hosts; /* owned, nhosts of them; sorted, last first, by agg_finish */
	size_t nhosts, hosts_cap;
};

/* The hosts of a round that finished last, as the outputs name them. */
#define ROUND_LAST_HOSTS 3

/* How long round rd went on after every host but the last was done (its
 * last request), in ms: what the rest of the crawl waited on that host.
 * 0 with one host.  After agg_finish. */
double round_waited_ms(const struct round *rd);

/* The phases of a request, from libcurl's cumulative timers. */
enum phase {
	PH_DNS,
	PH_CONNECT,
	PH_TLS,
	PH_FIRST_BYTE,
	PH_TRANSFER,
	PH_COUNT
};

struct totals {
	uint64_t lines, malformed, text_lines, other_events, summaries, records;
	uint64_t requests, bytes, ok, errors, retries, robots_requests;
	/* URLs robots.txt refused: as the summary lines count them, and as
	 * counted from records (robots_refused() says which counts) */
	uint64_t robots_refused_summaries, robots_refused_records;
	uint64_t status429, cooldowns, not_modified, throttles;
	uint64_t kinds[KIND_COUNT];
	uint64_t reasons[TR_COUNT];
	uint64_t status[600];        /* by code; [0] is no status; robots.txt's apart */
	uint64_t robots_status[600]; /* robots.txt's: a 404 there is no error */
	double first_ms, last_ms;    /* of request lines; first_ms 0 when none */
	struct moments latency, queue, phase[PH_COUNT];
	struct fvec lat; /* every request's latency, sorted by agg_finish */
};

struct report {
	struct totals t;
	struct host **hosts; /* owned, nhosts of them (also the hash's entries) */
	size_t nhosts, hcap;
	struct host **htab; /* open addressing, hcap slots */
	struct timeline tl;
	struct round *rounds; /* owned */
	size_t nrounds;
	bool finished; /* agg_finish ran since the last line */
};

void agg_init(struct report *r);
/* Adds one scanned line; round is the input's round-N, or -1. */
void agg_line(struct report *r, const struct mline *m, long round);
/* Sorts what percentiles need; call before reading figures. */
void agg_finish(struct report *r);
void report_free(struct report *r);
/* Nearest rank: the smallest value with at least p% of the values at or
 * below it; 0 for no values.  v sorted. */
float percentile(const struct fvec *v, double p);
/* Sorts non-negative floats ascending. */
void sort_floats(float *v, size_t n);
double duration_s(const struct report *r);
uint64_t robots_refused(const struct report *r);
double phase_of(const double timing[T_COUNT], enum phase ph);
const char *phase_name(enum phase ph);

/* ---- options (options.c) ---- */

enum host_column {
	COL_HOST,
	COL_REQUESTS,
	COL_BYTES,
	COL_OK,
	COL_ERRORS,
	COL_ROBOTS,
	COL_429,
	COL_COOLDOWNS,
	COL_NOT_MODIFIED,
	COL_THROTTLES,
	COL_P50,
	COL_P95,
	COL_COUNT
};
const char *column_name(enum host_column c);

#define HIST_MAX 64
#define FAIL_MAX 64

struct threshold {
	const char *text; /* borrowed from argv */
	char host[256];   /* empty: the whole run */
	int metric;       /* fail.c's table */
	int op;           /* fail.c's operators */
	double value;     /* ms for latencies, a fraction for shares, else a count */
	bool share;       /* given in % */
};

struct options {
	bool json;
	const char *html; /* borrowed; NULL: none */
	enum host_column sort;
	long host_rows;        /* text and HTML host tables; 0: all */
	double hist[HIST_MAX]; /* bucket bounds, ms, increasing */
	size_t nhist;
	struct threshold fail[FAIL_MAX];
	size_t nfail;
	double every_s; /* 0: no --every */
	char **inputs;  /* borrowed from argv; none: standard input */
	int ninputs;
};

void parse_options(int argc, char **argv, struct options *o);
/* A duration with a unit (us, ms, s, m; bare: ms) into ms; false if it is
 * not one. */
bool parse_duration_ms(const char *s, double *ms);

/* ---- outputs ---- */

/* The hosts in the order of --sort (an array the caller frees). */
struct host **hosts_sorted(const struct report *r, enum host_column col);
/* Latency counts per --hist bucket: under the first bound, then
 * [b0, b1), ..., [bn, inf): nhist + 1 of them. */
void hist_buckets(const struct report *r, const struct options *o, uint64_t *counts);
void text_write(FILE *out, const struct report *r, const struct options *o);
void json_write(FILE *out, const struct report *r, const struct options *o);
/* Returns 0, or -1 with a message given on stderr. */
int html_write(const char *path, const struct report *r, const struct options *o);

/* A chart's SVG drawn by gnuplot (chart.c). */
struct charts {
	char *svg[8];  /* owned, NULL where missing */
	char why[256]; /* when missing: why */
};
enum chart_id {
	CH_LATENCY,
	CH_RATE,
	CH_BYTES,
	CH_STATUS,
	CH_COUNT
};
const char *chart_title(enum chart_id id);
void charts_draw(const struct report *r, struct charts *c);
void charts_free(struct charts *c);

/* ---- thresholds (fail.c) ---- */

/* Parses one --fail-if; false with why. */
bool threshold_parse(const char *text, struct threshold *t, char *why, size_t whylen);
/* The measured value, in the threshold's unit; false when it cannot be
 * measured (no such host). */
bool threshold_measure(const struct report *r, const struct threshold *t, double *value);
bool threshold_holds(const struct threshold *t, double value);
/* Evaluates them all, naming the broken ones on stderr; the number broken. */
size_t thresholds_check(const struct report *r, const struct options *o);

/* ---- reading (read.c) ---- */

/* Reads every input to its end (and with --every, on, writing a summary
 * each period); returns 0, or -1 when an input could not be opened or
 * read (said on stderr). */
int read_inputs(struct report *r, const struct options *o);

#endif
