/* Unit tests for lib/record/input: the one input loop (its hooks, a stop,
 * a read error, non-blocking input) and the URL-list line rule. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/input.h"
#include "record/lines.h"
#include "tap.h"

/* What the hooks saw. */
struct seen_lines {
	char text[8][32]; /* the first lines, cut to 31 bytes */
	int lines, records, bad, idles, ends;
	int stop_at; /* the line hook stops the loop at this line (0: never) */
};

static int count_line(void *ctx, const struct sc_lines *in, const struct sc_line *line)
{
	struct seen_lines *s = ctx;

	(void)in;
	if (s->lines < 8)
		snprintf(s->text[s->lines], sizeof(s->text[0]), "%s", line->text);
	s->lines++;
	return s->stop_at && s->lines == s->stop_at;
}

static int count_record(void *ctx, const struct sc_lines *in, const struct sc_input_item *item)
{
	struct seen_lines *s = ctx;

	(void)in;
	s->records++;
	s->bad += item->bad;
	return 0;
}

static int count_idle(void *ctx, const struct sc_lines *in)
{
	(void)in;
	((struct seen_lines *)ctx)->idles++;
	return 0;
}

static int count_end(void *ctx)
{
	((struct seen_lines *)ctx)->ends++;
	return 0;
}

static const struct sc_input_hooks line_hooks = { .line = count_line,
	                                          .idle = count_idle,
	                                          .end = count_end };

/* A reader over the bytes in data, through a pipe-less temp file. */
static struct sc_lines *reader_over(const char *data, size_t len)
{
	char path[] = "/tmp/sc-test-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	unlink(path);
	lseek(fd, 0, SEEK_SET);
	return sc_lines_open(fd, "<test>");
}

static void reader_close(struct sc_lines *r)
{
	close(sc_lines_fd(r));
	sc_lines_close(r);
}

static void test_hooks(void)
{
	const char data[] = "a\n\n  \t\n\r\r\nb\n{\"x\":1}\nnot json\n";
	char err[SC_INPUT_ERRLEN] = "";
	struct seen_lines s = { 0 };
	struct sc_lines *r = reader_over(data, sizeof(data) - 1);

	is_int(sc_input_run(r, &line_hooks, &s, err), SC_INPUT_END, "a file: read to its end");
	is_int(s.lines, 4, "blank lines (spaces, tabs, CRs) are no line for the hooks");
	is_str(s.text[0], "a", "the first line");
	is_str(s.text[1], "b", "the next that is not blank");
	is_int(s.ends, 1, "the end hook, once");
	ok(s.idles >= 1, "the idle hook before a read with nothing buffered (%d)", s.idles);
	is_str(err, "", "no error");
	reader_close(r);

	s = (struct seen_lines){ 0 };
	r = reader_over(data, sizeof(data) - 1);
	is_int(sc_input_run(r, &(struct sc_input_hooks){ .record = count_record }, &s, err),
	       SC_INPUT_END, "records: read to the end");
	is_int(s.records, 4, "each non-blank line a record");
	is_int(s.bad, 3, "all but the JSON object are bad_input records");
	reader_close(r);

	s = (struct seen_lines){ .stop_at = 2 };
	r = reader_over(data, sizeof(data) - 1);
	is_int(sc_input_run(r, &line_hooks, &s, err), SC_INPUT_STOPPED, "a hook stops the loop");
	is_int(s.lines, 2, "no line after the stop");
	is_int(s.ends, 0, "and no end hook");
	reader_close(r);
}

static void test_read_error(void)
{
	char err[SC_INPUT_ERRLEN] = "";
	struct seen_lines s = { 0 };
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	struct sc_lines *r = sc_lines_open(fd, "<stdin>");

	is_int(sc_input_run(r, &line_hooks, &s, err), SC_INPUT_READ_ERROR, "a read error");
	is_str(err, "<stdin>: read error: Is a directory", "in the one wording");
	is_int(s.ends, 0, "no end hook after a read error");
	reader_close(r);
}

static void test_nonblocking(void)
{
	char err[SC_INPUT_ERRLEN] = "";
	struct seen_lines s = { 0 };
	struct sc_input_hooks hooks = line_hooks;
	int fds[2];

	if (pipe(fds) < 0)
		abort();
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	struct sc_lines *r = sc_lines_open(fds[0], "<pipe>");
	hooks.nonblocking = true;
	ok(write(fds[1], "one\ntw", 6) == 6, "wrote a line and a piece");
	is_int(sc_input_run(r, &hooks, &s, err), SC_INPUT_WAIT, "non-blocking: returns to wait");
	is_int(s.lines, 1, "after the whole line");
	ok(write(fds[1], "o\n", 2) == 2, "wrote the rest");
	close(fds[1]);
	is_int(sc_input_run(r, &hooks, &s, err), SC_INPUT_END, "called again: goes on to the end");
	is_str(s.text[1], "two", "the line that arrived in pieces");
	is_int(s.ends, 1, "the end hook once, at the end");
	reader_close(r);

	/* A blocking reader handed a non-blocking descriptor waits instead. */
	s = (struct seen_lines){ 0 };
	if (pipe(fds) < 0)
		abort();
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		usleep(100000);
		_exit(write(fds[1], "late\n", 5) == 5 ? 0 : 1);
	}
	close(fds[1]);
	r = sc_lines_open(fds[0], "<pipe>");
	is_int(sc_input_run(r, &line_hooks, &s, err), SC_INPUT_END,
	       "blocking hooks on a non-blocking pipe: waits, reads to the end");
	is_str(s.text[0], "late", "the line that came late");
	waitpid(pid, NULL, 0);
	reader_close(r);
}

/* sc_input_url_line on text (a C string, or len bytes). */
static enum sc_url_line url_line(const char *text, size_t len, bool too_long, char out[64])
{
	char copy[64];
	struct sc_line line = { .text = copy, .len = len, .number = 1, .too_long = too_long };
	const char *url;
	size_t n;

	memcpy(copy, text, len + 1);
	enum sc_url_line kind = sc_input_url_line(&line, &url, &n);
	snprintf(out, 64, "%.*s", (int)n, url);
	return kind;
}

static void test_url_line(void)
{
	char url[64];

	is_int(url_line("http://a/", 9, false, url), SC_URL_LINE_URL, "a URL");
	is_str(url, "http://a/", "as it is");
	is_int(url_line(" \thttp://a/ \t\r", 14, false, url), SC_URL_LINE_URL, "a URL with blanks");
	is_str(url, "http://a/", "trimmed: spaces and tabs, and CRs at the end");
	is_int(url_line("  # http://a/", 13, false, url), SC_URL_LINE_SKIP, "a comment");
	is_int(url_line("#{\"url\":1}", 10, false, url), SC_URL_LINE_SKIP, "a comment first");
	is_int(url_line(" \t\r", 3, false, url), SC_URL_LINE_SKIP, "blank");
	is_int(url_line(" {\"url\":\"http://a/\"}", 20, false, url), SC_URL_LINE_RECORD,
	       "a record");
	is_int(url_line("{#", 2, false, url), SC_URL_LINE_RECORD,
	       "'{' makes a record, even a bad one");
	is_int(url_line("http://a/", 9, true, url), SC_URL_LINE_RECORD,
	       "a too-long line goes to the record rules (a bad_input record)");
	is_int(url_line("# x", 3, true, url), SC_URL_LINE_RECORD, "even one that begins with '#'");
	is_int(url_line("http://a/\0b", 11, false, url), SC_URL_LINE_NUL, "a NUL byte: no URL");
	is_int(url_line("  #\0", 4, false, url), SC_URL_LINE_SKIP, "but a comment may hold one");
}

int main(void)
{
	test_hooks();
	test_read_error();
	test_nonblocking();
	test_url_line();
	return tap_done();
}
