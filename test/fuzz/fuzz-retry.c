/* libFuzzer target: Retry-After and HTTP-date parsing (lib/retry.c,
 * sc_retry_after_ms).
 *
 * The input's first byte picks a mode.  Mode 0: the rest is a header
 * value as a server might send it; the promise is no crash, and a result
 * that is -1 (malformed) or 0..LLONG_MAX/2; and a value of digits between
 * optional spaces and tabs is delta-seconds, exactly.  Modes 1-3: the rest
 * picks the fields of a valid date, written as an IMF-fixdate, an RFC 850
 * date or an asctime date; the promise is the exact distance to it (0 for
 * a date in the past).  RFC 850 years are picked where every reading of a
 * two-digit year agrees (RFC 9110's 50-year rule and the older 70 pivot). */
#include <limits.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "web/retry.h"

#define HUGE_MS (LLONG_MAX / 2)

/* 2026-11-30T12:00:00Z: a fixed "now", so that a failure replays. */
static const int64_t now_ms = 1796040000000LL;

static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *const long_days[] = { "Sunday",   "Monday", "Tuesday", "Wednesday",
	                                 "Thursday", "Friday", "Saturday" };
static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

static void check_raw(const uint8_t *data, size_t size)
{
	char *value = strndup((const char *)data, size);
	long long ms = sc_retry_after_ms(value, now_ms);

	if (ms < -1 || ms > HUGE_MS)
		fuzz_fail("Retry-After %s gave %lld", value, ms);
	const char *p = value + strspn(value, " \t");
	size_t digits = strspn(p, "0123456789");
	if (digits > 0 && p[digits + strspn(p + digits, " \t")] == '\0') {
		long long want = 0;
		for (size_t i = 0; i < digits && want <= HUGE_MS / 1000; i++)
			want = want * 10 + (p[i] - '0');
		want = want > HUGE_MS / 1000 ? HUGE_MS : want * 1000;
		if (ms != want)
			fuzz_fail("delta-seconds %s gave %lld, not %lld", value, ms, want);
	}
	free(value);
}

static void check_date(int mode, const uint8_t *d, size_t n)
{
	uint8_t b[8] = { 0 };
	char value[64];

	memcpy(b, d, n < sizeof(b) ? n : sizeof(b));
	struct tm tm = { .tm_year = 1900 + (b[0] | b[1] << 8) % 600 - 1900, /* 1900..2499 */
		         .tm_mon = b[2] % 12,
		         .tm_mday = 1 + b[3] % 31,
		         .tm_hour = b[4] % 24,
		         .tm_min = b[5] % 60,
		         .tm_sec = b[6] % 60 };
	if (mode == 2) { /* two-digit years read alike by every rule */
		int yy = b[0] % 50;
		tm.tm_year = yy < 27 ? 100 + yy : 77 + yy % 23;
	}
	time_t t = timegm(&tm); /* normalises an impossible day: 31 Feb is 3 Mar */
	gmtime_r(&t, &tm);
	switch (mode) {
	case 1:
		if (strftime(value, sizeof(value), "%a, %d %b %Y %H:%M:%S GMT", &tm) == 0)
			fuzz_fail("strftime: no room");
		break;
	case 2:
		snprintf(value, sizeof(value), "%s, %02d-%s-%02d %02d:%02d:%02d GMT",
		         long_days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year % 100,
		         tm.tm_hour, tm.tm_min, tm.tm_sec);
		break;
	default:
		snprintf(value, sizeof(value), "%s %s %2d %02d:%02d:%02d %d", days[tm.tm_wday],
		         months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		         tm.tm_year + 1900);
		break;
	}
	long long want = (long long)t * 1000 <= now_ms ? 0 : (long long)t * 1000 - now_ms;
	long long ms = sc_retry_after_ms(value, now_ms);
	if (ms != want)
		fuzz_fail("HTTP-date \"%s\" gave %lld, not %lld", value, ms, want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] % 4 == 0)
		check_raw(data + 1, size - 1);
	else
		check_date(data[0] % 4, data + 1, size - 1);
	return 0;
}
