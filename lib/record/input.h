/* input: the one loop over input lines that every program runs, and the
 * rules for a line that the programs share.
 *
 * The loop (sc_input_run) reads lines with lib/record/lines, skips blank
 * ones, and calls the program's hooks: on a line (or on a record made of
 * it), when the next read may wait, and at the end.  It serves blocking
 * readers (sc-parse, sc-sink, sc-frontier) and non-blocking ones (the
 * fetch engine's, from its event loop: the loop returns when no whole line
 * is there yet, and goes on at the next call).  A read error is one
 * message, the same in every program ("<stdin>: read error: ...").
 *
 * The line rules:
 * - blank: only spaces, tabs and CRs; no record (sc_input_blank).
 * - a record: each non-blank line is parsed as a JSON object.  A malformed
 *   line (not JSON, not an object, too long) is not dropped: it becomes a
 *   bad_input record, so the count contract holds downstream, and the
 *   reason comes back in item->why for the program's warning
 *   "PROG: NAME:LINE: reason" (sc_input_warning formats it; lib/ prints
 *   nothing).
 * - a URL list (sc-fetch, sc-frontier --seeds): sc_input_url_line. */
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

/* What a program does with its input.  Each hook returns 0 to go on, or
 * non-zero to stop the loop (the program keeps its own account of why). */
struct sc_input_hooks {
	/* Each line that is not blank, as read: for programs with rules of
	 * their own (URL lists, lines handed to other threads). */
	int (*line)(void *ctx, const struct sc_lines *in, const struct sc_line *line);
	/* Or each such line made a record (sc_input_item_make, with the
	 * loop's jsonscan scratch); item->rec is decref'd after the call.
	 * Exactly one of line and record is set. */
	int (*record)(void *ctx, const struct sc_lines *in, const struct sc_input_item *item);
	/* NULL, or called before a read when no whole line is buffered: the
	 * read goes to the descriptor and may wait for a slow producer, so
	 * this is the time to pass on what the program holds. */
	int (*idle)(void *ctx, const struct sc_lines *in);
	/* NULL, or called once the input has ended (not after a read error,
	 * nor when a hook stopped the loop). */
	int (*end)(void *ctx);
	/* The caller's event loop waits for the descriptor: when no whole
	 * line is there, return SC_INPUT_WAIT.  Otherwise the loop waits for
	 * it (in poll(2), should the descriptor be non-blocking). */
	bool nonblocking;
};

enum sc_input_status {
	SC_INPUT_READ_ERROR = -1, /* err says what, in the one wording */
	SC_INPUT_END = 0,         /* the input ended, and the end hook returned 0 */
	SC_INPUT_STOPPED = 1,     /* a hook returned non-zero */
	SC_INPUT_WAIT = 2         /* (hooks->nonblocking) no whole line yet: call
	                           * again when the descriptor is readable */
};

#define SC_INPUT_ERRLEN 320

/* Runs hooks over the lines of in.  err (SC_INPUT_ERRLEN bytes) gets the
 * message of a read error, "NAME: read error: strerror"; it is left alone
 * otherwise. */
enum sc_input_status sc_input_run(struct sc_lines *in, const struct sc_input_hooks *hooks,
                                  void *ctx, char *err);

/* "NAME:LINE: why" of a bad item, for the program to print after its name. */
void sc_input_warning(const struct sc_lines *r, const struct sc_input_item *item, char out[320]);

/* Makes the item for one line (what sc_input_run does for a record hook),
 * for programs that parse lines in hooks of their own.  fast is as for
 * sc_record_parse.  The caller decrefs item->rec.  Returns false for a
 * blank line, which is no record. */
bool sc_input_item_from_line(const struct sc_lines *r, const struct sc_line *line,
                             struct sc_jsonscan *fast, struct sc_input_item *item);

/* The same for a line read elsewhere (sc-parse's workers get lines that
 * its reader thread read): always makes an item; max_line is the limit
 * named in a too-long line's reason.  Blank lines are the caller's to
 * skip first (sc_input_blank: only spaces, tabs and CRs). */
void sc_input_item_make(const struct sc_line *line, size_t max_line, struct sc_jsonscan *fast,
                        struct sc_input_item *item);
bool sc_input_blank(const char *s, size_t len);

/* The line rule of a URL list, one for sc-fetch and sc-frontier --seeds:
 * a line is a URL, trimmed of spaces and tabs at both ends (and CRs at its
 * end); nothing (blank), or a comment when its first character is '#'; a
 * record when it begins with '{' (or is too long), for the record rules;
 * and no URL when it holds a NUL byte, which no URL can. */
enum sc_url_line {
	SC_URL_LINE_SKIP,   /* blank, or a comment: no record */
	SC_URL_LINE_RECORD, /* a JSON object, or too long: sc_input_item_make */
	SC_URL_LINE_URL,    /* *url, *len: the URL, as the line has it */
	SC_URL_LINE_NUL     /* holds a NUL byte: malformed */
};
enum sc_url_line sc_input_url_line(const struct sc_line *line, const char **url, size_t *len);

#endif
