/* replay.c: --from-warc, every request the browser makes answered from
 * archives (Fetch.fulfillRequest), none of them sent.  The files' response
 * and revisit records are indexed once by their WARC-Target-URI (and by
 * that URI's SURT, for a URL written otherwise: case, default port,
 * query order); a request is answered by the first capture of its URL,
 * its payload transfer- and content-decoded as the browser would have
 * read it.  A revisit is answered with its own header and its original's
 * payload (WARC-Refers-To, else the payload digest, else the original's
 * URI).  A request no record answers fails (InternetDisconnected) and its
 * URL is listed in the record's rendered.missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "core/buf.h"
#include "core/util.h"
#include "kit/cli.h"
#include "render.h"
#include "warc/cdx.h"
#include "warc/http.h"
#include "warc/reader.h"

struct replay {
	struct sc_warc_reader *files[64];
	int nfiles;
	json_t *by_uri, *by_surt, *by_id, *by_digest; /* -> [file, offset] */
	struct sc_buf surt, chunks, decoded;
};

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The target URI without angle brackets (WARC/1.0 files have them). */
static char *target(const struct sc_warc_rec *rec)
{
	const char *uri = sc_warc_get(rec, "WARC-Target-URI");
	size_t n = uri ? strlen(uri) : 0;

	if (n >= 2 && uri[0] == '<' && uri[n - 1] == '>')
		return sc_strndup(uri + 1, n - 2);
	return uri ? sc_strdup(uri) : NULL;
}

static void note(json_t *index, const char *key, int file, uint64_t offset)
{
	if (key && !json_object_get(index, key))
		json_object_set_new(index, key, json_pack("[i,I]", file, (json_int_t)offset));
}

static const char *surt_of(struct replay *p, const char *url)
{
	sc_buf_reset(&p->surt);
	sc_warc_surt(url, &p->surt);
	return p->surt.len ? p->surt.p : NULL;
}

static int index_file(struct replay *p, int file, const char *path, char *err, size_t errlen)
{
	struct sc_warc_rec rec;
	struct sc_warc_problem problem;
	enum sc_warc_next n;
	char why[300];
	struct sc_warc_reader *rd = sc_warc_reader_open(path, why, sizeof(why));

	if (!rd)
		return snprintf(err, errlen, "--from-warc: %.250s", why), -1;
	p->files[file] = rd;
	while ((n = sc_warc_reader_next(rd, &rec, &problem)) != SC_WARC_END) {
		if (n == SC_WARC_PROBLEM)
			continue; /* the reader goes on where it can; sc-warc check says what */
		const char *type = sc_warc_get(&rec, "WARC-Type");
		if (!type || (strcmp(type, "response") != 0 && strcmp(type, "revisit") != 0))
			continue;
		char *uri = target(&rec);
		if (!uri)
			continue;
		note(p->by_uri, uri, file, rec.offset);
		note(p->by_surt, surt_of(p, uri), file, rec.offset);
		if (strcmp(type, "response") == 0) {
			note(p->by_id, sc_warc_get(&rec, "WARC-Record-ID"), file, rec.offset);
			note(p->by_digest, sc_warc_get(&rec, "WARC-Payload-Digest"), file,
			     rec.offset);
		}
		free(uri);
	}
	/* The index is made: the reader goes back to each record by offset. */
	return 0;
}

int replay_init(struct render *r, char *err, size_t errlen)
{
	if (!r->opts.nfrom)
		return 0;
	struct replay *p = sc_calloc(1, sizeof(*p));
	r->replay = p;
	p->by_uri = json_object();
	p->by_surt = json_object();
	p->by_id = json_object();
	p->by_digest = json_object();
	sc_buf_init(&p->surt, (size_t)1 << 20);
	sc_buf_init(&p->chunks, (size_t)-1 / 2);
	sc_buf_init(&p->decoded, (size_t)-1 / 2);
	for (int i = 0; i < r->opts.nfrom; i++) {
		p->nfiles = i + 1;
		if (index_file(p, i, r->opts.from_warc[i], err, errlen) < 0)
			return -1;
	}
	return 0;
}

void replay_free(struct render *r)
{
	struct replay *p = r->replay;

	if (!p)
		return;
	for (int i = 0; i < p->nfiles; i++)
		sc_warc_reader_close(p->files[i]);
	json_decref(p->by_uri);
	json_decref(p->by_surt);
	json_decref(p->by_id);
	json_decref(p->by_digest);
	sc_buf_free(&p->surt);
	sc_buf_free(&p->chunks);
	sc_buf_free(&p->decoded);
	free(p);
	r->replay = NULL;
}

/* The record an index entry names; false if it cannot be read again. */
static bool read_at(struct replay *p, const json_t *where, struct sc_warc_rec *rec)
{
	struct sc_warc_problem problem;
	int file = (int)json_integer_value(json_array_get(where, 0));

	if (!where || file < 0 || file >= p->nfiles)
		return false;
	return sc_warc_reader_at(p->files[file],
	                         (uint64_t)json_integer_value(json_array_get(where, 1)), rec,
	                         &problem) == SC_WARC_RECORD;
}

/* A revisit's original: the response it names, or one of its payload,
 * or one of its original's URI. */
static const json_t *original(struct replay *p, const struct sc_warc_rec *rec)
{
	const char *id = sc_warc_get(rec, "WARC-Refers-To");
	const char *digest = sc_warc_get(rec, "WARC-Payload-Digest");
	const char *uri = sc_warc_get(rec, "WARC-Refers-To-Target-URI");
	const json_t *w = id ? json_object_get(p->by_id, id) : NULL;

	if (!w && digest)
		w = json_object_get(p->by_digest, digest);
	if (!w && uri)
		w = json_object_get(p->by_uri, uri);
	return w;
}

struct headers {
	json_t *list;
};

static void add_header(const char *name, const char *value, void *ctx)
{
	struct headers *h = ctx;

	/* The payload is given decoded and whole. */
	if (strcasecmp(name, "Content-Encoding") == 0 ||
	    strcasecmp(name, "Transfer-Encoding") == 0 || strcasecmp(name, "Content-Length") == 0)
		return;
	json_array_append_new(h->list, json_pack("{s:s,s:s}", "name", name, "value", value));
}

/* The payload of msg decoded into p->decoded; false if it cannot be. */
static bool decode(struct replay *p, const struct sc_warc_http *msg)
{
	const char *body = msg->payload;
	size_t len = msg->payload_len;
	char why[128];

	sc_buf_reset(&p->chunks);
	sc_buf_reset(&p->decoded);
	if (sc_warc_http_has_token(msg, "Transfer-Encoding", "chunked")) {
		(void)sc_warc_dechunk(body, len, &p->chunks);
		body = p->chunks.p ? p->chunks.p : "";
		len = p->chunks.len;
	}
	char *coding = sc_warc_http_field(msg, "Content-Encoding");
	int rc = sc_warc_content_decode(coding, body, len, &p->decoded, why, sizeof(why));
	free(coding);
	return rc == 0;
}

/* Answers the request from the record at where; false when it cannot. */
static bool answer(struct render *r, struct tab *t, const char *request_id, const json_t *where)
{
	struct replay *p = r->replay;
	struct sc_warc_rec rec;
	struct sc_warc_http msg, body_msg;

	if (!read_at(p, where, &rec) ||
	    !sc_warc_http_split(rec.block, (size_t)rec.content_length, &msg) || msg.status < 100)
		return false;
	struct headers h = { json_array() };
	sc_warc_http_fields(&msg, add_header, &h);
	int status = msg.status;
	const char *type = sc_warc_get(&rec, "WARC-Type");
	body_msg = msg;
	if (type && strcmp(type, "revisit") == 0) {
		/* Its header is kept (copied: the original's read replaces the
		 * buffer), its payload is the original's.  A 304's original is
		 * the answer whole. */
		const json_t *o = original(p, &rec);
		bool not_modified = status == 304;
		if (!o || !read_at(p, o, &rec) ||
		    !sc_warc_http_split(rec.block, (size_t)rec.content_length, &body_msg)) {
			json_decref(h.list);
			return false;
		}
		if (not_modified) {
			json_array_clear(h.list);
			sc_warc_http_fields(&body_msg, add_header, &h);
			status = body_msg.status;
		}
	}
	if (!decode(p, &body_msg)) {
		json_decref(h.list);
		return false;
	}
	size_t len = p->decoded.len;
	char *b64 = sc_malloc((len + 2) / 3 * 4 + 1);
	b64[sc_base64_encode((const unsigned char *)(p->decoded.p ? p->decoded.p : ""), len, b64)] =
	        '\0';
	browser_send(&r->b, t->session, "Fetch.fulfillRequest",
	             json_pack("{s:s,s:i,s:o,s:s}", "requestId", request_id, "responseCode", status,
	                       "responseHeaders", h.list, "body", b64));
	free(b64);
	return true;
}

void replay_paused(struct render *r, struct tab *t, const json_t *params)
{
	struct replay *p = r->replay;
	const char *id = str(params, "requestId");
	const char *url = str(json_object_get(params, "request"), "url");
	const json_t *where = url ? json_object_get(p->by_uri, url) : NULL;

	if (!where && url && surt_of(p, url))
		where = json_object_get(p->by_surt, p->surt.p);
	if (where && answer(r, t, id, where))
		return;
	browser_send(
	        &r->b, t->session, "Fetch.failRequest",
	        json_pack("{s:s,s:s}", "requestId", id, "errorReason", "InternetDisconnected"));
	t->failed++; /* counted now: its loadingFailed may come after the record */
	if (!t->missing)
		t->missing = json_array();
	size_t i;
	const json_t *v;
	json_array_foreach(t->missing, i,
	                   v) if (url && strcmp(json_string_value(v), url) == 0) return;
	json_array_append_new(t->missing, json_string(url ? url : ""));
	const char *type = str(params, "resourceType");
	if (type && strcmp(type, "Document") == 0 && t->target && str(params, "frameId") &&
	    strcmp(str(params, "frameId"), t->target) == 0 && !t->refused_doc) {
		char why[600];
		snprintf(why, sizeof(why), "not in the archive: %.500s", url ? url : "");
		t->refused_doc = sc_strdup(why);
	}
}
