/* fetch_headers: what a record says of the response beyond its status and
 * body.  A 304 answering a conditional request (If-None-Match or
 * If-Modified-Since sent, from the record's request.headers or -H) is a
 * success, "not_modified": true, with no body: what a recrawl wants.  With
 * --headers, "headers" holds the last response's header fields (names in
 * lower case; a repeated field's values joined with ", " as RFC 9110
 * section 5.3 allows, Set-Cookie's, which cannot be joined so, with "\n")
 * and "http_version" the protocol it came over, read back from libcurl
 * (curl_easy_nextheader) rather than kept by the header callback. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/fetch_engine.h"

static bool sends_header(const struct curl_slist *l, const char *name)
{
	size_t n = strlen(name);

	for (; l; l = l->next)
		if (strncasecmp(l->data, name, n) == 0 && (l->data[n] == ':' || l->data[n] == ';'))
			return true;
	return false;
}

bool fetch_not_modified(const struct fetch_engine *e, const struct job *job, long status)
{
	const struct curl_slist *sent = job->req_headers ? job->req_headers : e->opts->headers;

	return status == 304 &&
	       (sends_header(sent, "If-None-Match") || sends_header(sent, "If-Modified-Since"));
}

static json_t *http_version(CURL *easy)
{
	long v = 0;

	curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &v);
	switch (v) {
	case CURL_HTTP_VERSION_1_0:
		return json_string("1.0");
	case CURL_HTTP_VERSION_1_1:
		return json_string("1.1");
	case CURL_HTTP_VERSION_2_0:
		return json_string("2");
	case CURL_HTTP_VERSION_3:
		return json_string("3");
	default:
		return json_null();
	}
}

/* The last response's header fields as one object. */
static json_t *header_fields(CURL *easy)
{
	json_t *obj = json_object();
	struct curl_header *h = NULL;

	while ((h = curl_easy_nextheader(easy, CURLH_HEADER, -1, h))) {
		size_t n = strlen(h->name);
		char *name = sc_malloc(n + 1);
		for (size_t i = 0; i <= n; i++)
			name[i] = (char)tolower((unsigned char)h->name[i]);
		json_t *value = sc_json_string_lossy(h->value, strlen(h->value));
		json_t *prev = json_object_get(obj, name);
		if (prev) {
			const char *sep = strcmp(name, "set-cookie") == 0 ? "\n" : ", ";
			size_t a = json_string_length(prev), b = json_string_length(value);
			struct sc_buf joined;
			sc_buf_init(&joined, a + strlen(sep) + b); /* exactly what is added */
			sc_buf_add(&joined, json_string_value(prev), a);
			sc_buf_adds(&joined, sep);
			sc_buf_add(&joined, json_string_value(value), b);
			json_decref(value);
			value = json_stringn_nocheck(joined.p, joined.len);
			sc_buf_free(&joined);
		}
		json_object_set_new(obj, name, value);
		free(name);
	}
	return obj;
}

void fetch_headers_complete(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                            const struct outcome *oc)
{
	json_t *r = job->rec;
	bool response = xfer && oc->status;

	if (response && oc->status == 304 && oc->kind < 0) {
		json_object_set_new(r, "not_modified", json_true());
		json_object_set_new(r, "body", json_null());
		job->body = NULL;
	}
	if (!e->opts->response_headers)
		return;
	json_object_set_new(r, "http_version", response ? http_version(xfer->easy) : json_null());
	json_object_set_new(r, "headers", response ? header_fields(xfer->easy) : json_null());
}
