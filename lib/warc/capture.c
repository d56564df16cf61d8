#include "warc/capture.h"

#include <string.h>

#include "warc/digest.h"
#include "warc/record.h"

/* The warcinfo that says how a record was made, named by every record
 * (WARC/1.1 5.8: a reader of one record alone finds the file's). */
static void warcinfo_field(struct sc_warc_head *h, const struct sc_warc_writer *w)
{
	sc_warc_head_add(h, "WARC-Warcinfo-ID", sc_warc_writer_info_id(w));
}

/* The fields every record of a capture carries after the first three. */
static void common_fields(struct sc_warc_head *h, const struct sc_warc_writer *w,
                          const struct sc_warc_capture *c)
{
	warcinfo_field(h, w);
	sc_warc_head_add(h, "WARC-Target-URI", c->url);
	if (c->ip && *c->ip)
		sc_warc_head_add(h, "WARC-IP-Address", c->ip);
	if (c->protocol && *c->protocol)
		sc_warc_head_add(h, "WARC-Protocol", c->protocol);
	if (c->tls && *c->tls)
		sc_warc_head_add(h, "WARC-Protocol", c->tls);
}

static int write_request(struct sc_warc_writer *w, const struct sc_warc_capture *c, const char *id,
                         const char *response_id, const char *date)
{
	char digest[SC_WARC_SHA1_LEN];
	struct sc_warc_head h;
	struct sc_warc_part block = { c->request, c->request_len };

	sc_warc_sha1(c->request, c->request_len, digest);
	sc_warc_head_begin(&h, "request", id, date);
	common_fields(&h, w, c);
	sc_warc_head_add(&h, "WARC-Concurrent-To", response_id);
	sc_warc_head_add(&h, "Content-Type", "application/http;msgtype=request");
	sc_warc_head_add(&h, "WARC-Block-Digest", digest);
	sc_warc_head_end(&h, c->request_len);
	int rc = sc_warc_writer_write(w, h.text.p, h.text.len, &block, 1, NULL);
	sc_warc_head_free(&h);
	return rc;
}

/* Both digests of a response in one pass over the payload: the block's is
 * the header and the body as received, the payload's the payload alone. */
static void response_digests(const struct sc_warc_capture *c, bool with_payload,
                             char block[SC_WARC_SHA1_LEN], char payload[SC_WARC_SHA1_LEN])
{
	struct sc_warc_sha1 hb, hp;

	sc_warc_sha1_begin(&hb);
	sc_warc_sha1_begin(&hp);
	sc_warc_sha1_add(&hb, c->response, c->response_len);
	if (with_payload && c->received)
		sc_warc_sha1_add(&hb, c->received, c->received_len);
	else if (with_payload)
		sc_warc_sha1_add(&hb, c->payload, c->payload_len);
	sc_warc_sha1_add(&hp, c->payload, c->payload_len);
	sc_warc_sha1_end(&hb, block);
	sc_warc_sha1_end(&hp, payload);
}

static int write_response(struct sc_warc_writer *w, const struct sc_warc_capture *c, const char *id,
                          const char *request_id, struct sc_warc_written *out)
{
	char block_digest[SC_WARC_SHA1_LEN];
	const struct sc_warc_revisit *rv = c->revisit;
	struct sc_warc_head h;
	struct sc_warc_part block[2] = { { c->response, c->response_len },
		                         { c->received ? c->received : c->payload,
		                           rv            ? 0
		                           : c->received ? c->received_len
		                                         : c->payload_len } };

	response_digests(c, !rv, block_digest, out->payload_digest);
	sc_warc_head_begin(&h, rv ? "revisit" : "response", id, out->date);
	common_fields(&h, w, c);
	sc_warc_head_add(&h, "WARC-Concurrent-To", request_id);
	sc_warc_head_add(&h, "Content-Type", "application/http;msgtype=response");
	sc_warc_head_add(&h, "WARC-Block-Digest", block_digest);
	/* A 304 has no payload to name; an identical payload is named by it. */
	if (!rv || strcmp(rv->profile, SC_WARC_PROFILE_IDENTICAL) == 0)
		sc_warc_head_add(&h, "WARC-Payload-Digest", out->payload_digest);
	if (rv) {
		sc_warc_head_add(&h, "WARC-Profile", rv->profile);
		if (rv->refers_to)
			sc_warc_head_add(&h, "WARC-Refers-To", rv->refers_to);
		if (rv->target_uri)
			sc_warc_head_add(&h, "WARC-Refers-To-Target-URI", rv->target_uri);
		if (rv->date)
			sc_warc_head_add(&h, "WARC-Refers-To-Date", rv->date);
	}
	if (c->truncated && !rv)
		sc_warc_head_add(&h, "WARC-Truncated",
		                 c->truncated_why ? c->truncated_why : "length");
	sc_warc_head_end(&h, c->response_len + block[1].len);
	int rc = sc_warc_writer_write(w, h.text.p, h.text.len, block, 2, &out->response);
	sc_warc_head_free(&h);
	return rc;
}

static int write_metadata(struct sc_warc_writer *w, const struct sc_warc_capture *c,
                          const char *response_id, const char *date)
{
	char id[SC_WARC_ID_LEN], digest[SC_WARC_SHA1_LEN];
	struct sc_warc_head h;
	struct sc_warc_part block = { c->metadata, c->metadata_len };

	sc_warc_record_id(id);
	sc_warc_sha1(c->metadata, c->metadata_len, digest);
	sc_warc_head_begin(&h, "metadata", id, date);
	warcinfo_field(&h, w);
	sc_warc_head_add(&h, "WARC-Target-URI", c->url);
	sc_warc_head_add(&h, "WARC-Concurrent-To", response_id);
	sc_warc_head_add(&h, "Content-Type", "application/warc-fields");
	sc_warc_head_add(&h, "WARC-Block-Digest", digest);
	sc_warc_head_end(&h, c->metadata_len);
	int rc = sc_warc_writer_write(w, h.text.p, h.text.len, &block, 1, NULL);
	sc_warc_head_free(&h);
	return rc;
}

int sc_warc_write_capture(struct sc_warc_writer *w, const struct sc_warc_capture *c,
                          struct sc_warc_written *out)
{
	char request_id[SC_WARC_ID_LEN];

	if (sc_warc_writer_rotate_if_full(w) != 0)
		return -1;
	sc_warc_record_id(request_id);
	sc_warc_record_id(out->id);
	sc_warc_date(c->date_ms, out->date);
	if (write_request(w, c, request_id, out->id, out->date) != 0 ||
	    write_response(w, c, out->id, request_id, out) != 0)
		return -1;
	if (c->metadata && write_metadata(w, c, out->id, out->date) != 0)
		return -1;
	return 0;
}
