#include "warc/verify.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "warc/capture.h"
#include "warc/digest.h"
#include "warc/http.h"

bool sc_warc_date_valid(const char *v)
{
	static const char form[] = "dddd-dd-ddTdd:dd:dd";
	size_t i = 0;

	for (; form[i]; i++)
		if (form[i] == 'd' ? !isdigit((unsigned char)v[i]) : v[i] != form[i])
			return false;
	if (v[i] == '.') {
		size_t digits = 0;
		for (i++; isdigit((unsigned char)v[i]); i++)
			digits++;
		if (digits == 0 || digits > 9)
			return false;
	}
	return v[i] == 'Z' && v[i + 1] == '\0';
}

struct verify {
	void (*report)(const char *message, void *ctx);
	void *ctx;
	int problems;
};

static void say(struct verify *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct verify *v, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	v->report(msg, v->ctx);
	v->problems++;
}

static bool is_http(const struct sc_warc_rec *rec)
{
	const char *type = sc_warc_get(rec, "Content-Type");

	return type && strncasecmp(type, "application/http", 16) == 0;
}

static void check_fields(const struct sc_warc_rec *rec, struct verify *v)
{
	static const char *const required[] = { "WARC-Record-ID", "WARC-Type", "WARC-Date" };
	bool v11 = strcmp(rec->version, "WARC/1.1") == 0;

	if (!v11 && strcmp(rec->version, "WARC/1.0") != 0)
		say(v, "unknown version '%.20s'", rec->version);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!sc_warc_get(rec, required[i]))
			say(v, "no %s", required[i]);
	const char *date = sc_warc_get(rec, "WARC-Date");
	if (date && !sc_warc_date_valid(date))
		say(v, "WARC-Date '%.40s' is not a WARC date", date);
	const char *uri = sc_warc_get(rec, "WARC-Target-URI");
	if (uri && v11 && uri[0] == '<')
		say(v,
		    "WARC-Target-URI in angle brackets (WARC/1.0's grammar error; 1.1 has none)");
	const char *type = sc_warc_get(rec, "WARC-Type");
	if (type && !uri &&
	    (strcmp(type, "response") == 0 || strcmp(type, "request") == 0 ||
	     strcmp(type, "revisit") == 0 || strcmp(type, "resource") == 0))
		say(v, "no WARC-Target-URI in a %s record", type);
}

static void check_block(const struct sc_warc_rec *rec, struct verify *v)
{
	const char *digest = sc_warc_get(rec, "WARC-Block-Digest");

	if (digest && sc_warc_digest_check(digest, rec->block, (size_t)rec->content_length, "",
	                                   0) == SC_WARC_DIGEST_MISMATCH) {
		char ours[SC_WARC_SHA1_LEN];
		sc_warc_sha1(rec->block, (size_t)rec->content_length, ours);
		say(v, "WARC-Block-Digest %.60s does not match the block (%s)", digest, ours);
	}
}

/* The payload digest of an HTTP record: over the entity body, the chunked
 * coding removed. */
static void check_payload(const struct sc_warc_rec *rec, struct verify *v)
{
	const char *digest = sc_warc_get(rec, "WARC-Payload-Digest");
	const char *type = sc_warc_get(rec, "WARC-Type");
	struct sc_warc_http msg;

	if (!digest || !is_http(rec) || !type)
		return;
	bool whole = sc_warc_http_split(rec->block, (size_t)rec->content_length, &msg);
	/* A revisit names the original's payload, which it does not hold. */
	if (strcmp(type, "revisit") == 0 || !whole)
		return;
	bool chunked = sc_warc_http_has_token(&msg, "Transfer-Encoding", "chunked");
	enum sc_warc_digest_check raw =
	        sc_warc_digest_check(digest, msg.payload, msg.payload_len, "", 0);
	/* The digest said to be ours is over what was compared with it: the
	 * chunked coding removed when there is one (a user pastes it as the
	 * fix). */
	struct sc_buf body;
	sc_buf_init(&body, (size_t)-1 / 2);
	const char *compared = msg.payload;
	size_t compared_len = msg.payload_len;
	if (chunked) {
		int framing = sc_warc_dechunk(msg.payload, msg.payload_len, &body);
		enum sc_warc_digest_check dec =
		        sc_warc_digest_check(digest, body.p ? body.p : "", body.len, "", 0);
		bool differs = body.len != msg.payload_len;
		compared = body.p ? body.p : "";
		compared_len = body.len;
		/* A body cut short (WARC-Truncated) has the digest of what
		 * came of its chunks' data. */
		if (dec != SC_WARC_DIGEST_MISMATCH)
			goto done;
		if (framing == 0 && raw == SC_WARC_DIGEST_MATCH && differs) {
			say(v, "WARC-Payload-Digest is over the chunked bytes, not the payload "
			       "(wget's known error)");
			goto done;
		}
		if (raw != SC_WARC_DIGEST_MISMATCH)
			goto done; /* broken chunking, but the digest is of what is there */
	} else if (raw != SC_WARC_DIGEST_MISMATCH) {
		goto done;
	}
	char ours[SC_WARC_SHA1_LEN];
	sc_warc_sha1(compared, compared_len, ours);
	say(v, "WARC-Payload-Digest %.60s does not match the payload (%s)", digest, ours);
done:
	sc_buf_free(&body);
}

static void check_revisit(const struct sc_warc_rec *rec, struct verify *v)
{
	const char *type = sc_warc_get(rec, "WARC-Type");

	if (!type || strcmp(type, "revisit") != 0)
		return;
	const char *profile = sc_warc_get(rec, "WARC-Profile");
	if (!profile) {
		say(v, "revisit without WARC-Profile");
		return;
	}
	bool identical = strstr(profile, "/revisit/identical-payload-digest") != NULL;
	bool not_modified = strstr(profile, "/revisit/server-not-modified") != NULL;
	if (!identical && !not_modified)
		return; /* a profile of its own: nothing known to check */
	if (identical && !sc_warc_get(rec, "WARC-Payload-Digest"))
		say(v, "identical-payload-digest revisit without WARC-Payload-Digest");
	if (identical && strcmp(rec->version, "WARC/1.1") == 0) {
		if (!sc_warc_get(rec, "WARC-Refers-To-Target-URI"))
			say(v,
			    "identical-payload-digest revisit without WARC-Refers-To-Target-URI");
		if (!sc_warc_get(rec, "WARC-Refers-To-Date"))
			say(v, "identical-payload-digest revisit without WARC-Refers-To-Date");
	}
	const char *date = sc_warc_get(rec, "WARC-Refers-To-Date");
	if (date && !sc_warc_date_valid(date))
		say(v, "WARC-Refers-To-Date '%.40s' is not a WARC date", date);
}

int sc_warc_verify(const struct sc_warc_rec *rec, void (*report)(const char *message, void *ctx),
                   void *ctx)
{
	struct verify v = { report, ctx, 0 };

	check_fields(rec, &v);
	check_block(rec, &v);
	check_payload(rec, &v);
	check_revisit(rec, &v);
	return v.problems;
}
