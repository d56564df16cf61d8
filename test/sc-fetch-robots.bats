#!/usr/bin/env bats
# sc-fetch --robots against the fixture server's per-host robots.txt
# (--robots-dir): which URLs get a request (always checked on the server's
# /log, so a disallowed path is never reached), the answers of failed
# robots.txt fetches, redirects, the 500 KiB limit, Crawl-delay timing
# measured on the server's arrival times, origins not held by another's
# robots.txt, the cache across runs and its 24-hour expiry, the metrics;
# then --headers and conditional requests (304 not_modified).  The two
# origins are http://127.0.0.1:PORT and http://localhost:PORT, whose
# robots files are $ROBOTS/127.0.0.1* and $ROBOTS/localhost*.  The matcher
# itself is covered in depth by test/unit/test-robots.c.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'

bats_require_minimum_version 1.5.0

setup_file() {
	export ROBOTS=$BATS_FILE_TMPDIR/robots
	mkdir -p "$ROBOTS"
	sc_server_start --robots-dir "$ROBOTS"
}

teardown_file() {
	sc_server_stop
}

setup() {
	rm -f "$ROBOTS"/*
	sc_server_reset
	LOCAL="http://localhost:$SC_PORT"
}

# The paths the server was asked for on a host (127.0.0.1 by default), in order.
paths() {
	sc_server_log "[.[] | select(.host | startswith(\"${1:-127.0.0.1}:\")) | .path]"
}

# The records' [path, ok, error kind] in input order.
outcomes() {
	jq -c '[(.url | sub("^http://[^/]*"; "")), .ok, .error.kind]' <<<"$output"
}

# The gaps (ms, rounded down) between consecutive arrivals on 127.0.0.1.
gaps() {
	sc_server_log '[.[] | select(.host | startswith("127.0.0.1:")) | .t_ms] |
		[range(1; length) as $i | (.[$i] - .[$i - 1]) | floor]'
}

# ---- which URLs are fetched ----

@test "groups: the agent's groups merged, the longest match, Allow on a tie, else '*'" {
	cat >"$ROBOTS/127.0.0.1" <<-'EOF'
		User-agent: scbot
		Disallow: /page/1
		Disallow: /status/2*$

		User-agent: *
		Disallow: /page/

		User-agent: SCBot
		Allow: /page/1$
		Allow: /status/200
		Disallow: /status/200
	EOF
	for p in /page/1 /page/10 /page/2 /status/200 /status/201 /status/404; do
		echo "$SC_BASE$p"
	done >"$BATS_TEST_TMPDIR/urls"

	run --separate-stderr sc-fetch -q --keep-order --robots -A 'scbot/2.1 (+https://x.test)' \
		<"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(outcomes | tr '\n' ' ')" \
		'["/page/1",true,null] ["/page/10",false,"robots"] ["/page/2",true,null] ["/status/200",true,null] ["/status/201",false,"robots"] ["/status/404",false,"http"] '
	jq -se 'map(select(.error.kind == "robots")) | length == 2 and all(.status == null and (.error.message | startswith("disallowed by robots.txt rule \"Disallow: /")))' <<<"$output"
	assert_equal "$(jq -r 'select(.url | endswith("/page/10")) | .error.message' <<<"$output")" \
		'disallowed by robots.txt rule "Disallow: /page/1"'
	assert_equal "$(paths)" '["/robots.txt","/page/1","/page/2","/status/200","/status/404"]'

	# Another agent gets the '*' group.
	sc_server_reset
	run --separate-stderr sc-fetch -q --keep-order --robots -A 'scbot/2.1' --robots-agent other \
		<"$BATS_TEST_TMPDIR/urls"
	assert_equal "$(outcomes | jq -c '.[1]' | tr '\n' ' ')" 'false false false true true false '
	assert_equal "$(paths)" '["/robots.txt","/status/200","/status/201","/status/404"]'
}

@test "without --robots no robots.txt is asked for and nothing is refused" {
	printf 'User-agent: *\nDisallow: /\n' >"$ROBOTS/127.0.0.1"
	run --separate-stderr sc-fetch -q <<<"$SC_BASE/page/1"
	assert_success
	assert_equal "$(paths)" '["/page/1"]'
}

@test "/robots.txt itself is always allowed; a URL's query is matched too" {
	printf 'User-agent: *\nDisallow: /\nAllow: /page/1?\n' >"$ROBOTS/127.0.0.1"
	printf '%s\n' "$SC_BASE/robots.txt" "$SC_BASE/page/1?a=1" "$SC_BASE/page/1" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q --keep-order --robots <"$BATS_TEST_TMPDIR/urls"
	assert_equal "$(jq -c .ok <<<"$output" | tr '\n' ' ')" 'true true false '
	assert_equal "$(paths)" '["/robots.txt","/robots.txt","/page/1?a=1"]'
}

@test "a 4xx robots.txt (404, 410, 403) allows everything, and is an answer, no error, in the metrics and the summary" {
	for code in 404 410 403; do
		sc_server_reset
		echo "$code" >"$ROBOTS/127.0.0.1.status"
		run --separate-stderr sc-fetch --robots <<<"$SC_BASE/page/1"
		assert_success
		assert_equal "$(paths)" '["/robots.txt","/page/1"]'
		assert_equal "$(jq -c 'select(.event == "request" and .robots) | [.status, .error]' <<<"$stderr")" "[$code,null]"
		assert_equal "$(jq -c 'select(.event == "summary") | [.errors, .status, (.hosts | map(.errors))]' <<<"$stderr")" \
			'[{},{"2xx":1,"4xx":1},[0]]'
	done
}

@test "a 5xx robots.txt disallows the whole origin for the run: robots.txt unreachable" {
	echo 503 >"$ROBOTS/127.0.0.1.status"
	printf 'User-agent: *\nDisallow: /page/9\n' >"$ROBOTS/localhost"
	printf '%s\n' "$SC_BASE/page/1" "$SC_BASE/page/2" "$LOCAL/page/1" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q --keep-order --robots --retries 0 <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(jq -c '[.ok, .status, .error]' <<<"$output" | tr '\n' ' ')" \
		'[false,null,{"kind":"robots","message":"robots.txt unreachable"}] [false,null,{"kind":"robots","message":"robots.txt unreachable"}] [true,200,null] '
	assert_equal "$(paths)" '["/robots.txt"]'
	assert_equal "$(paths localhost)" '["/robots.txt","/page/1"]'
	# An error, unlike a 4xx's answer: the summary counts it.
	run --separate-stderr sc-fetch --robots --retries 0 <<<"$SC_BASE/page/1"
	assert_equal "$(jq -c 'select(.event == "request" and .robots) | [.status, .error]' <<<"$stderr")" '[503,"http"]'
	assert_equal "$(jq -c 'select(.event == "summary") | .errors' <<<"$stderr")" '{"http":1}'
}

@test "a robots.txt that times out, or whose connection is reset, is unreachable" {
	echo 3000 >"$ROBOTS/127.0.0.1.delay"
	printf 'User-agent: *\nAllow: /\n' >"$ROBOTS/127.0.0.1"
	run --separate-stderr sc-fetch -q --robots --retries 0 -m 0.5 <<<"$SC_BASE/page/1"
	assert_failure 3
	assert_equal "$(jq -c .error <<<"$output")" '{"kind":"robots","message":"robots.txt unreachable"}'
	assert_equal "$(paths)" '["/robots.txt"]'

	# A redirect to /reset: a partial body, then a TCP RST.
	rm -f "$ROBOTS"/*
	sc_server_reset
	echo 302 >"$ROBOTS/127.0.0.1.status"
	echo "$SC_BASE/reset" >"$ROBOTS/127.0.0.1.location"
	run --separate-stderr sc-fetch -q --robots --retries 0 <<<"$SC_BASE/page/1"
	assert_failure 3
	assert_equal "$(jq -c .error <<<"$output")" '{"kind":"robots","message":"robots.txt unreachable"}'
	assert_equal "$(paths)" '["/robots.txt","/reset"]'
}

@test "429 and 5xx on robots.txt are retried like any request" {
	echo 429 >"$ROBOTS/127.0.0.1.status"
	run --separate-stderr sc-fetch -q --robots --retries 2 --retry-base 10 <<<"$SC_BASE/page/1"
	assert_failure 3
	assert_equal "$(jq -r .error.message <<<"$output")" 'robots.txt unreachable'
	assert_equal "$(paths)" '["/robots.txt","/robots.txt","/robots.txt"]'

	# Failing once, then answering: the answer is used.
	rm -f "$ROBOTS"/*
	sc_server_reset
	echo 302 >"$ROBOTS/127.0.0.1.status"
	echo "$SC_BASE/flaky/robots?fail=1&status=503" >"$ROBOTS/127.0.0.1.location"
	run --separate-stderr sc-fetch -q --robots --retries 2 --retry-base 10 <<<"$SC_BASE/page/1"
	assert_success
	assert_equal "$(paths)" '["/robots.txt","/flaky/robots?fail=1&status=503","/robots.txt","/flaky/robots?fail=1&status=503","/page/1"]'
}

@test "robots.txt redirects are followed to another host, at most 5 hops" {
	echo 301 >"$ROBOTS/127.0.0.1.status"
	echo "$LOCAL/robots.txt" >"$ROBOTS/127.0.0.1.location"
	printf 'User-agent: *\nDisallow: /page/2\n' >"$ROBOTS/localhost"
	printf '%s\n' "$SC_BASE/page/1" "$SC_BASE/page/2" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q --keep-order --robots --max-redirs 0 <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(jq -c .ok <<<"$output" | tr '\n' ' ')" 'true false '
	assert_equal "$(paths)" '["/robots.txt","/page/1"]'
	assert_equal "$(paths localhost)" '["/robots.txt"]'

	# A loop is given up after 5 redirects: like a 4xx, everything allowed.
	rm -f "$ROBOTS"/*
	sc_server_reset
	echo 302 >"$ROBOTS/127.0.0.1.status"
	echo "$SC_BASE/robots.txt" >"$ROBOTS/127.0.0.1.location"
	run --separate-stderr sc-fetch -q --robots <<<"$SC_BASE/page/1"
	assert_success
	assert_equal "$(paths)" '["/robots.txt","/robots.txt","/robots.txt","/robots.txt","/robots.txt","/robots.txt","/page/1"]'
}

@test "the first 500 KiB of robots.txt are parsed, whatever --max-bytes says" {
	{
		printf 'User-agent: *\nDisallow: /page/1\n'
		# 520 KiB of comment lines, then a rule beyond the limit.
		for i in $(seq 530); do printf '# %01020d\n' 0; done
		printf 'Disallow: /page/2\n'
	} >"$ROBOTS/127.0.0.1"
	[ "$(stat -c %s "$ROBOTS/127.0.0.1")" -gt $((520 * 1024)) ]
	printf '%s\n' "$SC_BASE/page/1" "$SC_BASE/page/2" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch --keep-order --robots --max-bytes 100000 <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(jq -c '[.ok, .error.kind]' <<<"$output" | tr '\n' ' ')" '[false,"robots"] [true,null] '
	assert_equal "$(paths)" '["/robots.txt","/page/2"]'
	assert_equal "$(jq -c 'select(.event == "request" and .robots) | .status' <<<"$stderr")" 200
}

# ---- Crawl-delay ----

@test "Crawl-delay is the origin's minimum gap between request starts" {
	printf 'User-agent: *\nCrawl-delay: 0.4\nDisallow: /x\n' >"$ROBOTS/127.0.0.1"
	for i in 1 2 3 4; do echo "$SC_BASE/page/$i"; done >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -c 4 --robots <"$BATS_TEST_TMPDIR/urls"
	assert_success
	# Five starts (robots.txt included), each 0.4 s after the last (the
	# server sees arrivals, which jitter by some ms on a busy machine;
	# without the delay they are 1 ms apart).
	jq -e 'length == 4 and min >= 350' <<<"$(gaps)" || fail "gaps: $(gaps)"
	jq -se 'map(select(.event == "request" and .robots)) | length == 1 and (.[0] | .crawl_delay == 0.4)' <<<"$stderr"
	jq -se 'map(select(.event == "summary")) | length == 1 and (.[0] | .robots | to_entries[0].value.crawl_delay == 0.4)' <<<"$stderr"
}

@test "crawl.mk's progress watcher counts sc-fetch's metrics as it means to: a URL once at its last attempt, robots.txt never" {
	cd "$BATS_TEST_TMPDIR" || return 1
	printf 'User-agent: *\nCrawl-delay: 0.05\n' >"$ROBOTS/127.0.0.1"
	{
		echo "$SC_BASE/page/1"
		echo "$SC_BASE/flaky/pin?fail=1"
		echo "$SC_BASE/status/404"
	} >urls
	local status=0
	sc-fetch --robots --retries 2 --retry-base 10 --metrics metrics <urls >records || status=$?
	assert_equal "$status" 3
	# The lines the awk reads are there: robots.txt's (with its
	# crawl_delay), a retried attempt, and the last ones.
	grep -q '"robots":true,"crawl_delay"' metrics || fail "no robots.txt line with its Crawl-delay"
	grep -q '"next":"again"' metrics || fail "no retried attempt"
	# shellcheck source=share/sc/crawl-progress.sh
	source "$BATS_TEST_DIRNAME/../share/sc/crawl-progress.sh"
	run -0 awk -v LOG=1 -v L="$(stat -c %s metrics)" "$GROWN_AWK" metrics
	# 3 URLs done, 1 failed (the 404), every byte a whole line; then the
	# host's 3, between the times of the first and the last (ms of the day).
	assert_equal "${lines[0]}" "3 1 $(stat -c %s metrics)"
	assert_equal "${#lines[@]}" 2
	local host count first last
	read -r host count first last <<<"${lines[1]}"
	assert_equal "$host $count" "127.0.0.1 3"
	((first >= 0 && first <= last && last < 86400000)) || fail "${lines[1]}"
}

@test "--max-crawl-delay caps Crawl-delay; --delay, when larger, wins" {
	printf 'User-agent: *\nCrawl-delay: 3600\n' >"$ROBOTS/127.0.0.1"
	for i in 1 2 3; do echo "$SC_BASE/page/$i"; done >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q -c 3 --robots --max-crawl-delay 0.3 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	jq -e 'length == 3 and min >= 250 and max < 3000' <<<"$(gaps)" || fail "gaps: $(gaps)"
	jq -se 'map(select(.event == "summary")) | length == 1 and (.[0] | .robots | to_entries[0].value.crawl_delay == 0.3)' <<<"$stderr"

	sc_server_reset
	printf 'User-agent: *\nCrawl-delay: 0.1\n' >"$ROBOTS/127.0.0.1"
	run --separate-stderr sc-fetch -q -c 3 --robots --delay 500 <"$BATS_TEST_TMPDIR/urls"
	assert_success
	jq -e 'length == 3 and min >= 450' <<<"$(gaps)" || fail "gaps: $(gaps)"
}

@test "--max-crawl-delay: bad values are usage errors" {
	run -2 --separate-stderr sc-fetch --robots --max-crawl-delay -1 </dev/null
	assert_equal "$stderr" "$(printf '%s\n' "sc-fetch: --max-crawl-delay: '-1' is not a number in [0, 86400]" "Try 'sc-fetch --help'.")" ||
		[[ $stderr == *--max-crawl-delay* ]]
	run -2 --separate-stderr sc-fetch --robots-cache x.db </dev/null
	assert_equal "${stderr%%$'\n'*}" 'sc-fetch: --robots-cache needs --robots'
	run -2 --separate-stderr sc-fetch --robots --robots-agent 'bot/1.0' </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-fetch: --robots-agent: 'bot/1.0' is not a product token ([A-Za-z_-]+)"
}

# ---- origins ----

@test "an origin waiting for its robots.txt does not hold up the others" {
	echo 1500 >"$ROBOTS/127.0.0.1.delay"
	printf 'User-agent: *\nDisallow: /page/3\n' >"$ROBOTS/127.0.0.1"
	for i in 1 2 3; do
		echo "$SC_BASE/page/$i"
		echo "$LOCAL/page/$i"
	done >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch -q --robots <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(jq -c 'select(.ok | not) | .url' <<<"$output")" "\"$SC_BASE/page/3\""
	log=$(sc_server_log)
	# localhost's pages all arrive while 127.0.0.1's robots.txt is pending;
	# 127.0.0.1's pages only after its answer (1.5 s later).
	jq -e '(map(select(.host | startswith("127.0.0.1:")))[0]) as $r |
		($r.path == "/robots.txt") and
		(map(select((.host | startswith("localhost:")) and (.path | startswith("/page/"))) | .t_ms) | length == 3 and max < $r.t_ms + 1000) and
		(map(select((.host | startswith("127.0.0.1:")) and (.path | startswith("/page/"))) | .t_ms) | length == 2 and min >= $r.t_ms + 1400)' <<<"$log" ||
		fail "$log"
}

# ---- the cache ----

@test "--robots-cache: a second run asks no robots.txt; after 24 hours it asks again" {
	printf 'User-agent: *\nDisallow: /page/2\nSitemap: http://x.test/map.xml\n' >"$ROBOTS/127.0.0.1"
	printf '%s\n' "$SC_BASE/page/1" "$SC_BASE/page/2" >"$BATS_TEST_TMPDIR/urls"
	cache=$BATS_TEST_TMPDIR/robots.db
	run --separate-stderr sc-fetch --keep-order --robots --robots-cache "$cache" <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(paths)" '["/robots.txt","/page/1"]'

	# The file changes on the server; the cached answer still holds.
	printf 'User-agent: *\nDisallow: /page/1\n' >"$ROBOTS/127.0.0.1"
	sc_server_reset
	run --separate-stderr sc-fetch --keep-order --robots --robots-cache "$cache" <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(jq -c .ok <<<"$output" | tr '\n' ' ')" 'true false '
	assert_equal "$(paths)" '["/page/1"]'
	jq -se 'map(select(.event == "summary")) | length == 1 and (.[0] | .robots_cache.hits == 1 and (.robots | to_entries[0].value | .cached and .sitemaps == ["http://x.test/map.xml"]))' <<<"$stderr"
	assert_equal "$(jq -c 'select(.event == "request" and .robots)' <<<"$stderr")" ''

	# 23 hours old: still fresh.
	sqlite3 "$cache" "update robots set fetched_ms = fetched_ms - 23 * 3600 * 1000"
	sc_server_reset
	run --separate-stderr sc-fetch -q --robots --robots-cache "$cache" <"$BATS_TEST_TMPDIR/urls"
	assert_equal "$(paths)" '["/page/1"]'

	# 25 hours old: fetched again, and the new rules apply.
	sqlite3 "$cache" "update robots set fetched_ms = fetched_ms - 2 * 3600 * 1000"
	sc_server_reset
	run --separate-stderr sc-fetch -q --keep-order --robots --robots-cache "$cache" <"$BATS_TEST_TMPDIR/urls"
	assert_equal "$(jq -c .ok <<<"$output" | tr '\n' ' ')" 'false true '
	assert_equal "$(paths)" '["/robots.txt","/page/2"]'
}

@test "--robots-cache: an unreachable robots.txt is not cached" {
	echo 503 >"$ROBOTS/127.0.0.1.status"
	cache=$BATS_TEST_TMPDIR/robots.db
	run --separate-stderr sc-fetch -q --robots --retries 0 --robots-cache "$cache" <<<"$SC_BASE/page/1"
	assert_failure 3
	rm "$ROBOTS/127.0.0.1.status"
	sc_server_reset
	run --separate-stderr sc-fetch -q --robots --robots-cache "$cache" <<<"$SC_BASE/page/1"
	assert_success
	assert_equal "$(paths)" '["/robots.txt","/page/1"]'
}

@test "--robots-cache: a file that cannot be opened is an error at start" {
	run -1 --separate-stderr sc-fetch --robots --robots-cache "$BATS_TEST_TMPDIR/no/such/dir/c.db" </dev/null
	[[ $stderr == "sc-fetch: --robots-cache: "* ]] || fail "$stderr"
	assert_output ''
}

# ---- metrics ----

@test "metrics: robots.txt has its own request line, is no record; the summary has sitemaps" {
	printf 'User-agent: *\nCrawl-delay: 0.2\nDisallow: /page/2\nSitemap: http://x.test/a.xml\nSitemap: http://x.test/b.xml.gz\n' >"$ROBOTS/127.0.0.1"
	printf '%s\n' "$SC_BASE/page/1" "$SC_BASE/page/2" >"$BATS_TEST_TMPDIR/urls"
	run --separate-stderr sc-fetch --robots <"$BATS_TEST_TMPDIR/urls"
	assert_failure 3
	assert_equal "$(wc -l <<<"$output")" 2
	assert_equal "$(jq -c 'select(.event == "request" and .robots) | [.url, .status, .crawl_delay, .next]' <<<"$stderr")" \
		"[\"$SC_BASE/robots.txt\",200,0.2,\"done\"]"
	assert_equal "$(jq -c 'select(.event == "request" and (.robots | not)) | .url' <<<"$stderr")" "\"$SC_BASE/page/1\""
	summary=$(jq -c 'select(.event == "summary")' <<<"$stderr")
	jq -e --arg o "http://127.0.0.1:$SC_PORT" '.records == 2 and .not_ok == 1 and .requests == 2 and
		.record_errors == {"robots": 1} and
		.robots[$o] == {"answer": "rules", "status": 200, "cached": false, "crawl_delay": 0.2,
		                "sitemaps": ["http://x.test/a.xml", "http://x.test/b.xml.gz"]}' <<<"$summary" ||
		fail "$summary"
}

@test "sc-retry passes a robots record through untouched, with no request" {
	printf 'User-agent: *\nDisallow: /\n' >"$ROBOTS/127.0.0.1"
	sc-fetch -q --robots <<<"$SC_BASE/page/1" >"$BATS_TEST_TMPDIR/recs" || true
	assert_equal "$(jq -r .error.kind "$BATS_TEST_TMPDIR/recs")" robots
	sc_server_reset
	run --separate-stderr sc-retry -q --robots <"$BATS_TEST_TMPDIR/recs"
	assert_success
	assert_equal "$output" "$(cat "$BATS_TEST_TMPDIR/recs")"
	assert_equal "$(sc_server_log length)" 0
}

# ---- --headers and conditional requests ----

@test "--headers: lower-case names, repeated fields joined, Set-Cookie by newline, http_version" {
	run --separate-stderr sc-fetch -q --headers <<<"$SC_BASE/repeat-headers"
	assert_success
	assert_equal "$(jq -c '[.http_version, .headers["x-multi"], .headers["set-cookie"], .headers["content-length"], (.headers | keys | map(. == ascii_downcase) | all)]' <<<"$output")" \
		'["1.1","a, b","a=1; Path=/\nb=2","23",true]'
	# Off by default; null when no response came.
	run --separate-stderr sc-fetch -q <<<"$SC_BASE/repeat-headers"
	assert_equal "$(jq -c '[has("headers"), has("http_version")]' <<<"$output")" '[false,false]'
	run --separate-stderr sc-fetch -q --headers --retries 0 <<<"http://127.0.0.1:1/"
	assert_equal "$(jq -c '[.headers, .http_version]' <<<"$output")" '[null,null]'
}

@test "a conditional request answered 304 is ok, not_modified, no body; sc-parse passes it through" {
	{
		echo "{\"url\":\"$SC_BASE/conditional/a\",\"request\":{\"headers\":{\"If-None-Match\":\"\\\"a-v1\\\"\"}}}"
		echo "{\"url\":\"$SC_BASE/conditional/b\",\"request\":{\"headers\":{\"If-Modified-Since\":\"Sun, 01 Nov 2026 00:00:00 GMT\"}}}"
		echo "{\"url\":\"$SC_BASE/conditional/c\",\"request\":{\"headers\":{\"If-None-Match\":\"\\\"old\\\"\"}}}"
		echo "$SC_BASE/status/304"
	} >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr sc-fetch -q --keep-order <"$BATS_TEST_TMPDIR/in"
	assert_failure 3
	assert_equal "$(jq -c '[.status, .ok, .not_modified, .body, .error.kind]' <<<"$output" | tr '\n' ' ')" \
		'[304,true,true,null,null] [304,true,true,null,null] [200,true,null,"<!doctype html><title>conditional c</title><p>version 1</p>\n",null] [304,false,null,"","http"] '
	echo "$output" >"$BATS_TEST_TMPDIR/recs"
	run --separate-stderr sc-parse --require title <"$BATS_TEST_TMPDIR/recs"
	assert_success
	assert_equal "$(jq -c '[.status, .ok, .not_modified, .title]' <<<"$output" | tr '\n' ' ')" \
		'[304,true,true,null] [304,true,true,null] [200,true,null,"conditional c"] [304,false,null,null] '
	# -H sends the header for every URL: the same rule.
	run --separate-stderr sc-fetch -q -H 'If-None-Match: "d-v1"' <<<"$SC_BASE/conditional/d"
	assert_success
	assert_equal "$(jq -c '[.status, .not_modified]' <<<"$output")" '[304,true]'
}

# ---- memory ----

@test "memcheck: --robots (rules, refusals, unreachable, cache) and --headers are clean" {
	[ "${SANITIZE:-}" != 1 ] || skip "valgrind cannot run ASan+UBSan binaries"
	printf 'User-agent: *\nDisallow: /page/2\nCrawl-delay: 0.05\nSitemap: http://x.test/m.xml\n' >"$ROBOTS/127.0.0.1"
	echo 503 >"$ROBOTS/localhost.status"
	{
		echo "$SC_BASE/page/1"
		echo "$SC_BASE/page/2"
		echo "$SC_BASE/repeat-headers"
		echo "{\"url\":\"$SC_BASE/conditional/m\",\"request\":{\"headers\":{\"If-None-Match\":\"\\\"m-v1\\\"\"}}}"
		echo "$LOCAL/page/1"
	} >"$BATS_TEST_TMPDIR/urls"
	for run in 1 2; do
		run -3 --separate-stderr valgrind -q --error-exitcode=99 --leak-check=full \
			--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
			"$SC_BIN/sc-fetch" --robots --robots-cache "$BATS_TEST_TMPDIR/c.db" --headers \
			--retries 1 --retry-base 10 <"$BATS_TEST_TMPDIR/urls"
		assert_equal "$(wc -l <<<"$output")" 5
		! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
	done
}
