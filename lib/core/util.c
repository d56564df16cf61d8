#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *sc_progname = "sc";

void sc_setprogname(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (argv0 && *argv0)
		sc_progname = slash ? slash + 1 : argv0;
}

void sc_vwarn(const char *fmt, va_list ap)
{
	int saved_errno = errno;
	size_t len = strlen(fmt);

	fprintf(stderr, "%s: ", sc_progname);
	vfprintf(stderr, fmt, ap);
	if (len > 0 && fmt[len - 1] == ':')
		fprintf(stderr, " %s", strerror(saved_errno));
	fputc('\n', stderr);
	fflush(stderr);
}

void sc_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sc_vwarn(fmt, ap);
	va_end(ap);
}

void sc_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sc_vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

static void *check_alloc(void *p)
{
	if (!p)
		sc_die(1, "out of memory");
	return p;
}

void *sc_malloc(size_t size)
{
	return check_alloc(malloc(size ? size : 1));
}

void *sc_calloc(size_t nmemb, size_t size)
{
	return check_alloc(calloc(nmemb ? nmemb : 1, size ? size : 1));
}

void *sc_realloc(void *ptr, size_t size)
{
	return check_alloc(realloc(ptr, size ? size : 1));
}

char *sc_strdup(const char *s)
{
	return check_alloc(strdup(s));
}

char *sc_strndup(const char *s, size_t n)
{
	return check_alloc(strndup(s, n));
}

double sc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int64_t sc_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sc_rfc3339(int64_t wall_ms, char buf[SC_RFC3339_LEN])
{
	time_t secs = (time_t)(wall_ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	size_t n = strftime(buf, SC_RFC3339_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
	unsigned ms = (unsigned)(wall_ms % 1000) % 1000u;
	snprintf(buf + n, SC_RFC3339_LEN - n, ".%03uZ", ms);
}

void sc_stdio_hold(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* The lowest free number: fd itself, those below being open. */
		int held = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (held < 0 || held == fd)
			continue;
		/* Should dup2 fail, fd stays closed: as the program was started. */
		int dup_rc = dup2(held, fd);
		(void)dup_rc;
		close(held);
	}
}
