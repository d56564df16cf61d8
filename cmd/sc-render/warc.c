/* warc.c: --warc, every exchange a page made kept as WARC/1.1 records
 * (lib/warc writes them, as it does sc-fetch's).  Each response is paused
 * at the Fetch domain's response stage; its body is taken there
 * (Fetch.getResponseBody) and the response let go.  The capture then
 * waits for the Network event that says how it came (protocol, address,
 * TLS: Network.responseReceived, or the next request of a redirect) and
 * is written as request, response and metadata records; the page's end
 * writes what is left, then the rendered DOM (a conversion record) and the
 * screenshot (a resource record), both naming the document's response.
 *
 * What the browser shows is not the wire: its body is the payload after
 * the transfer coding and, for Chromium, after the content coding too, so
 * a response header's Content-Encoding and Transfer-Encoding are left out
 * and its Content-Length is the payload's (the metadata record names the
 * coding undone); the request header is the one Chromium reports sent
 * (Network.requestWillBeSentExtraInfo), in HTTP/1.1 form. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "core/buf.h"
#include "core/util.h"
#include "core/version.h"
#include "kit/cli.h"
#include "render.h"
#include "warc/capture.h"
#include "warc/digest.h"
#include "warc/record.h"
#include "warc/writer.h"

/* One exchange, its body in hand, waiting for its Network facts. */
struct capture {
	struct capture *next;
	char *network_id;
	struct sc_buf request, response, body, meta;
	char *url;
	int64_t date_ms;
	bool doc;       /* the tab's own document */
	bool truncated; /* the body could not be had */
	bool written;
};

/* A body asked for: the command's id and the paused request. */
struct asked {
	struct asked *next;
	long id;
	char *request_id;
	struct capture *c;
};

/* A tab's share. */
struct tab_warc {
	struct capture *head, **tail;
	struct asked *asked;
	json_t *sent;  /* networkId -> the request's headers as sent (ExtraInfo) */
	json_t *times; /* networkId -> its wallTime (requestWillBeSent) */
	char doc_id[SC_WARC_ID_LEN];
	char *doc_url;
	unsigned char *shot;
	size_t shot_len;
};

struct render_warc {
	struct sc_warc_writer *writer;
	struct sc_buf info;
	char error[300];
};

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void info_text(const struct render *r, int argc, char **argv, struct sc_buf *b)
{
	struct sc_buf cmd;

	sc_warc_field_add(b, "software", "sc-render/" SC_VERSION " (headless Chromium)");
	sc_warc_field_add(b, "format", "WARC File Format 1.1");
	sc_warc_field_add(b, "conformsTo",
	                  "https://iipc.github.io/warc-specifications/"
	                  "specifications/warc-format/warc-1.1/");
	sc_warc_field_add(b, "robots", r->opts.robots ? "obey" : "ignore");
	sc_buf_init(&cmd, (size_t)1 << 16);
	for (int i = 0; i < argc; i++) {
		if (i)
			sc_buf_addc(&cmd, ' ');
		sc_buf_adds(&cmd, argv[i]);
	}
	if (cmd.len)
		sc_warc_field_add(b, "command-line", cmd.p);
	sc_buf_free(&cmd);
}

int warc_init(struct render *r, int argc, char **argv, char *err, size_t errlen)
{
	if (!r->opts.warc)
		return 0;
	struct render_warc *w = sc_calloc(1, sizeof(*w));
	sc_buf_init(&w->info, (size_t)1 << 20);
	info_text(r, argc, argv, &w->info);
	struct sc_warc_writer_options wo = {
		.path = r->opts.warc,
		.level = 6,
		.cdx = r->opts.warc_cdx,
		.info = w->info.p,
		.info_len = w->info.len,
	};
	char why[512];
	w->writer = sc_warc_writer_open(&wo, why, sizeof(why));
	if (!w->writer) {
		snprintf(err, errlen, "--warc: %.280s", why);
		sc_buf_free(&w->info);
		free(w);
		return -1;
	}
	r->warc = w;
	return 0;
}

int warc_close(struct render *r, char *err, size_t errlen)
{
	struct render_warc *w = r->warc;
	char why[512];
	int rc = 0;

	if (!w)
		return 0;
	if (sc_warc_writer_close(w->writer, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "--warc: %.280s", why);
		rc = -1;
	}
	sc_buf_free(&w->info);
	free(w);
	r->warc = NULL;
	return rc;
}

static struct tab_warc *tw_of(struct tab *t)
{
	if (!t->warc) {
		t->warc = sc_calloc(1, sizeof(*t->warc));
		t->warc->tail = &t->warc->head;
		t->warc->sent = json_object();
		t->warc->times = json_object();
	}
	return t->warc;
}

static void capture_free(struct capture *c)
{
	sc_buf_free(&c->request);
	sc_buf_free(&c->response);
	sc_buf_free(&c->body);
	sc_buf_free(&c->meta);
	free(c->network_id);
	free(c->url);
	free(c);
}

static void die_write(struct render *r)
{
	sc_die(SC_EXIT_FAILURE, "--warc: %s", sc_warc_writer_error(r->warc->writer));
}

/* Writes c with what the Network event (or NULL) says of its connection. */
static void capture_write(struct render *r, struct tab *t, struct capture *c, const json_t *resp)
{
	struct tab_warc *tw = t->warc;
	const char *proto = str(resp, "protocol");
	const char *tls = str(json_object_get(resp, "securityDetails"), "protocol");
	char tlsname[16] = "", ip[64] = "";
	struct sc_warc_written out;

	if (c->written)
		return;
	c->written = true;
	/* Chromium's "TLS 1.3" as WARC-Protocol's "tls/1.3". */
	if (tls && strncmp(tls, "TLS ", 4) == 0)
		snprintf(tlsname, sizeof(tlsname), "tls/%.8s", tls + 4);
	/* Its names are ALPN's (http/1.1, h2, h3), WARC-Protocol's too;
	 * without the event, cleartext HTTP is HTTP/1.1 in Chromium. */
	if (!proto || !*proto || strcmp(proto, "blob") == 0 || strcmp(proto, "data") == 0)
		proto = strncasecmp(c->url, "http:", 5) == 0 ? "http/1.1" : NULL;
	const char *addr = str(resp, "remoteIPAddress");
	if (addr)
		snprintf(ip, sizeof(ip), "%s", addr);
	struct sc_warc_capture cap = {
		.url = c->url,
		.ip = ip,
		.protocol = proto,
		.tls = tlsname,
		.date_ms = c->date_ms,
		.request = c->request.p ? c->request.p : "",
		.request_len = c->request.len,
		.response = c->response.p,
		.response_len = c->response.len,
		.payload = c->body.p ? c->body.p : "",
		.payload_len = c->body.len,
		.truncated = c->truncated,
		.truncated_why = c->truncated ? "unspecified" : NULL,
		.metadata = c->meta.p,
		.metadata_len = c->meta.len,
	};
	if (sc_warc_write_capture(r->warc->writer, &cap, &out) != 0)
		die_write(r);
	if (c->doc) {
		/* The page's document (its last, after a redirect): the DOM's
		 * record names it. */
		memcpy(tw->doc_id, out.id, sizeof(tw->doc_id));
		free(tw->doc_url);
		tw->doc_url = sc_strdup(c->url);
	}
}

/* The first capture of network_id not written yet. */
static struct capture *waiting(struct tab_warc *tw, const char *network_id)
{
	for (struct capture *c = tw->head; c && network_id; c = c->next)
		if (!c->written && c->network_id && strcmp(c->network_id, network_id) == 0)
			return c;
	return NULL;
}

/* The request header in HTTP/1.1 form: what Chromium says it sent, else
 * what the paused request holds; Host first. */
static void request_text(struct capture *c, const json_t *req, const json_t *sent)
{
	const char *url = str(req, "url"), *method = str(req, "method");
	const json_t *headers = sent ? sent : json_object_get(req, "headers");
	CURLU *h = curl_url();
	char *host = NULL, *path = NULL, *query = NULL;
	const char *k;
	const json_t *v;

	if (!h)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	if (url && curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK) {
		(void)curl_url_get(h, CURLUPART_PATH, &path, 0);
		(void)curl_url_get(h, CURLUPART_QUERY, &query, 0);
		(void)curl_url_get(h, CURLUPART_HOST, &host, 0);
	}
	sc_buf_printf(&c->request, "%s %s%s%s HTTP/1.1\r\n", method ? method : "GET",
	              path ? path : "/", query ? "?" : "", query ? query : "");
	const char *authority = str(headers, ":authority");
	bool has_host = false;
	json_object_foreach((json_t *)headers, k, v) if (strcasecmp(k, "host") == 0) has_host =
	        true;
	if (authority)
		sc_buf_printf(&c->request, "Host: %s\r\n", authority);
	else if (!has_host && host) {
		char *port = NULL;
		(void)curl_url_get(h, CURLUPART_PORT, &port, 0);
		sc_buf_printf(&c->request, "Host: %s%s%s\r\n", host, port ? ":" : "",
		              port ? port : "");
		curl_free(port);
	}
	json_object_foreach((json_t *)headers, k, v)
	{
		if (k[0] == ':' || !json_is_string(v))
			continue;
		/* A field Chromium joined with newlines is one line per value. */
		const char *s = json_string_value(v);
		for (;;) {
			size_t n = strcspn(s, "\n");
			sc_buf_printf(&c->request, "%s: %.*s\r\n", k, (int)n, s);
			if (!s[n])
				break;
			s += n + 1;
		}
	}
	sc_buf_adds(&c->request, "\r\n");
	const char *post = str(req, "postData");
	if (post)
		sc_buf_adds(&c->request, post);
	curl_free(host);
	curl_free(path);
	curl_free(query);
	curl_url_cleanup(h);
}

/* The response header: status line and fields as the browser has them,
 * the codings it undid left out, Content-Length the payload's (known
 * once the body is: completed then). */
static void response_text(struct capture *c, const json_t *params, bool has_body)
{
	int status = (int)json_integer_value(json_object_get(params, "responseStatusCode"));
	const char *reason = str(params, "responseStatusText");
	size_t i;
	const json_t *f;

	if (!reason || !*reason)
		reason = sc_warc_reason_phrase(status);
	sc_buf_printf(&c->response, "HTTP/1.1 %d%s%s\r\n", status, *reason ? " " : "", reason);
	json_array_foreach(json_object_get(params, "responseHeaders"), i, f)
	{
		const char *name = str(f, "name"), *value = str(f, "value");
		if (!name || !value)
			continue;
		if (has_body && (strcasecmp(name, "Content-Encoding") == 0 ||
		                 strcasecmp(name, "Transfer-Encoding") == 0 ||
		                 strcasecmp(name, "Content-Length") == 0)) {
			if (strcasecmp(name, "Content-Length") != 0)
				sc_buf_printf(&c->meta, "browserRemoved: %s: %s\r\n", name, value);
			continue;
		}
		if (!has_body && strcasecmp(name, "Content-Length") == 0 && strcmp(value, "0") != 0)
			c->truncated = true; /* a redirect's body: Chromium gives none */
		for (const char *s = value;;) {
			size_t n = strcspn(s, "\n");
			sc_buf_printf(&c->response, "%s: %.*s\r\n", name, (int)n, s);
			if (!s[n])
				break;
			s += n + 1;
		}
	}
}

static void response_end(struct capture *c, bool has_body)
{
	if (has_body)
		sc_buf_printf(&c->response, "Content-Length: %zu\r\n", c->body.len);
	sc_buf_adds(&c->response, "\r\n");
}

bool warc_paused(struct render *r, struct tab *t, const json_t *params)
{
	if (!r->warc || (!json_object_get(params, "responseStatusCode") &&
	                 !json_object_get(params, "responseErrorReason")))
		return false;
	const char *id = str(params, "requestId");
	int status = (int)json_integer_value(json_object_get(params, "responseStatusCode"));
	if (!status) {
		/* A network error: nothing came to archive (as sc-fetch). */
		browser_send(&r->b, t->session, "Fetch.continueRequest",
		             json_pack("{s:s}", "requestId", id));
		return true;
	}
	struct tab_warc *tw = tw_of(t);
	struct capture *c = sc_calloc(1, sizeof(*c));
	const json_t *req = json_object_get(params, "request");
	const char *type = str(params, "resourceType"), *nid = str(params, "networkId");
	sc_buf_init(&c->request, (size_t)-1 / 2);
	sc_buf_init(&c->response, (size_t)-1 / 2);
	sc_buf_init(&c->body, (size_t)-1 / 2);
	sc_buf_init(&c->meta, (size_t)1 << 20);
	c->url = sc_strdup(str(req, "url") ? str(req, "url") : "");
	c->network_id = nid ? sc_strdup(nid) : NULL;
	c->doc = type && strcmp(type, "Document") == 0 && t->target && str(params, "frameId") &&
	         strcmp(str(params, "frameId"), t->target) == 0;
	const json_t *when = nid ? json_object_get(tw->times, nid) : NULL;
	c->date_ms = when ? (int64_t)(json_number_value(when) * 1000.0) : sc_wall_ms();
	request_text(c, req, nid ? json_object_get(tw->sent, nid) : NULL);
	const char *method = str(req, "method");
	/* No body to ask for: a redirect (Chromium keeps none), a 204 or 304,
	 * a HEAD's answer. */
	bool has_body = !((status >= 300 && status < 400) || status == 204 || status == 101 ||
	                  (method && strcmp(method, "HEAD") == 0));
	sc_buf_printf(&c->meta, "page: %s\r\n", t->page ? t->page->url : "");
	if (type)
		sc_buf_printf(&c->meta, "resourceType: %s\r\n", type);
	response_text(c, params, has_body);
	*tw->tail = c;
	tw->tail = &c->next;
	if (!has_body) {
		response_end(c, false);
		browser_send(&r->b, t->session, "Fetch.continueRequest",
		             json_pack("{s:s}", "requestId", id));
		return true;
	}
	struct asked *a = sc_calloc(1, sizeof(*a));
	a->request_id = sc_strdup(id);
	a->c = c;
	a->id = browser_send(&r->b, t->session, "Fetch.getResponseBody",
	                     json_pack("{s:s}", "requestId", id));
	a->next = tw->asked;
	tw->asked = a;
	return true;
}

bool warc_reply(struct render *r, long id, const json_t *msg)
{
	if (!r->warc)
		return false;
	for (int i = 0; i < r->opts.concurrency; i++) {
		struct tab *t = &r->tabs[i];
		struct tab_warc *tw = t->warc;
		for (struct asked **pa = tw ? &tw->asked : NULL; pa && *pa; pa = &(*pa)->next) {
			struct asked *a = *pa;
			if (a->id != id)
				continue;
			*pa = a->next;
			const json_t *res = json_object_get(msg, "result");
			const char *body = str(res, "body");
			if (!body) {
				a->c->truncated = true;
			} else if (json_is_true(json_object_get(res, "base64Encoded"))) {
				size_t n;
				unsigned char *d = sc_base64_decode(body, strlen(body), &n);
				if (d)
					sc_buf_add(&a->c->body, d, n);
				else
					a->c->truncated = true;
				free(d);
			} else {
				sc_buf_add(&a->c->body, body,
				           json_string_length(json_object_get(res, "body")));
			}
			response_end(a->c, true);
			browser_send(&r->b, t->session, "Fetch.continueRequest",
			             json_pack("{s:s}", "requestId", a->request_id));
			free(a->request_id);
			free(a);
			return true;
		}
	}
	return false;
}

void warc_event(struct render *r, struct tab *t, const char *method, const json_t *params)
{
	if (!r->warc || strncmp(method, "Network.", 8) != 0)
		return;
	struct tab_warc *tw = tw_of(t);
	const char *nid = str(params, "requestId");
	if (!nid)
		return;
	if (strcmp(method, "Network.requestWillBeSentExtraInfo") == 0) {
		json_t *h = json_object_get(params, "headers");
		if (json_is_object(h))
			json_object_set(tw->sent, nid, h);
	} else if (strcmp(method, "Network.requestWillBeSent") == 0) {
		const json_t *redirect = json_object_get(params, "redirectResponse");
		struct capture *c = redirect ? waiting(tw, nid) : NULL;
		if (c)
			capture_write(r, t, c, redirect);
		json_object_set(tw->times, nid, json_object_get(params, "wallTime"));
	} else if (strcmp(method, "Network.responseReceived") == 0) {
		struct capture *c = waiting(tw, nid);
		if (c)
			capture_write(r, t, c, json_object_get(params, "response"));
	}
}

void warc_shot(struct render *r, struct tab *t, const char *b64)
{
	if (!r->warc || !b64)
		return;
	struct tab_warc *tw = tw_of(t);
	free(tw->shot);
	tw->shot = sc_base64_decode(b64, strlen(b64), &tw->shot_len);
}

/* A conversion or resource record of the page's, naming its document's
 * response. */
static void write_own(struct render *r, struct tab_warc *tw, const char *type, const char *uri,
                      const char *ctype, const void *data, size_t len)
{
	char id[SC_WARC_ID_LEN], date[SC_WARC_DATE_LEN], digest[SC_WARC_SHA1_LEN];
	struct sc_warc_head h;
	struct sc_warc_part block = { data, len };

	sc_warc_record_id(id);
	sc_warc_date(sc_wall_ms(), date);
	sc_warc_sha1(data, len, digest);
	sc_warc_head_begin(&h, type, id, date);
	sc_warc_head_add(&h, "WARC-Target-URI", uri);
	if (tw->doc_id[0]) {
		sc_warc_head_add(&h, "WARC-Concurrent-To", tw->doc_id);
		if (strcmp(type, "conversion") == 0)
			sc_warc_head_add(&h, "WARC-Refers-To", tw->doc_id);
	}
	sc_warc_head_add(&h, "Content-Type", ctype);
	sc_warc_head_add(&h, "WARC-Block-Digest", digest);
	sc_warc_head_add(&h, "WARC-Payload-Digest", digest);
	sc_warc_head_end(&h, len);
	int rc = sc_warc_writer_write(r->warc->writer, h.text.p, h.text.len, &block, 1, NULL);
	sc_warc_head_free(&h);
	if (rc != 0)
		die_write(r);
}

/* Writes the captures left, forgets the bodies asked for. */
static void flush(struct render *r, struct tab *t)
{
	struct tab_warc *tw = t->warc;

	while (tw->asked) {
		struct asked *a = tw->asked;
		tw->asked = a->next;
		free(a->request_id);
		free(a);
	}
	while (tw->head) {
		struct capture *c = tw->head;
		tw->head = c->next;
		if (c->response.len < 4 ||
		    memcmp(c->response.p + c->response.len - 4, "\r\n\r\n", 4) != 0) {
			/* Its body never came: the page ended first. */
			c->truncated = true;
			response_end(c, true);
		}
		capture_write(r, t, c, NULL);
		capture_free(c);
	}
	tw->tail = &tw->head;
	json_object_clear(tw->sent);
	json_object_clear(tw->times);
}

void warc_page_end(struct render *r, struct tab *t, const char *final_url, const char *dom)
{
	if (!r->warc)
		return;
	struct tab_warc *tw = tw_of(t);
	flush(r, t);
	const char *uri = final_url ? final_url : tw->doc_url ? tw->doc_url : t->page->url;
	if (dom)
		write_own(r, tw, "conversion", uri, "text/html; charset=utf-8", dom, strlen(dom));
	if (tw->shot) {
		char *shot_uri;
		if (asprintf(&shot_uri, "urn:screenshot:%s", uri) < 0)
			sc_die(SC_EXIT_FAILURE, "out of memory");
		write_own(r, tw, "resource", shot_uri, "image/png", tw->shot, tw->shot_len);
		free(shot_uri);
	}
	warc_tab_free(r, t);
}

void warc_tab_free(struct render *r, struct tab *t)
{
	struct tab_warc *tw = t->warc;

	if (!tw)
		return;
	if (r->warc)
		flush(r, t);
	json_decref(tw->sent);
	json_decref(tw->times);
	free(tw->doc_url);
	free(tw->shot);
	free(tw);
	t->warc = NULL;
}
