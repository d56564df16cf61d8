#!/usr/bin/env bats
# The retry behaviour of sc-fetch, end to end against the fixture server:
# which outcomes are retried and how often, Retry-After and the origin
# pause, slots given back while waiting, the jitter bounds under --seed, and
# the run-wide retry budget.  Requests are counted on the server (/stats,
# /log), not inferred from the records.
# 127.0.0.1:PORT and localhost:PORT are two origins of the one server; /log
# tells them apart by Host.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'

bats_require_minimum_version 1.5.0

# Short backoffs, so that retried tests stay fast.
FAST=(--retry-base 10 --retry-max 40)

setup_file() {
	sc_server_start
}

teardown_file() {
	sc_server_stop
}

setup() {
	sc_server_reset
	LOCAL="http://localhost:$SC_PORT"
}

# How many requests the server saw for a path (without its query).
requests_for() {
	sc_server_stats ".paths[\"$1\"] // 0"
}

# Fetches the URLs given as arguments (one record each) with the options in
# the array OPTS; the records land in $output, the metrics in $stderr.
fetch() {
	printf '%s\n' "$@" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch "${OPTS[@]}" <"$BATS_TEST_TMPDIR/urls"
}

# ---- option errors first ----

@test "retry options out of range are usage errors that name the option" {
	for bad in "--retries -1" "--retries 101" "--retries x" "--retry-base 0" \
		"--retry-max 0" "--retry-max-wait -1" "--retry-budget -5" "--seed -1"; do
		read -r opt arg <<<"$bad"
		run -2 --separate-stderr sc-fetch "$opt" "$arg" </dev/null
		[[ $stderr == *"$opt"* ]] || fail "$bad: the message does not name $opt: $stderr"
		[[ $stderr == *"Try 'sc-fetch --help'"* ]] || fail "$bad: no hint: $stderr"
		[ -z "$output" ] || fail "$bad wrote records: $output"
	done
}

@test "--retry-max below --retry-base is refused by name" {
	run -2 --separate-stderr sc-fetch --retry-base 1000 --retry-max 10 </dev/null
	[[ $stderr == *"--retry-max"*"--retry-base"* ]] || fail "$stderr"
}

# ---- how often ----

@test "/flaky failing K times below the limit succeeds after exactly K+1 requests" {
	OPTS=(-q "${FAST[@]}" --retries 3)
	fetch "$SC_BASE/flaky/k2?fail=2" "$SC_BASE/flaky/k3?fail=3"
	assert_equal "$status" 0
	run -0 jq -sc 'sort_by(.url) | map([.ok, .status, .attempts])' <<<"$output"
	assert_output '[[true,200,3],[true,200,4]]'
	assert_equal "$(requests_for /flaky/k2)" 3
	assert_equal "$(requests_for /flaky/k3)" 4
}

@test "/flaky failing K times at or above the limit ends 503 with attempts = the limit" {
	OPTS=(-q "${FAST[@]}" --retries 2)
	fetch "$SC_BASE/flaky/at?fail=3" "$SC_BASE/flaky/above?fail=9"
	assert_equal "$status" 3
	run -0 jq -sc 'map([.ok, .status, .attempts, .error.kind])' <<<"$output"
	assert_output '[[false,503,3,"http"],[false,503,3,"http"]]'
	assert_equal "$(requests_for /flaky/at)" 3
	assert_equal "$(requests_for /flaky/above)" 3
}

@test "--retries 0 makes one request, even for a 503 with a huge Retry-After" {
	OPTS=(-q --retries 0)
	fetch "$SC_BASE/flaky/once?fail=1&retry_after=3600"
	assert_equal "$status" 3
	run -0 jq -c '[.status, .attempts, .error.kind]' <<<"$output"
	assert_output '[503,1,"http"]'
	assert_equal "$(requests_for /flaky/once)" 1
}

@test "a 404 is requested exactly once" {
	OPTS=(-q "${FAST[@]}" --retries 3)
	fetch "$SC_BASE/status/404"
	assert_equal "$status" 3
	run -0 jq -c '[.status, .attempts, .error.kind]' <<<"$output"
	assert_output '[404,1,"http"]'
	assert_equal "$(requests_for /status/404)" 1
}

@test "the status table: 408 429 500 502 503 504 are retried, other failures are not" {
	OPTS=(-q --retry-base 1 --retry-max 2 --retries 1 -c 4)
	fetch "$SC_BASE"/status/{408,429,500,502,503,504,400,401,403,404,410,418,501,505}
	assert_equal "$status" 3
	for code in 408 429 500 502 503 504; do
		assert_equal "$code:$(requests_for /status/$code)" "$code:2"
	done
	for code in 400 401 403 404 410 418 501 505; do
		assert_equal "$code:$(requests_for /status/$code)" "$code:1"
	done
	run -0 jq -sc 'map(select(.attempts != (if (.status|tostring|test("^(408|429|500|502|503|504)$")) then 2 else 1 end)))' <<<"$output"
	assert_output '[]'
}

@test "connect, network and timeout errors are retried" {
	# Port 1 on the loopback: nothing listens, the connection is refused.
	OPTS=(-q "${FAST[@]}" --retries 2 -m 0.3)
	fetch "http://127.0.0.1:1/" "$SC_BASE/reset" "$SC_BASE/hang"
	assert_equal "$status" 3
	run -0 jq -sc 'map([.error.kind, .attempts])' <<<"$output"
	assert_output '[["connect",3],["network",3],["timeout",3]]'
	assert_equal "$(requests_for /reset)" 3
	assert_equal "$(requests_for /hang)" 3
}

@test "a too_large body and a redirect loop are not retried" {
	OPTS=(-q "${FAST[@]}" --retries 2 --max-bytes 100)
	fetch "$SC_BASE/big/5000"
	run -0 jq -c '[.error.kind, .attempts]' <<<"$output"
	assert_output '["too_large",1]'
	assert_equal "$(requests_for /big/5000)" 1
	OPTS=(-q "${FAST[@]}" --retries 2 --max-redirs 2)
	fetch "$SC_BASE/redirect-loop"
	run -0 jq -c '[.error.kind, .attempts]' <<<"$output"
	assert_output '["too_many_redirects",1]'
	assert_equal "$(requests_for /redirect-loop)" 3
}

@test "a retried request is sent again with its method and body" {
	OPTS=(-q "${FAST[@]}")
	fetch "{\"url\":\"$SC_BASE/flaky/post?fail=1\",\"request\":{\"method\":\"POST\",\"body\":\"x=1\"}}"
	assert_equal "$status" 0
	run -0 jq -c '[.ok, .attempts]' <<<"$output"
	assert_output '[true,2]'
	run -0 sc_server_log '[.[] | select(.path | startswith("/flaky/post")) | .method]'
	assert_output '["POST","POST"]'
}

@test "the record's history lists every attempt" {
	OPTS=(-q "${FAST[@]}" --retries 3)
	fetch "$SC_BASE/flaky/hist?fail=2&status=502"
	record=$output
	run -0 jq -c '[.history[] | [.attempt, .status, .error]]' <<<"$record"
	assert_output '[[1,502,"http"],[2,502,"http"],[3,200,null]]'
	run -0 jq -c '[.history[0].wait_ms, (.history[1:][] | .wait_ms <= 40)]' <<<"$record"
	assert_output '[0,true,true]'
}

@test "the history tells where a retry's time went: its backoff, then the origin's block (queue_ms)" {
	# One at a time: a 503 (retried after a backoff of at most 300 ms),
	# then, while that retry waits, a 429 with Retry-After: 2 on the same
	# origin, which blocks it: the retry spends most of 2 s in its queue.
	OPTS=(-c 1 --retry-base 300 --retry-max 300 --metrics "$BATS_TEST_TMPDIR/metrics")
	fetch "$SC_BASE/flaky/held?fail=1&status=503" "$SC_BASE/flaky/blocker?fail=1&status=429&retry_after=2"
	held=$(jq -c 'select(.url | contains("/held"))' <<<"$output")
	run -0 jq -c '[.ok, .attempts, (.history | map(has("wait_ms") and has("queue_ms") and has("latency_ms")) | all)]' <<<"$held"
	assert_output '[true,2,true]'
	run -0 jq -c '.history[1] | [.wait_ms <= 300, .queue_ms >= 1500]' <<<"$held"
	assert_output '[true,true]' || fail "the retry's history: $(jq -c .history <<<"$held")"
	# elapsed_ms is accounted for: the first attempt's latency, then the
	# wait, the queue and the latency of the second, within the loop's turns.
	run -0 jq -c '(.elapsed_ms - .history[0].latency_ms - (.history[1] | .wait_ms + .queue_ms + .latency_ms)) | fabs < 100' <<<"$held"
	assert_output true || fail "not accounted for: $(jq -c '[.elapsed_ms, .history]' <<<"$held")"
	# The metrics line's timing.queue_ms is the same figure.
	run -0 jq -sc --arg url "$SC_BASE/flaky/held?fail=1&status=503" \
		'[.[] | select(.event == "request" and .attempt == 2 and (.url == $url)) | .timing.queue_ms]' \
		"$BATS_TEST_TMPDIR/metrics"
	assert_output "[$(jq '.history[1].queue_ms' <<<"$held")]"
}

# ---- Retry-After, the origin pause, the slots ----

@test "a 429 with Retry-After: 2 waits at least 2 s, pauses its origin only, then succeeds" {
	# The rate-limited URL first, then pages of the same origin and slow
	# transfers to the other origin (localhost), interleaved.
	urls=("$SC_BASE/ratelimit/r2?after=2")
	for i in 1 2 3 4 5 6; do
		urls+=("$SC_BASE/page/$i" "$LOCAL/delay/400?n=$i")
	done
	OPTS=(-q -c 3)
	fetch "${urls[@]}"
	assert_equal "$status" 0
	assert_equal "$(wc -l <<<"$output")" 13
	run -0 jq -c 'select(.url | contains("/ratelimit/")) | [.ok, .attempts]' <<<"$output"
	assert_output '[true,2]'

	sc_server_log >"$BATS_TEST_TMPDIR/log"
	t429=$(jq '[.[] | select(.path | startswith("/ratelimit/"))][0].t_ms' "$BATS_TEST_TMPDIR/log")
	t200=$(jq '[.[] | select(.path | startswith("/ratelimit/"))][1].t_ms' "$BATS_TEST_TMPDIR/log")
	# At least the 2 s asked for (the server measures both ends).
	jq -en "$t200 - $t429 >= 1999" >/dev/null || fail "retried after $(jq -n "$t200 - $t429") ms"
	# Nothing reached 127.0.0.1 while it was paused (a request already on the
	# wire when the 429 arrived may land just after it: 250 ms of slack) ...
	run -0 jq -c --arg host "127.0.0.1:$SC_PORT" --argjson a "$t429" --argjson b "$t200" \
		'[.[] | select(.host == $host and .t_ms > $a + 250 and .t_ms < $b)]' "$BATS_TEST_TMPDIR/log"
	assert_output '[]'
	# ... while transfers to localhost kept going.
	during=$(jq --arg host "localhost:$SC_PORT" --argjson a "$t429" --argjson b "$t200" \
		'[.[] | select(.host == $host and .t_ms > $a and .t_ms < $b)] | length' "$BATS_TEST_TMPDIR/log")
	((during >= 2)) || fail "only $during requests to localhost during the pause"
}

@test "a 429 with an HTTP-date Retry-After is honoured too" {
	# The server's date is 2 s after a whole second in [t-1, t], so the
	# first wait is 1..2 s.  (Whether the next attempt succeeds depends on
	# the fixture's whole-second rounding, so it is not asserted here.)
	OPTS=(-q --retries 1)
	fetch "$SC_BASE/ratelimit/rd?after=2&date=1"
	run -0 jq -c '[.history[0].status, .history[1].wait_ms >= 900, .history[1].wait_ms <= 2100]' <<<"$output"
	assert_output '[429,true,true]'
	run -0 sc_server_log '[.[] | .t_ms] | .[1] - .[0] >= 900'
	assert_output true
}

@test "a 503 with Retry-After gives back its slot: at -c 1 the URLs behind it complete first" {
	# --no-adaptive: by default a 503's Retry-After now holds its whole
	# origin, these URLs' too (test/sc-fetch-pace.bats); the slot is still
	# given back to other origins.
	OPTS=(-q -c 1 --no-adaptive)
	fetch "$SC_BASE/flaky/slot?fail=1&retry_after=1" "$SC_BASE/page/1" "$SC_BASE/page/2" "$SC_BASE/page/3"
	assert_equal "$status" 0
	run -0 jq -sc 'map(.url | sub(".*/"; ""))' <<<"$output"
	assert_output '["1","2","3","slot?fail=1&retry_after=1"]'
	run -0 sc_server_log '[.[] | .path | sub("\\?.*"; "")]'
	assert_output '["/flaky/slot","/page/1","/page/2","/page/3","/flaky/slot"]'
}

@test "a Retry-After beyond --retry-max-wait ends as rate_limited at once" {
	OPTS=(-q "${FAST[@]}" --retries 3)
	start=$SECONDS
	fetch "$SC_BASE/flaky/far?fail=5&status=429&retry_after=3600" \
		"$SC_BASE/ratelimit/fardate?after=3600&date=1"
	assert_equal "$status" 3
	((SECONDS - start < 10)) || fail "took $((SECONDS - start)) s"
	run -0 jq -sc 'map([.status, .attempts, .error.kind])' <<<"$output"
	assert_output '[[429,1,"rate_limited"],[429,1,"rate_limited"]]'
	assert_equal "$(requests_for /flaky/far)" 1

	OPTS=(-q --retry-max-wait 1)
	fetch "$SC_BASE/flaky/over?fail=1&retry_after=2"
	run -0 jq -c '[.status, .attempts, .error.kind]' <<<"$output"
	assert_output '[503,1,"rate_limited"]'
}

# ---- the schedule ----

@test "the backoff schedule stays inside its jitter bounds under --seed, and repeats with it" {
	# One URL failing 5 times (one URL, so that the draws come in one order):
	# the waits before attempts 2..6 are drawn from [0, 100], [0, 200],
	# [0, 400], [0, 400], [0, 400] (base 100, cap 400).
	schedule() {
		sc_server_reset
		OPTS=(-q --retries 5 --retry-base 100 --retry-max 400 --seed "$1")
		fetch "$SC_BASE/flaky/jitter?fail=5"
		jq -c 'select(.ok and .attempts == 6) | [.history[1:][] | .wait_ms]' <<<"$output"
	}
	a=$(schedule 7)
	b=$(schedule 7)
	c=$(schedule 8)
	# Within the bounds (a wait kept by a timer may end a little late: 40 ms).
	run -0 jq -nc --argjson a "$a" --argjson b "$c" '[$a, $b][] | length == 5 and
		(.[0] >= 0 and .[0] <= 140) and (.[1] >= 0 and .[1] <= 240) and
		([.[2:][] | . >= 0 and . <= 440] | all)'
	assert_output $'true\ntrue'
	# The same seed gives the same schedule, another seed another.
	run -0 jq -nc --argjson a "$a" --argjson b "$b" --argjson c "$c" '
		[range(0; 5) | (($a[.] - $b[.]) | fabs) < 30] | all,
		([range(0; 5) | (($a[.] - $c[.]) | fabs) >= 30] | any)'
	assert_output $'true\ntrue'
}

# ---- the budget ----

@test "the retry budget bounds the total retries when everything fails" {
	# 60 URLs that always fail, --retries 2: without a budget 180 requests.
	# Within the 10 s window the budget allows max(10, 20% of 60) = 12 retries.
	# --no-adaptive: a paced origin's 503s spend no budget (the pace bounds
	# them, and gives up on an origin that refuses everything).
	OPTS=(-q -c 20 --retry-base 1 --retry-max 5 --retries 2 --no-adaptive)
	fetch $(for i in $(seq 60); do echo "$SC_BASE/status/503?i=$i"; done)
	assert_equal "$status" 3
	assert_equal "$(wc -l <<<"$output")" 60
	total=$(requests_for /status/503)
	((total >= 70 && total <= 72)) || fail "$total requests for 60 URLs"
	attempts=$(jq -s 'map(.attempts) | add' <<<"$output")
	assert_equal "$attempts" "$total"

	# --retry-budget 100: one retry per first attempt, 60 at most.
	sc_server_reset
	OPTS=(-q -c 20 --retry-base 1 --retry-max 5 --retries 2 --retry-budget 100 --no-adaptive)
	fetch $(for i in $(seq 60); do echo "$SC_BASE/status/503?i=$i"; done)
	total=$(requests_for /status/503)
	((total >= 110 && total <= 120)) || fail "$total requests for 60 URLs at 100%"
}
