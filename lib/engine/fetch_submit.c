/* fetch_submit: items into the engine.  Checks a record's url and request
 * member, makes the job (its request headers, method and body, its
 * origin's key and a URL for metrics without credentials) and queues it on
 * its origin; an item that cannot be fetched is finished at once.  Its
 * state (struct fetch_submit_state) is a scratch URL handle. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/protocol.h"
#include "engine/fetch_engine.h"
#include "kit/cli.h"
#include "web/url.h"

void fetch_submit_init(struct fetch_engine *e)
{
	e->submit.urlh = curl_url();
	if (!e->submit.urlh)
		sc_die(SC_EXIT_FAILURE, "out of memory");
}

void fetch_submit_free(struct fetch_engine *e)
{
	curl_url_cleanup(e->submit.urlh);
}

/* Finishes a job that never reached the network. */
static void job_fail_early(struct fetch_engine *e, struct job *job, enum sc_error_kind kind,
                           const char *message)
{
	json_object_set_new(job->rec, "status", json_null());
	sc_record_set_error(job->rec, kind, message);
	job->failed = true;
	fetch_job_finish(e, job);
}

const char *fetch_url_problem(const char *url, size_t n)
{
	return sc_protocol_request_text_ok(url, n, false)
	               ? NULL
	               : "not a valid URL: it holds a control character";
}

/* Why a "request" member cannot be sent, or NULL when it can. */
const char *fetch_request_problem(const json_t *req)
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
		size_t n = json_string_length(v);
		if (n == 0 || memchr(m, ' ', n) || !sc_protocol_request_text_ok(m, n, false))
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
			if (!sc_protocol_header_name_ok(key, strlen(key)) ||
			    !sc_protocol_header_value_ok(json_string_value(hv),
			                                 json_string_length(hv)))
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

struct curl_slist *fetch_request_headers(const struct curl_slist *given, const json_t *req)
{
	const json_t *hdrs = json_object_get(req, "headers");
	const json_t *body = json_object_get(req, "body");
	const char *key;
	json_t *hv;
	struct curl_slist *l = NULL;
	bool has_ctype = false;

	for (const struct curl_slist *g = given; g; g = g->next) {
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
		if (!json_is_string(body) && !has_ctype)
			l = curl_slist_append(l, "Content-Type: application/json");
		/* No "Expect: 100-continue" round trip. */
		l = curl_slist_append(l, "Expect:");
	}
	return l;
}

/* Builds the job's request from rec.request (already checked) and the -H
 * headers: the record's headers win over -H headers of the same name. */
static void job_request(struct fetch_engine *e, struct job *job, const json_t *req)
{
	const json_t *body = json_object_get(req, "body");
	const char *method = json_string_value(json_object_get(req, "method"));

	job->req_method = method ? sc_strdup(method) : NULL;
	if (body && !json_is_null(body)) {
		job->has_body = true;
		if (json_is_string(body)) {
			job->req_body_len = json_string_length(body);
			job->req_body = sc_malloc(job->req_body_len + 1);
			memcpy(job->req_body, json_string_value(body), job->req_body_len + 1);
		} else {
			job->req_body = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
			job->req_body_len = strlen(job->req_body);
		}
	}
	job->req_headers = fetch_request_headers(e->opts->headers, req);
}

/* Parses url: its origin key (sc_url_origin, malloced) into *key, or an
 * error.  Returns -1, or the error kind with a message in why
 * (SC_ERR_BAD_INPUT is 0: not "no error"). */
static int url_origin(struct fetch_engine *e, const char *url, char **key, char **metrics_url,
                      char *why, size_t whysize)
{
	char *scheme = NULL;
	CURLUcode uc;
	int rc = -1;

	/* Cleared first: a handle that holds a URL resolves the next one
	 * against it, which would make "xfer" mean "http://last-host/xfer". */
	curl_url_set(e->submit.urlh, CURLUPART_URL, NULL, 0);
	uc = curl_url_set(e->submit.urlh, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
	if (uc != CURLUE_OK) {
		snprintf(why, whysize, "not a valid URL: %s", curl_url_strerror(uc));
		return SC_ERR_BAD_INPUT;
	}
	curl_url_get(e->submit.urlh, CURLUPART_SCHEME, &scheme, 0);
	if (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		snprintf(why, whysize, "scheme '%s' is not http or https", scheme ? scheme : "");
		rc = SC_ERR_BLOCKED_SCHEME;
	} else if (!(*key = sc_url_origin(e->submit.urlh))) {
		snprintf(why, whysize, "not a valid URL: no host");
		rc = SC_ERR_BAD_INPUT;
	} else {
		/* Metrics never show credentials. */
		*metrics_url = sc_url_without_userinfo(url);
	}
	curl_free(scheme);
	return rc;
}

/* Finishes a job whose url cannot be fetched as bad_input: with line, the
 * bad_input record of that line (returns false: the caller warns), else
 * rec with the error set. */
static bool fail_bad_url(struct fetch_engine *e, struct job *job, json_t *rec,
                         const struct sc_line *line, const char *why)
{
	if (!line) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT, why);
		return true;
	}
	json_t *bad = sc_record_bad_input(line->number, line->text, line->len, why);
	json_object_set(bad, "url", json_object_get(rec, "url"));
	json_decref(rec);
	job->rec = bad;
	job->failed = true;
	fetch_job_finish(e, job);
	return false;
}

/* Submits rec; line, when given, is its input line, for the bad_input
 * record of a URL that does not parse.  Returns false when it made that
 * record, with the reason in why. */
static bool submit(struct fetch_engine *e, json_t *rec, int prior_attempts,
                   const struct sc_line *line, char *why, size_t whylen)
{
	struct job *job = fetch_job_new(e);
	const char *url = json_string_value(json_object_get(rec, "url"));
	const char *problem;
	char *key = NULL;
	int kind;
	double now = sc_now_ms();

	job->rec = rec;
	job->prior = job->attempts = prior_attempts > 0 ? prior_attempts : 0;
	job->max_attempts = job->attempts + 1 + e->opts->retry.retries;
	if (!url) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT, "no string member \"url\"");
		return true;
	}
	if ((problem = fetch_url_problem(url, json_string_length(json_object_get(rec, "url"))))) {
		/* Made the line's bad_input record, like a url that does not parse. */
		snprintf(why, whylen, "%s", problem);
		return fail_bad_url(e, job, rec, line, why);
	}
	if ((problem = fetch_request_problem(json_object_get(rec, "request")))) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT, problem);
		return true;
	}
	if ((problem = fetch_form_problem(rec))) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT, problem);
		return true;
	}
	json_t *proxy = json_object_get(rec, "proxy");
	if (proxy && !json_is_null(proxy) &&
	    (!json_is_string(proxy) || sc_url_proxy_problem(json_string_value(proxy)))) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT,
		               json_is_string(proxy) ? "\"proxy\" is not a proxy URL"
		                                     : "\"proxy\" is not a string");
		return true;
	}
	json_t *session = json_object_get(rec, "session");
	if (session && (!json_is_string(session) || json_string_length(session) == 0)) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT, "\"session\" is not a non-empty string");
		return true;
	}
	/* A URL as people paste it (non-ASCII, spaces, an IDN host) is
	 * requested as browsers request it; rec's url stays as given. */
	char *encoded = sc_url_from_pasted(url, strlen(url)); /* NULL: as it is */
	if (encoded)
		url = encoded;
	if ((kind = url_origin(e, url, &key, &job->metrics_url, why, whylen)) >= 0) {
		free(encoded);
		if (kind == SC_ERR_BAD_INPUT)
			return fail_bad_url(e, job, rec, line, why);
		job_fail_early(e, job, kind, why);
		return true;
	}
	if (e->loop.stopping) {
		free(encoded);
		free(key);
		job_fail_early(e, job, SC_ERR_CANCELLED, "cancelled before it started");
		return true;
	}
	job->url = encoded ? encoded : sc_strdup(url);
	job_request(e, job, json_object_get(rec, "request"));
	fetch_form_apply(job, rec); /* after the request: its method */
	job->origin = fetch_origin_get(&e->origins, key, now);
	free(key);
	fetch_origin_ref(job->origin);
	job->queued_at = now;
	if (fetch_robots_refuse(e, job))
		return true;
	fetch_origin_push(&e->origins, job->origin, job, false);
	return true;
}

void fetch_submit(struct fetch_engine *e, json_t *rec, int prior_attempts)
{
	char why[256];

	submit(e, rec, prior_attempts, NULL, why, sizeof(why));
}

bool fetch_submit_input(struct fetch_engine *e, json_t *rec, const struct sc_line *line, char *why,
                        size_t whylen)
{
	return submit(e, rec, 0, line, why, whylen);
}
