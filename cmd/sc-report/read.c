/* read: the inputs.  Owns the files (standard input when none), a line
 * reader that can go on after end of file (a log still being written:
 * --every), the line's way to scan and agg, the malformed lines'
 * warnings, and --every's periodic summaries.
 *
 * Not lib/record/input's loop (sc_input_run), which every other program
 * reads with: that loop reads one descriptor to its end, where --every
 * reads many files at once and goes on reading each after its end, as
 * tail -f does; a metrics line also needs no record parse, only scan.c's
 * members, so the loop's record hook would be wasted work here. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/util.h"
#include "report.h"

/* A metrics line is a few hundred bytes; anything longer than this is not
 * one (a record with a body in the wrong stream) and is skipped as
 * malformed without being held. */
#define LINE_MAX_BYTES (1u << 20)
#define READ_CHUNK (1u << 18)
/* Malformed lines named on stderr; the rest are only counted. */
#define WARN_MAX 10

struct feed {
	const char *name; /* borrowed: argv, or "<stdin>" */
	int fd;
	long round; /* from round-N in the path, or -1 */
	char *buf;  /* owned */
	size_t start, end, cap;
	size_t lineno;
	bool skipping; /* inside a line longer than LINE_MAX_BYTES */
	bool eof;      /* a pipe that ended (a file is read again with --every) */
	bool regular;
};

struct reader {
	struct report *r;
	struct scanner scan;
	size_t warned;
};

/* crawl.mk's DIR/round-N/chunk-K.log: N, or -1. */
static long round_of(const char *path)
{
	long round = -1;

	for (const char *p = strstr(path, "round-"); p; p = strstr(p + 1, "round-")) {
		char *end;
		long n = strtol(p + 6, &end, 10);
		if (end > p + 6 && (*end == '/' || *end == '\0') && n >= 0)
			round = n;
	}
	return round;
}

static void handle_line(struct reader *rd, struct feed *f, size_t lineno, const char *text,
                        size_t len, bool too_long)
{
	struct report *r = rd->r;
	struct mline m;
	char why[160];

	while (len && (text[len - 1] == '\r' || text[len - 1] == ' '))
		len--;
	while (len && (*text == ' ' || *text == '\t')) {
		text++;
		len--;
	}
	if (len == 0 && !too_long)
		return;
	r->t.lines++;
	if (!too_long && *text != '{') {
		r->t.text_lines++; /* another program's diagnostics in the same log */
		return;
	}
	if (too_long)
		snprintf(why, sizeof(why), "longer than %u bytes", LINE_MAX_BYTES);
	bool ok = !too_long && scan_line(&rd->scan, text, len, &m, why, sizeof(why));
	if (ok && m.event == EV_REQUEST && !m.host.p) {
		snprintf(why, sizeof(why), "a request line has no host");
		ok = false;
	}
	if (!ok) {
		r->t.malformed++;
		if (rd->warned++ < WARN_MAX)
			sc_warn("%s:%zu: malformed metrics line: %s", f->name, lineno, why);
		return;
	}
	agg_line(r, &m, f->round);
}

/* Hands every whole line in the buffer over, keeping a partial last one. */
static void drain_lines(struct reader *rd, struct feed *f)
{
	for (;;) {
		char *nl = memchr(f->buf + f->start, '\n', f->end - f->start);
		if (!nl)
			break;
		f->lineno++;
		size_t len = (size_t)(nl - (f->buf + f->start));
		if (f->skipping)
			f->skipping = false;
		else
			handle_line(rd, f, f->lineno, f->buf + f->start, len, len > LINE_MAX_BYTES);
		f->start = (size_t)(nl - f->buf) + 1;
	}
	memmove(f->buf, f->buf + f->start, f->end - f->start);
	f->end -= f->start;
	f->start = 0;
	if (f->end >= LINE_MAX_BYTES) {
		if (!f->skipping)
			handle_line(rd, f, f->lineno + 1, f->buf, 0, true);
		f->skipping = true;
		f->end = 0;
	}
}

/* Reads what there is now; false on a read error (said).  A signal stops
 * it early unless to_end (--every's last reading). */
static bool feed_read(struct reader *rd, struct feed *f, bool to_end)
{
	for (;;) {
		if (f->cap - f->end < READ_CHUNK) {
			f->cap = f->end + READ_CHUNK;
			f->buf = sc_realloc(f->buf, f->cap);
		}
		ssize_t n = read(f->fd, f->buf + f->end, f->cap - f->end);
		if (n < 0 && errno == EINTR)
			return true; /* a signal: the caller looks at it */
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n < 0) {
			sc_warn("%s: read error:", f->name);
			return false;
		}
		if (n == 0) {
			f->eof = !f->regular;
			return true;
		}
		f->end += (size_t)n;
		drain_lines(rd, f);
		if (sc_stop_signal && !to_end)
			return true;
	}
}

/* The last line of an input that did not end with a newline. */
static void feed_finish(struct reader *rd, struct feed *f)
{
	if (f->end > 0 && !f->skipping) {
		f->lineno++;
		handle_line(rd, f, f->lineno, f->buf, f->end, false);
	}
	f->end = 0;
}

static bool feeds_open(const struct options *o, struct feed *feeds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct feed *f = &feeds[i];
		const char *path = o->ninputs ? o->inputs[i] : "-";
		memset(f, 0, sizeof(*f));
		f->name = strcmp(path, "-") == 0 ? "<stdin>" : path;
		f->fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
		f->round = round_of(path);
		if (f->fd < 0) {
			sc_warn("%s:", path);
			return false;
		}
		f->regular = lseek(f->fd, 0, SEEK_CUR) >= 0 && f->fd != 0;
		if (o->every_s > 0 && !f->regular)
			fcntl(f->fd, F_SETFL, fcntl(f->fd, F_GETFL) | O_NONBLOCK);
	}
	return true;
}

static void every_summary(struct report *r, const struct options *o)
{
	char ts[SC_RFC3339_LEN];

	sc_rfc3339(sc_wall_ms(), ts);
	agg_finish(r);
	printf("---- %s\n", ts);
	if (o->json)
		json_write(stdout, r, o);
	else
		text_write(stdout, r, o);
	fflush(stdout);
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
		               .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL); /* a signal cuts it short: the loop looks */
}

/* --every: on until the signal (or every input is a pipe that ended). */
static bool read_every(struct reader *rd, struct feed *feeds, size_t n, const struct options *o)
{
	for (;;) {
		bool open_left = false;
		bool last = sc_stop_signal != 0;
		for (size_t i = 0; i < n; i++) {
			if (!feeds[i].eof && !feed_read(rd, &feeds[i], last))
				return false;
			open_left |= !feeds[i].eof;
		}
		if (last || !open_left)
			return true;
		every_summary(rd->r, o);
		sleep_s(o->every_s);
	}
}

int read_inputs(struct report *r, const struct options *o)
{
	size_t n = o->ninputs ? (size_t)o->ninputs : 1;
	struct feed *feeds = sc_calloc(n, sizeof(*feeds));
	struct reader rd = { .r = r };
	bool ok = feeds_open(o, feeds, n);

	if (ok && o->every_s > 0)
		ok = read_every(&rd, feeds, n, o);
	for (size_t i = 0; ok && o->every_s <= 0 && i < n && !sc_stop_signal; i++)
		ok = feed_read(&rd, &feeds[i], false);
	for (size_t i = 0; i < n; i++) {
		feed_finish(&rd, &feeds[i]);
		if (feeds[i].fd > 0)
			close(feeds[i].fd);
		free(feeds[i].buf);
	}
	if (rd.warned > WARN_MAX)
		sc_warn("%zu more malformed lines not shown", rd.warned - WARN_MAX);
	scanner_free(&rd.scan);
	free(feeds);
	return ok ? 0 : -1;
}
