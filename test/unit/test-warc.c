/* Unit tests for lib/warc: base32 and digests, SURT keys, the writer and
 * the reader together (records, offsets, lengths), mend, the HTTP/2 head
 * rewrite, dechunking and verification.
 *
 * Run as "test-warc write DIR", it writes the sample files that
 * test/sc-warc.bats hands to independent readers (warcio, a Node digest
 * checker): every kind of record the writer makes. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/util.h"
#include "tap.h"
#include "warc/capture.h"
#include "warc/cdx.h"
#include "warc/dedupe.h"
#include "warc/digest.h"
#include "warc/http.h"
#include "warc/json.h"
#include "warc/postkey.h"
#include "warc/reader.h"
#include "warc/record.h"
#include "warc/verify.h"
#include "warc/writer.h"

static const char info[] = "software: sc-warc test 0.1.0\r\n"
                           "format: WARC File Format 1.1\r\n"
                           "conformsTo: https://iipc.github.io/warc-specifications/"
                           "specifications/warc-format/warc-1.1/\r\n";

static char *gzip_bytes(const char *text, size_t *len)
{
	z_stream z;
	size_t n = strlen(text);
	char *out = sc_malloc(n + 64);

	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)text;
	z.avail_in = (uInt)n;
	z.next_out = (unsigned char *)out;
	z.avail_out = (uInt)(n + 64);
	deflate(&z, Z_FINISH);
	*len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Set for the next capture only: its payload was cut. */
static bool cut_next;

static int capture(struct sc_warc_writer *w, const char *url, const char *response,
                   const char *payload, size_t payload_len, struct sc_warc_written *out)
{
	struct sc_buf req;
	struct sc_warc_capture c = { 0 };

	sc_buf_init(&req, 1 << 20);
	sc_buf_printf(&req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: sc-test\r\n\r\n",
	              strchr(url + 8, '/') ? strchr(url + 8, '/') : "/");
	c.url = url;
	c.ip = "127.0.0.1";
	c.protocol = "http/1.1";
	c.date_ms = 1764601200123;
	c.request = req.p;
	c.request_len = req.len;
	c.response = response;
	c.response_len = strlen(response);
	c.payload = payload;
	c.payload_len = payload_len;
	c.truncated = cut_next;
	cut_next = false;
	c.metadata = "fetch-latency-ms: 1.5\r\nattempt: 1\r\n";
	c.metadata_len = strlen(c.metadata);
	int rc = sc_warc_write_capture(w, &c, out);
	sc_buf_free(&req);
	return rc;
}

static const char page[] = "<!DOCTYPE html><title>Hello</title><p>caf\xc3\xa9 au lait</p>\n";

/* The sample file of every kind of record, in dir/NAME. */
static int write_samples(const char *dir)
{
	char path[4096], err[512];
	struct sc_warc_written a, b, g, t;
	snprintf(path, sizeof(path), "%s/sample.warc.gz", dir);
	struct sc_warc_writer_options o = { path, 6, 0, info, strlen(info), false };
	struct sc_warc_writer *w = sc_warc_writer_open(&o, err, sizeof(err));
	size_t gz_len;
	char *gz = gzip_bytes(page, &gz_len);
	struct sc_buf h2;

	if (!w) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	char head[256];
	snprintf(head, sizeof(head),
	         "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
	         "Content-Length: %zu\r\n\r\n",
	         strlen(page));
	capture(w, "http://www.Example.com:8080/a/b?z=1&a=2", head, page, strlen(page), &a);
	snprintf(head, sizeof(head),
	         "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
	         "Content-Length: %zu\r\n\r\n",
	         gz_len);
	capture(w, "http://127.0.0.1/gzip", head, gz, gz_len, &g);
	capture(w, "http://127.0.0.1/missing",
	        "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\n", "gone\n", 5, &b);
	/* The same page under a second URL: an identical-payload revisit. */
	struct sc_warc_revisit same = { SC_WARC_PROFILE_IDENTICAL, a.id,
		                        "http://www.Example.com:8080/a/b?z=1&a=2", a.date };
	struct sc_warc_capture c = { .url = "http://127.0.0.1/copy",
		                     .date_ms = 1764601300000,
		                     .request = "GET /copy HTTP/1.1\r\n\r\n",
		                     .request_len = 22,
		                     .response =
		                             "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
		                     .response_len = 44,
		                     .payload = page,
		                     .payload_len = strlen(page),
		                     .revisit = &same };
	sc_warc_write_capture(w, &c, &t);
	struct sc_warc_revisit not_modified = { SC_WARC_PROFILE_NOT_MODIFIED, a.id,
		                                "http://www.Example.com:8080/a/b?z=1&a=2", a.date };
	c.url = "http://www.Example.com:8080/a/b?z=1&a=2";
	c.response = "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n";
	c.response_len = strlen(c.response);
	c.payload_len = 0;
	c.revisit = &not_modified;
	sc_warc_write_capture(w, &c, &t);
	/* A body cut by --max-bytes. */
	cut_next = true;
	capture(w, "http://127.0.0.1/big",
	        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n",
	        "0123456789", 10, &t);
	/* HTTP/2 over TLS: an HTTP/1.1 status line. */
	sc_buf_init(&h2, 1 << 20);
	static const char h2_head[] =
	        "HTTP/2 200 \r\ncontent-type: text/html\r\nserver: nginx\r\n\r\n";
	sc_warc_head_as_http11(h2_head, strlen(h2_head), &h2);
	c = (struct sc_warc_capture){ .url = "https://127.0.0.1:8443/h2",
		                      .ip = "127.0.0.1",
		                      .protocol = "h2",
		                      .tls = "tls/1.3",
		                      .date_ms = 1764601400000,
		                      .request = "GET /h2 HTTP/2\r\n\r\n",
		                      .request_len = 18,
		                      .response = h2.p,
		                      .response_len = h2.len,
		                      .payload = page,
		                      .payload_len = strlen(page) };
	sc_warc_write_capture(w, &c, &t);
	sc_buf_free(&h2);
	free(gz);
	return sc_warc_writer_close(w, err, sizeof(err)) == 0 ? 0 : 1;
}

/* A series of files of at most 1 KB: three captures, three files. */
static int write_series(const char *dir)
{
	char path[4096], err[512];
	struct sc_warc_written a;

	snprintf(path, sizeof(path), "%s/series.warc.gz", dir);
	struct sc_warc_writer_options o = { path, 1, 1000, info, strlen(info), false };
	struct sc_warc_writer *w = sc_warc_writer_open(&o, err, sizeof(err));
	if (!w)
		return 1;
	for (int i = 0; i < 3; i++) {
		char url[64];
		snprintf(url, sizeof(url), "http://127.0.0.1/series/%d", i);
		capture(w, url, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", page,
		        strlen(page), &a);
	}
	return sc_warc_writer_close(w, err, sizeof(err)) == 0 ? 0 : 1;
}

static void test_base32(void)
{
	char out[64], digest[SC_WARC_SHA1_LEN];

	sc_warc_base32((const unsigned char *)"foobar", 6, out);
	is_str(out, "MZXW6YTBOI======", "base32 of foobar (RFC 4648 test vector)");
	sc_warc_base32((const unsigned char *)"f", 1, out);
	is_str(out, "MY======", "base32 of f");
	sc_warc_sha1("", 0, digest);
	is_str(digest, "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "sha1 of nothing, base32");
	ok(sc_warc_digest_check("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "", 0, "", 0) ==
	           SC_WARC_DIGEST_MATCH,
	   "digest check: base32 match");
	ok(sc_warc_digest_check("SHA1:da39a3ee5e6b4b0d3255bfef95601890afd80709", "", 0, "", 0) ==
	           SC_WARC_DIGEST_MATCH,
	   "digest check: base16 match");
	ok(sc_warc_digest_check("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "x", 1, "", 0) ==
	           SC_WARC_DIGEST_MISMATCH,
	   "digest check: mismatch");
	ok(sc_warc_digest_check("crc32:1234", "x", 1, "", 0) == SC_WARC_DIGEST_UNKNOWN,
	   "digest check: an unknown algorithm");
}

static const char *surt(const char *url)
{
	static char out[1024];
	struct sc_buf b;

	sc_buf_init(&b, 1 << 20);
	sc_warc_surt(url, &b);
	snprintf(out, sizeof(out), "%s", b.p);
	sc_buf_free(&b);
	return out;
}

static void test_surt(void)
{
	is_str(surt("http://www.Example.com/A/b?z=1&a=2#frag"), "com,example)/a/b?a=2&z=1",
	       "surt: www. dropped, lower case, query sorted, fragment dropped");
	is_str(surt("https://www2.example.com:443/"), "com,example)/", "surt: default port");
	is_str(surt("http://example.com:8080"), "com,example:8080)/", "surt: port, empty path");
	is_str(surt("http://user:pw@example.com/x/../y/./z"), "com,example)/y/z",
	       "surt: userinfo and dot segments");
	is_str(surt("dns:example.com"), "dns:example.com", "surt: not http");
	is_str(surt("http://127.0.0.1:8080/a b"), "1,0,0,127:8080)/a%20b",
	       "surt: an IP address reversed too (as warcio does), space");
}

/* "KEY-URL REQUEST-BODY-JSON" of a POST key (warc/postkey.h). */
static const char *post_key(const char *method, const char *ctype, const char *body)
{
	static char out[2048];
	struct sc_buf key, json;

	sc_buf_init(&key, 1 << 20);
	sc_buf_init(&json, 1 << 20);
	sc_warc_post_key("http://Example.com/p", method, ctype, body, strlen(body), &key, &json);
	snprintf(out, sizeof(out), "%s %s", key.p, json.p ? json.p : "-");
	sc_buf_free(&key);
	sc_buf_free(&json);
	return out;
}

/* The expected values are what warcio 2.4.11's postToGetUrl gives (run
 * under node 18 on the same bodies). */
#define R "\xef\xbf\xbd"
#define R3 R R R
static void test_post_key(void)
{
	is_str(post_key("POST", "application/json",
	                "{\"b\":[1e21,0.1],\"a\":{\"3\":\"x\",\"1\":\"y\",\"z\":null},\"b\":"
	                "\"last\"}"),
	       "http://Example.com/p?__wb_method=POST&b=last&1=y&3=x&z=null "
	       "\"b=last&1=y&3=x&z=null\"",
	       "post key: JSON, a key met again keeps its place, integer keys first");
	is_str(post_key("PUT", "application/json; charset=utf-8",
	                "{\"n\":[1e21,0.1,-0,123456789012345680000,5e-324,1.5e-7,100,1e400,\"a "
	                "b+c\"]}"),
	       "http://Example.com/p?__wb_method=PUT&n=1e%2B21&n.2_=0.1&n.3_=0&n.4_="
	       "123456789012345680000&n.5_=5e-324&n.6_=1.5e-7&n.7_=100&n.8_=Infinity&n.9_=a+b%2Bc "
	       "\"n=1e%2B21&n.2_=0.1&n.3_=0&n.4_=123456789012345680000&n.5_=5e-324&n.6_=1.5e-7&n.7_"
	       "="
	       "100&n.8_=Infinity&n.9_=a+b%2Bc\"",
	       "post key: JavaScript's numbers, a name met again numbered");
	is_str(post_key("PUT", "application/json", "[\"\\ud800x\",{\"\":1}]"),
	       "http://Example.com/p?__wb_method=PUT&=\xef\xbf\xbdx&.2_=1 \"=%EF%BF%BDx&.2_=1\"",
	       "post key: a lone surrogate, an empty name");
	is_str(post_key("PUT", "application/json", "nope"),
	       "http://Example.com/p?__wb_method=PUT& -",
	       "post key: JSON that does not parse gives nothing");
	is_str(post_key("POST", "application/x-www-form-urlencoded", "a=%E2%82%AC&b=%2F%zz"),
	       "http://Example.com/p?__wb_method=POST& \"a=%E2%82%AC&b=%2F%zz\"",
	       "post key: a form that decodeURI refuses");
	is_str(post_key("POST", "application/x-www-form-urlencoded", "a=%E2%82%AC&b=%2F"),
	       "http://Example.com/p?__wb_method=POST&a=\xe2\x82\xac&b=%2F \"a=%E2%82%AC&b=%2F\"",
	       "post key: a form decoded but for reserved characters");
	is_str(post_key("POST", "text/plain", "{\"constructor\":1,\"k\":[true,false,\"\"]}"),
	       "http://Example.com/p?__wb_method=POST&constructor=1&k=true&k.2_=false "
	       "\"constructor=1&k=true&k.2_=false\"",
	       "post key: text/plain JSON, an empty string left out");
	/* More POSTs, each against warcio's answer. */
	static const struct {
		const char *ctype, *body, *want, *what;
	} posts[] = {
		/* TextDecoder's reading of a form: its byte order mark dropped,
		 * each maximal ill-formed subpart one U+FFFD ("\xe0\x80" is two,
		 * "\xf0\x9f\x98" one, a surrogate's three bytes three). */
		{ "application/x-www-form-urlencoded",
		  "\xef\xbb\xbf"
		  "a=\xe0\x80\xc3(&b=\xf0\x9f\x98&c=\xed\xa0\x80",
		  "a=" R3 "(&b=" R "&c=" R3 " \"a=" R3 "(&b=" R "&c=" R3 "\"",
		  "a form's ill-formed UTF-8, each maximal subpart one U+FFFD" },
		/* decodeURI throws on a lead byte that begins no sequence, and
		 * on a surrogate's; it keeps the escapes of reserved characters. */
		{ "application/x-www-form-urlencoded", "a=%C0%80", " \"a=%C0%80\"",
		  "decodeURI refuses a lead byte 0xC0" },
		{ "application/x-www-form-urlencoded", "a=%ED%A0%80", " \"a=%ED%A0%80\"",
		  "decodeURI refuses a surrogate" },
		{ "application/x-www-form-urlencoded", "a=%F0%9F%98%80&b=%3D%26",
		  "a=\xf0\x9f\x98\x80&b=%3D%26 \"a=%F0%9F%98%80&b=%3D%26\"",
		  "decodeURI decodes four bytes, keeps the escapes of = and &" },
		/* JavaScript's key order: array indexes (below 2^32 - 1) first,
		 * ascending; "01" and 4294967295 are names like any other. */
		{ "application/json",
		  "{\"4294967295\":\"x\",\"4294967294\":\"y\",\"b\":1,\"01\":2,\"0\":3,\"b\":4}",
		  "0=3&4294967294=y&4294967295=x&b=4&01=2 "
		  "\"0=3&4294967294=y&4294967295=x&b=4&01=2\"",
		  "integer keys first, up to 2^32 - 2" },
		{ "text/plain", "\xef\xbb\xbf{\"k\":\"v \\u00e9\\ud83d\\ude00\"}",
		  "k=v+\xc3\xa9\xf0\x9f\x98\x80 \"k=v+%C3%A9%F0%9F%98%80\"",
		  "JSON after a byte order mark, a surrogate pair escaped" },
		{ "application/json", "{\"a\":\"\xff\"}", "a=" R " \"a=%EF%BF%BD\"",
		  "a JSON string's byte that is not UTF-8" },
	};
	for (size_t i = 0; i < sizeof(posts) / sizeof(*posts); i++) {
		char want[512];
		snprintf(want, sizeof(want), "http://Example.com/p?__wb_method=POST&%s",
		         posts[i].want);
		is_str(post_key("POST", posts[i].ctype, posts[i].body), want, "post key: %s",
		       posts[i].what);
	}
	is_str(post_key("POST", "image/png", "\x01\xff"),
	       "http://Example.com/p?__wb_method=POST&__wb_post_data=Af8= \"__wb_post_data=Af8=\"",
	       "post key: other bodies in base64");
}

/* The JavaScript-semantics reader itself (warc/json.h): what JSON.parse
 * builds, as node 18 gives it. */
static void test_json_parse(void)
{
	const char *text = "{\"b\":1,\"2\":[true,null,-0,1e21,\"\\ud800\"],\"1\":{},\"b\":0.5}";
	struct sc_warc_json *j = sc_warc_json_parse(text, strlen(text));

	ok(j && j->type == SC_WARC_JSON_OBJECT && j->n == 3, "json: an object of three");
	if (j && j->n == 3) {
		is_str(j->keys[0], "1", "json: integer keys first, ascending");
		is_str(j->keys[1], "2", "json: then 2");
		is_str(j->keys[2], "b", "json: a name met again keeps its first place");
		is_str(j->kids[2]->text, "0.5", "json: and takes its last value");
		const struct sc_warc_json *a = j->kids[1];
		ok(a->type == SC_WARC_JSON_ARRAY && a->n == 5 && !a->keys,
		   "json: an array of five");
		if (a->n == 5) {
			ok(a->kids[0]->type == SC_WARC_JSON_BOOL, "json: true is a boolean");
			is_str(a->kids[0]->text, "true", "json: spelled true");
			ok(a->kids[1]->type == SC_WARC_JSON_NULL, "json: null");
			is_str(a->kids[2]->text, "0", "json: -0 is 0 (Number::toString)");
			is_str(a->kids[3]->text, "1e+21", "json: 1e21 is 1e+21");
			is_str(a->kids[4]->text, "\xef\xbf\xbd",
			       "json: a lone surrogate as U+FFFD");
		}
	}
	sc_warc_json_free(j);
	static const char *const bad[] = { "",   "{",        "[1,]",  "{\"a\" 1}", "01",
		                           "1.", "\"\x01\"", "[1] x", "tru",       "\"\\x\"" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		j = sc_warc_json_parse(bad[i], strlen(bad[i]));
		ok(!j, "json: '%s' does not parse", bad[i]);
		sc_warc_json_free(j);
	}
	char deep[600];
	for (int d = 256; d <= 257; d++) {
		memset(deep, '[', (size_t)d);
		memset(deep + d, ']', (size_t)d);
		j = sc_warc_json_parse(deep, 2 * (size_t)d);
		ok(d == 256 ? j != NULL : j == NULL, "json: %d deep %s", d,
		   d == 256 ? "reads" : "is too deep");
		sc_warc_json_free(j);
	}
}

static void test_http11(void)
{
	struct sc_buf b;

	sc_buf_init(&b, 1 << 20);
	sc_warc_head_as_http11("HTTP/2 404 \r\nserver: x\r\n\r\n", 26, &b);
	is_str(b.p, "HTTP/1.1 404 Not Found\r\nserver: x\r\n\r\n", "HTTP/2 head as HTTP/1.1");
	sc_buf_reset(&b);
	sc_warc_head_as_http11("HTTP/1.1 200 OK\r\nA: b\r\n\r\n", 25, &b);
	is_str(b.p, "HTTP/1.1 200 OK\r\nA: b\r\n\r\n", "HTTP/1.1 head kept");
	sc_buf_reset(&b);
	ok(sc_warc_dechunk("5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n", 30, &b) == 0 &&
	           b.len == 11 && memcmp(b.p, "hello world", 11) == 0,
	   "dechunk with an extension");
	sc_buf_reset(&b);
	ok(sc_warc_dechunk("5\r\nhel", 6, &b) != 0, "dechunk: cut short");
	sc_buf_free(&b);
}

static int count_problems(const struct sc_warc_rec *rec)
{
	return sc_warc_verify(rec, (void (*)(const char *, void *))(void (*)(void))NULL, NULL);
}

static void ignore(const char *message, void *ctx)
{
	printf("# %s\n", message);
	(*(int *)ctx)++;
}

/* Writes the samples, reads them back, and checks what came. */
static void test_round_trip(const char *dir)
{
	char path[4096], err[512];
	struct sc_warc_rec rec;
	struct sc_warc_problem problem;
	int records = 0, bad = 0, responses = 0;
	uint64_t last = 0;
	bool increasing = true;

	(void)count_problems;
	ok(write_samples(dir) == 0, "samples written");
	snprintf(path, sizeof(path), "%s/sample.warc.gz", dir);
	struct sc_warc_reader *r = sc_warc_reader_open(path, err, sizeof(err));
	ok(r != NULL, "reader opens the sample");
	enum sc_warc_next next;
	while (r && (next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END) {
		if (next == SC_WARC_PROBLEM) {
			printf("# %llu: %s\n", (unsigned long long)problem.offset, problem.message);
			bad++;
			continue;
		}
		if (records > 0 && rec.offset <= last)
			increasing = false;
		last = rec.offset;
		records++;
		sc_warc_verify(&rec, ignore, &bad);
		if (strcmp(sc_warc_get(&rec, "WARC-Type"), "response") == 0)
			responses++;
	}
	sc_warc_reader_close(r);
	is_int(records, 1 + 3 * 3 + 2 + 2 + 3 + 2, "every record read back");
	is_int(responses, 5, "five responses");
	is_int(bad, 0, "each verifies");
	ok(increasing, "offsets increase");
	snprintf(path, sizeof(path), "%s/sample.warc.gz.open", dir);
	struct stat st;
	ok(stat(path, &st) != 0, "no .open file left after close");
}

static void test_mend(const char *dir)
{
	char path[4096], open_path[4200], err[512];
	struct sc_warc_written a;
	struct stat st;

	snprintf(path, sizeof(path), "%s/mend.warc.gz", dir);
	struct sc_warc_writer_options o = { path, 1, 0, info, strlen(info), false };
	struct sc_warc_writer *w = sc_warc_writer_open(&o, err, sizeof(err));
	capture(w, "http://127.0.0.1/one", "HTTP/1.1 200 OK\r\n\r\n", "one", 3, &a);
	uint64_t whole = a.response.offset + a.response.length;
	/* Killed now: the file stays .open, cut inside its last member. */
	snprintf(open_path, sizeof(open_path), "%s.open", path);
	stat(open_path, &st);
	uint64_t size = (uint64_t)st.st_size;
	ok(truncate(open_path, (off_t)(size - 7)) == 0, "cut the .open file inside a member");
	uint64_t cut = 0;
	int64_t kept = sc_warc_mend(open_path, &cut, err, sizeof(err));
	ok(kept >= (int64_t)whole && kept < (int64_t)size, "mend keeps the whole members");
	is_int(cut, size - 7 - (uint64_t)kept, "mend says what it cut");
	sc_warc_writer_close(w, err, sizeof(err));
	/* A writer on the same path goes on after what is whole. */
	w = sc_warc_writer_open(&o, err, sizeof(err));
	ok(w != NULL, "reopened");
	capture(w, "http://127.0.0.1/two", "HTTP/1.1 200 OK\r\n\r\n", "two", 3, &a);
	ok(a.response.offset > whole, "appended after the old records");
	sc_warc_writer_close(w, err, sizeof(err));
	ok(stat(path, &st) == 0, "renamed on close");
}

static void test_rotation(const char *dir)
{
	char path[4096], err[512];
	struct sc_warc_written a;

	snprintf(path, sizeof(path), "%s/rot.warc.gz", dir);
	struct sc_warc_writer_options o = { path, 6, 1, info, strlen(info), false };
	struct sc_warc_writer *w = sc_warc_writer_open(&o, err, sizeof(err));
	const char *first = sc_strdup(sc_warc_writer_filename(w));
	ok(strncmp(first, "rot-", 4) == 0 && strstr(first, "-00000-") &&
	           strlen(first) > strlen("rot-20261201150000-00000-.warc.gz"),
	   "Annex C name: %s", first);
	capture(w, "http://127.0.0.1/one", "HTTP/1.1 200 OK\r\n\r\n", "one", 3, &a);
	capture(w, "http://127.0.0.1/two", "HTTP/1.1 200 OK\r\n\r\n", "two", 3, &a);
	ok(strstr(a.response.filename, "-00001-") != NULL, "the next file: %s",
	   a.response.filename);
	sc_warc_writer_close(w, err, sizeof(err));
	free((void *)first);
}

static void test_bad_input(void)
{
	static const char *const inputs[] = {
		"not a warc at all",
		"WARC/1.1\r\nContent-Length: 10\r\n\r\nabc",
		"WARC/1.1\r\nContent-Length: x\r\n\r\n",
		"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1\r\n\r\nabcdef\r\n\r\n",
		"\x1f\x8b\x08\x00garbage",
	};
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct sc_warc_reader *r = sc_warc_reader_mem(inputs[i], strlen(inputs[i]));
		struct sc_warc_rec rec;
		struct sc_warc_problem p;
		int problems = 0, n = 0;
		enum sc_warc_next next;
		while ((next = sc_warc_reader_next(r, &rec, &p)) != SC_WARC_END && n++ < 10)
			problems += next == SC_WARC_PROBLEM;
		sc_warc_reader_close(r);
		ok(problems > 0, "bad input %zu is a problem", i);
	}
}

/* A 304's revisit names the URI's latest record by time: an index kept
 * from a crawl before WARC-Date had milliseconds holds "...:05Z", which as
 * text sorts after this crawl's "...:05.900Z". */
static void test_dedupe_latest(const char *dir)
{
	char path[4096], err[512];
	struct sc_warc_original o;
	const char *uri = "http://127.0.0.1/page";

	snprintf(path, sizeof(path), "%s/dedupe.sqlite", dir);
	struct sc_warc_dedupe *d = sc_warc_dedupe_open(path, err, sizeof(err));
	ok(d != NULL, "dedupe index opens: %s", d ? "" : err);
	if (!d)
		return;
	ok(sc_warc_dedupe_add(d, "sha1:AAAA", "<urn:uuid:old>", uri, "2026-12-03T10:00:05Z", err,
	                      sizeof(err)) == 0 &&
	           sc_warc_dedupe_add(d, "sha1:BBBB", "<urn:uuid:new>", uri,
	                              "2026-12-03T10:00:05.900Z", err, sizeof(err)) == 0,
	   "two records of one URI learnt");
	ok(sc_warc_dedupe_find_uri(d, uri, &o) && strcmp(o.id, "<urn:uuid:new>") == 0,
	   "the latest by time, not by text: %s", o.id);
	ok(sc_warc_dedupe_add(d, "sha1:CCCC", "<urn:uuid:older>", uri, "2026-12-03T09:59:59.999Z",
	                      err, sizeof(err)) == 0 &&
	           sc_warc_dedupe_find_uri(d, uri, &o) && strcmp(o.id, "<urn:uuid:new>") == 0,
	   "a record learnt last but older does not win");
	ok(sc_warc_dedupe_find(d, "sha1:AAAA", &o) && strcmp(o.date, "2026-12-03T10:00:05Z") == 0,
	   "a digest gives its own record");
	sc_warc_dedupe_close(d);
}

/* The scratch folder and the files in it (no subfolders). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4200];

	// cppcheck-suppress readdirCalled ; one thread
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/sc-test-warc.XXXXXX";

	if (argc == 3 && strcmp(argv[1], "write") == 0)
		return write_samples(argv[2]) || write_series(argv[2]);
	if (!mkdtemp(dir))
		return 1;
	test_base32();
	test_surt();
	test_post_key();
	test_json_parse();
	test_http11();
	test_round_trip(dir);
	test_mend(dir);
	test_rotation(dir);
	test_bad_input();
	test_dedupe_latest(dir);
	remove_dir(dir);
	return tap_done();
}
