#!/usr/bin/env bats
# sc-render's spacing of the browser's requests (--delay, robots.txt's
# Crawl-delay), by the fixture server's clock: a test of time, so the file
# runs alone (a loaded machine moves a request's arrival by more than the
# slack).  The pages are test/render/basic's; loopback only.
#
# bats file_tags=serial

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

# The smallest gap between two requests' arrivals at the server, in ms.
smallest_gap() {
	sc_server_log '[.[] | .t_ms] | sort | [range(1; length) as $i | .[$i] - .[$i - 1]] | min'
}

@test "--delay and Crawl-delay: the browser's requests to one origin, from every tab, are that far apart by the server's clock" {
	printf '%s\n' "$SC_BASE/assets.html?1" "$SC_BASE/assets.html?2" >in.txt
	run -0 --separate-stderr sc-render -c 2 <in.txt
	# Without it the page's requests come together.
	jq -e -n "$(smallest_gap) < 200" || fail "smallest gap without --delay: $(smallest_gap) ms"
	sc_server_reset
	run -0 --separate-stderr sc-render -c 2 --delay 400 <in.txt
	jq -e '.ok and .rendered.requests == 4 and (.body | test("APP-RAN"))' <<<"$output"
	assert_equal "$(sc_server_log 'length')" 8
	# Measured where the server reads each request: a connection made on
	# the way moves one arrival a little, hence the slack.
	jq -e -n "$(smallest_gap) >= 340" || fail "smallest gap under --delay 400: $(smallest_gap) ms"
	# --robots: robots.txt's Crawl-delay (0.4 s) spaces them too, its
	# own request included.
	sc_server_reset
	run -0 --separate-stderr sc-render -c 2 --robots <in.txt
	jq -e '.ok and .rendered.requests == 4 and .rendered.blocked == 0' <<<"$output"
	assert_equal "$(sc_server_log '[.[] | .path] | sort | unique | join(" ")' | jq -r .)" \
		"/app.js /assets.html?1 /assets.html?2 /dot.svg /robots.txt /style.css"
	assert_equal "$(sc_server_log 'length')" 9
	jq -e -n "$(smallest_gap) >= 340" || fail "smallest gap under Crawl-delay 0.4: $(smallest_gap) ms"
}

@test "--origin-state: sc-render's starts and sc-fetch's, at once on one origin, claimed in the file they share, keep the gap" {
	printf '%s\n' "$SC_BASE/assets.html?1" "$SC_BASE/assets.html?2" >in.txt
	sc-render -c 2 --delay 400 --origin-state st.db <in.txt >render.jsonl 2>render.err &
	local pid=$!
	# sc-fetch starts once the browser's first request came.
	for _ in $(seq 100); do
		(($(sc_server_log 'length') > 0)) && break
		sleep 0.05
	done
	printf '%s\n' "$SC_BASE/js.html?1" "$SC_BASE/js.html?2" "$SC_BASE/js.html?3" |
		sc-fetch -q --delay 400 --origin-state st.db >fetch.jsonl 2>fetch.err
	wait "$pid" || fail "sc-render exited $?: $(cat render.err)"
	assert_equal "$(jq -s 'map(select(.ok)) | length' render.jsonl fetch.jsonl)" 5
	assert_equal "$(sc_server_log 'length')" 11
	# Interleaved, not one after the other...
	assert_equal "$(sc_server_log '[.[] | .path | test("^/js")] | . as $a | [range(1; length) | select($a[.] != $a[. - 1])] | length > 1')" true
	# ... and never closer than the gap, by the server's clock.
	jq -e -n "$(smallest_gap) >= 340" || fail "smallest gap over sc-render and sc-fetch sharing st.db: $(smallest_gap) ms"
	run -0 sc-fetch --origin-state st.db --show
	assert_equal "$(jq -r '.origin' <<<"$output")" "$SC_BASE"
}
