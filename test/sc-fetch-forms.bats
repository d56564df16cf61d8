#!/usr/bin/env bats
# sc-fetch's "form" member (sc-fetch(1), "Forms"): the fields as a browser
# sends them (urlencoded as a GET's query or a POST's body, multipart with
# a file), the record's members checked (bad_input), a secret's value kept
# out of the output record and the metrics, and a login as a pipeline
# against the fixture's /login (a CSRF field and cookie, a 302 to /account
# with a session cookie) with a shared cookie jar.

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
	cd "$BATS_TEST_TMPDIR" || return 1
}

# The request /echo saw, from a record: method, query, body, content type.
echoed() {
	jq -c '.body | fromjson | {method, query, body, type: .headers["Content-Type"]}' <<<"$1"
}

@test "a POST form is the urlencoded body; a repeated field is an array; a secret's value is not in the record or the metrics" {
	echo "{\"url\":\"$SC_BASE/echo?keep=no\",\"request\":{\"method\":\"POST\"},\"form\":{\"user\":\"me & you\",\"password\":\"hunter2\",\"tag\":[\"a\",\"b c\"],\"é\":\"ü\"}}" >in
	run -0 --separate-stderr sc-fetch <in
	assert_equal "$(echoed "$output")" \
		'{"method":"POST","query":"keep=no","body":"user=me+%26+you&password=hunter2&tag=a&tag=b+c&%C3%A9=%C3%BC","type":"application/x-www-form-urlencoded"}'
	assert_equal "$(jq -c .form <<<"$output")" '{"user":"me & you","password":"[redacted]","tag":["a","b c"],"é":"ü"}'
	[[ $stderr != *hunter2* ]] || fail "the secret in the metrics"
}

@test "a GET form is the URL's query, replacing the action's (HTML's default method)" {
	echo "{\"url\":\"$SC_BASE/echo?old=1\",\"form\":{\"q\":\"x y\",\"page\":\"2\"}}" >in
	run -0 --separate-stderr sc-fetch <in
	assert_equal "$(echoed "$output")" '{"method":"GET","query":"q=x+y&page=2","body":"","type":null}'
	assert_equal "$(jq -r .final_url <<<"$output")" "$SC_BASE/echo?q=x+y&page=2"
}

@test "multipart/form-data: fields and a file's bytes under its name; an unreadable file is bad_input" {
	printf 'file body\n' >up.txt
	echo "{\"url\":\"$SC_BASE/echo\",\"request\":{\"method\":\"POST\"},\"enctype\":\"multipart/form-data\",\"form\":{\"note\":\"hi\",\"doc\":{\"file\":\"$PWD/up.txt\"}}}" >in
	run -0 --separate-stderr sc-fetch <in
	body=$(jq -r '.body | fromjson | .body' <<<"$output")
	[[ $(jq -r '.body | fromjson | .headers["Content-Type"]' <<<"$output") == multipart/form-data\;\ boundary=* ]]
	[[ $body == *'name="note"'*hi* ]] || fail "$body"
	[[ $body == *'name="doc"; filename="up.txt"'*'file body'* ]] || fail "$body"
	echo "{\"url\":\"$SC_BASE/echo\",\"request\":{\"method\":\"POST\"},\"enctype\":\"multipart/form-data\",\"form\":{\"doc\":{\"file\":\"$PWD/none.txt\"}}}" >in
	run -3 --separate-stderr sc-fetch <in
	assert_equal "$(jq -r '.error.kind + ": " + .error.message' <<<"$output")" 'bad_input: form has a file that cannot be read'
}

@test "malformed forms are bad_input records, nothing sent" {
	{
		echo "{\"url\":\"$SC_BASE/echo\",\"form\":[1]}"
		echo "{\"url\":\"$SC_BASE/echo\",\"form\":{\"a\":1}}"
		echo "{\"url\":\"$SC_BASE/echo\",\"form\":{\"a\":\"b\"},\"enctype\":\"text/plain\"}"
		echo "{\"url\":\"$SC_BASE/echo\",\"form\":{\"a\":\"b\"},\"request\":{\"method\":\"POST\",\"body\":\"x\"}}"
		echo "{\"url\":\"$SC_BASE/echo\",\"form\":{\"f\":{\"file\":\"/etc/hostname\"}}}"
		echo "{\"url\":\"$SC_BASE/echo\",\"enctype\":\"multipart/form-data\"}"
	} >in
	run -3 --separate-stderr sc-fetch --keep-order <in
	run -0 jq -r '.error.message' <<<"$output"
	assert_output "$(printf '%s\n' 'form is not an object' \
		'form has a value that is neither a string nor {"file": PATH}' \
		'enctype is neither application/x-www-form-urlencoded nor multipart/form-data' \
		'request.body and form exclude each other' \
		'form has a file, which only enctype multipart/form-data sends' \
		'enctype without a form')"
	run -0 sc_server_log 'length'
	assert_output 0
}

@test "a login as a pipeline: the form's CSRF token and cookie, a POST, the 302 followed as a GET with the session; the jar serves the next run" {
	echo "$SC_BASE/login" | sc-fetch -q --cookies jar.txt >login.jsonl
	token=$(jq -r '.body' login.jsonl | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p')
	[ -n "$token" ]
	jq -c --arg t "$token" --arg u "$SC_BASE/login" \
		'{url: $u, request: {method: "POST"}, form: {csrf: $t, user: "me", pass: "secret", go: "in"}}' \
		login.jsonl >form.jsonl
	run -0 --separate-stderr sc-fetch --cookies jar.txt <form.jsonl
	printf '%s\n' "$output" >account.jsonl
	assert_equal "$(jq -r '[.status, .final_url] | @tsv' account.jsonl)" "$(printf '200\t%s' "$SC_BASE/account")"
	assert_equal "$(jq -r .body account.jsonl)" 'welcome me'
	# The session is in the jar: another run is logged in.
	run -0 --separate-stderr sc-fetch --cookies jar.txt <<<"$SC_BASE/account"
	assert_equal "$(jq -r .body <<<"$output")" 'welcome me'
	# Without it, the account redirects to the login.
	run -0 --separate-stderr sc-fetch <<<"$SC_BASE/account"
	assert_equal "$(jq -r .final_url <<<"$output")" "$SC_BASE/login"
	# A wrong password is a 403.
	jq -c '.form.pass = "wrong"' form.jsonl | sc-fetch -q --cookies jar.txt >bad.jsonl || true
	assert_equal "$(jq -r .status bad.jsonl)" 403
	# The password is nowhere but in what went over the wire.
	run -1 grep -rl 'secret' account.jsonl jar.txt bad.jsonl
}

@test "the login pipeline of sc-fetch(1) as written: sc-parse --forms, jq fills the fields, sc-fetch logs in" {
	export SITE=$SC_BASE PASS=secret
	run -0 --separate-stderr bash -c '
		echo "$SITE/login" | sc-fetch -q --cookies jar.txt | sc-parse --forms |
			jq -c '"'"'select(.form.user != null) | .form.user = "me" | .form.pass = env.PASS'"'"' |
			sc-fetch -q --cookies jar.txt'
	assert_equal "$(jq -r '[.status, .final_url] | @tsv' <<<"$output")" "$(printf '200\t%s' "$SC_BASE/account")"
	assert_equal "$(jq -r .body <<<"$output")" 'welcome me'
	assert_equal "$(jq -c .form <<<"$output" | jq -c 'del(.csrf)')" '{"user":"me","pass":"[redacted]","go":"in"}'
}
