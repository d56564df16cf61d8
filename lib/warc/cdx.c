#include "warc/cdx.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/utf8.h"
#include "core/util.h"
#include "warc/http.h"

void sc_warc_json_string(const char *text, struct sc_buf *out)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);

	sc_buf_addc(out, '"');
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t k = sc_utf8_seq_len(s + i, n - i);
			if (k == 0) {
				sc_buf_adds(out, "\xef\xbf\xbd");
				i++;
			} else {
				sc_buf_add(out, s + i, k);
				i += k;
			}
			continue;
		}
		if (c == '"' || c == '\\') {
			sc_buf_addc(out, '\\');
			sc_buf_addc(out, (char)c);
		} else if (c == '\n') {
			sc_buf_adds(out, "\\n");
		} else if (c == '\r') {
			sc_buf_adds(out, "\\r");
		} else if (c == '\t') {
			sc_buf_adds(out, "\\t");
		} else if (c == '\b') {
			sc_buf_adds(out, "\\b");
		} else if (c == '\f') {
			sc_buf_adds(out, "\\f");
		} else if (c < 0x20) {
			sc_buf_printf(out, "\\u%04x", c);
		} else {
			sc_buf_addc(out, (char)c);
		}
		i++;
	}
	sc_buf_addc(out, '"');
}

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

void sc_warc_surt(const char *url, struct sc_buf *out)
{
	if (strncmp(url, "http:", 5) != 0 && strncmp(url, "https:", 6) != 0) {
		sc_buf_adds(out, url);
		return;
	}
	char *u = sc_strdup(url);
	char *sep = strstr(u, "://");
	/* "www" and digits, then a dot, right after the scheme */
	if (sep && strncmp(sep + 3, "www", 3) == 0) {
		char *p = sep + 6;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == '.')
			memmove(sep + 3, p + 1, strlen(p + 1) + 1);
	}
	for (char *p = u; *p; p++)
		*p = (char)tolower((unsigned char)*p);
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

static void add_head(const struct sc_warc_rec *rec, const char *uri, struct sc_buf *out)
{
	const char *date = sc_warc_get(rec, "WARC-Date");
	size_t digits = 0;

	if (uri)
		sc_warc_surt(uri, out);
	else
		sc_buf_adds(out, "undefined");
	sc_buf_addc(out, ' ');
	for (const char *d = date ? date : ""; *d && digits < 14; d++)
		if (*d != '-' && *d != ':' && *d != 'T') {
			sc_buf_addc(out, *d);
			digits++;
		}
	sc_buf_addc(out, ' ');
}

bool sc_warc_cdx_line(const struct sc_warc_rec *rec, const char *filename, struct sc_buf *out)
{
	const char *type = sc_warc_get(rec, "WARC-Type");
	struct sc_warc_http msg = { 0 };
	char status[16], length[24], offset[24], *uri = NULL;
	bool first = true, has_http = false;

	if (!indexed(rec, type))
		return false;
	const char *raw_uri = sc_warc_get(rec, "WARC-Target-URI");
	if (raw_uri) {
		size_t n = strlen(raw_uri);
		uri = sc_strdup(raw_uri);
		if (n >= 2 && raw_uri[0] == '<' && raw_uri[n - 1] == '>') {
			memmove(uri, uri + 1, n - 2);
			uri[n - 2] = '\0';
		}
	}
	if (type && (strcmp(type, "response") == 0 ||
	             (strcmp(type, "revisit") == 0 && rec->content_length > 0)))
		has_http = sc_warc_http_split(rec->block, (size_t)rec->content_length, &msg);
	add_head(rec, uri, out);
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
	sc_buf_adds(out, "}\n");
	free(mime);
	free(uri);
	return true;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text (each ending in a newline) sorted bytewise into f. */
static int write_sorted(FILE *f, char *text, size_t len)
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
	while ((next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END)
		if (next == SC_WARC_RECORD)
			sc_warc_cdx_line(&rec, slash ? slash + 1 : warc_path, &lines);
	sc_warc_reader_close(r);
	/* Written whole under a temporary name, so that a reader never sees
	 * half an index. */
	sc_buf_init(&tmp, (size_t)-1 / 2);
	sc_buf_printf(&tmp, "%s.tmp", cdx_path);
	FILE *f = fopen(tmp.p, "w");
	if (!f || write_sorted(f, lines.p, lines.len) != 0 || fclose(f) != 0 ||
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
