/* input: the loop over input records that the NDJSON stages share.
 *
 * Each non-blank line is parsed as a JSON object and handed to handle().
 * A malformed line (not JSON, not an object, too long) is not dropped: a
 * warning "PROG: NAME:LINE: reason" goes to stderr and handle() receives a
 * bad_input record instead, so the count contract holds downstream. */
#ifndef SC_INPUT_H
#define SC_INPUT_H

#include <jansson.h>
#include <stdbool.h>

#include "jsonscan.h"
#include "lines.h"

struct sc_input_item {
	json_t *rec;                /* borrowed: the parsed record, or the bad_input record */
	const struct sc_line *line; /* the raw line, as read (without its newline) */
	bool bad;                   /* rec is a bad_input record made for this line */
};

/* Returns 0 to go on, non-zero to stop the loop with that value. */
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

#endif
