/* outfile: a file that is never half-written.
 *
 * A regular file (or a new one) is written to ".NAME.XXXXXX" in its own
 * directory, created exclusively, and renamed over NAME only after the last
 * record is written and fsynced: a crash leaves the old file as it was.
 * With --append, whole records go to the end of the file itself; the buffer
 * is only ever written out at a record boundary, and a failed write is cut
 * back to the last whole record.  Anything that is not a regular file
 * (stdout, a FIFO, a device) is written directly: there is nothing to
 * rename. */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/util.h"

#define BUF_INIT ((size_t)256 << 10)
#define FLUSH_AT ((size_t)128 << 10)

/* Every file opened, so that an exit on any path removes the temporaries. */
static struct outfile *opened[SINK_MAX];

static void fail(char *errbuf, size_t errlen, const char *path, const char *what)
{
	snprintf(errbuf, errlen, "%s: %s%s%s", path, what ? what : "", what ? ": " : "",
	         strerror(errno));
}

/* /dev/stdout, /dev/fd/N and /proc/self/fd/N name a descriptor this process
 * already has: duplicate it rather than reopen the file behind it (a reopen
 * would lose O_APPEND and start at offset 0).  Returns the fd or -1. */
static int inherited_fd(const char *path)
{
	static const char *const prefixes[] = { "/dev/fd/", "/proc/self/fd/" };
	long n;
	char *end;

	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t plen = strlen(prefixes[i]);
		if (strncmp(path, prefixes[i], plen) != 0 || !path[plen])
			continue;
		errno = 0;
		n = strtol(path + plen, &end, 10);
		if (*end == '\0' && errno == 0 && n >= 0 && n <= INT_MAX)
			return (int)n;
	}
	return -1;
}

static int open_direct(struct outfile *f, const char *path, char *errbuf, size_t errlen)
{
	int inherited = inherited_fd(path);

	f->mode = OUT_DIRECT;
	if (strcmp(path, "-") == 0) {
		f->fd = STDOUT_FILENO;
		return 0;
	}
	if (inherited >= 0)
		f->fd = fcntl(inherited, F_DUPFD_CLOEXEC, 3);
	else
		f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (f->fd < 0) {
		fail(errbuf, errlen, path, NULL);
		return -1;
	}
	return 0;
}

static int open_append(struct outfile *f, char *errbuf, size_t errlen)
{
	struct stat st;
	char last;

	f->mode = OUT_APPEND;
	f->fd = open(f->target, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
	if (f->fd < 0 || fstat(f->fd, &st) < 0) {
		fail(errbuf, errlen, f->path, NULL);
		return -1;
	}
	/* Like cat(1): appending to the file being read would never end. */
	struct stat in;
	if (fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode) && in.st_dev == st.st_dev &&
	    in.st_ino == st.st_ino) {
		snprintf(errbuf, errlen, "%s: is also the input; not appending to it", f->path);
		return -1;
	}
	f->whole = st.st_size;
	f->had_content = st.st_size > 0;
	if (st.st_size > 0) {
		if (pread(f->fd, &last, 1, st.st_size - 1) != 1) {
			fail(errbuf, errlen, f->path, "cannot read");
			return -1;
		}
		/* A last line cut short (by a crash of some other writer) would
		 * swallow our first record: refuse rather than guess. */
		if (last != '\n') {
			snprintf(errbuf, errlen,
			         "%s: does not end with a newline; not appending to a partial line",
			         f->path);
			return -1;
		}
	}
	return 0;
}

static int open_temp(struct outfile *f, const struct stat *old, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(f->target, '/');
	size_t dirlen = slash ? (size_t)(slash - f->target) + 1 : 0;
	const char *base = f->target + dirlen;
	size_t size = dirlen + strlen(base) + sizeof("/..XXXXXX");
	mode_t mask, mode;

	f->mode = OUT_REPLACE;
	f->temp = sc_malloc(size);
	snprintf(f->temp, size, "%.*s.%s.XXXXXX", (int)dirlen, f->target, base);
	f->fd = mkostemp(f->temp, O_CLOEXEC);
	if (f->fd < 0) {
		free(f->temp);
		f->temp = NULL;
		fail(errbuf, errlen, f->path, "cannot create a temporary file");
		return -1;
	}
	sc_signals_unlink_on_abort(f->slot, f->temp);
	/* mkstemp makes 0600; the file should look as if written in place:
	 * the old file's permissions, or what umask allows a new file. */
	if (old) {
		mode = old->st_mode & 07777;
	} else {
		mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(f->fd, mode) < 0) {
		fail(errbuf, errlen, f->path, "cannot set permissions");
		return -1;
	}
	return 0;
}

int outfile_open(struct outfile *f, const char *path, bool append, int slot, char *errbuf,
                 size_t errlen)
{
	struct stat st, lst;
	bool exists;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->slot = slot;
	f->fd = -1;
	sc_buf_init(&f->buf, OUTFILE_MAX);
	sc_buf_reserve(&f->buf, BUF_INIT);
	if (slot >= 0 && slot < SINK_MAX)
		opened[slot] = f;

	exists = stat(path, &st) == 0;
	/* The descriptor names (/dev/stdout, /dev/fd/N, /proc/...) may stat
	 * as the regular file they point to, and have no directory to write a
	 * temporary beside; /dev/shm is a file system like any other. */
	if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0 ||
	    strcmp(path, "/dev/stderr") == 0 || strncmp(path, "/dev/fd/", 8) == 0 ||
	    strncmp(path, "/proc/", 6) == 0 || (exists && !S_ISREG(st.st_mode)))
		return open_direct(f, path, errbuf, errlen);

	/* Write beside the file a symlink points to, and replace that file,
	 * not the link. */
	f->target = NULL;
	if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
		f->target = realpath(path, NULL);
	if (!f->target)
		f->target = sc_strdup(path);

	if (append)
		return open_append(f, errbuf, errlen);
	return open_temp(f, exists ? &st : NULL, errbuf, errlen);
}

char *outfile_reserve(struct outfile *f, size_t n)
{
	return sc_buf_space(&f->buf, n);
}

void outfile_advance(struct outfile *f, size_t n)
{
	/* The room was there (outfile_reserve); past the maximum, the record
	 * is refused at its end. */
	if (sc_buf_setlen(&f->buf, f->buf.len + n) != 0) {
		f->buf.len += n;
		f->too_big = true;
	}
}

void outfile_put(struct outfile *f, const void *bytes, size_t n)
{
	if (sc_buf_add(&f->buf, bytes, n) != 0)
		f->too_big = true;
}

int outfile_flush(struct outfile *f)
{
	size_t done = 0;
	ssize_t n;
	int rc = 0;

	/* A second signal must not cut an append in the middle of a record. */
	sc_signals_write_begin();
	while (done < f->buf.len) {
		n = write(f->fd, f->buf.p + done, f->buf.len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int saved = n < 0 ? errno : ENOSPC;
			if (f->mode == OUT_APPEND && ftruncate(f->fd, f->whole) < 0) {
				/* nothing better to do: the write error is what we report */
			}
			errno = saved;
			rc = -1;
			break;
		}
		done += (size_t)n;
	}
	if (rc == 0) {
		f->whole += (off_t)f->buf.len;
		sc_buf_reset(&f->buf);
	}
	sc_signals_write_end();
	/* One huge record must not keep its buffer for the rest of the run. */
	if (rc == 0 && f->buf.cap > 4 * BUF_INIT) {
		sc_buf_free(&f->buf);
		sc_buf_reserve(&f->buf, BUF_INIT);
	}
	return rc;
}

int outfile_record_end(struct outfile *f)
{
	if (f->too_big) {
		errno = EFBIG;
		return -1;
	}
	return f->buf.len >= FLUSH_AT ? outfile_flush(f) : 0;
}

int outfile_finish(struct outfile *f)
{
	if (outfile_flush(f) < 0)
		return -1;
	if (f->mode == OUT_DIRECT) {
		if (f->fd == STDOUT_FILENO)
			return 0;
	} else if (fsync(f->fd) < 0) {
		return -1;
	}
	int rc = close(f->fd);
	f->fd = -1;
	return rc;
}

int outfile_commit(struct outfile *f)
{
	char *dir, *slash;
	int dfd;

	if (f->mode != OUT_REPLACE || !f->temp)
		return 0;
	if (rename(f->temp, f->target) < 0)
		return -1;
	sc_signals_unlink_on_abort(f->slot, NULL);
	free(f->temp);
	f->temp = NULL;
	/* The rename itself is durable only once the directory is synced. */
	dir = sc_strdup(f->target);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	return 0;
}

void outfile_discard(struct outfile *f)
{
	if (f->temp) {
		unlink(f->temp);
		sc_signals_unlink_on_abort(f->slot, NULL);
		free(f->temp);
		f->temp = NULL;
	}
	if (f->fd > STDOUT_FILENO)
		close(f->fd);
	f->fd = -1;
	free(f->target);
	f->target = NULL;
	sc_buf_free(&f->buf);
	if (f->slot >= 0 && f->slot < SINK_MAX && opened[f->slot] == f)
		opened[f->slot] = NULL;
}

void outfile_cleanup_all(void)
{
	for (int i = 0; i < SINK_MAX; i++)
		if (opened[i] && opened[i]->temp)
			unlink(opened[i]->temp);
}
