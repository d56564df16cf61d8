/* buf: a growable byte buffer with a hard maximum (see buf.h). */
#include "core/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* The first allocation; small buffers (sc-parse's values) stay small. */
#define BUF_MIN 64

void sc_buf_init(struct sc_buf *b, size_t max)
{
	b->p = NULL;
	b->len = b->cap = 0;
	b->max = max;
}

void sc_buf_free(struct sc_buf *b)
{
	free(b->p);
	sc_buf_init(b, b->max);
}

void sc_buf_reset(struct sc_buf *b)
{
	sc_buf_truncate(b, 0);
}

void sc_buf_shrink(struct sc_buf *b, size_t keep)
{
	if (b->cap > keep)
		sc_buf_free(b);
	else
		sc_buf_reset(b);
}

char *sc_buf_take(struct sc_buf *b, size_t *len)
{
	char *p = b->p ? b->p : sc_calloc(1, 1);

	if (len)
		*len = b->len;
	sc_buf_init(b, b->max);
	return p;
}

/* Makes cap at least need + 1 (the NUL), doubling: appends are amortised
 * O(1).  Only called with need > the current capacity or no memory. */
static void grow(struct sc_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : BUF_MIN;

	if (need >= (size_t)-1 / 2)
		sc_die(1, "out of memory");
	while (cap < need + 1)
		cap *= 2;
	b->p = sc_realloc(b->p, cap);
	b->cap = cap;
}

char *sc_buf_space(struct sc_buf *b, size_t n)
{
	if (n >= (size_t)-1 / 2 - b->len)
		sc_die(1, "out of memory");
	if (!b->p || b->len + n + 1 > b->cap)
		grow(b, b->len + n);
	return b->p + b->len;
}

int sc_buf_setlen(struct sc_buf *b, size_t len)
{
	if (len > b->max || !b->p || len + 1 > b->cap)
		return -1;
	b->len = len;
	b->p[len] = '\0';
	return 0;
}

int sc_buf_reserve(struct sc_buf *b, size_t n)
{
	if (n > b->max || b->len > b->max - n)
		return -1;
	sc_buf_space(b, n);
	return 0;
}

int sc_buf_add(struct sc_buf *b, const void *s, size_t n)
{
	if (sc_buf_reserve(b, n) != 0)
		return -1;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int sc_buf_addc(struct sc_buf *b, char c)
{
	if (b->p && b->len + 2 <= b->cap && b->len < b->max) {
		b->p[b->len++] = c;
		b->p[b->len] = '\0';
		return 0;
	}
	return sc_buf_add(b, &c, 1);
}

int sc_buf_adds(struct sc_buf *b, const char *s)
{
	return sc_buf_add(b, s, strlen(s));
}

int sc_buf_vprintf(struct sc_buf *b, const char *fmt, va_list ap)
{
	char small[128];
	va_list again;
	int n;

	/* Most formats (numbers, names) fit in a small stack buffer: one pass. */
	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0) {
		va_end(again);
		return -1;
	}
	if ((size_t)n < sizeof(small)) {
		va_end(again);
		return sc_buf_add(b, small, (size_t)n);
	}
	if (sc_buf_reserve(b, (size_t)n) != 0) {
		va_end(again);
		return -1;
	}
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, again);
	va_end(again);
	b->len += (size_t)n;
	return 0;
}

int sc_buf_printf(struct sc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sc_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void sc_buf_truncate(struct sc_buf *b, size_t len)
{
	if (len > b->len)
		return;
	b->len = len;
	if (b->p)
		b->p[len] = '\0';
}
