/* robots: robots.txt (RFC 9309) parsed for one user agent, and matched.
 *
 * A struct sc_robots is the answer for one origin (scheme://host:port): the
 * rules of the groups that apply to the agent, its Crawl-delay, and every
 * Sitemap line of the file.  It is immutable once made, so one can be shared
 * by every transfer of the origin.  Made by sc_robots_parse (a 2xx body),
 * sc_robots_allow_all, sc_robots_disallow_all, or sc_robots_from_fetch,
 * which maps a fetch outcome to one of those three.  The caller frees it
 * with sc_robots_free.  Nothing here prints; allocation failure is fatal.
 *
 * The rules, as RFC 9309 and Google's reference parser have them:
 * - at most SC_ROBOTS_MAX_BYTES of the file are read (a line cut by the
 *   limit is dropped); a UTF-8 BOM is skipped, and so are the first one or
 *   two of its bytes at the start (a BOM cut short); lines end at CR, LF or
 *   CRLF;
 *   '#' starts a comment; field names are case-insensitive; lines that are
 *   not "name: value" are ignored; common misspellings are accepted
 *   (useragent, user agent, dissallow, disalow, crawldelay, site-map);
 * - consecutive User-agent lines open a group; its rules run to the next
 *   User-agent line that follows a rule; rules before any group are ignored;
 * - a group names the agent when its User-agent value's leading run of
 *   [A-Za-z_-] equals the agent's product token, case-insensitively; all
 *   such groups are merged; failing any, all the "*" groups are merged;
 *   failing those, everything is allowed;
 * - a path is allowed unless the longest matching rule is a Disallow; an
 *   Allow wins a tie; a rule matches a prefix of the path and query, '*'
 *   matches any run of bytes, a '$' ending the pattern anchors it; an empty
 *   value matches nothing (so "Disallow:" allows all);
 * - patterns and paths are compared after percent-encoding normalisation:
 *   %hh of an unreserved character (A-Z a-z 0-9 - . _ ~) is decoded, other
 *   %hh have their hex upper-cased, and bytes outside printable ASCII are
 *   percent-encoded, as is a '%' that starts no escape; a literal '*' or
 *   '$' in a path is %2A or %24, so it meets a rule's escaped one (RFC 9309
 *   2.2.3), and a '$' inside a rule (not at its end) is literal;
 * - /robots.txt itself is always allowed;
 * - Crawl-delay (seconds, fractional allowed) is the first one found in the
 *   groups chosen; Sitemap lines belong to no group and are all kept
 *   (absolute http/https URLs only, duplicates dropped, in file order). */
#ifndef SC_ROBOTS_H
#define SC_ROBOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The parsing limit: RFC 9309 section 2.5 requires at least 500 KiB. */
#define SC_ROBOTS_MAX_BYTES (500 * 1024)

/* The message of a disallow-all that comes from a failed fetch. */
#define SC_ROBOTS_UNREACHABLE "robots.txt unreachable"

enum sc_robots_kind {
	SC_ROBOTS_RULES,        /* a parsed file (possibly with no rule for the agent) */
	SC_ROBOTS_ALLOW_ALL,    /* no file (4xx, redirect loop) */
	SC_ROBOTS_DISALLOW_ALL, /* unreachable (5xx, 429 after retries, timeout, network) */
};

struct sc_robots; /* opaque, immutable */

/* Making one */

/* The product token of a user agent: the string up to its first '/' or
 * whitespace ("Mozilla/5.0 (X11)" -> "Mozilla", "sc-fetch/0.1" ->
 * "sc-fetch").  Malloced; "" for NULL. */
char *sc_robots_product_token(const char *user_agent);

/* Parses the first SC_ROBOTS_MAX_BYTES of text[0..len) (NULs allowed, no
 * terminator needed) for the agent; agent may be a whole User-Agent string,
 * only its product token is used. */
struct sc_robots *sc_robots_parse(const char *text, size_t len, const char *agent);
struct sc_robots *sc_robots_allow_all(void);
/* why: the reason given for every refusal, e.g. SC_ROBOTS_UNREACHABLE. */
struct sc_robots *sc_robots_disallow_all(const char *why);

/* What an HTTP outcome means for robots.txt (RFC 9309 section 2.3.1):
 * 2xx parse the body; 3xx left over (redirects exhausted) and 4xx other
 * than 429 allow all; 429, 5xx, any other status and 0 (no response:
 * timeout, network or DNS error) disallow all as unreachable.  The engine
 * retries 429 and 5xx like any request before it gets here. */
enum sc_robots_kind sc_robots_kind_for_status(long status);
/* sc_robots_kind_for_status, then the matching constructor. */
struct sc_robots *sc_robots_from_fetch(long status, const char *body, size_t len,
                                       const char *agent);

void sc_robots_free(struct sc_robots *r);

/* Asking it */

enum sc_robots_kind sc_robots_kind(const struct sc_robots *r);
/* Whether a URL's path and query ("/a/b?c=d"; "" means "/"; a fragment is
 * ignored) may be fetched.  Pass the URL's path and query as they are on
 * the wire (curl_url_get CURLUPART_PATH and CURLUPART_QUERY). */
bool sc_robots_allowed(const struct sc_robots *r, const char *path_and_query);
/* sc_robots_allowed, and *rule (when rule is not NULL) set to the pattern
 * of the rule that decided (normalised, owned by r), or NULL when no rule
 * did (no match, a disallow-all, /robots.txt). */
bool sc_robots_match(const struct sc_robots *r, const char *path_and_query, const char **rule);
/* sc_robots_match, and for a refused path the record's message in why (cut
 * to whylen, NUL-terminated): "disallowed by robots.txt rule \"Disallow:
 * PATTERN\"" when a rule decided, else sc_robots_why's.  The message
 * sc-fetch --robots and sc-render --robots give. */
bool sc_robots_check(const struct sc_robots *r, const char *path_and_query, char *why,
                     size_t whylen);
/* Why a refused path is refused, for the record's message: the reason of a
 * disallow-all, else "disallowed by robots.txt".  Static or owned by r. */
const char *sc_robots_why(const struct sc_robots *r);
/* The Crawl-delay in seconds, or -1 when the chosen groups have none. */
double sc_robots_crawl_delay(const struct sc_robots *r);
/* The Sitemap URLs; *count is set.  Owned by r. */
const char *const *sc_robots_sitemaps(const struct sc_robots *r, size_t *count);
/* The number of rules chosen for the agent (for metrics and tests). */
size_t sc_robots_rule_count(const struct sc_robots *r);

/* Splits an absolute http or https URL into the origin robots.txt belongs
 * to, "scheme://host:port" (sc_url_origin's key, web/url.h: the key of the
 * per-origin state and of the cache), and the path
 * and query to ask sc_robots_allowed about ("/" when the path is empty).
 * Both malloced.  0, or -1 (not an absolute http/https URL) with both NULL.
 * The robots.txt URL is then origin + "/robots.txt". */
int sc_robots_split_url(const char *url, char **origin, char **path_and_query);

/* Normalises a path or pattern's percent-encoding as described above into
 * a malloced string (exposed for tests and the URL canonicaliser). */
char *sc_robots_normalize(const char *s, size_t len);

/* The cache across runs (--robots-cache FILE)
 *
 * An SQLite file keyed by origin ("https://example.com:443") holding, per
 * origin, when the robots.txt was fetched (ms since the epoch), the HTTP
 * status (the outcome class) and the body (at most SC_ROBOTS_MAX_BYTES).
 * An entry is fresh for SC_ROBOTS_CACHE_TTL_MS (24 hours, RFC 9309 section
 * 2.4); the clock is the caller's `now` so tests can move it.  The file is
 * in WAL mode with a busy timeout, and every write is one transaction, so
 * processes sharing it (make -j) neither corrupt it nor fail on a lock.
 * An entry may name the archive (a WARC file, by absolute path) that
 * holds the capture of the robots.txt it came from: a run that archives
 * asks for entries whose archive is still there, so that an archive
 * removed (a chunk killed and redone) takes its rules with it, and the
 * robots.txt is fetched, and archived, again (issue 30). */
#define SC_ROBOTS_CACHE_TTL_MS (24LL * 3600 * 1000)

struct sc_robots_cache; /* opaque; one per thread */

/* Opens or creates the file.  NULL with the reason in err (may be NULL)
 * on failure. */
struct sc_robots_cache *sc_robots_cache_open(const char *path, char *err, size_t errlen);
void sc_robots_cache_close(struct sc_robots_cache *c);

/* Looks the origin up: 1 when an entry fetched in (now - TTL, now] is
 * there (*status, *body (malloced, NUL-terminated), *len set), 0 when none
 * is or it is stale, -1 with the reason in err (may be NULL) on a
 * database error. */
int sc_robots_cache_get(struct sc_robots_cache *c, const char *origin, int64_t now_ms, long *status,
                        char **body, size_t *len, char *err, size_t errlen);
/* From now on, lookups find only entries that name an archive which is
 * on disk (a run with --warc: what its rules came from is in an archive). */
void sc_robots_cache_want_archived(struct sc_robots_cache *c);
/* Stores (replaces) the origin's entry.  Only answers that say something
 * about the site are stored: 2xx, 3xx and 4xx other than 429.  An
 * unreachable robots.txt holds for the run only (issue #11), so for those
 * statuses nothing is written and the old entry is left as it was.
 * archive (borrowed; may be NULL: none) is the file that holds the
 * robots.txt's capture.  0, or -1 with the reason in err (may be NULL). */
int sc_robots_cache_put(struct sc_robots_cache *c, const char *origin, int64_t now_ms, long status,
                        const char *body, size_t len, const char *archive, char *err,
                        size_t errlen);

#endif
