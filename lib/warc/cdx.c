#include "warc/cdx.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wctype.h>

#include "core/utf8.h"
#include "core/util.h"
#include "warc/http.h"
#include "warc/json.h"
#include "warc/postkey.h"

/* Percent-encodes what the WHATWG URL parser would in a path or query. */
static void add_encoded(struct sc_buf *out, const char *s, size_t n, bool query)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool esc = c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' ||
		           (!query && (c == '`' || c == '{' || c == '}' || c == '?')) ||
		           (query && c == '\'');
		if (esc)
			sc_buf_printf(out, "%%%02X", c);
		else
			sc_buf_addc(out, (char)c);
	}
}

/* The path with "." and ".." segments resolved, appended to out. */
static void add_path(struct sc_buf *out, const char *p, size_t n)
{
	size_t start = out->len;

	if (n == 0 || p[0] != '/')
		sc_buf_addc(out, '/');
	for (size_t i = 0; i < n;) {
		size_t j = i;
		if (p[j] == '/')
			j++;
		size_t seg = j;
		while (j < n && p[j] != '/')
			j++;
		size_t len = j - seg;
		if (len == 1 && p[seg] == '.') {
			if (j >= n)
				sc_buf_addc(out, '/');
		} else if (len == 2 && p[seg] == '.' && p[seg + 1] == '.') {
			size_t cut = out->len;
			while (cut > start + 1 && out->p[cut - 1] == '/')
				cut--;
			while (cut > start && out->p[cut - 1] != '/')
				cut--;
			sc_buf_truncate(out, cut > start ? cut : start + 1);
			if (out->len == start)
				sc_buf_addc(out, '/');
		} else {
			if (out->len == start || out->p[out->len - 1] != '/')
				sc_buf_addc(out, '/');
			add_encoded(out, p + seg, len, false);
			if (j < n && j + 1 == n)
				sc_buf_addc(out, '/');
		}
		i = j;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_sorted_query(struct sc_buf *out, const char *q, size_t n)
{
	struct sc_buf enc;
	size_t count = 1;

	sc_buf_init(&enc, (size_t)-1 / 2);
	add_encoded(&enc, q, n, true);
	char *text = sc_buf_take(&enc, NULL);
	for (char *p = text; *p; p++)
		count += *p == '&';
	char **parts = sc_malloc(count * sizeof(*parts));
	size_t k = 0;
	for (char *p = text, *amp;; p = amp + 1) {
		parts[k++] = p;
		amp = strchr(p, '&');
		if (!amp)
			break;
		*amp = '\0';
	}
	qsort(parts, k, sizeof(*parts), cmp_str);
	sc_buf_addc(out, '?');
	for (size_t i = 0; i < k; i++) {
		if (i)
			sc_buf_addc(out, '&');
		sc_buf_adds(out, parts[i]);
	}
	free(parts);
	free(text);
}

/* The host part of the authority (no userinfo), reversed by labels. */
static void add_host(struct sc_buf *out, const char *h, size_t n)
{
	size_t end = n;

	while (end > 0) {
		size_t dot = end;
		while (dot > 0 && h[dot - 1] != '.')
			dot--;
		sc_buf_add(out, h + dot, end - dot);
		if (dot == 0)
			break;
		sc_buf_addc(out, ',');
		end = dot - 1;
	}
}

static bool default_port(const char *scheme_end_url, const char *port, size_t n)
{
	bool https = strncmp(scheme_end_url, "https:", 6) == 0;

	return (https && n == 3 && memcmp(port, "443", 3) == 0) ||
	       (!https && n == 2 && memcmp(port, "80", 2) == 0) || n == 0;
}

/* JavaScript's toLowerCase, in place, as far as a code point's simple
 * lower case (C.UTF-8's towlower) goes: a POST's key holds its decoded
 * body, letters of any script. */
static void lower_case(char *s)
{
	static locale_t utf8;
	char *o = s;

	for (const char *p = s; *p;) {
		unsigned char c = (unsigned char)*p;
		size_t k = c < 0x80 ? 1 : sc_utf8_seq_len((const unsigned char *)p, strlen(p));
		if (k <= 1) {
			*o++ = (char)tolower(c);
			p++;
			continue;
		}
		unsigned long cp = c & (0xff >> (k + 1));
		for (size_t i = 1; i < k; i++)
			cp = (cp << 6) | ((unsigned char)p[i] & 0x3f);
		if (!utf8)
			utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		unsigned long low = utf8 ? (unsigned long)towlower_l((wint_t)cp, utf8) : cp;
		char enc[4];
		size_t n = (size_t)(sc_utf8_put(enc, low) - enc);
		if (n > k) { /* not shorter in place: kept as it was */
			memmove(o, p, k);
			n = k;
		} else {
			memcpy(o, enc, n);
		}
		o += n;
		p += k;
	}
	*o = '\0';
}

/* A malloced copy of url as the WHATWG URL parser takes it in: tabs and
 * newlines removed, C0 controls and spaces at the end cut (a POST's key
 * may end in a decoded %1F). */
static char *url_parser_input(const char *url)
{
	char *u = sc_malloc(strlen(url) + 1), *o = u;

	for (const char *p = url; *p; p++)
		if (*p != '\t' && *p != '\n' && *p != '\r')
			*o++ = *p;
	while (o > u && (unsigned char)o[-1] <= 0x20)
		o--;
	*o = '\0';
	return u;
}

void sc_warc_surt(const char *url, struct sc_buf *out)
{
	if (strncmp(url, "http:", 5) != 0 && strncmp(url, "https:", 6) != 0) {
		sc_buf_adds(out, url);
		return;
	}
	char *u = url_parser_input(url);
	char *sep = strstr(u, "://");
	/* "www" and digits, then a dot, right after the scheme */
	if (sep && strncmp(sep + 3, "www", 3) == 0) {
		char *p = sep + 6;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == '.')
			memmove(sep + 3, p + 1, strlen(p + 1) + 1);
	}
	lower_case(u);
	char *auth = strchr(u, ':') + 1;
	while (*auth == '/')
		auth++;
	size_t auth_len = strcspn(auth, "/?#");
	char *rest = auth + auth_len;
	char *at = memrchr(auth, '@', auth_len);
	char *host = at ? at + 1 : auth;
	size_t host_len = auth_len - (size_t)(host - auth);
	char *colon = host[0] == '[' ? memchr(host, ']', host_len) : host;
	colon = colon ? memchr(colon, ':', host_len - (size_t)(colon - host)) : NULL;
	size_t name_len = colon ? (size_t)(colon - host) : host_len;
	add_host(out, host, name_len);
	if (colon && !default_port(u, colon + 1, host_len - name_len - 1)) {
		sc_buf_addc(out, ':');
		sc_buf_add(out, colon + 1, host_len - name_len - 1);
	}
	sc_buf_addc(out, ')');
	size_t path_len = strcspn(rest, "?#");
	add_path(out, rest, path_len);
	if (rest[path_len] == '?') {
		const char *q = rest + path_len + 1;
		size_t qn = strcspn(q, "#");
		if (qn > 0)
			add_sorted_query(out, q, qn);
	}
	free(u);
}

static void member(struct sc_buf *out, bool *first, const char *name, const char *value)
{
	if (!value)
		return;
	sc_buf_adds(out, *first ? "{" : ",");
	*first = false;
	sc_warc_json_string(name, out);
	sc_buf_addc(out, ':');
	sc_warc_json_string(value, out);
}

static bool indexed(const struct sc_warc_rec *rec, const char *type)
{
	const char *ctype = sc_warc_get(rec, "Content-Type");

	if (!type)
		return true;
	if (strcmp(type, "request") == 0 || strcmp(type, "warcinfo") == 0)
		return false;
	return !((strcmp(type, "metadata") == 0 || strcmp(type, "resource") == 0) && ctype &&
	         strcmp(ctype, "application/warc-fields") == 0);
}

/* The mime member: the HTTP Content-Type up to its ";" for a response,
 * "warc/revisit" for a revisit, the record's Content-Type for others. */
static char *mime_of(const struct sc_warc_rec *rec, const char *type,
                     const struct sc_warc_http *msg, bool has_http)
{
	if (type && strcmp(type, "revisit") == 0)
		return sc_strdup("warc/revisit");
	if (!type || strcmp(type, "response") != 0) {
		const char *c = sc_warc_get(rec, "Content-Type");
		return c ? sc_strdup(c) : NULL;
	}
	char *c = has_http ? sc_warc_http_field(msg, "Content-Type") : NULL;
	if (c) {
		char *semi = strchr(c, ';');
		char *end = semi ? semi : c + strlen(c), *s = c;
		while (end > s && isspace((unsigned char)end[-1]))
			end--;
		*end = '\0';
		while (isspace((unsigned char)*s))
			s++;
		memmove(c, s, strlen(s) + 1);
	}
	return c;
}

/* The key: the SURT of url, "undefined" when there is none. */
static void add_key(const char *url, struct sc_buf *out)
{
	if (url)
		sc_warc_surt(url, out);
	else
		sc_buf_adds(out, "undefined");
}

/* WARC-Target-URI without the angle brackets wget puts around it, as a
 * malloced string, or NULL. */
static char *target_uri(const struct sc_warc_rec *rec)
{
	const char *raw = sc_warc_get(rec, "WARC-Target-URI");
	size_t n = raw ? strlen(raw) : 0;

	if (!raw)
		return NULL;
	if (n >= 2 && raw[0] == '<' && raw[n - 1] == '>')
		return sc_strndup(raw + 1, n - 2);
	return sc_strdup(raw);
}

/* What follows the key: " TIMESTAMP {" and the JSON members up to the
 * filename's (the closing brace left to the caller). */
static void add_tail(const struct sc_warc_rec *rec, const char *type, const char *uri,
                     const char *filename, struct sc_buf *out)
{
	const char *date = sc_warc_get(rec, "WARC-Date");
	struct sc_warc_http msg = { 0 };
	char status[16], length[24], offset[24];
	bool first = true, has_http = false;
	size_t digits = 0;

	sc_buf_addc(out, ' ');
	for (const char *d = date ? date : ""; *d && digits < 14; d++)
		if (*d != '-' && *d != ':' && *d != 'T') {
			sc_buf_addc(out, *d);
			digits++;
		}
	sc_buf_addc(out, ' ');
	if (type && (strcmp(type, "response") == 0 ||
	             (strcmp(type, "revisit") == 0 && rec->content_length > 0)))
		has_http = sc_warc_http_split(rec->block, (size_t)rec->content_length, &msg);
	char *mime = mime_of(rec, type, &msg, has_http);
	member(out, &first, "url", uri);
	member(out, &first, "mime", mime);
	if (has_http && msg.status) {
		snprintf(status, sizeof(status), "%d", msg.status);
		member(out, &first, "status", status);
	}
	const char *digest = sc_warc_get(rec, "WARC-Payload-Digest");
	const char *colon = digest ? strchr(digest, ':') : NULL;
	if (colon) {
		char *d = sc_strdup(colon + 1);
		d[strcspn(d, ":")] = '\0';
		member(out, &first, "digest", d);
		free(d);
	}
	snprintf(length, sizeof(length), "%llu", (unsigned long long)rec->length);
	snprintf(offset, sizeof(offset), "%llu", (unsigned long long)rec->offset);
	member(out, &first, "length", length);
	member(out, &first, "offset", offset);
	member(out, &first, "filename", filename);
	free(mime);
}

bool sc_warc_cdx_line(const struct sc_warc_rec *rec, const char *filename, struct sc_buf *out)
{
	const char *type = sc_warc_get(rec, "WARC-Type");
	char *uri;

	if (!indexed(rec, type))
		return false;
	uri = target_uri(rec);
	add_key(uri, out);
	add_tail(rec, type, uri, filename, out);
	sc_buf_adds(out, "}\n");
	free(uri);
	return true;
}

/* What the pairing needs of a record: of an indexed one its line but for
 * the key, of a request its method, Content-Type and body. */
struct seen {
	bool set;
	bool response; /* a response or a revisit */
	bool request;
	bool indexed;
	char *uri;          /* NULL when it has none */
	struct sc_buf tail; /* an indexed record's, from add_tail */
	char *method;       /* a request's with an HTTP message, or NULL */
	char *content_type; /* NULL when it has none */
	struct sc_buf body;
};

/* warcio's cdx-index holds each record back until it sees the next: a
 * request and the response or revisit right before or after it, with
 * the same Target-URI, are a pair, and a pair whose request is not a GET
 * is keyed by its method and body (warc/postkey.h). */
struct sc_warc_cdx {
	char *filename;
	struct sc_buf *out;
	struct seen prev, cur;
};

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	sc_buf_init(&s->tail, (size_t)-1 / 2);
	sc_buf_init(&s->body, (size_t)-1 / 2);
}

static void seen_clear(struct seen *s)
{
	free(s->uri);
	free(s->method);
	free(s->content_type);
	s->uri = s->method = s->content_type = NULL;
	sc_buf_reset(&s->tail);
	sc_buf_reset(&s->body);
	s->set = s->response = s->request = s->indexed = false;
}

static void seen_fill(struct seen *s, const struct sc_warc_rec *rec, const char *filename)
{
	const char *type = sc_warc_get(rec, "WARC-Type");
	struct sc_warc_http msg;

	seen_clear(s);
	s->set = true;
	s->uri = target_uri(rec);
	s->request = type && strcmp(type, "request") == 0;
	s->response = type && (strcmp(type, "response") == 0 || strcmp(type, "revisit") == 0);
	s->indexed = indexed(rec, type);
	if (s->indexed)
		add_tail(rec, type, s->uri, filename, &s->tail);
	if (s->request && rec->content_length > 0 &&
	    sc_warc_http_split(rec->block, (size_t)rec->content_length, &msg) && msg.head_len) {
		s->method = sc_strndup(msg.head, strcspn(msg.head, " \r\n"));
		s->content_type = sc_warc_http_field(&msg, "Content-Type");
		sc_buf_add(&s->body, msg.payload, msg.payload_len);
	}
}

/* The line of an indexed record, keyed by its request when that is not
 * a GET. */
static void emit(struct sc_warc_cdx *c, const struct seen *rec, const struct seen *request)
{
	if (!rec->indexed)
		return;
	if (!request || !request->method || strcmp(request->method, "GET") == 0) {
		add_key(rec->uri, c->out);
		sc_buf_add(c->out, rec->tail.p, rec->tail.len);
		sc_buf_adds(c->out, "}\n");
		return;
	}
	struct sc_buf key_url, body_json;
	bool first = false;
	sc_buf_init(&key_url, (size_t)-1 / 2);
	sc_buf_init(&body_json, (size_t)-1 / 2);
	sc_warc_post_key(rec->uri ? rec->uri : "", request->method, request->content_type,
	                 request->body.p ? request->body.p : "", request->body.len, &key_url,
	                 &body_json);
	add_key(key_url.p, c->out);
	sc_buf_add(c->out, rec->tail.p, rec->tail.len);
	member(c->out, &first, "method", request->method);
	if (body_json.len) {
		sc_buf_adds(c->out, ",\"requestBody\":");
		sc_buf_add(c->out, body_json.p, body_json.len);
	}
	sc_buf_adds(c->out, "}\n");
	sc_buf_free(&key_url);
	sc_buf_free(&body_json);
}

static bool same_uri(const struct seen *a, const struct seen *b)
{
	if (!a->uri || !b->uri)
		return !a->uri && !b->uri;
	return strcmp(a->uri, b->uri) == 0;
}

/* The record just seen (NULL at the file's end) against the one held. */
static void step(struct sc_warc_cdx *c, struct seen *e)
{
	struct seen *a = &c->prev;

	bool same = a->set && e && same_uri(a, e);

	if (e && same && e->request && a->response) {
		emit(c, a, e);
		e = NULL;
	} else if (e && same && e->response && a->request) {
		emit(c, e, a);
		e = NULL;
	} else if (a->set) {
		emit(c, a, NULL);
	}
	seen_clear(a);
	if (e) { /* held in turn */
		struct seen t = c->prev;
		c->prev = *e;
		*e = t;
	}
	seen_clear(&c->cur);
}

struct sc_warc_cdx *sc_warc_cdx_new(const char *filename, struct sc_buf *out)
{
	struct sc_warc_cdx *c = sc_malloc(sizeof(*c));

	c->filename = sc_strdup(filename);
	c->out = out;
	seen_init(&c->prev);
	seen_init(&c->cur);
	return c;
}

void sc_warc_cdx_add(struct sc_warc_cdx *c, const struct sc_warc_rec *rec)
{
	seen_fill(&c->cur, rec, c->filename);
	step(c, &c->cur);
}

void sc_warc_cdx_end(struct sc_warc_cdx *c)
{
	if (!c)
		return;
	step(c, NULL);
	seen_clear(&c->prev);
	seen_clear(&c->cur);
	sc_buf_free(&c->prev.tail);
	sc_buf_free(&c->prev.body);
	sc_buf_free(&c->cur.tail);
	sc_buf_free(&c->cur.body);
	free(c->filename);
	free(c);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sc_warc_cdx_write_sorted(FILE *f, char *text, size_t len)
{
	size_t n = 0, cap = 1024;
	char **lines = sc_malloc(cap * sizeof(*lines));
	int rc = 0;

	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		if (n == cap)
			lines = sc_realloc(lines, (cap *= 2) * sizeof(*lines));
		lines[n++] = p;
		*nl = '\0';
		p = nl + 1;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n && rc == 0; i++)
		if (fputs(lines[i], f) == EOF || putc('\n', f) == EOF)
			rc = -1;
	free(lines);
	return rc;
}

int sc_warc_cdx_file(const char *warc_path, const char *cdx_path, char *err, size_t errlen)
{
	struct sc_warc_reader *r = sc_warc_reader_open(warc_path, err, errlen);
	struct sc_warc_rec rec;
	struct sc_warc_problem problem;
	enum sc_warc_next next;
	const char *slash = strrchr(warc_path, '/');
	struct sc_buf lines, tmp;
	int rc = 0;

	if (!r)
		return -1;
	sc_buf_init(&lines, (size_t)-1 / 2);
	struct sc_warc_cdx *index = sc_warc_cdx_new(slash ? slash + 1 : warc_path, &lines);
	while ((next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END)
		if (next == SC_WARC_RECORD)
			sc_warc_cdx_add(index, &rec);
	sc_warc_cdx_end(index);
	sc_warc_reader_close(r);
	/* Written whole under a temporary name, so that a reader never sees
	 * half an index. */
	sc_buf_init(&tmp, (size_t)-1 / 2);
	sc_buf_printf(&tmp, "%s.tmp", cdx_path);
	FILE *f = fopen(tmp.p, "w");
	if (!f || sc_warc_cdx_write_sorted(f, lines.p, lines.len) != 0 || fclose(f) != 0 ||
	    rename(tmp.p, cdx_path) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", cdx_path, strerror(errno));
		if (f)
			(void)remove(tmp.p); /* the index is what failed, not this */
		rc = -1;
	}
	sc_buf_free(&tmp);
	sc_buf_free(&lines);
	return rc;
}
