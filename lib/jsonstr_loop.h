/* jsonstr_loop: the body of a fast JSON string writer, included by
 * jsonstr.c once per instruction set with these defined:
 *   LOOP_NAME            the function's name
 *   LOOP_ATTR            its attributes (a target("...") for AVX2)
 *   LOOP_MASK(p, e, h)   for the 32 bytes at p: bit k of *e set when byte
 *                        k is '"', '\' or below 0x20; of *h when >= 0x80
 * The loop, in words: look at 32 bytes; if none is to be escaped, copy
 * them whole; else copy the run before each such byte with one 32-byte
 * move (the output always has room: ROOM bytes ahead), write its escape
 * from a table, and go on.  A non-ASCII byte, when checking, hands over to
 * check_stretch for the stretch of non-ASCII characters there.  The last
 * bytes (fewer than 64: a 32-byte move from any of them would read past
 * the input) are copied into a padded block first, so they take the same
 * path. */

LOOP_ATTR static int LOOP_NAME(struct sc_buf *b, const unsigned char *s, size_t n, bool check,
                               unsigned flags)
{
	size_t start = b->len, i = 0, tail_at = SIZE_MAX;
	unsigned char pad[96];
	const unsigned char *src;
	char *out, *room_end;

	if (start > b->max || n > b->max - start)
		return SC_JSONSTR_TOO_BIG; /* the output is never shorter than the input */
	out = sc_buf_space(b, n + n / 8 + ROOM);
	room_end = b->p + b->cap - 1;
	while (i < n) {
		size_t len, pos = 0;
		uint32_t esc, high, stop;

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
		stop = (esc | (check ? high : 0)) & (len == 32 ? ~0u : (1u << len) - 1);
		for (; stop; stop &= stop - 1) {
			unsigned k = (unsigned)__builtin_ctz(stop);
			unsigned char c = src[k];
			memcpy(out, src + pos, 32);
			out += k - pos;
			if (c >= 0x80)
				break;
			if (c == 0 && (flags & SC_JSONSTR_NO_NUL))
				goto not_utf8;
			memcpy(out, escape_text[c], 8);
			out += escape_len[c];
			pos = k + 1;
		}
		if (!stop) {
			memcpy(out, src + pos, 32);
			out += len - pos;
			i += len;
			continue;
		}
		i += (size_t)__builtin_ctz(stop);
		if (!(out = check_stretch(b, out, s, n, &i, &room_end)))
			goto not_utf8;
	}
	return finish(b, start, out);
not_utf8:
	sc_buf_truncate(b, start);
	return SC_JSONSTR_NOT_UTF8;
}
