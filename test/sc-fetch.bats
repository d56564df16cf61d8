#!/usr/bin/env bats
# sc-fetch, one request at a time: the command line, the input rules, and
# what each kind of response or failure makes of a record.  The engine's
# concurrency, rates, ordering and shutdown are in sc-fetch-engine.bats.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/options'

bats_require_minimum_version 1.5.0

setup_file() {
	export SC_FETCH_ROOT="$BATS_FILE_TMPDIR/root"
	mkdir -p "$SC_FETCH_ROOT"
	# Quotes, backslashes and control characters that the body encoder must escape.
	printf 'a"b\\c\001d\te\r\nf\037g</script>\xc3\xa9\n' >"$SC_FETCH_ROOT/escapes.txt"
	sc_server_start --root "$SC_FETCH_ROOT"
}

teardown_file() {
	sc_server_stop
}

setup() {
	sc_server_reset
}

# fetch [OPTIONS...] <<< input: records in $output, metrics in $stderr.
fetch() {
	run --separate-stderr sc-fetch "$@"
}

# ---- usage errors ----

@test "numeric options out of range are usage errors that name the option" {
	for bad in "-c 0" "-c 100001" "-c x" "--concurrency 1.5" "--per-host -1" \
		"--rate -1" "--rate x" "--host-rate -2" "--delay -1" "--delay 1.5" \
		"--max-redirs -1" "--connect-timeout 0" "--timeout -1" "-m x" \
		"--low-speed-limit 0" "--low-speed-time -1" "--max-bytes 0" \
		"--stats-every -1" "--grace -1" "--grace x"; do
		read -r opt arg <<<"$bad"
		run -2 --separate-stderr sc-fetch "$opt" "$arg" </dev/null
		long=$opt
		[[ $opt == -c ]] && long=--concurrency
		[[ $opt == -m ]] && long=--timeout
		[[ $stderr == *"$long"* ]] || fail "$bad: the message does not name $long: $stderr"
		[[ $stderr == *"Try 'sc-fetch --help'"* ]] || fail "$bad: no hint: $stderr"
		[ -z "$output" ] || fail "$bad wrote records: $output"
	done
}

@test "a malformed --header is a usage error" {
	run -2 --separate-stderr sc-fetch -H 'no colon here' </dev/null
	assert_equal "$output" ""
	[[ $stderr == *"--header"*"Name: value"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-fetch -H ': empty name' </dev/null
	[[ $stderr == *"--header"* ]] || fail "$stderr"
}

@test "a CR or LF in any option's value is a usage error before anything is sent (sc-fetch, sc-retry)" {
	local prog
	for prog in sc-fetch sc-retry; do
		# -c, -m, -A, -H and every long option with a value: 30 of them.
		refuses_line_breaks "$prog" 30 c=concurrency m=timeout A=user-agent H=header -- "$SC_BASE/echo"
	done
	# Nothing reached the server.
	assert_equal "$(sc_server_log length)" 0
}

@test "-A and -H: no header reaches the server but the ones given, with --robots too; a tab is a header value's" {
	fetch --robots -A $'my-bot/1.0\t(x)' -H $'X-Given: a\tb' <<<"$SC_BASE/echo"
	assert_success
	jq -e '.body | fromjson | .headers["User-Agent"] == "my-bot/1.0\t(x)" and .headers["X-Given"] == "a\tb"' <<<"$output"
	# robots.txt and the page, each with the agent.
	assert_equal "$(sc_server_log '[.[] | .path]')" '["/robots.txt","/echo"]'
	assert_equal "$(sc_server_log '[.[] | .agent] | unique')" '["my-bot/1.0\t(x)"]'
	run -0 sc_server_header_names
	assert_output "$(printf '%s\n' Accept Accept-Encoding Host User-Agent X-Given)"
}

@test "-H: a name with a space or a control character, or a value with a control character, is refused" {
	for bad in 'X A: b' $'X\001A: b' $'X\tA: b' ': b'; do
		run -2 --separate-stderr sc-fetch -H "$bad" </dev/null
		assert_equal "${stderr_lines[0]}" "sc-fetch: --header: '$bad' is not 'Name: value'"
	done
	run -2 --separate-stderr sc-fetch -H $'X-A: b\001' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-fetch: --header: a value may hold no control character but a tab"
	run -2 --separate-stderr sc-fetch -H $'X-A: b\177' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-fetch: --header: a value may hold no control character but a tab"
}

@test "an unknown option or an operand is a usage error" {
	run -2 --separate-stderr sc-fetch --no-such-option </dev/null
	[[ $stderr == *"Try 'sc-fetch --help'"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-fetch http://example.invalid/ </dev/null
	[[ $stderr == *"unexpected operand"*"standard input"* ]] || fail "$stderr"
}

@test "a missing option argument or an unknown option is said once, in getopt's words" {
	run -2 --separate-stderr sc-fetch --rate </dev/null
	assert_equal "$stderr" "sc-fetch: option '--rate' requires an argument
Try 'sc-fetch --help' for more information."
	run -2 --separate-stderr sc-fetch -kZ </dev/null
	assert_equal "$stderr" "sc-fetch: invalid option -- 'Z'
Try 'sc-fetch --help' for more information."
	run -2 --separate-stderr sc-retry -c </dev/null
	assert_equal "$stderr" "sc-retry: option requires an argument -- 'c'
Try 'sc-retry --help' for more information."
}

@test "--help prints the synopsis on stdout; --version names the program" {
	run -0 --separate-stderr sc-fetch --help
	[[ $output == "usage: sc-fetch "* ]] || fail "$output"
	[[ $output == *"--per-host N"* && $output == *"--keep-order"* ]] || fail "$output"
	assert_equal "$stderr" ""
	run -0 sc-fetch -V
	[[ $output == "sc-fetch 0."* ]] || fail "$output"
}

@test "an unwritable --metrics file is a runtime failure" {
	run -1 --separate-stderr sc-fetch --metrics /nonexistent/dir/m.jsonl <<<"$SC_BASE/page/1"
	[[ $stderr == *"--metrics: /nonexistent/dir/m.jsonl:"* ]] || fail "$stderr"
}

@test "a failed write to stdout exits 1, still with the summary on stderr" {
	run -1 --separate-stderr bash -c "sc-fetch <<<'$SC_BASE/page/1' >/dev/full"
	[[ $stderr == *"error writing standard output"* ]] || fail "$stderr"
	echo "$stderr" | grep '"event":"summary"' | jq -e '.records == 1' >/dev/null
}

@test "started with standard output, input or error closed: a clear error, and no record written anywhere else" {
	# Closed, descriptor 1 would be the next one opened (a socket, the
	# epoll set): the record must not go there.
	run -1 --separate-stderr bash -c "sc-fetch <<<'$SC_BASE/echo' >&-"
	[[ $stderr == *"sc-fetch: error writing standard output: Bad file descriptor"* ]] || fail "$stderr"
	# (Before, the record went to whatever took descriptor 1, and the run
	# exited 0.)  The server saw the one request.
	assert_equal "$(sc_server_stats '.requests')" 1
	run -1 --separate-stderr bash -c "sc-fetch <&-"
	[[ $stderr == *"sc-fetch: <stdin>: read error: Bad file descriptor"* ]] || fail "$stderr"
	# Without standard error the records are written all the same.
	run -0 --separate-stderr bash -c "sc-fetch <<<'$SC_BASE/page/1' 2>&-"
	jq -e 'select(.ok)' <<<"$output" >/dev/null
	# sc-parse too (every program holds 0, 1 and 2 at its start).
	run -1 --separate-stderr bash -c "sc-fetch <<<'$SC_BASE/page/1' 2>/dev/null | sc-parse >&-"
	[[ $stderr == *"sc-parse: error writing standard output: Bad file descriptor"* ]] || fail "$stderr"
}

# ---- input ----

@test "one record per URL; blank and # lines are no record" {
	fetch <<EOF2
$SC_BASE/page/1

# a comment
   $SC_BASE/page/2${IFS:2:1}
EOF2
	assert_success
	assert_equal "$(wc -l <<<"$output")" 2
	jq -e -s 'map(.url) | sort == ["'"$SC_BASE"'/page/1", "'"$SC_BASE"'/page/2"]' <<<"$output"
}

@test "a complete 2xx record carries every fetch member" {
	fetch <<<"$SC_BASE/page/3?size=3000"
	assert_success
	jq -e --arg u "$SC_BASE/page/3?size=3000" '
		.url == $u and .final_url == $u and .status == 200 and .ok == true
		and (.content_type | startswith("text/html")) and .bytes == (.body | utf8bytelength)
		and .bytes >= 3000 and .attempts == 1 and (.elapsed_ms | type) == "number"
		and (.fetched_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$"))
		and (.body | contains("<html")) and (has("error") | not)
		and .history == [{attempt: 1, status: 200, error: null, wait_ms: 0,
		                  queue_ms: .history[0].queue_ms, latency_ms: .history[0].latency_ms}]
		and (.history[0].queue_ms | type) == "number"' <<<"$output"
}

@test "a 404 is a record with error kind http, and the run exits 3" {
	fetch --retries 0 <<<"$SC_BASE/status/404"
	assert_failure 3
	jq -e '.status == 404 and .ok == false and .error.kind == "http"
		and .error.message == "HTTP 404" and (.body | type) == "string"' <<<"$output"
}

@test "malformed lines become bad_input records with a positioned warning" {
	fetch <<EOF2
$SC_BASE/page/1
{"url": 
{"id": 1}
not a url
{"url": "$SC_BASE/page/2", "request": {"method": 5}}
EOF2
	assert_failure 3
	assert_equal "$(wc -l <<<"$output")" 5
	jq -e -s '[.[] | select(.error.kind == "bad_input") | .line] | sort == [2, 3, 4, 5]' <<<"$output"
	jq -e -s '[.[] | select(.line == 4)][0] | .raw == "not a url" and .ok == false' <<<"$output"
	jq -e -s '[.[] | select(.line == 5)][0] | .url == "'"$SC_BASE"'/page/2"
		and (.error.message | contains("request.method"))' <<<"$output"
	[[ $stderr == *"sc-fetch: <stdin>:2: not valid JSON"* ]] || fail "$stderr"
	[[ $stderr == *"sc-fetch: <stdin>:3: no string member \"url\""* ]] || fail "$stderr"
	[[ $stderr == *"sc-fetch: <stdin>:4: not a URL"* ]] || fail "$stderr"
	[[ $stderr == *"sc-fetch: <stdin>:5: request.method"* ]] || fail "$stderr"
}

@test "a URL without a host or a scheme is bad_input, never resolved against the line before" {
	# Regression: "http://" crashed (a bad_input kind, 0, was taken for
	# success), and "/x" after a URL was fetched relative to it.
	fetch --retries 0 --keep-order <<EOF2
$SC_BASE/page/1
http://
{"url":"/page/2"}
[1,2,3]
EOF2
	assert_failure 3
	assert_equal "$(jq -s -c '[.[] | .error.kind]' <<<"$output")" '[null,"bad_input","bad_input","bad_input"]'
	jq -e -s '.[1:] | all(.error.message | startswith("not a valid URL: "))' <<<"$output"
	[[ $stderr == *"sc-fetch: <stdin>:2: not a valid URL"* ]] || fail "$stderr"
	[[ $stderr == *"sc-fetch: <stdin>:3: not a valid URL"* ]] || fail "$stderr"
	run -0 sc_server_log '[.[] | .path]'
	assert_output '["/page/1"]'
}

@test "JSON input members are carried through; fetch members replace theirs" {
	fetch <<<'{"id": 42, "tags": ["a"], "status": "stale", "url": "'"$SC_BASE"'/page/1", "ok": "x"}'
	assert_success
	jq -e '.id == 42 and .tags == ["a"] and .status == 200 and .ok == true' <<<"$output"
	# Input members keep their place; fetch members follow.
	jq -e 'keys_unsorted[0:3] == ["id", "tags", "status"]' <<<"$output"
}

# ---- what each outcome makes ----

@test "schemes other than http and https are blocked, first URL and redirects" {
	fetch --retries 0 <<EOF2
ftp://127.0.0.1:$SC_PORT/x
file:///etc/passwd
$SC_BASE/redirect-to?url=file:///etc/passwd
$SC_BASE/redirect-to?url=ftp://127.0.0.1/
EOF2
	assert_failure 3
	assert_equal "$(jq -s 'map(select(.error.kind == "blocked_scheme")) | length' <<<"$output")" 4
	refute_output --partial "root:"
	# Neither of the first two reached the network.
	assert_equal "$(sc_server_stats '.requests')" 2
}

@test "redirects are followed up to --max-redirs; loops end as too_many_redirects" {
	fetch --retries 0 <<EOF2
$SC_BASE/redirect/3
$SC_BASE/redirect-loop
EOF2
	assert_failure 3
	jq -e -s --arg b "$SC_BASE" '
		(map(select(.url == $b + "/redirect/3"))[0] | .ok and .final_url == $b + "/redirect/0")
		and (map(select(.url == $b + "/redirect-loop"))[0] | .error.kind == "too_many_redirects")' <<<"$output"
	fetch --retries 0 --max-redirs 2 <<<"$SC_BASE/redirect/3"
	assert_failure 3
	jq -e '.error.kind == "too_many_redirects"' <<<"$output"
	fetch --retries 0 --max-redirs 0 <<<"$SC_BASE/redirect/1"
	jq -e '.status == 302 and .error.kind == "http"' <<<"$output"
}

@test "bodies beyond --max-bytes are too_large, with or without Content-Length" {
	fetch --max-bytes 1000 <<EOF2
$SC_BASE/big/5000
$SC_BASE/big/5000?chunked=1
$SC_BASE/big/1000
EOF2
	assert_failure 3
	jq -e -s --arg b "$SC_BASE" '
		(map(select(.error.kind == "too_large")) | length == 2
		 and all(.bytes == 0 and .body == null))
		and (map(select(.url == $b + "/big/1000"))[0] | .ok and .bytes == 1000)' <<<"$output"
}

@test "--max-bytes counts only the final response's body, never a followed redirect's" {
	# Every 302 of the fixture carries a ~140-byte body with its Content-Length.
	fetch --retries 0 --max-bytes 100 --max-redirs 2 <<<"$SC_BASE/redirect-loop"
	assert_failure 3
	jq -e '.status == 302 and .error.kind == "too_many_redirects" and .bytes == 0
		and (.body // "") == ""' <<<"$output"
	fetch --retries 0 --max-bytes 120 <<EOF2
$SC_BASE/redirect/2
$SC_BASE/redirect-to?url=/big/500
EOF2
	assert_failure 3
	jq -e -s --arg b "$SC_BASE" '
		(map(select(.url == $b + "/redirect/2"))[0] | .ok and .bytes == 110
		 and (.body | contains("Redirects done")))
		and (map(select(.url | endswith("/big/500")))[0] | .status == 200
		 and .error.kind == "too_large")' <<<"$output"
	# Not followed, the redirect is the final response: its body counts.
	fetch --retries 0 --max-bytes 100 --max-redirs 0 <<<"$SC_BASE/redirect/1"
	assert_failure 3
	jq -e '.status == 302 and .error.kind == "too_large"' <<<"$output"
}

@test "a timeout on /hang fires within the timeout plus a small slack" {
	start=$(date +%s%N)
	fetch --retries 0 -m 1 <<<"$SC_BASE/hang"
	elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
	assert_failure 3
	jq -e '.error.kind == "timeout" and .status == null' <<<"$output"
	(( elapsed_ms >= 950 && elapsed_ms < 3000 )) || fail "took $elapsed_ms ms"
}

@test "a connection reset mid-body is a network error" {
	fetch --retries 0 <<<"$SC_BASE/reset"
	assert_failure 3
	jq -e '.error.kind == "network" and .ok == false' <<<"$output"
}

@test "a refused connection is a connect error" {
	# A port nobody listens on: bind one, then close it.
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	fetch --retries 0 <<<"http://127.0.0.1:$port/"
	assert_failure 3
	jq -e '.error.kind == "connect" and .status == null' <<<"$output"
}

@test "gzip bodies arrive decoded" {
	fetch <<<"$SC_BASE/gzip?size=5000"
	assert_success
	jq -e '.ok and (.body | contains("<html")) and .bytes == (.body | utf8bytelength)' <<<"$output"
	sc_server_log '.[-1].path' | grep -q gzip
}

@test "non-UTF-8 bodies arrive as body_base64" {
	fetch <<EOF2
$SC_BASE/binary/300
$SC_BASE/latin1
EOF2
	assert_success
	jq -e -s 'all(has("body_base64") and (has("body") | not))' <<<"$output"
	n=$(jq -r 'select(.url | endswith("/binary/300")) | .body_base64' <<<"$output" | base64 -d | wc -c)
	assert_equal "$n" 300
}

@test "bodies with quotes, backslashes and control characters round-trip" {
	fetch <<<"$SC_BASE/escapes.txt"
	assert_success
	jq -j '.body' <<<"$output" | cmp - "$SC_FETCH_ROOT/escapes.txt"
}

@test "a record's request member sets method, headers and body" {
	fetch -H 'X-Global: g' -H 'X-Over: from-H' <<EOF2
{"url": "$SC_BASE/echo", "id": 1, "request": {"method": "POST", "headers": {"X-Over": "mine", "Content-Type": "text/plain"}, "body": "hello \"world\""}}
{"url": "$SC_BASE/echo", "id": 2, "request": {"method": "PUT", "body": {"a": [1, 2]}}}
{"url": "$SC_BASE/echo", "id": 3, "request": {"method": "DELETE"}}
EOF2
	assert_success
	one=$(jq -c 'select(.id == 1) | .body | fromjson' <<<"$output")
	jq -e '.method == "POST" and .body == "hello \"world\"" and .headers["X-Over"] == "mine"
		and .headers["X-Global"] == "g" and .headers["Content-Type"] == "text/plain"' <<<"$one"
	# The request member is carried into the output, for sc-retry.
	jq -e -s 'map(select(.id == 1))[0] | .request.method == "POST"' <<<"$output"
	jq -e -s 'map(select(.id == 2))[0] | .body | fromjson | .method == "PUT"
		and (.body | fromjson) == {"a": [1, 2]}
		and .headers["Content-Type"] == "application/json"' <<<"$output"
	jq -e -s 'map(select(.id == 3))[0] | .body | fromjson | .method == "DELETE"' <<<"$output"
}

@test "-A sets the User-Agent; the default names sc-fetch" {
	fetch <<<"$SC_BASE/echo"
	jq -e '.body | fromjson | .headers["User-Agent"] | startswith("sc-fetch/")' <<<"$output"
	fetch -A 'my-bot/1.0' <<<"$SC_BASE/echo"
	jq -e '.body | fromjson | .headers["User-Agent"] == "my-bot/1.0"' <<<"$output"
}
