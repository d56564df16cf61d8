/* css: a recursive-descent compiler from CSS selectors to XPath 1.0.
 *
 *   group     := complex ( ',' complex )*
 *   complex   := compound ( combinator compound )* pseudo-element?
 *   combinator:= whitespace | '>' | '+' | '~'
 *   compound  := ( type | '*' )? ( '#'name | '.'ident | attrib | ':'pseudo )*
 *   attrib    := '[' ident ( op ( ident | string ) )? ']'
 *                op is = ~= |= ^= $= *=
 *   pseudo    := first-child | last-child | only-child | empty | nth-child(an+b)
 *              | nth-last-child(an+b) | not(compound)
 *   pseudo-element := '::text' | '::attr(' ident ')' | '::html'
 *
 * Element and attribute names are lowercased, as libxml2's HTML parser
 * stores them; values stay case-sensitive. */
#include "parse/css.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "core/util.h"
#include "parse/parse.h"

/* An XPath 1.0 string literal for s: XPath has no escapes, so a value
 * holding both quote characters is built with concat(). */
static void buf_literal(struct sc_buf *b, const char *s)
{
	if (!strchr(s, '\''))
		sc_buf_adds(b, "'"), sc_buf_adds(b, s), sc_buf_adds(b, "'");
	else if (!strchr(s, '"'))
		sc_buf_adds(b, "\""), sc_buf_adds(b, s), sc_buf_adds(b, "\"");
	else {
		sc_buf_adds(b, "concat(");
		for (const char *p = s; *p;) {
			size_t n = strcspn(p, "'");
			if (p != s)
				sc_buf_adds(b, ", ");
			if (n > 0) {
				sc_buf_adds(b, "'");
				sc_buf_add(b, p, n);
				sc_buf_adds(b, "', ");
			}
			sc_buf_adds(b, "\"'\"");
			p += n;
			if (*p == '\'')
				p++;
			if (!*p)
				break;
		}
		sc_buf_adds(b, ")");
	}
}

struct parser {
	const char *src;
	size_t pos;
	struct css_error *err;
	jmp_buf fail;
	int depth;           /* of :not() nesting */
	struct pooled *pool; /* every buffer made while compiling; freed at the end */
};

struct pooled {
	struct sc_buf b;
	struct pooled *next;
};

/* A new empty buffer owned by the parser, so that a failure (a longjmp out
 * of any depth) leaks nothing. */
static struct sc_buf *new_buf(struct parser *p)
{
	struct pooled *n = sc_calloc(1, sizeof(*n));

	n->next = p->pool;
	p->pool = n;
	sc_buf_init(&n->b, PARSE_BUF_MAX);
	parse_buf_clear(&n->b);
	return &n->b;
}

static void free_pool(struct parser *p)
{
	while (p->pool) {
		struct pooled *next = p->pool->next;
		sc_buf_free(&p->pool->b);
		free(p->pool);
		p->pool = next;
	}
}

static _Noreturn void fail_at(struct parser *p, size_t pos, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static _Noreturn void fail_at(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;
	size_t column = 1;

	/* Columns count characters, not bytes: skip UTF-8 continuation bytes. */
	for (size_t i = 0; i < pos && p->src[i]; i++)
		if (((unsigned char)p->src[i] & 0xc0) != 0x80)
			column++;
	p->err->column = column;
	va_start(ap, fmt);
	vsnprintf(p->err->message, sizeof(p->err->message), fmt, ap);
	va_end(ap);
	longjmp(p->fail, 1);
}

/* A description of the character at pos for messages. */
static const char *what_at(struct parser *p, size_t pos, char tmp[8])
{
	unsigned char c = (unsigned char)p->src[pos];

	if (c == '\0')
		return "end of selector";
	if (c < 0x20 || c >= 0x7f)
		snprintf(tmp, 8, "0x%02x", c);
	else
		snprintf(tmp, 8, "'%c'", c);
	return tmp;
}

static char peek(struct parser *p)
{
	return p->src[p->pos];
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static bool skip_space(struct parser *p)
{
	size_t start = p->pos;

	while (is_space(peek(p)))
		p->pos++;
	return p->pos != start;
}

static bool is_name_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80 || c == '\\';
}

static bool is_name_char(unsigned char c)
{
	return is_name_start(c) || isdigit(c) || c == '-';
}

/* Code point cp as UTF-8; NUL, surrogates and what lies beyond U+10FFFF
 * become U+FFFD, as CSS says. */
static void put_utf8(struct sc_buf *b, unsigned long cp)
{
	char u[4];

	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	sc_buf_add(b, u, (size_t)(sc_utf8_put(u, cp) - u));
}

/* A backslash escape: up to six hex digits and one optional space, or any
 * other character taken literally. */
static void parse_escape(struct parser *p, struct sc_buf *out)
{
	size_t start = p->pos;
	unsigned long cp = 0;
	int digits = 0;

	p->pos++; /* the backslash */
	if (peek(p) == '\0' || peek(p) == '\n')
		fail_at(p, start, "incomplete escape");
	while (digits < 6 && isxdigit((unsigned char)peek(p))) {
		char c = peek(p);
		cp = cp * 16 + (unsigned long)(isdigit((unsigned char)c)
		                                       ? c - '0'
		                                       : (tolower((unsigned char)c) - 'a' + 10));
		digits++;
		p->pos++;
	}
	if (digits > 0) {
		if (is_space(peek(p)))
			p->pos++;
		/* CSS Syntax: zero, a surrogate or beyond Unicode is U+FFFD (a
		 * NUL would end the XPath text early); so is what XML (and so
		 * XPath) cannot hold: other C0 controls, U+FFFE, U+FFFF. */
		if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
		    (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe ||
		    cp == 0xffff)
			cp = 0xfffd;
		put_utf8(out, cp);
		return;
	}
	/* An escaped form feed, the one control character the selector may
	 * hold (as white space), cannot be in XPath either. */
	if (peek(p) == '\f')
		put_utf8(out, 0xfffd);
	else
		sc_buf_add(out, &p->src[p->pos], 1);
	p->pos++;
}

/* A CSS identifier (allow_digit_start for the name after '#').  Its text,
 * unescaped, replaces out's content; lower lowercases ASCII letters. */
static void parse_ident(struct parser *p, struct sc_buf *out, bool allow_digit_start, bool lower,
                        const char *what)
{
	size_t start = p->pos;
	char tmp[8];

	parse_buf_clear(out);
	if (peek(p) == '-' && !allow_digit_start) {
		sc_buf_add(out, "-", 1);
		p->pos++;
		if (peek(p) == '-') {
			sc_buf_add(out, "-", 1);
			p->pos++;
		}
	}
	if (!(is_name_start((unsigned char)peek(p)) ||
	      (allow_digit_start && is_name_char((unsigned char)peek(p))) ||
	      (out->len == 2 && is_name_char((unsigned char)peek(p)))))
		fail_at(p, p->pos, "expected %s, found %s", what, what_at(p, p->pos, tmp));
	while (is_name_char((unsigned char)peek(p))) {
		if (peek(p) == '\\') {
			parse_escape(p, out);
			continue;
		}
		char c = peek(p);
		if (lower && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		sc_buf_add(out, &c, 1);
		p->pos++;
	}
	if (out->len == 0)
		fail_at(p, start, "expected %s", what);
}

static void parse_string(struct parser *p, struct sc_buf *out)
{
	char quote = peek(p);
	size_t start = p->pos;

	parse_buf_clear(out);
	p->pos++;
	for (;;) {
		char c = peek(p);
		if (c == '\0' || c == '\n')
			fail_at(p, start, "unterminated string");
		if (c == quote) {
			p->pos++;
			return;
		}
		if (c == '\\') {
			if (p->src[p->pos + 1] == '\n') { /* a line continuation */
				p->pos += 2;
				continue;
			}
			parse_escape(p, out);
			continue;
		}
		/* A form feed XPath cannot hold (found by fuzz-css): U+FFFD. */
		if (c == '\f')
			put_utf8(out, 0xfffd);
		else
			sc_buf_add(out, &c, 1);
		p->pos++;
	}
}

static void expect(struct parser *p, char c, const char *context)
{
	char tmp[8];

	if (peek(p) != c)
		fail_at(p, p->pos, "expected '%c' %s, found %s", c, context,
		        what_at(p, p->pos, tmp));
	p->pos++;
}

static bool is_xpath_name(const char *name);

/* The XPath step for attribute name: "@name", or, for a name CSS allows
 * and XPath does not ("-x", an escaped "1a"), the name compared as a string
 * (found by fuzz-css). */
static const char *attr_step(struct parser *p, const char *name)
{
	struct sc_buf *step = new_buf(p);

	if (is_xpath_name(name)) {
		sc_buf_adds(step, "@");
		sc_buf_adds(step, name);
	} else {
		sc_buf_adds(step, "@*[local-name() = ");
		buf_literal(step, name);
		sc_buf_adds(step, "]");
	}
	return step->p;
}

/* "class ~= value": value among the whitespace-separated words (attr is
 * the XPath step, "@class"). */
static void pred_word(struct parser *p, struct sc_buf *out, const char *attr, const char *value)
{
	struct sc_buf *word = new_buf(p);

	sc_buf_adds(word, " ");
	sc_buf_adds(word, value);
	sc_buf_adds(word, " ");
	sc_buf_printf(out, "contains(concat(' ', normalize-space(%s), ' '), ", attr);
	buf_literal(out, word->p);
	sc_buf_adds(out, ")");
}

/* The XPath test of "[a op v]" (a the XPath step, "@href"), to out.  As in
 * cssselect and the selectors spec: an empty value never matches for ~= ^=
 * $= *=, and neither does a "word" holding whitespace. */
static void attr_predicate(struct parser *p, struct sc_buf *out, char op, const char *a,
                           const char *v)
{
	bool empty = v[0] == '\0';

	switch (op) {
	case '=':
		sc_buf_printf(out, "%s = ", a);
		buf_literal(out, v);
		break;
	case '~':
		if (empty || strpbrk(v, " \t\n\r\f"))
			sc_buf_adds(out, "false()");
		else {
			sc_buf_printf(out, "%s and ", a);
			pred_word(p, out, a, v);
		}
		break;
	case '|':
		sc_buf_printf(out, "%s = ", a);
		buf_literal(out, v);
		sc_buf_printf(out, " or starts-with(%s, ", a);
		{
			struct sc_buf *dash = new_buf(p);
			sc_buf_adds(dash, v);
			sc_buf_adds(dash, "-");
			buf_literal(out, dash->p);
		}
		sc_buf_adds(out, ")");
		break;
	case '^':
		if (empty)
			sc_buf_adds(out, "false()");
		else {
			sc_buf_printf(out, "starts-with(%s, ", a);
			buf_literal(out, v);
			sc_buf_adds(out, ")");
		}
		break;
	case '$':
		if (empty)
			sc_buf_adds(out, "false()");
		else {
			/* XPath 1.0 has no ends-with(); string-length counts
			 * characters, so count v's characters too. */
			size_t chars = 0;
			for (const char *c = v; *c; c++)
				if (((unsigned char)*c & 0xc0) != 0x80)
					chars++;
			sc_buf_printf(out, "substring(%s, string-length(%s) - %zu) = ", a, a,
			              chars - 1);
			buf_literal(out, v);
		}
		break;
	case '*':
		if (empty)
			sc_buf_adds(out, "false()");
		else {
			sc_buf_printf(out, "contains(%s, ", a);
			buf_literal(out, v);
			sc_buf_adds(out, ")");
		}
		break;
	}
}

static void parse_attrib(struct parser *p, struct sc_buf *out)
{
	struct sc_buf *name = new_buf(p), *value = new_buf(p);
	size_t op_pos;
	char op = 0, tmp[8];

	p->pos++; /* '[' */
	skip_space(p);
	parse_ident(p, name, false, true, "an attribute name");
	skip_space(p);
	op_pos = p->pos;
	if (peek(p) == ']') {
		p->pos++;
		sc_buf_printf(out, "[%s]", attr_step(p, name->p));
		return;
	}
	if (peek(p) == '=') {
		op = '=';
		p->pos++;
	} else if (strchr("~|^$*", peek(p)) && peek(p) && p->src[p->pos + 1] == '=') {
		op = peek(p);
		p->pos += 2;
	} else {
		fail_at(p, op_pos, "expected ']' or an operator (= ~= |= ^= $= *=), found %s",
		        what_at(p, op_pos, tmp));
	}
	skip_space(p);
	if (peek(p) == '"' || peek(p) == '\'')
		parse_string(p, value);
	else
		parse_ident(p, value, false, false, "a value");
	skip_space(p);
	if (peek(p) != ']') {
		fail_at(p, p->pos, "expected ']', found %s", what_at(p, p->pos, tmp));
	}
	p->pos++;

	sc_buf_adds(out, "[");
	attr_predicate(p, out, op, attr_step(p, name->p), value->p);
	sc_buf_adds(out, "]");
}

/* an+b, as in the selectors spec: odd, even, 3, -n+3, 2n, +2n-1, ... */
static void parse_nth(struct parser *p, long *a, long *b)
{
	size_t start;
	long sign = 1;
	char tmp[8];

	skip_space(p);
	start = p->pos;
	if (strncasecmp(p->src + p->pos, "odd", 3) == 0 &&
	    !isalnum((unsigned char)p->src[p->pos + 3])) {
		p->pos += 3;
		*a = 2, *b = 1;
	} else if (strncasecmp(p->src + p->pos, "even", 4) == 0 &&
	           !isalnum((unsigned char)p->src[p->pos + 4])) {
		p->pos += 4;
		*a = 2, *b = 0;
	} else {
		bool have_digits = false;
		long num = 0;

		if (peek(p) == '+' || peek(p) == '-') {
			sign = peek(p) == '-' ? -1 : 1;
			p->pos++;
		}
		while (isdigit((unsigned char)peek(p))) {
			if (num > 100000000)
				fail_at(p, start, "number too large");
			num = num * 10 + (peek(p) - '0');
			have_digits = true;
			p->pos++;
		}
		if (peek(p) == 'n' || peek(p) == 'N') {
			p->pos++;
			*a = sign * (have_digits ? num : 1);
			skip_space(p);
			*b = 0;
			if (peek(p) == '+' || peek(p) == '-') {
				long bsign = peek(p) == '-' ? -1 : 1;
				long bnum = 0;
				p->pos++;
				skip_space(p);
				if (!isdigit((unsigned char)peek(p)))
					fail_at(p, p->pos, "expected a number in an+b, found %s",
					        what_at(p, p->pos, tmp));
				while (isdigit((unsigned char)peek(p))) {
					if (bnum > 100000000)
						fail_at(p, start, "number too large");
					bnum = bnum * 10 + (peek(p) - '0');
					p->pos++;
				}
				*b = bsign * bnum;
			}
		} else if (have_digits) {
			*a = 0, *b = sign * num;
		} else {
			fail_at(p, start, "expected an+b, odd or even, found %s",
			        what_at(p, start, tmp));
		}
	}
	skip_space(p);
	expect(p, ')', "after an+b");
}

/* pos - b, written without a double minus. */
static void minus_b(struct sc_buf *out, const char *pos, long b)
{
	if (b < 0)
		sc_buf_printf(out, "%s + %ld", pos, -b);
	else
		sc_buf_printf(out, "%s - %ld", pos, b);
}

/* The predicate for position pos (an XPath number, 1-based) matching an+b
 * for some n >= 0. */
static void pred_nth(struct sc_buf *out, const char *pos, long a, long b)
{
	if (a == 0) {
		sc_buf_printf(out, "[%s = %ld]", pos, b);
	} else if (a > 0) {
		/* pos >= b holds for every position when b <= 1. */
		if (a == 1 && b <= 1)
			return;
		sc_buf_adds(out, "[");
		if (b > 1)
			sc_buf_printf(out, "%s >= %ld", pos, b);
		if (a > 1) {
			sc_buf_adds(out, b > 1 ? " and (" : "(");
			minus_b(out, pos, b);
			sc_buf_printf(out, ") mod %ld = 0", a);
		}
		sc_buf_adds(out, "]");
	} else {
		sc_buf_printf(out, "[%s <= %ld", pos, b);
		if (a < -1)
			sc_buf_printf(out, " and (%ld - %s) mod %ld = 0", b, pos, -a);
		sc_buf_adds(out, "]");
	}
}

static bool parse_compound(struct parser *p, struct sc_buf *type, struct sc_buf *preds);

static void parse_pseudo_class(struct parser *p, struct sc_buf *preds)
{
	struct sc_buf *name = new_buf(p);
	size_t start = p->pos;

	p->pos++; /* ':' */
	parse_ident(p, name, false, true, "a pseudo-class name");
	if (strcmp(name->p, "first-child") == 0)
		sc_buf_adds(preds, "[not(preceding-sibling::*[1])]");
	else if (strcmp(name->p, "last-child") == 0)
		sc_buf_adds(preds, "[not(following-sibling::*[1])]");
	else if (strcmp(name->p, "empty") == 0)
		/* No child element and no text, white space included (Selectors
		 * 3); a comment does not count. */
		sc_buf_adds(preds, "[not(*) and not(text())]");
	else if (strcmp(name->p, "only-child") == 0)
		sc_buf_adds(preds,
		            "[not(preceding-sibling::*[1]) and not(following-sibling::*[1])]");
	else if (strcmp(name->p, "nth-child") == 0 || strcmp(name->p, "nth-last-child") == 0) {
		long a, b;
		bool last = name->p[4] == 'l';
		if (peek(p) != '(') {
			fail_at(p, p->pos, "expected '(' after :%s",
			        last ? "nth-last-child" : "nth-child");
		}
		p->pos++;
		parse_nth(p, &a, &b);
		pred_nth(preds,
		         last ? "(count(following-sibling::*) + 1)"
		              : "(count(preceding-sibling::*) + 1)",
		         a, b);
	} else if (strcmp(name->p, "not") == 0) {
		struct sc_buf *type = new_buf(p), *inner = new_buf(p);
		char tmp[8];
		if (peek(p) != '(') {
			fail_at(p, p->pos, "expected '(' after :not");
		}
		p->pos++;
		skip_space(p);
		if (++p->depth > 16)
			fail_at(p, start, "too deeply nested :not()");
		if (!parse_compound(p, type, inner)) {
			fail_at(p, p->pos, "expected a simple selector in :not(), found %s",
			        what_at(p, p->pos, tmp));
		}
		skip_space(p);
		if (peek(p) != ')') {
			fail_at(p, p->pos, "expected ')' to close :not(, found %s",
			        what_at(p, p->pos, tmp));
		}
		p->pos++;
		p->depth--;
		sc_buf_printf(preds, "[not(self::%s%s)]", type->len ? type->p : "*",
		              inner->len ? inner->p : "");
	} else {
		char n[64];
		snprintf(n, sizeof(n), "%s", name->p);
		fail_at(p, start, "unsupported pseudo-class ':%s'", n);
	}
}

/* Whether name can stand as an XPath name test: an NCName as libxml2's
 * XPath parser reads it (not every non-ASCII character is a name
 * character: U+00D7, for one, is not). */
static bool is_xpath_name(const char *name)
{
	return xmlValidateNCName((const xmlChar *)name, 0) == 0;
}

/* Parses a compound selector into its type ("" for any) and predicates.
 * Returns false, consuming nothing, if there is none at pos. */
static bool parse_compound(struct parser *p, struct sc_buf *type, struct sc_buf *preds)
{
	size_t start = p->pos;
	struct sc_buf *ident = new_buf(p);

	parse_buf_clear(type);
	parse_buf_clear(preds);
	if (peek(p) == '*') {
		p->pos++;
		sc_buf_adds(type, "*");
	} else if (is_name_start((unsigned char)peek(p)) ||
	           (peek(p) == '-' && is_name_start((unsigned char)p->src[p->pos + 1]))) {
		parse_ident(p, type, false, true, "an element name");
		if (!is_xpath_name(type->p)) {
			/* An escaped name such as \31 23 is a valid CSS type but
			 * no XPath name test: compare the name as a string. */
			sc_buf_adds(preds, "[local-name() = ");
			buf_literal(preds, type->p);
			sc_buf_adds(preds, "]");
			sc_buf_reset(type);
			sc_buf_adds(type, "*");
		}
	}
	for (;;) {
		char c = peek(p);
		if (c == '#') {
			p->pos++;
			parse_ident(p, ident, true, false, "an id after '#'");
			sc_buf_adds(preds, "[@id = ");
			buf_literal(preds, ident->p);
			sc_buf_adds(preds, "]");
		} else if (c == '.') {
			p->pos++;
			parse_ident(p, ident, false, false, "a class name after '.'");
			sc_buf_adds(preds, "[");
			pred_word(p, preds, "@class", ident->p);
			sc_buf_adds(preds, "]");
		} else if (c == '[') {
			parse_attrib(p, preds);
		} else if (c == ':' && p->src[p->pos + 1] != ':') {
			parse_pseudo_class(p, preds);
		} else {
			break;
		}
	}
	return p->pos != start;
}

enum pseudo_element {
	PE_NONE,
	PE_TEXT,
	PE_ATTR,
	PE_HTML
};

/* One complex selector (no commas).  Appends its XPath to out and returns
 * the pseudo-element it ends with. */
static enum pseudo_element parse_complex(struct parser *p, struct sc_buf *out)
{
	struct sc_buf *type = new_buf(p), *preds = new_buf(p);
	const char *axis = "descendant-or-self::";
	char tmp[8];

	for (;;) {
		size_t at = p->pos;
		if (!parse_compound(p, type, preds))
			fail_at(p, at, "expected a selector, found %s", what_at(p, at, tmp));
		sc_buf_adds(out, axis);
		sc_buf_adds(out, type->len ? type->p : "*");
		sc_buf_adds(out, preds->p);
		if (peek(p) == ':' && p->src[p->pos + 1] == ':') {
			size_t pe = p->pos;
			struct sc_buf *name = new_buf(p);
			enum pseudo_element kind;

			p->pos += 2;
			parse_ident(p, name, false, true, "a pseudo-element name");
			if (strcmp(name->p, "text") == 0) {
				sc_buf_adds(out, "/text()");
				kind = PE_TEXT;
			} else if (strcmp(name->p, "html") == 0) {
				kind = PE_HTML;
			} else if (strcmp(name->p, "attr") == 0) {
				expect(p, '(', "after ::attr");
				skip_space(p);
				parse_ident(p, name, false, true, "an attribute name");
				skip_space(p);
				if (peek(p) != ')') {
					fail_at(p, p->pos,
					        "expected ')' after the attribute name, found %s",
					        what_at(p, p->pos, tmp));
				}
				p->pos++;
				sc_buf_printf(out, "/%s", attr_step(p, name->p));
				kind = PE_ATTR;
			} else {
				char n[64];
				snprintf(n, sizeof(n), "%s", name->p);
				fail_at(p, pe,
				        "unsupported pseudo-element '::%s' (use ::text, "
				        "::attr(NAME) or ::html)",
				        n);
			}
			skip_space(p);
			if (peek(p) != ',' && peek(p) != '\0')
				fail_at(p, p->pos,
				        "a pseudo-element must end the selector, found %s",
				        what_at(p, p->pos, tmp));
			return kind;
		}
		bool space = skip_space(p);
		char c = peek(p);
		if (c == '\0' || c == ',')
			return PE_NONE;
		if (c == '>') {
			axis = "/";
		} else if (c == '+') {
			axis = "/following-sibling::*[1]/self::";
		} else if (c == '~') {
			axis = "/following-sibling::";
		} else if (space) {
			axis = "/descendant::";
			continue;
		} else {
			fail_at(p, p->pos, "unexpected %s", what_at(p, p->pos, tmp));
		}
		p->pos++;
		skip_space(p);
		if (peek(p) == '\0' || peek(p) == ',')
			fail_at(p, p->pos, "expected a selector after '%c', found %s", c,
			        what_at(p, p->pos, tmp));
	}
}

/* The group, after parse_css_compile has set up the failure exit. */
static void parse_group(struct parser *p, struct sc_buf *xpath, bool *outer_html)
{
	enum pseudo_element first = PE_NONE;

	for (int n = 0;; n++) {
		skip_space(p);
		size_t start = p->pos;
		enum pseudo_element pe = parse_complex(p, xpath);
		/* ::html is not an XPath step but an output mode: it must be
		 * the same across a group. */
		if (n == 0)
			first = pe;
		else if ((pe == PE_HTML) != (first == PE_HTML))
			fail_at(p, start, "::html must end every selector of a group or none");
		skip_space(p);
		if (peek(p) == '\0')
			break;
		p->pos++; /* ',' */
		sc_buf_adds(xpath, " | ");
	}
	*outer_html = first == PE_HTML;
}

int parse_css_compile(const char *selector, struct css_compiled *out, struct css_error *err)
{
	struct parser p = { .src = selector, .err = err };
	struct sc_buf *xpath;
	bool outer_html;

	if (setjmp(p.fail)) {
		free_pool(&p);
		return -1;
	}
	/* libxml2 refuses XPath that is not UTF-8 or holds what XML cannot
	 * (C0 controls but tab, LF, CR; U+FFFE, U+FFFF): say so where. */
	for (size_t i = 0, n = strlen(selector); i < n;) {
		const unsigned char *c = (const unsigned char *)selector + i;
		size_t len = sc_utf8_seq_len(c, n - i);
		if (len == 0)
			fail_at(&p, i, "not valid UTF-8");
		if ((c[0] < 0x20 && c[0] != '\t' && c[0] != '\n' && c[0] != '\r' && c[0] != '\f') ||
		    (len == 3 && c[0] == 0xef && c[1] == 0xbf && c[2] >= 0xbe))
			fail_at(&p, i, "a control character");
		i += len;
	}
	xpath = new_buf(&p);
	parse_group(&p, xpath, &outer_html);
	out->xpath = sc_strdup(xpath->p);
	out->outer_html = outer_html;
	free_pool(&p);
	return 0;
}
