/* sc-frontier: the next round's URLs, from the links of this round's pages.
 *
 * main.c   options, the run, the summary
 * round.c  records in, candidate URLs through canonical form, depth and
 *          scope, gathered in batches
 * batch.c  a batch through the seen set, its URL records out
 * seen.c   the seen set and per-host counts (SQLite, 128-bit keys) */
#ifndef SC_FRONTIER_H
#define SC_FRONTIER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum scope {
	SCOPE_HOST,
	SCOPE_DOMAIN,
	SCOPE_PREFIX,
	SCOPE_ANY
};

enum mode {
	MODE_LINKS, /* pages in, their links out */
	MODE_SEEDS, /* URLs or records in, themselves out as depth-0 seeds */
	MODE_COMMIT /* URL records in (a round file), added to the seen set */
};

/* Why a link was not emitted: the summary's "reasons". */
enum reason {
	R_NOT_URL,     /* not a URL at all */
	R_NOT_HTTP,    /* a URL, but not http or https */
	R_DEPTH,       /* deeper than --max-depth */
	R_SCOPE,       /* outside the seed's host, domain or prefix */
	R_DENIED,      /* matched a --deny */
	R_NOT_ALLOWED, /* matched no --allow */
	R_PER_HOST,    /* its host already had --max-per-host URLs */
	R_SEEN,        /* in the seen set of earlier runs */
	R_REPEATED,    /* already emitted by this run */
	R_COUNT
};

#define MAX_PATTERNS 64

struct options {
	enum mode mode;
	enum scope scope;
	const char *links;    /* the member holding a page's links */
	const char *seen;     /* NULL, or the persistent seen set's file */
	const char *add;      /* NULL, or --add's round file */
	bool no_commit;       /* read the seen set, never write it */
	long max_depth;       /* -1: no limit */
	long max_per_host;    /* -1: no limit */
	regex_t *strip_query; /* NULL, or parameter names to remove */
	regex_t allow[MAX_PATTERNS], deny[MAX_PATTERNS];
	int nallow, ndeny;
};

struct counts {
	uint64_t pages, links, emitted, malformed;
	uint64_t reason[R_COUNT];
};

/* ---- seen.c ---- */

#define KEY_LEN 16

struct seen;

/* Opens the seen set: path's file (created if missing), or with path NULL
 * a set for this run only.  Returns NULL with a message in err. */
struct seen *seen_open(const char *path, char *err, size_t errlen);
void seen_close(struct seen *s);
/* The messages of the calls below, after one failed. */
const char *seen_error(struct seen *s);

/* --commit and --add: keys go straight into the persistent set
 * (seen_insert), all in one transaction that seen_commit commits; batches
 * share it.  on false: back to this run's set, for the run after --add. */
void seen_direct(struct seen *s, bool on);
/* Adds key to the persistent set; *inserted: it was not there. */
int seen_insert(struct seen *s, const uint8_t key[KEY_LEN], bool *inserted);

/* A batch's work is one transaction: begin, then any of the calls, end. */
int seen_begin(struct seen *s);
int seen_end(struct seen *s);
enum where {
	NOWHERE,
	IN_SET, /* emitted by an earlier run (the persistent set) */
	IN_RUN  /* emitted by this run */
};
/* *where: whether key is in the set, and which part. */
int seen_has(struct seen *s, const uint8_t key[KEY_LEN], enum where *where);
/* Adds key to this run's URLs (not yet the persistent set). */
int seen_add(struct seen *s, const uint8_t key[KEY_LEN]);
/* URLs of host emitted so far, by earlier runs and this one. */
int seen_host_count(struct seen *s, const char *host, size_t host_len, long *n);
/* Adds n to this run's count of host. */
int seen_host_add(struct seen *s, const char *host, size_t host_len, long n);
/* Whether the set (persistent and this run's) is larger than the page
 * cache that probes it: then a batch of probes reads most of its pages. */
bool seen_larger_than_cache(struct seen *s);
/* Moves this run's URLs and per-host counts into the persistent set, in
 * one transaction (committing the same URLs twice changes nothing).
 * *added says how many URLs were new to it. */
int seen_commit(struct seen *s, uint64_t *added);

/* ---- round.c ---- */

/* Reads fd (called name in diagnostics) to its end and writes the URL
 * records to out (nothing in MODE_COMMIT, where out may be NULL).  Returns
 * 0, or -1 after a diagnostic (a read, write or database error). */
int round_run(const struct options *o, struct seen *s, int fd, const char *name, FILE *out,
              struct counts *c);

#endif
