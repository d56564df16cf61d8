/* fetch_cookies: the run's cookie jars (sc-fetch(1), "Cookies").  Owns
 * one libcurl share of cookies per session (the default one, and one per
 * record "session" member seen), which every transfer of that session is
 * attached to, so that libcurl's cookie engine (RFC 6265's domain, path,
 * secure, expiry and host-only rules) keeps one jar across the run's
 * handles; and, with --cookies FILE, the default jar's file
 * (fetch_cookiefile.c: read again before a request when another process
 * changed it, merged into under a lock after a response that set a
 * cookie).  fetch_transfer calls it when it sets up a transfer and when
 * the transfer ends. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/fetch_engine.h"

struct jar {
	char *session;              /* NULL: the default jar (owned) */
	CURLSH *share;              /* its cookies */
	struct sc_strtab_link link; /* in the table, by session */
};

struct fetch_cookies {
	struct jar default_jar;
	struct sc_strtab sessions;     /* the named jars, in order of first use */
	struct fetch_cookiefile *file; /* --cookies FILE: the default jar's */
	bool lost; /* --login-url: an answer of the default session ended there */
	uint64_t lost_answers, not_requested;
};

static struct jar *jar_of(struct sc_strtab_link *link)
{
	return link ? SC_STRTAB_ENTRY(link, struct jar, link) : NULL;
}

static CURLSH *new_share(void)
{
	CURLSH *share = curl_share_init();
	/* Both fail only for want of memory. */
	if (!share ||
	    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE) != CURLSHE_OK)
		sc_die(1, "out of memory");
	return share;
}

bool fetch_cookies_init(struct fetch_engine *e, char *err, size_t errlen)
{
	const struct fetch_options *o = e->opts;

	if (o->no_cookies)
		return true;
	struct fetch_cookies *c = sc_calloc(1, sizeof(*c));
	e->cookies = c;
	c->default_jar.share = new_share();
	if (!o->cookies_path)
		return true;
	c->file = fetch_cookiefile_open(o->cookies_path, c->default_jar.share, err, errlen);
	return c->file != NULL;
}

void fetch_cookies_free(struct fetch_engine *e)
{
	struct fetch_cookies *c = e->cookies;

	if (!c)
		return;
	fetch_cookiefile_free(c->file);
	for (struct sc_strtab_link *l = c->sessions.head, *next; l; l = next) {
		struct jar *jar = jar_of(l);
		next = l->next;
		curl_share_cleanup(jar->share);
		free(jar->session);
		free(jar);
	}
	sc_strtab_free(&c->sessions);
	curl_share_cleanup(c->default_jar.share);
	free(c);
	e->cookies = NULL;
}

static struct jar *jar_for(struct fetch_cookies *c, const char *session)
{
	if (!session)
		return &c->default_jar;
	struct jar *jar = jar_of(sc_strtab_find(&c->sessions, session));
	if (jar)
		return jar;
	jar = sc_calloc(1, sizeof(*jar));
	jar->session = sc_strdup(session);
	jar->share = new_share();
	sc_strtab_add(&c->sessions, &jar->link, jar->session);
	return jar;
}

const char *fetch_cookies_session(const struct job *job)
{
	return job->rec ? json_string_value(json_object_get(job->rec, "session")) : NULL;
}

void fetch_cookies_setup(struct fetch_engine *e, CURL *easy, const struct job *job)
{
	struct fetch_cookies *c = e->cookies;

	if (!c) {
		curl_easy_setopt(easy, CURLOPT_SHARE, NULL);
		return;
	}
	const char *session = fetch_cookies_session(job);
	struct jar *jar = jar_for(c, session);
	if (!session && c->file)
		fetch_cookiefile_load(c->file);
	curl_easy_setopt(easy, CURLOPT_SHARE, jar->share);
	/* "": the cookie engine on, with no file of the handle's own (the
	 * handle was reset: fetch_cookies_release). */
	curl_easy_setopt(easy, CURLOPT_COOKIEFILE, "");
}

void fetch_cookies_release(struct fetch_engine *e, CURL *easy)
{
	/* curl_easy_reset forgets the handle's list of cookie files without
	 * freeing it (libcurl 7.88; valgrind: lost): NULL frees it first,
	 * and leaves the share's cookies be. */
	if (e->cookies)
		curl_easy_setopt(easy, CURLOPT_COOKIEFILE, NULL);
}

void fetch_cookies_changed(struct fetch_engine *e, const struct job *job)
{
	struct fetch_cookies *c = e->cookies;

	if (c && c->file && !fetch_cookies_session(job))
		fetch_cookiefile_save(c->file);
}

/* --login-url: a site that lost the session (it expired, the server
 * forgot it) redirects to its login page, and every request of that
 * session after it would be answered so too.  The first such answer
 * marks the session lost: the record says so, and what has not started
 * is not sent (fetch_cookies_held), for a login and a later run (crawl.mk
 * logs in again and fetches them anew).  The login page itself, asked
 * for, is no loss. */
bool fetch_cookies_lost(struct fetch_engine *e, const struct job *job, const char *final_url,
                        struct outcome *oc)
{
	struct fetch_cookies *c = e->cookies;
	const char *login = e->opts->login_url;

	if (!c || !login || !final_url || fetch_cookies_session(job) || job->robots_for)
		return false;
	size_t n = strlen(login);
	if (strncmp(final_url, login, n) != 0 || strncmp(job->url, login, n) == 0)
		return false;
	c->lost = true;
	c->lost_answers++;
	oc->kind = SC_ERR_SESSION_LOST;
	snprintf(oc->message, sizeof(oc->message),
	         "HTTP %ld at the login page (--login-url): the session was lost", oc->status);
	return true;
}

bool fetch_cookies_held(struct fetch_engine *e, const struct job *job)
{
	struct fetch_cookies *c = e->cookies;

	if (!c || !c->lost || fetch_cookies_session(job) || job->robots_for)
		return false;
	c->not_requested++;
	return true;
}

void fetch_cookies_summary(const struct fetch_engine *e, json_t *summary)
{
	const struct fetch_cookies *c = e->cookies;

	if (c && c->file)
		fetch_cookiefile_summary(c->file, summary);
	if (c && e->opts->login_url)
		json_object_set_new(summary, "session_lost",
		                    json_pack("{sIsI}", "answers", (json_int_t)c->lost_answers,
		                              "not_requested", (json_int_t)c->not_requested));
}
