#include "warc/http.h"

#include <brotli/decode.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

#include "core/util.h"

bool sc_warc_http_split(const char *block, size_t len, struct sc_warc_http *msg)
{
	memset(msg, 0, sizeof(*msg));
	msg->payload = block;
	msg->payload_len = len;
	size_t end = 0;
	for (size_t i = 0; i + 1 < len && !end; i++) {
		if (block[i] != '\n')
			continue;
		if (block[i + 1] == '\n')
			end = i + 2;
		else if (i + 2 < len && block[i + 1] == '\r' && block[i + 2] == '\n')
			end = i + 3;
	}
	if (!end)
		return false;
	msg->head = block;
	msg->head_len = end;
	msg->payload = block + end;
	msg->payload_len = len - end;
	if (end > 12 && memcmp(block, "HTTP/", 5) == 0) {
		const char *sp = memchr(block, ' ', end);
		if (sp && sp + 4 <= block + end && isdigit((unsigned char)sp[1]) &&
		    isdigit((unsigned char)sp[2]) && isdigit((unsigned char)sp[3]))
			msg->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
	}
	return true;
}

/* Each field line of the head after the status line: name and value
 * bounds, trimmed. */
void sc_warc_http_fields(const struct sc_warc_http *msg,
                         void (*each)(const char *name, const char *value, void *ctx), void *ctx)
{
	const char *p = msg->head;
	const char *nl = p ? memchr(p, '\n', msg->head_len) : NULL;

	if (!nl)
		return;
	const char *end = msg->head + msg->head_len;
	for (p = nl + 1; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *colon = memchr(p, ':', (size_t)(eol - p));
		if (colon && colon > p) {
			const char *v = colon + 1, *ve = eol;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			char *name = sc_malloc((size_t)(colon - p) + 1);
			char *value = sc_malloc((size_t)(ve - v) + 1);
			memcpy(name, p, (size_t)(colon - p));
			name[colon - p] = '\0';
			memcpy(value, v, (size_t)(ve - v));
			value[ve - v] = '\0';
			each(name, value, ctx);
			free(name);
			free(value);
		}
		p = eol + 1;
	}
}

struct find {
	const char *name;
	char *value;
};

static void find_one(const char *name, const char *value, void *ctx)
{
	struct find *f = ctx;

	if (!f->value && strcasecmp(name, f->name) == 0)
		f->value = sc_strdup(value);
}

char *sc_warc_http_field(const struct sc_warc_http *msg, const char *name)
{
	struct find f = { name, NULL };

	sc_warc_http_fields(msg, find_one, &f);
	return f.value;
}

bool sc_warc_http_has_token(const struct sc_warc_http *msg, const char *name, const char *token)
{
	char *v = sc_warc_http_field(msg, name);
	bool found = false;
	size_t n = strlen(token);

	if (!v)
		return false;
	for (char *p = v; *p && !found;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		char *e = p;
		while (*e && *e != ',')
			e++;
		char *te = e;
		while (te > p && (te[-1] == ' ' || te[-1] == '\t'))
			te--;
		found = (size_t)(te - p) == n && strncasecmp(p, token, n) == 0;
		p = e;
	}
	free(v);
	return found;
}

int sc_warc_dechunk(const char *p, size_t n, struct sc_buf *out)
{
	size_t i = 0;

	for (;;) {
		uint64_t size = 0;
		size_t digits = 0;
		while (i < n && isxdigit((unsigned char)p[i]) && digits < 16) {
			int c = tolower((unsigned char)p[i]);
			size = size * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
			i++;
			digits++;
		}
		if (digits == 0)
			return -1;
		const char *nl = memchr(p + i, '\n', n - i); /* past any extension */
		if (!nl)
			return -1;
		i = (size_t)(nl - p) + 1;
		if (size == 0)
			return 0; /* trailer fields, if any, are not payload */
		if (size > n - i) {
			/* A body cut inside a chunk: what came of it is payload. */
			sc_buf_add(out, p + i, n - i);
			return -1;
		}
		if (sc_buf_add(out, p + i, (size_t)size) != 0)
			return -1;
		i += (size_t)size;
		if (i < n && p[i] == '\r')
			i++;
		if (i >= n || p[i] != '\n')
			return -1;
		i++;
	}
}

static int inflate_all(const char *p, size_t n, int window_bits, struct sc_buf *out,
                       const char **why)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, window_bits) != Z_OK)
		sc_die(1, "out of memory");
	z.next_in = (unsigned char *)p;
	z.avail_in = (uInt)(n > 0xffffffffu ? 0xffffffffu : n);
	do {
		size_t room = 256 << 10;
		z.next_out = (unsigned char *)sc_buf_space(out, room);
		z.avail_out = (uInt)room;
		rc = inflate(&z, Z_NO_FLUSH);
		if (sc_buf_setlen(out, out->len + (room - z.avail_out)) != 0) {
			rc = Z_MEM_ERROR;
			break;
		}
	} while (rc == Z_OK);
	inflateEnd(&z);
	if (rc == Z_STREAM_END)
		return 0;
	*why = rc == Z_MEM_ERROR ? "decoded body too large" : "bad compressed data";
	return -1;
}

static int brotli_all(const char *p, size_t n, struct sc_buf *out, const char **why)
{
	BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
	const uint8_t *in = (const uint8_t *)p;
	size_t avail_in = n;
	BrotliDecoderResult rc;

	if (!s)
		sc_die(1, "out of memory");
	do {
		size_t room = 256 << 10, avail_out = room;
		uint8_t *next_out = (uint8_t *)sc_buf_space(out, room);
		rc = BrotliDecoderDecompressStream(s, &avail_in, &in, &avail_out, &next_out, NULL);
		if (sc_buf_setlen(out, out->len + (room - avail_out)) != 0) {
			rc = BROTLI_DECODER_RESULT_ERROR;
			break;
		}
	} while (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT);
	BrotliDecoderDestroyInstance(s);
	if (rc == BROTLI_DECODER_RESULT_SUCCESS)
		return 0;
	*why = "bad brotli data";
	return -1;
}

/* A zstd body (RFC 8878): every frame, one after the other, as a
 * streaming decoder reads them; one cut short is bad data. */
static int zstd_all(const char *p, size_t n, struct sc_buf *out, const char **why)
{
	ZSTD_DStream *s = ZSTD_createDStream();
	ZSTD_inBuffer in = { p, n, 0 };
	size_t rc = 1;

	if (!s)
		sc_die(1, "out of memory");
	while (in.pos < in.size || rc != 0) {
		size_t room = 256 << 10;
		ZSTD_outBuffer o = { sc_buf_space(out, room), room, 0 };
		rc = ZSTD_decompressStream(s, &o, &in);
		if (ZSTD_isError(rc)) {
			*why = "bad zstd data";
			break;
		}
		if (sc_buf_setlen(out, out->len + o.pos) != 0) {
			*why = "decoded body too large";
			rc = (size_t)-1;
			break;
		}
		if (in.pos == in.size && rc != 0 && o.pos < room) {
			*why = "zstd data cut short";
			rc = (size_t)-1;
			break;
		}
	}
	ZSTD_freeDStream(s);
	return rc == 0 ? 0 : -1;
}

/* sc_warc_content_decode, its reason one of these fixed texts. */
static int content_decode(const char *encoding, const char *p, size_t n, struct sc_buf *out,
                          const char **why)
{
	if (!encoding || !*encoding || strcasecmp(encoding, "identity") == 0)
		return sc_buf_add(out, p, n) == 0 ? 0 : (*why = "body too large", -1);
	if (strcasecmp(encoding, "gzip") == 0 || strcasecmp(encoding, "x-gzip") == 0)
		return inflate_all(p, n, 16 + MAX_WBITS, out, why);
	if (strcasecmp(encoding, "deflate") == 0) {
		/* zlib-wrapped as RFC 9110 says, or raw as some servers send it */
		size_t keep = out->len;
		if (inflate_all(p, n, MAX_WBITS, out, why) == 0)
			return 0;
		sc_buf_truncate(out, keep);
		return inflate_all(p, n, -MAX_WBITS, out, why);
	}
	if (strcasecmp(encoding, "br") == 0)
		return brotli_all(p, n, out, why);
	if (strcasecmp(encoding, "zstd") == 0)
		return zstd_all(p, n, out, why);
	*why = "unknown Content-Encoding";
	return -1;
}

int sc_warc_content_decode(const char *encoding, const char *p, size_t n, struct sc_buf *out,
                           char *err, size_t errlen)
{
	const char *why = NULL;
	int rc = content_decode(encoding, p, n, out, &why);

	if (rc != 0)
		snprintf(err, errlen, "%s", why ? why : "bad data");
	return rc;
}
