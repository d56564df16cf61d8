/* strtab: the caller's entries by a string key, in the order added
 * (strtab.h). */
#include "core/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/util.h"

static size_t bucket_of(const struct sc_strtab *t, const char *key)
{
	return sc_fnv1a_str(key) & (t->hsize - 1);
}

/* Twice the buckets (256 at first), the chains laid again in order. */
static void grow(struct sc_strtab *t)
{
	size_t nsize = t->hsize ? t->hsize * 2 : 256;

	free(t->htab);
	t->htab = sc_calloc(nsize, sizeof(*t->htab));
	t->hsize = nsize;
	for (struct sc_strtab_link *l = t->head; l; l = l->next) {
		size_t b = bucket_of(t, l->key);
		l->hnext = t->htab[b];
		t->htab[b] = l;
	}
}

struct sc_strtab_link *sc_strtab_find(const struct sc_strtab *t, const char *key)
{
	if (t->hsize == 0)
		return NULL;
	struct sc_strtab_link *l = t->htab[bucket_of(t, key)];
	while (l && strcmp(l->key, key) != 0)
		l = l->hnext;
	return l;
}

void sc_strtab_add(struct sc_strtab *t, struct sc_strtab_link *link, const char *key)
{
	link->key = key;
	link->next = NULL;
	link->prev = t->tail;
	if (t->tail)
		t->tail->next = link;
	else
		t->head = link;
	t->tail = link;
	t->count++;
	if (t->count > t->hsize) {
		grow(t); /* lays link in its bucket too */
		return;
	}
	size_t b = bucket_of(t, key);
	link->hnext = t->htab[b];
	t->htab[b] = link;
}

void sc_strtab_remove(struct sc_strtab *t, struct sc_strtab_link *link)
{
	struct sc_strtab_link **pp = &t->htab[bucket_of(t, link->key)];

	while (*pp != link)
		pp = &(*pp)->hnext;
	*pp = link->hnext;
	if (link->prev)
		link->prev->next = link->next;
	else
		t->head = link->next;
	if (link->next)
		link->next->prev = link->prev;
	else
		t->tail = link->prev;
	t->count--;
}

void sc_strtab_free(struct sc_strtab *t)
{
	free(t->htab);
	*t = (struct sc_strtab)SC_STRTAB_INIT;
}
