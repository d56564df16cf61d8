/* What the libFuzzer targets share (header-only: each target is one file).
 *
 * fuzz_fail: a broken promise is reported and aborts, which libFuzzer
 * counts as a crash and keeps the input of.  quiet_begin/quiet_end send
 * standard error to /dev/null around code that warns on every bad input
 * (the run's log would grow by a line an execution), and back. */
#ifndef SC_FUZZ_H
#define SC_FUZZ_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline _Noreturn __attribute__((format(printf, 1, 2))) void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static int saved_stderr = -1, dev_null = -1;

static inline void quiet_begin(void)
{
	if (saved_stderr < 0) {
		saved_stderr = dup(2);
		dev_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	}
	fflush(stderr);
	(void)dup2(dev_null, 2); /* if it fails, the run is only noisier */
}

static inline void quiet_end(void)
{
	fflush(stderr);
	(void)dup2(saved_stderr, 2);
}

#endif
