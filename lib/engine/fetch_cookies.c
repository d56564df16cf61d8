/* fetch_cookies: the run's cookie jars (sc-fetch(1), "Cookies").  Owns
 * one libcurl share of cookies per session (the default one, and one per
 * record "session" member seen), which every transfer of that session is
 * attached to, so that libcurl's cookie engine (RFC 6265's domain, path,
 * secure, expiry and host-only rules) keeps one jar across the run's
 * handles; and, with --cookies FILE, the default jar's file in the
 * Netscape cookies.txt format curl and wget read and write: loaded at the
 * start, loaded again before a request when another process changed it,
 * and written (to a temporary file, renamed over it; mode 0600) after a
 * response that set a cookie.  fetch_transfer calls it when it sets up a
 * transfer and when the transfer's headers arrive. */
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
	struct sc_strtab sessions; /* the named jars, in order of first use */
	/* --cookies FILE: the default jar's file. */
	char *path;        /* borrowed from the options */
	CURL *file_handle; /* attached to the default share: loads and lists it */
	struct stat seen;  /* the file as last loaded or written; st_ino 0: none */
	uint64_t loads, saves, save_errors;
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

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* One line of a cookies.txt file into the jar.  wget writes the domain
 * of a server on a port but 80 and 443 as "host:port", which would match
 * no host: the port is left out, as curl writes it. */
static void load_line(CURL *handle, char *line)
{
	line[strcspn(line, "\r\n")] = '\0';
	if (!*line || (*line == '#' && strncmp(line, "#HttpOnly_", 10) != 0))
		return;
	char *tab = strchr(line, '\t');
	char *colon = tab ? memchr(line, ':', (size_t)(tab - line)) : NULL;
	if (colon && !memchr(line, '[', (size_t)(tab - line)))
		memmove(colon, tab, strlen(tab) + 1);
	curl_easy_setopt(handle, CURLOPT_COOKIELIST, line);
}

/* Loads the file into the default jar when it is not as last seen (a
 * cookie of the file replaces the jar's of the same name, domain and
 * path; the jar's others stay). */
static void load_if_changed(struct fetch_cookies *c)
{
	struct stat st;
	char *line = NULL;
	size_t cap = 0;

	/* Looked at before each request: one stat while nothing changed. */
	if (stat(c->path, &st) != 0 || (c->seen.st_ino != 0 && same_file(&st, &c->seen)))
		return;
	FILE *f = fopen(c->path, "re");
	if (!f || fstat(fileno(f), &st) != 0) { /* the file as read, if replaced meanwhile */
		if (f)
			(void)fclose(f); /* read only */
		return;
	}
	while (getline(&line, &cap, f) >= 0)
		load_line(c->file_handle, line);
	free(line);
	(void)fclose(f); /* read only */
	c->seen = st;
	c->loads++;
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
	c->path = o->cookies_path;
	/* A jar that cannot be read is an error at start, as curl's -b is
	 * not; one not there yet is made at the first cookie. */
	int fd = open(c->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && errno != ENOENT) {
		snprintf(err, errlen, "--cookies: %.200s: %s", c->path, strerror(errno));
		return false;
	}
	if (fd >= 0) {
		bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		close(fd);
		if (!regular) {
			snprintf(err, errlen, "--cookies: %.200s: not a file", c->path);
			return false;
		}
	}
	if (!(c->file_handle = curl_easy_init())) /* only for want of memory */
		sc_die(1, "out of memory");
	curl_easy_setopt(c->file_handle, CURLOPT_SHARE, c->default_jar.share);
	load_if_changed(c);
	return true;
}

void fetch_cookies_free(struct fetch_engine *e)
{
	struct fetch_cookies *c = e->cookies;

	if (!c)
		return;
	if (c->file_handle)
		curl_easy_cleanup(c->file_handle);
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
	if (!session && c->path)
		load_if_changed(c);
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

/* Writes the default jar to a temporary file beside the jar, then renames
 * it over the jar, so that a reader (another sc-fetch, curl -b) sees the
 * old file or the new, whole.  mkstemp makes it 0600. */
static bool save(struct fetch_cookies *c)
{
	struct curl_slist *list = NULL;
	size_t n = strlen(c->path);
	char *tmp = sc_malloc(n + 8);

	memcpy(tmp, c->path, n);
	memcpy(tmp + n, ".XXXXXX", 8);
	int fd = mkostemp(tmp, O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		free(tmp);
		return false;
	}
	curl_easy_getinfo(c->file_handle, CURLINFO_COOKIELIST, &list);
	fputs("# Netscape HTTP Cookie File\n"
	      "# Written by sc-fetch (libcurl's cookie engine). Edit at your own risk.\n\n",
	      f);
	for (struct curl_slist *l = list; l; l = l->next)
		fprintf(f, "%s\n", l->data);
	curl_slist_free_all(list);
	bool ok = fflush(f) == 0 && !ferror(f);
	ok = fclose(f) == 0 && ok;
	ok = ok && rename(tmp, c->path) == 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	if (ok)
		(void)stat(c->path, &c->seen); /* our own write is no change to load */
	return ok;
}

void fetch_cookies_changed(struct fetch_engine *e, const struct job *job)
{
	struct fetch_cookies *c = e->cookies;

	if (!c || !c->path || fetch_cookies_session(job))
		return;
	if (save(c))
		c->saves++;
	else
		c->save_errors++;
}

void fetch_cookies_summary(const struct fetch_engine *e, json_t *summary)
{
	const struct fetch_cookies *c = e->cookies;

	if (!c || !c->path)
		return;
	json_object_set_new(summary, "cookies",
	                    json_pack("{sIsIsI}", "loads", (json_int_t)c->loads, "saves",
	                              (json_int_t)c->saves, "save_errors",
	                              (json_int_t)c->save_errors));
}
