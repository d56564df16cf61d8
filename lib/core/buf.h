/* buf: the one growable byte buffer of the toolkit, with a hard maximum.
 *
 * Modelled on curl's dynbuf: the maximum is set once, at sc_buf_init, and
 * an append that would take the content past it fails (returns -1, the
 * buffer as it was) instead of growing without bound.  Allocation failure
 * itself dies through sc_realloc, like every allocation in lib/.
 *
 * Ownership: a struct sc_buf owns p (malloced, or NULL before the first
 * append); sc_buf_free releases it, sc_buf_take hands it to the caller.
 * Once anything was appended the content is NUL-terminated (the NUL is
 * not counted in len and is not part of the maximum), so b->p can be used
 * as a C string when the content holds no NUL. */
#ifndef SC_BUF_H
#define SC_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct sc_buf {
	char *p;    /* malloced, or NULL; NUL-terminated after any append */
	size_t len; /* bytes of content */
	size_t cap; /* bytes allocated at p */
	size_t max; /* content is never longer than this */
};

/* Setting up and tearing down */
void sc_buf_init(struct sc_buf *b, size_t max); /* empty; allocates nothing */
void sc_buf_free(struct sc_buf *b);             /* frees p; b is empty again, same max */
void sc_buf_reset(struct sc_buf *b);            /* len = 0, memory kept */
/* len = 0, and the memory is released when more than keep bytes are held:
 * after one huge record, the buffer does not stay huge. */
void sc_buf_shrink(struct sc_buf *b, size_t keep);
/* The content, handed to the caller (malloced, NUL-terminated, never NULL);
 * *len (if not NULL) gets its length.  b is left empty. */
char *sc_buf_take(struct sc_buf *b, size_t *len);

/* Appending: each returns 0, or -1 (b unchanged) when the content would
 * pass the maximum. */
int sc_buf_add(struct sc_buf *b, const void *s, size_t n);
int sc_buf_addc(struct sc_buf *b, char c);
int sc_buf_adds(struct sc_buf *b, const char *s); /* a C string */
int sc_buf_printf(struct sc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sc_buf_vprintf(struct sc_buf *b, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));
/* Room for n more bytes of content, allocated ahead of need. */
int sc_buf_reserve(struct sc_buf *b, size_t n);

/* Cutting back: the content becomes its first len bytes (len <= b->len).
 * This is the roll-back of a half-written record. */
void sc_buf_truncate(struct sc_buf *b, size_t len);

/* For writers that fill the buffer in place (lib/jsonstr): room for n
 * more bytes at b->p + b->len, whatever the maximum; the writer checks the
 * maximum itself and then sets the length with sc_buf_setlen, which
 * returns -1 (b->len unchanged) past the maximum.  n is the writer's
 * bounded look-ahead, not a size taken from input. */
char *sc_buf_space(struct sc_buf *b, size_t n);
int sc_buf_setlen(struct sc_buf *b, size_t len);

#endif
