/* sc-warc wacz, what goes into the package besides the WARCs: the CDXJ
 * index of every file (as sc-warc cdx writes it), and the pages list,
 * from a crawl's records (--pages) or from the archives themselves
 * (wacz.h). */
#include "wacz.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/strtab.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/lines.h"
#include "warc/cdx.h"
#include "warc/reader.h"

/* A capture of a URL: its first response (or revisit) in file order. */
struct capture {
	struct sc_strtab_link link; /* keyed by url */
	char *url, ts[24];
	bool html;      /* a 2xx text/html or application/xhtml+xml response */
	bool requisite; /* a metadata record says hop: E */
};

/* "YYYYMMDDhhmmss" as ISO 8601 ("YYYY-MM-DDThh:mm:ssZ"). */
static void iso_of(const char *t, char out[24])
{
	snprintf(out, 24, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", t, t + 4, t + 6, t + 8, t + 10, t + 12);
}

static struct capture *capture_of(struct sc_strtab *t, const char *url)
{
	struct sc_strtab_link *l = sc_strtab_find(t, url);

	if (l)
		return SC_STRTAB_ENTRY(l, struct capture, link);
	struct capture *c = sc_calloc(1, sizeof(*c));
	c->url = sc_strdup(url);
	sc_strtab_add(t, &c->link, c->url);
	return c;
}

/* A record's own index line (url, mime, status, timestamp) noted as the
 * URL's capture when it is its first. */
static void note_capture(struct sc_strtab *t, const struct sc_warc_rec *rec, const char *base,
                         struct sc_buf *line)
{
	sc_buf_reset(line);
	if (!sc_warc_cdx_line(rec, base, line))
		return;
	/* "SURT TIMESTAMP JSON\n" */
	char *sp1 = memchr(line->p, ' ', line->len);
	char *sp2 = sp1 ? memchr(sp1 + 1, ' ', line->len - (size_t)(sp1 + 1 - line->p)) : NULL;
	if (!sp2 || sp2 - sp1 - 1 < 14)
		return;
	json_t *j = json_loadb(sp2 + 1, line->len - (size_t)(sp2 + 1 - line->p), 0, NULL);
	const char *url = json_string_value(json_object_get(j, "url"));
	const char *mime = json_string_value(json_object_get(j, "mime"));
	const char *status = json_string_value(json_object_get(j, "status"));
	if (url && !sc_strtab_find(t, url)) {
		struct capture *c = capture_of(t, url);
		iso_of(sp1 + 1, c->ts);
		c->html = mime && status && status[0] == '2' && strlen(status) == 3 &&
		          (strcasecmp(mime, "text/html") == 0 ||
		           strcasecmp(mime, "application/xhtml+xml") == 0);
	}
	json_decref(j);
}

/* A metadata record's "hop: E" line (sc-fetch writes it for a record
 * marked requisite, as Heritrix's hop letter for an embed). */
static void note_metadata(struct sc_strtab *t, const struct sc_warc_rec *rec)
{
	const char *type = sc_warc_get(rec, "WARC-Type");
	const char *uri = sc_warc_get(rec, "WARC-Target-URI");

	if (!type || strcmp(type, "metadata") != 0 || !uri || !rec->block)
		return;
	const char *b = rec->block, *end = b + rec->content_length;
	for (const char *p = b; p && p < end;) {
		if (end - p >= 8 && memcmp(p, "hop: E\r\n", 8) == 0) {
			capture_of(t, uri)->requisite = true;
			return;
		}
		p = memchr(p, '\n', (size_t)(end - p));
		if (p)
			p++;
	}
}

int wacz_read_archives(struct wacz *z, char **files, int nfiles)
{
	char err[600];
	struct sc_buf line;
	int status = SC_EXIT_OK;

	sc_buf_init(&line, (size_t)1 << 30);
	sc_buf_init(&z->index, (size_t)-1 / 2);
	for (int i = 0; i < nfiles && !sc_stop_signal; i++) {
		const char *slash = strrchr(files[i], '/');
		const char *base = slash ? slash + 1 : files[i];
		struct sc_warc_reader *r = sc_warc_reader_open(files[i], err, sizeof(err));
		struct sc_warc_rec rec;
		struct sc_warc_problem problem;
		enum sc_warc_next next;
		if (!r) {
			sc_warn("%s", err);
			sc_buf_free(&line);
			return SC_EXIT_FAILURE;
		}
		struct sc_warc_cdx *index = sc_warc_cdx_new(base, &z->index);
		while ((next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END) {
			if (next == SC_WARC_PROBLEM) {
				warc_report(files[i], problem.offset, problem.message);
				status = SC_EXIT_PARTIAL;
				continue;
			}
			sc_warc_cdx_add(index, &rec);
			note_capture(&z->captures, &rec, base, &line);
			note_metadata(&z->captures, &rec);
			z->records++;
		}
		sc_warc_cdx_end(index);
		sc_warc_reader_close(r);
	}
	sc_buf_free(&line);
	return status;
}

static void add_page(struct wacz *z, const char *url, const char *ts, const char *title)
{
	json_t *p = json_pack("{s:s,s:s}", "url", url, "ts", ts);

	if (title && *title)
		json_object_set_new(p, "title", json_string(title));
	char *text = json_dumps(p, JSON_COMPACT | JSON_ENSURE_ASCII);
	sc_buf_adds(&z->pages, text);
	sc_buf_addc(&z->pages, '\n');
	free(text);
	json_decref(p);
	z->npages++;
	if (!z->main_url && (!z->want_main || strcmp(url, z->want_main) == 0)) {
		z->main_url = sc_strdup(url);
		z->main_ts = sc_strdup(ts);
	}
}

/* The header line of WACZ 1.1.1's pages.jsonl. */
static void pages_begin(struct wacz *z)
{
	sc_buf_init(&z->pages, (size_t)-1 / 2);
	sc_buf_adds(&z->pages,
	            "{\"format\":\"json-pages-1.0\",\"id\":\"pages\",\"title\":\"All Pages\"}\n");
}

void wacz_pages_from_archives(struct wacz *z)
{
	pages_begin(z);
	for (struct sc_strtab_link *l = z->captures.head; l; l = l->next) {
		struct capture *c = SC_STRTAB_ENTRY(l, struct capture, link);
		if (c->html && !c->requisite)
			add_page(z, c->url, c->ts, NULL);
	}
}

/* A record's time, ISO 8601, when it gives one as a string (ts, then
 * fetched_at). */
static const char *record_ts(const json_t *rec)
{
	const char *ts = json_string_value(json_object_get(rec, "ts"));

	return ts ? ts : json_string_value(json_object_get(rec, "fetched_at"));
}

int wacz_pages_from_records(struct wacz *z, const char *path)
{
	struct sc_lines *in;
	struct sc_line l;
	struct sc_strtab listed = SC_STRTAB_INIT;
	int status = SC_EXIT_OK, fd, rc;

	pages_begin(z);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		sc_warn("--pages %s: cannot open:", path);
		return SC_EXIT_FAILURE;
	}
	if (!(in = sc_lines_open(fd, path)))
		sc_die(SC_EXIT_FAILURE, "out of memory");
	while ((rc = sc_lines_next(in, &l)) == 1) {
		json_error_t e;
		json_t *rec = json_loadb(l.text, l.len, 0, &e);
		const char *url = json_string_value(json_object_get(rec, "url"));
		struct sc_strtab_link *cl = url ? sc_strtab_find(&z->captures, url) : NULL;
		if (!json_is_object(rec) || !url) {
			sc_warn("--pages %s:%zu: not a record with a url", path, l.number);
			status = SC_EXIT_PARTIAL;
		} else if (!cl || json_is_false(json_object_get(rec, "ok")) ||
		           sc_strtab_find(&listed, url)) {
			z->unlisted++; /* not archived, failed, or listed already */
		} else {
			struct capture *c = SC_STRTAB_ENTRY(cl, struct capture, link);
			const char *ts = record_ts(rec);
			struct sc_strtab_link *mark = sc_calloc(1, sizeof(*mark));
			sc_strtab_add(&listed, mark, c->url);
			add_page(z, url, ts ? ts : c->ts,
			         json_string_value(json_object_get(rec, "title")));
		}
		json_decref(rec);
	}
	if (rc < 0) {
		sc_warn("--pages %s: read error:", path);
		status = SC_EXIT_FAILURE;
	}
	sc_lines_close(in);
	close(fd);
	for (struct sc_strtab_link *m = listed.head, *next; m; m = next) {
		next = m->next;
		free(m);
	}
	sc_strtab_free(&listed);
	return status;
}

void wacz_free(struct wacz *z)
{
	for (struct sc_strtab_link *l = z->captures.head, *next; l; l = next) {
		struct capture *c = SC_STRTAB_ENTRY(l, struct capture, link);
		next = l->next;
		free(c->url);
		free(c);
	}
	sc_strtab_free(&z->captures);
	sc_buf_free(&z->index);
	sc_buf_free(&z->pages);
	free(z->main_url);
	free(z->main_ts);
}
