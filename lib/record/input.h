/* input: the loop over input records that the NDJSON stages share.
 *
 * Each non-blank line is parsed as a JSON object.  A malformed line (not
 * JSON, not an object, too long) is not dropped: it becomes a bad_input
 * record, so the count contract holds downstream, and the reason comes
 * back in item->why for the program's warning "PROG: NAME:LINE: reason"
 * (sc_input_warning formats it; lib/ prints nothing). */
#ifndef SC_INPUT_H
#define SC_INPUT_H

#include <jansson.h>
#include <stdbool.h>

#include "record/jsonscan.h"
#include "record/lines.h"

struct sc_input_item {
	json_t *rec;                /* borrowed: the parsed record, or the bad_input record */
	const struct sc_line *line; /* the raw line, as read (without its newline) */
	bool bad;                   /* rec is a bad_input record made for this line */
	char why[256];              /* when bad: the reason, for the warning */
};

/* "NAME:LINE: why" of a bad item, for the program to print after its name. */
void sc_input_warning(const struct sc_lines *r, const struct sc_input_item *item, char out[320]);

/* Returns 0 to go on, non-zero to stop the loop with that value.  For a
 * bad item the handler says what it must (sc_input_warning). */
typedef int (*sc_input_handler)(const struct sc_input_item *item, void *ctx);

/* Runs handle over every record of r.  Returns 0 at end of input, the
 * handler's non-zero value if it stopped, or -1 on a read error (errno). */
int sc_input_each(struct sc_lines *r, sc_input_handler handle, void *ctx);

/* Makes the item for one line (what sc_input_each does per line), for
 * programs with loops of their own.  fast is as for sc_record_parse.  The
 * caller decrefs item->rec.  Returns false for a blank line, which is no
 * record. */
bool sc_input_item_from_line(const struct sc_lines *r, const struct sc_line *line,
                             struct sc_jsonscan *fast, struct sc_input_item *item);

/* The same for a line read elsewhere (sc-parse's workers get lines that
 * its reader thread read): always makes an item; max_line is the limit
 * named in a too-long line's reason.  Blank lines are the caller's to
 * skip first (sc_input_blank: only spaces, tabs and CRs). */
void sc_input_item_make(const struct sc_line *line, size_t max_line, struct sc_jsonscan *fast,
                        struct sc_input_item *item);
bool sc_input_blank(const char *s, size_t len);

#endif
