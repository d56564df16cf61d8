/* sc-warc records: response records (and revisits, with their original's
 * payload when it is in the files given) back into the fetch records
 * sc-fetch writes (sc-record(5)), so that a crawl can be parsed again
 * without the network.
 *
 * The body is decoded as sc-fetch's libcurl decodes it: the chunked
 * transfer coding removed, then each Content-Encoding (gzip, deflate, br)
 * undone; no charset is converted (sc-fetch converts none): a body that is
 * UTF-8 is "body", any other is "body_base64".  A revisit whose original
 * comes later in the files waits for the end, so its record comes after
 * the others. */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/signals.h"
#include "core/utf8.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/jsonstr.h"
#include "record/metrics.h"
#include "record/record.h"
#include "sc-warc.h"
#include "warc/capture.h"
#include "warc/http.h"
#include "warc/reader.h"

#define BODY_MAX ((size_t)1 << 30)

struct records {
	char **files;
	const struct warc_options *o;
	struct sc_warc_reader **lookup;     /* per file, for originals; lazily opened */
	json_t *by_id, *by_digest, *by_uri; /* -> [file, offset] of a response */
	json_t *deferred;                   /* [file, offset] of waiting revisits */
	struct sc_buf chunks, decoded, scratch;
	struct sc_buf line;     /* the output line being made */
	const char *body;       /* the decoded body (decode_body) */
	char decode_error[128]; /* why decode_body could not */
	size_t body_len;
	uint64_t written, failed;
	bool problems;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The target URI without angle brackets (WARC/1.0 files have them). */
static char *target_uri(const struct sc_warc_rec *rec)
{
	const char *uri = sc_warc_get(rec, "WARC-Target-URI");
	size_t n = uri ? strlen(uri) : 0;

	if (n >= 2 && uri[0] == '<' && uri[n - 1] == '>')
		return sc_strndup(uri + 1, n - 2);
	return uri ? sc_strdup(uri) : NULL;
}

/* A WARC-Date as sc-fetch's fetched_at: milliseconds always. */
static json_t *fetched_at(const struct sc_warc_rec *rec)
{
	const char *d = sc_warc_get(rec, "WARC-Date");
	char out[32];

	if (!d || strlen(d) < 19)
		return json_null();
	const char *frac = d[19] == '.' ? d + 20 : "";
	char ms[4] = "000";
	for (int i = 0; i < 3 && isdigit((unsigned char)*frac); i++)
		ms[i] = *frac++;
	snprintf(out, sizeof(out), "%.19s.%sZ", d, ms);
	return json_string(out);
}

struct header_obj {
	json_t *obj;
};

static void add_header(const char *name, const char *value, void *ctx)
{
	struct header_obj *h = ctx;
	char *lower = sc_strdup(name);

	for (char *p = lower; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	json_t *prev = json_object_get(h->obj, lower);
	if (prev) {
		const char *sep = strcmp(lower, "set-cookie") == 0 ? "\n" : ", ";
		struct sc_buf joined;
		sc_buf_init(&joined, (size_t)-1 / 2);
		sc_buf_add(&joined, json_string_value(prev), json_string_length(prev));
		sc_buf_adds(&joined, sep);
		sc_buf_adds(&joined, value);
		json_object_set_new(h->obj, lower, sc_json_string_lossy(joined.p, joined.len));
		sc_buf_free(&joined);
	} else {
		json_object_set_new(h->obj, lower, sc_json_string_lossy(value, strlen(value)));
	}
	free(lower);
}

static json_t *http_version(const struct sc_warc_rec *rec, const struct sc_warc_http *msg)
{
	const char *proto = sc_warc_get(rec, "WARC-Protocol");

	if (proto && strncasecmp(proto, "h2", 2) == 0)
		return json_string("2");
	if (proto && strncasecmp(proto, "h3", 2) == 0)
		return json_string("3");
	if (msg->head_len > 8 && memcmp(msg->head, "HTTP/1.", 7) == 0)
		return json_string(msg->head[7] == '0' ? "1.0" : "1.1");
	return json_null();
}

/* The payload of msg, transfer and content decoding undone: r->body and
 * r->body_len (the payload itself, or one of r's buffers).  Returns NULL,
 * or why it could not be decoded. */
static const char *decode_body(struct records *r, const struct sc_warc_http *msg)
{
	const char *why = NULL;

	r->body = msg->payload;
	r->body_len = msg->payload_len;
	if (sc_warc_http_has_token(msg, "Transfer-Encoding", "chunked")) {
		sc_buf_reset(&r->chunks);
		if (sc_warc_dechunk(r->body, r->body_len, &r->chunks) != 0)
			return "incomplete response (a chunked body cut short)";
		r->body = r->chunks.p ? r->chunks.p : "";
		r->body_len = r->chunks.len;
	}
	char *codings = sc_warc_http_field(msg, "Content-Encoding");
	/* Undone last to first, as they were applied first to last. */
	for (char *c = codings ? codings + strlen(codings) : NULL; c && !why;) {
		char *end = c;
		while (c > codings && c[-1] != ',')
			c--;
		char *s = c;
		while (s < end && isspace((unsigned char)*s))
			s++;
		while (end > s && isspace((unsigned char)end[-1]))
			end--;
		*end = '\0';
		if (*s && strcasecmp(s, "identity") != 0) {
			sc_buf_reset(&r->scratch);
			if (sc_warc_content_decode(s, r->body, r->body_len, &r->scratch,
			                           r->decode_error, sizeof(r->decode_error)) == 0) {
				struct sc_buf t = r->decoded;
				r->decoded = r->scratch;
				r->scratch = t;
				r->body = r->decoded.p ? r->decoded.p : "";
				r->body_len = r->decoded.len;
			} else {
				why = r->decode_error;
			}
		}
		if (c == codings)
			break;
		c--;
	}
	free(codings);
	return why;
}

/* The parts of one output record. */
struct capture {
	const struct sc_warc_rec *rec; /* the response or revisit */
	const char *file;
	const struct sc_warc_http *meta; /* status and fields from here */
	const struct sc_warc_http *body; /* payload from here, or NULL */
	bool truncated;
	bool not_modified;
	bool has_body; /* r->body is to be written */
	const char *error;
	enum sc_error_kind kind;
};

static void fill_body(struct records *r, json_t *obj, struct capture *c)
{
	const char *why;

	c->has_body = false;
	if (c->not_modified || !c->body) {
		json_object_set_new(obj, "bytes", json_integer(0));
	} else if (c->truncated) {
		json_object_set_new(obj, "bytes", json_integer(0));
		if (!c->error) {
			c->error = "body cut short when archived (WARC-Truncated)";
			c->kind = SC_ERR_TOO_LARGE;
		}
	} else if ((why = decode_body(r, c->body))) {
		json_object_set_new(obj, "bytes", json_integer(0));
		if (!c->error) {
			c->error = why;
			c->kind = strncmp(why, "incomplete", 10) == 0 ? SC_ERR_NETWORK
			                                              : SC_ERR_INTERNAL;
		}
	} else {
		json_object_set_new(obj, "bytes", json_integer((json_int_t)r->body_len));
		c->has_body = true;
	}
}

/* Writes obj with the body as sc-fetch writes it: spliced in last, without
 * a copy through jansson, when it is UTF-8 without NUL; else as
 * body_base64, before "error". */
static void write_record(struct records *r, json_t *obj, bool has_body)
{
	char *text;
	int rc;

	if (!has_body) {
		json_object_set_new(obj, "body", json_null());
		rc = sc_record_write(stdout, obj);
	} else if (!(text = json_dumps(obj, SC_JSON_FLAGS))) {
		sc_die(SC_EXIT_FAILURE, "out of memory");
	} else {
		struct sc_buf *line = &r->line;
		size_t len = strlen(text);
		sc_buf_shrink(line, (size_t)16 << 20);
		int ok = sc_buf_add(line, text, len - 1) == 0 &&
		         sc_buf_adds(line, ",\"body\":\"") == 0 &&
		         sc_jsonstr_escape_checked(line, r->body, r->body_len, SC_JSONSTR_NO_NUL) ==
		                 SC_JSONSTR_OK &&
		         sc_buf_adds(line, "\"}") == 0;
		free(text);
		if (ok) {
			rc = sc_record_write_raw(stdout, line->p, line->len);
		} else {
			json_object_set_new(obj, "body_base64",
			                    sc_json_base64(r->body, r->body_len));
			json_t *error = json_object_get(obj, "error");
			if (error) {
				json_incref(error);
				json_object_del(obj, "error");
				json_object_set_new(obj, "error", error);
			}
			rc = sc_record_write(stdout, obj);
		}
	}
	if (rc != 0)
		sc_die_write("error writing standard output:");
}

static void emit(struct records *r, struct capture *c)
{
	char *uri = target_uri(c->rec);
	char *ctype = sc_warc_http_field(c->meta, "Content-Type");
	int status = c->meta->status;
	char message[64];
	json_t *obj = json_object();

	json_object_set_new(obj, "url", uri ? json_string(uri) : json_null());
	json_object_set_new(obj, "final_url", uri ? json_string(uri) : json_null());
	json_object_set_new(obj, "status", status ? json_integer(status) : json_null());
	json_object_set_new(obj, "ok", json_true());
	json_object_set_new(obj, "content_type",
	                    ctype ? sc_json_string_lossy(ctype, strlen(ctype)) : json_null());
	if (status == 304 && !c->body)
		c->not_modified = true;
	fill_body(r, obj, c);
	json_object_set_new(obj, "fetched_at", fetched_at(c->rec));
	if (c->not_modified)
		json_object_set_new(obj, "not_modified", json_true());
	if (r->o->headers) {
		struct header_obj h = { json_object() };
		sc_warc_http_fields(c->meta, add_header, &h);
		json_object_set_new(obj, "http_version", http_version(c->rec, c->meta));
		json_object_set_new(obj, "headers", h.obj);
	}
	json_object_set_new(obj, "warc",
	                    json_pack("{s:s, s:I, s:I}", "filename", base_name(c->file), "offset",
	                              (json_int_t)c->rec->offset, "length",
	                              (json_int_t)c->rec->length));
	const char *error = c->error;
	enum sc_error_kind kind = c->kind;
	if (!error && !c->not_modified && (status < 200 || status > 299)) {
		snprintf(message, sizeof(message), "HTTP %d", status);
		error = message;
		kind = SC_ERR_HTTP;
	}
	if (error) {
		sc_record_set_error(obj, kind, error);
		r->failed++;
	}
	write_record(r, obj, c->has_body);
	r->written++;
	json_decref(obj);
	free(uri);
	free(ctype);
}

static json_t *place(int file, uint64_t offset)
{
	return json_pack("[i, I]", file, (json_int_t)offset);
}

/* A response's identifiers, for the revisits that name it. */
static void remember(struct records *r, int file, const struct sc_warc_rec *rec)
{
	const char *id = sc_warc_get(rec, "WARC-Record-ID");
	const char *digest = sc_warc_get(rec, "WARC-Payload-Digest");
	char *uri = target_uri(rec);

	if (id)
		json_object_set_new(r->by_id, id, place(file, rec->offset));
	if (digest && !json_object_get(r->by_digest, digest))
		json_object_set_new(r->by_digest, digest, place(file, rec->offset));
	if (uri)
		json_object_set_new(r->by_uri, uri, place(file, rec->offset));
	free(uri);
}

/* The revisit's original, if it is known: [file, offset], borrowed. */
static json_t *find_original(struct records *r, const struct sc_warc_rec *rec)
{
	const char *refers = sc_warc_get(rec, "WARC-Refers-To");
	const char *digest = sc_warc_get(rec, "WARC-Payload-Digest");
	const char *uri = sc_warc_get(rec, "WARC-Refers-To-Target-URI");
	json_t *at = refers ? json_object_get(r->by_id, refers) : NULL;

	if (!at && digest)
		at = json_object_get(r->by_digest, digest);
	if (!at) {
		char *own = target_uri(rec);
		at = json_object_get(r->by_uri, uri ? uri : own ? own : "");
		free(own);
	}
	return at;
}

static void revisit(struct records *r, int file, const struct sc_warc_rec *rec, bool last_pass)
{
	struct sc_warc_http meta, body;
	struct sc_warc_rec orig;
	struct sc_warc_problem problem;
	const char *profile = sc_warc_get(rec, "WARC-Profile");
	bool not_modified = profile && strstr(profile, "server-not-modified");
	json_t *at = find_original(r, rec);
	struct capture c = { .rec = rec, .file = r->files[file], .meta = &meta };

	sc_warc_http_split(rec->block, (size_t)rec->content_length, &meta);
	if (!at && !last_pass) {
		json_array_append_new(r->deferred, place(file, rec->offset));
		return;
	}
	if (at) {
		int of = (int)json_integer_value(json_array_get(at, 0));
		uint64_t off = (uint64_t)json_integer_value(json_array_get(at, 1));
		char err[600];
		if (!r->lookup[of])
			r->lookup[of] = sc_warc_reader_open(r->files[of], err, sizeof(err));
		if (r->lookup[of] &&
		    sc_warc_reader_at(r->lookup[of], off, &orig, &problem) == SC_WARC_RECORD) {
			sc_warc_http_split(orig.block, (size_t)orig.content_length, &body);
			c.body = &body;
			c.truncated = sc_warc_get(&orig, "WARC-Truncated") != NULL;
			if (not_modified)
				c.meta = &body;
		}
	}
	if (!c.body && !not_modified) {
		c.error = "revisit: its original record is not in the files given";
		c.kind = SC_ERR_INTERNAL;
	}
	emit(r, &c);
}

static void one_record(struct records *r, int file, const struct sc_warc_rec *rec)
{
	const char *type = sc_warc_get(rec, "WARC-Type");
	struct sc_warc_http msg;

	if (!type)
		return;
	if (strcmp(type, "response") == 0) {
		struct capture c = {
			.rec = rec, .file = r->files[file], .meta = &msg, .body = &msg
		};
		sc_warc_http_split(rec->block, (size_t)rec->content_length, &msg);
		c.truncated = sc_warc_get(rec, "WARC-Truncated") != NULL;
		remember(r, file, rec);
		emit(r, &c);
	} else if (strcmp(type, "revisit") == 0) {
		revisit(r, file, rec, false);
	}
}

static void read_file(struct records *r, int file)
{
	char err[600];
	struct sc_warc_reader *reader = sc_warc_reader_open(r->files[file], err, sizeof(err));
	struct sc_warc_rec rec;
	struct sc_warc_problem problem;
	enum sc_warc_next next;

	if (!reader) {
		sc_warn("%s", err);
		r->problems = true;
		return;
	}
	while (!sc_stop_signal &&
	       (next = sc_warc_reader_next(reader, &rec, &problem)) != SC_WARC_END) {
		if (next == SC_WARC_PROBLEM) {
			warc_report(r->files[file], problem.offset, problem.message);
			r->problems = true;
		} else {
			one_record(r, file, &rec);
		}
	}
	sc_warc_reader_close(reader);
}

/* The revisits whose originals came later, now that all are known. */
static void read_deferred(struct records *r)
{
	size_t i;
	json_t *at;

	json_array_foreach(r->deferred, i, at)
	{
		int file = (int)json_integer_value(json_array_get(at, 0));
		uint64_t off = (uint64_t)json_integer_value(json_array_get(at, 1));
		char err[600];
		struct sc_warc_reader *reader =
		        sc_warc_reader_open(r->files[file], err, sizeof(err));
		struct sc_warc_rec rec;
		struct sc_warc_problem problem;
		if (reader && sc_warc_reader_at(reader, off, &rec, &problem) == SC_WARC_RECORD)
			revisit(r, file, &rec, true);
		sc_warc_reader_close(reader);
	}
}

int warc_records(char **files, int nfiles, const struct warc_options *o)
{
	struct records r = { .files = files, .o = o };

	r.lookup = sc_calloc((size_t)nfiles, sizeof(*r.lookup));
	r.by_id = json_object();
	r.by_digest = json_object();
	r.by_uri = json_object();
	r.deferred = json_array();
	/* A decoded body stops at 1 GiB: a small bomb in an archive must not
	 * take the machine's memory. */
	sc_buf_init(&r.chunks, BODY_MAX);
	sc_buf_init(&r.decoded, BODY_MAX);
	sc_buf_init(&r.scratch, BODY_MAX);
	sc_buf_init(&r.line, 8 * BODY_MAX);
	for (int i = 0; i < nfiles && !sc_stop_signal; i++)
		read_file(&r, i);
	if (!sc_stop_signal)
		read_deferred(&r);
	for (int i = 0; i < nfiles; i++)
		sc_warc_reader_close(r.lookup[i]);
	free(r.lookup);
	json_decref(r.by_id);
	json_decref(r.by_digest);
	json_decref(r.by_uri);
	json_decref(r.deferred);
	sc_buf_free(&r.chunks);
	sc_buf_free(&r.decoded);
	sc_buf_free(&r.scratch);
	sc_buf_free(&r.line);
	if (!o->quiet) {
		json_t *sum = json_pack("{s:i, s:I, s:I}", "files", nfiles, "records",
		                        (json_int_t)r.written, "failed", (json_int_t)r.failed);
		sc_metrics_write(stderr, sum);
		json_decref(sum);
	}
	return r.failed || r.problems ? SC_EXIT_PARTIAL : SC_EXIT_OK;
}
