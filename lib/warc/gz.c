#include "warc/gz.h"

#include <libdeflate.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"

void sc_warc_gz_begin(z_stream *z)
{
	memset(z, 0, sizeof(*z));
	if (inflateInit2(z, 16 + MAX_WBITS) != Z_OK)
		sc_die(1, "out of memory");
}

void sc_warc_gz_end(z_stream *z)
{
	inflateEnd(z);
}

int sc_warc_gz_magic(const unsigned char *in, size_t n)
{
	return n >= 3 && in[0] == 0x1f && in[1] == 0x8b && in[2] == 8;
}

/* Inflate in steps of at most this much output at a time when the
 * content is not kept, and grow out by at least this much when it is. */
#define STEP ((size_t)256 << 10)

enum sc_warc_gz_status sc_warc_gz_member(z_stream *z, const unsigned char *in, size_t n,
                                         struct sc_buf *out, size_t *used, char *err, size_t errlen)
{
	static unsigned char sink[64 << 10];
	int rc;

	if (err && errlen)
		*err = '\0';
	if (!sc_warc_gz_magic(in, n))
		return n < 3 ? SC_WARC_GZ_CUT : SC_WARC_GZ_BAD;
	inflateReset(z);
	z->next_in = (unsigned char *)in;
	/* zlib counts in uInt: a member over 4 GiB is fed in pieces. */
	size_t left = n;
	z->avail_in = left > 0x40000000u ? 0x40000000u : (uInt)left;
	left -= z->avail_in;
	do {
		if (out) {
			char *space = sc_buf_space(out, STEP);
			if (out->len + STEP > out->max)
				return SC_WARC_GZ_LARGE;
			z->next_out = (unsigned char *)space;
			z->avail_out = (uInt)STEP;
		} else {
			z->next_out = sink;
			z->avail_out = sizeof(sink);
		}
		rc = inflate(z, Z_NO_FLUSH);
		if (out)
			sc_buf_setlen(out, out->len + (STEP - z->avail_out));
		if (z->avail_in == 0 && left > 0) {
			uInt more = left > 0x40000000u ? 0x40000000u : (uInt)left;
			z->avail_in = more;
			left -= more;
		}
	} while (rc == Z_OK);
	if (rc == Z_STREAM_END) {
		*used = n - left - z->avail_in;
		return SC_WARC_GZ_OK;
	}
	if (rc == Z_BUF_ERROR && z->avail_in == 0 && left == 0)
		return SC_WARC_GZ_CUT;
	if (err)
		snprintf(err, errlen, "%s", z->msg ? z->msg : "corrupt data");
	return SC_WARC_GZ_BAD;
}

struct libdeflate_decompressor *sc_warc_gz_inflater(void)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();

	if (!d)
		sc_die(1, "out of memory");
	return d;
}

/* libdeflate is given at least this much room for a member, and at most
 * this much: it needs the whole of it at once and says only that it was
 * too little, so a larger member is inflated again in twice the room,
 * and past the most by zlib, which streams it. */
#define WHOLE_MIN ((size_t)1 << 20)
#define WHOLE_MAX ((size_t)64 << 20)
/* The header flag saying a CRC-16 of the header follows it: zlib checks
 * it, libdeflate skips it unchecked. */
#define FHCRC 0x02

enum sc_warc_gz_status sc_warc_gz_whole(struct libdeflate_decompressor *d, z_stream *z,
                                        const unsigned char *in, size_t n, struct sc_buf *out,
                                        size_t *used, char *err, size_t errlen)
{
	size_t start = out->len;
	size_t room = out->cap > start + WHOLE_MIN ? out->cap - start - 1 : WHOLE_MIN;
	bool plain = n > 3 && sc_warc_gz_magic(in, n) && !(in[3] & FHCRC);

	for (; plain && room <= WHOLE_MAX && room <= out->max - start; room *= 2) {
		size_t in_used = 0, out_len = 0;
		enum libdeflate_result rc = libdeflate_gzip_decompress_ex(
		        d, in, n, sc_buf_space(out, room), room, &in_used, &out_len);
		if (rc == LIBDEFLATE_SUCCESS) {
			sc_buf_setlen(out, start + out_len);
			*used = in_used;
			if (err && errlen)
				*err = '\0';
			return SC_WARC_GZ_OK;
		}
		if (rc != LIBDEFLATE_INSUFFICIENT_SPACE)
			break;
	}
	return sc_warc_gz_member(z, in, n, out, used, err, errlen);
}
