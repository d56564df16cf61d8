/* jsonstr_loop: the body of a fast JSON string writer, included by
 * jsonstr.c once per instruction set with these defined:
 *   LOOP_NAME            the function's name
 *   LOOP_ATTR            its attributes (a target("...") for AVX2)
 *   LOOP_MASK(p, e, h)   for the 32 bytes at p: bit k of *e set when byte
 *                        k is '"', '\' or below 0x20; of *h when >= 0x80
 *   LOOP_BULK            (optional) statements that write whole blocks
 *                        their own way first, as many as they can; they
 *                        see s, n, i, out, room_end, check and valid_to
 * The loop, in words: look at 32 bytes; if none is to be escaped, copy
 * them whole; else copy the run before each such byte with one 32-byte
 * move (the output always has room: ROOM bytes ahead), write its escape
 * from a table, and go on (block_escapes).  A non-ASCII byte, when
 * checking, hands over to check_stretch for the stretch of non-ASCII
 * characters there.  The last bytes (fewer than 64: a 32-byte move from
 * any of them would read past the input) are copied into a padded block
 * first, so they take the same path. */

LOOP_ATTR static int LOOP_NAME(struct sc_buf *b, const unsigned char *s, size_t n, bool check,
                               unsigned flags)
{
	size_t start = b->len, i = 0, tail_at = SIZE_MAX;
	size_t valid_to = 0; /* for LOOP_BULK: checked as UTF-8 up to here */
	unsigned char pad[96];
	const unsigned char *src;
	char *out, *room_end;

	if (start > b->max || n > b->max - start)
		return SC_JSONSTR_TOO_BIG; /* the output is never shorter than the input */
	out = sc_buf_space(b, n + n / 8 + ROOM);
	room_end = b->p + b->cap - 1;
	(void)valid_to;
	while (i < n) {
		size_t len;
		uint32_t esc, high, stop;
		int at;

#ifdef LOOP_BULK
		LOOP_BULK
#endif
		if (n - i >= 64) {
			src = s + i;
			len = 32;
		} else {
			if (tail_at == SIZE_MAX) {
				tail_at = i;
				memcpy(pad, s + i, n - i);
				memset(pad + (n - i), 'a', sizeof(pad) - (n - i));
			}
			src = pad + (i - tail_at);
			len = n - i < 32 ? n - i : 32;
		}
		if (room_end - out < ROOM)
			out = more_room(b, out, n - i, &room_end);
		LOOP_MASK(src, &esc, &high);
		/* Non-ASCII bytes before valid_to were checked by LOOP_BULK (a
		 * block may start in the middle of a character it checked). */
		if (valid_to > i)
			high &= valid_to - i >= 32 ? 0 : ~0u << (valid_to - i);
		stop = (esc | (check ? high : 0)) & (len == 32 ? ~0u : (1u << len) - 1);
		at = block_escapes(&out, src, len, stop, flags);
		if (at < 0)
			goto not_utf8;
		if (at == (int)len) {
			i += len;
			continue;
		}
		i += (size_t)at;
		if (!(out = check_stretch(b, out, s, n, &i, &room_end)))
			goto not_utf8;
	}
	return finish(b, start, out);
not_utf8:
	sc_buf_truncate(b, start);
	return SC_JSONSTR_NOT_UTF8;
}
