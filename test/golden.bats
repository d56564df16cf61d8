#!/usr/bin/env bats
# Golden records: sc-fetch, sc-retry and the pipeline sc-fetch | sc-parse |
# sc-sink --jsonl over fixed inputs (test/golden/*.in) against the fixture
# server serving the demo site, compared byte for byte with the records the
# programs made before the engine was split (test/golden/*.out).  A change
# to any record's bytes shows here, escapes included.
#
# Only what differs from run to run is normalised: the server's port, the
# timings and the dates.  That is done on the raw lines with sed rather
# than by deleting members with jq, because jq would write every string
# again in its own escaping and hide the very bytes this test guards.  The
# summary line, which holds no text from outside, goes through jq (del).
#
# After a deliberate change of output, regenerate with
#     SC_GOLDEN_UPDATE=1 make test TESTS=test/golden.bats
# and say in the commit which lines changed and why.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/golden'

bats_require_minimum_version 1.5.0

GOLDEN="$BATS_TEST_DIRNAME/golden"

setup_file() {
	# The golden tests' site, control characters and all (lib/server.bash).
	sc_golden_site "$BATS_FILE_TMPDIR/site"
	sc_server_start --root "$BATS_FILE_TMPDIR/site"
}

teardown_file() {
	sc_server_stop
}

setup() {
	sc_server_reset
}

# The input with the server's address in place of @BASE@.
golden_input() {
	sed "s|@BASE@|$SC_BASE|g" "$GOLDEN/$1"
}

# Records and request metrics lines: lib/golden.bash.
normalize() {
	sc_golden_normalize
}

# The summary line: only its counts stay (the learnt pace, "pace", comes
# from timings too: test/sc-fetch-pace.bats checks it).
normalize_summary() {
	jq -c 'del(.ts, .elapsed_s, .rps, .latency_ms, .hosts, .pace)' |
		sed -E "s/127\\.0\\.0\\.1:$SC_PORT/127.0.0.1:PORT/g"
}

# compare NAME FILE: FILE against test/golden/NAME, or its new version.
compare() {
	if [[ -n ${SC_GOLDEN_UPDATE:-} ]]; then
		cp "$2" "$GOLDEN/$1"
		return 0
	fi
	if ! cmp -s "$GOLDEN/$1" "$2"; then
		diff "$GOLDEN/$1" "$2" | head -40 >&2
		fail "$1 differs from the golden records"
	fi
}

# split_metrics FILE PREFIX: request lines (sorted: their order depends on
# timing) and the summary line.
split_metrics() {
	grep '"event":"request"' "$1" | normalize | LC_ALL=C sort >"$2.requests"
	grep '"event":"summary"' "$1" | normalize_summary >"$2.summary"
}

@test "sc-fetch's records and metrics are the golden ones" {
	local t=$BATS_TEST_TMPDIR
	golden_input fetch.in >"$t/in"
	echo "$SC_BASE/ctl-nonul.txt" >>"$t/in"
	local status=0
	sc-fetch -c 4 --keep-order --seed 1 -m 1 --retries 2 --retry-base 10 \
		--retry-max 20 --max-redirs 3 <"$t/in" >"$t/out" 2>"$t/err" || status=$?
	# Not every record is ok (exit 3), and nothing is fatal.
	[ "$status" -eq 3 ] || fail "exit $status: $(cat "$t/err")"
	normalize <"$t/out" >"$t/records"
	compare fetch.out "$t/records"
	split_metrics "$t/err" "$t/metrics"
	compare fetch.metrics "$t/metrics.requests"
	compare fetch.summary "$t/metrics.summary"
	# The warnings for malformed lines, as they are today.
	grep -v '^{' "$t/err" | normalize >"$t/warnings"
	compare fetch.warnings "$t/warnings"
}

@test "sc-retry's records and metrics are the golden ones" {
	local t=$BATS_TEST_TMPDIR
	golden_input retry.in >"$t/in"
	local status=0
	sc-retry -c 4 --keep-order --seed 1 -m 1 --retries 2 --retry-base 10 \
		--retry-max 20 <"$t/in" >"$t/out" 2>"$t/err" || status=$?
	[ "$status" -eq 3 ] || fail "exit $status: $(cat "$t/err")"
	normalize <"$t/out" >"$t/records"
	compare retry.out "$t/records"
	split_metrics "$t/err" "$t/metrics"
	compare retry.metrics "$t/metrics.requests"
	compare retry.summary "$t/metrics.summary"
	grep -v '^{' "$t/err" | normalize >"$t/warnings"
	compare retry.warnings "$t/warnings"
}

@test "the pipeline sc-fetch | sc-parse | sc-sink --jsonl writes the golden records" {
	local t=$BATS_TEST_TMPDIR
	golden_input pipeline.in >"$t/in"
	sc-fetch -q -c 4 --keep-order -m 1 --retries 0 <"$t/in" 2>/dev/null |
		sc-parse 2>/dev/null | sc-sink -q --jsonl "$t/sink.jsonl" >/dev/null 2>&1 || true
	[ -s "$t/sink.jsonl" ] || fail "no output"
	normalize <"$t/sink.jsonl" >"$t/records"
	compare pipeline.out "$t/records"
}
