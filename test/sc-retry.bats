#!/usr/bin/env bats
# sc-retry: what passes through (byte for byte), what is fetched again and
# how (attempts accumulated, the request re-sent, --retries as "N more"),
# the count contract, the exit statuses, the drain after SIGINT.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'

bats_require_minimum_version 1.5.0

FAST=(--retry-base 10 --retry-max 40)

setup_file() {
	sc_server_start
}

teardown_file() {
	sc_server_stop
}

setup() {
	sc_server_reset
}

requests_for() {
	sc_server_stats ".paths[\"$1\"] // 0"
}

# A failed fetch record for URL: failed URL STATUS KIND ATTEMPTS [EXTRA-JSON-MEMBERS]
failed() {
	printf '{"url":"%s","final_url":"%s","status":%s,"ok":false,"content_type":"text/plain","bytes":3,"attempts":%s,"history":[],"elapsed_ms":1.5,"fetched_at":"2026-11-28T10:00:00.000Z","body":"old","error":{"kind":"%s","message":"earlier"}%s}\n' \
		"$1" "$1" "$2" "$4" "$3" "${5:+,$5}"
}

# ---- usage errors first ----

@test "--retries 0 is refused: sc-retry makes N more attempts, N >= 1" {
	run -2 --separate-stderr sc-retry --retries 0 </dev/null
	[[ $stderr == *"--retries"* ]] || fail "$stderr"
	[[ $stderr == *"Try 'sc-retry --help'"* ]] || fail "$stderr"
	[ -z "$output" ]
}

@test "bad fetch options are refused by the shared parser, by name" {
	run -2 --separate-stderr sc-retry -c 0 </dev/null
	[[ $stderr == *"--concurrency"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-retry --retries 101 </dev/null
	[[ $stderr == *"--retries"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-retry --retry-base 100 --retry-max 10 </dev/null
	[[ $stderr == *"--retry-max"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-retry --metrics '' </dev/null
	[[ $stderr == *"--metrics"* ]] || fail "$stderr"
}

@test "an operand is a usage error: records come on standard input" {
	run -2 --separate-stderr sc-retry results.jsonl </dev/null
	[[ $stderr == *"results.jsonl"* ]] || fail "$stderr"
}

@test "--help prints the SYNOPSIS, with every option of the man page" {
	run -0 sc-retry --help
	assert_line --index 0 --partial "usage: sc-retry"
	for opt in $(grep -o '^\.Op Fl Fl [a-z-]*' "$BATS_TEST_DIRNAME/../man/sc-retry.1" | awk '{print $4}'); do
		[[ $output == *"--$opt"* ]] || fail "--help lacks --$opt"
	done
}

@test "a write error on standard output is exit 1" {
	run -1 --separate-stderr bash -c "printf '%s\n' '{\"url\":\"x\",\"ok\":true}' | sc-retry -q >/dev/full"
	[[ $stderr == *"sc-retry: "* ]] || fail "$stderr"
}

# ---- what passes through ----

@test "ok records and permanent failures pass through byte for byte, unfetched" {
	cat >"$BATS_TEST_TMPDIR/in" <<EOF
{"url":"$SC_BASE/page/1",  "ok":true, "status":200,"attempts":1, "x":1.50, "t":"caf\u00e9"}
{"ok":true,"url":"$SC_BASE/page/2","body":"<p>\"quoted\"</p>","n":1e3}
$(failed "$SC_BASE/status/404" 404 http 1)
$(failed "http://no-such-host.invalid/" null dns 3)
$(failed "ftp://example.invalid/x" null blocked_scheme 0)
{"url":null,"ok":false,"status":null,"error":{"kind":"bad_input","message":"no url"},"line":3,"raw":"x"}
EOF
	run -0 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
	# The same bytes, in the same order.
	diff <(printf '%s\n' "$output") "$BATS_TEST_TMPDIR/in" || fail "not byte for byte"
	assert_equal "$(sc_server_stats .requests)" 0
}

@test "passed-through failures do not change the exit status (they are data)" {
	failed "$SC_BASE/status/404" 404 http 1 >"$BATS_TEST_TMPDIR/in"
	run -0 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
}

@test "a CRLF line passes through without its CR, the rest unchanged" {
	printf '{"url":"u","ok":true, "a" : 1}\r\n' >"$BATS_TEST_TMPDIR/in"
	run -0 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
	assert_output '{"url":"u","ok":true, "a" : 1}'
}

# ---- what is fetched again ----

@test "a transient failure is fetched again: attempts accumulate, history grows, members kept" {
	failed "$SC_BASE/flaky/t1?fail=1" 503 http 2 '"id":42,"history":[{"attempt":1},{"attempt":2}]' |
		sed 's/"history":\[\],//' >"$BATS_TEST_TMPDIR/in"
	run -0 --separate-stderr sc-retry -q "${FAST[@]}" <"$BATS_TEST_TMPDIR/in"
	run -0 jq -c '[.ok, .status, .attempts, (.history | length), .id, has("error"), .body]' <<<"$output"
	assert_output '[true,200,4,4,42,false,"flaky success after 1 failures\n"]'
	assert_equal "$(requests_for /flaky/t1)" 2
}

@test "every transient kind is fetched again: timeout, connect, network, 5xx, 429, cancelled, rate_limited" {
	{
		failed "$SC_BASE/page/1" null timeout 3
		failed "$SC_BASE/page/2" null connect 3
		failed "$SC_BASE/page/3" 200 network 3
		failed "$SC_BASE/page/4" 502 http 3
		failed "$SC_BASE/page/5" 429 http 3
		failed "$SC_BASE/page/6" null cancelled 1
		failed "$SC_BASE/page/7" 408 http 1
		failed "$SC_BASE/page/8" 429 rate_limited 1
	} >"$BATS_TEST_TMPDIR/in"
	run -0 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
	run -0 jq -sc 'map([.ok, .attempts]) | unique' <<<"$output"
	# Each was fetched once more, and nothing else happened.
	assert_output '[[true,2],[true,4]]'
	assert_equal "$(sc_server_stats .requests)" 8
}

@test "--retries N allows up to N more attempts per failed record" {
	failed "$SC_BASE/flaky/n3?fail=10" 503 http 2 >"$BATS_TEST_TMPDIR/in"
	run -3 --separate-stderr sc-retry -q "${FAST[@]}" --retries 3 <"$BATS_TEST_TMPDIR/in"
	run -0 jq -c '[.ok, .status, .attempts, .error.kind]' <<<"$output"
	assert_output '[false,503,5,"http"]'
	assert_equal "$(requests_for /flaky/n3)" 3

	# The default is 2 more.
	sc_server_reset
	failed "$SC_BASE/flaky/n2?fail=10" 503 http 1 >"$BATS_TEST_TMPDIR/in"
	run -3 --separate-stderr sc-retry -q "${FAST[@]}" <"$BATS_TEST_TMPDIR/in"
	assert_equal "$(requests_for /flaky/n2)" 2
}

@test "the record's request is sent again: method, headers and body" {
	failed "$SC_BASE/echo" 503 http 1 '"request":{"method":"PUT","headers":{"X-Sc-Test":"yes"},"body":"hello"}' >"$BATS_TEST_TMPDIR/in"
	run -0 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
	record=$output
	run -0 jq -c '.request.method' <<<"$record"
	assert_output '"PUT"'
	run -0 jq -r '.body | fromjson | [.method, .body, (.headers | to_entries[] | select(.key | ascii_downcase == "x-sc-test") | .value)] | join(" ")' <<<"$record"
	assert_output "PUT hello yes"
}

@test "a failed body_base64 does not survive a success with a text body" {
	failed "$SC_BASE/page/9" 503 http 1 '"body_base64":"AAAA"' | sed 's/"body":"old",//' >"$BATS_TEST_TMPDIR/in"
	run -0 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
	run -0 jq -c '[has("body"), has("body_base64"), has("error"), .ok]' <<<"$output"
	assert_output '[true,false,false,true]'
}

@test "a record still failing after its new attempts makes the exit status 3" {
	failed "$SC_BASE/status/500" 500 http 1 >"$BATS_TEST_TMPDIR/in"
	run -3 --separate-stderr sc-retry -q "${FAST[@]}" <"$BATS_TEST_TMPDIR/in"
	run -0 jq -c '[.status, .attempts]' <<<"$output"
	assert_output '[500,3]'
}

@test "a retryable record gets the same Retry-After handling: beyond the cap it is rate_limited" {
	failed "$SC_BASE/flaky/far?fail=5&status=429&retry_after=3600" 429 http 1 >"$BATS_TEST_TMPDIR/in"
	run -3 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
	run -0 jq -c '[.status, .attempts, .error.kind]' <<<"$output"
	assert_output '[429,2,"rate_limited"]'
}

# ---- the count contract ----

@test "one record per input record: blank lines none, malformed lines a bad_input record each" {
	{
		echo '{"url":"u1","ok":true}'
		echo
		echo 'not json'
		echo '   '
		echo '["an","array"]'
		echo '{"url":"u2"}'
		failed "$SC_BASE/page/1" 503 http 1
	} >"$BATS_TEST_TMPDIR/in"
	run -3 --separate-stderr sc-retry -q <"$BATS_TEST_TMPDIR/in"
	records=$output
	assert_equal "$(wc -l <<<"$records")" 5
	run -0 jq -sc 'map(.error.kind // "ok")' <<<"$records"
	assert_output '["ok","bad_input","bad_input","bad_input","ok"]'
	run -0 jq -sc 'map([.line, .url])' <<<"$records"
	assert_output '[[null,"u1"],[3,null],[5,null],[6,"u2"],[null,"'"$SC_BASE"'/page/1"]]'
	[[ $stderr == *"sc-retry: <stdin>:3: not valid JSON"* ]] || fail "$stderr"
	[[ $stderr == *"sc-retry: <stdin>:5: not a JSON object"* ]] || fail "$stderr"
	[[ $stderr == *"sc-retry: <stdin>:6: not a fetch record"* ]] || fail "$stderr"
}

@test "--keep-order writes the records in input order" {
	{
		failed "$SC_BASE/delay/300" 503 http 1
		echo '{"url":"u1","ok":true}'
		failed "$SC_BASE/page/1" 503 http 1
		echo '{"url":"u2","ok":true}'
	} >"$BATS_TEST_TMPDIR/in"
	run -0 --separate-stderr sc-retry -q --keep-order <"$BATS_TEST_TMPDIR/in"
	run -0 jq -sc 'map(.url | sub(".*/"; ""))' <<<"$output"
	assert_output '["300","u1","1","u2"]'
}

@test "sc-fetch --retries 0 | sc-retry: the failures are retried, the count holds" {
	{
		echo "$SC_BASE/flaky/p1?fail=1"
		echo "$SC_BASE/flaky/p2?fail=2"
		echo "$SC_BASE/status/404"
		echo "$SC_BASE/page/1"
	} | sc-fetch -q --retries 0 >"$BATS_TEST_TMPDIR/in" 2>/dev/null || true
	run -0 --separate-stderr sc-retry -q "${FAST[@]}" --keep-order <"$BATS_TEST_TMPDIR/in"
	run -0 jq -sc 'map([.ok, .status, .attempts])' <<<"$output"
	assert_output '[[true,200,2],[true,200,3],[false,404,1],[true,200,1]]'
	assert_equal "$(requests_for /flaky/p2)" 3
	assert_equal "$(requests_for /status/404)" 1
}

# ---- signals ----

@test "after SIGINT sc-retry starts no fetch but reads its input to the end and writes every record" {
	mkfifo "$BATS_TEST_TMPDIR/in"
	sc-retry -q --grace 5 <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	exec 4>"$BATS_TEST_TMPDIR/in"
	echo '{"url":"before","ok":true}' >&4
	failed "$SC_BASE/delay/1500" 503 http 1 >&4
	sleep 0.5
	kill -INT "$pid"
	sleep 0.3
	# What an sc-fetch before it would write while draining:
	echo '{"url":"after","ok":true}' >&4
	failed "$SC_BASE/page/1" 503 http 1 >&4
	exec 4>&-
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 130
	run -0 jq -sc 'map([(.url | sub(".*/"; "")), .ok, .attempts]) | sort' "$BATS_TEST_TMPDIR/out"
	# The fetch in flight finished within --grace; the record after the
	# signal passed through as it came, unfetched.
	assert_output '[["1",false,1],["1500",true,2],["after",true,null],["before",true,null]]'
	assert_equal "$(requests_for /page/1)" 0
	assert_equal "$(requests_for /delay/1500)" 1
}
