#include "warc/record.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/util.h"

void sc_warc_record_id(char out[SC_WARC_ID_LEN])
{
	unsigned char r[16];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
		if (n > 0)
			got += (size_t)n;
		else /* no entropy source at all: a clock-seeded fallback */
			for (; got < sizeof(r); got++)
				r[got] = (unsigned char)(sc_wall_ms() >> (got % 8) ^
				                         (int64_t)got * 131);
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	snprintf(out, SC_WARC_ID_LEN,
	         "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x>",
	         r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
	         r[13], r[14], r[15]);
}

void sc_warc_date(int64_t wall_ms, char out[SC_WARC_DATE_LEN])
{
	int64_t ms = wall_ms % 1000;
	if (ms < 0) /* before 1970: the second below, and what is left of it */
		ms += 1000;
	time_t t = (time_t)((wall_ms - ms) / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	if (strftime(out, SC_WARC_DATE_LEN, "%Y-%m-%dT%H:%M:%S", &tm) != 19) {
		out[0] = '\0'; /* a year past 9999 */
		return;
	}
	out[19] = '.';
	out[20] = (char)('0' + ms / 100);
	out[21] = (char)('0' + ms / 10 % 10);
	out[22] = (char)('0' + ms % 10);
	out[23] = 'Z';
	out[24] = '\0';
}

/* The header text has no maximum: a URL is as long as it is. */
void sc_warc_head_begin(struct sc_warc_head *h, const char *type, const char *id, const char *date)
{
	sc_buf_init(&h->text, (size_t)-1 / 2);
	sc_buf_adds(&h->text, "WARC/1.1\r\n");
	sc_warc_head_add(h, "WARC-Type", type);
	sc_warc_head_add(h, "WARC-Record-ID", id);
	sc_warc_head_add(h, "WARC-Date", date);
}

void sc_warc_field_add(struct sc_buf *b, const char *name, const char *value)
{
	sc_buf_adds(b, name);
	sc_buf_add(b, ": ", 2);
	for (const char *s = value; *s; s++)
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			sc_buf_addc(b, *s);
	sc_buf_add(b, "\r\n", 2);
}

void sc_warc_head_add(struct sc_warc_head *h, const char *name, const char *value)
{
	sc_warc_field_add(&h->text, name, value);
}

void sc_warc_head_end(struct sc_warc_head *h, uint64_t content_length)
{
	sc_buf_printf(&h->text, "Content-Length: %llu\r\n\r\n", (unsigned long long)content_length);
}

void sc_warc_head_free(struct sc_warc_head *h)
{
	sc_buf_free(&h->text);
}

const char *sc_warc_reason_phrase(int status)
{
	static const struct {
		int status;
		const char *phrase;
	} phrases[] = {
		{ 100, "Continue" },
		{ 101, "Switching Protocols" },
		{ 200, "OK" },
		{ 201, "Created" },
		{ 202, "Accepted" },
		{ 203, "Non-Authoritative Information" },
		{ 204, "No Content" },
		{ 205, "Reset Content" },
		{ 206, "Partial Content" },
		{ 300, "Multiple Choices" },
		{ 301, "Moved Permanently" },
		{ 302, "Found" },
		{ 303, "See Other" },
		{ 304, "Not Modified" },
		{ 307, "Temporary Redirect" },
		{ 308, "Permanent Redirect" },
		{ 400, "Bad Request" },
		{ 401, "Unauthorized" },
		{ 403, "Forbidden" },
		{ 404, "Not Found" },
		{ 405, "Method Not Allowed" },
		{ 406, "Not Acceptable" },
		{ 408, "Request Timeout" },
		{ 409, "Conflict" },
		{ 410, "Gone" },
		{ 411, "Length Required" },
		{ 412, "Precondition Failed" },
		{ 413, "Content Too Large" },
		{ 414, "URI Too Long" },
		{ 415, "Unsupported Media Type" },
		{ 416, "Range Not Satisfiable" },
		{ 421, "Misdirected Request" },
		{ 422, "Unprocessable Content" },
		{ 429, "Too Many Requests" },
		{ 451, "Unavailable For Legal Reasons" },
		{ 500, "Internal Server Error" },
		{ 501, "Not Implemented" },
		{ 502, "Bad Gateway" },
		{ 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" },
		{ 505, "HTTP Version Not Supported" },
	};

	for (size_t i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++)
		if (phrases[i].status == status)
			return phrases[i].phrase;
	return "";
}

/* The status line's code, if it is "HTTP/2 NNN" or "HTTP/3 NNN"; else 0. */
static int http2_status(const char *line, size_t len)
{
	if (len < 10 || memcmp(line, "HTTP/", 5) != 0 || (line[5] != '2' && line[5] != '3') ||
	    line[6] != ' ')
		return 0;
	int code = 0;
	for (size_t i = 7; i < 10; i++) {
		if (line[i] < '0' || line[i] > '9')
			return 0;
		code = code * 10 + (line[i] - '0');
	}
	return code;
}

void sc_warc_head_as_http11(const char *head, size_t len, struct sc_buf *out)
{
	const char *nl = memchr(head, '\n', len);
	size_t first = nl ? (size_t)(nl - head) + 1 : len;
	int code = http2_status(head, first);

	if (code) {
		const char *phrase = sc_warc_reason_phrase(code);
		sc_buf_printf(out, "HTTP/1.1 %d%s%s\r\n", code, *phrase ? " " : "", phrase);
		head += first;
		len -= first;
	}
	/* The fields as they came, then exactly one blank line. */
	while (len > 0 && (head[len - 1] == '\n' || head[len - 1] == '\r'))
		len--;
	sc_buf_add(out, head, len);
	sc_buf_adds(out, len > 0 ? "\r\n\r\n" : "\r\n");
}
