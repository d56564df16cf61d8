/* libFuzzer target: lib/warc's reader, and what reads a record after it
 * (verification, the CDXJ line, the HTTP message, dechunking, content
 * decoding).
 *
 * Input: a mode byte, then the file.  Mode 0 reads the bytes as they are
 * (a plain WARC, or gzip members as given); mode 1 gzips them first as one
 * member; mode 2 as one member per "WARC/" line, as an archive is written.
 * Besides memory safety (ASan, UBSan), the promises checked are:
 * - every record lies within the file: offset + length <= size, and its
 *   block within what was read;
 * - the reader ends: no more results than twice the bytes, plus a few;
 * - problems have a message, and an offset within the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/buf.h"
#include "fuzz.h"
#include "warc/cdx.h"
#include "warc/http.h"
#include "warc/postkey.h"
#include "warc/reader.h"
#include "warc/verify.h"

static void gzip_append(struct sc_buf *out, const uint8_t *p, size_t n)
{
	z_stream z;
	uLong bound;

	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	bound = deflateBound(&z, (uLong)n);
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)sc_buf_space(out, bound);
	z.avail_out = (uInt)bound;
	deflate(&z, Z_FINISH);
	sc_buf_setlen(out, out->len + z.total_out);
	deflateEnd(&z);
}

static void gzip_members(struct sc_buf *out, const uint8_t *p, size_t n)
{
	size_t start = 0;

	for (size_t i = 1; i + 5 <= n; i++)
		if (memcmp(p + i, "WARC/", 5) == 0) {
			gzip_append(out, p + start, i - start);
			start = i;
		}
	gzip_append(out, p + start, n - start);
}

static void count(const char *message, void *ctx)
{
	if (!message[0])
		fuzz_fail("an empty problem message");
	(*(int *)ctx)++;
}

static void each_field(const char *name, const char *value, void *ctx)
{
	*(size_t *)ctx += strlen(name) + strlen(value);
}

/* What sc-warc does with a record once read. */
static void use_record(const struct sc_warc_rec *rec, struct sc_buf *scratch)
{
	struct sc_warc_http msg;
	int problems = 0;
	size_t total = 0;
	char why[128];

	sc_warc_verify(rec, count, &problems);
	sc_buf_reset(scratch);
	sc_warc_cdx_line(rec, "fuzz.warc.gz", scratch);
	sc_warc_http_split(rec->block, (size_t)rec->content_length, &msg);
	sc_warc_http_fields(&msg, each_field, &total);
	/* the payload as a POST's body of each kind warcio keys */
	static const char *const kinds[] = { "application/json", "text/plain",
		                             "application/x-www-form-urlencoded", NULL };
	for (size_t k = 0; k < 4; k++) {
		sc_buf_reset(scratch);
		sc_warc_post_key("http://a/?q", "POST", kinds[k], msg.payload, msg.payload_len,
		                 scratch, scratch);
	}
	sc_buf_reset(scratch);
	sc_warc_dechunk(msg.payload, msg.payload_len, scratch);
	char *enc = sc_warc_http_field(&msg, "Content-Encoding");
	sc_buf_reset(scratch);
	sc_warc_content_decode(enc ? enc : "gzip", msg.payload, msg.payload_len, scratch, why,
	                       sizeof(why));
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sc_buf file, scratch;
	struct sc_warc_rec rec;
	struct sc_warc_problem problem;
	enum sc_warc_next next;
	size_t results = 0;

	if (size < 1)
		return 0;
	sc_buf_init(&file, (size_t)1 << 30);
	sc_buf_init(&scratch, (size_t)16 << 20); /* a bomb stops here */
	if (data[0] % 3 == 0)
		sc_buf_add(&file, data + 1, size - 1);
	else if (data[0] % 3 == 1)
		gzip_append(&file, data + 1, size - 1);
	else
		gzip_members(&file, data + 1, size - 1);
	struct sc_warc_reader *r = sc_warc_reader_mem(file.p ? file.p : "", file.len);
	while ((next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END) {
		if (++results > 2 * file.len + 8)
			fuzz_fail("the reader does not end: %zu results from %zu bytes", results,
			          file.len);
		if (next == SC_WARC_PROBLEM) {
			if (!problem.message[0] || problem.offset > file.len)
				fuzz_fail("problem at %llu of %zu: '%s'",
				          (unsigned long long)problem.offset, file.len,
				          problem.message);
			continue;
		}
		if (rec.offset + rec.length > file.len)
			fuzz_fail("record %llu+%llu past the end (%zu)",
			          (unsigned long long)rec.offset, (unsigned long long)rec.length,
			          file.len);
		use_record(&rec, &scratch);
	}
	sc_warc_reader_close(r);
	sc_buf_free(&file);
	sc_buf_free(&scratch);
	return 0;
}
