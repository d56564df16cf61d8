/* digest: the WARC digests, "ALGORITHM:VALUE" (WARC/1.1 section 5.8).
 *
 * Written as sha1 in base32 (RFC 4648, upper case, no padding: 32
 * characters), the form every WARC tool reads.  Read back in sha1, sha256
 * or md5, in base32 or base16, so that files other tools wrote can be
 * checked.  The hashing is OpenSSL's libcrypto. */
#ifndef SC_WARC_DIGEST_H
#define SC_WARC_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

/* "sha1:" and 32 base32 characters, and the NUL. */
#define SC_WARC_SHA1_LEN 38

/* A running SHA-1.  Owns an OpenSSL context: sc_warc_sha1_end frees it. */
struct sc_warc_sha1 {
	void *ctx; /* EVP_MD_CTX */
};

void sc_warc_sha1_begin(struct sc_warc_sha1 *h);
void sc_warc_sha1_add(struct sc_warc_sha1 *h, const void *data, size_t len);
/* Writes "sha1:BASE32" into out and frees the context. */
void sc_warc_sha1_end(struct sc_warc_sha1 *h, char out[SC_WARC_SHA1_LEN]);
/* The digest of one buffer, in one call. */
void sc_warc_sha1(const void *data, size_t len, char out[SC_WARC_SHA1_LEN]);

/* RFC 4648 base32 of n bytes into out (8 characters per 5 bytes, "="
 * padding), NUL-terminated; out holds 8 * ((n + 4) / 5) + 1 bytes. */
void sc_warc_base32(const unsigned char *in, size_t n, char *out);

enum sc_warc_digest_check {
	SC_WARC_DIGEST_MATCH,
	SC_WARC_DIGEST_MISMATCH,
	SC_WARC_DIGEST_UNKNOWN /* an algorithm or encoding not read here */
};

/* Does the labelled digest (a header's value, "sha1:..."; the algorithm
 * names case-insensitive) match the data?  The data may be given in two
 * parts (a and b, b possibly empty) so that a payload split from its
 * header needs no copy. */
enum sc_warc_digest_check sc_warc_digest_check(const char *labelled, const void *a, size_t alen,
                                               const void *b, size_t blen);

#endif
