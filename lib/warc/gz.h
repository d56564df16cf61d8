/* gz: gzip members, one at a time, over bytes in memory (zlib, and
 * libdeflate for speed).
 *
 * A WARC.gz is gzip members laid end to end, one record each; this reads
 * one member from a position and says where it ended, so that the reader
 * can give each record's offset and length and mend can find the last
 * whole member.  The stream is the caller's, reused member after member.
 *
 * Reading a file is mostly inflating it: libdeflate inflates a whole
 * member into one buffer at two to three times zlib's speed, and checks
 * its CRC-32 with the CPU's carry-less multiply where zlib spends a
 * quarter of its time on it.  zlib stays for the rest: a member checked
 * without being kept (mend), one larger than libdeflate is given room
 * for, and every member libdeflate refuses, so that what is wrong with a
 * bad one is said in zlib's words, as before. */
#ifndef SC_WARC_GZ_H
#define SC_WARC_GZ_H

#include <stddef.h>
#include <zlib.h>

#include "core/buf.h"

enum sc_warc_gz_status {
	SC_WARC_GZ_OK,   /* a whole member */
	SC_WARC_GZ_CUT,  /* the input ended inside the member */
	SC_WARC_GZ_BAD,  /* not gzip, or corrupt (bad data, bad CRC) */
	SC_WARC_GZ_LARGE /* the member inflates past out's maximum */
};

/* Sets up z for sc_warc_gz_member; sc_warc_gz_end frees it. */
void sc_warc_gz_begin(z_stream *z);
void sc_warc_gz_end(z_stream *z);

/* Inflates the member at in (n bytes available) and appends its content
 * to out (out NULL: the content is only checked, not kept).  *used gets
 * the member's compressed length when it is whole.  err (may be NULL)
 * gets zlib's message for a bad member, "" otherwise. */
enum sc_warc_gz_status sc_warc_gz_member(z_stream *z, const unsigned char *in, size_t n,
                                         struct sc_buf *out, size_t *used, char *err,
                                         size_t errlen);

struct libdeflate_decompressor;

/* A libdeflate decompressor for sc_warc_gz_whole (never NULL: out of
 * memory exits); the caller frees it with libdeflate_free_decompressor. */
struct libdeflate_decompressor *sc_warc_gz_inflater(void);

/* As sc_warc_gz_member with out (not NULL), the member inflated whole by
 * d when it can be, else by z. */
enum sc_warc_gz_status sc_warc_gz_whole(struct libdeflate_decompressor *d, z_stream *z,
                                        const unsigned char *in, size_t n, struct sc_buf *out,
                                        size_t *used, char *err, size_t errlen);

/* Does the data begin like a gzip member (1f 8b 08)? */
int sc_warc_gz_magic(const unsigned char *in, size_t n);

#endif
