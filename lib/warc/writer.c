#include "warc/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/util.h"
#include "warc/cdx.h"
#include "warc/digest.h"
#include "warc/gz.h"
#include "warc/record.h"

struct sc_warc_writer {
	struct sc_warc_writer_options o;
	char *prefix;     /* the series' prefix (path less .warc.gz) */
	char *final_path; /* the current file's name when closed */
	char *open_path;  /* final_path + ".open", the name while written */
	const char *base; /* final_path's base name */
	int fd;
	uint64_t size;
	unsigned serial;
	uint64_t records;             /* in the current file, its warcinfo not counted */
	char info_id[SC_WARC_ID_LEN]; /* the current file's warcinfo's id */
	char host[64];
	z_stream z;
	struct sc_buf gz; /* one member, compressed */
	char error[512];
};

static int fail(struct sc_warc_writer *w, const char *what, const char *path)
{
	snprintf(w->error, sizeof(w->error), "%s %s: %s", what, path, strerror(errno));
	return -1;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The current file's names: the path itself, or the series' next one. */
static void name_file(struct sc_warc_writer *w)
{
	struct sc_buf name;

	sc_buf_init(&name, (size_t)-1 / 2);
	if (w->o.max_size == 0) {
		sc_buf_adds(&name, w->o.path);
	} else {
		char stamp[16];
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		if (strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm) == 0)
			stamp[0] = '\0';
		sc_buf_printf(&name, "%s-%s-%05u-%s.warc.gz", w->prefix, stamp, w->serial++,
		              w->host);
	}
	free(w->final_path);
	free(w->open_path);
	w->final_path = sc_buf_take(&name, NULL);
	sc_buf_printf(&name, "%s.open", w->final_path);
	w->open_path = sc_buf_take(&name, NULL);
	const char *slash = strrchr(w->final_path, '/');
	w->base = slash ? slash + 1 : w->final_path;
}

static int write_warcinfo(struct sc_warc_writer *w)
{
	char *id = w->info_id, date[SC_WARC_DATE_LEN], digest[SC_WARC_SHA1_LEN];
	struct sc_warc_head h;
	struct sc_warc_part part = { w->o.info, w->o.info_len };

	sc_warc_record_id(id);
	sc_warc_date(sc_wall_ms(), date);
	sc_warc_sha1(w->o.info, w->o.info_len, digest);
	sc_warc_head_begin(&h, "warcinfo", id, date);
	sc_warc_head_add(&h, "WARC-Filename", w->base);
	sc_warc_head_add(&h, "Content-Type", "application/warc-fields");
	sc_warc_head_add(&h, "WARC-Block-Digest", digest);
	sc_warc_head_end(&h, w->o.info_len);
	int rc = sc_warc_writer_write(w, h.text.p, h.text.len, &part, 1, NULL);
	sc_warc_head_free(&h);
	return rc;
}

/* Opens the current file for appending: a left-over .open file mended, a
 * closed one reopened, or a new one. */
static int open_file(struct sc_warc_writer *w)
{
	struct stat st;

	name_file(w);
	if (stat(w->open_path, &st) == 0) {
		char err[512];
		if (sc_warc_mend(w->open_path, NULL, err, sizeof(err)) < 0) {
			snprintf(w->error, sizeof(w->error), "%s", err);
			return -1;
		}
	} else if (stat(w->final_path, &st) == 0 && rename(w->final_path, w->open_path) != 0) {
		return fail(w, "cannot rename", w->final_path);
	}
	w->fd = open(w->open_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return fail(w, "cannot open", w->open_path);
	off_t end = lseek(w->fd, 0, SEEK_END);
	w->size = end > 0 ? (uint64_t)end : 0;
	int rc = write_warcinfo(w);
	w->records = 0;
	return rc;
}

struct sc_warc_writer *sc_warc_writer_open(const struct sc_warc_writer_options *o, char *err,
                                           size_t errlen)
{
	struct sc_warc_writer *w = sc_calloc(1, sizeof(*w));
	size_t n = strlen(o->path);

	w->o = *o;
	w->fd = -1;
	w->prefix = sc_strdup(o->path);
	if (n > 8 && strcmp(o->path + n - 8, ".warc.gz") == 0)
		w->prefix[n - 8] = '\0';
	if (gethostname(w->host, sizeof(w->host)) != 0 || !w->host[0])
		strcpy(w->host, "localhost");
	w->host[sizeof(w->host) - 1] = '\0';
	for (char *p = w->host; *p; p++) /* a name, not a path */
		if (*p == '/')
			*p = '_';
	sc_buf_init(&w->gz, (size_t)-1 / 2);
	if (deflateInit2(&w->z, o->level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		sc_die(1, "out of memory");
	if (open_file(w) != 0) {
		snprintf(err, errlen, "%s", w->error);
		sc_warc_writer_close(w, NULL, 0);
		return NULL;
	}
	return w;
}

/* Compresses the pieces into w->gz as one gzip member. */
static void compress_member(struct sc_warc_writer *w, const struct sc_warc_part *pieces,
                            size_t npieces)
{
	sc_buf_reset(&w->gz);
	deflateReset(&w->z);
	for (size_t i = 0; i < npieces; i++) {
		const unsigned char *p = pieces[i].data;
		size_t left = pieces[i].len;
		bool last = i + 1 == npieces;
		do {
			size_t chunk = left > (1u << 30) ? (1u << 30) : left;
			int flush = last && chunk == left ? Z_FINISH : Z_NO_FLUSH;
			w->z.next_in = (unsigned char *)p;
			w->z.avail_in = (uInt)chunk;
			int rc;
			do {
				size_t room = deflateBound(&w->z, (uLong)chunk) + 64;
				w->z.next_out = (unsigned char *)sc_buf_space(&w->gz, room);
				w->z.avail_out = (uInt)room;
				rc = deflate(&w->z, flush);
				sc_buf_setlen(&w->gz, w->gz.len + (room - w->z.avail_out));
			} while (w->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
			p += chunk;
			left -= chunk;
		} while (left > 0);
	}
}

int sc_warc_writer_write(struct sc_warc_writer *w, const char *head, size_t head_len,
                         const struct sc_warc_part *parts, size_t nparts,
                         struct sc_warc_location *loc)
{
	struct sc_warc_part pieces[16];
	size_t n = 0;

	if (w->fd < 0 || nparts > 14) {
		snprintf(w->error, sizeof(w->error), "WARC writer not open");
		return -1;
	}
	pieces[n++] = (struct sc_warc_part){ head, head_len };
	for (size_t i = 0; i < nparts; i++)
		if (parts[i].len > 0)
			pieces[n++] = parts[i];
	pieces[n++] = (struct sc_warc_part){ "\r\n\r\n", 4 };
	compress_member(w, pieces, n);
	if (write_all(w->fd, w->gz.p, w->gz.len) != 0) {
		fail(w, "cannot write", w->open_path);
		/* A half-written member would hide every later one from a reader:
		 * cut it off, so the file stays whole. */
		if (ftruncate(w->fd, (off_t)w->size) != 0) {
			/* the mend at the next open cuts it */
		}
		return -1;
	}
	if (loc) {
		loc->filename = w->base;
		loc->offset = w->size;
		loc->length = w->gz.len;
	}
	w->size += w->gz.len;
	w->records++;
	sc_buf_shrink(&w->gz, (size_t)4 << 20);
	return 0;
}

/* NAME.cdxj beside the file just closed, NAME.warc.gz. */
static int write_cdx(struct sc_warc_writer *w)
{
	struct sc_buf name;
	size_t n = strlen(w->final_path);
	int rc;

	sc_buf_init(&name, (size_t)-1 / 2);
	if (n > 8 && strcmp(w->final_path + n - 8, ".warc.gz") == 0)
		n -= 8;
	sc_buf_printf(&name, "%.*s.cdxj", (int)n, w->final_path);
	rc = sc_warc_cdx_file(w->final_path, name.p, w->error, sizeof(w->error));
	sc_buf_free(&name);
	return rc;
}

static int close_file(struct sc_warc_writer *w)
{
	int rc = 0;

	if (w->fd < 0)
		return 0;
	if (close(w->fd) != 0)
		rc = fail(w, "cannot close", w->open_path);
	w->fd = -1;
	if (rc == 0 && rename(w->open_path, w->final_path) != 0)
		rc = fail(w, "cannot rename", w->open_path);
	if (rc == 0 && w->o.cdx)
		rc = write_cdx(w);
	return rc;
}

int sc_warc_writer_rotate_if_full(struct sc_warc_writer *w)
{
	/* A file holds at least one capture, whatever the size. */
	if (w->o.max_size == 0 || w->size < w->o.max_size || w->records == 0)
		return 0;
	if (close_file(w) != 0)
		return -1;
	return open_file(w);
}

const char *sc_warc_writer_filename(const struct sc_warc_writer *w)
{
	return w->base;
}

const char *sc_warc_writer_info_id(const struct sc_warc_writer *w)
{
	return w->info_id;
}

const char *sc_warc_writer_error(const struct sc_warc_writer *w)
{
	return w->error;
}

int sc_warc_writer_close(struct sc_warc_writer *w, char *err, size_t errlen)
{
	int rc = close_file(w);

	if (rc != 0 && err)
		snprintf(err, errlen, "%s", w->error);
	deflateEnd(&w->z);
	sc_buf_free(&w->gz);
	free(w->prefix);
	free(w->final_path);
	free(w->open_path);
	free(w);
	return rc;
}

/* The end of the last whole member of the n bytes at p. */
static size_t whole_members(const unsigned char *p, size_t n)
{
	z_stream z;
	size_t at = 0, used;

	sc_warc_gz_begin(&z);
	while (at < n &&
	       sc_warc_gz_member(&z, p + at, n - at, NULL, &used, NULL, 0) == SC_WARC_GZ_OK)
		at += used;
	sc_warc_gz_end(&z);
	return at;
}

int64_t sc_warc_mend(const char *path, uint64_t *cut, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	size_t keep = 0;

	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_size > 0) {
		void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		bool gzipped = sc_warc_gz_magic(map, (size_t)st.st_size);
		if (gzipped)
			keep = whole_members(map, (size_t)st.st_size);
		munmap(map, (size_t)st.st_size);
		if (!gzipped) {
			snprintf(err, errlen,
			         "%s: not a gzipped WARC (it does not begin with a gzip member)",
			         path);
			close(fd);
			return -1;
		}
	}
	if ((off_t)keep != st.st_size && ftruncate(fd, (off_t)keep) != 0) {
		snprintf(err, errlen, "cannot cut %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (cut)
		*cut = (uint64_t)st.st_size - keep;
	return (int64_t)keep;
}
