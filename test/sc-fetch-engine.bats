#!/usr/bin/env bats
# sc-fetch's engine against the fixture server: the concurrency cap (seen
# from the server's /stats), per-host caps and fairness, rates and delays
# (from the arrival times in /log), output order, metrics, shutdown, and
# memory that does not grow with the number of URLs.  Timing bounds are
# generous: the machines are shared.
# Run alone, after the other files (test/README.md): rates, gaps and
# latencies are measured here, and other suites' load would shift them.
# bats file_tags=serial

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'

bats_require_minimum_version 1.5.0

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

# urls N PATH: N distinct URLs PATH?n=I (one per line) on the 127.0.0.1 origin.
urls() {
	local i
	for ((i = 1; i <= $1; i++)); do echo "$SC_BASE$2?n=$i"; done
}

# The spread (ms) between the first and last arrival in /log matching a path prefix.
arrival_span() {
	sc_server_log "[.[] | select(.path | startswith(\"$1\")) | .t_ms] | (max - min)"
}

# ---- the cap ----

@test "-c is never exceeded and is reached under load (-c 1, 5, 20, 200)" {
	for c in 1 5 20 200; do
		sc_server_reset
		n=$((c * 3))
		[ "$c" -eq 1 ] && n=4
		urls "$n" /delay/150 >"$BATS_TEST_TMPDIR/urls"
		run --separate-stderr sc-fetch -q -c "$c" <"$BATS_TEST_TMPDIR/urls"
		assert_success
		assert_equal "$(wc -l <<<"$output")" "$n"
		stats=$(sc_server_stats)
		jq -e --argjson c "$c" '.max_inflight == $c and .max_connections <= $c' <<<"$stats" ||
			fail "-c $c: $stats"
	done
}

@test "--per-host caps one origin, and its queue does not hold up other origins" {
	# 12 slow URLs on one origin first, then 12 fast ones on another.
	{
		urls 12 /delay/300
		for i in $(seq 12); do echo "$LOCAL/page/$i"; done
	} >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q -c 10 --per-host 2 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	assert_equal "$(wc -l <<<"$output")" 24
	# The slow origin ran at most 2 at a time: 12 x 300 ms / 2 >= 1.8 s of arrivals.
	span=$(arrival_span /delay/)
	jq -e -n "$span >= 1400" || fail "slow origin spread over only $span ms"
	# The fast origin was not queued behind it: all 12 of its records are
	# among the first 14 written.
	first=$(head -n 14 <<<"$output" | jq -s "map(select(.url | startswith(\"$LOCAL\"))) | length")
	assert_equal "$first" 12
	# At most 2 slow + 2 fast at once.
	sc_server_stats '.max_inflight <= 4' | grep -q true
}

@test "--per-host alone on one origin holds the server at that many" {
	urls 8 /delay/100 >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q -c 20 --per-host 3 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	assert_equal "$(sc_server_stats .max_inflight)" 3
}

# ---- rates and delays ----

@test "--rate spaces requests globally" {
	urls 16 /page/1 >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q -c 10 --rate 10 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	# 16 requests at 10/s: the first at 0, the last near 1.5 s.
	span=$(arrival_span /page/)
	jq -e -n "$span >= 1300 and $span <= 3500" || fail "span $span ms"
}

@test "--host-rate limits each origin separately" {
	{
		urls 8 /page/1
		for i in $(seq 8); do echo "$LOCAL/page/2?n=$i"; done
	} >"$BATS_TEST_TMPDIR/urls"
	start=$(date +%s%N)
	run --separate-stderr sc-fetch -q -c 10 --host-rate 10 <"$BATS_TEST_TMPDIR/urls"
	elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
	assert_success
	for p in /page/1 /page/2; do
		span=$(arrival_span "$p")
		jq -e -n "$span >= 600" || fail "$p spread over $span ms"
	done
	# The two origins ran side by side, not one after the other (8 at 10/s each).
	(( elapsed < 1400 + 2000 )) || fail "took $elapsed ms"
}

@test "--delay keeps a minimum gap between requests to one origin" {
	urls 5 /page/3 >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q -c 5 --delay 200 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	gaps=$(sc_server_log '[.[] | select(.path | startswith("/page/3")) | .t_ms] | sort
		| [range(1; length) as $i | .[$i] - .[$i - 1]] | min')
	# Measured where the server reads each request: the first may spend a
	# connect on the way and a loaded machine adds its own jitter, so the
	# bound is generous; without --delay the gaps are well under 50 ms.
	jq -e -n "$gaps >= 170" || fail "smallest gap $gaps ms"
}

# ---- output order ----

@test "records are written as transfers complete, never behind a slow one" {
	printf '%s\n' "$SC_BASE/delay/1500" "$SC_BASE/page/1" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q <"$BATS_TEST_TMPDIR/urls"
	assert_success
	assert_equal "$(head -n1 <<<"$output" | jq -r .url)" "$SC_BASE/page/1"
}

@test "--keep-order writes records in input order" {
	for ms in 400 10 250 0 100 300 5 50; do echo "$SC_BASE/delay/$ms"; done >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q --keep-order <"$BATS_TEST_TMPDIR/urls"
	assert_success
	diff <(jq -r .url <<<"$output") "$BATS_TEST_TMPDIR/urls"
}

@test "--keep-order keeps bad_input and blocked records in their places" {
	printf '%s\n' "$SC_BASE/delay/200" "{oops" "ftp://x/" "$SC_BASE/page/1" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q --keep-order --retries 0 <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(jq -c '[.ok, .error.kind]' <<<"$output" | tr '\n' ' ')" \
		'[true,null] [false,"bad_input"] [false,"blocked_scheme"] [true,null] '
}

# ---- metrics ----

@test "every stderr line is JSON: a request line per attempt and a summary" {
	{ urls 5 /page/1; echo "$SC_BASE/status/404"; } >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch --retries 0 <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	while IFS= read -r line; do
		jq -e . <<<"$line" >/dev/null || fail "not JSON: $line"
	done <<<"$stderr"
	assert_equal "$(jq -s 'map(select(.event == "request")) | length' <<<"$stderr")" 6
	jq -e -s 'map(select(.event == "request"))
		| all(has("ts") and has("url") and has("status") and has("latency_ms")
		      and has("bytes") and has("attempt") and has("error") and has("wait_ms")
		      and (.timing | has("dns_ms") and has("connect_ms") and has("tls_ms")
		           and has("ttfb_ms") and has("total_ms") and has("queue_ms")))' <<<"$stderr"
	jq -e -s 'map(select(.event == "summary")) | length == 1 and (.[0]
		| .final and .records == 6 and .ok == 5 and .requests == 6
		and .status["2xx"] == 5 and .status["4xx"] == 1 and .errors.http == 1
		and .bytes > 0 and .rps > 0 and (.latency_ms | has("p50") and has("p95") and has("p99") and has("max"))
		and .hosts[0].host == "http://127.0.0.1:'"$SC_PORT"'" and .hosts[0].requests == 6)' <<<"$stderr"
}

@test "credentials and headers never appear in the metrics" {
	url="http://alice:s3cret@127.0.0.1:$SC_PORT/page/1"
	run --separate-stderr sc-fetch -H 'Authorization: Bearer tok3n' -H 'Cookie: sid=c00kie' <<<"$url"
	assert_success
	[[ $stderr != *s3cret* && $stderr != *alice* ]] || fail "$stderr"
	[[ $stderr != *tok3n* && $stderr != *c00kie* ]] || fail "$stderr"
	jq -e -s --arg u "http://127.0.0.1:$SC_PORT/page/1" 'map(select(.event == "request"))[0].url == $u' <<<"$stderr"
	# The record keeps the URL as the user gave it.
	jq -e --arg u "$url" '.url == $u' <<<"$output"
}

@test "-q keeps only the summary; --metrics sends the lines to a file" {
	urls 3 /page/1 >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q <"$BATS_TEST_TMPDIR/urls"
	assert_success
	assert_equal "$(wc -l <<<"$stderr")" 1
	jq -e '.event == "summary"' <<<"$stderr"
	run --separate-stderr sc-fetch --metrics "$BATS_TEST_TMPDIR/m.jsonl" <"$BATS_TEST_TMPDIR/urls"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -s 'map(.event) | sort' -c <"$BATS_TEST_TMPDIR/m.jsonl")" \
		'["request","request","request","summary"]'
}

@test "summary percentiles agree with known /delay/MS latencies" {
	{ urls 18 /delay/100; urls 2 /delay/600; } >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q -c 20 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	jq -e '.latency_ms | .p50 >= 98 and .p50 < 200 and .p95 >= 590 and .p95 < 800
		and .max >= 598 and .max < 800' <<<"$stderr" || fail "$stderr"
}

@test "--stats-every writes interim summaries during the run" {
	urls 6 /delay/300 >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q -c 2 --stats-every 0.2 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	jq -e -s 'map(select(.event == "summary" and .final == false)) | length >= 3' <<<"$stderr"
	jq -e -s 'map(select(.event == "summary")) | last | .final' <<<"$stderr"
}

@test "--progress draws nothing when stderr is not a terminal" {
	urls 3 /page/1 >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q --progress <"$BATS_TEST_TMPDIR/urls"
	assert_success
	assert_equal "$(wc -l <<<"$stderr")" 1
	[[ $stderr != *$'\r'* ]] || fail "progress drawn into a pipe"
}

@test "--progress on a terminal: the program's name, counts against the input's lines, cleared before the summary" {
	command -v script >/dev/null || skip "script(1) is not installed"
	urls 40 /delay/100 >"$BATS_TEST_TMPDIR/urls"
	# script(1) gives sc-fetch a terminal for stderr; the records go to a file.
	run script -qec "sc-fetch -q -c 4 --progress <'$BATS_TEST_TMPDIR/urls' >'$BATS_TEST_TMPDIR/out'" /dev/null
	assert_success
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/out")" 40
	[[ $output == *$'\r\e[Ksc-fetch: '*'/40 done, '*' in flight, '*' req/s, 0 not ok'* ]] ||
		fail "no progress line: $output"
	# The line is cleared before the summary, which starts a line of its own.
	[[ $output == *$'\r\e[K{"event":"summary"'* ]] || fail "progress not cleared: $output"
}

# ---- shutdown ----

# run_and_signal SIG AFTER OPTIONS...: sc-fetch with input that stays open,
# signalled after AFTER seconds; sets status, elapsed (ms since the signal),
# out and err (files).
run_and_signal() {
	local sig=$1 after=$2
	shift 2
	out=$BATS_TEST_TMPDIR/out err=$BATS_TEST_TMPDIR/err
	mkfifo "$BATS_TEST_TMPDIR/in"
	sc-fetch "$@" <"$BATS_TEST_TMPDIR/in" >"$out" 2>"$err" &
	local pid=$!
	exec 5>"$BATS_TEST_TMPDIR/in"
	urls 40 /delay/600 >&5
	sleep "$after"
	local t0
	t0=$(date +%s%N)
	kill "-$sig" "$pid"
	status=0
	wait "$pid" || status=$?
	elapsed=$(( ($(date +%s%N) - t0) / 1000000 ))
	exec 5>&-
}

@test "SIGINT: in-flight transfers finish within --grace, the rest are cancelled, exit 130" {
	run_and_signal INT 0.3 -q -c 4 --grace 5
	assert_equal "$status" 130
	# Every record is whole JSON, and the summary counts exactly them.
	n=$(jq -s length <"$out")
	jq -e --argjson n "$n" '.records == $n and .final' <"$err"
	# The 4 in flight completed; whatever had been read ahead was cancelled.
	assert_equal "$(jq -s 'map(select(.ok)) | length' <"$out")" 4
	jq -e -s 'map(select(.ok | not)) | all(.error.kind == "cancelled")' <"$out"
	(( n > 4 )) || fail "no read-ahead record was cancelled ($n records)"
	(( elapsed < 3000 )) || fail "took $elapsed ms after the signal"
}

@test "SIGTERM after --grace aborts what is in flight as cancelled, exit 143" {
	run_and_signal TERM 0.3 -q -c 4 --grace 0.1
	assert_equal "$status" 143
	n=$(jq -s length <"$out")
	jq -e --argjson n "$n" '.records == $n' <"$err"
	jq -e -s 'length > 0 and all(.error.kind == "cancelled")' <"$out"
	(( elapsed < 1500 )) || fail "took $elapsed ms after the signal"
}

@test "a second signal exits at once, with whole records only" {
	out=$BATS_TEST_TMPDIR/out
	mkfifo "$BATS_TEST_TMPDIR/in"
	sc-fetch -q -c 4 --grace 30 <"$BATS_TEST_TMPDIR/in" >"$out" 2>/dev/null &
	pid=$!
	exec 5>"$BATS_TEST_TMPDIR/in"
	{ urls 4 /page/1; urls 4 /hang; } >&5
	sleep 0.5
	kill -INT "$pid"
	sleep 0.2
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
	exec 5>&-
	assert_equal "$status" 130
	# The four pages completed before; each is a whole line.
	assert_equal "$(jq -s 'map(select(.ok)) | length' <"$out")" 4
}

# ---- memory ----

@test "peak memory does not grow with the number of URLs" {
	[[ ${SANITIZE:-} == 1 ]] && skip "ASan's quarantine keeps freed memory"
	peak() {
		urls "$1" /status/204 >"$BATS_TEST_TMPDIR/urls"
		/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss" sc-fetch -q -c 20 \
			<"$BATS_TEST_TMPDIR/urls" >/dev/null 2>&1
		cat "$BATS_TEST_TMPDIR/rss"
	}
	small=$(peak 500)
	large=$(peak 10000)
	# Allow noise, not growth: 20 times the URLs within 25% more RSS.
	(( large * 4 <= small * 5 )) || fail "500 URLs: $small KB, 10000 URLs: $large KB"
}
