/* gz: gzip members, one at a time, over bytes in memory (zlib).
 *
 * A WARC.gz is gzip members laid end to end, one record each; this reads
 * one member from a position and says where it ended, so that the reader
 * can give each record's offset and length and mend can find the last
 * whole member.  The stream is the caller's, reused member after member. */
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
 * the member's compressed length when it is whole.  *why (may be NULL)
 * gets zlib's message for a bad member. */
enum sc_warc_gz_status sc_warc_gz_member(z_stream *z, const unsigned char *in, size_t n,
                                         struct sc_buf *out, size_t *used, const char **why);

/* Does the data begin like a gzip member (1f 8b 08)? */
int sc_warc_gz_magic(const unsigned char *in, size_t n);

#endif
