/* tap: the smallest TAP producer, for the C unit tests of lib/.
 * Each check prints "ok N - what" or "not ok N - what" with the place that
 * failed; tap_done() prints the plan and returns the exit status. */
#ifndef SC_TAP_H
#define SC_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

#define ok(cond, ...) tap_ok((cond) != 0, __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...)                                                         \
	do {                                                                           \
		const char *g_ = (got), *w_ = (want);                                  \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                 \
			printf("#   got:  '%s'\n#   want: '%s'\n", g_ ? g_ : "(null)", \
			       w_ ? w_ : "(null)");                                    \
	} while (0)
#define is_int(got, want, ...)                                              \
	do {                                                                \
		long long g_ = (long long)(got), w_ = (long long)(want);    \
		if (!ok(g_ == w_, __VA_ARGS__))                             \
			printf("#   got:  %lld\n#   want: %lld\n", g_, w_); \
	} while (0)

__attribute__((format(printf, 4, 5))) static int tap_ok(int pass, const char *file, int line,
                                                        const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return pass;
}

static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
