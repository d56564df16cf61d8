/* robots: RFC 9309 robots.txt, parsed for one agent and matched; see
 * robots.h for the rules.  The parser keeps only what the agent needs (the
 * rules of its groups, or of the "*" groups) plus the Sitemap lines, so a
 * large file costs memory only while it is read. */
#include "web/robots.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hex.h"
#include "core/util.h"
#include "web/url.h"

struct rule {
	char *pattern; /* normalised, runs of '*' collapsed */
	size_t len;
	bool allow;
};

struct rules {
	struct rule *v;
	size_t n, cap;
};

struct sc_robots {
	enum sc_robots_kind kind;
	char *why; /* a disallow-all's reason */
	struct rules rules;
	double crawl_delay; /* -1: none */
	char **sitemaps;
	size_t nsitemaps, sitemaps_cap;
};

static const char DISALLOWED[] = "disallowed by robots.txt";

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static bool is_rule_space(char c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static bool is_product_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '_';
}

static struct sc_robots *robots_new(enum sc_robots_kind kind)
{
	struct sc_robots *r = sc_calloc(1, sizeof *r);

	r->kind = kind;
	r->crawl_delay = -1;
	return r;
}

/* ------------------------------------------------------------------ */
/* Percent-encoding normalisation                                      */
/* ------------------------------------------------------------------ */

/* What '*' and '$' are in the text being normalised: plain bytes, a path
 * (where they are literal, so they become %2A and %24 to meet a pattern's
 * escaped ones: "Disallow: /a-%2A" refuses "/a-*"), or a pattern (where '*'
 * is the wildcard and only a final '$' is the anchor). */
enum norm_mode {
	NORM_PLAIN,
	NORM_PATH,
	NORM_PATTERN
};

static char *normalize(const char *s, size_t len, enum norm_mode mode)
{
	char *out = sc_malloc(len * 3 + 1); /* every byte may become %XX */
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		int hi, lo;
		bool literal_special = (mode == NORM_PATH && (c == '*' || c == '$')) ||
		                       (mode == NORM_PATTERN && c == '$' && i + 1 < len);

		if (c == '%' && i + 2 < len && (hi = sc_hex_value((unsigned char)s[i + 1])) >= 0 &&
		    (lo = sc_hex_value((unsigned char)s[i + 2])) >= 0) {
			unsigned char decoded = (unsigned char)(hi * 16 + lo);
			if (sc_url_is_unreserved(decoded)) {
				out[o++] = (char)decoded;
			} else {
				out[o++] = '%';
				out[o++] = sc_hex_digit((unsigned)hi);
				out[o++] = sc_hex_digit((unsigned)lo);
			}
			i += 2;
		} else if (c <= 0x20 || c >= 0x7f || c == '%' || literal_special) {
			/* A '%' that starts no escape is encoded too, so that
			 * normalising twice changes nothing ("%%41" is "%25A"). */
			out[o++] = '%';
			out[o++] = sc_hex_digit(c >> 4);
			out[o++] = sc_hex_digit(c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}

char *sc_robots_normalize(const char *s, size_t len)
{
	return normalize(s, len, NORM_PLAIN);
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

enum field {
	F_OTHER,
	F_AGENT,
	F_ALLOW,
	F_DISALLOW,
	F_DELAY,
	F_SITEMAP
};

static enum field field_of(const char *name, size_t n)
{
	static const struct {
		const char *name;
		enum field f;
	} names[] = {
		{ "user-agent", F_AGENT },  { "useragent", F_AGENT },   { "user agent", F_AGENT },
		{ "allow", F_ALLOW },       { "disallow", F_DISALLOW }, { "dissallow", F_DISALLOW },
		{ "dissalow", F_DISALLOW }, { "disalow", F_DISALLOW },  { "diasllow", F_DISALLOW },
		{ "disallaw", F_DISALLOW }, { "crawl-delay", F_DELAY }, { "crawldelay", F_DELAY },
		{ "crawl delay", F_DELAY }, { "sitemap", F_SITEMAP },   { "site-map", F_SITEMAP },
	};

	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strlen(names[i].name) == n && strncasecmp(name, names[i].name, n) == 0)
			return names[i].f;
	return F_OTHER;
}

/* The parser's state while it walks the lines. */
struct parse {
	struct sc_robots *r;
	const char *token; /* the agent's product token */
	struct rules named, star;
	double delay_named, delay_star;
	/* The group being read: which agents it names, and whether a rule has
	 * been seen since its User-agent lines (the next one opens a group). */
	bool in_group, group_named, group_star, group_has_rules;
	bool any_named, any_star;
};

static void rules_add(struct rules *rs, bool allow, const char *value, size_t n)
{
	char *p = normalize(value, n, NORM_PATTERN);
	size_t w = 0;

	for (size_t i = 0; p[i]; i++) /* "**" matches what "*" does */
		if (!(p[i] == '*' && w > 0 && p[w - 1] == '*'))
			p[w++] = p[i];
	p[w] = '\0';
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 8;
		rs->v = sc_realloc(rs->v, rs->cap * sizeof *rs->v);
	}
	rs->v[rs->n++] = (struct rule){ .pattern = p, .len = w, .allow = allow };
}

static void rules_free(struct rules *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].pattern);
	free(rs->v);
	*rs = (struct rules){ 0 };
}

/* "12", "0.5", "2." in seconds; -1 for anything else. */
static double parse_delay(const char *v, size_t n)
{
	double secs = 0, scale = 1;
	bool digits = false, dot = false;

	for (size_t i = 0; i < n; i++) {
		if (v[i] >= '0' && v[i] <= '9') {
			digits = true;
			if (dot)
				secs += (v[i] - '0') * (scale /= 10);
			else if (secs < 1e9)
				secs = secs * 10 + (v[i] - '0');
		} else if (v[i] == '.' && !dot) {
			dot = true;
		} else {
			return -1;
		}
	}
	return digits ? secs : -1;
}

static bool is_absolute_http(const char *v, size_t n)
{
	return (n > 7 && strncasecmp(v, "http://", 7) == 0) ||
	       (n > 8 && strncasecmp(v, "https://", 8) == 0);
}

static void add_sitemap(struct sc_robots *r, const char *v, size_t n)
{
	if (!is_absolute_http(v, n))
		return;
	for (size_t i = 0; i < r->nsitemaps; i++)
		if (strlen(r->sitemaps[i]) == n && memcmp(r->sitemaps[i], v, n) == 0)
			return;
	if (r->nsitemaps == r->sitemaps_cap) {
		r->sitemaps_cap = r->sitemaps_cap ? r->sitemaps_cap * 2 : 4;
		r->sitemaps = sc_realloc(r->sitemaps, r->sitemaps_cap * sizeof *r->sitemaps);
	}
	r->sitemaps[r->nsitemaps++] = sc_strndup(v, n);
}

static void on_agent(struct parse *p, const char *v, size_t n)
{
	if (!p->in_group || p->group_has_rules) {
		p->in_group = true;
		p->group_named = p->group_star = p->group_has_rules = false;
	}
	if (n >= 1 && v[0] == '*' && (n == 1 || is_rule_space(v[1]))) {
		p->group_star = p->any_star = true;
		return;
	}
	size_t t = 0;
	while (t < n && is_product_char(v[t]))
		t++;
	if (t > 0 && t == strlen(p->token) && strncasecmp(v, p->token, t) == 0)
		p->group_named = p->any_named = true;
}

static void on_rule(struct parse *p, enum field f, const char *v, size_t n)
{
	if (!p->in_group)
		return; /* a rule before any User-agent line belongs to no group */
	p->group_has_rules = true;
	if (f == F_DELAY) {
		double d = parse_delay(v, n);
		if (d >= 0 && p->group_named && p->delay_named < 0)
			p->delay_named = d;
		if (d >= 0 && p->group_star && p->delay_star < 0)
			p->delay_star = d;
		return;
	}
	if (n == 0)
		return; /* an empty value matches nothing */
	if (p->group_named)
		rules_add(&p->named, f == F_ALLOW, v, n);
	if (p->group_star)
		rules_add(&p->star, f == F_ALLOW, v, n);
}

static void parse_line(struct parse *p, const char *s, size_t n)
{
	const char *hash = memchr(s, '#', n);
	if (hash)
		n = (size_t)(hash - s);
	const char *colon = memchr(s, ':', n);
	if (!colon)
		return;
	const char *name = s, *name_end = colon, *v = colon + 1, *end = s + n;
	while (name < name_end && is_rule_space(*name))
		name++;
	while (name_end > name && is_rule_space(name_end[-1]))
		name_end--;
	while (v < end && is_rule_space(*v))
		v++;
	while (end > v && is_rule_space(end[-1]))
		end--;

	enum field f = field_of(name, (size_t)(name_end - name));
	size_t vn = (size_t)(end - v);
	switch (f) {
	case F_AGENT:
		on_agent(p, v, vn);
		break;
	case F_ALLOW:
	case F_DISALLOW:
	case F_DELAY:
		on_rule(p, f, v, vn);
		break;
	case F_SITEMAP:
		add_sitemap(p->r, v, vn);
		break;
	case F_OTHER:
		break; /* unknown fields neither open nor close a group */
	}
}

char *sc_robots_product_token(const char *user_agent)
{
	if (!user_agent)
		return sc_strdup("");
	size_t n = strcspn(user_agent, "/ \t\r\n\v\f");
	return sc_strndup(user_agent, n);
}

/* The length of the UTF-8 byte order mark that text begins with, or of
 * the first one or two of its bytes: a BOM cut short is skipped too, as
 * Google's parser does, so that its stray bytes do not make the first line
 * (often "User-agent") unreadable. */
static size_t bom_length(const char *text, size_t len)
{
	static const char bom[] = "\xEF\xBB\xBF";
	size_t n = 0;

	while (n < 3 && n < len && text[n] == bom[n])
		n++;
	return n;
}

struct sc_robots *sc_robots_parse(const char *text, size_t len, const char *agent)
{
	struct parse p = { .r = robots_new(SC_ROBOTS_RULES), .delay_named = -1, .delay_star = -1 };
	char *token = sc_robots_product_token(agent);
	size_t bom;

	p.token = token;
	if (len > SC_ROBOTS_MAX_BYTES) {
		/* Drop the line the limit cuts: half a rule could mean anything. */
		len = SC_ROBOTS_MAX_BYTES;
		while (len > 0 && text[len] != '\n' && text[len] != '\r')
			len--;
	}
	bom = bom_length(text, len);
	text += bom;
	len -= bom;
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && text[j] != '\n' && text[j] != '\r')
			j++;
		parse_line(&p, text + i, j - i);
		if (j + 1 < len && text[j] == '\r' && text[j + 1] == '\n')
			j++;
		i = j + 1;
	}

	if (p.any_named) {
		p.r->rules = p.named;
		p.r->crawl_delay = p.delay_named;
		rules_free(&p.star);
	} else {
		p.r->rules = p.star; /* empty when no "*" group: allow all */
		p.r->crawl_delay = p.delay_star;
		rules_free(&p.named);
	}
	free(token);
	return p.r;
}

struct sc_robots *sc_robots_allow_all(void)
{
	return robots_new(SC_ROBOTS_ALLOW_ALL);
}

struct sc_robots *sc_robots_disallow_all(const char *why)
{
	struct sc_robots *r = robots_new(SC_ROBOTS_DISALLOW_ALL);

	r->why = sc_strdup(why ? why : DISALLOWED);
	return r;
}

enum sc_robots_kind sc_robots_kind_for_status(long status)
{
	if (status >= 200 && status <= 299)
		return SC_ROBOTS_RULES;
	if (status >= 300 && status <= 499 && status != 429)
		return SC_ROBOTS_ALLOW_ALL;
	return SC_ROBOTS_DISALLOW_ALL;
}

struct sc_robots *sc_robots_from_fetch(long status, const char *body, size_t len, const char *agent)
{
	switch (sc_robots_kind_for_status(status)) {
	case SC_ROBOTS_RULES:
		return sc_robots_parse(body ? body : "", body ? len : 0, agent);
	case SC_ROBOTS_ALLOW_ALL:
		return sc_robots_allow_all();
	case SC_ROBOTS_DISALLOW_ALL:
		break;
	}
	return sc_robots_disallow_all(SC_ROBOTS_UNREACHABLE);
}

void sc_robots_free(struct sc_robots *r)
{
	if (!r)
		return;
	rules_free(&r->rules);
	for (size_t i = 0; i < r->nsitemaps; i++)
		free(r->sitemaps[i]);
	free(r->sitemaps);
	free(r->why);
	free(r);
}

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

/* Whether pattern matches a prefix of path.  pos[] holds the path offsets
 * the pattern read so far can end at (ascending); it has room for
 * path_len + 1 entries.  O(pattern * path) at worst, as in Google's
 * reference matcher. */
static bool pattern_matches(const char *path, size_t path_len, const char *pat, size_t pat_len,
                            size_t *pos)
{
	size_t npos = 1;

	pos[0] = 0;
	for (size_t i = 0; i < pat_len; i++) {
		if (pat[i] == '$' && i + 1 == pat_len)
			return pos[npos - 1] == path_len;
		if (pat[i] == '*') {
			npos = path_len - pos[0] + 1;
			for (size_t k = 1; k < npos; k++)
				pos[k] = pos[0] + k;
			continue;
		}
		size_t kept = 0;
		for (size_t k = 0; k < npos; k++)
			if (pos[k] < path_len && path[pos[k]] == pat[i])
				pos[kept++] = pos[k] + 1;
		if (kept == 0)
			return false;
		npos = kept;
	}
	return true;
}

bool sc_robots_allowed(const struct sc_robots *r, const char *path_and_query)
{
	return sc_robots_match(r, path_and_query, NULL);
}

bool sc_robots_match(const struct sc_robots *r, const char *path_and_query, const char **rule_out)
{
	const struct rule *winner = NULL;

	if (rule_out)
		*rule_out = NULL;
	if (r->kind == SC_ROBOTS_ALLOW_ALL)
		return true;
	const char *p = path_and_query ? path_and_query : "";
	size_t n = strcspn(p, "#");
	if (n == 0) {
		p = "/";
		n = 1;
	}
	char *path = normalize(p, n, NORM_PATH);
	size_t len = strlen(path);
	size_t path_only = strcspn(path, "?");
	bool robots_txt = path_only == 11 && memcmp(path, "/robots.txt", 11) == 0;
	if (robots_txt || r->kind == SC_ROBOTS_DISALLOW_ALL || r->rules.n == 0) {
		free(path);
		return robots_txt || r->kind != SC_ROBOTS_DISALLOW_ALL;
	}

	size_t *pos = sc_malloc((len + 1) * sizeof *pos);
	size_t best = 0;
	bool found = false, allow = true;

	for (size_t i = 0; i < r->rules.n; i++) {
		const struct rule *rule = &r->rules.v[i];
		if (found && (rule->len < best || (rule->len == best && !rule->allow)))
			continue; /* cannot beat the match in hand */
		if (!pattern_matches(path, len, rule->pattern, rule->len, pos))
			continue;
		if (!found || rule->len > best || rule->allow) {
			found = true;
			best = rule->len;
			allow = rule->allow;
			winner = rule;
		}
	}
	free(pos);
	free(path);
	if (rule_out && winner)
		*rule_out = winner->pattern;
	return allow;
}

bool sc_robots_check(const struct sc_robots *r, const char *path_and_query, char *why,
                     size_t whylen)
{
	const char *rule = NULL;

	if (sc_robots_match(r, path_and_query, &rule))
		return true;
	if (rule)
		snprintf(why, whylen, "disallowed by robots.txt rule \"Disallow: %.*s\"",
		         (int)(whylen > 80 ? whylen - 80 : 1), rule);
	else
		snprintf(why, whylen, "%s", sc_robots_why(r));
	return false;
}

enum sc_robots_kind sc_robots_kind(const struct sc_robots *r)
{
	return r->kind;
}

const char *sc_robots_why(const struct sc_robots *r)
{
	return r->why ? r->why : DISALLOWED;
}

double sc_robots_crawl_delay(const struct sc_robots *r)
{
	return r->crawl_delay;
}

const char *const *sc_robots_sitemaps(const struct sc_robots *r, size_t *count)
{
	*count = r->nsitemaps;
	return (const char *const *)r->sitemaps;
}

size_t sc_robots_rule_count(const struct sc_robots *r)
{
	return r->rules.n;
}

/* ------------------------------------------------------------------ */
/* URLs                                                                */
/* ------------------------------------------------------------------ */

int sc_robots_split_url(const char *url, char **origin, char **path_and_query)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *path = NULL, *query = NULL;
	int rc = -1;

	*origin = *path_and_query = NULL;
	if (!u)
		sc_die(1, "out of memory");
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    (strcasecmp(scheme, "http") == 0 || strcasecmp(scheme, "https") == 0) &&
	    curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
	    (*origin = sc_url_origin(u)) != NULL) {
		if (curl_url_get(u, CURLUPART_QUERY, &query, 0) != CURLUE_OK)
			query = NULL;
		const char *p = *path ? path : "/";
		size_t n = strlen(p) + (query ? strlen(query) + 1 : 0) + 1;
		*path_and_query = sc_malloc(n);
		snprintf(*path_and_query, n, "%s%s%s", p, query ? "?" : "", query ? query : "");
		rc = 0;
	}
	curl_free(scheme);
	curl_free(path);
	curl_free(query);
	curl_url_cleanup(u);
	return rc;
}
