#!/usr/bin/env bats
# crawl.mk's sessions (sc-crawl(7), "Cookies and logins"): a session that
# the site ends mid-crawl is logged in again (once per loss) and its pages
# fetched again, a login that fails then stops the crawl before anything
# more is fetched, and a cookie wall is passed by a LOGIN script.  The
# fixture's /account/expire?n=N makes later logins' sessions live for N
# requests; /account/p/1..20 is a tree of members' pages behind the login;
# /wall/1..5 a chain of pages behind a consent form.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/crawl'
load 'lib/tinyproxy'

bats_require_minimum_version 1.5.0

setup_file() {
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
	export SITE=$SC_BASE PASS=secret
	# The login pipeline of sc-fetch(1); each run counted in logins.
	cat >login.sh <<'SH'
#!/bin/sh
echo run >>logins
echo "$SITE/login" | sc-fetch -q --cookies "$1" | sc-parse --forms |
	jq -c 'select(.form.user != null) | .form.user = "me" | .form.pass = env.PASS' |
	sc-fetch -q --cookies "$SC_COOKIES" >/dev/null
SH
	chmod +x login.sh
	echo "$SITE/account/p/1" >seeds.txt
}

# The members' pages' records: "URL STATUS FINAL_URL", sorted.
members() {
	jq -r 'select(.url | contains("/account/p/")) | "\(.url) \(.status) \(.final_url)"' "$1/pages.jsonl" | sort
}

@test "a session that ends every 6 requests: logged in again once per loss, every page behind the login found, each asked for at most once more per loss" {
	curl -sf "$SITE/account/expire?n=6" >/dev/null
	run -0 crawl_make SEEDS=seeds.txt DEPTH=4 DIR=c C=2 PROGRESS=0 LOGIN="$PWD/login.sh" \
		LOGIN_CHECK="$SITE/account" LOGIN_URL="$SITE/login"
	local i expected=()
	for ((i = 1; i <= 20; i++)); do expected+=("$SITE/account/p/$i 200 $SITE/account/p/$i"); done
	assert_equal "$(members c)" "$(printf '%s\n' "${expected[@]}" | sort)"
	# Each session serves the login's redirect, the check and 4 pages: 20
	# pages take 5 logins
	# at least; every login but the first follows a loss the crawl said.
	local logins losses
	logins=$(wc -l <logins)
	losses=$(grep -c 'the session was lost' <<<"$output")
	((logins >= 5)) || fail "$logins logins for 20 pages in sessions of 6 requests"
	assert_equal "$logins" $((losses + 1))
	# A loss costs its chunk only what was in flight (C=2): no page was
	# asked for more than once per loss after its first.
	run -0 sc_server_log '[.[] | select(.path | startswith("/account/p/"))] | length'
	((output <= 20 + 2 * losses)) || fail "$output requests for 20 pages and $losses losses"
	# Nothing lost is left in the records, and the rounds' logs hold the
	# redone pages' metrics too (a loss is an answer at the login page
	# of each chunk, and of each request in flight).
	! grep -q session_lost c/pages.jsonl
	run -0 bash -c 'cat c/round-*/chunk-*.log | jq -s "map(select(.event == \"summary\") | .session_lost.answers) | add"'
	((output >= losses && output <= 2 * losses * 2)) || fail "$output answers at the login page for $losses losses"
}

@test "a login that fails when the session is lost stops the crawl before anything more is fetched; a page the login never opens is kept as it is" {
	curl -sf "$SITE/account/expire?n=4" >/dev/null
	# The second login sends a wrong password.
	cat >once.sh <<'SH'
#!/bin/sh
[ -e logins ] && export PASS=wrong
exec ./login.sh "$@"
SH
	chmod +x once.sh
	run -2 crawl_make SEEDS=seeds.txt DEPTH=4 DIR=c C=1 PROGRESS=0 LOGIN=./once.sh \
		LOGIN_CHECK="$SITE/account" LOGIN_URL="$SITE/login"
	assert_output --partial 'the session was lost'
	assert_output --partial "LOGIN=./once.sh failed (status 3; c/login.log): nothing was fetched"
	[ ! -e c/pages.jsonl ]
	# After the failed login's POST, the server saw no request at all.
	run -0 sc_server_log '.[-1] | "\(.method) \(.path) \(.status)"'
	assert_output '"POST /login 403"'
	# A page that is the login page whatever the session (here: every
	# page, the login never holding past its check) is kept, not redone
	# for ever.
	curl -sf "$SITE/account/expire?n=1" >/dev/null
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=d C=1 PROGRESS=0 LOGIN=./login.sh \
		LOGIN_URL="$SITE/login"
	assert_output --partial 'still end at LOGIN_URL'
	run -0 jq -r '.error.kind' d/pages.jsonl
	assert_output session_lost
}

@test "a cookie wall: every page is the wall without consent; a LOGIN script that accepts it opens the chain" {
	echo "$SITE/wall/1" >wall.txt
	run -0 crawl_make SEEDS=wall.txt DEPTH=5 DIR=c PROGRESS=0
	run -0 jq -r '.title' c/pages.jsonl
	assert_output 'Cookies'
	cat >consent.sh <<'SH'
#!/bin/sh
echo "$SITE/wall/1" | sc-fetch -q --cookies "$1" | sc-parse --forms |
	jq -c 'select(.form.next != null) | .form.accept = "yes"' |
	sc-fetch -q --cookies "$1" >/dev/null
SH
	chmod +x consent.sh
	run -0 crawl_make SEEDS=wall.txt DEPTH=5 DIR=d PROGRESS=0 LOGIN=./consent.sh
	run -0 jq -r '[.depth, .url, .title] | @tsv' d/pages.jsonl
	assert_output "$(for i in 1 2 3 4 5; do printf '%s\t%s\twall %s\n' $((i - 1)) "$SITE/wall/$i" "$i"; done)"
	grep -q $'\tconsent\tyes$' d/cookies.txt
}

@test "no secret is found by grep in anything but the jar and the WARC: a login, a lost session, a proxy with credentials" {
	curl -sf "$SITE/account/expire?n=8" >/dev/null
	# The session cookie's value, and the proxy's credentials.
	run -0 crawl_make SEEDS=seeds.txt DEPTH=4 DIR=c C=2 LOGIN="$PWD/login.sh" \
		LOGIN_CHECK="$SITE/account" LOGIN_URL="$SITE/login" WARC=1 METRICS=1 PROGRESS=1 \
		PROGRESS_EVERY=1 FETCH_ARGS="--proxy $PROXY"
	mkdir out
	printf '%s\n' "$output" >out/crawl.txt
	grep -q 'the session was lost' out/crawl.txt || fail "no session lost: $output"
	# It went through the proxy, which the summaries name without credentials.
	grep -qF "\"$PROXY_NAME\"" c/round-0/chunk-*.log || fail "no proxy named in the metrics"
	crawl_make DIR=c status >out/status.txt 2>&1
	crawl_make DIR=c report >out/report.txt 2>&1
	crawl_make DIR=c LOGIN="$PWD/login.sh" cookies >out/cookies.txt 2>&1
	crawl_make DIR=c LOGIN="$PWD/login.sh" LOGIN_URL="$SITE/login" retry >out/retry.txt 2>&1
	# The jar and the WARC hold them (that is what they are for) ...
	grep -q $'\tsession\tok-me-' c/cookies.txt
	find c -name '*.warc.gz' -exec zcat {} + | grep -qa 'Cookie: session=ok-me-'
	# ... and nothing else: the password, the cookie's value, the proxy's.
	run -1 grep -rlaE 'secret|ok-me-[0-9]|s3cret|scuser' . \
		--exclude=cookies.txt --exclude='*.warc.gz' --exclude=login.sh --exclude=once.sh
	# (the form's password field is in the records as [redacted])
}
