/* retry: which outcomes are retried, when, and how many retries a run may spend.
 *
 * The policy is plain data (the fetch options fill it in); the state holds
 * what a run accumulates: the jitter generator and the retry budget's
 * sliding window.  The caller owns the waiting: sc_retry_decide only says
 * whether and after how long.  Nothing here prints or sleeps, and nothing
 * here is thread-safe: one state belongs to one event loop. */
#ifndef SC_RETRY_H
#define SC_RETRY_H

#include <stdbool.h>
#include <stdint.h>

struct sc_retry_policy {
	int retries;       /* attempts allowed after the first (--retries, default 2) */
	long base_ms;      /* backoff base (--retry-base, default 500) */
	long max_ms;       /* backoff cap (--retry-max, default 30000) */
	long max_wait_ms;  /* longest Retry-After honoured (--retry-max-wait, default 60000) */
	double budget_pct; /* retries as a share of first attempts (--retry-budget, default 20) */
	int budget_floor;  /* retries always allowed per window (10) */
	long window_ms;    /* the budget's sliding window (10000) */
	uint64_t seed;     /* jitter seed (--seed); 0 = seed from time and pid */
	bool paced;        /* the caller paces each origin from its answers (sc-fetch's
	                      --adaptive): retries of 429 and 503 spend no budget */
};
void sc_retry_policy_defaults(struct sc_retry_policy *p);

/* The defaults, for option parsers and usage texts. */
#define SC_RETRY_DEFAULT_RETRIES 2
#define SC_RETRY_DEFAULT_BASE_MS 500L
#define SC_RETRY_DEFAULT_MAX_MS 30000L
#define SC_RETRY_DEFAULT_MAX_WAIT_MS 60000L
#define SC_RETRY_DEFAULT_BUDGET_PCT 20.0
#define SC_RETRY_DEFAULT_BUDGET_FLOOR 10
#define SC_RETRY_DEFAULT_WINDOW_MS 10000L

/* True for transient outcomes: HTTP 408, 429, 500, 502, 503, 504; error kinds
 * timeout, connect (refused/unreachable), network (reset, cut short).
 * Permanent: other statuses, tls, blocked_scheme, too_large, bad_input, dns,
 * too_many_redirects, rate_limited, validation, internal.  status is the HTTP
 * status or 0; kind is an enum sc_error_kind, or -1 when the attempt was ok.
 * (A 'cancelled' record is retried by sc-retry; the engine never retries a
 * cancellation itself: that is the caller's business.) */
bool sc_retry_is_transient(long status, int kind);

/* Parses a Retry-After value (delta-seconds, or an IMF-fixdate / RFC 850 /
 * asctime HTTP-date) into milliseconds from now (now_wall_ms = ms since the
 * epoch).  Returns -1 when value is NULL or malformed; a date in the past is
 * 0; overflow-safe (huge values clamp to LLONG_MAX/2). */
long long sc_retry_after_ms(const char *value, int64_t now_wall_ms);

struct sc_retry_state; /* the jitter RNG and the budget window; opaque */
/* p is copied; NULL means the defaults.  Caller frees with _free. */
struct sc_retry_state *sc_retry_state_new(const struct sc_retry_policy *p);
void sc_retry_state_free(struct sc_retry_state *s);

/* The seed the jitter generator actually started from (policy.seed, or the
 * one drawn from time and pid): worth logging so a run can be replayed. */
uint64_t sc_retry_state_seed(const struct sc_retry_state *s);

/* Full-jitter exponential backoff before retry number n (1 = first retry):
 * uniform in [0, min(max_ms, base_ms * 2^(n-1))].  Deterministic for a seed. */
long long sc_retry_backoff_ms(struct sc_retry_state *s, int n);

/* Counts a first attempt into the budget window (call at every first attempt). */
void sc_retry_note_first_attempt(struct sc_retry_state *s, double now_ms);

enum sc_retry_verdict {
	SC_RETRY_DONE,         /* ok, or permanent: the record is final as it is */
	SC_RETRY_AGAIN,        /* retry after delay_ms */
	SC_RETRY_EXHAUSTED,    /* transient, but the attempts are used up: final as it is */
	SC_RETRY_BUDGET_SPENT, /* transient, but the retry budget refused: final as it is */
	SC_RETRY_RATE_LIMITED  /* Retry-After beyond max_wait_ms: final, error kind rate_limited */
};
/* "done", "again", "exhausted", "budget_spent", "rate_limited" (for metrics). */
const char *sc_retry_verdict_name(enum sc_retry_verdict v);

struct sc_retry_decision {
	enum sc_retry_verdict verdict;
	long long delay_ms; /* for SC_RETRY_AGAIN: Retry-After when given (429/503), else backoff;
	                           for SC_RETRY_RATE_LIMITED: the Retry-After that was refused */
	bool pause_origin;  /* a 429: pause the whole origin (scheme://host:port) for delay_ms */
};

/* Decides what follows an attempt.  attempts_made counts this one (1 after the
 * first).  max_attempts = 1 + retries for sc-fetch; sc-retry passes
 * attempts-already-in-the-record + 1 + retries.  An AGAIN verdict spends one
 * retry from the budget (sliding window over window_ms: allowed while
 * retries_in_window < max(budget_floor, budget_pct% of first attempts in window)).
 *
 * The checks run in this order: permanent (or ok) → DONE; attempts used up →
 * EXHAUSTED (so `--retries 0` leaves a 429 as the http record it was, for
 * sc-retry to take up); Retry-After (429 or 503) beyond max_wait_ms →
 * RATE_LIMITED, without spending budget; budget refused → BUDGET_SPENT;
 * otherwise AGAIN.  A Retry-After that does not parse is ignored (backoff). */
struct sc_retry_decision sc_retry_decide(struct sc_retry_state *s, int attempts_made,
                                         int max_attempts, long status, int kind,
                                         const char *retry_after, double now_ms,
                                         int64_t now_wall_ms);

#endif
