/* cookies.c: the run's cookie jars, a browser context each (struct jar).
 * The run's jar is the browser's context; each record "session" names a
 * jar of its own, kept apart, made when its first page comes, in memory
 * only (as sc-fetch's).  After each page the context's cookies are read
 * (Storage.getCookies) and kept, so that a browser restarted (recycled or
 * crashed) gets them back in its new contexts before their next page.
 *
 * --cookies FILE makes the run's jar the crawl's (web/cookiefile: the
 * cookies.txt every sc-fetch of the crawl reads and writes at once).
 * Before a page is navigated, a file that changed since it was last
 * synced is put into the context (Storage.setCookies: its new and changed
 * cookies, and an expired one for each it dropped); after the DOM is
 * read, the context's cookies are merged into the file, before the page's
 * record goes out, so that a program downstream finds them there.  The
 * context is the run's: what its pages set reaches the file whichever tab
 * set it.
 *
 * The jar's lines are written as curl writes them: "#HttpOnly_" before
 * an HttpOnly cookie's domain, TRUE for a domain cookie (Chromium's
 * leading dot), 0 for a session cookie's expiry.  A partitioned cookie
 * (CHIPS) has no place in the format and stays in the browser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "render.h"
#include "web/cookiefile.h"

struct render_cookies {
	struct sc_cookiefile *file;
	struct sc_cookie_lines mirror; /* the context's cookies as last got or put */
	bool warned;
};

int cookies_init(struct render *r, char *err, size_t errlen)
{
	char why[300];

	if (!r->opts.cookies)
		return 0;
	struct sc_cookiefile *file = sc_cookiefile_open(
	        r->opts.cookies, "sc-render (Chromium's cookies)", why, sizeof(why));
	if (!file)
		return snprintf(err, errlen, "--cookies: %.240s", why), -1;
	r->cookies = sc_calloc(1, sizeof(*r->cookies));
	r->cookies->file = file;
	return 0;
}

void cookies_free(struct render *r)
{
	struct sc_strtab_link *l = r->jars.head, *next;

	for (; l; l = next) {
		struct jar *j = SC_STRTAB_ENTRY(l, struct jar, link);
		next = l->next;
		free(j->name);
		free(j->context);
		json_decref(j->kept);
		free(j);
	}
	sc_strtab_free(&r->jars);
	json_decref(r->run_jar.kept);
	r->run_jar.kept = NULL;
	if (!r->cookies)
		return;
	sc_cookiefile_free(r->cookies->file);
	sc_cookie_lines_free(&r->cookies->mirror);
	free(r->cookies);
	r->cookies = NULL;
}

void cookies_browser_new(struct render *r)
{
	r->jars_making = 0;
	for (struct sc_strtab_link *l = r->jars.head; l; l = l->next) {
		struct jar *j = SC_STRTAB_ENTRY(l, struct jar, link);
		free(j->context);
		j->context = NULL;
		j->making = 0;
		j->refill = json_array_size(j->kept) > 0;
	}
	if (!r->cookies) {
		r->run_jar.refill = json_array_size(r->run_jar.kept) > 0;
		return;
	}
	/* A new context holds none: the file is put into it at the next page
	 * (what the last one's pages set was saved as each ended). */
	sc_cookie_lines_clear(&r->cookies->mirror);
	sc_cookiefile_synced(r->cookies->file, &r->cookies->mirror);
}

struct jar *jar_of(struct render *r, const char *session)
{
	if (!session)
		return &r->run_jar;
	struct sc_strtab_link *l = sc_strtab_find(&r->jars, session);
	if (l)
		return SC_STRTAB_ENTRY(l, struct jar, link);
	struct jar *j = sc_calloc(1, sizeof(*j));
	j->name = sc_strdup(session);
	sc_strtab_add(&r->jars, &j->link, j->name);
	return j;
}

const char *jar_context(const struct render *r, const struct jar *j)
{
	return j->name ? j->context : r->b.context;
}

long jar_make(struct render *r, struct jar *j)
{
	if (!j->making) {
		j->making = browser_send(&r->b, NULL, "Target.createBrowserContext",
		                         json_pack("{s:b}", "disposeOnDetach", 1));
		r->jars_making++;
	}
	return j->making;
}

struct jar *jar_reply(struct render *r, long id, const json_t *msg)
{
	/* Most replies are not: no walk of the sessions for them. */
	if (!r->jars_making)
		return NULL;
	for (struct sc_strtab_link *l = r->jars.head; l; l = l->next) {
		struct jar *j = SC_STRTAB_ENTRY(l, struct jar, link);
		if (j->making != id)
			continue;
		const char *ctx = json_string_value(
		        json_object_get(json_object_get(msg, "result"), "browserContextId"));
		j->making = 0;
		r->jars_making--;
		free(j->context);
		j->context = ctx ? sc_strdup(ctx) : NULL;
		return j;
	}
	return NULL;
}

static void warn_once(struct render *r, const char *what)
{
	if (r->cookies->warned)
		return;
	r->cookies->warned = true;
	sc_warn("--cookies: %s: %s", r->opts.cookies, what);
}

static bool has_tab_or_newline(const char *s)
{
	return !s || strpbrk(s, "\t\r\n") != NULL;
}

/* A Storage cookie as a cookies.txt line (malloced), or NULL for one the
 * format cannot hold. */
static char *cookie_line(const json_t *ck)
{
	const char *name = json_string_value(json_object_get(ck, "name"));
	const char *value = json_string_value(json_object_get(ck, "value"));
	const char *domain = json_string_value(json_object_get(ck, "domain"));
	const char *path = json_string_value(json_object_get(ck, "path"));
	bool session = json_is_true(json_object_get(ck, "session"));
	double expires = json_number_value(json_object_get(ck, "expires"));
	char *line;

	if (json_object_get(ck, "partitionKey") || has_tab_or_newline(name) ||
	    has_tab_or_newline(value) || has_tab_or_newline(domain) || has_tab_or_newline(path) ||
	    !*domain)
		return NULL;
	if (asprintf(&line, "%s%s\t%s\t%s\t%s\t%lld\t%s\t%s",
	             json_is_true(json_object_get(ck, "httpOnly")) ? "#HttpOnly_" : "", domain,
	             *domain == '.' ? "TRUE" : "FALSE", *path ? path : "/",
	             json_is_true(json_object_get(ck, "secure")) ? "TRUE" : "FALSE",
	             session || expires <= 0 ? 0LL : (long long)expires, name, value) < 0)
		sc_die(1, "out of memory");
	return line;
}

/* A cookies.txt line as a Storage.setCookies cookie; expired: one that
 * deletes it.  NULL for a line too short. */
static json_t *cookie_param(const char *line, bool expired)
{
	size_t len[7];
	const char *f[7];

	for (int i = 0; i < 7; i++)
		f[i] = sc_cookie_field(line, i, &len[i]);
	if (!len[0] || !len[2] || !len[5])
		return NULL;
	bool http_only = len[0] >= 10 && strncmp(f[0], "#HttpOnly_", 10) == 0;
	const char *domain = http_only ? f[0] + 10 : f[0];
	int dlen = (int)(len[0] - (http_only ? 10 : 0));
	bool secure = len[3] == 4 && strncmp(f[3], "TRUE", 4) == 0;
	bool subdomains = len[1] == 4 && strncmp(f[1], "TRUE", 4) == 0;
	long long expires = strtoll(f[4], NULL, 10);
	char *name = sc_strndup(f[5], len[5]), *value = sc_strndup(f[6], len[6]);
	char *path = sc_strndup(f[2], len[2]), *where;
	json_t *p = json_pack("{s:s,s:s,s:s,s:b,s:b}", "name", name, "value", value, "path", path,
	                      "secure", secure, "httpOnly", http_only);

	if (subdomains) {
		/* A domain cookie: Chromium's spelling has the dot. */
		if (asprintf(&where, "%s%.*s", *domain == '.' ? "" : ".", dlen, domain) < 0)
			sc_die(1, "out of memory");
		json_object_set_new(p, "domain", json_string(where));
	} else {
		/* Host-only: named by a URL, as a domain would make it a domain
		 * cookie; an IPv6 address in brackets. */
		bool v6 = memchr(domain, ':', (size_t)dlen) && *domain != '[';
		if (asprintf(&where, "%s://%s%.*s%s%s", secure ? "https" : "http", v6 ? "[" : "",
		             dlen, domain, v6 ? "]" : "", path) < 0)
			sc_die(1, "out of memory");
		json_object_set_new(p, "url", json_string(where));
	}
	if (expired)
		json_object_set_new(p, "expires", json_real(1.0));
	else if (expires > 0)
		json_object_set_new(p, "expires", json_real((double)expires));
	free(where);
	free(name);
	free(value);
	free(path);
	return p;
}

/* Storage.setCookies's list: what into holds otherwise than the mirror,
 * and the mirror's cookies into dropped, expired. */
static json_t *changes(const struct sc_cookie_lines *mirror, const struct sc_cookie_lines *into)
{
	json_t *list = json_array();
	json_t *p;

	for (size_t i = 0; i < into->n; i++) {
		const char *was = sc_cookie_lines_find(mirror, into->v[i]);
		if (!(was && strcmp(was, into->v[i]) == 0) && (p = cookie_param(into->v[i], false)))
			json_array_append_new(list, p);
	}
	for (size_t i = 0; i < mirror->n; i++)
		if (!sc_cookie_lines_find(into, mirror->v[i]) &&
		    (p = cookie_param(mirror->v[i], true)))
			json_array_append_new(list, p);
	return list;
}

/* The run's context made what into says (Storage.setCookies, when it
 * holds a change): the command's id, or 0 when none was sent. */
static long put(struct render *r, const struct sc_cookie_lines *into)
{
	struct render_cookies *c = r->cookies;
	json_t *list = changes(&c->mirror, into);
	long id = 0;

	sc_cookie_lines_copy(&c->mirror, into); /* sorted, as the file's merge leaves it */
	sc_cookiefile_synced(c->file, &c->mirror);
	if (json_array_size(list))
		id = browser_send(
		        &r->b, NULL, "Storage.setCookies",
		        json_pack("{s:o,s:s}", "cookies", list, "browserContextId", r->b.context));
	else
		json_decref(list);
	return id;
}

/* The run's jar with --cookies: the file's changes into the context. */
static long file_before(struct render *r)
{
	struct render_cookies *c = r->cookies;
	struct sc_cookie_lines into = { 0 };
	long id = 0;

	int rc = sc_cookiefile_load(c->file, &c->mirror, &into);
	if (rc == 2 && sc_cookiefile_save(c->file, &c->mirror, &into) < 0)
		warn_once(r, "cannot be written (the cookies are kept for the next try)");
	else if (rc > 0)
		id = put(r, &into);
	sc_cookie_lines_free(&into);
	return id;
}

long cookies_before(struct render *r, struct jar *j)
{
	if (!j->name && r->cookies)
		return file_before(r);
	if (!j->refill)
		return 0;
	j->refill = false;
	if (!json_array_size(j->kept))
		return 0;
	return browser_send(
	        &r->b, NULL, "Storage.setCookies",
	        json_pack("{s:O,s:s}", "cookies", j->kept, "browserContextId", jar_context(r, j)));
}

long cookies_after(struct render *r, struct jar *j)
{
	return browser_send(&r->b, NULL, "Storage.getCookies",
	                    json_pack("{s:s}", "browserContextId", jar_context(r, j)));
}

/* The run's jar with --cookies: jar, the context's cookies now, merged
 * into the file. */
static void file_got(struct render *r, const struct sc_cookie_lines *jar)
{
	struct sc_cookie_lines into = { 0 };

	/* Nothing set, changed or gone: no lock taken, nothing written (the
	 * next page's look at the file brings others' changes). */
	if (sc_cookie_lines_same(jar, &r->cookies->mirror))
		return;
	if (sc_cookiefile_save(r->cookies->file, jar, &into) < 0) {
		warn_once(r, "cannot be written (the cookies are kept for the next try)");
	} else {
		/* The context holds jar now; others' changes, in into, go to it. */
		sc_cookie_lines_copy(&r->cookies->mirror, jar);
		(void)put(r, &into);
	}
	sc_cookie_lines_free(&into);
}

/* A Storage cookie as a Storage.setCookies one, all it says kept (its
 * SameSite, priority and partition too, which cookies.txt cannot hold);
 * a host-only cookie named by a URL, as a domain makes a domain cookie. */
static json_t *param_of(const json_t *ck)
{
	static const char *const same[] = { "name",       "value",       "path",     "secure",
		                            "httpOnly",   "sameSite",    "priority", "sourceScheme",
		                            "sourcePort", "partitionKey" };
	const char *domain = json_string_value(json_object_get(ck, "domain"));
	const char *path = json_string_value(json_object_get(ck, "path"));
	json_t *p = json_object();

	if (!domain || !*domain || !json_string_value(json_object_get(ck, "name")))
		return json_decref(p), NULL;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (json_object_get(ck, same[i]))
			json_object_set(p, same[i], json_object_get(ck, same[i]));
	if (!json_is_true(json_object_get(ck, "session")))
		json_object_set(p, "expires", json_object_get(ck, "expires"));
	if (*domain == '.') {
		json_object_set_new(p, "domain", json_string(domain));
	} else {
		bool v6 = strchr(domain, ':') && *domain != '[';
		char *url;
		if (asprintf(&url, "%s://%s%s%s%s",
		             json_is_true(json_object_get(ck, "secure")) ? "https" : "http",
		             v6 ? "[" : "", domain, v6 ? "]" : "", path && *path ? path : "/") < 0)
			sc_die(1, "out of memory");
		json_object_set_new(p, "url", json_string(url));
		free(url);
	}
	return p;
}

void cookies_got(struct render *r, struct jar *j, const json_t *result)
{
	const json_t *list = json_object_get(result, "cookies"), *ck;
	size_t i;

	if (!json_is_array(list)) {
		if (r->cookies && !j->name)
			warn_once(r, "the browser did not give its cookies");
		return;
	}
	if (!j->name && r->cookies) {
		struct sc_cookie_lines jar = { 0 };
		json_array_foreach(list, i, ck)
		{
			char *line = cookie_line(ck);
			if (line)
				sc_cookie_lines_add(&jar, line);
			free(line);
		}
		sc_cookie_lines_sort(&jar);
		file_got(r, &jar);
		sc_cookie_lines_free(&jar);
		return;
	}
	json_t *kept = json_array(), *p;
	json_array_foreach(list, i, ck)
	{
		if ((p = param_of(ck)))
			json_array_append_new(kept, p);
	}
	json_decref(j->kept);
	j->kept = kept;
}
