/* admit.c: every request the browser makes, paused by the Fetch domain and
 * admitted here before it leaves: --block's resource types and URL
 * patterns refuse it, --robots asks its origin's robots.txt (fetched once
 * per origin by libsc's fetcher, kept in --robots-cache), and what is
 * admitted goes on (or is answered with the page's fetched body).  A
 * request whose origin's robots.txt is not known yet is held until it is.
 * A refused request fails as BlockedByClient: nothing reaches the server. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "core/util.h"
#include "core/version.h"
#include "render.h"
#include "sc.h"
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

/* One origin's robots.txt answer. */
enum {
	RB_FETCHING,
	RB_KNOWN
};
struct held {
	struct held *next;
	int tab;        /* the tab's index */
	long seq;       /* its page's number: the page may have ended */
	json_t *params; /* the Fetch.requestPaused (owned) */
};
struct robots_entry {
	struct sc_strtab_link link;
	char *key; /* the origin (owned) */
	int state;
	struct sc_robots *rules; /* when RB_KNOWN (owned) */
	struct held *held, **held_tail;
};
struct admit {
	struct sc_strtab table;
	sc_fetcher *fetcher; /* robots.txt's; NULL until the first */
	struct sc_robots_cache *cache;
	char *agent;
	struct render *r;
};

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

int admit_init(struct render *r, char *err, size_t errlen)
{
	if (!r->opts.robots)
		return 0;
	struct admit *a = sc_calloc(1, sizeof(*a));
	r->admit = a;
	a->r = r;
	a->agent = sc_robots_product_token("sc-render/" SC_VERSION);
	if (r->opts.robots_cache) {
		char why[200];
		a->cache = sc_robots_cache_open(r->opts.robots_cache, why, sizeof(why));
		if (!a->cache)
			return snprintf(err, errlen, "--robots-cache: %s", why), -1;
	}
	return 0;
}

void admit_free(struct render *r)
{
	struct admit *a = r->admit;

	if (!a)
		return;
	sc_fetcher_free(a->fetcher);
	for (struct sc_strtab_link *l = a->table.head, *next; l; l = next) {
		struct robots_entry *en = SC_STRTAB_ENTRY(l, struct robots_entry, link);
		next = l->next;
		for (struct held *h = en->held, *hn; h; h = hn) {
			hn = h->next;
			json_decref(h->params);
			free(h);
		}
		sc_robots_free(en->rules);
		free(en->key);
		free(en);
	}
	sc_strtab_free(&a->table);
	sc_robots_cache_close(a->cache);
	free(a->agent);
	free(a);
	r->admit = NULL;
}

bool admit_intercepts(const struct render *r)
{
	return r->opts.robots || r->opts.block_types || r->opts.nglobs;
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

static void fetch_robots(struct admit *a, struct robots_entry *en)
{
	char *err = NULL, *url;
	static const struct {
		enum sc_fetcher_option opt;
		const char *value;
	} set[] = {
		{ SC_FETCHOPT_QUIET, NULL },
		{ SC_FETCHOPT_USER_AGENT, "sc-render/" SC_VERSION },
		{ SC_FETCHOPT_RETRIES, "1" },
	};

	if (!a->fetcher) {
		char secs[32];
		a->fetcher = sc_fetcher_new(fetched, a);
		for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
			(void)sc_fetcher_setopt(a->fetcher, set[i].opt, set[i].value, NULL);
		/* A deadline on it: the command deadline. */
		snprintf(secs, sizeof(secs), "%.3f", a->r->opts.command_ms / 1000.0);
		(void)sc_fetcher_setopt(a->fetcher, SC_FETCHOPT_TIMEOUT, secs, NULL);
	}
	if (asprintf(&url, "%s/robots.txt", en->key) < 0)
		sc_die(1, "out of memory");
	if (sc_fetcher_submit(a->fetcher, url, en, &err) != SC_OK) {
		/* Cannot be asked: unreachable, as for a fetch that failed. */
		en->rules = sc_robots_disallow_all(SC_ROBOTS_UNREACHABLE);
		en->state = RB_KNOWN;
	}
	sc_free(err);
	free(url);
}

/* The origin's entry; a new one is looked up in the cache, or fetched. */
static struct robots_entry *entry_for(struct admit *a, const char *origin)
{
	struct sc_strtab_link *l = sc_strtab_find(&a->table, origin);

	if (l)
		return SC_STRTAB_ENTRY(l, struct robots_entry, link);
	struct robots_entry *en = sc_calloc(1, sizeof(*en));
	en->key = sc_strdup(origin);
	en->held_tail = &en->held;
	sc_strtab_add(&a->table, &en->link, en->key);
	long status = 0;
	char *body = NULL;
	size_t len = 0;
	if (a->cache && sc_robots_cache_get(a->cache, origin, sc_wall_ms(), &status, &body, &len,
	                                    NULL, 0) > 0) {
		en->rules = sc_robots_from_fetch(status, body, len, a->agent);
		en->state = RB_KNOWN;
	} else {
		en->state = RB_FETCHING;
		fetch_robots(a, en);
	}
	free(body);
	return en;
}

/* Whether the entry allows the URL; why gets the refusal's message. */
static bool allowed(const struct robots_entry *en, const char *pq, char *why, size_t whylen)
{
	const char *rule = NULL;

	if (sc_robots_match(en->rules, pq, &rule))
		return true;
	if (rule)
		snprintf(why, whylen, "disallowed by robots.txt rule \"Disallow: %.*s\"",
		         (int)(whylen > 80 ? whylen - 80 : 1), rule);
	else
		snprintf(why, whylen, "%s", sc_robots_why(en->rules));
	return false;
}

static void decide(struct render *r, struct tab *t, const json_t *params, long seq);

void admit_paused(struct render *r, struct tab *t, const json_t *params)
{
	decide(r, t, params, t->seq);
}

static void decide(struct render *r, struct tab *t, const json_t *params, long seq)
{
	const json_t *req = json_object_get(params, "request");
	const char *url = str(req, "url"), *type = str(params, "resourceType");
	/* The tab's own document (not a frame's): the page itself. */
	bool doc = type && strcmp(type, "Document") == 0 && t->target && str(params, "frameId") &&
	           strcmp(str(params, "frameId"), t->target) == 0;
	char *origin = NULL, *pq = NULL, why[512];

	if (!doc && blocked(r, type, url)) {
		refuse(r, t, params, false, "--block");
		return;
	}
	if (r->admit && url && sc_robots_split_url(url, &origin, &pq) == 0) {
		struct robots_entry *en = entry_for(r->admit, origin);
		free(origin);
		if (en->state != RB_KNOWN) {
			struct held *h = sc_calloc(1, sizeof(*h));
			h->tab = (int)(t - r->tabs);
			h->seq = seq;
			h->params = json_deep_copy(params);
			*en->held_tail = h;
			en->held_tail = &h->next;
			free(pq);
			return;
		}
		bool ok = allowed(en, pq, why, sizeof(why));
		free(pq);
		if (!ok) {
			refuse(r, t, params, doc, why);
			return;
		}
	}
	tab_proceed(r, t, params);
}

static void fetched(sc_fetcher *f, const sc_result *res, void *user, void *ctx)
{
	struct admit *a = ctx;
	struct robots_entry *en = user;
	enum sc_outcome oc = sc_result_outcome(res);
	long status = 0;
	size_t len = 0;
	const char *body = NULL;

	(void)f;
	/* A response that says something has its status; a timeout or a
	 * network error none: unreachable (sc-fetch --robots' rule). */
	if (oc == SC_OUTCOME_OK || oc == SC_OUTCOME_HTTP || oc == SC_OUTCOME_TOO_MANY_REDIRECTS ||
	    oc == SC_OUTCOME_TOO_LARGE)
		status = sc_result_status(res);
	if (status >= 200 && status <= 299)
		body = sc_result_body(res, &len);
	en->rules = sc_robots_from_fetch(status, body ? body : "", body ? len : 0, a->agent);
	en->state = RB_KNOWN;
	if (a->cache && status != 0)
		(void)sc_robots_cache_put(a->cache, en->key, sc_wall_ms(), status, body ? body : "",
		                          body ? len : 0, NULL, 0);
	/* The requests held meanwhile, in their order. */
	struct held *h = en->held;
	en->held = NULL;
	en->held_tail = &en->held;
	while (h) {
		struct held *next = h->next;
		struct tab *t = &a->r->tabs[h->tab];
		if (t->page && t->session && t->seq == h->seq)
			decide(a->r, t, h->params, h->seq);
		json_decref(h->params);
		free(h);
		h = next;
	}
}

int admit_fd(const struct render *r)
{
	return r->admit && r->admit->fetcher ? sc_fetcher_fd(r->admit->fetcher) : -1;
}

double admit_next(const struct render *r, double next)
{
	if (!r->admit || !r->admit->fetcher || !sc_fetcher_pending(r->admit->fetcher))
		return next;
	long ms = sc_fetcher_timeout(r->admit->fetcher);
	if (ms >= 0 && sc_now_ms() + (double)ms < next)
		return sc_now_ms() + (double)ms;
	return next;
}

void admit_perform(struct render *r)
{
	if (r->admit && r->admit->fetcher && sc_fetcher_pending(r->admit->fetcher))
		sc_fetcher_perform(r->admit->fetcher);
}
