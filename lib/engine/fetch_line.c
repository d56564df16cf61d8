/* fetch_line: sc-fetch's input rule for one line, which libsc's fetcher
 * applies to each submit and to each line of sc_fetcher_run_fd (the input
 * of sc-fetch, a client of that API), so that both make the same record
 * of the same line: a URL list's line (lib/record/input's rule, as sc-frontier
 * --seeds reads one: a URL, trimmed; '#' lines are no record), or a
 * record with a "url" and a "request" that can be sent; a malformed line
 * becomes a bad_input record, with the reason for a warning. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"
#include "engine/fetch.h"
#include "record/input.h"
#include "record/record.h"

/* Whether s begins with "scheme://" (RFC 3986: a letter, then letters,
 * digits, '+', '-' and '.'). */
static bool has_scheme(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || !isalpha((unsigned char)s[0]))
		return false;
	while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
		i++;
	return n - i >= 3 && memcmp(s + i, "://", 3) == 0;
}

/* A bad_input record of line, with why, in place of its item. */
static int submit_bad(struct fetch_engine *e, json_t *bad, const char *problem, char *why,
                      size_t whylen)
{
	snprintf(why, whylen, "%s", problem);
	fetch_submit_final(e, bad, true);
	return 1;
}

/* A JSON object (or something malformed) of the input: the shared record
 * rules, and a non-empty string "url" and a request member that can be
 * sent. */
static int submit_record_line(struct fetch_engine *e, const struct sc_line *line, size_t line_max,
                              char *why, size_t whylen)
{
	struct sc_input_item item;

	sc_input_item_make(line, line_max, NULL, &item);
	if (item.bad)
		return submit_bad(e, item.rec, item.why, why, whylen);
	const char *problem = NULL;
	const char *url = json_string_value(json_object_get(item.rec, "url"));
	if (!url)
		problem = "no string member \"url\"";
	else if (!*url)
		problem = "\"url\" is empty";
	else
		problem = fetch_request_problem(json_object_get(item.rec, "request"));
	if (problem) {
		json_t *bad = sc_record_bad_input(line->number, line->text, line->len, problem);
		json_object_set(bad, "url", url ? json_object_get(item.rec, "url") : json_null());
		json_decref(item.rec);
		return submit_bad(e, bad, problem, why, whylen);
	}
	return fetch_submit_input(e, item.rec, line, why, whylen) ? 0 : 1;
}

int fetch_submit_line(struct fetch_engine *e, const struct sc_line *line, size_t line_max,
                      char *why, size_t whylen)
{
	const char *s;
	size_t n;

	enum sc_url_line kind = sc_input_url_line(line, &s, &n);
	if (kind == SC_URL_LINE_SKIP)
		return -1;
	if (kind == SC_URL_LINE_RECORD)
		return submit_record_line(e, line, line_max, why, whylen);
	/* A space or a non-ASCII character is a URL as people paste it (the
	 * engine requests it percent-encoded: lib/url.h, sc_url_from_pasted)
	 * when the line begins with a scheme; words with spaces are no URL,
	 * and neither is a NUL byte or a tab. */
	if (kind == SC_URL_LINE_NUL || memchr(s, '\t', n) ||
	    !sc_utf8_valid((const unsigned char *)s, n) || (memchr(s, ' ', n) && !has_scheme(s, n)))
		return submit_bad(
		        e, sc_record_bad_input(line->number, line->text, line->len, "not a URL"),
		        "not a URL", why, whylen);
	json_t *rec = json_object();
	json_object_set_new(rec, "url", json_stringn(s, n));
	return fetch_submit_input(e, rec, line, why, whylen) ? 0 : 1;
}
