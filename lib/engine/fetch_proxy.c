/* fetch_proxy: which proxy each request goes through (sc-fetch(1),
 * "Proxies"): a record's "proxy" member, else --proxy, else one of
 * --proxy-list's in turn (--proxy-sticky: one per origin), else libcurl's
 * own choice (the http_proxy and no_proxy of the environment).  Owns the
 * list, each proxy's name without its credentials (what the metrics and
 * the summary say), its counts, and its setting aside: a proxy that
 * failed as a proxy (refused, unreachable, a 407) is skipped for a time
 * that doubles at each failure (1 s to 5 min), its requests going through
 * another; one that answers is forgiven. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hash.h"
#include "engine/fetch_engine.h"
#include "web/url.h"

#define ASIDE_FIRST_MS 1000.0
#define ASIDE_MAX_MS 300000.0

struct proxy {
	char *url;  /* as given, credentials included (owned): to libcurl */
	char *name; /* scheme://host:port (owned): to the metrics */
	uint64_t requests, failures, set_aside;
	double aside_until; /* ms, the loop's clock; 0: usable */
	double aside_ms;    /* the next setting aside's length */
};

struct fetch_proxies {
	struct proxy *list; /* --proxy, then --proxy-list's, in order */
	size_t n, next;     /* next: the turn of --proxy-list */
	/* Records' own proxies, met in the run: each allocated alone, since
	 * a transfer in flight holds a pointer to its proxy while more are
	 * added. */
	struct proxy **records;
	size_t nrecords;
};

static void set_up(struct proxy *p, const char *url)
{
	memset(p, 0, sizeof(*p));
	p->url = sc_strdup(url);
	p->name = sc_url_proxy_name(url);
	p->aside_ms = ASIDE_FIRST_MS;
}

/* The list is made once, before any transfer: it may move as it grows. */
static void add(struct proxy **list, size_t *n, const char *url)
{
	*list = sc_realloc(*list, (*n + 1) * sizeof(**list));
	set_up(&(*list)[(*n)++], url);
}

bool fetch_proxy_init(struct fetch_engine *e, char *err, size_t errlen)
{
	const struct fetch_options *o = e->opts;

	if (!o->proxy && !o->proxy_list)
		return true;
	struct fetch_proxies *fp = sc_calloc(1, sizeof(*fp));
	e->proxies = fp;
	if (o->proxy)
		add(&fp->list, &fp->n, o->proxy);
	if (o->proxy_list) {
		FILE *f = fopen(o->proxy_list, "re");
		char *line = NULL;
		size_t cap = 0, lineno = 0;
		if (!f) {
			snprintf(err, errlen, "--proxy-list: %.200s: %s", o->proxy_list,
			         strerror(errno));
			return false;
		}
		while (getline(&line, &cap, f) >= 0) {
			lineno++;
			line[strcspn(line, "\r\n")] = '\0';
			char *s = line + strspn(line, " \t");
			if (!*s || *s == '#')
				continue;
			if (sc_url_proxy_problem(s)) {
				snprintf(err, errlen, "--proxy-list: %.200s:%zu: %s", o->proxy_list,
				         lineno, sc_url_proxy_problem(s));
				free(line);
				(void)fclose(f);
				return false;
			}
			add(&fp->list, &fp->n, s);
		}
		free(line);
		(void)fclose(f);
		if (fp->n == 0) {
			snprintf(err, errlen, "--proxy-list: %.200s: no proxy in it",
			         o->proxy_list);
			return false;
		}
	}
	return true;
}

static void free_proxy(struct proxy *p)
{
	free(p->url);
	free(p->name);
}

void fetch_proxy_free(struct fetch_engine *e)
{
	struct fetch_proxies *fp = e->proxies;

	if (!fp)
		return;
	for (size_t i = 0; i < fp->n; i++)
		free_proxy(&fp->list[i]);
	free(fp->list);
	for (size_t i = 0; i < fp->nrecords; i++) {
		free_proxy(fp->records[i]);
		free(fp->records[i]);
	}
	free(fp->records);
	free(fp);
	e->proxies = NULL;
}

/* A record's own proxy, counted under its name. */
static struct proxy *record_proxy(struct fetch_engine *e, const char *url)
{
	if (!e->proxies)
		e->proxies = sc_calloc(1, sizeof(*e->proxies));
	struct fetch_proxies *fp = e->proxies;
	for (size_t i = 0; i < fp->nrecords; i++)
		if (strcmp(fp->records[i]->url, url) == 0)
			return fp->records[i];
	struct proxy *p = sc_malloc(sizeof(*p));
	set_up(p, url);
	fp->records = sc_realloc(fp->records, (fp->nrecords + 1) * sizeof(*fp->records));
	fp->records[fp->nrecords++] = p;
	return p;
}

/* The list's proxy for job: its origin's (sticky), or the next in turn;
 * one set aside is passed over while another is usable. */
static struct proxy *list_proxy(struct fetch_engine *e, const struct job *job, double now)
{
	struct fetch_proxies *fp = e->proxies;
	size_t start =
	        e->opts->proxy_sticky ? sc_fnv1a_str(job->origin->key) % fp->n : fp->next++ % fp->n;
	for (size_t k = 0; k < fp->n; k++) {
		struct proxy *p = &fp->list[(start + k) % fp->n];
		if (p->aside_until <= now)
			return p;
	}
	/* All set aside: the one back soonest. */
	struct proxy *best = &fp->list[start];
	for (size_t i = 0; i < fp->n; i++)
		if (fp->list[i].aside_until < best->aside_until)
			best = &fp->list[i];
	return best;
}

void fetch_proxy_setup(struct fetch_engine *e, struct transfer *xfer, const struct job *job,
                       double now)
{
	const char *given = job->rec ? json_string_value(json_object_get(job->rec, "proxy")) : NULL;
	struct proxy *p = NULL;

	xfer->proxy = NULL;
	if (given) {
		if (!*given) {
			curl_easy_setopt(xfer->easy, CURLOPT_PROXY,
			                 ""); /* none, not even the env's */
			return;
		}
		p = record_proxy(e, given);
	} else if (e->proxies && e->proxies->n > 0) {
		p = list_proxy(e, job, now);
	}
	if (!p)
		return;
	curl_easy_setopt(xfer->easy, CURLOPT_PROXY, p->url);
	p->requests++;
	xfer->proxy = p;
}

const char *fetch_proxy_name(const struct transfer *xfer)
{
	return xfer && xfer->proxy ? xfer->proxy->name : NULL;
}

void fetch_proxy_answered(struct transfer *xfer, CURLcode rc, double now)
{
	struct proxy *p = xfer->proxy;
	long connect_code = 0;

	if (!p)
		return;
	long code = 0;
	curl_easy_getinfo(xfer->easy, CURLINFO_HTTP_CONNECTCODE, &connect_code);
	curl_easy_getinfo(xfer->easy, CURLINFO_RESPONSE_CODE, &code);
	/* 407: the tunnel's (https), or the proxy's own answer (http). */
	bool failed = rc == CURLE_COULDNT_RESOLVE_PROXY || connect_code == 407 || code == 407 ||
	              (rc == CURLE_COULDNT_CONNECT && connect_code == 0 && !xfer->head_complete) ||
	              rc == CURLE_PROXY;
	if (!failed) {
		p->aside_ms = ASIDE_FIRST_MS; /* it answered: forgiven */
		return;
	}
	p->failures++;
	p->set_aside++;
	p->aside_until = now + p->aside_ms;
	p->aside_ms = fmin(p->aside_ms * 2, ASIDE_MAX_MS);
}

static void summarise(json_t *arr, const struct proxy *p)
{
	json_array_append_new(arr, json_pack("{s:s?, s:I, s:I, s:I}", "proxy", p->name, "requests",
	                                     (json_int_t)p->requests, "failures",
	                                     (json_int_t)p->failures, "set_aside",
	                                     (json_int_t)p->set_aside));
}

void fetch_proxy_summary(const struct fetch_engine *e, json_t *summary)
{
	const struct fetch_proxies *fp = e->proxies;

	if (!fp)
		return;
	json_t *arr = json_array();
	for (size_t i = 0; i < fp->n; i++)
		summarise(arr, &fp->list[i]);
	for (size_t i = 0; i < fp->nrecords; i++)
		summarise(arr, fp->records[i]);
	json_object_set_new(summary, "proxies", arr);
}
