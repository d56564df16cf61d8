/* fetch_cookiefile: the default jar's file, --cookies FILE: libcurl's
 * cookie engine on one side, web/cookiefile's shared cookies.txt on the
 * other (which says how several processes write it at once).  Before a
 * request the file is read again when another process changed it; after
 * a response that set a cookie the jar's changes are merged into it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/fetch_engine.h"
#include "web/cookiefile.h"

struct fetch_cookiefile {
	struct sc_cookiefile *file;
	CURL *handle; /* attached to the default share: loads and lists it */
};

/* The jar as libcurl holds it now, expired cookies left out: libcurl
 * keeps one a Set-Cookie deleted (Max-Age=0: expiry 1) in its list until
 * it next cleans up, and the file would hold it as a dead line. */
static void jar_lines(CURL *handle, struct sc_cookie_lines *into)
{
	struct curl_slist *list = NULL;
	time_t now = time(NULL);

	curl_easy_getinfo(handle, CURLINFO_COOKIELIST, &list);
	for (struct curl_slist *l = list; l; l = l->next)
		if (!sc_cookie_line_expired(l->data, now))
			sc_cookie_lines_add(into, l->data);
	curl_slist_free_all(list);
	sc_cookie_lines_sort(into);
}

/* The jar made what lines says, and the file told what libcurl then
 * holds (its own spelling). */
static void jar_set(struct fetch_cookiefile *c, const struct sc_cookie_lines *lines,
                    const struct sc_cookie_lines *jar)
{
	struct sc_cookie_lines now = { 0 };

	if (!sc_cookie_lines_same(lines, jar)) {
		curl_easy_setopt(c->handle, CURLOPT_COOKIELIST, "ALL");
		for (size_t i = 0; i < lines->n; i++)
			curl_easy_setopt(c->handle, CURLOPT_COOKIELIST, lines->v[i]);
	}
	jar_lines(c->handle, &now);
	sc_cookiefile_synced(c->file, &now);
	sc_cookie_lines_free(&now);
}

struct fetch_cookiefile *fetch_cookiefile_open(const char *path, CURLSH *share, char *err,
                                               size_t errlen)
{
	char why[300];
	struct sc_cookiefile *file =
	        sc_cookiefile_open(path, "sc-fetch (libcurl's cookie engine)", why, sizeof(why));

	if (!file) {
		snprintf(err, errlen, "--cookies: %.240s", why);
		return NULL;
	}
	struct fetch_cookiefile *c = sc_calloc(1, sizeof(*c));
	c->file = file;
	if (!(c->handle = curl_easy_init())) /* only for want of memory */
		sc_die(1, "out of memory");
	curl_easy_setopt(c->handle, CURLOPT_SHARE, share);
	fetch_cookiefile_load(c); /* the jar is empty: no change of its own */
	return c;
}

void fetch_cookiefile_free(struct fetch_cookiefile *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->handle);
	sc_cookiefile_free(c->file);
	free(c);
}

void fetch_cookiefile_load(struct fetch_cookiefile *c)
{
	struct sc_cookie_lines jar = { 0 }, into = { 0 };

	jar_lines(c->handle, &jar);
	int rc = sc_cookiefile_load(c->file, &jar, &into);
	if (rc == 1)
		jar_set(c, &into, &jar);
	sc_cookie_lines_free(&jar);
	sc_cookie_lines_free(&into);
	/* A change not written yet (a write that failed; a cookie set where
	 * no Set-Cookie was seen, or expired): written now. */
	if (rc == 2)
		fetch_cookiefile_save(c);
}

void fetch_cookiefile_save(struct fetch_cookiefile *c)
{
	struct sc_cookie_lines jar = { 0 }, into = { 0 };

	jar_lines(c->handle, &jar);
	if (sc_cookiefile_save(c->file, &jar, &into) >= 0)
		jar_set(c, &into, &jar);
	sc_cookie_lines_free(&jar);
	sc_cookie_lines_free(&into);
}

void fetch_cookiefile_summary(const struct fetch_cookiefile *c, json_t *summary)
{
	const struct sc_cookiefile_counts *n = sc_cookiefile_counts(c->file);

	json_object_set_new(summary, "cookies",
	                    json_pack("{sIsIsIsI}", "loads", (json_int_t)n->loads, "saves",
	                              (json_int_t)n->saves, "merges", (json_int_t)n->merges,
	                              "save_errors", (json_int_t)n->save_errors));
}
