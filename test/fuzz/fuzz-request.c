/* libFuzzer target: a request's header path, from the options and from a
 * record, up to the header lines curl is given (lib/kit/opt through
 * sc-fetch's table, lib/engine/fetch_submit's checks and
 * fetch_request_headers; issue 26, a header smuggled in by a line
 * break).
 *
 * The input is an option's value, a 0x1e byte, and a record line (no 0x1e:
 * the whole input is the record).  The value is given to -A and to -H as
 * sc-fetch's command line would give it (up to a NUL, which argv cannot
 * hold); the record is read as sc-fetch reads one (jansson, \u0000
 * allowed).  The promise checked, with a byte loop of its own rather than
 * the rule under test:
 * - an -A or -H value that is taken holds no CR or LF;
 * - a url the engine takes holds no control character (CR, LF, NUL
 *   included);
 * - a request the engine takes has a method with no control character,
 *   headers whose names and values hold no NUL (which would cut the C
 *   string curl is given), and every header line built from it and from
 *   -H holds no CR or LF. */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/fetch.h"
#include "fuzz.h"
#include "kit/opt.h"

/* Whether n bytes hold none of CR and LF, nor, with controls, any other
 * control character (NUL and DEL included). */
static bool clean(const char *s, size_t n, bool controls)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\r' || c == '\n' || (controls && (c < 0x20 || c == 0x7f)))
			return false;
	}
	return true;
}

static const struct sc_opt *row_named(const char *name)
{
	for (const struct sc_opt *row = fetch_option_rows; row->name; row++)
		if (strcmp(row->name, name) == 0)
			return row;
	fuzz_fail("no row %s in sc-fetch's table", name);
}

/* The value as -A and -H: what is taken is clean. */
static void check_options(struct fetch_options *opts, const char *value)
{
	char err[600];

	if (sc_opt_store(row_named("user-agent"), opts, value, err, sizeof(err)) == 0 &&
	    !clean(opts->user_agent, strlen(opts->user_agent), false))
		fuzz_fail("-A took a value with a CR or LF");
	if (sc_opt_store(row_named("header"), opts, value, err, sizeof(err)) == 0) {
		for (const struct curl_slist *l = opts->headers; l; l = l->next)
			if (!clean(l->data, strlen(l->data), false))
				fuzz_fail("-H took a value with a CR or LF");
	}
}

/* The record's url and request: what is taken is clean, and so is every
 * header line built from it. */
static void check_record(const struct fetch_options *opts, const json_t *rec)
{
	const json_t *url = json_object_get(rec, "url");
	const json_t *req = json_object_get(rec, "request");

	if (json_is_string(url) &&
	    !fetch_url_problem(json_string_value(url), json_string_length(url)) &&
	    !clean(json_string_value(url), json_string_length(url), true))
		fuzz_fail("a url with a control character was taken");
	if (fetch_request_problem(req))
		return;
	const json_t *method = json_object_get(req, "method");
	if (json_is_string(method) &&
	    !clean(json_string_value(method), json_string_length(method), true))
		fuzz_fail("a method with a control character was taken");
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)json_object_get(req, "headers"), key, v)
	{
		if (json_string_length(v) != strlen(json_string_value(v)))
			fuzz_fail("a header value with a NUL was taken");
		if (!clean(key, strlen(key), true))
			fuzz_fail("a header name with a control character was taken");
	}
	struct curl_slist *lines = fetch_request_headers(opts->headers, req);
	for (const struct curl_slist *l = lines; l; l = l->next)
		if (!clean(l->data, strlen(l->data), false))
			fuzz_fail("a header line with a CR or LF was built: %s", l->data);
	curl_slist_free_all(lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, 0x1e, size);
	struct fetch_options opts;

	fetch_options_init(&opts);
	if (sep) {
		size_t n = (size_t)(sep - data);
		char *value = malloc(n + 1);
		memcpy(value, data, n);
		value[n] = '\0';
		check_options(&opts, value);
		free(value);
		size -= n + 1;
		data = sep + 1;
	}
	json_t *rec =
	        json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	if (json_is_object(rec))
		check_record(&opts, rec);
	json_decref(rec);
	fetch_options_free(&opts);
	return 0;
}
