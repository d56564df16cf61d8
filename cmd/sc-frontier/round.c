/* One run over the input: pages (or seeds) in, the next round's URLs out.
 *
 * Each link becomes a candidate: canonical form first (lib/url), then the
 * cheap verdicts that need no lookup (depth, scope, --allow/--deny), then
 * a 128-bit key, XXH3-128 of the canonical URL.  Candidates gather in a
 * batch, which batch.c decides against the seen set when it is full, when
 * the input would block, and at the end: memory is bounded by the batch,
 * never by the input or the set. */
#include <jansson.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "batch.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/input.h"
#include "record/jsonscan.h"
#include "record/lines.h"
#include "web/url.h"

/* ---- candidates ---- */

static bool matches_any(const regex_t *re, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (regexec(&re[i], s, 0, NULL, 0) == 0)
			return true;
	return false;
}

/* The reference a scope compares with, from the canonical seed: its host,
 * registrable domain or directory.  NULL for --scope any. */
static char *scope_key(enum scope scope, const struct sc_url *seed)
{
	char *host;

	switch (scope) {
	case SCOPE_HOST:
		return sc_url_host(seed);
	case SCOPE_DOMAIN:
		host = sc_url_host(seed);
		char *domain = sc_url_registrable_domain(host);
		free(host);
		return domain;
	case SCOPE_PREFIX:
		return sc_url_directory(seed);
	case SCOPE_ANY:
		break;
	}
	return NULL;
}

static bool in_scope(enum scope scope, const char *key, const struct sc_url *u)
{
	const char *host = u->url + u->host_off;
	bool in;

	if (scope == SCOPE_ANY)
		return true;
	if (!key)
		return false;
	if (scope == SCOPE_PREFIX)
		return strncmp(u->url, key, strlen(key)) == 0;
	if (strlen(key) == u->host_len && memcmp(host, key, u->host_len) == 0)
		return true;
	if (scope == SCOPE_HOST)
		return false;
	char *h = sc_url_host(u), *domain = sc_url_registrable_domain(h);
	in = strcmp(domain, key) == 0;
	free(h);
	free(domain);
	return in;
}

/* One link of page p (the last page added): a candidate, or a reason. */
static int add_link(struct run *r, const char *link, const char *base, const char *key)
{
	const struct options *o = r->o;
	struct cand *k = &r->cand[r->ncand];
	struct sc_url u; /* a view of the URL in r->urls: nothing to free */
	char error[128];
	size_t at, before = r->urls.len;

	r->c->links++;
	if (sc_url_canonical_buf(link, base, o->strip_query, &r->urls, &at, &u, error,
	                         sizeof(error)) < 0) {
		r->c->reason[strcmp(error, "not http or https") == 0 ? R_NOT_HTTP : R_NOT_URL]++;
		return 0;
	}
	u.url = r->urls.p + at;
	size_t len = r->urls.len - 1 - at;
	enum reason why = R_COUNT;
	if (len > UINT32_MAX)
		why = R_NOT_URL; /* no line is this long; the offsets are 32 bits */
	else if (o->mode == MODE_LINKS && !in_scope(o->scope, key, &u))
		why = R_SCOPE;
	else if (matches_any(o->deny, o->ndeny, u.url))
		why = R_DENIED;
	else if (o->nallow && !matches_any(o->allow, o->nallow, u.url))
		why = R_NOT_ALLOWED;
	if (why != R_COUNT) {
		r->c->reason[why]++;
		sc_buf_truncate(&r->urls, before);
		return 0;
	}
	XXH128_hash_t h = XXH3_128bits(u.url, len);
	r->order[r->ncand] = (struct keyed){ h.high64, h.low64, (uint32_t)r->ncand };
	*k = (struct cand){ .at = at,
		            .host_off = (uint32_t)u.host_off,
		            .host_len = (uint32_t)u.host_len,
		            .page = (uint32_t)(r->npages - 1) };
	r->fresh[r->ncand] = false;
	if (++r->ncand == r->batch_max || batch_full(r))
		return batch_run(r);
	return 0;
}

static struct page *new_page(struct run *r)
{
	if (r->npages == r->cap_pages) {
		r->cap_pages = r->cap_pages ? r->cap_pages * 2 : 256;
		r->pages = sc_realloc(r->pages, r->cap_pages * sizeof(*r->pages));
	}
	struct page *p = &r->pages[r->npages++];
	memset(p, 0, sizeof(*p));
	return p;
}

static const char *member_string(const json_t *rec, const char *name)
{
	return json_string_value(json_object_get(rec, name));
}

/* A page record: its links, with depth and seed carried over. */
static int add_page(struct run *r, const struct sc_lines *in, const struct sc_line *line,
                    const json_t *rec)
{
	const struct options *o = r->o;
	const json_t *links = json_object_get(rec, o->links),
	             *depth_j = json_object_get(rec, "depth");
	const char *url = member_string(rec, "url"), *seed = member_string(rec, "seed");
	const char *base = member_string(rec, "final_url");
	struct sc_url seed_url = { 0 };
	char error[128];
	char *key = NULL;
	int rc = 0;

	r->c->pages++;
	if (!json_is_array(links)) {
		if (links && !json_is_null(links)) {
			sc_warn("%s:%zu: \"%s\" is not an array", sc_lines_name(in), line->number,
			        o->links);
			r->c->malformed++;
		}
		return 0;
	}
	/* A link is one deeper than its page; a page without a depth is a
	 * seed, at depth 0. */
	long depth = (json_is_integer(depth_j) && json_integer_value(depth_j) >= 0
	                      ? (long)json_integer_value(depth_j)
	                      : 0) +
	             1;
	if (o->max_depth >= 0 && depth > o->max_depth) {
		r->c->links += json_array_size(links);
		r->c->reason[R_DEPTH] += json_array_size(links);
		return 0;
	}
	/* A page without a seed is a seed itself. */
	if ((seed &&
	     sc_url_canonical(seed, NULL, o->strip_query, &seed_url, error, sizeof(error)) == 0) ||
	    (url &&
	     sc_url_canonical(url, NULL, o->strip_query, &seed_url, error, sizeof(error)) == 0))
		key = scope_key(o->scope, &seed_url);
	size_t i;
	const json_t *link;
	bool have_page = false;
	json_array_foreach(links, i, link)
	{
		if (!json_is_string(link)) {
			r->c->links++;
			r->c->reason[R_NOT_URL]++;
			continue;
		}
		/* The page's entry, made again when a batch decided in the
		 * middle of its links took the earlier one. */
		if (!have_page || r->npages == 0) {
			if (batch_full(r) && (rc = batch_run(r)) < 0)
				break;
			struct page *p = new_page(r);
			have_page = true;
			p->depth = depth;
			p->from = url ? sc_strdup(url) : NULL;
			p->seed = seed_url.url ? sc_strdup(seed_url.url) : NULL;
			r->bytes +=
			        (url ? strlen(url) : 0) + (seed_url.url ? strlen(seed_url.url) : 0);
		}
		if ((rc = add_link(r, json_string_value(link), base ? base : url, key)) < 0)
			break;
	}
	sc_url_free(&seed_url);
	free(key);
	return rc;
}

/* A seed, or in --commit mode a URL record: the URL, at depth 0. */
static int add_seed(struct run *r, const char *url)
{
	if (batch_full(r) && batch_run(r) < 0)
		return -1;
	new_page(r); /* no from, its own seed, depth 0 */
	return add_link(r, url, NULL, NULL);
}

/* ---- the input ---- */

/* The run, and the scratch of the record parser, for the input hooks. */
struct reading {
	struct run run;
	struct sc_jsonscan fast;
};

/* A record: a page, or in --seeds and --commit a URL record. */
static int one_record(struct run *r, const struct sc_lines *in, const struct sc_input_item *item)
{
	const struct sc_line *line = item->line;

	if (item->bad) {
		char where[320];
		sc_input_warning(in, item, where);
		sc_warn("%s", where);
		r->c->malformed++;
		return 0;
	}
	if (r->o->mode == MODE_LINKS)
		return add_page(r, in, line, item->rec);
	const char *url = member_string(item->rec, "url");
	if (url)
		return add_seed(r, url);
	sc_warn("%s:%zu: no \"url\" string", sc_lines_name(in), line->number);
	r->c->malformed++;
	return 0;
}

/* A URL of a URL list (--seeds, --add's round file, --commit). */
static int one_url(struct run *r, const char *url, size_t len)
{
	char *copy = sc_strndup(url, len);
	int rc = add_seed(r, copy);

	free(copy);
	return rc;
}

/* A line: in --seeds and --commit, a URL list's line (lib/record/input's
 * rule, as sc-fetch reads one); else, and for a record in the list, a
 * record.  Stops the input after a diagnostic (a write or database error). */
static int on_line(void *ctx, const struct sc_lines *in, const struct sc_line *line)
{
	struct reading *rd = ctx;
	struct run *r = &rd->run;
	struct sc_input_item item;
	const char *url;
	size_t len;
	int rc;

	if (r->o->mode != MODE_LINKS) {
		switch (sc_input_url_line(line, &url, &len)) {
		case SC_URL_LINE_SKIP:
			return 0;
		case SC_URL_LINE_NUL:
			sc_warn("%s:%zu: a NUL byte in a URL", sc_lines_name(in), line->number);
			r->c->malformed++;
			return 0;
		case SC_URL_LINE_URL:
			return one_url(r, url, len) < 0;
		case SC_URL_LINE_RECORD:
			break;
		}
	}
	sc_input_item_make(line, sc_lines_max(in), &rd->fast, &item);
	rc = one_record(r, in, &item);
	json_decref(item.rec);
	return rc < 0;
}

/* The next read may wait for a slow producer: the batch so far is decided
 * first, so that the output is not held back (--commit writes no output,
 * and keeps its batches whole). */
static int on_idle(void *ctx, const struct sc_lines *in)
{
	struct run *r = &((struct reading *)ctx)->run;
	struct pollfd pfd = { .fd = sc_lines_fd(in), .events = POLLIN };

	if (r->ncand == 0 || r->o->mode == MODE_COMMIT || poll(&pfd, 1, 0) != 0)
		return 0;
	return batch_run(r) < 0;
}

static int on_end(void *ctx)
{
	return batch_run(&((struct reading *)ctx)->run) < 0;
}

int round_run(const struct options *o, struct seen *s, int fd, const char *name, FILE *out,
              struct counts *c)
{
	static const struct sc_input_hooks hooks = { .line = on_line,
		                                     .idle = on_idle,
		                                     .end = on_end };
	struct reading rd = { .run = { .o = o, .seen = s, .out = out, .c = c } };
	struct sc_lines *in = sc_lines_open(fd, name);
	char err[SC_INPUT_ERRLEN];
	enum sc_input_status status;

	if (!in)
		sc_die(1, "out of memory");
	batch_open(&rd.run);
	status = sc_input_run(in, &hooks, &rd, err);
	if (status == SC_INPUT_READ_ERROR)
		sc_warn("%s", err);
	batch_close(&rd.run);
	sc_jsonscan_free(&rd.fast);
	sc_lines_close(in);
	/* Stopped: after the diagnostic of a write or database error. */
	return status == SC_INPUT_END ? 0 : -1;
}
