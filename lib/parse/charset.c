/* charset: the encoding of a page's bytes as fetched (body_base64), by
 * the rule in body.h, and the names libxml2 knows the labels by. */
#include "parse/body.h"
#include "parse/bytes.h"

#include <ctype.h>
#include <libxml/encoding.h>
#include <stdio.h>
#include <strings.h>

#include "core/utf8.h"

/* How far to look for a <meta> charset declaration. */
#define META_PRESCAN_BYTES 4096

/* The value of the charset parameter in s (a content type, or the inside
 * of a meta tag), or "" if none. */
static void find_charset(const char *s, size_t n, char *out, size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; i + 7 <= n; i++) {
		if (strncasecmp(s + i, "charset", 7) != 0)
			continue;
		size_t j = i + 7, k = 0;
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j >= n || s[j] != '=')
			continue;
		j++;
		while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '"' || s[j] == '\''))
			j++;
		while (j < n && k + 1 < size &&
		       (isalnum((unsigned char)s[j]) || strchr("-_.:", s[j])))
			out[k++] = s[j++];
		out[k] = '\0';
		if (k > 0)
			return;
	}
}

/* The charset of the first <meta> that declares one. */
static void meta_charset(const unsigned char *s, size_t n, char *out, size_t size)
{
	const char *p = (const char *)s;
	size_t limit = n < META_PRESCAN_BYTES ? n : META_PRESCAN_BYTES;

	out[0] = '\0';
	for (size_t i = 0; i + 5 < limit; i++) {
		if (p[i] != '<' || strncasecmp(p + i + 1, "meta", 4) != 0)
			continue;
		const char *end = memchr(p + i, '>', n - i);
		size_t taglen = end ? (size_t)(end - (p + i)) : n - i;
		find_charset(p + i, taglen, out, size);
		if (out[0])
			return;
	}
}

/* The iconv/libxml2 name for a charset label, or NULL if libxml2 cannot
 * decode it.  Labels are mapped as the WHATWG Encoding standard does for
 * the common cases: latin1 means windows-1252, Shift_JIS means CP932. */
static const char *encoding_for_label(const char *label)
{
	static const struct {
		const char *label, *name;
	} aliases[] = {
		{ "iso-8859-1", "WINDOWS-1252" },
		{ "iso8859-1", "WINDOWS-1252" },
		{ "latin1", "WINDOWS-1252" },
		{ "l1", "WINDOWS-1252" },
		{ "us-ascii", "WINDOWS-1252" },
		{ "ascii", "WINDOWS-1252" },
		{ "shift_jis", "CP932" },
		{ "shift-jis", "CP932" },
		{ "sjis", "CP932" },
		{ "x-sjis", "CP932" },
		{ "ms_kanji", "CP932" },
		{ "windows-31j", "CP932" },
		{ "gb2312", "GBK" },
		{ "x-gbk", "GBK" },
		{ "utf8", "UTF-8" },
		{ "unicode-1-1-utf-8", "UTF-8" },
	};
	static _Thread_local char name[64];
	xmlCharEncodingHandlerPtr handler;

	if (!label[0])
		return NULL;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(label, aliases[i].label) == 0)
			return aliases[i].name;
	if (strcasecmp(label, "utf-8") == 0)
		return "UTF-8";
	snprintf(name, sizeof(name), "%s", label);
	handler = xmlFindCharEncodingHandler(name);
	if (!handler)
		return NULL;
	xmlCharEncCloseFunc(handler); /* frees iconv-based handlers */
	return name;
}

const char *parse_choose_encoding(const char *content_type, const unsigned char *s, size_t n,
                                  size_t *skip)
{
	char label[64];
	const char *enc;

	*skip = 0;
	if (parse_has_prefix(s, n, "\xef\xbb\xbf", 3)) {
		*skip = 3;
		return "UTF-8";
	}
	if (parse_has_prefix(s, n, "\xff\xfe", 2))
		return "UTF-16LE";
	if (parse_has_prefix(s, n, "\xfe\xff", 2))
		return "UTF-16BE";
	if (content_type) {
		find_charset(content_type, strlen(content_type), label, sizeof(label));
		if ((enc = encoding_for_label(label)))
			return enc;
	}
	meta_charset(s, n, label, sizeof(label));
	/* A page that could declare itself in ASCII is not UTF-16. */
	if (strncasecmp(label, "utf-16", 6) == 0)
		return "UTF-8";
	if ((enc = encoding_for_label(label)))
		return enc;
	return sc_utf8_valid(s, n) ? "UTF-8" : "WINDOWS-1252";
}
