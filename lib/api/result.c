/* result: sc.h's result accessors (sc_result_*): a finished record's
 * line, as sc-fetch writes it, and its members, read from the line when
 * an accessor first needs them (a caller that wants only the line pays
 * for no parse). */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/base64.h"
#include "core/util.h"
#include "record/jsonscan.h"
#include "record/record.h"

void sc_result_init(struct sc_result *r, const char *line, size_t len, void *user)
{
	memset(r, 0, sizeof(*r));
	r->line = line;
	r->len = len;
	r->user = user;
}

void sc_result_clear(struct sc_result *r)
{
	json_decref(r->rec);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* The record, parsed on first use (the result is the callback's alone:
 * its cache may change under a const pointer). */
static json_t *record(const sc_result *cr)
{
	struct sc_result *r = (struct sc_result *)cr;

	if (!r->rec) {
		/* jansson's own loader is slow on the body (a third of a ms for
		 * 14 KB): jsonscan builds the same values, or declines. */
		struct sc_jsonscan js = { 0 };

		r->rec = sc_jsonscan_object(&js, r->line, r->len, JSON_ALLOW_NUL);
		sc_jsonscan_free(&js);
		if (!r->rec)
			r->rec = json_loadb(r->line, r->len, JSON_ALLOW_NUL, NULL);
		if (!r->rec)
			r->rec = json_object(); /* the engine writes only records */
	}
	return r->rec;
}

static const char *member_string(const sc_result *r, const char *key)
{
	return r ? json_string_value(json_object_get(record(r), key)) : NULL;
}

const char *sc_result_json(const sc_result *r, size_t *len)
{
	if (len)
		*len = r ? r->len : 0;
	return r ? r->line : NULL;
}

void *sc_result_user(const sc_result *r)
{
	return r ? r->user : NULL;
}

long sc_result_status(const sc_result *r)
{
	return r ? (long)json_integer_value(json_object_get(record(r), "status")) : 0;
}

const char *sc_result_url(const sc_result *r)
{
	return member_string(r, "url");
}

const char *sc_result_final_url(const sc_result *r)
{
	return member_string(r, "final_url");
}

const char *sc_result_content_type(const sc_result *r)
{
	return member_string(r, "content_type");
}

const char *sc_result_error_name(const sc_result *r)
{
	return r ? json_string_value(json_object_get(json_object_get(record(r), "error"), "kind"))
	         : NULL;
}

const char *sc_result_error_message(const sc_result *r)
{
	return r ? json_string_value(
	                   json_object_get(json_object_get(record(r), "error"), "message"))
	         : NULL;
}

enum sc_outcome sc_result_outcome(const sc_result *r)
{
	/* By name, so that the public numbers never depend on the internal
	 * enum's order. */
	static const char *const names[] = {
		[SC_OUTCOME_HTTP] = "http",
		[SC_OUTCOME_TIMEOUT] = "timeout",
		[SC_OUTCOME_DNS] = "dns",
		[SC_OUTCOME_CONNECT] = "connect",
		[SC_OUTCOME_TLS] = "tls",
		[SC_OUTCOME_TOO_MANY_REDIRECTS] = "too_many_redirects",
		[SC_OUTCOME_TOO_LARGE] = "too_large",
		[SC_OUTCOME_NETWORK] = "network",
		[SC_OUTCOME_BLOCKED_SCHEME] = "blocked_scheme",
		[SC_OUTCOME_BAD_INPUT] = "bad_input",
		[SC_OUTCOME_CANCELLED] = "cancelled",
		[SC_OUTCOME_RATE_LIMITED] = "rate_limited",
		[SC_OUTCOME_VALIDATION] = "validation",
		[SC_OUTCOME_ROBOTS] = "robots",
		[SC_OUTCOME_INTERNAL] = "internal",
	};
	const char *kind = sc_result_error_name(r);

	if (!kind)
		return SC_OUTCOME_OK;
	for (size_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i] && strcmp(names[i], kind) == 0)
			return (enum sc_outcome)i;
	return SC_OUTCOME_OTHER;
}

const char *sc_result_body(const sc_result *cr, size_t *len)
{
	struct sc_result *r = (struct sc_result *)cr;
	const json_t *body, *b64;

	if (len)
		*len = 0;
	if (!r)
		return NULL;
	body = json_object_get(record(r), "body");
	if (json_is_string(body)) {
		if (len)
			*len = json_string_length(body);
		return json_string_value(body);
	}
	b64 = json_object_get(r->rec, "body_base64");
	if (!json_is_string(b64))
		return NULL;
	if (!r->body_decoded) {
		r->body = (char *)sc_base64_decode(json_string_value(b64), json_string_length(b64),
		                                   &r->body_len);
		r->body_decoded = true;
	}
	if (len && r->body)
		*len = r->body_len;
	return r->body;
}

double sc_result_elapsed_ms(const sc_result *r)
{
	const json_t *v = r ? json_object_get(record(r), "elapsed_ms") : NULL;

	return json_is_number(v) ? json_number_value(v) : -1;
}

int sc_result_attempts(const sc_result *r)
{
	return r ? (int)json_integer_value(json_object_get(record(r), "attempts")) : 0;
}
