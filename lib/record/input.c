#include "record/input.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "record/record.h"

bool sc_input_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

void sc_input_item_make(const struct sc_line *line, size_t max_line, struct sc_jsonscan *fast,
                        struct sc_input_item *item)
{
	json_error_t err;

	item->why[0] = '\0';
	item->line = line;
	item->bad = false;
	if (line->too_long) {
		snprintf(item->why, sizeof(item->why), "line longer than %zu bytes", max_line);
	} else {
		item->rec = sc_record_parse(line->text, line->len, fast, &err);
		if (item->rec)
			return;
		snprintf(item->why, sizeof(item->why), "%s", err.text);
	}
	item->rec = sc_record_bad_input(line->number, line->text, line->len, item->why);
	item->bad = true;
}

bool sc_input_item_from_line(const struct sc_lines *r, const struct sc_line *line,
                             struct sc_jsonscan *fast, struct sc_input_item *item)
{
	if (!line->too_long && sc_input_blank(line->text, line->len))
		return false;
	sc_input_item_make(line, sc_lines_max(r), fast, item);
	return true;
}

void sc_input_warning(const struct sc_lines *r, const struct sc_input_item *item, char out[320])
{
	snprintf(out, 320, "%s:%zu: %s", sc_lines_name(r), item->line->number, item->why);
}

/* The one wording of a read error. */
static void read_error(const struct sc_lines *in, int errnum, char *out, size_t size)
{
	snprintf(out, size, "%s: read error: %s", sc_lines_name(in), strerror(errnum));
}

/* After a read that would have blocked (a descriptor left non-blocking by
 * whoever shared it): waits until it is readable.  False for any other
 * error. */
static bool wait_readable(const struct sc_lines *in, int read_errno)
{
	struct pollfd pfd = { .fd = sc_lines_fd(in), .events = POLLIN };

	if (read_errno != EAGAIN && read_errno != EWOULDBLOCK)
		return false;
	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			return false;
	return true;
}

/* One line through the hooks: blank lines are no record. */
static int one_line(struct sc_lines *in, const struct sc_line *line,
                    const struct sc_input_hooks *hooks, void *ctx, struct sc_jsonscan *fast)
{
	struct sc_input_item item;
	int rc;

	if (!line->too_long && sc_input_blank(line->text, line->len))
		return 0;
	if (hooks->line)
		return hooks->line(ctx, in, line);
	sc_input_item_make(line, sc_lines_max(in), fast, &item);
	rc = hooks->record(ctx, in, &item);
	json_decref(item.rec);
	return rc;
}

enum sc_input_status sc_input_run(struct sc_lines *in, const struct sc_input_hooks *hooks,
                                  void *ctx, char *err)
{
	struct sc_jsonscan fast = { 0 };
	enum sc_input_status status = SC_INPUT_END;
	struct sc_line line;
	int got = 0, read_errno = 0;

	for (;;) {
		if (hooks->idle && !sc_lines_buffered(in) && hooks->idle(ctx, in) != 0) {
			status = SC_INPUT_STOPPED;
			break;
		}
		if ((got = sc_lines_next(in, &line)) < 0) {
			read_errno = errno;
			if (!hooks->nonblocking && wait_readable(in, read_errno))
				continue;
		}
		if (got <= 0)
			break;
		if (one_line(in, &line, hooks, ctx, &fast) != 0) {
			status = SC_INPUT_STOPPED;
			break;
		}
	}
	sc_jsonscan_free(&fast);
	if (status != SC_INPUT_END)
		return status;
	if (got < 0 && (read_errno == EAGAIN || read_errno == EWOULDBLOCK))
		return SC_INPUT_WAIT;
	if (got < 0) {
		read_error(in, read_errno, err, SC_INPUT_ERRLEN);
		return SC_INPUT_READ_ERROR;
	}
	return hooks->end && hooks->end(ctx) != 0 ? SC_INPUT_STOPPED : SC_INPUT_END;
}

static bool space_or_tab(char c)
{
	return c == ' ' || c == '\t';
}

enum sc_url_line sc_input_url_line(const struct sc_line *line, const char **url, size_t *len)
{
	const char *s = line->text;
	size_t n = line->len;

	while (n > 0 && space_or_tab(*s))
		s++, n--;
	while (n > 0 && (space_or_tab(s[n - 1]) || s[n - 1] == '\r'))
		n--;
	*url = s;
	*len = n;
	if (line->too_long || (n > 0 && *s == '{'))
		return SC_URL_LINE_RECORD;
	if (n == 0 || *s == '#')
		return SC_URL_LINE_SKIP;
	if (memchr(s, '\0', n))
		return SC_URL_LINE_NUL;
	return SC_URL_LINE_URL;
}
