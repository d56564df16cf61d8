#include "warc/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/util.h"
#include "warc/gz.h"

/* A record inflates to at most this much (a gzip bomb stops here). */
#define CONTENT_MAX ((size_t)4 << 30)
/* A WARC header is at most this long. */
#define HEADER_MAX ((size_t)1 << 20)

struct sc_warc_reader {
	const unsigned char *data;
	size_t size;
	bool mapped;
	bool gzipped;
	size_t pos; /* the next member (or plain record) */
	z_stream z;
	struct libdeflate_decompressor *inflater;
	struct sc_buf content; /* the member being read, inflated */
	size_t content_pos;    /* the next record in it */
	uint64_t member_offset, member_length;
	struct sc_buf header; /* the record's header, split into C strings */
	struct sc_warc_field *fields;
	size_t fields_cap;
};

static struct sc_warc_reader *reader_new(const void *data, size_t len)
{
	struct sc_warc_reader *r = sc_calloc(1, sizeof(*r));

	r->data = data;
	r->size = len;
	r->gzipped = sc_warc_gz_magic(data, len);
	sc_warc_gz_begin(&r->z);
	r->inflater = sc_warc_gz_inflater();
	sc_buf_init(&r->content, CONTENT_MAX);
	sc_buf_init(&r->header, HEADER_MAX);
	return r;
}

struct sc_warc_reader *sc_warc_reader_mem(const void *data, size_t len)
{
	return reader_new(data, len);
}

struct sc_warc_reader *sc_warc_reader_open(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *map = NULL;

	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot read %s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
			close(fd);
			return NULL;
		}
		madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	}
	close(fd);
	struct sc_warc_reader *r = reader_new(map, (size_t)st.st_size);
	r->mapped = map != NULL;
	return r;
}

void sc_warc_reader_close(struct sc_warc_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap((void *)r->data, r->size);
	sc_warc_gz_end(&r->z);
	libdeflate_free_decompressor(r->inflater);
	sc_buf_free(&r->content);
	sc_buf_free(&r->header);
	free(r->fields);
	free(r);
}

static enum sc_warc_next problem_at(struct sc_warc_problem *p, uint64_t offset, const char *fmt,
                                    ...) __attribute__((format(printf, 3, 4)));

static enum sc_warc_next problem_at(struct sc_warc_problem *p, uint64_t offset, const char *fmt,
                                    ...)
{
	va_list ap;

	p->offset = offset;
	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	return SC_WARC_PROBLEM;
}

const char *sc_warc_get(const struct sc_warc_rec *rec, const char *name)
{
	for (size_t i = 0; i < rec->nfields; i++)
		if (strcasecmp(rec->fields[i].name, name) == 0)
			return rec->fields[i].value;
	return NULL;
}

static char *trim(char *s, char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*end = '\0';
	return s;
}

static void add_field(struct sc_warc_reader *r, size_t n, const char *name, const char *value)
{
	if (n == r->fields_cap) {
		r->fields_cap = r->fields_cap ? 2 * r->fields_cap : 32;
		r->fields = sc_realloc(r->fields, r->fields_cap * sizeof(*r->fields));
	}
	r->fields[n] = (struct sc_warc_field){ name, value };
}

/* Splits the header (its len bytes copied into r->header) into the
 * version and the fields.  Returns NULL, or what is wrong with it. */
static const char *split_header(struct sc_warc_reader *r, const char *text, size_t len,
                                struct sc_warc_rec *rec)
{
	sc_buf_reset(&r->header);
	if (sc_buf_add(&r->header, text, len) != 0)
		return "WARC header longer than 1 MiB";
	char *s = r->header.p, *end = s + len;
	/* Folded lines (a line that begins with a space or tab) join the one
	 * before. */
	for (char *p = s; p + 1 < end; p++)
		if (*p == '\n' && (p[1] == ' ' || p[1] == '\t')) {
			*p = ' ';
			if (p > s && p[-1] == '\r')
				p[-1] = ' ';
		}
	size_t n = 0;
	char *line = s;
	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *eol = nl ? nl : end;
		if (line == s) {
			rec->version = trim(line, eol);
		} else if (eol > line && !(eol == line + 1 && *line == '\r')) {
			char *colon = memchr(line, ':', (size_t)(eol - line));
			if (!colon || colon == line)
				return "WARC header line without a name and a colon";
			*colon = '\0';
			const char *name = trim(line, colon);
			add_field(r, n++, name, trim(colon + 1, eol));
		}
		line = eol + 1;
	}
	rec->fields = r->fields;
	rec->nfields = n;
	return NULL;
}

static bool parse_length(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > ((uint64_t)1 << 58))
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

/* The end of the header block (after its blank line) in p[0..n), or 0. */
static size_t header_end(const char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] != '\n')
			continue;
		if (p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Parses the record at p (n bytes).  Returns NULL, with *used the bytes
 * of the header and the block; or a message (with *used what to skip). */
static const char *parse_record(struct sc_warc_reader *r, const char *p, size_t n,
                                struct sc_warc_rec *rec, size_t *used, char *msg, size_t msglen)
{
	*used = 0;
	if (n < 5 || memcmp(p, "WARC/", 5) != 0)
		return "not a WARC record (no WARC/ version line)";
	size_t hlen = header_end(p, n < HEADER_MAX ? n : HEADER_MAX);
	if (hlen == 0)
		return n >= HEADER_MAX ? "WARC header longer than 1 MiB"
		                       : "WARC header not ended by a blank line";
	const char *why = split_header(r, p, hlen, rec);
	if (why)
		return why;
	const char *cl = sc_warc_get(rec, "Content-Length");
	if (!cl)
		return "no Content-Length";
	if (!parse_length(cl, &rec->content_length)) {
		snprintf(msg, msglen, "Content-Length '%.40s' is not a number", cl);
		return msg;
	}
	if (rec->content_length > n - hlen) {
		snprintf(msg, msglen, "Content-Length %llu is more than the %llu bytes that follow",
		         (unsigned long long)rec->content_length, (unsigned long long)(n - hlen));
		*used = n;
		return msg;
	}
	rec->block = p + hlen;
	*used = hlen + rec->content_length;
	return NULL;
}

/* After a block: its "\r\n\r\n".  Returns the bytes of it, or 0. */
static size_t trailer(const char *p, size_t n)
{
	if (n >= 4 && memcmp(p, "\r\n\r\n", 4) == 0)
		return 4;
	if (n >= 2 && memcmp(p, "\n\n", 2) == 0)
		return 2;
	return 0;
}

static size_t skip_newlines(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && (p[i] == '\r' || p[i] == '\n'))
		i++;
	return i;
}

/* The next record in the inflated member. */
static enum sc_warc_next next_in_member(struct sc_warc_reader *r, struct sc_warc_rec *rec,
                                        struct sc_warc_problem *problem)
{
	const char *p = r->content.p + r->content_pos;
	size_t n = r->content.len - r->content_pos, used;
	char msg[200];

	rec->offset = r->member_offset;
	rec->length = r->member_length;
	const char *why = parse_record(r, p, n, rec, &used, msg, sizeof(msg));
	if (why) {
		r->content_pos = r->content.len;
		return problem_at(problem, r->member_offset, "%s", why);
	}
	size_t t = trailer(p + used, n - used);
	if (t == 0) {
		r->content_pos = r->content.len;
		return problem_at(problem, r->member_offset,
		                  "Content-Length %llu does not end the record (%llu more bytes, "
		                  "no blank line after the block)",
		                  (unsigned long long)rec->content_length,
		                  (unsigned long long)(n - used));
	}
	r->content_pos += used + t;
	r->content_pos +=
	        skip_newlines(r->content.p + r->content_pos, r->content.len - r->content_pos);
	return SC_WARC_RECORD;
}

/* Where the next gzip member may begin after a bad one at from. */
static size_t resync_gzip(const struct sc_warc_reader *r, size_t from)
{
	for (size_t i = from + 1; i + 3 <= r->size; i++) {
		const unsigned char *q = memchr(r->data + i, 0x1f, r->size - i);
		if (!q)
			break;
		i = (size_t)(q - r->data);
		if (sc_warc_gz_magic(q, r->size - i))
			return i;
	}
	return r->size;
}

static enum sc_warc_next next_gzip(struct sc_warc_reader *r, struct sc_warc_rec *rec,
                                   struct sc_warc_problem *problem)
{
	if (r->content_pos < r->content.len)
		return next_in_member(r, rec, problem);
	if (r->pos >= r->size)
		return SC_WARC_END;
	size_t start = r->pos, used = 0;
	char why[128];
	sc_buf_shrink(&r->content, (size_t)16 << 20);
	r->content_pos = 0;
	switch (sc_warc_gz_whole(r->inflater, &r->z, r->data + start, r->size - start, &r->content,
	                         &used, why, sizeof(why))) {
	case SC_WARC_GZ_OK:
		r->pos = start + used;
		r->member_offset = start;
		r->member_length = used;
		if (r->content.len == 0)
			return problem_at(problem, start, "empty gzip member");
		return next_in_member(r, rec, problem);
	case SC_WARC_GZ_CUT:
		r->pos = r->size;
		sc_buf_reset(&r->content);
		return problem_at(problem, start,
		                  "gzip member cut short (the file ends inside it)");
	case SC_WARC_GZ_LARGE:
		r->pos = resync_gzip(r, start);
		sc_buf_reset(&r->content);
		return problem_at(problem, start, "record inflates to more than 4 GiB");
	case SC_WARC_GZ_BAD:
	default:
		r->pos = resync_gzip(r, start);
		sc_buf_reset(&r->content);
		if (!sc_warc_gz_magic(r->data + start, r->size - start))
			return problem_at(problem, start, "not a gzip member");
		return problem_at(problem, start, "corrupt gzip member: %s",
		                  why[0] ? why : "bad data");
	}
}

/* Where the next plain record may begin after a bad one at from: the next
 * "WARC/1." at the start of a line. */
static size_t resync_plain(const struct sc_warc_reader *r, size_t from)
{
	const char *base = (const char *)r->data;

	for (size_t i = from + 1; i + 8 <= r->size; i++) {
		const char *q = memmem(base + i, r->size - i, "\nWARC/1.", 8);
		if (!q)
			break;
		return (size_t)(q - base) + 1;
	}
	return r->size;
}

static enum sc_warc_next next_plain(struct sc_warc_reader *r, struct sc_warc_rec *rec,
                                    struct sc_warc_problem *problem)
{
	const char *base = (const char *)r->data;
	size_t used;
	char msg[200];

	r->pos += skip_newlines(base + r->pos, r->size - r->pos);
	if (r->pos >= r->size)
		return SC_WARC_END;
	size_t start = r->pos, n = r->size - start;
	rec->offset = start;
	const char *why = parse_record(r, base + start, n, rec, &used, msg, sizeof(msg));
	if (why) {
		r->pos = used == n ? r->size : resync_plain(r, start);
		if (start == 0 && memcmp(why, "not a WARC", 10) == 0)
			return problem_at(problem, 0,
			                  "not a WARC file (neither gzip nor a WARC/ line)");
		return problem_at(problem, start, "%s", why);
	}
	rec->length = used;
	size_t t = trailer(base + start + used, n - used);
	if (t == 0) {
		r->pos = resync_plain(r, start);
		return problem_at(
		        problem, start,
		        "Content-Length %llu does not end the record (no blank line after "
		        "the block)",
		        (unsigned long long)rec->content_length);
	}
	r->pos = start + used + t;
	return SC_WARC_RECORD;
}

enum sc_warc_next sc_warc_reader_next(struct sc_warc_reader *r, struct sc_warc_rec *rec,
                                      struct sc_warc_problem *problem)
{
	memset(rec, 0, sizeof(*rec));
	return r->gzipped ? next_gzip(r, rec, problem) : next_plain(r, rec, problem);
}

enum sc_warc_next sc_warc_reader_at(struct sc_warc_reader *r, uint64_t offset,
                                    struct sc_warc_rec *rec, struct sc_warc_problem *problem)
{
	if (offset >= r->size)
		return problem_at(problem, offset, "offset past the end of the file");
	r->pos = (size_t)offset;
	r->content_pos = r->content.len;
	enum sc_warc_next next = sc_warc_reader_next(r, rec, problem);
	return next == SC_WARC_END ? problem_at(problem, offset, "no record at this offset") : next;
}
