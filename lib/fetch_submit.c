/* fetch_submit: items into the engine.  Checks a record's url and request
 * member, makes the job (its request headers, method and body, its
 * origin's key and a URL for metrics without credentials) and queues it on
 * its origin; an item that cannot be fetched is finished at once.  Also
 * sc-fetch's own input rules (sc_fetch_submit_line). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "fetch_engine.h"
#include "input.h"
#include "utf8.h"

/* Finishes a job that never reached the network. */
static void job_fail_early(struct sc_fetch_engine *e, struct job *job, enum sc_error_kind kind,
                           const char *message)
{
	json_object_set_new(job->rec, "status", json_null());
	sc_record_set_error(job->rec, kind, message);
	job->failed = true;
	fetch_job_finish(e, job);
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
static void job_request(struct sc_fetch_engine *e, struct job *job, const json_t *req)
{
	const json_t *hdrs = json_object_get(req, "headers");
	const json_t *body = json_object_get(req, "body");
	const char *key;
	json_t *hv;
	struct curl_slist *l = NULL;
	bool has_ctype = false;

	job->req_method = json_string_value(json_object_get(req, "method"))
	                          ? sc_strdup(json_string_value(json_object_get(req, "method")))
	                          : NULL;
	for (struct curl_slist *g = e->opts->headers; g; g = g->next) {
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
		job->has_body = true;
		if (json_is_string(body)) {
			job->req_body_len = json_string_length(body);
			job->req_body = sc_malloc(job->req_body_len + 1);
			memcpy(job->req_body, json_string_value(body), job->req_body_len + 1);
		} else {
			job->req_body = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
			job->req_body_len = strlen(job->req_body);
			if (!has_ctype)
				l = curl_slist_append(l, "Content-Type: application/json");
		}
		/* No "Expect: 100-continue" round trip. */
		l = curl_slist_append(l, "Expect:");
	}
	job->req_headers = l;
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
	 * against it, which would make "xfer" mean "http://last-host/xfer". */
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
	struct job *job = fetch_job_new(e);
	const char *url = json_string_value(json_object_get(rec, "url"));
	const char *problem;
	char key[1024], why[256];
	int kind;
	double now = sc_now_ms();

	job->rec = rec;
	job->prior = job->attempts = prior_attempts > 0 ? prior_attempts : 0;
	job->max_attempts = job->attempts + 1 + e->opts->retry.retries;
	if (!url) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT, "no string member \"url\"");
		return;
	}
	if ((problem = request_problem(json_object_get(rec, "request")))) {
		job_fail_early(e, job, SC_ERR_BAD_INPUT, problem);
		return;
	}
	if ((kind = url_origin(e, url, key, sizeof(key), &job->metrics_url, why, sizeof(why))) >=
	    0) {
		if (kind == SC_ERR_BAD_INPUT && in && line) {
			sc_warn("%s:%zu: %s", sc_lines_name(in), line->number, why);
			json_t *bad = sc_record_bad_input(line->number, line->text, line->len, why);
			json_object_set(bad, "url", json_object_get(rec, "url"));
			json_decref(rec);
			job->rec = bad;
			job->failed = true;
			fetch_job_finish(e, job);
			return;
		}
		job_fail_early(e, job, kind, why);
		return;
	}
	if (e->stopping) {
		job_fail_early(e, job, SC_ERR_CANCELLED, "cancelled before it started");
		return;
	}
	job->url = sc_strdup(url);
	job_request(e, job, json_object_get(rec, "request"));
	job->origin = fetch_origin_get(e, key, now);
	job->origin->refs++;
	job->queued_at = now;
	if (fetch_robots_refuse(e, job))
		return;
	fetch_origin_push(e, job->origin, job, false);
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
