#!/usr/bin/env bats
# crawl.mk's progress (PROGRESS, PROGRESS_EVERY) and its report target
# (sc-crawl(7)): the status line on a terminal (script(1) gives make one),
# the plain periodic line without one, the last line, nothing with
# PROGRESS=0, no watcher left behind; make report on a finished crawl and
# on one killed in the middle of a round, its request count checked
# against the chunk logs counted with jq.
#
# The crawls are of the fixture's /page/N link graph on 127.0.0.1, one
# request at a time with 250 ms between them, so that a round lasts
# seconds: depth 2 is 1 + 5 + 10 pages.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/crawl'

bats_require_minimum_version 1.5.0

setup_file() {
	# robots.txt per host (a host without one gets a 404: everything allowed).
	mkdir -p "$BATS_FILE_TMPDIR/robots"
	sc_server_start --loopback 2 --robots-dir "$BATS_FILE_TMPDIR/robots"
}

teardown_file() {
	sc_server_stop
}

setup() {
	rm -f "$BATS_FILE_TMPDIR"/robots/*
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
	seeds_for 127.0.0.1 >seeds.txt
	SLOW=(SEEDS=seeds.txt DEPTH=2 DIR=c PER_HOST=1 "FETCH_ARGS=--delay 250")
}

# watchers_here: the progress watchers (crawl.sh progress) whose working
# folder is this test's, one "PID ARGS" a line; other crawls on the
# machine have other folders.
watchers_here() {
	local pid
	for pid in $(pgrep -f 'crawl\.sh progress' || true); do
		[[ $(readlink "/proc/$pid/cwd" 2>/dev/null) != "$BATS_TEST_TMPDIR" ]] || ps -o pid=,args= -p "$pid"
	done
}

# in_session SID: the processes left in session SID (make started under
# setsid), one "PID ARGS" a line.
in_session() {
	ps -o pid=,args= -s "$1" || true
}

# request_lines FILES...: the request lines of the metrics logs, counted
# by jq; a line cut short (a log being written) is not one.
request_lines() {
	cat "$@" | jq -R 'fromjson? | select(.event == "request")' | jq -s length
}

# report_requests: the request count of the text summary (report.txt).
report_requests() {
	awk '$1 == "requests" { print $2 }' c/report.txt
}

@test "on a terminal: one status line with round, URLs done of the round's total, rate, errors, hosts held; cleared; then the last line" {
	# script(1) runs make on a pseudo-terminal and copies what it drew.
	run -0 script -qfec "make -f '$CRAWL_MK' --no-print-directory ${SLOW[*]@Q}" /dev/null
	local drawn=$output
	[ -s c/pages.jsonl ]
	# Redrawn in place: carriage returns, each line cleared to its end,
	# round N of DEPTH 2 with the round's URLs (1, 5 then 10).
	[[ $drawn =~ $'\r'round\ [012]/2:\ [0-9]+/(1|5|10)\ urls,\ [0-9]+\.[0-9]\ pages/s,\ 0\ errors,\ [0-9]+\ hosts\ held ]] ||
		fail "no status line: $(printf %q "$drawn")"
	[[ $drawn == *$'\e[K'* ]] || fail "the line is not cleared to its end: $(printf %q "$drawn")"
	# No plain periodic line on a terminal.
	[[ $drawn != *"crawl.mk: "[0-9][0-9]:* ]] || fail "$drawn"
	# The status line is cleared before the last line, which says what
	# was crawled, how long it took and where the pages are.
	local pages
	pages=$(wc -l <c/pages.jsonl)
	[[ $drawn == *$'\r\e[K'"crawl.mk: $pages pages ok, 0 failed, in "[0-9]*"s: c/pages.jsonl"* ]] ||
		fail "no last line for $pages pages: $(printf %q "$drawn")"
	run -0 watchers_here
	assert_output ''
}

@test "without a terminal: a plain line every PROGRESS_EVERY seconds, errors counted across rounds, the last line; nothing left running" {
	echo "http://127.0.0.1:$SC_PORT/status/404" >>seeds.txt
	setsid make -f "$CRAWL_MK" --no-print-directory "${SLOW[@]}" PROGRESS_EVERY=1 >out 2>err &
	local sid=$!
	wait "$sid"
	[ ! -s out ]
	run -0 cat err
	[[ $output != *$'\r'* ]] || fail "a carriage return without a terminal: $output"
	# A line a second (a crawl of about 4 s), each with its time.
	run -0 grep -cE '^crawl\.mk: [0-9]{2}:[0-9]{2}:[0-9]{2} round [012]/2: ' err
	((output >= 2)) || fail "$output plain lines: $(cat err)"
	# The 404 of round 0 stays counted in the rounds after it.
	run -0 grep -E '^crawl\.mk: [0-9:]+ round 2/2: [0-9]+/10 urls, [0-9]+\.[0-9] pages/s, 1 errors, [0-9]+ hosts held' err
	run -0 tail -1 err
	assert_output --regexp "^crawl\.mk: $(($(wc -l <c/pages.jsonl) - 1)) pages ok, 1 failed, in [0-9]+s: c/pages\.jsonl$"
	run -0 in_session "$sid"
	assert_output ''
}

@test "left: what the slowest host still owes (its URLs not done times its spacing) when that is more than the round's rate says, and that host named" {
	# 127.0.0.2 under Crawl-delay 0.5 and 127.0.0.1 free: depth 2 is 1 + 5
	# + 10 pages each; the free host's are done at once, the other's take
	# half a second each, which the round's rate alone does not tell.
	printf 'User-agent: *\nCrawl-delay: 0.5\n' >"$BATS_FILE_TMPDIR/robots/127.0.0.2"
	seeds_for 127.0.0.1 127.0.0.2 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c DEFER_AFTER=0 PROGRESS_EVERY=1
	[ -s c/pages.jsonl ]
	# "round N/2: D/T urls, ..., ~Ls left (127.0.0.2, K urls)": K of its URLs
	# not done, at 500 ms or more each (a loaded machine spaces them wider),
	# and L the figure in whole seconds, the look up to a second old.
	local re='round ([12])/2: ([0-9]+)/([0-9]+) urls, .*, ~([0-9]+)s left \(127\.0\.0\.2, ([0-9]+) urls\)$'
	local named=0 line k l
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		named=$((named + 1)) l=${BASH_REMATCH[4]} k=${BASH_REMATCH[5]}
		((k >= 1 && k <= BASH_REMATCH[3] / 2)) || fail "$k URLs left of the slow host: $line"
		((l * 1000 >= k * 500 - 1500 && l * 1000 <= k * 1500 + 1000)) || fail "~${l}s for $k URLs at 500 ms: $line"
	done <<<"$output"
	echo "# $named lines named the slow host; the last: $(grep 'left (127.0.0.2' <<<"$output" | tail -1)" >&3
	((named >= 2)) || fail "the slow host named on $named lines: $output"
	# No line names the free host as the one the round waits on.
	refute_output --partial 'left (127.0.0.1,'
}

@test "hosts held: counted from the origin state, the ones that hold the round longest named first, the rest as +N" {
	# The file as sc-fetch makes it (lib/web/origin_state.c's schema).
	echo "$SC_BASE/page/1" | sc-fetch -q --origin-state origins.db >/dev/null
	local far=$((${EPOCHREALTIME/./} / 1000 + 600000))
	sqlite3 origins.db "DELETE FROM origins;
		INSERT INTO origins (origin, has_pace, lim, interval_ms, blocked_until) VALUES
		('http://wide.example:80', 1, 1, 2000, 0), ('http://narrow.example:80', 1, 1, 300, 0),
		('https://blocked.example:443', 1, 1, 0, $far), ('http://free.example:80', 1, 4, 0, 0),
		('http://third.example:80', 1, 1, 100, 0)"
	# shellcheck source=share/sc/crawl-progress.sh
	source "$BATS_TEST_DIRNAME/../share/sc/crawl-progress.sh"
	DIR=. WORKERS='' PER_HOST=4 now=${EPOCHREALTIME/./} held=''
	local -A gaps=() blocks=()
	progress_held gaps blocks
	assert_equal "$held" ", 4 hosts held (1 blocked): blocked.example:443, wide.example:80 +2"
	# Each held host's spacing and the rest of its block, by host.
	assert_equal "${gaps[wide.example]} ${gaps[narrow.example]} ${gaps[third.example]} ${blocks[wide.example]}" "2000 300 100 0"
	((blocks[blocked.example] > 590000 && blocks[blocked.example] <= 600000)) || fail "${blocks[blocked.example]}"
	[ -z "${gaps[free.example]:-}" ]
}

@test "PROGRESS=0: no status line, no plain line, no last line" {
	run -0 crawl_make "${SLOW[@]}" PROGRESS=0 PROGRESS_EVERY=1
	assert_output ''
	[ -s c/pages.jsonl ]
	run -0 script -qfec "make -f '$CRAWL_MK' --no-print-directory ${SLOW[*]@Q} DIR=c2 PROGRESS=0" /dev/null
	assert_output ''
	[ -s c2/pages.jsonl ]
	run -0 watchers_here
	assert_output ''
}

@test "PROGRESS_EVERY must be a number of seconds, at least 1" {
	run -2 crawl_make "${SLOW[@]}" PROGRESS_EVERY=0
	[[ $output == *"PROGRESS_EVERY must be at least 1"* ]] || fail "$output"
	run -2 crawl_make "${SLOW[@]}" PROGRESS_EVERY=1s
	[[ $output == *"PROGRESS_EVERY=1s is not a number"* ]] || fail "$output"
}

@test "make report on a finished crawl: report.html with its rounds, report.txt on stdout, every request line counted" {
	run -0 crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c PROGRESS=0
	run -0 crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c report
	[ -s c/report.html ] && [ -s c/report.txt ]
	# stdout is the text summary; stderr names the files.
	[[ $output == "$(cat c/report.txt)"$'\n'"crawl.mk: c/report.html, c/report.txt" ]] || fail "$output"
	local want
	want=$(request_lines c/round-*/chunk-*.log)
	((want == 1 + 5 + 10 + 1)) || fail "$want request lines (16 pages and robots.txt)"
	assert_equal "$(report_requests)" "$want"
	# The rounds, from the logs' folders (round-N).
	run -0 sed -n '/<h2>Rounds<\/h2>/,/<\/table>/p' c/report.html
	[ "$(grep -cE '^<tr><td>[012]</td>' <<<"$output")" = 3 ] || fail "$output"
	# METRICS=0: the chunk logs have no request line, which the report says.
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=q METRICS=0 PROGRESS=0
	[ "$(request_lines q/round-*/chunk-*.log)" = 0 ]
}

@test "make report while a crawl runs and after it was killed mid-round: a cut log line is counted as malformed, never fatal" {
	setsid make -f "$CRAWL_MK" --no-print-directory "${SLOW[@]}" >make.log 2>&1 3>&- &
	local sid=$! tries
	# In round 2, a few of its requests made.
	for ((tries = 0; tries < 200; tries++)); do
		[[ -e c/round-2/chunk-0-0000.log ]] && (($(grep -c '"event":"request"' c/round-2/chunk-0-0000.log) >= 2)) && break
		sleep 0.05
	done
	((tries < 200)) || fail "round 2 never started: $(cat make.log)"
	# Held in the middle of its round while the report reads it: on a
	# loaded machine the round's other seconds could end before make
	# report does.
	kill -STOP -- "-$sid"
	run -0 crawl_make "${SLOW[@]}" report
	[ -s c/report.html ]
	kill -KILL -- "-$sid"
	wait "$sid" || true
	[ ! -e c/round-2/done ]
	[ ! -e c/pages.jsonl ]
	# A write cut short by the kill: half a request line, no newline.
	printf '{"event":"request","ts":"2026-12-01T10:00:00.000Z","url":"http://127.0.0.1' >>c/round-2/chunk-0-0000.log
	rm c/report.html
	run -0 crawl_make "${SLOW[@]}" report
	[ -s c/report.html ]
	assert_equal "$(report_requests)" "$(request_lines c/round-*/chunk-*.log)"
	grep -q '1 malformed' c/report.txt
	# The killed crawl goes on from where it was.
	run -0 crawl_make "${SLOW[@]}" PROGRESS=0
	expected_pages "http://127.0.0.1:$SC_PORT" 2 >expected
	crawled_pages c >crawled
	diff -u expected crawled
}

@test "make report: a REPORT_ARGS threshold that is broken fails make, with the report written" {
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c PROGRESS=0
	run -2 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c report "REPORT_ARGS=--fail-if 'requests<1'"
	[[ $output == *"threshold broken: 'requests<1'"* ]] || fail "$output"
	[ -s c/report.html ] && [ -s c/report.txt ]
	run -2 crawl_make DIR=empty report
	[[ $output == *"no chunk logs in empty"* ]] || fail "$output"
}
