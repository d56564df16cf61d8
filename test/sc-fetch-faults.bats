#!/usr/bin/env bats
# Broken responses and hostile input are never called ok (issue 14, "Found,
# to fix"): each case against its fixture-server endpoint, asserting the
# record and the request metrics line.

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
}

# fetch [OPTIONS...] <<< input: records in $output and $records, metrics
# in $stderr.
fetch() {
	run --separate-stderr sc-fetch --keep-order --retry-base 10 --retry-max 20 "$@"
	records=$output metrics=$stderr
}

# The request metrics lines of $stderr, one compact object per line.
requests() {
	grep '"event":"request"' <<<"$metrics" | jq -c "${1:-.}"
}

@test "a header block cut by FIN is a network error 'incomplete response', no status, retried" {
	fetch --retries 1 <<<"$SC_BASE/cut-head"
	assert_failure 3
	jq -e '.ok == false and .status == null and .body == null and .bytes == 0
		and .error == {"kind":"network","message":"incomplete response"}
		and .attempts == 2 and ([.history[].status] == [null, null])' <<<"$output"
	run -0 requests '[.status, .error, .next]'
	assert_output $'[null,"network","again"]\n[null,"network","exhausted"]'
	grep '"event":"summary"' <<<"$stderr" | jq -e '.not_ok == 1 and .errors.network == 2 and .status == {}'
}

@test "a header block cut by RST has no status either" {
	fetch --retries 0 <<<"$SC_BASE/cut-head?close=rst"
	assert_failure 3
	jq -e '.ok == false and .status == null and .error.kind == "network"' <<<"$output"
	run -0 requests '[.status, .error, .next]'
	assert_output '[null,"network","exhausted"]'
}

@test "a body shorter than its Content-Length or without its last chunk is not ok" {
	fetch --retries 0 <<EOF
$SC_BASE/short-body
$SC_BASE/chunked-cut
$SC_BASE/short-body?close=rst
EOF
	assert_failure 3
	run -0 jq -c '[.ok, .status, .error.kind, (.error.message | startswith("incomplete response") or startswith("Recv failure"))]' <<<"$output"
	assert_output $'[false,200,"network",true]\n[false,200,"network",true]\n[false,200,"network",true]'
	jq -s -e '.[0:2] | all(.error.message | startswith("incomplete response: "))' <<<"$records"
	run -0 requests '[.status, .error]'
	assert_output $'[200,"network"]\n[200,"network"]\n[200,"network"]'
}

@test "a body delimited by the close after a whole head is ok" {
	fetch --retries 0 <<<"$SC_BASE/close-delimited"
	assert_success
	jq -e '.ok == true and .status == 200 and .body == "the body ends at the close\n"' <<<"$output"
	run -0 requests '[.status, .error]'
	assert_output '[200,null]'
}

@test "a header block over libcurl's limit is too_large, not internal, and not retried" {
	fetch --retries 2 <<EOF
$SC_BASE/huge-header
$SC_BASE/huge-header?size=90000
EOF
	assert_failure 3
	run -0 jq -c '[.ok, .status, .error.kind, .attempts]' <<<"$output"
	assert_output $'[false,null,"too_large",1]\n[true,200,null,1]'
	head -1 <<<"$records" | jq -e '.error.message | contains("header block was too large")'
	run -0 requests '[(.url | sub(".*/"; "")), .status, .error, .next]'
	assert_output $'["huge-header",null,"too_large","done"]\n["huge-header?size=90000",200,null,"done"]'
	run -0 sc_server_log '[.[] | .path] | length'
	assert_output 2
}

@test "a status line over libcurl's limit is too_large too, not internal" {
	fetch --retries 2 <<<"$SC_BASE/huge-header?status&size=200000"
	assert_failure 3
	run -0 jq -c '[.ok, .status, .error.kind, .attempts]' <<<"$output"
	assert_output '[false,null,"too_large",1]'
	run -0 sc_server_log '[.[] | .path] | length'
	assert_output 1
}

@test "a redirect to a Location curl cannot parse is the server's http error with its status, not bad_input" {
	fetch --retries 2 <<<"$SC_BASE/redirect-to?url=http://%5B::1"
	assert_failure 3
	jq -e '.ok == false and .status == 302 and .attempts == 1 and .error.kind == "http"
		and (.error.message | startswith("HTTP 302: ")) and (.error.message | test("redirect"))' <<<"$output"
	run -0 requests '[.status, .error, .next]'
	assert_output '[302,"http","done"]'
}

@test "final_url and the metrics carry no userinfo; url stays as given" {
	local authority=${SC_BASE#http://}
	fetch --retries 0 <<<"http://user:secret@$authority/redirect/2"
	assert_success
	jq -e --arg base "$SC_BASE" '.url == "http://user:secret@\($base | ltrimstr("http://"))/redirect/2"
		and .final_url == "\($base)/redirect/0"' <<<"$output"
	[[ $(jq -r '.final_url' <<<"$output") != *secret* ]] || fail "$output"
	[[ $stderr != *secret* ]] || fail "the metrics show the password: $stderr"
	[[ $stderr != *user@* ]] || fail "the metrics show the user: $stderr"
	run -0 requests '.url'
	assert_output "\"$SC_BASE/redirect/2\""
}

@test "a control character in url, method or header is bad_input and no request (sc-fetch)" {
	fetch <<EOF
{"url":"$SC_BASE/page/1?c=\u0000x"}
{"url":"$SC_BASE/page/1?c=\u001fx"}
{"url":"$SC_BASE/echo","request":{"method":"GET\u0000"}}
{"url":"$SC_BASE/echo","request":{"headers":{"X-A":"a\u0000b"}}}
{"url":"$SC_BASE/echo","request":{"headers":{"X-A\u007f":"b"}}}
{"url":"$SC_BASE/echo","request":{"headers":{"X-Tab":"a\tb"}}}
EOF
	assert_failure 3
	run -0 jq -c '[.ok, .error.kind, .line]' <<<"$output"
	assert_output $'[false,"bad_input",1]\n[false,"bad_input",2]\n[false,"bad_input",3]\n[false,"bad_input",4]\n[false,"bad_input",5]\n[true,null,null]'
	head -1 <<<"$records" | jq -e '.error.message == "not a valid URL: it holds a control character"'
	[[ $stderr == *"sc-fetch: <stdin>:1: not a valid URL: it holds a control character"* ]] || fail "$stderr"
	[[ $stderr == *"sc-fetch: <stdin>:4: request.headers has a malformed header"* ]] || fail "$stderr"
	# Only the last line (a tab is allowed in a header value) made a request.
	run -0 requests '.url'
	assert_output "\"$SC_BASE/echo\""
	run -0 sc_server_log '[.[] | .path]'
	assert_output '["/echo"]'
}

@test "a CR, LF or NUL in a record's header, header name, method or url is bad_input; no header is smuggled in" {
	fetch <<EOF
{"url":"$SC_BASE/echo","request":{"headers":{"X-A":"a\r\nX-Evil: 1"}}}
{"url":"$SC_BASE/echo","request":{"headers":{"X-A":"a\nX-Evil: 1"}}}
{"url":"$SC_BASE/echo","request":{"headers":{"X-A":"a\rX-Evil: 1"}}}
{"url":"$SC_BASE/echo","request":{"headers":{"X-A\r\nX-Evil":"1"}}}
{"url":"$SC_BASE/echo","request":{"method":"GET / HTTP/1.1\r\nX-Evil: 1\r\n"}}
{"url":"$SC_BASE/echo","request":{"method":"GET\r\nX-Evil:"}}
{"url":"$SC_BASE/echo\r\nX-Evil: 1"}
{"url":"$SC_BASE/echo\u0000\r\nX-Evil: 1"}
{"url":"$SC_BASE/echo","request":{"headers":{"X-A":"ok"}}}
EOF
	assert_failure 3
	run -0 jq -c '[.ok, .error.kind, .error.message]' <<<"$records"
	assert_output '[false,"bad_input","request.headers has a malformed header"]
[false,"bad_input","request.headers has a malformed header"]
[false,"bad_input","request.headers has a malformed header"]
[false,"bad_input","request.headers has a malformed header"]
[false,"bad_input","request.method is not a method name"]
[false,"bad_input","request.method is not a method name"]
[false,"bad_input","not a valid URL: it holds a control character"]
[false,"bad_input","not a valid URL: it holds a control character"]
[true,null,null]'
	# One request, the last line's, and the server saw no X-Evil.
	assert_equal "$(sc_server_log length)" 1
	run -0 sc_server_header_names
	refute_line --regexp '^[Xx]-[Ee]vil$'
	assert_line X-A
}

@test "a control character in a record's url or request is bad_input and no request (sc-retry)" {
	run --separate-stderr sc-retry --retries 1 --keep-order <<EOF
{"url":"$SC_BASE/page/1?c=\u0000x","ok":false,"status":503,"error":{"kind":"http","message":"HTTP 503"}}
{"url":"$SC_BASE/echo","ok":false,"status":503,"request":{"method":"P\u0001ST"}}
EOF
	assert_failure 3
	run -0 jq -c '[.ok, .error.kind, .error.message]' <<<"$output"
	assert_output $'[false,"bad_input","not a valid URL: it holds a control character"]\n[false,"bad_input","request.method is not a method name"]'
	run -0 sc_server_log 'length'
	assert_output 0
}

@test "URLs as people paste them are requested percent-encoded (UTF-8, %20); url stays as given" {
	fetch --retries 0 <<EOF
$SC_BASE/page/1?q=ツ&x=a b
{"url":"$SC_BASE/page/2?q=ü"}
EOF
	assert_success
	run -0 jq -r '.url' <<<"$records"
	assert_output "$SC_BASE/page/1?q=ツ&x=a b"$'\n'"$SC_BASE/page/2?q=ü"
	run -0 jq -r '.final_url' <<<"$records"
	assert_output "$SC_BASE/page/1?q=%E3%83%84&x=a%20b"$'\n'"$SC_BASE/page/2?q=%C3%BC"
	run -0 sc_server_log '[.[] | .path] | sort'
	assert_output '["/page/1?q=%E3%83%84&x=a%20b","/page/2?q=%C3%BC"]'
	# sc-retry requests the same form for a record it fetches again.
	sc_server_reset
	jq -c '.ok = false | .error = {kind: "network", message: "x"}' <<<"$records" >"$BATS_TEST_TMPDIR/failed.jsonl"
	run -0 --separate-stderr sc-retry --retries 1 --keep-order <"$BATS_TEST_TMPDIR/failed.jsonl"
	run -0 sc_server_log '[.[] | .path] | sort'
	assert_output '["/page/1?q=%E3%83%84&x=a%20b","/page/2?q=%C3%BC"]'
}

@test "a pasted URL with an IDN host goes out in punycode (*.localhost: curl resolves it to loopback itself)" {
	local port=${SC_BASE##*:}
	fetch --retries 0 <<<"http://bücher.localhost:$port/page/3?a b"
	assert_success
	jq -e --arg p "$port" '.url == "http://bücher.localhost:\($p)/page/3?a b"
		and .final_url == "http://xn--bcher-kva.localhost:\($p)/page/3?a%20b"' <<<"$records"
	run -0 sc_server_log '[.[] | [.host, .path]]'
	assert_output "[[\"xn--bcher-kva.localhost:$port\",\"/page/3?a%20b\"]]"
}
