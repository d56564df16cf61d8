/* Unit tests for lib/core/strtab: find, add, remove, the order of adding
 * kept through growth and removals, many keys in one bucket. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "tap.h"

struct entry {
	char key[32];
	int value;
	struct sc_strtab_link link;
};

static struct entry *entry_of(struct sc_strtab_link *l)
{
	return l ? SC_STRTAB_ENTRY(l, struct entry, link) : NULL;
}

/* Whether the order list holds exactly the entries i with keep(i), in
 * order, and find finds each of them and none of the others. */
static int order_is(struct sc_strtab *t, struct entry *e, int n, int removed_mod)
{
	struct sc_strtab_link *l = t->head;
	size_t count = 0;

	for (int i = 0; i < n; i++) {
		bool kept = removed_mod == 0 || i % removed_mod != 0;
		struct entry *found = entry_of(sc_strtab_find(t, e[i].key));
		if (kept ? found != &e[i] : found != NULL)
			return 0;
		if (!kept)
			continue;
		if (entry_of(l) != &e[i])
			return 0;
		l = l->next;
		count++;
	}
	return l == NULL && count == t->count;
}

static void test_table(void)
{
	enum {
		N = 5000
	};
	struct sc_strtab t = SC_STRTAB_INIT;
	struct entry *e = calloc(N, sizeof(*e));

	ok(sc_strtab_find(&t, "none") == NULL, "an empty table finds nothing");
	for (int i = 0; i < N; i++) {
		snprintf(e[i].key, sizeof(e[i].key), "http://h%d.example:80", i);
		e[i].value = i;
		sc_strtab_add(&t, &e[i].link, e[i].key);
	}
	is_int((long)t.count, N, "every entry counted");
	ok(t.hsize >= N, "the buckets grew with the entries");
	ok(order_is(&t, e, N, 0), "each found, in the order of adding, through growth");
	for (int i = 0; i < N; i += 3)
		sc_strtab_remove(&t, &e[i].link);
	ok(order_is(&t, e, N, 3), "removed ones are gone, the others in order");
	sc_strtab_remove(&t, t.tail);
	sc_strtab_remove(&t, t.head);
	ok(t.head && entry_of(t.head)->value == 2 && entry_of(t.tail)->value == N - 3,
	   "head and tail removed: the next ones take their places");
	sc_strtab_free(&t);
	ok(t.count == 0 && t.head == NULL && t.htab == NULL, "free leaves it empty");
	free(e);
}

int main(void)
{
	test_table();
	return tap_done();
}
