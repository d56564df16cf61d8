#include "web/retry.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "record/record.h"

/* What a Retry-After of any size clamps to: far beyond any sane cap, and
 * still safe to add to a clock. */
#define RETRY_AFTER_HUGE (LLONG_MAX / 2)

/* The budget window is kept as a ring of buckets, so its memory is fixed
 * however many requests a run makes; the window slides in steps of
 * window_ms / WINDOW_BUCKETS. */
#define WINDOW_BUCKETS 100

struct sc_retry_state {
	struct sc_retry_policy policy;
	uint64_t seed;
	uint64_t rng[4]; /* xoshiro256** */

	double bucket_ms;
	bool started;
	int64_t head; /* index of the newest bucket */
	uint32_t firsts[WINDOW_BUCKETS];
	uint32_t retries[WINDOW_BUCKETS];
	uint64_t firsts_in_window, retries_in_window;
};

void sc_retry_policy_defaults(struct sc_retry_policy *p)
{
	*p = (struct sc_retry_policy){
		.retries = SC_RETRY_DEFAULT_RETRIES,
		.base_ms = SC_RETRY_DEFAULT_BASE_MS,
		.max_ms = SC_RETRY_DEFAULT_MAX_MS,
		.max_wait_ms = SC_RETRY_DEFAULT_MAX_WAIT_MS,
		.budget_pct = SC_RETRY_DEFAULT_BUDGET_PCT,
		.budget_floor = SC_RETRY_DEFAULT_BUDGET_FLOOR,
		.window_ms = SC_RETRY_DEFAULT_WINDOW_MS,
		.seed = 0,
	};
}

/* ---- the transient/permanent table ---- */

static bool status_is_transient(long status)
{
	switch (status) {
	case 408: /* Request Timeout */
	case 429: /* Too Many Requests */
	case 500: /* Internal Server Error */
	case 502: /* Bad Gateway */
	case 503: /* Service Unavailable */
	case 504: /* Gateway Timeout */
		return true;
	default:
		return false;
	}
}

bool sc_retry_is_transient(long status, int kind)
{
	switch (kind) {
	case SC_ERR_TIMEOUT:
	case SC_ERR_CONNECT:
	case SC_ERR_NETWORK:
		return true;
	case -1: /* ok: its status is 2xx, which the table calls final */
	case SC_ERR_HTTP:
		return status_is_transient(status);
	default:
		return false;
	}
}

/* ---- Retry-After (RFC 9110 section 10.2.3) ---- */

static const char *skip_ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Reads exactly n digits. */
static bool fixed_digits(const char **pp, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		unsigned char c = (unsigned char)(*pp)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*pp += n;
	*out = v;
	return true;
}

static bool literal(const char **pp, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*pp, lit, n) != 0)
		return false;
	*pp += n;
	return true;
}

/* A month name (three letters); 1..12, or 0. */
static int month_number(const char **pp)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

	for (int m = 0; m < 12; m++)
		if (strncasecmp(*pp, names + 3 * m, 3) == 0) {
			*pp += 3;
			return m + 1;
		}
	return 0;
}

/* A day name, short ("Sun") or long ("Sunday"); the weekday itself is not
 * checked against the date, as a mismatch tells us nothing useful. */
static bool day_name(const char **pp)
{
	static const char *const names[] = { "Monday", "Tuesday",  "Wednesday", "Thursday",
		                             "Friday", "Saturday", "Sunday" };

	for (int d = 0; d < 7; d++) {
		size_t len = strlen(names[d]);
		if (strncasecmp(*pp, names[d], len) == 0) {
			*pp += len;
			return true;
		}
	}
	for (int d = 0; d < 7; d++)
		if (strncasecmp(*pp, names[d], 3) == 0) {
			*pp += 3;
			return true;
		}
	return false;
}

/* "HH:MM:SS" into seconds of the day. */
static bool time_of_day(const char **pp, int *secs)
{
	int h, m, s;

	if (!fixed_digits(pp, 2, &h) || !literal(pp, ":") || !fixed_digits(pp, 2, &m) ||
	    !literal(pp, ":") || !fixed_digits(pp, 2, &s))
		return false;
	if (h > 23 || m > 59 || s > 60) /* 60: a leap second */
		return false;
	*secs = h * 3600 + m * 60 + s;
	return true;
}

static bool is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static bool valid_date(int y, int m, int d)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (m < 1 || m > 12 || d < 1)
		return false;
	return d <= mdays[m - 1] + (m == 2 && is_leap(y));
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil), without timegm's dependence on time_t and TZ. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int year_of(int64_t wall_ms)
{
	int64_t days = wall_ms / 86400000;
	/* Close enough for a two-digit-year pivot. */
	return (int)(1970 + days * 400 / 146097);
}

/* An HTTP-date in any of its three forms, into ms since the epoch.
 *
 * Why not curl_getdate(): it is a lenient parser for any date found on the
 * web, which is right for cookies and wrong for Retry-After.  It accepts 12
 * of the 19 malformed values test-retry.c rejects ("UTC" for "GMT", text
 * after the date, 31 Feb, one-digit days and hours, a missing weekday or
 * comma, ...), cannot give year 1000 (its -1 is also a valid time), and
 * pivots two-digit years at 1970 rather than RFC 9110's "50 years ahead".
 * It is also slower: on 3 million dates of the three forms, 0.22 s here
 * against 1.7 s (about 75 ns against 580 ns a date), same results on every
 * valid date. */
static bool http_date_ms(const char *p, int64_t now_wall_ms, int64_t *out)
{
	int day, month, year, secs;

	if (!day_name(&p))
		return false;
	if (*p == ',') {
		/* IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" or
		 * RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT" */
		p++;
		if (!literal(&p, " ") || !fixed_digits(&p, 2, &day))
			return false;
		if (*p == ' ') {
			p++;
			if (!(month = month_number(&p)) || !literal(&p, " ") ||
			    !fixed_digits(&p, 4, &year))
				return false;
		} else if (*p == '-') {
			p++;
			if (!(month = month_number(&p)) || !literal(&p, "-") ||
			    !fixed_digits(&p, 2, &year))
				return false;
			/* RFC 9110: a two-digit year more than 50 years in the
			 * future is the most recent past year with those digits. */
			int now_year = year_of(now_wall_ms);
			year += now_year / 100 * 100;
			if (year > now_year + 50)
				year -= 100;
		} else {
			return false;
		}
		if (!literal(&p, " ") || !time_of_day(&p, &secs) || !literal(&p, " GMT"))
			return false;
	} else if (*p == ' ') {
		/* asctime "Sun Nov  6 08:49:37 1994" */
		p++;
		if (!(month = month_number(&p)) || !literal(&p, " "))
			return false;
		if (*p == ' ') {
			p++;
			if (!fixed_digits(&p, 1, &day))
				return false;
		} else if (!fixed_digits(&p, 2, &day)) {
			return false;
		}
		if (!literal(&p, " ") || !time_of_day(&p, &secs) || !literal(&p, " ") ||
		    !fixed_digits(&p, 4, &year))
			return false;
	} else {
		return false;
	}
	if (*skip_ows(p) != '\0' || !valid_date(year, month, day))
		return false;
	*out = (days_from_civil(year, month, day) * 86400 + secs) * 1000;
	return true;
}

long long sc_retry_after_ms(const char *value, int64_t now_wall_ms)
{
	if (!value)
		return -1;
	const char *p = skip_ows(value);

	if (*p >= '0' && *p <= '9') {
		/* delta-seconds: 1*DIGIT, however many digits */
		long long secs = 0;
		bool huge = false;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (secs > RETRY_AFTER_HUGE / 1000 / 10)
				huge = true;
			else
				secs = secs * 10 + (*p - '0');
		}
		if (*skip_ows(p) != '\0')
			return -1;
		if (huge || secs > RETRY_AFTER_HUGE / 1000)
			return RETRY_AFTER_HUGE;
		return secs * 1000;
	}

	int64_t when;
	if (!http_date_ms(p, now_wall_ms, &when))
		return -1;
	if (when <= now_wall_ms)
		return 0;
	/* when is within years 0..9999, so only an absurd now can overflow. */
	if (now_wall_ms < when - RETRY_AFTER_HUGE)
		return RETRY_AFTER_HUGE;
	return when - now_wall_ms;
}

/* ---- the jitter generator: xoshiro256**, seeded through splitmix64 ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(uint64_t s[4])
{
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, hi], without modulo bias. */
static long long rng_uniform(uint64_t s[4], long long hi)
{
	if (hi <= 0)
		return 0;
	uint64_t range = (uint64_t)hi + 1;
	uint64_t threshold = -range % range;
	uint64_t x;

	do
		x = rng_next(s);
	while (x < threshold);
	return (long long)(x % range);
}

static uint64_t seed_from_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t seed = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
	                ((uint64_t)getpid() << 32);
	return seed ? seed : 1;
}

struct sc_retry_state *sc_retry_state_new(const struct sc_retry_policy *p)
{
	struct sc_retry_state *s = sc_calloc(1, sizeof(*s));

	if (p)
		s->policy = *p;
	else
		sc_retry_policy_defaults(&s->policy);
	s->seed = s->policy.seed ? s->policy.seed : seed_from_clock();
	uint64_t x = s->seed;
	for (int i = 0; i < 4; i++)
		s->rng[i] = splitmix64(&x);
	long window = s->policy.window_ms > 0 ? s->policy.window_ms : 1;
	s->bucket_ms = (double)window / WINDOW_BUCKETS;
	return s;
}

void sc_retry_state_free(struct sc_retry_state *s)
{
	free(s);
}

uint64_t sc_retry_state_seed(const struct sc_retry_state *s)
{
	return s->seed;
}

long long sc_retry_backoff_ms(struct sc_retry_state *s, int n)
{
	long long base = s->policy.base_ms > 0 ? s->policy.base_ms : 0;
	long long cap = s->policy.max_ms > 0 ? s->policy.max_ms : 0;
	int shift = n > 1 ? n - 1 : 0;
	long long ceiling;

	/* base * 2^shift, computed only where it cannot overflow */
	if (shift >= 62 || base > (cap >> shift))
		ceiling = cap;
	else
		ceiling = base << shift;
	return rng_uniform(s->rng, ceiling);
}

/* ---- the retry budget ---- */

/* Moves the window's head to now, emptying the buckets that fell out.
 * Returns the bucket that now belongs to. */
static int window_advance(struct sc_retry_state *s, double now_ms)
{
	int64_t idx = (int64_t)floor(now_ms / s->bucket_ms);

	if (!s->started) {
		s->started = true;
		s->head = idx;
	} else if (idx > s->head) {
		int64_t gone = idx - s->head;
		if (gone >= WINDOW_BUCKETS) {
			memset(s->firsts, 0, sizeof(s->firsts));
			memset(s->retries, 0, sizeof(s->retries));
			s->firsts_in_window = s->retries_in_window = 0;
		} else {
			for (int64_t i = s->head + 1; i <= idx; i++) {
				int b = (int)(((i % WINDOW_BUCKETS) + WINDOW_BUCKETS) %
				              WINDOW_BUCKETS);
				s->firsts_in_window -= s->firsts[b];
				s->retries_in_window -= s->retries[b];
				s->firsts[b] = s->retries[b] = 0;
			}
		}
		s->head = idx;
	}
	/* A clock read a little earlier than the last one counts as now. */
	return (int)(((s->head % WINDOW_BUCKETS) + WINDOW_BUCKETS) % WINDOW_BUCKETS);
}

void sc_retry_note_first_attempt(struct sc_retry_state *s, double now_ms)
{
	int b = window_advance(s, now_ms);

	s->firsts[b]++;
	s->firsts_in_window++;
}

static bool budget_allows(struct sc_retry_state *s, double now_ms)
{
	window_advance(s, now_ms);
	double pct = s->policy.budget_pct > 0 ? s->policy.budget_pct : 0;
	double share = floor(pct * (double)s->firsts_in_window / 100.0);
	double floor_n = s->policy.budget_floor > 0 ? s->policy.budget_floor : 0;
	double allowed = share > floor_n ? share : floor_n;

	return (double)s->retries_in_window < allowed;
}

static void budget_spend(struct sc_retry_state *s, double now_ms)
{
	int b = window_advance(s, now_ms);

	s->retries[b]++;
	s->retries_in_window++;
}

/* ---- the decision ---- */

const char *sc_retry_verdict_name(enum sc_retry_verdict v)
{
	switch (v) {
	case SC_RETRY_DONE:
		return "done";
	case SC_RETRY_AGAIN:
		return "again";
	case SC_RETRY_EXHAUSTED:
		return "exhausted";
	case SC_RETRY_BUDGET_SPENT:
		return "budget_spent";
	case SC_RETRY_RATE_LIMITED:
		return "rate_limited";
	}
	return "unknown";
}

struct sc_retry_decision sc_retry_decide(struct sc_retry_state *s, int attempts_made,
                                         int max_attempts, long status, int kind,
                                         const char *retry_after, double now_ms,
                                         int64_t now_wall_ms)
{
	struct sc_retry_decision d = { .verdict = SC_RETRY_DONE };

	if (!sc_retry_is_transient(status, kind))
		return d;
	if (attempts_made >= max_attempts) {
		d.verdict = SC_RETRY_EXHAUSTED;
		return d;
	}

	/* Only the statuses that define Retry-After have it honoured; on a 3xx
	 * it would mean something else, on other errors it is noise. */
	long long wait = -1;
	if (status == 429 || status == 503)
		wait = sc_retry_after_ms(retry_after, now_wall_ms);
	if (wait > s->policy.max_wait_ms) {
		d.verdict = SC_RETRY_RATE_LIMITED;
		d.delay_ms = wait;
		return d;
	}
	/* A server's "slow down" retried under a paced origin cannot pile up:
	 * the pace bounds what reaches it, so the budget is not spent on it. */
	bool paced = s->policy.paced && (status == 429 || status == 503);
	if (!paced && !budget_allows(s, now_ms)) {
		d.verdict = SC_RETRY_BUDGET_SPENT;
		return d;
	}
	if (!paced)
		budget_spend(s, now_ms);
	d.verdict = SC_RETRY_AGAIN;
	d.delay_ms = wait >= 0 ? wait : sc_retry_backoff_ms(s, attempts_made);
	/* Paced, a bare 429 is the pace's to answer (it narrows at once); a
	 * Retry-After still holds the whole origin. */
	d.pause_origin = status == 429 && (!s->policy.paced || wait >= 0);
	return d;
}
