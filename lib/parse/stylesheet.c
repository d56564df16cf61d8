/* stylesheet: the references of CSS text (requisites.h): url(...), the
 * strings of @import and of image-set(), read as CSS Syntax tokenises
 * them, closely enough that a comment, a string or an identifier ending in
 * "url" is never taken for one. */
#include "parse/requisites.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "core/buf.h"

static bool is_name_char(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '_' || c >= 0x80;
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* The word at s[i..n) is w (ASCII, without case), not followed by a name
 * character. */
static bool word_at(const char *s, size_t n, size_t i, const char *w, bool then_paren)
{
	size_t k = strlen(w);

	if (i + k > n || strncasecmp(s + i, w, k) != 0)
		return false;
	if (then_paren)
		return i + k < n && s[i + k] == '(';
	return i + k == n || !is_name_char((unsigned char)s[i + k]);
}

/* One escape at s[*i] (after its backslash): a hex code point (up to six
 * digits and one white space after), else the character itself; appended
 * to b as UTF-8. */
static void add_escape(struct sc_buf *b, const char *s, size_t n, size_t *i)
{
	unsigned long cp = 0;
	size_t k = 0;

	while (*i < n && k < 6 && isxdigit((unsigned char)s[*i])) {
		char c = (char)tolower((unsigned char)s[(*i)++]);
		cp = cp * 16 + (unsigned long)(c <= '9' ? c - '0' : c - 'a' + 10);
		k++;
	}
	if (k == 0) {
		if (*i < n && s[*i] != '\n')
			sc_buf_addc(b, s[*i]);
		if (*i < n)
			(*i)++;
		return;
	}
	if (*i < n && is_space((unsigned char)s[*i]))
		(*i)++;
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	char u[4];
	size_t m;
	if (cp < 0x80) {
		u[0] = (char)cp, m = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f)), m = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f)), m = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), m = 4;
	}
	sc_buf_add(b, u, m);
}

/* The string whose quote is at s[*i], its escapes decoded, into b; *i
 * past its end (an unclosed string ends at a newline, as CSS says). */
static void read_string(struct sc_buf *b, const char *s, size_t n, size_t *i)
{
	char q = s[(*i)++];

	sc_buf_reset(b);
	while (*i < n && s[*i] != q && s[*i] != '\n') {
		if (s[*i] == '\\') {
			(*i)++;
			add_escape(b, s, n, i);
		} else {
			sc_buf_addc(b, s[(*i)++]);
		}
	}
	if (*i < n && s[*i] == q)
		(*i)++;
}

/* An unquoted url( ... ) from s[*i] (after the parenthesis and any white
 * space), into b, to its ')'. */
static void read_bare_url(struct sc_buf *b, const char *s, size_t n, size_t *i)
{
	sc_buf_reset(b);
	while (*i < n && s[*i] != ')') {
		if (s[*i] == '\\') {
			(*i)++;
			add_escape(b, s, n, i);
		} else {
			sc_buf_addc(b, s[(*i)++]);
		}
	}
	while (b->len > 0 && is_space((unsigned char)b->p[b->len - 1]))
		sc_buf_truncate(b, b->len - 1);
	if (*i < n)
		(*i)++;
}

static void skip_space(const char *s, size_t n, size_t *i)
{
	while (*i < n && is_space((unsigned char)s[*i]))
		(*i)++;
}

void requisites_add_css(struct requisites *r, const char *s, size_t n)
{
	struct sc_buf b;
	size_t i = 0, image_set = 0, depth = 0;
	bool import = false; /* the next string is an @import's */

	sc_buf_init(&b, PARSE_BUF_MAX);
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		bool after_name = i > 0 && is_name_char((unsigned char)s[i - 1]);

		if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			const char *end = memmem(s + i + 2, n - i - 2, "*/", 2);
			i = end ? (size_t)(end - s) + 2 : n;
		} else if (c == '"' || c == '\'') {
			read_string(&b, s, n, &i);
			if (import || image_set)
				requisites_add(r, b.p ? b.p : "", b.len);
			import = false;
		} else if (c == '\\') {
			i += 2; /* an escaped character in a name: never a token's start */
		} else if (!after_name && word_at(s, n, i, "url", true)) {
			i += 4;
			skip_space(s, n, &i);
			if (i < n && (s[i] == '"' || s[i] == '\'')) {
				read_string(&b, s, n, &i);
				skip_space(s, n, &i);
				if (i < n && s[i] == ')')
					i++;
			} else {
				read_bare_url(&b, s, n, &i);
			}
			requisites_add(r, b.p ? b.p : "", b.len);
			import = false;
		} else if (c == '@' && word_at(s, n, i + 1, "import", false)) {
			import = true;
			i += 7;
		} else if (!after_name && (word_at(s, n, i, "image-set", true) ||
		                           word_at(s, n, i, "-webkit-image-set", true))) {
			i = (const char *)memchr(s + i, '(', n - i) - s + 1;
			image_set = ++depth;
		} else {
			if (c == '(')
				depth++;
			else if (c == ')' && depth > 0) {
				if (depth == image_set)
					image_set = 0;
				depth--;
			} else if (c == ';' || c == '{' || c == '}')
				import = false, depth = 0, image_set = 0;
			i++;
		}
	}
	sc_buf_free(&b);
}
