/* util: diagnostics, allocation that dies on out-of-memory, and clocks.
 *
 * Every program sets sc_progname once (sc_setprogname) so diagnostics read
 * "sc-fetch: message".  A message ending in ':' gets ": strerror(errno)"
 * appended, as in sbase's eprintf. */
#ifndef SC_UTIL_H
#define SC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern const char *sc_progname;

/* Diagnostics */
void sc_setprogname(const char *argv0); /* basename of argv0 */

/* Holds each of descriptors 0, 1 and 2 that the program was started
 * without (`sc-fetch >&-`), so that nothing opened later takes its number:
 * else the records written "to standard output" would go to whatever did
 * (a server's socket, the epoll set).  Each is /dev/null opened the wrong
 * way round, so that using it still fails with EBADF, as the closed one
 * did ("error writing standard output: Bad file descriptor").  Every main
 * calls it first. */
void sc_stdio_hold(void);
void sc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* sc_warn's va_list form, for other wrappers (sc_die_write). */
void sc_vwarn(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
_Noreturn void sc_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation: these never return NULL; out of memory is fatal (exit 1). */
void *sc_malloc(size_t size);
void *sc_calloc(size_t nmemb, size_t size);
void *sc_realloc(void *ptr, size_t size);
char *sc_strdup(const char *s);
char *sc_strndup(const char *s, size_t n);

/* Clocks */
double sc_now_ms(void);   /* monotonic milliseconds, for intervals */
int64_t sc_wall_ms(void); /* wall clock, ms since the epoch */
/* Formats ms-since-epoch as RFC 3339 UTC with milliseconds into buf
 * ("2026-11-29T16:39:02.123Z"); buf must hold SC_RFC3339_LEN bytes. */
#define SC_RFC3339_LEN 25
void sc_rfc3339(int64_t wall_ms, char buf[SC_RFC3339_LEN]);

#endif
