/* record.c: the pages sc-render reads and the records it writes
 * (sc-record(5)'s shape, plus "rendered"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "core/hash.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/record.h"
#include "render.h"

void page_free(struct page *p)
{
	if (!p)
		return;
	json_decref(p->in);
	free(p->url);
	free(p->body);
	free(p->content_type);
	free(p->method);
	json_decref(p->req_headers);
	free(p->post);
	free(p->session);
	free(p);
}

bool page_overrides(const struct page *p)
{
	return !p->body && (p->method || p->req_headers || p->post);
}

/* The record's "request" (checked by fetch_request_problem), as sc-fetch
 * reads it: a body not a string is sent as its JSON, Content-Type
 * application/json unless the headers say one. */
static void request_of(struct page *p, const json_t *req)
{
	const char *method = json_string_value(json_object_get(req, "method"));
	const json_t *headers = json_object_get(req, "headers");
	const json_t *body = json_object_get(req, "body");

	if (method)
		p->method = sc_strdup(method);
	if (json_is_object(headers) && json_object_size(headers))
		p->req_headers = json_deep_copy(headers);
	if (!body || json_is_null(body))
		return;
	if (json_is_string(body)) {
		p->post_len = json_string_length(body);
		p->post = sc_malloc(p->post_len + 1);
		memcpy(p->post, json_string_value(body), p->post_len + 1);
		return;
	}
	p->post = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
	p->post_len = strlen(p->post);
	const char *k;
	json_t *v;
	if (!p->req_headers)
		p->req_headers = json_object();
	json_object_foreach(p->req_headers, k, v) if (strcasecmp(k, "Content-Type") == 0) return;
	json_object_set_new(p->req_headers, "Content-Type", json_string("application/json"));
}

struct page *page_from_item(json_t *rec, const char *url, size_t ulen, size_t line, size_t order)
{
	struct page *p = sc_calloc(1, sizeof(*p));

	p->line = line;
	p->order = order;
	p->url = sc_strndup(url, ulen);
	p->in = rec ? json_incref(rec) : json_object();
	if (rec) {
		const char *session = json_string_value(json_object_get(rec, "session"));
		if (session)
			p->session = sc_strdup(session);
		const char *body = json_string_value(json_object_get(rec, "body"));
		const char *b64 = json_string_value(json_object_get(rec, "body_base64"));
		const char *ct = json_string_value(json_object_get(rec, "content_type"));
		const char *final = json_string_value(json_object_get(rec, "final_url"));
		if (body) {
			p->body_len = json_string_length(json_object_get(rec, "body"));
			p->body = sc_malloc(p->body_len + 1);
			memcpy(p->body, body, p->body_len + 1);
		} else if (b64) {
			unsigned char *d = sc_base64_decode(b64, strlen(b64), &p->body_len);
			p->body = (char *)d;
		}
		if (p->body && final) { /* the page is where the fetch ended */
			free(p->url);
			p->url = sc_strdup(final);
		}
		p->content_type = ct ? sc_strdup(ct) : NULL;
		request_of(p, json_object_get(rec, "request"));
		p->status = (long)json_integer_value(json_object_get(rec, "status"));
	}
	p->started = sc_now_ms();
	p->fetched_at = sc_wall_ms();
	return p;
}

char *shot_write(const struct render *r, const struct page *p, const char *b64)
{
	size_t len;
	unsigned char *png = sc_base64_decode(b64, strlen(b64), &len);
	char *path, *tmp;

	/* The URL's hash and the input line: two pages never share a name. */
	if (asprintf(&path, "%s/%016llx-%zu.png", r->opts.screenshot,
	             (unsigned long long)sc_fnv1a_str(p->url), p->line) < 0 ||
	    asprintf(&tmp, "%s.tmp", path) < 0)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	if (!png)
		sc_die(SC_EXIT_FAILURE, "%s: the browser's screenshot is not base64", path);
	/* Under a temporary name, renamed once whole. */
	FILE *f = fopen(tmp, "wb");
	if (!f)
		sc_die(SC_EXIT_FAILURE, "%s:", tmp);
	if (fwrite(png, 1, len, f) != len || fclose(f) != 0)
		sc_die(SC_EXIT_FAILURE, "error writing %s:", tmp);
	if (rename(tmp, path) < 0)
		sc_die(SC_EXIT_FAILURE, "%s:", path);
	free(png);
	free(tmp);
	return path;
}

void record_emit(struct render *r, struct page *p, const struct tab *t, const char *final_url,
                 const char *dom, const char *error_kind, const char *error_message)
{
	json_t *rec = json_deep_copy(p->in);
	char when[SC_RFC3339_LEN];
	double now = sc_now_ms();

	json_object_del(rec, "body");
	json_object_del(rec, "body_base64");
	json_object_del(rec, "error");
	if (!json_object_get(rec, "url"))
		json_object_set_new(rec, "url", json_string(p->url));
	json_object_set_new(rec, "final_url", final_url ? json_string(final_url) : json_null());
	json_object_set_new(rec, "status", t && t->status ? json_integer(t->status) : json_null());
	json_object_set_new(rec, "ok", json_boolean(!error_kind));
	json_object_set_new(rec, "content_type", t && t->mime ? json_string(t->mime) : json_null());
	json_object_set_new(rec, "bytes", json_integer(dom ? (json_int_t)strlen(dom) : 0));
	json_object_set_new(rec, "attempts", json_integer(p->attempts));
	json_object_set_new(rec, "elapsed_ms", json_real((double)(long long)(now - p->started)));
	sc_rfc3339(p->fetched_at, when);
	json_object_set_new(rec, "fetched_at", json_string(when));
	if (dom)
		json_object_set_new(rec, "body", sc_json_string_lossy(dom, strlen(dom)));
	if (t) {
		json_t *rd = json_pack("{s:I,s:i,s:i,s:i,s:i,s:i,s:s}", "ms",
		                       (json_int_t)(now - p->started), "requests", t->requests,
		                       "failed", t->failed, "blocked", t->blocked, "console_errors",
		                       t->console_errors, "dialogs", t->dialogs, "waited_for",
		                       t->timed_out ? "timeout" : r->opts.wait);
		if (t->js_result)
			json_object_set(rd, "js", t->js_result);
		if (t->shot_path)
			json_object_set_new(rd, "screenshot", json_string(t->shot_path));
		if (r->replay)
			json_object_set_new(rd, "missing",
			                    t->missing ? json_incref(t->missing) : json_array());
		if (r->opts.scroll) {
			json_object_set_new(rd, "scroll", json_integer(r->opts.scroll));
			json_object_set_new(rd, "scrolled", json_integer(t->scrolled));
		}
		json_object_set_new(rec, "rendered", rd);
	}
	if (error_kind) {
		json_object_set_new(rec, "error",
		                    json_pack("{s:s,s:s}", "kind", error_kind, "message",
		                              error_message ? error_message : ""));
		r->failed++;
	}
	out_json(r, p->order, rec);
	json_decref(rec);
}
