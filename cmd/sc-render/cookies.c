/* cookies.c: --cookies FILE, the crawl's one jar (web/cookiefile: the
 * cookies.txt every sc-fetch of the crawl reads and writes at once)
 * shared with the browser's context.  Before a page is navigated, a file
 * that changed since it was last synced is put into the context
 * (Storage.setCookies: its new and changed cookies, and an expired one
 * for each it dropped); after the DOM is read, the context's cookies
 * (Storage.getCookies) are merged into the file, before the page's record
 * goes out, so that a program downstream finds them there.  The context
 * is the run's: what its pages set reaches the file whichever tab set it.
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
	if (!r->cookies)
		return;
	sc_cookiefile_free(r->cookies->file);
	sc_cookie_lines_free(&r->cookies->mirror);
	free(r->cookies);
	r->cookies = NULL;
}

void cookies_browser_new(struct render *r)
{
	struct render_cookies *c = r->cookies;

	if (!c)
		return;
	/* A new context holds none: the file is put into it at the next page
	 * (what the last one's pages set was saved as each ended). */
	sc_cookie_lines_clear(&c->mirror);
	sc_cookiefile_synced(c->file, &c->mirror);
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

/* The context made what into says (Storage.setCookies, when it holds a
 * change): the command's id, or 0 when none was sent. */
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

long cookies_before(struct render *r)
{
	struct render_cookies *c = r->cookies;
	struct sc_cookie_lines into = { 0 };
	long id = 0;

	if (!c)
		return 0;
	int rc = sc_cookiefile_load(c->file, &c->mirror, &into);
	if (rc == 2 && sc_cookiefile_save(c->file, &c->mirror, &into) < 0)
		warn_once(r, "cannot be written (the cookies are kept for the next try)");
	else if (rc > 0)
		id = put(r, &into);
	sc_cookie_lines_free(&into);
	return id;
}

long cookies_after(struct render *r)
{
	if (!r->cookies)
		return 0;
	return browser_send(&r->b, NULL, "Storage.getCookies",
	                    json_pack("{s:s}", "browserContextId", r->b.context));
}

void cookies_got(struct render *r, const json_t *result)
{
	struct render_cookies *c = r->cookies;
	struct sc_cookie_lines jar = { 0 }, into = { 0 };
	const json_t *list = json_object_get(result, "cookies"), *ck;
	size_t i;

	if (!c)
		return;
	if (!json_is_array(list)) {
		warn_once(r, "the browser did not give its cookies");
		return;
	}
	json_array_foreach(list, i, ck)
	{
		char *line = cookie_line(ck);
		if (line)
			sc_cookie_lines_add(&jar, line);
		free(line);
	}
	sc_cookie_lines_sort(&jar);
	/* Nothing set, changed or gone: no lock taken, nothing written (the
	 * next page's look at the file brings others' changes). */
	if (sc_cookie_lines_same(&jar, &c->mirror)) {
		sc_cookie_lines_free(&jar);
		return;
	}
	if (sc_cookiefile_save(c->file, &jar, &into) < 0) {
		warn_once(r, "cannot be written (the cookies are kept for the next try)");
	} else {
		/* The context holds jar now; others' changes, in into, go to it. */
		sc_cookie_lines_copy(&c->mirror, &jar);
		(void)put(r, &into);
	}
	sc_cookie_lines_free(&jar);
	sc_cookie_lines_free(&into);
}
