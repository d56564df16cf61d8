/* sniff: whether a body is HTML, by its content type and its first
 * bytes. */
#include "parse/body.h"
#include "parse/bytes.h"

#include <ctype.h>

/* The media type of content_type, lowercased, without parameters. */
static void media_type(const char *ct, char *out, size_t size)
{
	size_t n = 0;

	while (*ct == ' ' || *ct == '\t')
		ct++;
	while (*ct && *ct != ';' && *ct != ' ' && *ct != '\t' && n + 1 < size)
		out[n++] = (char)tolower((unsigned char)*ct++);
	out[n] = '\0';
}

/* Images, archives and PDFs are sometimes labelled text/html; their
 * signatures are unmistakable. */
static bool binary_signature(const unsigned char *s, size_t n)
{
	return parse_has_prefix(s, n, "\x89PNG\r\n\x1a\n", 8) ||
	       parse_has_prefix(s, n, "GIF8", 4) || parse_has_prefix(s, n, "\xff\xd8\xff", 3) ||
	       parse_has_prefix(s, n, "%PDF-", 5) || parse_has_prefix(s, n, "PK\x03\x04", 4) ||
	       parse_has_prefix(s, n, "\x1f\x8b", 2) ||
	       (parse_has_prefix(s, n, "RIFF", 4) && n >= 12 && memcmp(s + 8, "WEBP", 4) == 0) ||
	       parse_has_prefix(s, n, "\x00\x00\x01\x00", 4) || parse_has_prefix(s, n, "wOF", 3);
}

bool parse_looks_like_html(const char *content_type, const unsigned char *s, size_t n)
{
	char mt[128] = "";
	size_t i = 0;

	if (content_type)
		media_type(content_type, mt, sizeof(mt));
	while (i < n &&
	       (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f'))
		i++;
	if (i == n)
		return false; /* empty, or only whitespace */
	if (binary_signature(s, n))
		return false;
	if (mt[0])
		return strcmp(mt, "text/html") == 0 || strcmp(mt, "application/xhtml+xml") == 0;
	/* No content type: sniff as browsers do, by the first tag; skip a
	 * UTF-8 byte order mark. */
	if (parse_has_prefix(s + i, n - i, "\xef\xbb\xbf", 3))
		i += 3;
	return i < n && s[i] == '<';
}
