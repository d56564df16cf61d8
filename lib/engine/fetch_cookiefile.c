/* fetch_cookiefile: the default jar's file, one Netscape cookies.txt that
 * every process of a crawl reads and writes at once (sc-fetch(1),
 * "Cookies": "One jar for several processes").
 *
 * Why a text file and not SQLite: the file is then the one store, what
 * curl -b, wget --load-cookies and a person read while the crawl runs,
 * with no export that can lag behind; a jar is tens of cookies, so
 * rewriting it whole costs less than a transaction would.  What makes it
 * safe:
 * - a writer holds flock(LOCK_EX) on the file itself while it reads the
 *   file again, merges its own changes into it and renames the merged jar
 *   over it, so that two writers never lose each other's cookies; the
 *   lock is on the inode, so a writer that waited on a file renamed away
 *   meanwhile sees it (another inode at the path) and locks the new one;
 * - what a process writes is its changes only: the cookies its jar holds
 *   otherwise than as last read or written (set, changed, or gone: an
 *   expiry or a Set-Cookie that deletes), merged into the file as it is
 *   now, so that a cookie another process set since stays;
 * - the merged jar goes to a temporary file that is renamed over the jar:
 *   a reader without the lock, and a process killed at any point (kill
 *   -9; the kernel lets its lock go), leave the file old or new, whole.
 *   A temporary file left by a killed writer is removed at the next start
 *   (under the lock, when no writer can own one).
 * Readers take no lock: before a request, one stat, and the file read
 * into the jar only when it is not the one last seen. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/fetch_engine.h"

#define TMP_SUFFIX ".sc-tmp."

/* A jar as lines of cookies.txt, sorted by cookie (key_cmp). */
struct lines {
	char **v;
	size_t n, cap;
};

struct fetch_cookiefile {
	const char *path;       /* borrowed from the options */
	CURL *handle;           /* attached to the default share: loads and lists it */
	struct lines as_synced; /* the jar as last read from or written to the file */
	struct stat seen;       /* the file then; st_ino 0: none */
	uint64_t loads, saves, merges, save_errors;
};

/* Field i (0-based, tab-separated) of a cookies.txt line, and its length. */
static const char *field(const char *line, int i, size_t *len)
{
	for (; i > 0 && line; i--) {
		line = strchr(line, '\t');
		if (line)
			line++;
	}
	if (!line) {
		*len = 0;
		return "";
	}
	*len = strcspn(line, "\t");
	return line;
}

/* A cookie is its domain (without #HttpOnly_ or a leading dot, in any
 * case), path and name: what RFC 6265 replaces a cookie by. */
static int key_cmp(const char *a, const char *b)
{
	size_t la, lb;
	const char *da = field(a, 0, &la), *db = field(b, 0, &lb);
	if (la >= 10 && strncmp(da, "#HttpOnly_", 10) == 0)
		da += 10, la -= 10;
	if (lb >= 10 && strncmp(db, "#HttpOnly_", 10) == 0)
		db += 10, lb -= 10;
	if (la && *da == '.')
		da++, la--;
	if (lb && *db == '.')
		db++, lb--;
	int c = strncasecmp(da, db, la < lb ? la : lb);
	if (c || la != lb)
		return c ? c : (la < lb ? -1 : 1);
	for (int f = 2; f <= 5; f += 3) { /* path, then name */
		da = field(a, f, &la);
		db = field(b, f, &lb);
		c = strncmp(da, db, la < lb ? la : lb);
		if (c || la != lb)
			return c ? c : (la < lb ? -1 : 1);
	}
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	return key_cmp(*(char *const *)a, *(char *const *)b);
}

static void lines_add(struct lines *l, const char *line)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = sc_realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = sc_strdup(line);
}

static void lines_clear(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

static void lines_free(struct lines *l)
{
	lines_clear(l);
	free(l->v);
	*l = (struct lines){ 0 };
}

/* Sorted (a merge sort: stable, so that of two lines of one cookie the
 * later is kept, as libcurl keeps a file's later line when it loads it). */
static void lines_sort(struct lines *l)
{
	char **tmp = sc_malloc((l->n ? l->n : 1) * sizeof(*tmp)), **from = l->v, **to = tmp;
	size_t out = 0;

	for (size_t width = 1; width < l->n; width *= 2) {
		for (size_t lo = 0; lo < l->n; lo += 2 * width) {
			size_t mid = lo + width < l->n ? lo + width : l->n;
			size_t hi = lo + 2 * width < l->n ? lo + 2 * width : l->n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				to[k++] = key_cmp(from[j], from[i]) < 0 ? from[j++] : from[i++];
			while (i < mid)
				to[k++] = from[i++];
			while (j < hi)
				to[k++] = from[j++];
		}
		char **t = from;
		from = to;
		to = t;
	}
	if (from != l->v)
		memcpy(l->v, from, l->n * sizeof(*l->v));
	free(tmp);
	for (size_t i = 0; i < l->n; i++) {
		if (out > 0 && key_cmp(l->v[out - 1], l->v[i]) == 0) {
			free(l->v[out - 1]);
			l->v[out - 1] = l->v[i];
		} else
			l->v[out++] = l->v[i];
	}
	l->n = out;
}

static const char *lines_find(const struct lines *l, const char *line)
{
	char *const *hit = l->n ? bsearch(&line, l->v, l->n, sizeof(*l->v), line_cmp) : NULL;
	return hit ? *hit : NULL;
}

/* One line of a cookies.txt file as a cookie line, or false (a comment, a
 * blank line, too few fields).  wget writes the domain of a server on a
 * port but 80 and 443 as "host:port", which would match no host: the port
 * is left out, as curl writes it. */
static bool cookie_line(char *line)
{
	line[strcspn(line, "\r\n")] = '\0';
	if (!*line || (*line == '#' && strncmp(line, "#HttpOnly_", 10) != 0))
		return false;
	char *tab = strchr(line, '\t');
	char *colon = tab ? memchr(line, ':', (size_t)(tab - line)) : NULL;
	if (colon && !memchr(line, '[', (size_t)(tab - line)))
		memmove(colon, tab, strlen(tab) + 1);
	size_t tabs = 0;
	for (const char *p = line; (p = strchr(p, '\t')); p++)
		tabs++;
	return tabs >= 6;
}

/* The file's cookies but those expired (which libcurl would not load,
 * and which would otherwise stay in the file for ever). */
static void read_lines(FILE *f, struct lines *into)
{
	char *line = NULL;
	size_t cap = 0, len;
	time_t now = time(NULL);

	while (getline(&line, &cap, f) >= 0) {
		if (!cookie_line(line))
			continue;
		long long expires = strtoll(field(line, 4, &len), NULL, 10);
		if (expires == 0 || expires > (long long)now)
			lines_add(into, line);
	}
	free(line);
	lines_sort(into);
}

/* The jar as libcurl holds it now (expired cookies gone). */
static void jar_lines(CURL *handle, struct lines *into)
{
	struct curl_slist *list = NULL;

	curl_easy_getinfo(handle, CURLINFO_COOKIELIST, &list);
	for (struct curl_slist *l = list; l; l = l->next)
		lines_add(into, l->data);
	curl_slist_free_all(list);
	lines_sort(into);
}

static bool same_lines(const struct lines *a, const struct lines *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

/* into: file with this process's changes (jar against as_synced) put in;
 * returns how many changes there were. */
static size_t merge(const struct lines *file, const struct lines *jar, const struct lines *synced,
                    struct lines *into)
{
	size_t changes = 0;

	for (size_t i = 0; i < file->n; i++) {
		const char *ours = lines_find(jar, file->v[i]);
		const char *was = lines_find(synced, file->v[i]);
		if (was && !ours && strcmp(was, file->v[i]) == 0)
			continue; /* gone from our jar, not changed by another since */
		if (ours && !(was && strcmp(was, ours) == 0))
			continue; /* ours changed: added below */
		lines_add(into, file->v[i]);
	}
	for (size_t i = 0; i < jar->n; i++) {
		const char *was = lines_find(synced, jar->v[i]);
		if (!(was && strcmp(was, jar->v[i]) == 0)) {
			lines_add(into, jar->v[i]);
			changes++;
		}
	}
	for (size_t i = 0; i < synced->n; i++)
		if (!lines_find(jar, synced->v[i]))
			changes++; /* a deletion */
	lines_sort(into);
	return changes;
}

/* The jar made what lines says, and as_synced what libcurl then holds. */
static void jar_set(struct fetch_cookiefile *f, const struct lines *lines, const struct lines *jar)
{
	if (!same_lines(lines, jar)) {
		curl_easy_setopt(f->handle, CURLOPT_COOKIELIST, "ALL");
		for (size_t i = 0; i < lines->n; i++)
			curl_easy_setopt(f->handle, CURLOPT_COOKIELIST, lines->v[i]);
	}
	lines_clear(&f->as_synced);
	jar_lines(f->handle, &f->as_synced);
}

/* The file open for reading and locked (LOCK_EX: flock needs no write
 * access) as it is at the path now; with create, made empty (0600) when
 * it is not there.  -1 with errno. */
static int lock_file(const char *path, bool create)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && create)
			fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
		struct stat held, now;
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX) != 0) {
			int saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (fstat(fd, &held) == 0 && stat(path, &now) == 0 && held.st_ino == now.st_ino &&
		    held.st_dev == now.st_dev)
			return fd;
		close(fd); /* renamed away while we waited: lock the new one */
	}
	errno = EAGAIN;
	return -1;
}

/* Writes lines to a temporary file beside the jar, renamed over it
 * (mkostemp makes it 0600); *st: the file written, which is the jar's
 * until another process renames its own over it. */
static bool write_file(const char *path, const struct lines *lines, struct stat *st)
{
	size_t n = strlen(path);
	char *tmp = sc_malloc(n + sizeof(TMP_SUFFIX "XXXXXX"));

	memcpy(tmp, path, n);
	memcpy(tmp + n, TMP_SUFFIX "XXXXXX", sizeof(TMP_SUFFIX "XXXXXX"));
	int fd = mkostemp(tmp, O_CLOEXEC);
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return false;
	}
	fputs("# Netscape HTTP Cookie File\n"
	      "# Written by sc-fetch (libcurl's cookie engine). Edit at your own risk.\n\n",
	      out);
	for (size_t i = 0; i < lines->n; i++)
		fprintf(out, "%s\n", lines->v[i]);
	bool ok = fflush(out) == 0 && !ferror(out) && fstat(fd, st) == 0;
	ok = fclose(out) == 0 && ok;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	return ok;
}

/* Temporary files of writers killed before their rename: called with the
 * lock held, when no writer is between its mkostemp and its rename. */
static void remove_leftovers(const char *path)
{
	size_t n = strlen(path);
	char *pattern = sc_malloc(2 * n + sizeof(TMP_SUFFIX "??????"));
	char *p = pattern;
	glob_t g;

	/* The path's own glob characters escaped. */
	for (const char *s = path; *s; s++) {
		if (strchr("*?[\\", *s))
			*p++ = '\\';
		*p++ = *s;
	}
	memcpy(p, TMP_SUFFIX "??????", sizeof(TMP_SUFFIX "??????"));
	if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			(void)unlink(g.gl_pathv[i]);
	globfree(&g);
	free(pattern);
}

/* The file's cookies, read from in, merged with the jar's changes into
 * the jar, and c->seen the file that now holds them.  With write, the
 * merged jar written when it holds a change (the caller holds the lock):
 * 1 when written, 0 when there was nothing to write, -1 on an error.
 * Without, -2 when the jar holds a change (nothing done: it is for a
 * write, under the lock). */
static int sync_file(struct fetch_cookiefile *c, FILE *in, bool write)
{
	struct lines file = { 0 }, jar = { 0 }, merged = { 0 };
	struct stat st;
	int done = 0;

	read_lines(in, &file);
	if (fstat(fileno(in), &st) != 0)
		st.st_ino = 0;
	jar_lines(c->handle, &jar);
	size_t changes = merge(&file, &jar, &c->as_synced, &merged);
	if (!write && changes > 0)
		done = -2;
	else if (write && changes > 0) {
		done = write_file(c->path, &merged, &st) ? 1 : -1;
		if (done > 0 && !same_lines(&file, &c->as_synced))
			c->merges++; /* another process's changes kept */
	}
	if (done >= 0) {
		c->seen = st;
		jar_set(c, &merged, &jar);
	}
	lines_free(&file);
	lines_free(&jar);
	lines_free(&merged);
	return done;
}

struct fetch_cookiefile *fetch_cookiefile_open(const char *path, CURLSH *share, char *err,
                                               size_t errlen)
{
	/* A jar that cannot be read is an error at start, as curl's -b is
	 * not; one not there yet is made. */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && errno != ENOENT) {
		snprintf(err, errlen, "--cookies: %.200s: %s", path, strerror(errno));
		return NULL;
	}
	if (fd >= 0) {
		bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		close(fd);
		if (!regular) {
			snprintf(err, errlen, "--cookies: %.200s: not a file", path);
			return NULL;
		}
	}
	struct fetch_cookiefile *c = sc_calloc(1, sizeof(*c));
	c->path = path;
	if (!(c->handle = curl_easy_init())) /* only for want of memory */
		sc_die(1, "out of memory");
	curl_easy_setopt(c->handle, CURLOPT_SHARE, share);
	fd = lock_file(path, false);
	if (fd < 0 && errno == ENOENT)
		return c; /* made at the first cookie */
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!in) {
		snprintf(err, errlen, "--cookies: %.200s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		fetch_cookiefile_free(c);
		return NULL;
	}
	remove_leftovers(path);
	(void)sync_file(c, in, false); /* the jar is empty: no change */
	c->loads += c->as_synced.n > 0;
	(void)fclose(in); /* read only; lets the lock go */
	return c;
}

void fetch_cookiefile_free(struct fetch_cookiefile *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->handle);
	lines_free(&c->as_synced);
	free(c);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

void fetch_cookiefile_load(struct fetch_cookiefile *c)
{
	struct stat st;

	/* Looked at before each request: one stat while nothing changed. */
	if (stat(c->path, &st) != 0 || (c->seen.st_ino != 0 && same_file(&st, &c->seen)))
		return;
	FILE *in = fopen(c->path, "re");
	if (!in || fstat(fileno(in), &st) != 0) { /* the file as read, if replaced meanwhile */
		if (in)
			(void)fclose(in); /* read only */
		return;
	}
	int done = sync_file(c, in, false);
	(void)fclose(in); /* read only */
	c->loads++;
	/* A change not written yet (a write that failed; a cookie set where
	 * no Set-Cookie was seen, or expired): written now. */
	if (done == -2)
		fetch_cookiefile_save(c);
}

void fetch_cookiefile_save(struct fetch_cookiefile *c)
{
	int fd = lock_file(c->path, true);
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!in) {
		if (fd >= 0)
			close(fd);
		c->save_errors++;
		return;
	}
	int done = sync_file(c, in, true);
	if (done > 0)
		c->saves++;
	else if (done < 0)
		c->save_errors++;
	(void)fclose(in); /* read only; lets the lock go */
}

void fetch_cookiefile_summary(const struct fetch_cookiefile *c, json_t *summary)
{
	json_object_set_new(summary, "cookies",
	                    json_pack("{sIsIsIsI}", "loads", (json_int_t)c->loads, "saves",
	                              (json_int_t)c->saves, "merges", (json_int_t)c->merges,
	                              "save_errors", (json_int_t)c->save_errors));
}
