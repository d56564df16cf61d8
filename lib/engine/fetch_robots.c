/* fetch_robots: --robots.  Owns one entry per origin for the run (its
 * robots.txt answer, Crawl-delay, sitemaps; kept after the origin itself
 * is swept, so the answer is asked for once and the summary can list it),
 * the robots.txt request (a job of the engine with no record: same cap,
 * timeouts and retries as any request), the gate on the origin's queue
 * (held until the answer is known, then Crawl-delay), the refusal of a
 * disallowed job (error kind robots, no request), and the --robots-cache
 * file (lib/robots.h).
 *
 * Life of an origin's entry: UNKNOWN until its first job is submitted;
 * then KNOWN at once from a fresh cache entry, or FETCHING with the
 * robots.txt request queued at the head of the origin's queue, the only
 * job the gate lets start; when that request's last attempt ends the
 * answer is KNOWN, and the jobs held meanwhile are sorted: refused ones
 * are finished, the rest start as the other limits allow. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/fetch_engine.h"
#include "web/robots.h"

enum robots_state {
	RB_UNKNOWN,
	RB_FETCHING,
	RB_KNOWN
};

struct robots_entry {
	char *key;                  /* the origin's key (owned) */
	struct sc_strtab_link link; /* in fetch_robots' table, by key */
	enum robots_state state;
	struct sc_robots *rules; /* when KNOWN (owned) */
	long status;             /* of the robots.txt answer; 0: none */
	bool cached;             /* the answer came from --robots-cache */
	double delay_ms;         /* Crawl-delay in force (capped); 0: none */
	double next_start;       /* Crawl-delay: no start before this (ms) */
};

struct fetch_robots {
	struct sc_strtab table;        /* the entries, in order of first use */
	char *agent;                   /* product token (owned) */
	struct sc_robots_cache *cache; /* --robots-cache, or NULL */
	uint64_t cache_hits, cache_errors;
};

static bool robots_admissible(void *ctx, struct origin *origin, double now, double *wake);

static struct robots_entry *entry_of(struct sc_strtab_link *link)
{
	return link ? SC_STRTAB_ENTRY(link, struct robots_entry, link) : NULL;
}

bool fetch_robots_init(struct fetch_engine *e, char *err, size_t errlen)
{
	const struct fetch_options *o = e->opts;

	if (!o->robots)
		return true;
	struct fetch_robots *rb = sc_calloc(1, sizeof(*rb));
	e->robots = rb;
	fetch_origins_set_gate(&e->origins, robots_admissible, rb);
	rb->agent = o->robots_agent ? sc_strdup(o->robots_agent)
	                            : sc_robots_product_token(o->user_agent);
	if (o->robots_cache_path) {
		char why[200];
		rb->cache = sc_robots_cache_open(o->robots_cache_path, why, sizeof(why));
		if (!rb->cache) {
			snprintf(err, errlen, "--robots-cache: %s", why);
			return false;
		}
		/* With --warc, a rule is taken from the cache only while the
		 * archive of its robots.txt is there: an archive removed (a chunk
		 * killed and redone) has its robots.txt fetched and archived
		 * again, so every archive kept holds what its rules came from. */
		if (o->warc_path)
			sc_robots_cache_want_archived(rb->cache);
	}
	return true;
}

void fetch_robots_free(struct fetch_engine *e)
{
	struct fetch_robots *rb = e->robots;

	if (!rb)
		return;
	for (struct sc_strtab_link *l = rb->table.head, *next; l; l = next) {
		struct robots_entry *en = entry_of(l);
		next = l->next;
		sc_robots_free(en->rules);
		free(en->key);
		free(en);
	}
	sc_strtab_free(&rb->table);
	free(rb->agent);
	sc_robots_cache_close(rb->cache);
	free(rb);
	e->robots = NULL;
}

static struct robots_entry *entry_for(struct fetch_robots *rb, struct origin *origin)
{
	if (origin->robots)
		return origin->robots;
	struct robots_entry *en = entry_of(sc_strtab_find(&rb->table, origin->key));
	if (!en) {
		en = sc_calloc(1, sizeof(*en));
		en->key = sc_strdup(origin->key);
		sc_strtab_add(&rb->table, &en->link, en->key);
	}
	return origin->robots = en;
}

/* The answer is known: its rules, and the Crawl-delay that follows. */
static void entry_know(struct fetch_engine *e, struct robots_entry *en, long status,
                       const char *body, size_t len, double started)
{
	en->rules = sc_robots_from_fetch(status, body, len, e->robots->agent);
	en->status = status;
	en->state = RB_KNOWN;
	double d = sc_robots_crawl_delay(en->rules);
	if (d > 0)
		en->delay_ms = fmin(d * 1000.0, (double)e->opts->max_crawl_delay_ms);
	/* The robots.txt request was a request to the origin too. */
	en->next_start = en->delay_ms > 0 ? started + en->delay_ms : 0;
}

/* Whether the job's URL is allowed; why gets the refusal's message. */
static bool job_allowed(struct robots_entry *en, const struct job *job, char *why, size_t whysize)
{
	char *origin = NULL, *pq = NULL;

	if (sc_robots_kind(en->rules) == SC_ROBOTS_ALLOW_ALL)
		return true;
	/* The job's URL parsed when it was submitted: this cannot fail. */
	sc_robots_split_url(job->url, &origin, &pq);
	bool ok = sc_robots_check(en->rules, pq ? pq : "/", why, whysize);
	free(origin);
	free(pq);
	return ok;
}

/* Finishes a job robots.txt refuses: no request, no status. */
static void refuse(struct fetch_engine *e, struct job *job, const char *why)
{
	json_object_set_new(job->rec, "status", json_null());
	sc_record_set_error(job->rec, SC_ERR_ROBOTS, why);
	job->failed = true;
	fetch_origin_unref(job->origin);
	fetch_job_finish(e, job);
}

/* Queues the origin's robots.txt request at the head of its queue. */
static void request_robots(struct fetch_engine *e, struct robots_entry *en, struct origin *origin,
                           double now)
{
	struct job *job = sc_calloc(1, sizeof(*job));
	size_t n = strlen(origin->key) + sizeof("/robots.txt");

	job->rec = json_object(); /* holds the attempts' history; never written */
	job->url = sc_malloc(n);
	snprintf(job->url, n, "%s/robots.txt", origin->key);
	job->metrics_url = sc_strdup(job->url);
	job->max_attempts = 1 + e->opts->retry.retries;
	job->queued_at = now;
	job->origin = origin;
	job->robots_for = en;
	fetch_origin_ref(origin);
	en->state = RB_FETCHING;
	fetch_origin_push(&e->origins, origin, job, true);
}

bool fetch_robots_refuse(struct fetch_engine *e, struct job *job)
{
	struct fetch_robots *rb = e->robots;
	char why[512];

	if (!rb)
		return false;
	struct robots_entry *en = entry_for(rb, job->origin);
	if (en->state == RB_UNKNOWN && rb->cache) {
		long status = 0;
		char *body = NULL;
		size_t len = 0;
		int found = sc_robots_cache_get(rb->cache, en->key, sc_wall_ms(), &status, &body,
		                                &len, NULL, 0);
		if (found > 0) {
			rb->cache_hits++;
			en->cached = true;
			entry_know(e, en, status, body, len, 0);
		} else if (found < 0) {
			rb->cache_errors++; /* fetched instead */
		}
		free(body);
	}
	if (en->state == RB_UNKNOWN)
		request_robots(e, en, job->origin, sc_now_ms());
	if (en->state != RB_KNOWN || job_allowed(en, job, why, sizeof(why)))
		return false;
	refuse(e, job, why);
	return true;
}

/* The gate on each origin's queue (fetch_origins_set_gate): the queue is
 * held while the answer is not known (but for the robots.txt request
 * itself: false without a time, the loop goes round again when the answer
 * arrives), then Crawl-delay spaces starts. */
static bool robots_admissible(void *ctx, struct origin *origin, double now, double *wake)
{
	struct robots_entry *en = origin->robots;

	(void)ctx;
	if (!en)
		return true;
	if (en->state != RB_KNOWN)
		return origin->qhead && origin->qhead->robots_for;
	if (en->delay_ms > 0) {
		if (en->next_start > now) {
			if (en->next_start < *wake)
				*wake = en->next_start;
			return false;
		}
		/* Admissible means started now (admit, fetch.c); now may be the
		 * loop's reading from a while ago, the clock is not. */
		en->next_start = sc_now_ms() + en->delay_ms;
	}
	return true;
}

void fetch_robots_sent(struct fetch_engine *e, struct origin *origin, double now)
{
	struct robots_entry *en = origin->robots;

	(void)e;
	if (en && en->state == RB_KNOWN && en->delay_ms > 0)
		en->next_start = fmax(en->next_start, now + en->delay_ms);
}

void fetch_robots_hold(struct fetch_engine *e, struct origin *origin, double until)
{
	struct robots_entry *en = origin->robots;

	(void)e;
	if (en && en->state == RB_KNOWN && en->delay_ms > 0)
		en->next_start = until;
}

void fetch_robots_learn(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                        const struct outcome *oc, const char *archive)
{
	struct robots_entry *en = job->robots_for;
	struct origin *origin = job->origin;
	long status = 0;
	char why[512];

	/* A response that says something: a status of its own (2xx, and the
	 * 3xx or 4xx left), or one cut at SC_ROBOTS_MAX_BYTES.  A timeout,
	 * a network error or a cancellation leaves status 0: unreachable. */
	if (oc->kind < 0 || oc->kind == SC_ERR_HTTP || oc->kind == SC_ERR_TOO_MANY_REDIRECTS ||
	    (oc->kind == SC_ERR_TOO_LARGE && xfer && xfer->too_large))
		status = oc->status;
	const char *body = xfer && xfer->body.p ? xfer->body.p : "";
	size_t len = xfer && status >= 200 && status <= 299 ? xfer->body.len : 0;
	/* The request went out when the connection was ready, not when the
	 * transfer was added: the gap is counted from then. */
	double sent = sc_now_ms();
	if (xfer) {
		curl_off_t us = 0;
		curl_easy_getinfo(xfer->easy, CURLINFO_PRETRANSFER_TIME_T, &us);
		sent = xfer->started + (double)us / 1000.0;
	}
	entry_know(e, en, status, body, len, sent);
	if (e->robots->cache && status != 0) {
		if (sc_robots_cache_put(e->robots->cache, en->key, sc_wall_ms(), status, body, len,
		                        archive, NULL, 0) != 0)
			e->robots->cache_errors++;
	}
	/* Sort the held queue, in its order. */
	for (size_t n = origin->queued; n > 0; n--) {
		struct job *held = fetch_origin_pop(&e->origins, origin);
		if (job_allowed(en, held, why, sizeof(why)))
			fetch_origin_push(&e->origins, origin, held, false);
		else
			refuse(e, held, why);
	}
	fetch_ring_update(&e->origins, origin);
}

void fetch_robots_job_end(struct fetch_engine *e, struct job *job)
{
	(void)e;
	fetch_origin_unref(job->origin);
	json_decref(job->rec);
	free(job->url);
	free(job->metrics_url);
	free(job);
}

double fetch_robots_delay_ms(const struct fetch_engine *e, const struct origin *origin)
{
	(void)e;
	return origin->robots && origin->robots->state == RB_KNOWN ? origin->robots->delay_ms : 0;
}

void fetch_robots_metrics(const struct fetch_engine *e, const struct job *job, struct sc_buf *b)
{
	struct robots_entry *en = job->robots_for;
	char tmp[64];

	(void)e;
	if (!en)
		return;
	/* ,"robots":true then , or }: crawl-progress.sh's GROWN_AWK. */
	sc_buf_add(b, ",\"robots\":true", 14);
	if (en->state == RB_KNOWN && en->delay_ms > 0) {
		int k = snprintf(tmp, sizeof(tmp), ",\"crawl_delay\":%.12g", en->delay_ms / 1000.0);
		sc_buf_add(b, tmp, (size_t)k);
		if (!strpbrk(tmp + 15, ".e"))
			sc_buf_add(b, ".0", 2);
	}
}

void fetch_robots_summary(const struct fetch_engine *e, json_t *summary)
{
	static const char *const kinds[] = { "rules", "allow_all", "disallow_all" };
	struct fetch_robots *rb = e->robots;

	if (!rb)
		return;
	json_t *all = json_object();
	for (struct sc_strtab_link *l = rb->table.head; l; l = l->next) {
		struct robots_entry *en = entry_of(l);
		if (en->state != RB_KNOWN)
			continue;
		size_t n;
		const char *const *maps = sc_robots_sitemaps(en->rules, &n);
		json_t *sitemaps = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(sitemaps,
			                      sc_json_string_lossy(maps[i], strlen(maps[i])));
		json_object_set_new(
		        all, en->key,
		        json_pack("{s:s, s:o, s:b, s:o, s:o}", "answer",
		                  kinds[sc_robots_kind(en->rules)], "status",
		                  en->status ? json_integer(en->status) : json_null(), "cached",
		                  en->cached, "crawl_delay",
		                  en->delay_ms > 0 ? json_real(en->delay_ms / 1000.0) : json_null(),
		                  "sitemaps", sitemaps));
	}
	json_object_set_new(summary, "robots", all);
	if (rb->cache)
		json_object_set_new(summary, "robots_cache",
		                    json_pack("{s:I, s:I}", "hits", (json_int_t)rb->cache_hits,
		                              "errors", (json_int_t)rb->cache_errors));
}
