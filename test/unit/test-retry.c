/* Unit tests for lib/retry: the transient table, backoff and its jitter,
 * Retry-After in all its forms, the retry budget, and the decisions. */
#include <limits.h>
#include <stdlib.h>
#include <time.h>

#include "record/record.h"
#include "tap.h"
#include "web/retry.h"

/* Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date, in ms. */
#define RFC_EXAMPLE_MS 784111777000LL

static struct sc_retry_policy policy_with_seed(uint64_t seed)
{
	struct sc_retry_policy p;

	sc_retry_policy_defaults(&p);
	p.seed = seed;
	return p;
}

static void test_defaults(void)
{
	struct sc_retry_policy p;

	sc_retry_policy_defaults(&p);
	is_int(p.retries, 2, "default retries 2");
	is_int(p.base_ms, 500, "default backoff base 500 ms");
	is_int(p.max_ms, 30000, "default backoff cap 30 s");
	is_int(p.max_wait_ms, 60000, "default Retry-After cap 60 s");
	ok(p.budget_pct == 20.0, "default budget 20%%");
	is_int(p.budget_floor, 10, "default budget floor 10");
	is_int(p.window_ms, 10000, "default window 10 s");
	is_int(p.seed, 0, "default seed 0 (from time and pid)");
}

static void test_transient_table(void)
{
	static const long transient[] = { 408, 429, 500, 502, 503, 504 };
	static const long permanent[] = { 200, 204, 301, 304, 400, 401, 403, 404,
		                          405, 410, 418, 451, 501, 505, 511, 599 };

	for (size_t i = 0; i < sizeof(transient) / sizeof(*transient); i++)
		ok(sc_retry_is_transient(transient[i], SC_ERR_HTTP), "HTTP %ld is transient",
		   transient[i]);
	for (size_t i = 0; i < sizeof(permanent) / sizeof(*permanent); i++)
		ok(!sc_retry_is_transient(permanent[i], SC_ERR_HTTP), "HTTP %ld is permanent",
		   permanent[i]);

	ok(sc_retry_is_transient(0, SC_ERR_TIMEOUT), "timeout is transient");
	ok(sc_retry_is_transient(0, SC_ERR_CONNECT), "connect is transient");
	ok(sc_retry_is_transient(0, SC_ERR_NETWORK), "network is transient");
	ok(sc_retry_is_transient(200, SC_ERR_NETWORK), "a 200 cut short (network) is transient");

	static const int permanent_kinds[] = { SC_ERR_BAD_INPUT,
		                               SC_ERR_DNS,
		                               SC_ERR_TLS,
		                               SC_ERR_TOO_LARGE,
		                               SC_ERR_TOO_MANY_REDIRECTS,
		                               SC_ERR_BLOCKED_SCHEME,
		                               SC_ERR_RATE_LIMITED,
		                               SC_ERR_CANCELLED,
		                               SC_ERR_VALIDATION,
		                               SC_ERR_ROBOTS,
		                               SC_ERR_INTERNAL };
	for (size_t i = 0; i < sizeof(permanent_kinds) / sizeof(*permanent_kinds); i++) {
		int k = permanent_kinds[i];
		ok(!sc_retry_is_transient(0, k), "%s is permanent", sc_error_kind_name(k));
		ok(!sc_retry_is_transient(503, k), "%s is permanent even with status 503",
		   sc_error_kind_name(k));
	}
	ok(!sc_retry_is_transient(200, -1), "an ok attempt is final");
	ok(!sc_retry_is_transient(0, SC_ERR_KIND_COUNT), "an unknown kind is final");
}

/* The ceiling of the jitter for retry n under the defaults. */
static long long ceiling_for(const struct sc_retry_policy *p, int n)
{
	long long c = p->base_ms;

	for (int i = 1; i < n && c < p->max_ms; i++)
		c *= 2;
	return c < p->max_ms ? c : p->max_ms;
}

static void test_backoff_bounds(void)
{
	struct sc_retry_policy p = policy_with_seed(42);
	struct sc_retry_state *s = sc_retry_state_new(&p);
	enum {
		DRAWS = 400
	};

	is_int(sc_retry_state_seed(s), 42, "the state keeps the given seed");
	for (int n = 1; n <= 12; n++) {
		long long ceiling = ceiling_for(&p, n), lo = LLONG_MAX, hi = -1;
		for (int i = 0; i < DRAWS; i++) {
			long long d = sc_retry_backoff_ms(s, n);
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
		}
		ok(lo >= 0 && hi <= ceiling, "retry %d: %d draws within [0, %lld] (saw %lld..%lld)",
		   n, DRAWS, ceiling, lo, hi);
		/* Full jitter spreads over the whole range, not a corner of it. */
		ok(lo < ceiling / 10 && hi > ceiling * 9 / 10,
		   "retry %d: the draws spread over the range", n);
	}
	ok(ceiling_for(&p, 7) == 30000, "from retry 7 the cap (30 s) is the ceiling");

	long long big = -1;
	for (int i = 0; i < DRAWS; i++) {
		long long d = sc_retry_backoff_ms(s, 1000);
		big = d > big ? d : big;
	}
	ok(big >= 0 && big <= 30000, "retry 1000 does not overflow: capped at max_ms (%lld)", big);
	ok(sc_retry_backoff_ms(s, INT_MAX) <= 30000, "retry INT_MAX is capped too");
	ok(sc_retry_backoff_ms(s, 0) <= 500, "retry 0 is treated as the first");
	ok(sc_retry_backoff_ms(s, -5) <= 500, "a negative retry number is treated as the first");
	sc_retry_state_free(s);

	p.base_ms = 0;
	s = sc_retry_state_new(&p);
	is_int(sc_retry_backoff_ms(s, 5), 0, "base 0: no backoff");
	sc_retry_state_free(s);

	p = policy_with_seed(7);
	p.base_ms = 1000;
	p.max_ms = 1500;
	s = sc_retry_state_new(&p);
	long long hi = 0;
	for (int i = 0; i < DRAWS; i++) {
		long long d = sc_retry_backoff_ms(s, 2);
		hi = d > hi ? d : hi;
	}
	ok(hi <= 1500 && hi > 1350, "a cap below base*2^(n-1) is the ceiling (max %lld)", hi);
	sc_retry_state_free(s);
}

static void test_backoff_determinism(void)
{
	struct sc_retry_policy p = policy_with_seed(12345);
	struct sc_retry_state *a = sc_retry_state_new(&p);
	struct sc_retry_state *b = sc_retry_state_new(&p);
	p.seed = 12346;
	struct sc_retry_state *c = sc_retry_state_new(&p);
	int same_ab = 0, same_ac = 0;

	for (int i = 0; i < 50; i++) {
		int n = 1 + i % 6;
		long long da = sc_retry_backoff_ms(a, n), db = sc_retry_backoff_ms(b, n);
		long long dc = sc_retry_backoff_ms(c, n);
		same_ab += da == db;
		same_ac += da == dc;
	}
	is_int(same_ab, 50, "the same seed gives the same schedule");
	ok(same_ac < 5, "another seed gives another schedule (%d of 50 equal)", same_ac);
	sc_retry_state_free(a);
	sc_retry_state_free(b);
	sc_retry_state_free(c);

	p.seed = 0;
	a = sc_retry_state_new(&p);
	ok(sc_retry_state_seed(a) != 0, "seed 0 draws a seed from time and pid (%llu)",
	   (unsigned long long)sc_retry_state_seed(a));
	sc_retry_state_free(a);

	a = sc_retry_state_new(NULL);
	ok(sc_retry_backoff_ms(a, 1) <= 500, "a state from NULL has the default policy");
	sc_retry_state_free(a);
}

static void test_retry_after_seconds(void)
{
	int64_t now = RFC_EXAMPLE_MS;

	is_int(sc_retry_after_ms("120", now), 120000, "delta-seconds 120");
	is_int(sc_retry_after_ms("0", now), 0, "delta-seconds 0");
	is_int(sc_retry_after_ms("007", now), 7000, "leading zeros");
	is_int(sc_retry_after_ms(" 5\t", now), 5000, "surrounding whitespace is allowed");
	is_int(sc_retry_after_ms(NULL, now), -1, "NULL: none");
	is_int(sc_retry_after_ms("", now), -1, "empty: malformed");
	is_int(sc_retry_after_ms("   ", now), -1, "blank: malformed");
	is_int(sc_retry_after_ms("-5", now), -1, "negative: malformed");
	is_int(sc_retry_after_ms("+5", now), -1, "a plus sign: malformed");
	is_int(sc_retry_after_ms("1.5", now), -1, "a fraction: malformed");
	is_int(sc_retry_after_ms("5s", now), -1, "a unit: malformed");
	is_int(sc_retry_after_ms("5 6", now), -1, "two numbers: malformed");
	is_int(sc_retry_after_ms("soon", now), -1, "a word: malformed");
	is_int(sc_retry_after_ms("0x10", now), -1, "hexadecimal: malformed");
	is_int(sc_retry_after_ms("9223372036854775807", now), LLONG_MAX / 2,
	       "LLONG_MAX seconds clamps to LLONG_MAX/2");
	is_int(sc_retry_after_ms("99999999999999999999999999999999999999", now), LLONG_MAX / 2,
	       "38 digits clamp to LLONG_MAX/2");
	is_int(sc_retry_after_ms("4611686018427387", now), 4611686018427387000LL,
	       "the largest exact value is not clamped");
	is_int(sc_retry_after_ms("4611686018427388", now), LLONG_MAX / 2, "one more second clamps");
}

static void test_retry_after_dates(void)
{
	int64_t now = RFC_EXAMPLE_MS;

	is_int(sc_retry_after_ms("Sun, 06 Nov 1994 08:49:47 GMT", now), 10000,
	       "IMF-fixdate 10 s ahead");
	is_int(sc_retry_after_ms("Sunday, 06-Nov-94 08:49:47 GMT", now), 10000,
	       "RFC 850 date 10 s ahead");
	is_int(sc_retry_after_ms("Sun Nov  6 08:49:47 1994", now), 10000,
	       "asctime date 10 s ahead");
	is_int(sc_retry_after_ms("Sun Nov 16 08:49:37 1994", now), 10LL * 86400000,
	       "asctime with a two-digit day");
	is_int(sc_retry_after_ms("Mon, 07 Nov 1994 08:49:37 GMT", now), 86400000, "a day ahead");
	is_int(sc_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", now), 0, "now: 0");
	is_int(sc_retry_after_ms("Sun, 06 Nov 1994 08:49:36 GMT", now), 0, "a second ago: 0");
	is_int(sc_retry_after_ms("Thu, 01 Jan 1970 00:00:00 GMT", now), 0, "the epoch: 0");
	is_int(sc_retry_after_ms("Sat, 01 Jan 1000 00:00:00 GMT", now), 0, "year 1000: 0");
	is_int(sc_retry_after_ms("  Sun, 06 Nov 1994 08:49:47 GMT  ", now), 10000,
	       "surrounding whitespace is allowed");
	is_int(sc_retry_after_ms("Fri, 31 Dec 9999 23:59:59 GMT", 0), 253402300799000LL,
	       "year 9999 from the epoch");
	is_int(sc_retry_after_ms("Fri, 31 Dec 9999 23:59:59 GMT", INT64_MIN), LLONG_MAX / 2,
	       "an absurd now does not overflow");
	is_int(sc_retry_after_ms("Tue, 29 Feb 2028 00:00:00 GMT", 0), 1835395200000LL,
	       "29 February of a leap year");

	/* The date arithmetic against the C library's. */
	struct tm tm = { .tm_year = 2031 - 1900,
		         .tm_mon = 6,
		         .tm_mday = 15,
		         .tm_hour = 13,
		         .tm_min = 14,
		         .tm_sec = 15 };
	is_int(sc_retry_after_ms("Tue, 15 Jul 2031 13:14:15 GMT", 0), (long long)timegm(&tm) * 1000,
	       "agrees with timegm");

	/* RFC 850's two-digit year: within 50 years ahead, else the past century. */
	int64_t y2026 = 1767225600000LL; /* 2026-01-01 */
	is_int(sc_retry_after_ms("Thursday, 01-Jan-26 00:00:10 GMT", y2026), 10000,
	       "RFC 850 '26' in 2026 is 2026");
	ok(sc_retry_after_ms("Saturday, 01-Jan-60 00:00:00 GMT", y2026) > 0,
	   "RFC 850 '60' in 2026 is 2060 (ahead)");
	is_int(sc_retry_after_ms("Friday, 01-Jan-99 00:00:00 GMT", y2026), 0,
	       "RFC 850 '99' in 2026 is 1999 (past)");

	static const char *const garbage[] = {
		"Sun, 06 Nov 1994 08:49:37",        /* no zone */
		"Sun, 06 Nov 1994 08:49:37 UTC",    /* not GMT */
		"Sun, 06 Nov 1994 08:49:37 GMT x",  /* trailing text */
		"Sun, 06 Foo 1994 08:49:37 GMT",    /* no such month */
		"Sun, 31 Feb 1994 08:49:37 GMT",    /* no such day */
		"Sun, 29 Feb 2027 08:49:37 GMT",    /* not a leap year */
		"Sun, 00 Nov 1994 08:49:37 GMT",    /* day 0 */
		"Sun, 06 Nov 1994 24:00:00 GMT",    /* hour 24 */
		"Sun, 06 Nov 1994 08:60:00 GMT",    /* minute 60 */
		"Sun, 06 Nov 1994 08:49:61 GMT",    /* second 61 */
		"Sun, 6 Nov 1994 08:49:37 GMT",     /* one-digit day */
		"Sun, 06 Nov 94 08:49:37 GMT",      /* two-digit year in IMF */
		"Sun 06 Nov 1994 08:49:37 GMT",     /* no comma */
		"Xyz, 06 Nov 1994 08:49:37 GMT",    /* no such weekday */
		"06 Nov 1994 08:49:37 GMT",         /* no weekday */
		"Sun, 06 Nov 1994 8:49:37 GMT",     /* one-digit hour */
		"Sunday, 06-Nov-1994 08:49:37 GMT", /* four-digit year in RFC 850 */
		"Sun Nov 6 08:49:37 1994",          /* asctime with one space */
		"Sun Nov  6 08:49:37 94",           /* asctime two-digit year */
		"Sun Nov  6 08:49:37 1994 GMT",     /* asctime with a zone */
		"2026-01-01T00:00:00Z",             /* ISO 8601 is not an HTTP-date */
		"Sun,",
	};
	for (size_t i = 0; i < sizeof(garbage) / sizeof(*garbage); i++)
		is_int(sc_retry_after_ms(garbage[i], now), -1, "malformed: '%s'", garbage[i]);
}

/* Feeds first attempts and failing retries as a run where everything fails
 * would, and counts the retries the budget lets through. */
static int retries_granted(struct sc_retry_state *s, int firsts, double now_ms)
{
	int granted = 0;

	for (int i = 0; i < firsts; i++)
		sc_retry_note_first_attempt(s, now_ms);
	for (int i = 0; i < firsts; i++) {
		struct sc_retry_decision d =
		        sc_retry_decide(s, 1, 3, 503, SC_ERR_HTTP, NULL, now_ms, 0);
		granted += d.verdict == SC_RETRY_AGAIN;
	}
	return granted;
}

static void test_budget(void)
{
	struct sc_retry_policy p = policy_with_seed(1);
	struct sc_retry_state *s = sc_retry_state_new(&p);

	is_int(retries_granted(s, 5, 1000), 5, "5 first attempts: all 5 retried (under the floor)");
	sc_retry_state_free(s);

	s = sc_retry_state_new(&p);
	is_int(retries_granted(s, 30, 1000), 10, "30 first attempts: the floor, 10 retries");
	sc_retry_state_free(s);

	s = sc_retry_state_new(&p);
	is_int(retries_granted(s, 1000, 1000), 200, "1000 first attempts: 20%% = 200 retries");
	struct sc_retry_decision d = sc_retry_decide(s, 1, 3, 503, SC_ERR_HTTP, NULL, 1000, 0);
	is_int(d.verdict, SC_RETRY_BUDGET_SPENT, "then the budget refuses");
	is_str(sc_retry_verdict_name(d.verdict), "budget_spent", "named budget_spent");

	/* Half a window later, 1000 more: the window holds 2000 firsts, 200 retries. */
	is_int(retries_granted(s, 1000, 6000), 200, "half a window later, 1000 more: 200 more");
	/* When the first batch leaves the window, its firsts and retries go together. */
	is_int(retries_granted(s, 0, 11500), 0,
	       "after the first batch slid out: 1000 firsts, 200 retries: none");
	d = sc_retry_decide(s, 1, 3, 503, SC_ERR_HTTP, NULL, 11500, 0);
	is_int(d.verdict, SC_RETRY_BUDGET_SPENT, "still spent");
	/* When everything slid out, the floor is there again. */
	is_int(retries_granted(s, 0, 17000), 0, "no first attempts");
	int again = 0;
	for (int i = 0; i < 20; i++)
		again += sc_retry_decide(s, 2, 3, 503, SC_ERR_HTTP, NULL, 17000, 0).verdict ==
		         SC_RETRY_AGAIN;
	is_int(again, 10, "a window later, the floor (10) is allowed again");
	sc_retry_state_free(s);

	/* A steady run where everything fails: the total is bounded by the
	 * budget over the run, not 2 per URL. */
	s = sc_retry_state_new(&p);
	int total = 0;
	for (int t = 0; t < 60000; t += 100)
		total += retries_granted(s, 10, t); /* 100 first attempts a second */
	ok(total <= 6 * (200 + 10) && total >= 6 * 190,
	   "60 s at 100 first attempts/s: %d retries (about 20%% of 6000, not 12000)", total);
	sc_retry_state_free(s);

	p.budget_pct = 0;
	p.budget_floor = 0;
	s = sc_retry_state_new(&p);
	is_int(retries_granted(s, 100, 0), 0, "budget 0 and floor 0: no retries at all");
	sc_retry_state_free(s);

	p.budget_pct = 100;
	p.budget_floor = 0;
	s = sc_retry_state_new(&p);
	is_int(retries_granted(s, 100, 0), 100, "budget 100%%: one retry per first attempt");
	sc_retry_state_free(s);
}

static void test_decisions(void)
{
	struct sc_retry_policy p = policy_with_seed(99);
	struct sc_retry_state *s = sc_retry_state_new(&p);
	int64_t wall = RFC_EXAMPLE_MS;
	struct sc_retry_decision d;

	sc_retry_note_first_attempt(s, 0);

	d = sc_retry_decide(s, 1, 3, 200, -1, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_DONE, "ok: done");
	d = sc_retry_decide(s, 1, 3, 404, SC_ERR_HTTP, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_DONE, "404: done (permanent)");
	d = sc_retry_decide(s, 1, 3, 0, SC_ERR_DNS, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_DONE, "dns: done (permanent)");
	d = sc_retry_decide(s, 1, 3, 0, SC_ERR_CANCELLED, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_DONE, "cancelled: the engine does not retry it");

	d = sc_retry_decide(s, 1, 3, 503, SC_ERR_HTTP, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_AGAIN, "503 after the first attempt: again");
	ok(d.delay_ms >= 0 && d.delay_ms <= 500, "with the first backoff (%lld)", d.delay_ms);
	ok(!d.pause_origin, "a 503 does not pause the origin");
	d = sc_retry_decide(s, 2, 3, 0, SC_ERR_TIMEOUT, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_AGAIN, "timeout after the second attempt: again");
	ok(d.delay_ms >= 0 && d.delay_ms <= 1000, "with the second backoff (%lld)", d.delay_ms);
	d = sc_retry_decide(s, 3, 3, 503, SC_ERR_HTTP, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_EXHAUSTED, "503 after the third of 3 attempts: exhausted");
	is_str(sc_retry_verdict_name(d.verdict), "exhausted", "named exhausted");
	d = sc_retry_decide(s, 1, 1, 503, SC_ERR_HTTP, "1", 0, wall);
	is_int(d.verdict, SC_RETRY_EXHAUSTED, "--retries 0: exhausted after one");
	d = sc_retry_decide(s, 5, 7, 0, SC_ERR_CONNECT, NULL, 0, wall);
	is_int(d.verdict, SC_RETRY_AGAIN, "sc-retry's max (record's 4 + 1 + 2): again at 5");

	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "2", 0, wall);
	is_int(d.verdict, SC_RETRY_AGAIN, "429 with Retry-After 2: again");
	is_int(d.delay_ms, 2000, "after exactly the Retry-After");
	ok(d.pause_origin, "and the whole origin pauses");
	is_str(sc_retry_verdict_name(d.verdict), "again", "named again");
	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, NULL, 0, wall);
	ok(d.verdict == SC_RETRY_AGAIN && d.pause_origin && d.delay_ms <= 500,
	   "429 without Retry-After: backoff, origin paused (%lld)", d.delay_ms);
	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "Sun, 06 Nov 1994 08:49:40 GMT", 0, wall);
	ok(d.verdict == SC_RETRY_AGAIN && d.delay_ms == 3000, "429 with an HTTP-date: 3 s");
	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "whenever", 0, wall);
	ok(d.verdict == SC_RETRY_AGAIN && d.delay_ms <= 500 && d.pause_origin,
	   "429 with a malformed Retry-After: backoff instead (%lld)", d.delay_ms);
	d = sc_retry_decide(s, 1, 3, 503, SC_ERR_HTTP, "1", 0, wall);
	ok(d.verdict == SC_RETRY_AGAIN && d.delay_ms == 1000 && !d.pause_origin,
	   "503 with Retry-After 1: 1 s, origin not paused");
	d = sc_retry_decide(s, 1, 3, 500, SC_ERR_HTTP, "20", 0, wall);
	ok(d.verdict == SC_RETRY_AGAIN && d.delay_ms <= 500,
	   "500 with Retry-After: ignored, backoff (%lld)", d.delay_ms);

	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "60", 0, wall);
	ok(d.verdict == SC_RETRY_AGAIN && d.delay_ms == 60000,
	   "Retry-After equal to --retry-max-wait is honoured");
	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "61", 0, wall);
	is_int(d.verdict, SC_RETRY_RATE_LIMITED,
	       "Retry-After beyond --retry-max-wait: rate_limited");
	is_int(d.delay_ms, 61000, "the refused wait is reported");
	is_str(sc_retry_verdict_name(d.verdict), "rate_limited", "named rate_limited");
	d = sc_retry_decide(s, 1, 3, 503, SC_ERR_HTTP, "99999999999999999999", 0, wall);
	is_int(d.verdict, SC_RETRY_RATE_LIMITED, "a huge Retry-After on a 503: rate_limited");
	d = sc_retry_decide(s, 3, 3, 429, SC_ERR_HTTP, "3600", 0, wall);
	is_int(d.verdict, SC_RETRY_EXHAUSTED,
	       "attempts used up comes first: the 429 stays an http record");
	is_str(sc_retry_verdict_name(SC_RETRY_DONE), "done", "named done");
	sc_retry_state_free(s);

	/* rate_limited spends no budget: with a floor of 1, it is still there after. */
	p.budget_pct = 0;
	p.budget_floor = 1;
	s = sc_retry_state_new(&p);
	for (int i = 0; i < 5; i++)
		sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "3600", 0, wall);
	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "1", 0, wall);
	is_int(d.verdict, SC_RETRY_AGAIN, "rate_limited verdicts spend no budget");
	d = sc_retry_decide(s, 1, 3, 429, SC_ERR_HTTP, "1", 0, wall);
	is_int(d.verdict, SC_RETRY_BUDGET_SPENT, "the single retry of the floor was spent");
	sc_retry_state_free(s);

	/* The decisions' jitter is the same for the same seed. */
	p.budget_floor = 1000;
	struct sc_retry_state *a = sc_retry_state_new(&p), *b = sc_retry_state_new(&p);
	int same = 0;
	for (int i = 1; i <= 20; i++)
		same += sc_retry_decide(a, 1 + i % 4, 10, 502, SC_ERR_HTTP, NULL, i, wall)
		                .delay_ms ==
		        sc_retry_decide(b, 1 + i % 4, 10, 502, SC_ERR_HTTP, NULL, i, wall).delay_ms;
	is_int(same, 20, "decisions under one seed give one schedule");
	sc_retry_state_free(a);
	sc_retry_state_free(b);
}

int main(void)
{
	test_defaults();
	test_transient_table();
	test_backoff_bounds();
	test_backoff_determinism();
	test_retry_after_seconds();
	test_retry_after_dates();
	test_budget();
	test_decisions();
	return tap_done();
}
