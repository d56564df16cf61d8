/* fetch_output: records out.  Owns the jobs' life from submission to
 * the write: their input positions and the --keep-order window, the fetch
 * members set on a record when its last attempt ends (fetch_job_complete),
 * the body spliced into the output line without a copy through jansson
 * (job_encode; body_base64 when it is not UTF-8), and the write itself,
 * whole and flushed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/signals.h"
#include "engine/fetch_engine.h"
#include "kit/cli.h"
#include "record/jsonstr.h"
#include "web/robots.h"
#include "web/url.h"

/* The --keep-order window: records read but not yet written. */
#define ORDER_WINDOW(c) ((size_t)(c)*4 + 64)

void fetch_output_init(struct fetch_engine *e, FILE *out)
{
	e->output.out = out;
	if (e->opts->keep_order) {
		e->output.wsize = ORDER_WINDOW(e->opts->concurrency);
		e->output.window = sc_calloc(e->output.wsize, sizeof(*e->output.window));
	}
}

void fetch_output_start(struct fetch_engine *e, size_t line_max)
{
	sc_buf_init(&e->output.line, line_max);
}

void fetch_output_free(struct fetch_engine *e)
{
	sc_buf_free(&e->output.line);
	free(e->output.window);
}

static void job_free(struct job *job)
{
	json_decref(job->rec);
	free(job->raw);
	free(job->url);
	free(job->metrics_url);
	free(job->req_method);
	free(job->req_body);
	json_decref(job->form_fields);
	curl_slist_free_all(job->req_headers);
	free(job);
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

/* A record to the hook (fetch_set_record_hook) instead of the stream. */
static void hand_job(struct fetch_engine *e, const struct job *job)
{
	if (job->in_scratch) {
		/* Its newline made a NUL for the call, as the other lines end. */
		char *end = e->output.line.p + e->output.line.len - 1;
		*end = '\0';
		e->output.hook(e->output.hook_ctx, job->user, e->output.line.p,
		               e->output.line.len - 1, job->failed);
		*end = '\n';
	} else if (job->raw) {
		e->output.hook(e->output.hook_ctx, job->user, job->raw, job->raw_len, job->failed);
	} else {
		char *text = json_dumps(job->rec, SC_JSON_FLAGS);
		if (!text)
			sc_die(SC_EXIT_FAILURE, "out of memory");
		e->output.hook(e->output.hook_ctx, job->user, text, strlen(text), job->failed);
		free(text);
	}
}

static void write_job(struct fetch_engine *e, struct job *job)
{
	int rc;

	if (e->output.error)
		return;
	if (e->output.hook) {
		hand_job(e, job);
		return;
	}
	if (job->in_scratch)
		rc = write_direct(e->output.out, e->output.line.p, e->output.line.len);
	else if (job->raw)
		rc = sc_record_write_raw(e->output.out, job->raw, job->raw_len);
	else
		rc = sc_record_write(e->output.out, job->rec);
	if (rc != 0) {
		e->output.error_errno = errno;
		snprintf(e->output.message, sizeof(e->output.message),
		         "error writing standard output: %s", strerror(e->output.error_errno));
		e->output.error = true;
	}
}

/* A job is finished: count it, and write it now or when its turn comes. */
void fetch_job_finish(struct fetch_engine *e, struct job *job)
{
	job->done = true;
	e->output.records++;
	if (job->failed) {
		e->output.records_failed++;
		const char *kind = json_string_value(
		        json_object_get(json_object_get(job->rec, "error"), "kind"));
		int k = kind ? sc_error_kind_from_name(kind) : -1;
		if (job->rec)
			e->output.record_errors[k < 0 ? SC_ERR_INTERNAL : k]++;
	}
	if (!e->opts->keep_order) {
		write_job(e, job);
		job_free(job);
		e->output.next_out++;
		return;
	}
	if (job->in_scratch && job->seq != e->output.next_out) {
		/* It waits for its turn: its line cannot stay in the scratch. */
		job->raw_len = e->output.line.len - 1;
		job->raw = sc_malloc(e->output.line.len);
		memcpy(job->raw, e->output.line.p, job->raw_len);
		job->raw[job->raw_len] = '\0';
		job->in_scratch = false;
	}
	while ((job = e->output.window[e->output.next_out % e->output.wsize]) && job->done) {
		e->output.window[e->output.next_out % e->output.wsize] = NULL;
		write_job(e, job);
		job_free(job);
		e->output.next_out++;
	}
}

struct job *fetch_job_new(struct fetch_engine *e)
{
	struct job *job = sc_calloc(1, sizeof(*job));

	job->seq = e->output.next_seq++;
	job->user = e->output.next_user;
	if (e->opts->keep_order)
		e->output.window[job->seq % e->output.wsize] = job;
	return job;
}

void fetch_submit_final(struct fetch_engine *e, json_t *rec, bool failed)
{
	struct job *job = fetch_job_new(e);

	job->rec = rec;
	job->failed = failed;
	fetch_job_finish(e, job);
}

void fetch_submit_raw(struct fetch_engine *e, const char *text, size_t len, bool failed)
{
	struct job *job = fetch_job_new(e);

	job->raw = sc_malloc(len + 1);
	memcpy(job->raw, text, len);
	job->raw[len] = '\0';
	job->raw_len = len;
	job->failed = failed;
	fetch_job_finish(e, job);
}

void fetch_history_add(struct job *job, const struct transfer *xfer, const struct outcome *oc)
{
	json_t *h = json_object_get(job->rec, "history");

	if (!json_is_array(h)) {
		h = json_array();
		json_object_set_new(job->rec, "history", h);
	}
	/* wait_ms, queue_ms and latency_ms: where the attempt's time went (a
	 * retry's backoff, then its origin's queue, then the wire). */
	json_array_append_new(
	        h,
	        json_pack("{s:i, s:o, s:o, s:I, s:f, s:f}", "attempt", job->attempts, "status",
	                  oc->status ? json_integer(oc->status) : json_null(), "error",
	                  oc->kind >= 0 ? json_string(sc_error_kind_name(oc->kind)) : json_null(),
	                  "wait_ms", (json_int_t)job->wait_ms, "queue_ms",
	                  fetch_queue_ms(job, xfer), "latency_ms", round1(oc->latency_ms)));
}

static void move_last(json_t *rec, const char *key);

/* Sets the fetch members on the record of a job whose last attempt it was. */
void fetch_job_complete(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc, double now)
{
	json_t *r = job->rec;
	char ts[SC_RFC3339_LEN];
	char *final_url = NULL, *ctype = NULL;

	if (xfer) {
		curl_easy_getinfo(xfer->easy, CURLINFO_EFFECTIVE_URL, &final_url);
		curl_easy_getinfo(xfer->easy, CURLINFO_CONTENT_TYPE, &ctype);
	}
	/* With --warc, the WARC-Date of the response it holds, to the ms:
	 * a record read back from the archive has the same fetched_at. */
	sc_rfc3339(job->captured_ms ? job->captured_ms : sc_wall_ms(), ts);
	/* The user's url stays as given (sc-retry needs it); the URL the
	 * response came from is shown without userinfo, as metrics are. */
	if (final_url) {
		char *shown = sc_url_without_userinfo(final_url);
		json_object_set_new(r, "final_url", json_string(shown));
		free(shown);
	} else {
		json_object_set_new(r, "final_url", json_string(job->metrics_url));
	}
	json_object_set_new(r, "status", oc->status ? json_integer(oc->status) : json_null());
	json_object_set_new(r, "ok", json_boolean(oc->kind < 0));
	json_object_set_new(r, "content_type", ctype ? json_string(ctype) : json_null());
	json_object_set_new(r, "bytes", json_integer((json_int_t)oc->bytes));
	json_object_set_new(r, "attempts", json_integer(job->attempts));
	json_object_set_new(r, "elapsed_ms", json_real(round1(now - job->first_start)));
	json_object_set_new(r, "fetched_at", json_string(ts));
	json_object_del(r, "body");
	json_object_del(r, "body_base64");
	if (xfer && oc->status && oc->kind != SC_ERR_TOO_LARGE) {
		/* Checked and encoded straight into the output line by job_encode
		 * (or made body_base64 there, if it is not UTF-8). */
		job->body = xfer->body.p ? xfer->body.p : "";
		job->body_len = xfer->body.len;
	} else {
		json_object_set_new(r, "body", json_null());
	}
	if (oc->kind >= 0) {
		sc_record_set_error(r, oc->kind, oc->message);
		job->failed = true;
	} else {
		json_object_del(r, "error");
		job->failed = false;
	}
	fetch_headers_complete(e, job, xfer, oc);
	/* --warc's member (fetch_warc.c) after the fetch members; fetched
	 * again without --warc, a record's member from an earlier run would
	 * point at an older attempt. */
	if (e->opts->warc_path)
		move_last(r, "warc");
	else if (job->attempts > job->prior)
		json_object_del(r, "warc");
	/* The history goes last, after the fetch members. */
	json_t *h = json_object_get(r, "history");
	if (h) {
		json_incref(h);
		json_object_del(r, "history");
		json_object_set_new(r, "history", h);
	}
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

size_t fetch_body_max(const struct fetch_options *opts)
{
	size_t max = opts->max_bytes > 0 ? (size_t)opts->max_bytes : 0;

	return (max > SC_ROBOTS_MAX_BYTES ? max : SC_ROBOTS_MAX_BYTES) + 1;
}

size_t fetch_line_max(const struct fetch_options *opts, size_t input_line_max)
{
	return 6 * fetch_body_max(opts) + 2 * input_line_max + ((size_t)1 << 20);
}

/* The record of a job with a body as its output line in e->output.line (newline
 * included): the record's members, then the body spliced in last.  A body
 * that is not UTF-8 becomes body_base64 on the record instead (before
 * "error" and "history"), and the record is written the ordinary way. */
static void job_encode(struct fetch_engine *e, struct job *job)
{
	char *text;
	size_t len;

	if (!job->body)
		return;
	json_object_del(job->rec, "body");
	text = json_dumps(job->rec, SC_JSON_FLAGS);
	if (!text)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	len = strlen(text);
	struct sc_buf *b = &e->output.line;
	/* A big body's buffer is not kept for small ones. */
	if (job->body_len + len < BODY_KEEP_MAX / 2)
		sc_buf_shrink(b, BODY_KEEP_MAX);
	else
		sc_buf_reset(b);
	static const char key[] = ",\"body\":\"";
	const char *k = len > 2 ? key : key + 1; /* no comma after "{" */
	int rc = sc_buf_reserve(b, len + job->body_len + 16);
	if (rc == 0)
		rc = sc_buf_add(b, text, len - 1); /* without its closing brace */
	free(text);
	if (rc == 0)
		rc = sc_buf_adds(b, k);
	/* Not UTF-8, or past the line's maximum: base64, through jansson. */
	if (rc != 0 || sc_jsonstr_escape_checked(b, job->body, job->body_len, SC_JSONSTR_NO_NUL) !=
	                       SC_JSONSTR_OK) {
		json_object_set_new(job->rec, "body_base64",
		                    sc_json_base64(job->body, job->body_len));
		move_last(job->rec, "error");
		move_last(job->rec, "history");
		job->body = NULL;
		return;
	}
	if (sc_buf_add(b, "\"}\n", 3) != 0) {
		/* Past the line's maximum by its last three bytes: written by
		 * jansson instead, which has no maximum of its own. */
		json_object_set_new(job->rec, "body",
		                    json_stringn_nocheck(job->body, job->body_len));
		job->body = NULL;
		return;
	}
	job->body = NULL;
	job->in_scratch = true;
}

void fetch_job_done(struct fetch_engine *e, struct job *job)
{
	job_encode(e, job);
	fetch_origin_unref(job->origin);
	fetch_job_finish(e, job);
}
