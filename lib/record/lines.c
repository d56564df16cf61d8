#include "record/lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How many bytes of an over-long line are kept, for the error record. */
#define KEEP_OF_LONG_LINE 4096
#define READ_CHUNK (64 * 1024)

struct sc_lines {
	int fd;
	const char *name;
	size_t max;
	char *buf; /* [start, end) holds unconsumed input */
	size_t start, end, cap;
	size_t number;
	size_t scanned; /* bytes from start known to hold no newline */
	bool eof;
	bool skipping; /* skipping the tail of a too-long line (long_head holds its head) */
	size_t long_len;
	char long_head[KEEP_OF_LONG_LINE + 1]; /* the kept head of a too-long line */
};

static size_t max_from_env(void)
{
	const char *env = getenv("SC_MAX_LINE");
	char *endp;
	unsigned long long v;

	if (!env || !*env)
		return SC_LINE_MAX;
	v = strtoull(env, &endp, 10);
	if (*endp != '\0' || v < 64)
		return SC_LINE_MAX;
	return (size_t)v;
}

struct sc_lines *sc_lines_open(int fd, const char *name)
{
	struct sc_lines *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = fd;
	r->name = name;
	r->max = max_from_env();
	r->cap = READ_CHUNK;
	r->buf = malloc(r->cap + 1);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	return r;
}

void sc_lines_close(struct sc_lines *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

const char *sc_lines_name(const struct sc_lines *r)
{
	return r->name;
}
size_t sc_lines_max(const struct sc_lines *r)
{
	return r->max;
}
int sc_lines_fd(const struct sc_lines *r)
{
	return r->fd;
}

bool sc_lines_buffered(const struct sc_lines *r)
{
	return r->eof || memchr(r->buf + r->start, '\n', r->end - r->start) != NULL;
}

/* Makes room for at least one more read, moving unconsumed bytes to the
 * front first.  The buffer never needs more than max + READ_CHUNK bytes: a
 * line longer than max is cut before that.  Returns -1 on no memory. */
static int make_room(struct sc_lines *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end >= READ_CHUNK / 4)
		return 0;
	size_t cap = r->cap * 2;
	if (cap > r->max + READ_CHUNK)
		cap = r->max + READ_CHUNK;
	char *buf = realloc(r->buf, cap + 1);
	if (!buf)
		return -1;
	r->buf = buf;
	r->cap = cap;
	return 0;
}

/* Reads more input into the buffer; returns bytes read, 0 at EOF, -1 on error. */
static ssize_t fill(struct sc_lines *r)
{
	ssize_t n;

	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		r->eof = true;
	if (n > 0)
		r->end += (size_t)n;
	return n;
}

/* Discards input up to and including the next newline (or to EOF). */
static int skip_rest_of_line(struct sc_lines *r)
{
	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl) {
			r->start = (size_t)(nl - r->buf) + 1;
			return 0;
		}
		r->start = r->end = 0;
		if (r->eof)
			return 0;
		ssize_t n = fill(r);
		if (n < 0)
			return -1;
	}
}

/* Hands back the kept head of a too-long line, once its tail is skipped. */
static int emit_long_head(struct sc_lines *r, struct sc_line *line)
{
	r->skipping = false;
	line->text = r->long_head;
	line->len = r->long_len;
	line->number = ++r->number;
	line->too_long = true;
	return 1;
}

/* How much of a too-long line's head is kept: the same whatever the
 * chunking of the input, so a rerun gives the same error record. */
static size_t long_head_len(const struct sc_lines *r)
{
	return r->max < KEEP_OF_LONG_LINE ? r->max : KEEP_OF_LONG_LINE;
}

/* A line longer than the maximum, not yet ended: keep its head for the
 * error record and skip its tail.  On a non-blocking descriptor the skip
 * may stop at EAGAIN; the next call goes on with it. */
static int cut_long_line(struct sc_lines *r, struct sc_line *line)
{
	size_t keep = long_head_len(r);

	memcpy(r->long_head, r->buf + r->start, keep);
	r->long_head[keep] = '\0';
	r->long_len = keep;
	r->start += r->scanned;
	r->scanned = 0;
	r->skipping = true;
	if (skip_rest_of_line(r) < 0)
		return -1;
	return emit_long_head(r, line);
}

/* A line longer than the maximum that is already whole in the buffer (it
 * arrived in one read): flagged as if it had arrived in pieces. */
static int long_line_in_buffer(struct sc_lines *r, struct sc_line *line, size_t at)
{
	size_t keep = long_head_len(r);

	memcpy(r->long_head, r->buf + at, keep);
	r->long_head[keep] = '\0';
	r->long_len = keep;
	return emit_long_head(r, line);
}

static void emit(struct sc_lines *r, struct sc_line *line, size_t from, size_t len)
{
	/* Drop the CR of a CRLF ending. */
	if (len > 0 && r->buf[from + len - 1] == '\r')
		len--;
	line->text = r->buf + from;
	line->len = len;
	line->text[len] = '\0';
	line->number = ++r->number;
	line->too_long = false;
}

int sc_lines_next(struct sc_lines *r, struct sc_line *line)
{
	if (r->skipping) {
		if (skip_rest_of_line(r) < 0)
			return -1;
		return emit_long_head(r, line);
	}
	for (;;) {
		char *from = r->buf + r->start + r->scanned;
		char *nl = memchr(from, '\n', r->end - r->start - r->scanned);
		if (nl) {
			size_t at = r->start;
			size_t len = (size_t)(nl - (r->buf + at));
			r->start = at + len + 1;
			r->scanned = 0;
			if (len > r->max)
				return long_line_in_buffer(r, line, at);
			emit(r, line, at, len);
			return 1;
		}
		r->scanned = r->end - r->start;
		if (r->eof) {
			if (r->scanned == 0)
				return 0;
			size_t at = r->start, len = r->scanned;
			r->start = r->end;
			r->scanned = 0;
			if (len > r->max)
				return long_line_in_buffer(r, line, at);
			emit(r, line, at, len);
			return 1;
		}
		if (r->scanned > r->max)
			return cut_long_line(r, line);
		/* On EAGAIN the bytes scanned so far are remembered, so a long
		 * line arriving slowly is not searched again from its start. */
		if (make_room(r) < 0 || fill(r) < 0)
			return -1;
	}
}
