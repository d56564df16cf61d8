#include "record/record.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "core/signals.h"
#include "core/utf8.h"
#include "core/util.h"

static const char *const kind_names[SC_ERR_KIND_COUNT] = {
	[SC_ERR_BAD_INPUT] = "bad_input",
	[SC_ERR_DNS] = "dns",
	[SC_ERR_CONNECT] = "connect",
	[SC_ERR_TLS] = "tls",
	[SC_ERR_TIMEOUT] = "timeout",
	[SC_ERR_NETWORK] = "network",
	[SC_ERR_HTTP] = "http",
	[SC_ERR_TOO_LARGE] = "too_large",
	[SC_ERR_TOO_MANY_REDIRECTS] = "too_many_redirects",
	[SC_ERR_BLOCKED_SCHEME] = "blocked_scheme",
	[SC_ERR_RATE_LIMITED] = "rate_limited",
	[SC_ERR_CANCELLED] = "cancelled",
	[SC_ERR_VALIDATION] = "validation",
	[SC_ERR_ROBOTS] = "robots",
	[SC_ERR_INTERNAL] = "internal",
	[SC_ERR_DEFERRED] = "deferred",
	[SC_ERR_RENDER] = "render",
	[SC_ERR_SESSION_LOST] = "session_lost",
};

const char *sc_error_kind_name(enum sc_error_kind kind)
{
	if ((int)kind < 0 || kind >= SC_ERR_KIND_COUNT)
		return "internal";
	return kind_names[kind];
}

int sc_error_kind_from_name(const char *name)
{
	for (int k = 0; k < SC_ERR_KIND_COUNT; k++)
		if (strcmp(kind_names[k], name) == 0)
			return k;
	return -1;
}

json_t *sc_record_parse(const char *text, size_t len, struct sc_jsonscan *fast, json_error_t *err)
{
	json_t *rec;

	/* jsonscan declines anything unusual, and jansson then judges it. */
	if (fast && (rec = sc_jsonscan_object(fast, text, len, JSON_ALLOW_NUL)))
		return rec;
	rec = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, err);

	if (!rec) {
		/* Prefix jansson's reason, cutting its tail if need be. */
		static const char prefix[] = "not valid JSON: ";
		size_t room = sizeof(err->text) - sizeof(prefix);
		size_t n = strnlen(err->text, room);
		memmove(err->text + sizeof(prefix) - 1, err->text, n);
		memcpy(err->text, prefix, sizeof(prefix) - 1);
		err->text[sizeof(prefix) - 1 + n] = '\0';
		return NULL;
	}
	if (!json_is_object(rec)) {
		json_decref(rec);
		snprintf(err->text, sizeof(err->text), "not a JSON object");
		return NULL;
	}
	return rec;
}

json_t *sc_json_string_lossy(const char *bytes, size_t len)
{
	json_t *str = json_stringn(bytes, len);
	const unsigned char *s = (const unsigned char *)bytes;
	char *out, *o;

	if (str)
		return str;
	/* Invalid UTF-8 (or an embedded NUL jansson refuses): rebuild it with
	 * each bad byte replaced by U+FFFD (3 bytes). */
	o = out = malloc(len * 3 + 1);
	if (!out)
		return json_null();
	for (size_t i = 0; i < len;) {
		size_t n = sc_utf8_seq_len(s + i, len - i);
		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(o, s + i, n);
			o += n;
			i += n;
		}
	}
	str = json_stringn(out, (size_t)(o - out));
	free(out);
	return str ? str : json_string("");
}

json_t *sc_record_bad_input(size_t lineno, const char *raw, size_t rawlen, const char *message)
{
	json_t *rec = json_object();
	size_t keep = rawlen < SC_RAW_MAX ? rawlen : SC_RAW_MAX;

	/* Do not cut a UTF-8 sequence in two. */
	while (keep > 0 && keep < rawlen && ((unsigned char)raw[keep] & 0xc0) == 0x80)
		keep--;
	json_object_set_new(rec, "url", json_null());
	json_object_set_new(rec, "ok", json_false());
	json_object_set_new(rec, "status", json_null());
	/* The message may quote the line (jansson's "near '...'" can end in
	 * the middle of a UTF-8 sequence): made valid, never dropped. */
	json_object_set_new(rec, "error",
	                    json_pack("{s:s, s:o}", "kind", "bad_input", "message",
	                              sc_json_string_lossy(message, strlen(message))));
	json_object_set_new(rec, "line", json_integer((json_int_t)lineno));
	json_object_set_new(rec, "raw", sc_json_string_lossy(raw, keep));
	return rec;
}

void sc_record_set_error(json_t *rec, enum sc_error_kind kind, const char *message)
{
	json_object_set_new(rec, "ok", json_false());
	json_object_set_new(rec, "error",
	                    json_pack("{s:s, s:o}", "kind", sc_error_kind_name(kind), "message",
	                              sc_json_string_lossy(message ? message : "",
	                                                   message ? strlen(message) : 0)));
}

bool sc_record_ok(const json_t *rec)
{
	return json_is_true(json_object_get(rec, "ok"));
}

bool sc_record_failed(const json_t *rec)
{
	return json_is_false(json_object_get(rec, "ok"));
}

static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

/* jansson's hash seed, from /dev/urandom: set in one call, not raced for
 * by the first objects of two threads (jansson's json_object_seed). */
static void seed(void)
{
	json_object_seed(0);
}

void sc_record_setup(void)
{
	pthread_once(&seed_once, seed);
}

static int write_and_flush(FILE *out, const char *text, size_t len)
{
	int rc = 0;

	sc_signals_write_begin();
	if (fwrite(text, 1, len, out) != len || putc('\n', out) == EOF || fflush(out) != 0)
		rc = -1;
	sc_signals_write_end();
	return rc;
}

int sc_record_write(FILE *out, const json_t *rec)
{
	char *text = json_dumps(rec, SC_JSON_FLAGS);
	int rc;

	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	rc = write_and_flush(out, text, strlen(text));
	free(text);
	return rc;
}

int sc_record_write_raw(FILE *out, const char *text, size_t len)
{
	return write_and_flush(out, text, len);
}

json_t *sc_json_base64(const void *bytes, size_t len)
{
	char *text = sc_malloc(SC_BASE64_LEN(len) + 1);
	json_t *str = json_stringn_nocheck(text, sc_base64_encode(bytes, len, text));

	if (!str)
		sc_die(1, "out of memory");
	free(text);
	return str;
}
