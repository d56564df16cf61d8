/* fetch_transfer: one attempt on the wire.  Owns the curl easy handles
 * (kept for reuse), their set-up from a job and the options, the body and
 * header callbacks (--max-bytes, redirects, Retry-After), and the mapping
 * of how curl ended to an outcome: a status and an error kind
 * (sc-record(5)), handed back to the loop, which decides what follows
 * (struct fetch_transfers). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/signals.h"
#include "engine/fetch_engine.h"
#include "kit/cli.h"
#include "web/robots.h"

/* A robots.txt body is kept up to SC_ROBOTS_MAX_BYTES; the rest is cut,
 * which is no error (fetch_robots.c reads too_large so). */
static bool robots_body(struct transfer *xfer, const char *data, size_t n)
{
	size_t room = SC_ROBOTS_MAX_BYTES -
	              (xfer->body.len < SC_ROBOTS_MAX_BYTES ? xfer->body.len : SC_ROBOTS_MAX_BYTES);

	if (sc_buf_add(&xfer->body, data, n < room ? n : room) == 0 && n <= room)
		return true;
	/* The rest is not read: the start is what counts (RFC 9309 2.5). */
	xfer->too_large = true;
	return false;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	struct transfer *xfer = userp;
	size_t n = size * nmemb;
	long long max = xfer->engine->opts->max_bytes;

	/* libcurl skips the body of a redirect it follows; should it ever hand
	 * one over, it neither counts toward --max-bytes nor is kept. */
	if (xfer->redirecting)
		return n;
	if (xfer->job->robots_for)
		return robots_body(xfer, data, n) ? n : 0;
	if ((long long)(xfer->body.len + n) > max || sc_buf_add(&xfer->body, data, n) != 0) {
		xfer->too_large = true;
		return 0; /* aborts with CURLE_WRITE_ERROR */
	}
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
static size_t headers_end(struct transfer *xfer, size_t n)
{
	const struct fetch_options *opts = xfer->engine->opts;
	long code = 0;
	curl_off_t cl = -1;

	curl_easy_getinfo(xfer->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200)
		return n; /* 1xx: another response follows */
	if (opts->max_redirs > 0 && code >= 300 && code < 400 && xfer->has_location) {
		xfer->redirecting = true;
		return n;
	}
	curl_easy_getinfo(xfer->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	if (cl > opts->max_bytes && !xfer->encoded && !xfer->job->robots_for) {
		xfer->too_large = true;
		return 0; /* aborts with CURLE_WRITE_ERROR */
	}
	if (cl > 0 && cl <= opts->max_bytes && cl <= (8 << 20))
		(void)sc_buf_reserve(&xfer->body, (size_t)cl); /* a hint; on_body checks */
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
	struct transfer *xfer = userp;
	size_t n = size * nmemb;

	if (xfer->warc)
		fetch_warc_header(xfer, data, n);
	if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		/* A new response (after a redirect or a 100): forget the last. */
		free(xfer->retry_after);
		xfer->retry_after = NULL;
		sc_buf_reset(&xfer->body);
		xfer->has_location = xfer->encoded = xfer->redirecting = false;
		xfer->in_head = true;
		xfer->head_complete = false;
	} else if (n <= 2 && (data[0] == '\r' || data[0] == '\n')) {
		/* The blank line: this response's header block is whole. */
		xfer->in_head = false;
		xfer->head_complete = true;
		return headers_end(xfer, n);
	} else if (header_is(data, n, "location", 8)) {
		xfer->has_location = true;
	} else if (header_is(data, n, "set-cookie", 10)) {
		xfer->set_cookie = true;
	} else if (header_is(data, n, "content-encoding", 16)) {
		xfer->encoded = true;
	} else if (header_is(data, n, "retry-after", 11)) {
		size_t len = n - 12;
		const char *v = data + 12;
		while (len > 0 && (*v == ' ' || *v == '\t'))
			v++, len--;
		while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
			len--;
		free(xfer->retry_after);
		xfer->retry_after = sc_strndup(v, len);
	}
	return n;
}

static struct transfer *xfer_get(struct fetch_engine *e)
{
	struct transfer *xfer = e->xfers.free;

	if (xfer) {
		e->xfers.free = xfer->next_free;
		fetch_cookies_release(e, xfer->easy);
		curl_easy_reset(xfer->easy);
		fetch_form_release(xfer); /* after the reset: the handle let go of it */
	} else {
		xfer = sc_calloc(1, sizeof(*xfer));
		xfer->engine = e;
		sc_buf_init(&xfer->body, fetch_body_max(e->opts));
		xfer->easy = curl_easy_init();
		if (!xfer->easy) /* curl_easy_init fails only for want of memory */
			sc_die(SC_EXIT_FAILURE, "out of memory");
	}
	sc_buf_reset(&xfer->body);
	xfer->too_large = xfer->has_location = xfer->encoded = xfer->redirecting = false;
	xfer->in_head = xfer->head_complete = false;
	free(xfer->retry_after);
	xfer->retry_after = NULL;
	xfer->errbuf[0] = '\0';
	return xfer;
}

void fetch_transfer_release(struct fetch_engine *e, struct transfer *xfer)
{
	curl_multi_remove_handle(e->loop.multi, xfer->easy);
	if (xfer->aprev)
		xfer->aprev->anext = xfer->anext;
	else
		e->xfers.active = xfer->anext;
	if (xfer->anext)
		xfer->anext->aprev = xfer->aprev;
	xfer->anext = xfer->aprev = NULL;
	xfer->job = NULL;
	sc_buf_shrink(&xfer->body, BODY_KEEP_MAX);
	xfer->next_free = e->xfers.free;
	e->xfers.free = xfer;
}

/* libcurl is about to send a request of this transfer (the first, or a
 * redirect hop's).  The signature is libcurl's (curl_prereq_callback). */
// NOLINTNEXTLINE(readability-non-const-parameter)
static int on_prereq(void *userp, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
                     int conn_local_port)
{
	struct transfer *xfer = userp;
	struct fetch_engine *e = xfer->engine;
	double now = sc_now_ms();

	(void)conn_primary_ip, (void)conn_local_ip, (void)conn_primary_port, (void)conn_local_port;
	fetch_origin_sent(&e->origins, xfer->job->origin, !xfer->sent, now);
	if (!xfer->sent) {
		fetch_robots_sent(e, xfer->job->origin, now);
		fetch_pace_sent(e, xfer->job, now);
	}
	xfer->sent = true;
	return CURL_PREREQFUNC_OK;
}

static void xfer_setup(struct fetch_engine *e, struct transfer *xfer, struct job *job)
{
	const struct fetch_options *opts = e->opts;
	CURL *c = xfer->easy;

	curl_easy_setopt(c, CURLOPT_URL, job->url);
	curl_easy_setopt(c, CURLOPT_PRIVATE, xfer);
	fetch_cookies_setup(e, c, job);
	fetch_proxy_setup(e, xfer, job, sc_now_ms());
	xfer->set_cookie = false;
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, xfer);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, xfer);
	curl_easy_setopt(c, CURLOPT_PREREQFUNCTION, on_prereq);
	curl_easy_setopt(c, CURLOPT_PREREQDATA, xfer);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, xfer->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, opts->max_redirs > 0 ? 1L : 0L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, opts->max_redirs);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, opts->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, opts->timeout_ms);
	if (opts->low_speed_time > 0) {
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, opts->low_speed_limit);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, opts->low_speed_time);
	}
	curl_easy_setopt(c, CURLOPT_USERAGENT, opts->user_agent);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER,
	                 job->req_headers ? job->req_headers : opts->headers);
	/* Over TLS, wait for a multiplexed HTTP/2 stream rather than open one
	 * more connection: ALPN tells at the handshake whether it can.  Not
	 * for cleartext http, where libcurl would learn it only from the first
	 * response, so a slow one would hold up every other transfer. */
	if (strncasecmp(job->url, "https:", 6) == 0)
		curl_easy_setopt(c, CURLOPT_PIPEWAIT, 1L);
	if (opts->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	/* A form's POST is libcurl's own, not a custom one: after a 302 or
	 * 303 (a login's answer) the next request is a GET, as a browser's. */
	bool form_post = job->form != FETCH_FORM_NONE && strcasecmp(job->req_method, "POST") == 0;
	if (job->req_method && !form_post) {
		if (strcmp(job->req_method, "HEAD") == 0)
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		else if (strcmp(job->req_method, "GET") != 0 || job->has_body)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, job->req_method);
	}
	if (job->form == FETCH_FORM_MULTIPART) {
		fetch_form_setup(xfer, job);
	} else if (job->has_body || (job->req_method && strcmp(job->req_method, "POST") == 0)) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)job->req_body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, job->req_body ? job->req_body : "");
	}
	if (job->robots_for) {
		/* RFC 9309 2.3.1.2: at least five redirects, also to other hosts. */
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	}
	fetch_warc_setup(e, xfer);
}

bool fetch_transfer_start(struct fetch_engine *e, struct job *job, double now,
                          struct transfer **refused)
{
	struct transfer *xfer = xfer_get(e);

	xfer->job = job;
	xfer->started = now;
	xfer->sent = false;
	xfer_setup(e, xfer, job);
	if (job->first_start == 0)
		job->first_start = now;
	job->attempts++;
	e->xfers.inflight++;
	fetch_origin_started(&e->origins, job->origin, now);
	xfer->aprev = NULL;
	xfer->anext = e->xfers.active;
	if (e->xfers.active)
		e->xfers.active->aprev = xfer;
	e->xfers.active = xfer;
	/* Should curl refuse the handle, the attempt ends at once, as an
	 * internal error with curl's reason, and the run goes on. */
	CURLMcode mc = curl_multi_add_handle(e->loop.multi, xfer->easy);
	if (mc != CURLM_OK) {
		snprintf(xfer->errbuf, sizeof(xfer->errbuf), "curl_multi_add_handle: %s",
		         curl_multi_strerror(mc));
		*refused = xfer;
		return false;
	}
	return true;
}

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

/* Whether curl refused a response's header block for its size.  libcurl
 * buffers one header line up to CURL_MAX_HTTP_HEADER (100 KiB) and, from
 * 8.x, a whole block up to 300 KiB; past that 7.88 fails with
 * CURLE_OUT_OF_MEMORY (its errbuf empty), later versions with
 * CURLE_TOO_LARGE or CURLE_RECV_ERROR ("Too large response headers").
 * What tells it from an allocation that truly failed is what the header
 * callback saw: a status line, and no blank line after it, so the failure
 * came in the middle of a header block (where a real out-of-memory is
 * vanishingly unlikely next to a line curl refuses to buffer).  A giant
 * status line never reaches the callback: 7.88 fails it the same way
 * after the request went out and before any header came back. */
static bool head_too_large(const struct transfer *xfer, CURLcode rc)
{
	long sent = 0;

	if (!xfer->in_head) {
		if (rc != CURLE_OUT_OF_MEMORY || xfer->head_complete)
			return false;
		curl_easy_getinfo(xfer->easy, CURLINFO_REQUEST_SIZE, &sent);
		return sent > 0;
	}
	if (rc == CURLE_OUT_OF_MEMORY)
		return true;
#if LIBCURL_VERSION_NUM >= 0x080600
	if (rc == CURLE_TOO_LARGE)
		return true;
#endif
	return rc == CURLE_RECV_ERROR && strcasestr(xfer->errbuf, "header") != NULL;
}

/* The outcome of an attempt that curl ended with rc: status, kind and
 * message.  A response is ok only if its whole header block arrived (the
 * blank line that ends it) and its body is complete by its framing (curl
 * checks Content-Length and the chunked terminator: CURLE_PARTIAL_FILE; a
 * body delimited by the close is complete at the close).  Its status is
 * reported only when the header block was received whole. */
static void outcome_of(struct fetch_engine *e, struct transfer *xfer, CURLcode rc,
                       struct outcome *oc)
{
	long code = 0;

	curl_easy_getinfo(xfer->easy, CURLINFO_RESPONSE_CODE, &code);
	oc->status = xfer->head_complete ? code : 0;
	oc->bytes = xfer->body.len;
	oc->kind = -1;
	if (head_too_large(xfer, rc)) {
		oc->kind = SC_ERR_TOO_LARGE;
		snprintf(oc->message, sizeof(oc->message),
		         "the response header block was too large (over libcurl's limit)");
		oc->bytes = 0;
	} else if (xfer->too_large) {
		oc->kind = SC_ERR_TOO_LARGE;
		snprintf(oc->message, sizeof(oc->message), "body larger than --max-bytes (%lld)",
		         e->opts->max_bytes);
		oc->bytes = 0;
	} else if (rc == CURLE_OK && !xfer->head_complete) {
		/* A head cut short by a FIN: curl 7.88 calls it done. */
		oc->kind = SC_ERR_NETWORK;
		snprintf(oc->message, sizeof(oc->message), "incomplete response");
	} else if (rc == CURLE_PARTIAL_FILE) {
		oc->kind = SC_ERR_NETWORK;
		snprintf(oc->message, sizeof(oc->message), "incomplete response: %s",
		         xfer->errbuf[0] ? xfer->errbuf : curl_easy_strerror(rc));
	} else if (rc == CURLE_URL_MALFORMAT && oc->status) {
		/* A redirect whose Location curl cannot parse: the server's
		 * answer, not our input. */
		oc->kind = SC_ERR_HTTP;
		snprintf(oc->message, sizeof(oc->message), "HTTP %ld: %s", oc->status,
		         xfer->errbuf[0] ? xfer->errbuf : curl_easy_strerror(rc));
	} else if (rc != CURLE_OK) {
		oc->kind = kind_of(rc, false);
		snprintf(oc->message, sizeof(oc->message), "%s",
		         xfer->errbuf[0] ? xfer->errbuf : curl_easy_strerror(rc));
		if (oc->kind == SC_ERR_TOO_LARGE)
			oc->bytes = 0;
	} else if ((oc->status < 200 || oc->status > 299) &&
	           !fetch_not_modified(e, xfer->job, oc->status)) {
		oc->kind = SC_ERR_HTTP;
		snprintf(oc->message, sizeof(oc->message), "HTTP %ld", oc->status);
	}
	/* A whole answer that is the login page (--login-url). */
	if (oc->status && (oc->kind < 0 || oc->kind == SC_ERR_HTTP)) {
		char *final_url = NULL;
		curl_easy_getinfo(xfer->easy, CURLINFO_EFFECTIVE_URL, &final_url);
		(void)fetch_cookies_lost(e, xfer->job, final_url, oc);
	}
}

struct job *fetch_transfer_end(struct fetch_engine *e, struct transfer *xfer, CURLcode rc,
                               struct outcome *oc)
{
	curl_off_t total_us = 0;

	e->xfers.inflight--;
	fetch_origin_finished(&e->origins, xfer->job->origin, xfer->sent);
	curl_easy_getinfo(xfer->easy, CURLINFO_TOTAL_TIME_T, &total_us);
	oc->latency_ms = total_us > 0 ? (double)total_us / 1000.0 : sc_now_ms() - xfer->started;
	outcome_of(e, xfer, rc, oc);
	fetch_proxy_answered(xfer, rc, sc_now_ms());
	if (xfer->set_cookie)
		fetch_cookies_changed(e, xfer->job);
	return xfer->job;
}

struct job *fetch_transfer_cancel(struct fetch_engine *e, struct transfer *xfer, struct outcome *oc)
{
	e->xfers.inflight--;
	fetch_origin_finished(&e->origins, xfer->job->origin, xfer->sent);
	if (xfer->head_complete)
		curl_easy_getinfo(xfer->easy, CURLINFO_RESPONSE_CODE, &oc->status);
	oc->latency_ms = sc_now_ms() - xfer->started;
	oc->bytes = xfer->body.len;
	oc->kind = SC_ERR_CANCELLED;
	snprintf(oc->message, sizeof(oc->message), "cancelled by shutdown after --grace");
	return xfer->job;
}

void fetch_xfers_free(struct fetch_engine *e)
{
	while (e->xfers.free) {
		struct transfer *xfer = e->xfers.free;
		e->xfers.free = xfer->next_free;
		fetch_cookies_release(e, xfer->easy);
		curl_easy_cleanup(xfer->easy);
		fetch_form_release(xfer);
		sc_buf_free(&xfer->body);
		free(xfer->retry_after);
		fetch_warc_xfer_free(xfer);
		free(xfer);
	}
}
