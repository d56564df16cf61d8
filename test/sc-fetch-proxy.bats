#!/usr/bin/env bats
# sc-fetch's proxies (sc-fetch(1), "Proxies") through Debian's tinyproxy
# on loopback (it adds a Via field, which the fixture's /echo shows): the
# metrics name the proxy without its credentials, a record's "proxy"
# member, --proxy-list in turn with a dead proxy set aside, no_proxy, and
# the usage errors.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/tinyproxy'

bats_require_minimum_version 1.5.0

setup_file() {
	command -v tinyproxy >/dev/null || skip "tinyproxy is not installed (make deps)"
	sc_server_start
	start_tinyproxy
}

teardown_file() {
	stop_tinyproxy
	sc_server_stop
}

setup() {
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Whether a record's /echo saw a Via field (it came through tinyproxy).
via() {
	jq -r '.body | fromjson | .headers | has("Via")' <<<"$1"
}

@test "--proxy: the request goes through it; the metrics and the summary name it without its credentials" {
	run -0 --separate-stderr sc-fetch --proxy "$PROXY" <<<"$SC_BASE/echo"
	assert_equal "$(via "$output")" true
	assert_equal "$(jq -r 'select(.event == "request") | .proxy' <<<"$stderr")" "$PROXY_NAME"
	assert_equal "$(jq -c 'select(.event == "summary") | .proxies' <<<"$stderr")" \
		"[{\"proxy\":\"$PROXY_NAME\",\"requests\":1,\"failures\":0,\"set_aside\":0}]"
	[[ $stderr != *s3cret* ]] || fail "the proxy's password in the metrics"
	# Without --proxy, and with no_proxy naming the host, it goes direct.
	run -0 --separate-stderr sc-fetch <<<"$SC_BASE/echo"
	assert_equal "$(via "$output")" false
	no_proxy=127.0.0.1 run -0 --separate-stderr sc-fetch --proxy "$PROXY" <<<"$SC_BASE/echo"
	assert_equal "$(via "$output")" false
}

@test "a record's proxy member: its own proxy, or \"\" for none; a bad one is bad_input" {
	{
		echo "{\"url\":\"$SC_BASE/echo?a\",\"proxy\":\"$PROXY\"}"
		echo "{\"url\":\"$SC_BASE/echo?b\",\"proxy\":\"\"}"
		echo "{\"url\":\"$SC_BASE/echo?c\",\"proxy\":\"ftp://127.0.0.1:1\"}"
		echo "{\"url\":\"$SC_BASE/echo?d\",\"proxy\":3}"
	} >in
	run -3 --separate-stderr sc-fetch --keep-order --proxy "http://127.0.0.1:1" <in
	printf '%s\n' "$output" >out
	assert_equal "$(head -2 out | jq -r '.body | fromjson | .headers | has("Via")' | tr '\n' ' ')" 'true false '
	run -0 jq -r 'select(.ok == false) | .error.message' out
	assert_output "$(printf '%s\n' '"proxy" is not a proxy URL' '"proxy" is not a string')"
}

@test "--proxy-list: its proxies in turn; a dead one is set aside and its requests go through another" {
	printf '# a comment\nhttp://127.0.0.1:1\n%s\n' "$PROXY" >proxies.txt
	for i in 1 2 3 4 5 6; do echo "$SC_BASE/echo?n=$i"; done >in
	run -0 --separate-stderr sc-fetch -c 1 --retry-base 10 --proxy-list proxies.txt <in
	assert_equal "$(jq -s 'map(select(.ok)) | length' <<<"$output")" 6
	assert_equal "$(jq -r '.body | fromjson | .headers | has("Via")' <<<"$output" | sort -u)" true
	run -0 jq -c 'select(.event == "summary") | .proxies | map({proxy, failures, set_aside, used: (.requests > 0)})' <<<"$stderr"
	assert_output "[{\"proxy\":\"http://127.0.0.1:1\",\"failures\":1,\"set_aside\":1,\"used\":true},{\"proxy\":\"$PROXY_NAME\",\"failures\":0,\"set_aside\":0,\"used\":true}]"
	# --proxy-sticky: one proxy per origin, the same for all its requests.
	printf '%s\n' "$PROXY" >one.txt
	run -0 --separate-stderr sc-fetch --proxy-list one.txt --proxy-sticky <in
	assert_equal "$(jq -r 'select(.event == "request") | .proxy' <<<"$stderr" | sort -u)" "$PROXY_NAME"
}

@test "a proxy that refuses the credentials: the record says so, the password is nowhere in the metrics; usage errors" {
	run -3 --separate-stderr sc-fetch --retries 0 --proxy "http://scuser:wrong@${PROXY_NAME#http://}" <<<"$SC_BASE/echo"
	# tinyproxy answers a plain-HTTP request with bad credentials 401 (a
	# CONNECT tunnel's would be 407, which sets the proxy aside).
	assert_equal "$(jq -r '[.ok, .status] | @tsv' <<<"$output")" "$(printf 'false\t401')"
	[[ $stderr != *wrong* ]] || fail "the password in the metrics"
	run -2 --separate-stderr sc-fetch --proxy 'ftp://x' </dev/null
	[[ $stderr == *"--proxy: not a proxy URL"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-fetch --proxy-sticky </dev/null
	[[ $stderr == *"--proxy-sticky needs --proxy-list"* ]] || fail "$stderr"
	run -1 --separate-stderr sc-fetch --proxy-list none.txt </dev/null
	[[ $stderr == *"--proxy-list: none.txt: No such file or directory"* ]] || fail "$stderr"
}
