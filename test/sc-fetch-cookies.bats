#!/usr/bin/env bats
# sc-fetch's cookies (sc-fetch(1), "Cookies"): libcurl's cookie engine on
# by default within a run, --no-cookies, a jar per record "session",
# --cookies FILE in the Netscape cookies.txt format that curl and wget
# read and write (round trips with Debian's curl and wget), the file read
# again when another process changed it, written when a cookie changes,
# mode 0600, and cookie values kept out of the metrics.  The fixture's
# /set-cookie?c=SPEC sets one and answers with the Cookie field it got.

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

# The body (the Cookie field the server got) of each record, in input order.
bodies() {
	jq -r '.body' <<<"$1"
}

@test "a cookie a response sets is sent with the run's later requests to its host, not with --no-cookies" {
	printf '%s\n' "$SC_BASE/set-cookie?c=sid%3Dabc123%3B%20Path%3D%2F" "$SC_BASE/set-cookie" \
		"http://localhost:$SC_PORT/set-cookie" >in
	run -0 --separate-stderr sc-fetch -c 1 --keep-order <in
	run -0 bodies "$output"
	# The first request had none; the second sent it; another host never.
	assert_output "$(printf '\nsid=abc123\n')"
	run -0 --separate-stderr sc-fetch -c 1 --keep-order --no-cookies <in
	run -0 bodies "$output"
	assert_output "$(printf '\n\n')"
}

@test "a record's session member keeps a jar of its own; a bad one is bad_input" {
	{
		echo "{\"url\":\"$SC_BASE/set-cookie?c=who%3Dalice\",\"session\":\"a\"}"
		echo "{\"url\":\"$SC_BASE/set-cookie?c=who%3Dbob\",\"session\":\"b\"}"
		echo "{\"url\":\"$SC_BASE/set-cookie\",\"session\":\"a\"}"
		echo "{\"url\":\"$SC_BASE/set-cookie\",\"session\":\"b\"}"
		echo "{\"url\":\"$SC_BASE/set-cookie\"}"
		echo "{\"url\":\"$SC_BASE/set-cookie\",\"session\":7}"
	} >in
	run -3 --separate-stderr sc-fetch -c 1 --keep-order <in
	printf '%s\n' "$output" >out
	run -0 jq -r '[.session // "-", .body // "-"] | @tsv' out
	assert_output "$(printf 'a\t\nb\t\na\twho=alice\nb\twho=bob\n-\t\n7\t-')"
	run -0 jq -r 'select(.session == 7) | [.error.kind, .error.message] | @tsv' out
	assert_output "$(printf 'bad_input\t"session" is not a non-empty string')"
}

@test "--cookies FILE: saved as cookies.txt (0600) that curl and wget send; curl's and wget's files are read" {
	echo "$SC_BASE/set-cookie?c=sid%3Dfrom-sc%3B%20Path%3D%2F%3B%20Max-Age%3D3600&d=pref%3Ddark" |
		sc-fetch -q --cookies jar.txt >/dev/null
	[ "$(stat -c %a jar.txt)" = 600 ]
	run -0 head -1 jar.txt
	assert_output '# Netscape HTTP Cookie File'
	run -0 curl -s -b jar.txt "$SC_BASE/set-cookie"
	assert_output --partial 'sid=from-sc'
	assert_output --partial 'pref=dark'
	run -0 wget -q -O - --load-cookies jar.txt "$SC_BASE/set-cookie"
	assert_output --partial 'sid=from-sc'
	# curl's jar, then wget's, read by sc-fetch.
	curl -s -c curl.txt "$SC_BASE/set-cookie?c=made%3Dcurl%3B%20Max-Age%3D3600" >/dev/null
	run -0 bash -c 'echo "$1/set-cookie" | sc-fetch -q --cookies curl.txt 2>/dev/null' _ "$SC_BASE"
	assert_equal "$(jq -r .body <<<"$output")" 'made=curl'
	wget -q -O /dev/null --save-cookies wget.txt "$SC_BASE/set-cookie?c=made%3Dwget%3B%20Max-Age%3D3600"
	run -0 bash -c 'echo "$1/set-cookie" | sc-fetch -q --cookies wget.txt 2>/dev/null' _ "$SC_BASE"
	assert_equal "$(jq -r .body <<<"$output")" 'made=wget'
	# An unreadable jar is an error at start; a missing one is made.
	mkdir dir.txt
	run -1 --separate-stderr sc-fetch --cookies dir.txt </dev/null
	assert_output ''
	[[ $stderr == *"--cookies: dir.txt: not a file"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-fetch --cookies '' </dev/null
	[[ $stderr == *"--cookies: the file name is empty"* ]]
}

@test "--cookies FILE: a second sc-fetch started with the first sees the cookie the first saved" {
	# Both start at once; the second's URL comes once the first has saved.
	{
		echo "$SC_BASE/set-cookie?c=login%3Dyes%3B%20Max-Age%3D3600"
		echo "$SC_BASE/delay/1500"
	} | sc-fetch -q -c 1 --cookies shared.txt >first.out &
	local first=$!
	run -0 bash -c '
		{
			for ((i = 0; i < 100; i++)); do
				grep -q "login" shared.txt 2>/dev/null && break
				sleep 0.05
			done
			echo "$1/set-cookie"
		} | sc-fetch -q --cookies shared.txt 2>/dev/null' _ "$SC_BASE"
	wait "$first"
	assert_equal "$(jq -r .body <<<"$output")" 'login=yes'
	# The second process set nothing: the file still holds the first's.
	grep -q $'\tlogin\tyes$' shared.txt
}

@test "cookie values are not in the metrics or the summary" {
	# The value percent-encoded in the URL, so that the URL (which the
	# metrics name) does not spell it.
	echo "$SC_BASE/set-cookie?c=secret%3D%73%33cr%33t-v4lue" >in
	echo "$SC_BASE/set-cookie" >>in
	run -0 --separate-stderr sc-fetch -c 1 --cookies jar.txt <in
	[[ $stderr != *s3cr3t* ]] || fail "a cookie value in the metrics: $stderr"
	run -0 jq -s -c 'map(select(.event == "summary"))[0].cookies' <<<"$stderr"
	assert_output '{"loads":0,"saves":1,"merges":0,"save_errors":0}'
}

@test "--cookies FILE shared by processes writing at once: none loses another's cookie, a deletion holds, a third's cookie reaches two running" {
	# Four writers at once, 40 cookies each, every response a Set-Cookie.
	local w i
	for w in 1 2 3 4; do
		for ((i = 0; i < 40; i++)); do echo "$SC_BASE/set-cookie?c=w${w}_$i%3Dv%3B%20Max-Age%3D3600"; done >"in$w"
	done
	for w in 1 2 3 4; do sc-fetch -q -c 4 --cookies many.txt <"in$w" >/dev/null 2>"err$w" & done
	wait
	run -0 grep -c $'\tw[1-4]_[0-9]*\tv$' many.txt
	assert_output 160
	[ "$(stat -c %a many.txt)" = 600 ]
	# Two running processes (A, B) see what a third (C) set, and a cookie
	# C deletes stays deleted though A and B held it and write after.
	echo "$SC_BASE/set-cookie?c=old%3D1%3B%20Max-Age%3D3600" | sc-fetch -q --cookies three.txt >/dev/null
	for w in a b; do
		{
			echo "$SC_BASE/set-cookie?c=from_$w%3D1%3B%20Max-Age%3D3600"
			for ((i = 0; i < 100; i++)); do
				grep -q $'\tfrom_c\t' three.txt 2>/dev/null && break
				sleep 0.05
			done
			echo "$SC_BASE/set-cookie?c=after_$w%3D1%3B%20Max-Age%3D3600"
		} | sc-fetch -q -c 1 --keep-order --cookies three.txt >"$w.out" &
	done
	for ((i = 0; i < 100; i++)); do
		[[ $(grep -c $'\tfrom_[ab]\t' three.txt) == 2 ]] && break
		sleep 0.05
	done
	printf '%s\n' "$SC_BASE/set-cookie?c=old%3D%3B%20Max-Age%3D0" "$SC_BASE/set-cookie?c=from_c%3D1%3B%20Max-Age%3D3600" |
		sc-fetch -q -c 1 --keep-order --cookies three.txt >/dev/null
	wait
	for w in a b; do
		run -0 jq -r '.body' "$w.out"
		[[ ${lines[1]} == *from_c=1* ]] || fail "$w did not see C's cookie: ${lines[1]}"
		[[ ${lines[1]} != *old=* ]] || fail "$w still sent the deleted cookie: ${lines[1]}"
	done
	run -0 cut -f 6 three.txt
	run -0 sort <<<"$(grep -v '^#' <<<"$output" | grep .)"
	assert_output "$(printf 'after_a\nafter_b\nfrom_a\nfrom_b\nfrom_c')"
}

@test "--cookies FILE: kill -9 mid-write leaves a whole jar that curl and the next sc-fetch read, and no temporary file after it" {
	local i n pid
	rm -f killed.txt
	for ((i = 0; i < 4000; i++)); do echo "$SC_BASE/set-cookie?c=k$((i % 50))%3D$i%3B%20Max-Age%3D3600"; done >in
	for n in 1 2 3; do
		sc-fetch -q -c 8 --cookies killed.txt <in >/dev/null 2>&1 &
		pid=$!
		# Killed while it writes: once it has written, at a moment after.
		for ((i = 0; i < 200; i++)); do
			[[ -s killed.txt ]] && break
			sleep 0.05
		done
		sleep "0.$((n * 2))"
		kill -9 "$pid"
		wait "$pid" || true
		# Every line a comment, blank, or a cookie of seven fields.
		run -0 awk -F '\t' '!/^#/ && NF && NF != 7 { bad++ } END { print bad + 0 }' killed.txt
		assert_output 0
		grep -q $'\tk[0-9]*\t' killed.txt || fail "no cookie in the jar"
	done
	run -0 curl -s -b killed.txt "$SC_BASE/set-cookie"
	assert_output --partial 'k0='
	# One a writer killed between its write and its rename would leave.
	echo junk >killed.txt.sc-tmp.AbC123
	run -0 bash -c 'echo "$1/set-cookie?c=last%3D1" | timeout 10 sc-fetch -q --cookies killed.txt' _ "$SC_BASE"
	[[ $(jq -r .body <<<"$output") == *k0=* ]]
	run -1 compgen -G 'killed.txt.sc-tmp.*'
}
