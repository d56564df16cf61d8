/* fetch_warc: --warc, what each attempt put on the wire kept as WARC/1.1
 * records (issue 20; the records themselves are lib/warc's).  Owns the
 * writer and the --warc-dedupe index (struct fetch_warc) and, per
 * transfer, the exchanges seen so far (struct warc_xfer): the request
 * header and body as sent (libcurl's debug callback, CURLINFO_HEADER_OUT
 * and DATA_OUT), each response head as received (the header callback,
 * with the connection's TLS version) and its body bytes as received
 * (CURLINFO_DATA_IN): the response record's block keeps them, chunks and
 * content coding and all; its payload digest is over them with the
 * chunked transfer coding removed.
 *
 * The record's body is left to libcurl as without --warc (decoded by it,
 * cut by --max-bytes as before), so a record is byte for byte what it
 * would be, but for its "warc" member.  A redirect libcurl follows is one
 * more exchange on the same transfer: a new request header begins it.
 * Each exchange whose response head came whole is a capture: request,
 * response (or revisit) and metadata records sharing its WARC-Date. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/ssl.h>

#include "core/protocol.h"
#include "core/version.h"
#include "engine/fetch_engine.h"
#include "kit/cli.h"
#include "warc/capture.h"
#include "warc/dedupe.h"
#include "warc/http.h"
#include "warc/record.h"
#include "warc/writer.h"
#include "web/robots.h"

/* A request or response head's buffer larger than this is freed after
 * its attempt rather than kept for the next. */
#define HEAD_KEEP_MAX (16 * 1024)

/* One request and its response as they crossed the wire. */
struct warc_hop {
	struct sc_buf request; /* the header as sent, then the body sent */
	struct sc_buf head;    /* the last response's head as received (a 1xx
	                          before it dropped) */
	struct sc_buf raw;     /* its body as received, transfer coding and all */
	int64_t date_ms;       /* wall clock when the request went out */
	double sent_at;        /* monotonic, the same moment */
	char tls[16];          /* "tls/1.3": its connection's TLS version, or "" */
	char ip[64];           /* its connection's address, or "" */
	bool head_done;        /* the blank line that ends the head came */
	bool raw_cut;          /* raw stopped at its maximum */
};

struct warc_xfer {
	struct warc_hop *hops;
	size_t nhops, cap; /* in use; allocated (kept for the next transfer) */
	size_t raw_max;
};

struct fetch_warc {
	struct sc_warc_writer *writer;
	struct sc_warc_dedupe *dedupe;    /* --warc-dedupe's index, or NULL */
	CURLU *urlh;                      /* resolves each Location against its request */
	struct sc_buf head;               /* scratch: a response head in HTTP/1.1 form */
	struct sc_buf payload;            /* scratch: a chunked body decoded */
	struct sc_buf meta;               /* scratch: a metadata block */
	struct sc_buf request;            /* scratch: an HTTP/2 request in HTTP/1.1 form */
	struct sc_buf info;               /* the warcinfo block (the writer borrows it) */
	char *hop_url, *next_url;         /* the exchange's URL, the next one's (owned) */
	char *dir;                        /* the absolute folder of the files (owned) */
	struct sc_buf last_file;          /* the attempt's capture's file, or "" */
	struct sc_warc_revisit revisit;   /* the capture's, when it is one */
	struct sc_warc_original original; /* what it refers to */
	char error[256];                  /* why a capture was not written */
};

/* Whether --warc-info gave the field name (any case), which then
 * replaces sc-fetch's own. */
static bool user_field(const struct fetch_options *opts, const char *name)
{
	size_t n = strlen(name);

	for (const struct curl_slist *l = opts->warc_info; l; l = l->next)
		if (strncasecmp(l->data, name, n) == 0 && l->data[n] == ':')
			return true;
	return false;
}

static void own_field(const struct fetch_options *opts, struct sc_buf *b, const char *name,
                      const char *value)
{
	if (!user_field(opts, name))
		sc_warc_field_add(b, name, value);
}

/* The warcinfo block: what wrote the file and how, then --warc-info's
 * fields (operator, isPartOf, description: who ran the crawl, of what
 * collection, why), which replace one of the same name.  Its values were
 * refused with a CR, LF or NUL (the option table); argv[0], which no
 * option checks, and the rest go through the field writer all the same,
 * which leaves control characters out. */
static void warcinfo_text(const struct fetch_options *opts, struct sc_buf *b)
{
	const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	struct sc_buf v;

	sc_buf_init(&v, (size_t)1 << 20);
	sc_buf_printf(&v, "%s/%s (libcurl/%s)", sc_progname, SC_VERSION, cv->version);
	own_field(opts, b, "software", v.p);
	own_field(opts, b, "format", "WARC File Format 1.1");
	own_field(opts, b, "conformsTo",
	          "https://iipc.github.io/warc-specifications/specifications/"
	          "warc-format/warc-1.1/");
	own_field(opts, b, "http-header-user-agent", opts->user_agent);
	sc_buf_reset(&v);
	if (opts->robots) {
		/* The product token robots.txt is read for (fetch_robots). */
		char *token = opts->robots_agent ? sc_strdup(opts->robots_agent)
		                                 : sc_robots_product_token(opts->user_agent);
		sc_buf_printf(&v, "obey (as %s)", token);
		free(token);
	}
	own_field(opts, b, "robots", opts->robots ? v.p : "ignore");
	if (opts->command_line)
		own_field(opts, b, "command-line", opts->command_line);
	for (const struct curl_slist *l = opts->warc_info; l; l = l->next) {
		const char *colon = strchr(l->data, ':');
		char *name = sc_strndup(l->data, (size_t)(colon - l->data));
		sc_warc_field_add(b, name, colon + 2);
		free(name);
	}
	sc_buf_free(&v);
}

bool fetch_warc_init(struct fetch_engine *e, char *err, size_t errlen)
{
	const struct fetch_options *opts = e->opts;

	if (!opts->warc_path)
		return true;
	struct fetch_warc *w = sc_calloc(1, sizeof(*w));
	struct sc_buf *info = &w->info;
	sc_buf_init(info, (size_t)1 << 20);
	warcinfo_text(opts, info);
	struct sc_warc_writer_options wo = {
		.path = opts->warc_path,
		.level = (int)opts->warc_level,
		.max_size = (uint64_t)opts->warc_max_size,
		.cdx = opts->warc_cdx,
		.info = info->p,
		.info_len = info->len,
	};
	char why[512];
	/* The index first: a run that cannot use it leaves no archive. */
	if (opts->warc_dedupe_path &&
	    !(w->dedupe = sc_warc_dedupe_open(opts->warc_dedupe_path, why, sizeof(why)))) {
		snprintf(err, errlen, "--warc-dedupe: %.230s", why);
		sc_buf_free(info);
		free(w);
		return false;
	}
	w->writer = sc_warc_writer_open(&wo, why, sizeof(why));
	if (!w->writer) {
		snprintf(err, errlen, "--warc: %.240s", why);
		sc_warc_dedupe_close(w->dedupe);
		sc_buf_free(info);
		free(w);
		return false;
	}
	/* The folder's absolute path, for the robots cache's entries to name
	 * their archive by (the process's working folder is not theirs). */
	const char *slash = strrchr(opts->warc_path, '/');
	char *folder = slash ? sc_strndup(opts->warc_path, (size_t)(slash - opts->warc_path))
	                     : sc_strdup(".");
	w->dir = realpath(folder[0] ? folder : "/", NULL);
	free(folder);
	sc_buf_init(&w->last_file, 8192);
	w->urlh = curl_url();
	if (!w->urlh)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	sc_buf_init(&w->head, (size_t)-1 / 2);
	sc_buf_init(&w->payload, (size_t)-1 / 2);
	sc_buf_init(&w->meta, (size_t)1 << 20);
	sc_buf_init(&w->request, (size_t)-1 / 2);
	e->warc = w;
	return true;
}

bool fetch_warc_free(struct fetch_engine *e, char *err, size_t errlen)
{
	struct fetch_warc *w = e->warc;
	char why[512];
	bool ok = true;

	if (!w)
		return true;
	if (sc_warc_writer_close(w->writer, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "--warc: %.240s", why);
		ok = false;
	}
	sc_warc_dedupe_close(w->dedupe);
	curl_url_cleanup(w->urlh);
	sc_buf_free(&w->head);
	sc_buf_free(&w->payload);
	sc_buf_free(&w->meta);
	sc_buf_free(&w->request);
	sc_buf_free(&w->info);
	free(w->hop_url);
	free(w->next_url);
	free(w->dir);
	sc_buf_free(&w->last_file);
	free(w);
	e->warc = NULL;
	return ok;
}

static void hop_init(struct warc_hop *hop, size_t raw_max)
{
	sc_buf_init(&hop->request, (size_t)-1 / 2);
	sc_buf_init(&hop->head, (size_t)-1 / 2);
	sc_buf_init(&hop->raw, raw_max);
}

/* An exchange begins: its request is going out now. */
static struct warc_hop *hop_begin(struct warc_hop *hop)
{
	sc_buf_reset(&hop->request);
	sc_buf_reset(&hop->head);
	sc_buf_reset(&hop->raw);
	hop->head_done = hop->raw_cut = false;
	hop->tls[0] = hop->ip[0] = '\0';
	hop->date_ms = sc_wall_ms();
	hop->sent_at = sc_now_ms();
	return hop;
}

/* One more exchange on the transfer, its buffers kept from the last. */
static struct warc_hop *hop_new(struct warc_xfer *wx)
{
	if (wx->nhops == wx->cap || !wx->hops) {
		size_t cap = wx->cap ? wx->cap * 2 : 4;
		wx->hops = sc_realloc(wx->hops, cap * sizeof(*wx->hops));
		for (size_t i = wx->cap; i < cap; i++)
			hop_init(&wx->hops[i], wx->raw_max);
		wx->cap = cap;
	}
	return &wx->hops[wx->nhops++];
}

/* The exchange a request header being sent belongs to: a new one after a
 * response came (a redirect followed), the same one while its header is
 * still going out, and the same one begun again when libcurl sends it
 * anew (a reused connection found dead) with no answer between. */
static struct warc_hop *request_hop(struct warc_xfer *wx)
{
	if (wx->nhops > 0) {
		struct warc_hop *hop = &wx->hops[wx->nhops - 1];
		size_t n = hop->request.len;
		if (hop->head.len == 0 &&
		    (n < 4 || memcmp(hop->request.p + n - 4, "\r\n\r\n", 4) != 0))
			return hop;
		if (hop->head.len == 0)
			return hop_begin(hop);
	}
	return hop_begin(hop_new(wx));
}

static int on_debug(CURL *easy, curl_infotype type, char *data, size_t n, void *userp)
{
	struct warc_xfer *wx = userp;
	struct warc_hop *hop = wx->nhops ? &wx->hops[wx->nhops - 1] : NULL;

	(void)easy;
	if (type == CURLINFO_HEADER_OUT) {
		sc_buf_add(&request_hop(wx)->request, data, n);
	} else if (type == CURLINFO_DATA_OUT && hop && hop->head.len == 0) {
		sc_buf_add(&hop->request, data, n);
	} else if (type == CURLINFO_DATA_IN && hop && hop->head_done && !hop->raw_cut) {
		if (sc_buf_add(&hop->raw, data, n) != 0)
			hop->raw_cut = true;
	}
	return 0;
}

void fetch_warc_setup(struct fetch_engine *e, struct transfer *xfer)
{
	if (!e->warc)
		return;
	if (!xfer->warc) {
		xfer->warc = sc_calloc(1, sizeof(*xfer->warc));
		/* Room for the body as --max-bytes lets it be, its chunk framing
		 * and what arrives before libcurl stops it. */
		xfer->warc->raw_max = 2 * fetch_body_max(e->opts) + ((size_t)1 << 20);
	}
	xfer->warc->nhops = 0;
	curl_easy_setopt(xfer->easy, CURLOPT_DEBUGFUNCTION, on_debug);
	curl_easy_setopt(xfer->easy, CURLOPT_DEBUGDATA, xfer->warc);
	curl_easy_setopt(xfer->easy, CURLOPT_VERBOSE, 1L);
}

/* The TLS version of the connection a response is coming on, as
 * WARC-Protocol names it ("tls/1.3"), into out; "" when it is not TLS
 * (or not OpenSSL's, the one libcurl backend whose session this reads). */
static void tls_version(CURL *easy, char out[16])
{
	struct curl_tlssessioninfo *info = NULL;

	out[0] = '\0';
	if (curl_easy_getinfo(easy, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || !info ||
	    info->backend != CURLSSLBACKEND_OPENSSL || !info->internals)
		return;
	const char *v = SSL_get_version(info->internals); /* "TLSv1.3" */
	if (strncmp(v, "TLSv", 4) == 0)
		snprintf(out, 16, "tls/%.8s", v + 4);
}

void fetch_warc_header(struct transfer *xfer, const char *line, size_t n)
{
	struct warc_xfer *wx = xfer->warc;
	struct warc_hop *hop = wx && wx->nhops ? &wx->hops[wx->nhops - 1] : NULL;

	if (!hop)
		return;
	if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
		/* A new response: an interim 1xx before it is not kept. */
		sc_buf_reset(&hop->head);
		sc_buf_reset(&hop->raw);
		hop->head_done = false;
		tls_version(xfer->easy, hop->tls);
		/* Asked now, while it is this exchange's connection: at the
		 * attempt's end libcurl knows only the last one's. */
		char *ip = NULL;
		curl_easy_getinfo(xfer->easy, CURLINFO_PRIMARY_IP, &ip);
		snprintf(hop->ip, sizeof(hop->ip), "%s", ip ? ip : "");
	}
	sc_buf_add(&hop->head, line, n);
	if (n > 2 || (line[0] != '\r' && line[0] != '\n'))
		return;
	/* An interim 1xx ("100 Continue") is not the answer: the request's
	 * body may follow it, and the response after. */
	const char *sp = memchr(hop->head.p, ' ', hop->head.len);
	if (sp && (size_t)(sp - hop->head.p) + 1 < hop->head.len && sp[1] == '1')
		sc_buf_reset(&hop->head);
	else
		hop->head_done = true;
}

void fetch_warc_xfer_free(struct transfer *xfer)
{
	struct warc_xfer *wx = xfer->warc;

	if (!wx)
		return;
	for (size_t i = 0; i < wx->cap; i++) {
		sc_buf_free(&wx->hops[i].request);
		sc_buf_free(&wx->hops[i].head);
		sc_buf_free(&wx->hops[i].raw);
	}
	free(wx->hops);
	free(wx);
	xfer->warc = NULL;
}

/* A kept exchange's buffers, after the attempt: big ones are not kept. */
static void hops_shrink(struct warc_xfer *wx)
{
	for (size_t i = 0; i < wx->nhops; i++) {
		sc_buf_shrink(&wx->hops[i].request, HEAD_KEEP_MAX);
		sc_buf_shrink(&wx->hops[i].head, HEAD_KEEP_MAX);
		sc_buf_shrink(&wx->hops[i].raw, BODY_KEEP_MAX);
	}
	wx->nhops = 0;
}

/* w->next_url: msg's Location resolved against w->hop_url, or NULL. */
static void resolve_location(struct fetch_warc *w, const struct sc_warc_http *msg)
{
	char *location = sc_warc_http_field(msg, "Location"), *url = NULL;

	free(w->next_url);
	w->next_url = NULL;
	if (location && curl_url_set(w->urlh, CURLUPART_URL, w->hop_url, 0) == CURLUE_OK &&
	    curl_url_set(w->urlh, CURLUPART_URL, location, 0) == CURLUE_OK &&
	    curl_url_get(w->urlh, CURLUPART_URL, &url, 0) == CURLUE_OK) {
		w->next_url = sc_strdup(url);
		curl_free(url);
	}
	free(location);
}

/* WARC-Protocol of a head's status line. */
static const char *protocol_of(const struct warc_hop *hop)
{
	if (hop->head.len > 7 && memcmp(hop->head.p, "HTTP/2", 6) == 0)
		return "h2";
	if (hop->head.len > 7 && memcmp(hop->head.p, "HTTP/3", 6) == 0)
		return "h3";
	if (hop->head.len > 8 && memcmp(hop->head.p, "HTTP/1.0", 8) == 0)
		return "http/1.0";
	return "http/1.1";
}

/* Why the last exchange's body is short, or NULL when it is whole. */
static const char *truncation(const struct transfer *xfer, const struct warc_hop *hop,
                              const struct outcome *oc, bool last)
{
	if (hop->raw_cut || (last && xfer->too_large))
		return "length";
	if (!last)
		return NULL;
	switch (oc->kind) {
	case SC_ERR_TOO_LARGE:
		return "length";
	case SC_ERR_TIMEOUT:
		return "time";
	case SC_ERR_NETWORK:
		return "disconnect";
	case SC_ERR_CANCELLED:
		return "unspecified";
	default:
		return NULL;
	}
}

/* The metadata block: the fetch's own figures for this exchange. */
static void metadata_text(struct fetch_warc *w, const struct job *job, const struct warc_xfer *wx,
                          size_t i, const struct outcome *oc, double attempt_end)
{
	const struct warc_hop *hop = &wx->hops[i];
	bool last = i + 1 == wx->nhops;
	double until = last ? attempt_end : wx->hops[i + 1].sent_at;
	struct sc_buf *b = &w->meta;

	sc_buf_reset(b);
	sc_buf_printf(b, "fetchTimeMs: %.1f\r\n", until > hop->sent_at ? until - hop->sent_at : 0);
	sc_buf_printf(b, "attempt: %d\r\n", job->attempts);
	if (i > 0)
		sc_buf_printf(b, "redirectHop: %zu\r\n", i);
	sc_buf_printf(b, "outcome: %s\r\n",
	              !last          ? "redirect"
	              : oc->kind < 0 ? "ok"
	                             : sc_error_kind_name(oc->kind));
	if (job->robots_for)
		sc_buf_adds(b, "robots: robots.txt request\r\n");
	const json_t *depth = job->rec ? json_object_get(job->rec, "depth") : NULL;
	if (json_is_integer(depth))
		sc_buf_printf(b, "depth: %lld\r\n", (long long)json_integer_value(depth));
	/* A page's requisite (crawl.mk REQUISITES=1): Heritrix's hop letter
	 * for an embed, by which sc-warc wacz leaves it out of the pages. */
	if (job->rec && json_is_true(json_object_get(job->rec, "requisite")))
		sc_buf_adds(b, "hop: E\r\n");
	/* The record's own, as it came: left out rather than cut when it
	 * may not go on a line (core/protocol.h).  via is the page that
	 * linked here: sc-frontier's "from" (a record's own "via" else). */
	static const char *const links[][3] = { { "seed", "seed", NULL },
		                                { "via", "from", "via" } };
	for (size_t k = 0; k < 2; k++) {
		const json_t *v = NULL;
		for (size_t m = 1; m < 3 && links[k][m] && !json_is_string(v); m++)
			v = job->rec ? json_object_get(job->rec, links[k][m]) : NULL;
		if (json_is_string(v) &&
		    sc_protocol_value_ok(json_string_value(v), json_string_length(v)))
			sc_warc_field_add(b, links[k][0], json_string_value(v));
	}
}

/* A 304 is a revisit (server-not-modified), referring to the URI's last
 * archived payload when --warc-dedupe knows it; with --warc-dedupe, a
 * whole 2xx payload archived before is a revisit (identical-payload-
 * digest) of the record that holds it.  Returns whether the capture, if
 * written as a response, is one for the index to learn. */
static bool choose_revisit(struct fetch_warc *w, struct sc_warc_capture *c, int status)
{
	char digest[SC_WARC_SHA1_LEN];
	bool known = false;

	if (status == 304) {
		known = w->dedupe && sc_warc_dedupe_find_uri(w->dedupe, c->url, &w->original);
		w->revisit = (struct sc_warc_revisit){ .profile = SC_WARC_PROFILE_NOT_MODIFIED };
		c->revisit = &w->revisit;
	} else if (w->dedupe && status >= 200 && status < 300 && !c->truncated &&
	           c->payload_len > 0) {
		sc_warc_sha1(c->payload, c->payload_len, digest);
		if (!sc_warc_dedupe_find(w->dedupe, digest, &w->original))
			return true;
		known = true;
		w->revisit = (struct sc_warc_revisit){ .profile = SC_WARC_PROFILE_IDENTICAL };
		c->revisit = &w->revisit;
	}
	if (known) {
		w->revisit.refers_to = w->original.id;
		w->revisit.target_uri = w->original.uri;
		w->revisit.date = w->original.date;
	}
	return false;
}

/* The request as libcurl shows it, its request line in HTTP/1.1 form: an
 * HTTP/2 request has no request line on the wire, and libcurl's "GET /
 * HTTP/2" is written "GET / HTTP/1.1" (WARC-Protocol says h2), as its
 * response's status line is. */
static void request_as_http11(struct fetch_warc *w, const struct warc_hop *hop,
                              struct sc_warc_capture *c)
{
	const char *p = hop->request.p ? hop->request.p : "";
	const char *eol = memchr(p, '\r', hop->request.len);

	c->request = p;
	c->request_len = hop->request.len;
	if (!eol || eol - p < 7 ||
	    (memcmp(eol - 7, " HTTP/2", 7) != 0 && memcmp(eol - 7, " HTTP/3", 7) != 0))
		return;
	sc_buf_reset(&w->request);
	sc_buf_add(&w->request, p, (size_t)(eol - p) - 1);
	sc_buf_adds(&w->request, "1.1");
	sc_buf_add(&w->request, eol, hop->request.len - (size_t)(eol - p));
	c->request = w->request.p;
	c->request_len = w->request.len;
}

/* Writes exchange i of the attempt as a capture; *written its places. */
static int write_hop(struct fetch_warc *w, struct transfer *xfer, const struct job *job, size_t i,
                     const struct outcome *oc, double attempt_end, struct sc_warc_written *written)
{
	struct warc_xfer *wx = xfer->warc;
	struct warc_hop *hop = &wx->hops[i];
	bool last = i + 1 == wx->nhops;
	struct sc_warc_http msg;

	sc_buf_reset(&w->head);
	sc_warc_head_as_http11(hop->head.p, hop->head.len, &w->head);
	sc_warc_http_split(w->head.p, w->head.len, &msg);
	struct sc_warc_capture c = {
		.url = w->hop_url,
		.protocol = protocol_of(hop),
		.tls = hop->tls,
		.date_ms = hop->date_ms,
		.response = w->head.p,
		.response_len = w->head.len,
		.payload = hop->raw.p ? hop->raw.p : "",
		.payload_len = hop->raw.len,
		.truncated_why = truncation(xfer, hop, oc, last),
	};
	if (strncmp(c.protocol, "http/", 5) == 0 &&
	    sc_warc_http_has_token(&msg, "Transfer-Encoding", "chunked")) {
		sc_buf_reset(&w->payload);
		if (sc_warc_dechunk(hop->raw.p ? hop->raw.p : "", hop->raw.len, &w->payload) != 0 &&
		    !c.truncated_why)
			c.truncated_why = "unspecified";
		c.received = c.payload;
		c.received_len = c.payload_len;
		c.payload = w->payload.p ? w->payload.p : "";
		c.payload_len = w->payload.len;
	}
	request_as_http11(w, hop, &c);
	c.truncated = c.truncated_why != NULL;
	bool learn = choose_revisit(w, &c, msg.status);
	c.ip = hop->ip;
	resolve_location(w, &msg);
	metadata_text(w, job, wx, i, oc, attempt_end);
	c.metadata = w->meta.p;
	c.metadata_len = w->meta.len;
	if (sc_warc_write_capture(w->writer, &c, written) != 0) {
		snprintf(w->error, sizeof(w->error), "%.250s", sc_warc_writer_error(w->writer));
		return -1;
	}
	if (learn && sc_warc_dedupe_add(w->dedupe, written->payload_digest, written->id, c.url,
	                                written->date, w->error, sizeof(w->error)) != 0)
		return -1;
	return 0;
}

bool fetch_warc_attempt(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc, char *err, size_t errlen)
{
	struct fetch_warc *w = e->warc;
	struct sc_warc_written written;
	bool have_response = false;
	bool ok = true;

	if (!w)
		return true;
	sc_buf_reset(&w->last_file);
	job->captured_ms = 0;
	if (xfer && xfer->warc) {
		struct warc_xfer *wx = xfer->warc;
		double attempt_end = xfer->started + oc->latency_ms;
		free(w->hop_url);
		w->hop_url = sc_strdup(job->url);
		for (size_t i = 0; i < wx->nhops && ok; i++) {
			if (!wx->hops[i].head_done)
				continue;
			if (write_hop(w, xfer, job, i, oc, attempt_end, &written) != 0) {
				snprintf(err, errlen, "--warc: %.240s", w->error);
				ok = false;
				break;
			}
			have_response = i + 1 == wx->nhops;
			if (have_response)
				job->captured_ms = wx->hops[i].date_ms;
			if (w->dir) {
				sc_buf_reset(&w->last_file);
				sc_buf_printf(&w->last_file, "%s/%s", w->dir,
				              written.response.filename);
			}
			if (w->next_url) {
				free(w->hop_url);
				w->hop_url = w->next_url;
				w->next_url = NULL;
			}
		}
		hops_shrink(wx);
		sc_buf_shrink(&w->payload, BODY_KEEP_MAX);
		sc_buf_shrink(&w->head, HEAD_KEEP_MAX);
		sc_buf_shrink(&w->request, HEAD_KEEP_MAX);
	}
	if (job->rec && !job->robots_for) {
		json_t *loc = json_null();
		if (have_response && ok)
			loc = json_pack("{s:s, s:I, s:I}", "filename", written.response.filename,
			                "offset", (json_int_t)written.response.offset, "length",
			                (json_int_t)written.response.length);
		json_object_set_new(job->rec, "warc", loc);
	}
	return ok;
}

const char *fetch_warc_last_file(const struct fetch_engine *e)
{
	const struct fetch_warc *w = e->warc;

	return w && w->last_file.len ? w->last_file.p : NULL;
}
