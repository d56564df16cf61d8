/* lines: a streaming line reader with no fixed line length.
 *
 * Records can be megabytes long (a fetched body lives inside its record), so
 * lines grow as needed, up to a maximum: SC_LINE_MAX by default, or the
 * environment's SC_MAX_LINE (bytes).  A longer line is not a crash and not
 * an allocation of unbounded size: the reader keeps its first bytes (4096, or the maximum if less), skips
 * the rest up to the newline, and flags it, so the program can turn it into
 * a bad_input record and go on.  LF ends a line; a CR before it is dropped.
 *
 * The reader reads with read(2) from a file descriptor, so nothing is
 * buffered that a program cannot account for. */
#ifndef SC_LINES_H
#define SC_LINES_H

#include <stdbool.h>
#include <stddef.h>

#define SC_LINE_MAX ((size_t)256 << 20) /* 256 MiB */

struct sc_line {
	char *text;    /* NUL-terminated; owned by the reader, valid until the next call */
	size_t len;    /* bytes before the NUL (the line may hold NULs itself) */
	size_t number; /* 1-based line number in this input */
	bool too_long; /* longer than the maximum: text holds only its first bytes */
};

struct sc_lines;

/* Opens a reader on fd (not closed by the reader).  name is used in
 * diagnostics ("<stdin>" for standard input).  Returns NULL on no memory. */
struct sc_lines *sc_lines_open(int fd, const char *name);
void sc_lines_close(struct sc_lines *r);
const char *sc_lines_name(const struct sc_lines *r);
/* The maximum line length in bytes that this reader accepts. */
size_t sc_lines_max(const struct sc_lines *r);

/* Reads the next line into *line.  Returns 1 for a line, 0 at end of input,
 * -1 on a read error (errno set). */
int sc_lines_next(struct sc_lines *r, struct sc_line *line);

/* True when the input has data ready, or is at end, so that a read would not
 * block (for event loops that must not stall on a slow producer). */
bool sc_lines_buffered(const struct sc_lines *r);
int sc_lines_fd(const struct sc_lines *r);

#endif
