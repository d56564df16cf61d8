/* strtab: a hash table of the caller's entries, keyed by a string each
 * entry holds, kept also in the order they were added (the engine's
 * origins, their paces and their robots.txt answers; a run's summary lists
 * them in that order).
 *
 * The entries and their keys are the caller's: an entry embeds a struct
 * sc_strtab_link, whose key points at the entry's own copy, and
 * SC_STRTAB_ENTRY gives the entry back from its link.  The table owns only
 * its buckets (sc_strtab_free); it grows as entries are added. */
#ifndef SC_CORE_STRTAB_H
#define SC_CORE_STRTAB_H

#include <stddef.h>

struct sc_strtab_link {
	const char *key;                    /* the entry's (not owned) */
	struct sc_strtab_link *hnext;       /* its bucket's chain */
	struct sc_strtab_link *prev, *next; /* in the order of adding */
};

struct sc_strtab {
	struct sc_strtab_link **htab; /* hsize buckets (owned) */
	size_t hsize, count;
	struct sc_strtab_link *head, *tail;
};

/* The entry of type that holds link as its member (link not NULL). */
#define SC_STRTAB_ENTRY(link, type, member) \
	((type *)(void *)((char *)(link)-offsetof(type, member)))

/* An empty table: { 0 } is one too. */
#define SC_STRTAB_INIT \
	{              \
		0      \
	}

/* The link of the entry keyed key, or NULL. */
struct sc_strtab_link *sc_strtab_find(const struct sc_strtab *t, const char *key);
/* Adds an entry under key (which must stay valid while it is in t, and not
 * be in t already), at the end of the order. */
void sc_strtab_add(struct sc_strtab *t, struct sc_strtab_link *link, const char *key);
/* Takes the entry out of t (the entry itself stays the caller's). */
void sc_strtab_remove(struct sc_strtab *t, struct sc_strtab_link *link);
/* Frees the buckets; t is empty again.  The entries are the caller's:
 * walk head..next to free them first. */
void sc_strtab_free(struct sc_strtab *t);

#endif
