/* cookiefile.c: the jar file every process of a crawl shares
 * (cookiefile.h says how it stays whole and loses no one's cookies). */
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

#include "core/util.h"
#include "web/cookiefile.h"

#define TMP_SUFFIX ".sc-tmp."

struct sc_cookiefile {
	const char *path;                 /* borrowed */
	char *writer;                     /* owned */
	struct sc_cookie_lines as_synced; /* the jar as last synced with the file */
	struct stat seen;                 /* the file then; st_ino 0: none */
	struct sc_cookiefile_counts counts;
};

/* Field i (0-based, tab-separated) of a cookies.txt line, and its length. */
const char *sc_cookie_field(const char *line, int i, size_t *len)
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

bool sc_cookie_line_expired(const char *line, time_t now)
{
	size_t len;
	long long expires = strtoll(sc_cookie_field(line, 4, &len), NULL, 10);

	return expires != 0 && expires <= (long long)now;
}

/* A cookie is its domain (without #HttpOnly_ or a leading dot, in any
 * case), path and name: what RFC 6265 replaces a cookie by. */
static int key_cmp(const char *a, const char *b)
{
	size_t la, lb;
	const char *da = sc_cookie_field(a, 0, &la), *db = sc_cookie_field(b, 0, &lb);
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
		da = sc_cookie_field(a, f, &la);
		db = sc_cookie_field(b, f, &lb);
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

void sc_cookie_lines_add(struct sc_cookie_lines *l, const char *line)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = sc_realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = sc_strdup(line);
}

void sc_cookie_lines_copy(struct sc_cookie_lines *dst, const struct sc_cookie_lines *src)
{
	sc_cookie_lines_clear(dst);
	for (size_t i = 0; i < src->n; i++)
		sc_cookie_lines_add(dst, src->v[i]);
}

void sc_cookie_lines_clear(struct sc_cookie_lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

void sc_cookie_lines_free(struct sc_cookie_lines *l)
{
	sc_cookie_lines_clear(l);
	free(l->v);
	*l = (struct sc_cookie_lines){ 0 };
}

/* Sorted (a merge sort: stable, so that of two lines of one cookie the
 * later is kept, as libcurl keeps a file's later line when it loads it). */
void sc_cookie_lines_sort(struct sc_cookie_lines *l)
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

const char *sc_cookie_lines_find(const struct sc_cookie_lines *l, const char *line)
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
static void read_lines(FILE *f, struct sc_cookie_lines *into)
{
	char *line = NULL;
	size_t cap = 0;
	time_t now = time(NULL);

	while (getline(&line, &cap, f) >= 0)
		if (cookie_line(line) && !sc_cookie_line_expired(line, now))
			sc_cookie_lines_add(into, line);
	free(line);
	sc_cookie_lines_sort(into);
}

bool sc_cookie_lines_same(const struct sc_cookie_lines *a, const struct sc_cookie_lines *b)
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
static size_t merge(const struct sc_cookie_lines *file, const struct sc_cookie_lines *jar,
                    const struct sc_cookie_lines *synced, struct sc_cookie_lines *into)
{
	size_t changes = 0;

	for (size_t i = 0; i < file->n; i++) {
		const char *ours = sc_cookie_lines_find(jar, file->v[i]);
		const char *was = sc_cookie_lines_find(synced, file->v[i]);
		if (was && !ours && strcmp(was, file->v[i]) == 0)
			continue; /* gone from our jar, not changed by another since */
		if (ours && !(was && strcmp(was, ours) == 0))
			continue; /* ours changed: added below */
		sc_cookie_lines_add(into, file->v[i]);
	}
	for (size_t i = 0; i < jar->n; i++) {
		const char *was = sc_cookie_lines_find(synced, jar->v[i]);
		if (!(was && strcmp(was, jar->v[i]) == 0)) {
			sc_cookie_lines_add(into, jar->v[i]);
			changes++;
		}
	}
	for (size_t i = 0; i < synced->n; i++)
		if (!sc_cookie_lines_find(jar, synced->v[i]))
			changes++; /* a deletion */
	sc_cookie_lines_sort(into);
	return changes;
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
static bool write_file(const char *path, const char *writer, const struct sc_cookie_lines *lines,
                       struct stat *st)
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
	fprintf(out,
	        "# Netscape HTTP Cookie File\n"
	        "# Written by %s. Edit at your own risk.\n\n",
	        writer);
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

/* The file's cookies, read from in, with the (sorted) jar's changes
 * merged in: into, and *st the file read; returns how many changes the
 * jar held. */
static size_t merged_file(struct sc_cookiefile *c, FILE *in, const struct sc_cookie_lines *jar,
                          struct sc_cookie_lines *file, struct sc_cookie_lines *into,
                          struct stat *st)
{
	read_lines(in, file);
	if (fstat(fileno(in), st) != 0)
		st->st_ino = 0;
	return merge(file, jar, &c->as_synced, into);
}

/* into takes merged's lines (into is empty: the callers' contract). */
static void take(struct sc_cookie_lines *into, struct sc_cookie_lines *merged)
{
	sc_cookie_lines_free(into);
	*into = *merged;
	*merged = (struct sc_cookie_lines){ 0 };
}

struct sc_cookiefile *sc_cookiefile_open(const char *path, const char *writer, char *err,
                                         size_t errlen)
{
	/* A jar that cannot be read is an error at start, as curl's -b is
	 * not; one not there yet is made at the first save. */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && errno != ENOENT) {
		snprintf(err, errlen, "%.200s: %s", path, strerror(errno));
		return NULL;
	}
	if (fd >= 0) {
		bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		close(fd);
		if (!regular) {
			snprintf(err, errlen, "%.200s: not a file", path);
			return NULL;
		}
	}
	fd = lock_file(path, false);
	if (fd < 0 && errno != ENOENT) {
		snprintf(err, errlen, "%.200s: %s", path, strerror(errno));
		return NULL;
	}
	if (fd >= 0) {
		remove_leftovers(path);
		close(fd); /* lets the lock go */
	}
	struct sc_cookiefile *c = sc_calloc(1, sizeof(*c));
	c->path = path;
	c->writer = sc_strdup(writer);
	return c;
}

void sc_cookiefile_free(struct sc_cookiefile *c)
{
	if (!c)
		return;
	sc_cookie_lines_free(&c->as_synced);
	free(c->writer);
	free(c);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int sc_cookiefile_load(struct sc_cookiefile *c, const struct sc_cookie_lines *jar,
                       struct sc_cookie_lines *into)
{
	struct stat st;

	/* Looked at before each request: one stat while nothing changed. */
	if (stat(c->path, &st) != 0 || (c->seen.st_ino != 0 && same_file(&st, &c->seen)))
		return 0;
	FILE *in = fopen(c->path, "re");
	if (!in)
		return 0;
	struct sc_cookie_lines file = { 0 }, merged = { 0 };
	size_t changes = merged_file(c, in, jar, &file, &merged, &st);
	(void)fclose(in); /* read only */
	int rc = 2;
	if (changes == 0) {
		/* The first read counts only when it brings cookies. */
		c->counts.loads += c->seen.st_ino != 0 || file.n > 0;
		c->seen = st;
		take(into, &merged);
		rc = 1;
	}
	sc_cookie_lines_free(&file);
	sc_cookie_lines_free(&merged);
	return rc;
}

int sc_cookiefile_save(struct sc_cookiefile *c, const struct sc_cookie_lines *jar,
                       struct sc_cookie_lines *into)
{
	int fd = lock_file(c->path, true);
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!in) {
		if (fd >= 0)
			close(fd);
		c->counts.save_errors++;
		return -1;
	}
	struct sc_cookie_lines file = { 0 }, merged = { 0 };
	struct stat st;
	int rc = 0;
	if (merged_file(c, in, jar, &file, &merged, &st) > 0) {
		rc = write_file(c->path, c->writer, &merged, &st) ? 1 : -1;
		if (rc > 0) {
			c->counts.saves++;
			if (!sc_cookie_lines_same(&file, &c->as_synced))
				c->counts.merges++; /* another process's changes kept */
		} else {
			c->counts.save_errors++;
		}
	}
	(void)fclose(in); /* read only; lets the lock go */
	if (rc >= 0) {
		c->seen = st;
		take(into, &merged);
	}
	sc_cookie_lines_free(&file);
	sc_cookie_lines_free(&merged);
	return rc;
}

void sc_cookiefile_synced(struct sc_cookiefile *c, const struct sc_cookie_lines *jar)
{
	sc_cookie_lines_copy(&c->as_synced, jar);
}

const struct sc_cookiefile_counts *sc_cookiefile_counts(const struct sc_cookiefile *c)
{
	return &c->counts;
}
