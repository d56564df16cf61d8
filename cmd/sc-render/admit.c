/* admit.c: every request the browser makes, paused by the Fetch domain and
 * admitted here before it leaves: --block's resource types and URL
 * patterns refuse it, --robots asks its origin's robots.txt (fetched once
 * per origin by libsc's fetcher, kept in --robots-cache), --delay (or
 * robots.txt's Crawl-delay) spaces the requests to one origin, --per-host
 * caps those in flight to it (over every tab: one counts from its going on
 * to its Network.loadingFinished or loadingFailed, or its page's end),
 * --origin-state claims each start in the file sc-fetch's of the crawl
 * share (and takes the pace they learnt as a floor of the spacing), and
 * what is admitted goes on (or is answered with the page's fetched
 * body).  A request whose origin's robots.txt is
 * not known yet is held until it is; one that would come too soon after
 * the origin's last is held until its time.  A refused request fails as
 * BlockedByClient: nothing reaches the server. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "core/util.h"
#include "core/version.h"
#include "render.h"
#include "sc.h"
#include "web/origin_state.h"
#include "web/robots.h"

/* --block's words for resource types, and DevTools' names of them. */
static const struct {
	const char *word, *type;
} block_types[] = {
	{ "images", "Image" },
	{ "fonts", "Font" },
	{ "media", "Media" },
	{ "stylesheets", "Stylesheet" },
	{ "scripts", "Script" },
	{ "xhr", "XHR" },
	{ "fetch", "Fetch" },
	{ "websockets", "WebSocket" },
	{ "eventsource", "EventSource" },
	{ "manifests", "Manifest" },
	{ "texttracks", "TextTrack" },
	{ "pings", "Ping" },
	{ "prefetch", "Prefetch" },
	{ "frames", "Document" },
	{ "other", "Other" },
};
#define NTYPES (sizeof(block_types) / sizeof(block_types[0]))

int block_parse(struct render_opts *o, const char *list, char *err, size_t errlen)
{
	char *copy = sc_strdup(list), *save = NULL;
	int rc = 0;

	for (char *w = strtok_r(copy, ",", &save); w && rc == 0; w = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		if (strchr(w, '/') || strchr(w, '*')) {
			if (o->nglobs < (int)(sizeof(o->block_globs) / sizeof(o->block_globs[0]))) {
				o->block_globs[o->nglobs++] = sc_strdup(w);
				continue;
			}
			snprintf(err, errlen, "--block: too many URL patterns (at most 32)");
			rc = -1;
			continue;
		}
		while (i < NTYPES && strcmp(block_types[i].word, w) != 0)
			i++;
		if (i < NTYPES) {
			o->block_types |= 1u << i;
			continue;
		}
		snprintf(err, errlen,
		         "--block: '%s' is no resource type (images, fonts, media, stylesheets, "
		         "scripts, xhr, fetch, websockets, eventsource, manifests, texttracks, "
		         "pings, prefetch, frames, other) nor a URL pattern (with '/' or '*')",
		         w);
		rc = -1;
	}
	free(copy);
	return rc;
}

/* A request held: for its origin's robots.txt, or for its turn. */
struct held {
	struct held *next;
	int tab;        /* the tab's index */
	long seq;       /* its page's number: the page may have ended */
	json_t *params; /* the Fetch.requestPaused (owned) */
};
struct queue {
	struct held *head, **tail;
};

/* One origin: its robots.txt answer, and its spacing. */
enum {
	RB_NONE,
	RB_FETCHING,
	RB_KNOWN
};
struct origin {
	struct sc_strtab_link link;
	char *key; /* the origin (owned) */
	int state;
	struct sc_robots *rules; /* when RB_KNOWN (owned) */
	struct queue robots;     /* waiting for the answer */
	struct queue spaced;     /* admitted, waiting for next_start */
	double next_start;       /* --delay: no request before (sc_now_ms) */
	double crawl_delay_ms;   /* robots.txt's Crawl-delay (capped), or 0 */
	double saved_ms;         /* --origin-state: the spacing the crawl learnt, or 0 */
	int inflight;            /* requests gone on and not finished */
};

/* A request gone on, until it finishes (--per-host). */
struct flight {
	struct flight *next;
	int tab;
	char *network_id; /* NULL until its Network.requestWillBeSent names it */
	char *url;        /* then, to find it by */
	struct origin *o;
};
struct admit {
	struct sc_strtab table;
	sc_fetcher *fetcher; /* robots.txt's; NULL until the first */
	struct sc_robots_cache *cache;
	char *agent;
	struct render *r;
	size_t spaced; /* requests waiting for their turn, over every origin */
	struct flight *flights;
	struct sc_origin_state *state; /* --origin-state's file, or NULL */
	bool state_warned;
};

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

bool admit_intercepts(const struct render *r)
{
	return r->opts.robots || r->opts.block_types || r->opts.nglobs || r->opts.delay_ms ||
	       r->opts.nfrom || r->opts.per_host || r->opts.origin_state || r->opts.user_agent ||
	       r->opts.contact || r->opts.headers;
}

#define MAX_CRAWL_DELAY_MS 30000.0 /* a Crawl-delay longer is taken as this */

/* The origin's answer is known: its rules and its Crawl-delay. */
static void know(struct admit *a, struct origin *o, long status, const char *body, size_t len)
{
	o->rules = sc_robots_from_fetch(status, body, len, a->agent);
	o->state = RB_KNOWN;
	double d = sc_robots_crawl_delay(o->rules) * 1000.0;
	o->crawl_delay_ms = d > MAX_CRAWL_DELAY_MS ? MAX_CRAWL_DELAY_MS : d > 0 ? d : 0;
}

/* The gap the origin's requests keep: --delay, its Crawl-delay, or the
 * pace the crawl learnt (--origin-state), the longest. */
static double gap_ms(const struct render *r, const struct origin *o)
{
	double gap = o->crawl_delay_ms > r->opts.delay_ms ? o->crawl_delay_ms : r->opts.delay_ms;
	return o->saved_ms > gap ? o->saved_ms : gap;
}

int admit_init(struct render *r, char *err, size_t errlen)
{
	if (!admit_intercepts(r))
		return 0;
	struct admit *a = sc_calloc(1, sizeof(*a));
	r->admit = a;
	a->r = r;
	a->agent = sc_robots_product_token(r->opts.user_agent ? r->opts.user_agent
	                                                      : "sc-render/" SC_VERSION);
	if (r->opts.origin_state) {
		char why[300];
		a->state = sc_origin_state_open(r->opts.origin_state, why, sizeof(why));
		if (!a->state)
			return snprintf(err, errlen, "--origin-state: %.250s", why), -1;
		/* The starts claimed here are spaced here too. */
		sc_origin_state_own_spacing(a->state, true);
	}
	if (r->opts.robots_cache) {
		char why[200];
		a->cache = sc_robots_cache_open(r->opts.robots_cache, why, sizeof(why));
		if (!a->cache)
			return snprintf(err, errlen, "--robots-cache: %s", why), -1;
	}
	return 0;
}

static void push(struct queue *q, const struct render *r, const struct tab *t, const json_t *params)
{
	struct held *h = sc_calloc(1, sizeof(*h));

	h->tab = (int)(t - r->tabs);
	h->seq = t->seq;
	h->params = json_deep_copy(params);
	*q->tail = h;
	q->tail = &h->next;
}

static struct held *pop(struct queue *q)
{
	struct held *h = q->head;

	if (h) {
		q->head = h->next;
		if (!q->head)
			q->tail = &q->head;
	}
	return h;
}

static void held_free(struct held *h)
{
	json_decref(h->params);
	free(h);
}

void admit_free(struct render *r)
{
	struct admit *a = r->admit;

	if (!a)
		return;
	sc_fetcher_free(a->fetcher);
	while (a->flights) {
		struct flight *f = a->flights;
		a->flights = f->next;
		free(f->network_id);
		free(f->url);
		free(f);
	}
	sc_origin_state_close(a->state);
	for (struct sc_strtab_link *l = a->table.head, *next; l; l = next) {
		struct origin *o = SC_STRTAB_ENTRY(l, struct origin, link);
		struct held *h;
		next = l->next;
		while ((h = pop(&o->robots)))
			held_free(h);
		while ((h = pop(&o->spaced)))
			held_free(h);
		sc_robots_free(o->rules);
		free(o->key);
		free(o);
	}
	sc_strtab_free(&a->table);
	sc_robots_cache_close(a->cache);
	free(a->agent);
	free(a);
	r->admit = NULL;
}

static bool blocked(const struct render *r, const char *type, const char *url)
{
	for (size_t i = 0; i < NTYPES; i++)
		if ((r->opts.block_types & (1u << i)) && type &&
		    strcmp(block_types[i].type, type) == 0)
			return true;
	for (int i = 0; i < r->opts.nglobs; i++)
		if (url && fnmatch(r->opts.block_globs[i], url, 0) == 0)
			return true;
	return false;
}

/* Refuses a paused request: it fails in the browser, nothing is sent. */
static void refuse(struct render *r, struct tab *t, const json_t *params, bool doc, const char *why)
{
	browser_send(&r->b, t->session, "Fetch.failRequest",
	             json_pack("{s:s,s:s}", "requestId", str(params, "requestId"), "errorReason",
	                       "BlockedByClient"));
	if (doc) {
		free(t->refused_doc);
		t->refused_doc = sc_strdup(why);
	}
	/* Counted here, not as failed: its loadingFailed says "inspector". */
	t->blocked++;
}

static void fetched(sc_fetcher *f, const sc_result *res, void *user, void *ctx);

static void fetch_robots(struct admit *a, struct origin *o)
{
	char *err = NULL, *url;
	static const struct {
		enum sc_fetcher_option opt;
		const char *value;
	} set[] = {
		{ SC_FETCHOPT_QUIET, NULL },
		{ SC_FETCHOPT_RETRIES, "1" },
	};

	if (!a->fetcher) {
		char secs[32];
		a->fetcher = sc_fetcher_new(fetched, a);
		for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
			(void)sc_fetcher_setopt(a->fetcher, set[i].opt, set[i].value, NULL);
		/* -A's, else sc-render's own, with --contact's comment. */
		const struct render_opts *ro = &a->r->opts;
		char *agent = NULL;
		if (!ro->user_agent && ro->contact &&
		    asprintf(&agent, "sc-render/" SC_VERSION " (+%s)", ro->contact) < 0)
			sc_die(1, "out of memory");
		(void)sc_fetcher_setopt(a->fetcher, SC_FETCHOPT_USER_AGENT,
		                        agent            ? agent
		                        : ro->user_agent ? ro->user_agent
		                                         : "sc-render/" SC_VERSION,
		                        NULL);
		free(agent);
		/* A deadline on it: the command deadline. */
		snprintf(secs, sizeof(secs), "%.3f", a->r->opts.command_ms / 1000.0);
		(void)sc_fetcher_setopt(a->fetcher, SC_FETCHOPT_TIMEOUT, secs, NULL);
	}
	if (asprintf(&url, "%s/robots.txt", o->key) < 0)
		sc_die(1, "out of memory");
	o->state = RB_FETCHING;
	if (sc_fetcher_submit(a->fetcher, url, o, &err) != SC_OK) {
		/* Cannot be asked: unreachable, as for a fetch that failed. */
		o->rules = sc_robots_disallow_all(SC_ROBOTS_UNREACHABLE);
		o->state = RB_KNOWN;
	}
	sc_free(err);
	free(url);
}

/* The origin's entry; with --robots, a new one's answer is looked up in
 * the cache, or fetched. */
static struct origin *origin_for(struct admit *a, const char *key)
{
	struct sc_strtab_link *l = sc_strtab_find(&a->table, key);

	if (l)
		return SC_STRTAB_ENTRY(l, struct origin, link);
	struct origin *o = sc_calloc(1, sizeof(*o));
	o->key = sc_strdup(key);
	o->robots.tail = &o->robots.head;
	o->spaced.tail = &o->spaced.head;
	sc_strtab_add(&a->table, &o->link, o->key);
	if (a->state) {
		struct sc_origin_pace pace;
		int64_t last;
		bool found = false;
		if (sc_origin_state_get(a->state, key, &last, &pace, &found, NULL, 0) == 0 && found)
			o->saved_ms = pace.interval_ms > 0 ? pace.interval_ms : 0;
	}
	if (!a->r->opts.robots)
		return o;
	long status = 0;
	char *body = NULL;
	size_t len = 0;
	if (a->cache &&
	    sc_robots_cache_get(a->cache, key, sc_wall_ms(), &status, &body, &len, NULL, 0) > 0) {
		know(a, o, status, body, len);
	} else {
		fetch_robots(a, o);
	}
	free(body);
	return o;
}

/* Whether the origin may take one more request now: its turn has come
 * (--delay, Crawl-delay, a start of another process in --origin-state's
 * file, which may move next_start) and it has a slot (--per-host). */
static bool may_start(struct render *r, struct origin *o, double now)
{
	struct admit *a = r->admit;

	if (now < o->next_start || (r->opts.per_host && o->inflight >= r->opts.per_host))
		return false;
	if (!a->state)
		return true;
	int64_t wall = sc_wall_ms(), not_before = 0;
	char why[200];
	int rc = sc_origin_state_claim(a->state, o->key, wall, gap_ms(r, o), &not_before, why,
	                               sizeof(why));
	if (rc == 0) {
		o->next_start = now + (double)(not_before - wall);
		return false;
	}
	if (rc < 0 && !a->state_warned) {
		/* The file is a help, not a gate: the request goes on. */
		sc_warn("--origin-state: %s", why);
		a->state_warned = true;
	}
	return true;
}

/* The request goes on: the origin's next turn and slot taken. */
static void start(struct render *r, struct tab *t, struct origin *o, const json_t *params,
                  double now)
{
	const char *nid = str(params, "networkId");
	const char *url = str(json_object_get(params, "request"), "url");

	o->next_start = now + gap_ms(r, o);
	if (r->opts.per_host) {
		/* Chromium names the request's Network id only once it has sent
		 * its requestWillBeSent, which may come after the pause. */
		struct flight *f = sc_calloc(1, sizeof(*f));
		f->tab = (int)(t - r->tabs);
		f->network_id = nid ? sc_strdup(nid) : NULL;
		f->url = nid ? NULL : sc_strdup(url ? url : "");
		f->o = o;
		f->next = r->admit->flights;
		r->admit->flights = f;
		o->inflight++;
	}
	tab_proceed(r, t, params);
}

/* An admitted request goes now, or waits for its turn and its slot; one
 * the page's fetched body answers never reaches the origin. */
static void go(struct render *r, struct tab *t, struct origin *o, const json_t *params)
{
	double now = sc_now_ms();

	if (!o || tab_answers(t, params)) {
		tab_proceed(r, t, params);
		return;
	}
	if (o->spaced.head || !may_start(r, o, now)) {
		push(&o->spaced, r, t, params);
		r->admit->spaced++;
		return;
	}
	start(r, t, o, params, now);
}

/* Frees the slots of t's requests that match (network_id NULL: all). */
static void land(struct render *r, const struct tab *t, const char *network_id)
{
	struct admit *a = r->admit;
	int tab = (int)(t - r->tabs);

	if (!a)
		return;
	for (struct flight **pf = &a->flights; *pf;) {
		struct flight *f = *pf;
		if (f->tab != tab ||
		    (network_id && (!f->network_id || strcmp(f->network_id, network_id) != 0))) {
			pf = &f->next;
			continue;
		}
		*pf = f->next;
		f->o->inflight--;
		free(f->network_id);
		free(f->url);
		free(f);
	}
}

void admit_finished(struct render *r, const struct tab *t, const char *network_id)
{
	if (network_id)
		land(r, t, network_id);
}

void admit_named(struct render *r, const struct tab *t, const char *network_id, const char *url)
{
	struct admit *a = r->admit;
	int tab = (int)(t - r->tabs);

	if (!a || !network_id || !url)
		return;
	for (struct flight *f = a->flights; f; f = f->next)
		if (f->tab == tab && f->network_id && strcmp(f->network_id, network_id) == 0)
			return; /* known: a redirect's next hop, or named already */
	/* The oldest unnamed one of that URL (the list is newest first). */
	struct flight *found = NULL;
	for (struct flight *f = a->flights; f; f = f->next)
		if (f->tab == tab && !f->network_id && strcmp(f->url, url) == 0)
			found = f;
	if (found)
		found->network_id = sc_strdup(network_id);
}

void admit_page_end(struct render *r, const struct tab *t)
{
	land(r, t, NULL);
}

static void decide(struct render *r, struct tab *t, const json_t *params)
{
	const json_t *req = json_object_get(params, "request");
	const char *url = str(req, "url"), *type = str(params, "resourceType");
	/* The tab's own document (not a frame's): the page itself. */
	bool doc = type && strcmp(type, "Document") == 0 && t->target && str(params, "frameId") &&
	           strcmp(str(params, "frameId"), t->target) == 0;
	char *key = NULL, *pq = NULL, why[512];
	struct origin *o = NULL;

	/* A redirect's next request: the hop before it has finished. */
	admit_finished(r, t, str(params, "networkId"));
	if (!doc && blocked(r, type, url)) {
		refuse(r, t, params, false, "--block");
		return;
	}
	if (r->admit && url && sc_robots_split_url(url, &key, &pq) == 0) {
		o = origin_for(r->admit, key);
		free(key);
	}
	if (o && o->state == RB_FETCHING) {
		push(&o->robots, r, t, params);
		free(pq);
		return;
	}
	bool ok = !o || o->state != RB_KNOWN || sc_robots_check(o->rules, pq, why, sizeof(why));
	free(pq);
	if (!ok)
		refuse(r, t, params, doc, why);
	else
		go(r, t, o, params);
}

void admit_paused(struct render *r, struct tab *t, const json_t *params)
{
	decide(r, t, params);
}

/* The tab of a held request, if its page is still the one it was for. */
static struct tab *tab_of(struct render *r, const struct held *h)
{
	struct tab *t = &r->tabs[h->tab];
	return t->page && t->session && t->seq == h->seq ? t : NULL;
}

static void fetched(sc_fetcher *f, const sc_result *res, void *user, void *ctx)
{
	struct admit *a = ctx;
	struct origin *o = user;
	enum sc_outcome oc = sc_result_outcome(res);
	long status = 0;
	size_t len = 0;
	const char *body = NULL;
	struct held *h;

	(void)f;
	/* A response that says something has its status; a timeout or a
	 * network error none: unreachable (sc-fetch --robots' rule). */
	if (oc == SC_OUTCOME_OK || oc == SC_OUTCOME_HTTP || oc == SC_OUTCOME_TOO_MANY_REDIRECTS ||
	    oc == SC_OUTCOME_TOO_LARGE)
		status = sc_result_status(res);
	if (status >= 200 && status <= 299)
		body = sc_result_body(res, &len);
	know(a, o, status, body ? body : "", body ? len : 0);
	/* robots.txt's request was one to the origin too. */
	o->next_start = sc_now_ms() + gap_ms(a->r, o);
	if (a->cache && status != 0)
		(void)sc_robots_cache_put(a->cache, o->key, sc_wall_ms(), status, body ? body : "",
		                          body ? len : 0, NULL, NULL, 0);
	/* The requests held meanwhile, in their order. */
	while ((h = pop(&o->robots))) {
		struct tab *t = tab_of(a->r, h);
		if (t)
			decide(a->r, t, h->params);
		held_free(h);
	}
}

int admit_fd(const struct render *r)
{
	return r->admit && r->admit->fetcher ? sc_fetcher_fd(r->admit->fetcher) : -1;
}

double admit_next(const struct render *r, double next)
{
	const struct admit *a = r->admit;

	if (!a)
		return next;
	if (a->fetcher && sc_fetcher_pending(a->fetcher)) {
		long ms = sc_fetcher_timeout(a->fetcher);
		if (ms >= 0 && sc_now_ms() + (double)ms < next)
			next = sc_now_ms() + (double)ms;
	}
	for (const struct sc_strtab_link *l = a->spaced ? a->table.head : NULL; l; l = l->next) {
		const struct origin *o = SC_STRTAB_ENTRY(l, struct origin, link);
		/* A full origin waits for a request to finish: a message. */
		bool full = r->opts.per_host && o->inflight >= r->opts.per_host;
		if (o->spaced.head && !full && o->next_start < next)
			next = o->next_start;
	}
	return next;
}

void admit_perform(struct render *r)
{
	struct admit *a = r->admit;

	if (!a)
		return;
	if (a->fetcher && sc_fetcher_pending(a->fetcher))
		sc_fetcher_perform(a->fetcher);
	/* The held requests whose turn and slot came, in their order. */
	for (struct sc_strtab_link *l = a->spaced ? a->table.head : NULL; l; l = l->next) {
		struct origin *o = SC_STRTAB_ENTRY(l, struct origin, link);
		double now = sc_now_ms();
		while (o->spaced.head) {
			struct held *h = o->spaced.head;
			struct tab *t = tab_of(r, h);
			if (t && !may_start(r, o, now))
				break;
			pop(&o->spaced);
			a->spaced--;
			if (t)
				start(r, t, o, h->params, now);
			held_free(h);
		}
	}
}
