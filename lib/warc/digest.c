#include "warc/digest.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

void sc_warc_base32(const unsigned char *in, size_t n, char *out)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	size_t bits = 0;
	unsigned long acc = 0;
	char *w = out;

	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			*w++ = alphabet[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
		acc &= (1ul << bits) - 1;
	}
	if (bits > 0)
		*w++ = alphabet[(acc << (5 - bits)) & 31];
	while ((w - out) % 8 != 0)
		*w++ = '=';
	*w = '\0';
}

void sc_warc_sha1_begin(struct sc_warc_sha1 *h)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) != 1)
		sc_die(1, "out of memory");
	h->ctx = ctx;
}

void sc_warc_sha1_add(struct sc_warc_sha1 *h, const void *data, size_t len)
{
	if (len > 0)
		EVP_DigestUpdate(h->ctx, data, len);
}

void sc_warc_sha1_end(struct sc_warc_sha1 *h, char out[SC_WARC_SHA1_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_DigestFinal_ex(h->ctx, md, &n);
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
	memcpy(out, "sha1:", 6); /* the NUL too; the digest follows it */
	sc_warc_base32(md, n, out + 5);
}

void sc_warc_sha1(const void *data, size_t len, char out[SC_WARC_SHA1_LEN])
{
	struct sc_warc_sha1 h;

	sc_warc_sha1_begin(&h);
	sc_warc_sha1_add(&h, data, len);
	sc_warc_sha1_end(&h, out);
}

static void hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		*out++ = digits[in[i] >> 4];
		*out++ = digits[in[i] & 15];
	}
	*out = '\0';
}

/* The value as written compared with ours: base32 ignoring padding and
 * case, base16 ignoring case. */
static bool same_value(const char *written, const char *ours)
{
	size_t n = strlen(ours);

	while (n > 0 && ours[n - 1] == '=')
		n--;
	if (strncasecmp(written, ours, n) != 0)
		return false;
	for (written += n; *written; written++)
		if (*written != '=' && !isspace((unsigned char)*written))
			return false;
	return true;
}

enum sc_warc_digest_check sc_warc_digest_check(const char *labelled, const void *a, size_t alen,
                                               const void *b, size_t blen)
{
	const char *colon = strchr(labelled, ':');
	char name[16];
	unsigned char md[EVP_MAX_MD_SIZE];
	char enc[2 * EVP_MAX_MD_SIZE + 8];
	unsigned int n = 0;

	if (!colon || colon - labelled >= (long)sizeof(name))
		return SC_WARC_DIGEST_UNKNOWN;
	memcpy(name, labelled, (size_t)(colon - labelled));
	name[colon - labelled] = '\0';
	for (char *p = name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (strcmp(name, "sha-1") == 0)
		strcpy(name, "sha1");
	else if (strcmp(name, "sha-256") == 0)
		strcpy(name, "sha256");
	if (strcmp(name, "sha1") != 0 && strcmp(name, "sha256") != 0 && strcmp(name, "md5") != 0)
		return SC_WARC_DIGEST_UNKNOWN;
	const EVP_MD *md_type = EVP_get_digestbyname(name);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!md_type || !ctx || EVP_DigestInit_ex(ctx, md_type, NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return SC_WARC_DIGEST_UNKNOWN;
	}
	if (alen > 0)
		EVP_DigestUpdate(ctx, a, alen);
	if (blen > 0)
		EVP_DigestUpdate(ctx, b, blen);
	EVP_DigestFinal_ex(ctx, md, &n);
	EVP_MD_CTX_free(ctx);
	const char *value = colon + 1;
	while (*value == ' ')
		value++;
	size_t vlen = strlen(value);
	while (vlen > 0 && isspace((unsigned char)value[vlen - 1]))
		vlen--;
	if (vlen == 2 * n) {
		hex(md, n, enc);
		return strncasecmp(value, enc, vlen) == 0 ? SC_WARC_DIGEST_MATCH
		                                          : SC_WARC_DIGEST_MISMATCH;
	}
	sc_warc_base32(md, n, enc);
	return same_value(value, enc) ? SC_WARC_DIGEST_MATCH : SC_WARC_DIGEST_MISMATCH;
}
