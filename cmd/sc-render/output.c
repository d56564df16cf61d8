/* output.c: the records on standard output, as they are made or, with
 * --keep-order, in the order of the input: a record made before those of
 * earlier lines is held (encoded) until they are written.  Every input
 * line that makes a record has its number in that order (render's
 * inputs), so the held ones always drain. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kit/cli.h"
#include "record/record.h"
#include "render.h"

/* A record written out of turn, waiting for its own. */
struct held_line {
	struct held_line *next;
	size_t order;
	char *text;
	size_t len;
};

static void write_line(const char *text, size_t len)
{
	if (sc_record_write_raw(stdout, text, len) < 0)
		sc_die_write("error writing standard output:");
}

/* Writes the held records whose turn has come. */
static void drain(struct render *r)
{
	while (r->held && r->held->order == r->next_out) {
		struct held_line *h = r->held;
		r->held = h->next;
		write_line(h->text, h->len);
		free(h->text);
		free(h);
		r->nheld--;
		r->next_out++;
	}
}

void out_raw(struct render *r, size_t order, const char *text, size_t len)
{
	r->written++;
	if (!r->opts.keep_order || order == r->next_out) {
		write_line(text, len);
		r->next_out += r->opts.keep_order;
		drain(r);
		return;
	}
	/* In order among the held, which are few (bounded by the reading). */
	struct held_line *h = sc_calloc(1, sizeof(*h)), **at = &r->held;
	h->order = order;
	h->text = sc_malloc(len + 1);
	memcpy(h->text, text, len);
	h->text[len] = '\0';
	h->len = len;
	while (*at && (*at)->order < order)
		at = &(*at)->next;
	h->next = *at;
	*at = h;
	r->nheld++;
}

void out_json(struct render *r, size_t order, const json_t *rec)
{
	char *text = json_dumps(rec, SC_JSON_FLAGS);

	if (!text)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	out_raw(r, order, text, strlen(text));
	free(text);
}

void out_end(struct render *r)
{
	/* Nothing is left held but through a fault: written all the same. */
	while (r->held) {
		r->next_out = r->held->order;
		drain(r);
	}
}
