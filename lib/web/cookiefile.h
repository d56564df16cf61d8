/* cookiefile: one Netscape cookies.txt that every process of a crawl
 * reads and writes at once, whatever holds its cookies meanwhile
 * (libcurl's cookie engine in sc-fetch, Chromium in sc-render): the jar's
 * owner gives its cookies as lines of the file's format, and gets back
 * what its jar is to become.  sc-fetch(1), "One jar for several
 * processes", says what users see.
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
 *   otherwise than as last synced (set, changed, or gone: an expiry or a
 *   Set-Cookie that deletes), merged into the file as it is now, so that
 *   a cookie another process set since stays;
 * - the merged jar goes to a temporary file (0600) that is renamed over
 *   the jar: a reader without the lock, and a process killed at any point
 *   (kill -9; the kernel lets its lock go), leave the file old or new,
 *   whole.  A temporary file left by a killed writer is removed at the
 *   next open (under the lock, when no writer can own one).
 * Readers take no lock: one stat, and the file read only when it is not
 * the one last seen.
 *
 * Ownership: lines added are copied; whoever holds a struct
 * sc_cookie_lines frees it with sc_cookie_lines_free.  Nothing here
 * prints; errors go to the caller's err, cut to errlen (lib/README.md). */
#ifndef SC_COOKIEFILE_H
#define SC_COOKIEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A jar as lines of cookies.txt ("domain\tflag\tpath\tsecure\texpires\t
 * name\tvalue", the domain "#HttpOnly_"-prefixed for an HttpOnly one). */
struct sc_cookie_lines {
	char **v;
	size_t n, cap;
};

void sc_cookie_lines_add(struct sc_cookie_lines *l, const char *line);
/* dst made a copy of src, line for line, in src's order. */
void sc_cookie_lines_copy(struct sc_cookie_lines *dst, const struct sc_cookie_lines *src);
/* Sorted by cookie (domain without a leading dot, in any case; path;
 * name: what RFC 6265 replaces a cookie by), of two lines of one cookie
 * the later kept, as libcurl keeps a file's later line. */
void sc_cookie_lines_sort(struct sc_cookie_lines *l);
/* The line of the same cookie in sorted l, or NULL. */
const char *sc_cookie_lines_find(const struct sc_cookie_lines *l, const char *line);
bool sc_cookie_lines_same(const struct sc_cookie_lines *a, const struct sc_cookie_lines *b);
void sc_cookie_lines_clear(struct sc_cookie_lines *l);
void sc_cookie_lines_free(struct sc_cookie_lines *l);

/* Field i (0-based) of a cookie line, and its length ("" past the end). */
const char *sc_cookie_field(const char *line, int i, size_t *len);
/* Whether a cookie line's expiry (not 0: a session cookie) is past at now. */
bool sc_cookie_line_expired(const char *line, time_t now);

struct sc_cookiefile_counts {
	uint64_t loads;       /* the file read into the jar */
	uint64_t saves;       /* the jar's changes written */
	uint64_t merges;      /* ... into a file another process had changed */
	uint64_t save_errors; /* a write that failed (the changes kept, for the next) */
};

struct sc_cookiefile; /* opaque */

/* The file at path (borrowed: it must outlive the handle), made at the
 * first save when it is not there; writer names the program in the
 * file's comment.  NULL, with err, when it cannot be read or is no
 * regular file. */
struct sc_cookiefile *sc_cookiefile_open(const char *path, const char *writer, char *err,
                                         size_t errlen);
void sc_cookiefile_free(struct sc_cookiefile *c);

/* jar, in the three calls below, is sorted (sc_cookie_lines_sort), and
 * into empty.
 *
 * Before a request: whether the file changed since last seen; when it
 * did, into gets the file with the jar's changes put in (what the jar is
 * to become: make it so, then sc_cookiefile_synced).  0: unchanged (into
 * untouched); 1: into filled; 2: the jar holds changes the file lacks
 * (into untouched): sc_cookiefile_save instead. */
int sc_cookiefile_load(struct sc_cookiefile *c, const struct sc_cookie_lines *jar,
                       struct sc_cookie_lines *into);
/* After a cookie changed: the jar's changes merged into the file under
 * its lock and written; into gets the merged jar, for the jar to become
 * (then sc_cookiefile_synced).  1: written; 0: nothing to write (into
 * filled still: the file may hold others' changes); -1: not written (into
 * untouched, the change kept for the next save). */
int sc_cookiefile_save(struct sc_cookiefile *c, const struct sc_cookie_lines *jar,
                       struct sc_cookie_lines *into);
/* What the jar holds once into was made its cookies (its own spelling of
 * them): what the next load or save compares it against. */
void sc_cookiefile_synced(struct sc_cookiefile *c, const struct sc_cookie_lines *jar);
const struct sc_cookiefile_counts *sc_cookiefile_counts(const struct sc_cookiefile *c);

#endif
