#!/usr/bin/env bats
# sc-render --cookies FILE (sc-render(1), "Cookies"): the crawl's one jar,
# the cookies.txt every sc-fetch of the crawl reads and writes at once,
# shared with the browser's context: the file's cookies go with the pages'
# requests, what a page sets is in the file before the page's record, a
# change another process saves mid-run reaches the next page, and no
# process loses another's cookie.  The fixture's /set-cookie?c=SPEC sets
# one and answers with the Cookie field it got.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0
load 'lib/server'
load 'lib/render'

setup_file() {
	sc_render_setup_file "$BATS_TEST_DIRNAME/render/basic"
}

teardown_file() {
	sc_server_stop
}

setup() {
	sc_render_setup
}

# The Cookie field each rendered /set-cookie page shows, in input order.
cookie_fields() {
	jq -r '.body | capture("<pre[^>]*>(?<c>[^<]*)</pre>").c // ""' "$@"
}

# A /set-cookie URL that sets SPEC (URL-encoded here).
set_url() {
	printf '%s/set-cookie?c=%s\n' "$SC_BASE" "$(jq -rn --arg s "$1" '$s | @uri')"
}

@test "--cookies FILE: the file's cookies go with every page, what a page sets is in the file (0600) before its record, and curl and sc-fetch send it" {
	printf '# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tseed\tfromcurl\n' >jar.txt
	{
		set_url 'sid=abc; Path=/; Max-Age=3600; HttpOnly'
		echo "$SC_BASE/set-cookie"
	} >in
	run -0 --separate-stderr sc-render -c 1 --keep-order --cookies jar.txt <in
	printf '%s\n' "$output" >out
	run -0 cookie_fields out
	assert_output "$(printf 'seed=fromcurl\nseed=fromcurl; sid=abc')"
	# curl's format: HttpOnly's prefix, host-only FALSE, the expiry kept.
	grep -Eq $'^#HttpOnly_127\\.0\\.0\\.1\tFALSE\t/\tFALSE\t[0-9]{10}\tsid\tabc$' jar.txt ||
		fail "$(cat jar.txt)"
	grep -q $'^127.0.0.1\tFALSE\t/\tFALSE\t0\tseed\tfromcurl$' jar.txt
	assert_equal "$(stat -c %a jar.txt)" 600
	run -0 curl -s -b jar.txt "$SC_BASE/set-cookie"
	assert_output 'seed=fromcurl; sid=abc'
	run -0 --separate-stderr sc-fetch --cookies jar.txt <<<"$SC_BASE/set-cookie"
	assert_equal "$(jq -r .body <<<"$output")" 'seed=fromcurl; sid=abc'
	# The record's body was the page, not the file's news: a third page of
	# a new run that sets nothing leaves the file as it was (no rewrite).
	local inode
	inode=$(stat -c %i jar.txt)
	run -0 --separate-stderr sc-render --cookies jar.txt <<<"$SC_BASE/set-cookie"
	assert_equal "$(cookie_fields <<<"$output")" 'seed=fromcurl; sid=abc'
	assert_equal "$(stat -c %i jar.txt)" "$inode"
}

@test "--cookies FILE: a cookie another process saves mid-run reaches the next page, one it deletes is gone from it, and one the page sets reaches that process" {
	printf '# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\told\tgone-soon\n' >jar.txt
	mkfifo urls
	sc-render -c 1 --cookies jar.txt <urls >out 2>err 3>&- &
	local pid=$!
	exec 5>urls
	set_url 'mine=fromrender; Path=/' >&5
	wait_lines() {
		for ((i = 0; i < 200; i++)); do
			(($(wc -l <out) >= $1)) && return 0
			sleep 0.1
		done
		return 1
	}
	wait_lines 1 || fail "no first record: $(cat err)"
	# The page's cookie is in the file once its record is out.
	grep -q $'\tmine\tfromrender$' jar.txt || fail "$(cat jar.txt)"
	# Another process sets one and deletes one...
	run -0 --separate-stderr sc-fetch --cookies jar.txt < <(set_url 'other=fromfetch; Path=/' && set_url 'old=; Max-Age=0')
	assert_equal "$(jq -sr 'map(.body) | .[0]' <<<"$output")" 'mine=fromrender; old=gone-soon'
	# ... and the next page sees both changes.
	echo "$SC_BASE/set-cookie" >&5
	exec 5>&-
	wait "$pid"
	run -0 cookie_fields out
	assert_output "$(printf 'old=gone-soon\nmine=fromrender; other=fromfetch')"
	! grep -q $'\told\t' jar.txt || fail "$(cat jar.txt)"
}

@test "--cookies FILE: three tabs and two sc-fetch writing at once lose none of each other's cookies" {
	: >jar.txt
	for i in 1 2 3 4 5 6; do set_url "tab$i=v$i; Path=/; Max-Age=600"; done >render.in
	for i in 1 2 3 4 5 6; do set_url "fetch$i=w$i; Path=/; Max-Age=600"; done >fetch.in
	sc-render -c 3 --cookies jar.txt <render.in >render.out 2>render.err &
	local pid=$!
	sc-fetch -q -c 1 --cookies jar.txt <fetch.in >fetch1.out &
	local f1=$!
	sc-fetch -q -c 3 --cookies jar.txt < <(sed 's/fetch\([0-9]\)/more\1/' fetch.in) >fetch2.out
	wait "$f1"
	wait "$pid" || fail "$(cat render.err)"
	assert_equal "$(jq -s 'map(select(.ok)) | length' render.out)" 6
	run -0 awk -F '\t' '!/^#/ && NF == 7 { print $6 "=" $7 }' jar.txt
	assert_equal "$(sort <<<"$output" | tr '\n' ' ')" \
		"fetch1=w1 fetch2=w2 fetch3=w3 fetch4=w4 fetch5=w5 fetch6=w6 more1=w1 more2=w2 more3=w3 more4=w4 more5=w5 more6=w6 tab1=v1 tab2=v2 tab3=v3 tab4=v4 tab5=v5 tab6=v6 "
	# And the whole jar goes with a page of the next run.
	run -0 --separate-stderr sc-render --cookies jar.txt <<<"$SC_BASE/set-cookie"
	assert_equal "$(cookie_fields <<<"$output" | tr -d ' ' | tr ';' '\n' | wc -l)" 18
}

@test "--cookies: a file not there is made at the first cookie, not before; a folder is an error at start, before any page" {
	run -0 --separate-stderr sc-render --cookies new.txt <<<"$SC_BASE/set-cookie"
	[[ ! -e new.txt ]] || fail "made with no cookie: $(cat new.txt)"
	run -0 --separate-stderr sc-render --cookies new.txt < <(set_url 'first=1; Path=/')
	grep -q $'\tfirst\t1$' new.txt
	assert_equal "$(stat -c %a new.txt)" 600
	mkdir dir
	run -1 --separate-stderr sc-render --cookies dir <<<"$SC_BASE/set-cookie"
	assert_equal "$stderr" "sc-render: --cookies: dir: not a file"
	assert_equal "$output" ""
}

# A record for URL, with a "session" member S (none when S is empty).
session_rec() {
	jq -cn --arg u "$1" --arg s "$2" '{url: $u} + (if $s == "" then {} else {session: $s} end)'
}

@test "a record's session: a jar of its own, apart from the run's (--cookies' file) and from the others; the member travels" {
	: >jar.txt
	{
		session_rec "$(set_url 'a=1; Path=/')" alice
		session_rec "$(set_url 'b=2; Path=/; HttpOnly')" bob
		session_rec "$(set_url 'r=0; Path=/')" ''
		session_rec "$SC_BASE/set-cookie" alice
		session_rec "$SC_BASE/set-cookie" bob
		session_rec "$SC_BASE/set-cookie" ''
	} >in
	run -0 --separate-stderr sc-render -c 1 --keep-order --cookies jar.txt <in
	printf '%s\n' "$output" >out
	run -0 cookie_fields out
	assert_output "$(printf '\n\n\na=1\nb=2\nr=0')"
	assert_equal "$(jq -r '.session // "-"' out | tr '\n' ' ')" "alice bob - alice bob - "
	# The sessions' cookies are in memory only: the file has the run's.
	run -0 awk -F '\t' '!/^#[^H]/ && NF == 7 { print $6 "=" $7 }' jar.txt
	assert_output 'r=0'
	# Three tabs, pages of each jar at once: each page sees its own.
	for s in alice bob carol alice bob carol; do session_rec "$(set_url "$s=x; Path=/")" "$s"; done >in2
	for s in alice bob carol alice bob carol; do session_rec "$SC_BASE/set-cookie" "$s"; done >in3
	run -0 --separate-stderr sc-render -c 3 --keep-order < <(cat in2 in3)
	assert_equal "$(cookie_fields <<<"$output" | tail -6 | tr '\n' ' ')" "alice=x bob=x carol=x alice=x bob=x carol=x "
}

@test "the jars' cookies outlive a browser restarted after every page (--browser-pages 1), session cookies and HttpOnly ones too" {
	{
		session_rec "$(set_url 'sid=s1; Path=/; HttpOnly')" alice
		session_rec "$(set_url 'run=r1; Path=/; Max-Age=600')" ''
		session_rec "$SC_BASE/set-cookie" alice
		session_rec "$SC_BASE/set-cookie" ''
		session_rec "$(set_url 'sid=; Max-Age=0')" alice
		session_rec "$SC_BASE/set-cookie" alice
	} >in
	run -0 --separate-stderr sc-render -c 1 --keep-order --browser-pages 1 <in
	printf '%s\n' "$output" >out
	run -0 cookie_fields out
	assert_output "$(printf '\n\nsid=s1\nrun=r1\nsid=s1\n')"
}

@test "a record's session that is not a non-empty string is a bad_input record, in sc-fetch's words" {
	{
		jq -cn --arg u "$SC_BASE/set-cookie" '{url: $u, session: ""}'
		jq -cn --arg u "$SC_BASE/set-cookie" '{url: $u, session: 7}'
		session_rec "$SC_BASE/set-cookie" ok
	} >in
	run -3 --separate-stderr sc-render -c 1 --keep-order <in
	assert_equal "$(jq -r '[.ok, (.error.kind // "-"), (.error.message // "-")] | @tsv' <<<"$output")" \
		"$(printf 'false\tbad_input\t"session" is not a non-empty string\nfalse\tbad_input\t"session" is not a non-empty string\ntrue\t-\t-')"
	# sc-fetch says it so.
	run -3 --separate-stderr sc-fetch -q < <(sed -n 1p in)
	assert_equal "$(jq -r .error.message <<<"$output")" '"session" is not a non-empty string'
}
