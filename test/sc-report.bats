#!/usr/bin/env bats
# sc-report: the figures of sc-fetch's metrics lines.  Usage errors first,
# then figures checked against jq/awk (a real sc-fetch run against the
# fixture server, and synthetic lines), thresholds, malformed and empty
# input, --every on a growing file, and the HTML page in headless Chromium.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/options'

bats_require_minimum_version 1.5.0
load 'lib/server'

setup_file() {
	sc_server_start --loopback 3
	local d=$BATS_FILE_TMPDIR b=$SC_BASE b2=${SC_BASE/127.0.0.1/127.0.0.2} b3=${SC_BASE/127.0.0.1/127.0.0.3}
	{
		for i in 1 2 3 4 5 6; do
			echo "$b/page/$i"
			echo "$b2/delay/$((i * 15))"
			echo "$b3/status/404"
		done
		echo "$b/flaky/r1?fail=1&status=503"
		echo "$b/ratelimit/r2?after=1"
		echo '{"url":"'"$b"'/conditional/c1","request":{"headers":{"If-None-Match":"\"c1-v1\""}}}'
		echo "http://127.0.0.9:1/nothing-listens"
	} >"$d/urls.txt"
	sc-fetch -c 4 --retry-base 50 --metrics "$d/real.log" <"$d/urls.txt" >"$d/real.jsonl" || true
	# Synthetic: latencies 1..1000 ms on two hosts, one request a
	# millisecond from 12:00:00, every tenth an http error.
	awk 'BEGIN {
		for (i = 1; i <= 1000; i++) {
			host = (i % 4 == 0) ? "http://b.test:80" : "http://a.test:80"
			st = (i % 10 == 0) ? 503 : 200
			err = (i % 10 == 0) ? "\"http\"" : "null"
			printf "{\"event\":\"request\",\"ts\":\"2026-12-01T12:00:%02d.%03dZ\",\"url\":\"%s/%d\",\"host\":\"%s\",\"status\":%d,\"latency_ms\":%d.0,\"bytes\":%d,\"attempt\":1,\"error\":%s,\"wait_ms\":0,\"next\":\"done\",\"timing\":{\"queue_ms\":2.0,\"dns_ms\":1.0,\"connect_ms\":3.0,\"tls_ms\":0.0,\"ttfb_ms\":%d.0,\"redirect_ms\":0.0,\"total_ms\":%d.0}}\n",
				int(i / 1000), i % 1000, host, i, host, st, i, i * 10, err, i - 1, i, i
		}
	}' >"$d/synth.log"
}

teardown_file() {
	sc_server_stop
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	cp "$BATS_FILE_TMPDIR"/real.log "$BATS_FILE_TMPDIR"/synth.log .
}

# Nearest-rank percentile $1 of the numbers on stdin (the definition in
# sc-report(1)), computed apart from sc-report.
nearest_rank() {
	sort -g | awk -v p="$1" '{ v[NR] = $1 } END {
		r = p / 100 * NR; k = int(r); if (k < r) k++; if (k < 1) k = 1
		printf "%.1f\n", v[k] }'
}

# ---- usage errors ----

@test "usage errors name what is wrong and exit 2" {
	run -2 --separate-stderr sc-report --sort speed synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --sort: unknown column 'speed' (host, requests, bytes, ok, errors, robots, 429, cooldowns, not_modified, throttles, p50, p95)"
	run -2 --separate-stderr sc-report --hist 0,100ms,50ms synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --hist: the bounds must increase ('50ms')"
	run -2 --separate-stderr sc-report --hist 0,1h synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --hist: '1h' is not a duration (like 250ms or 1s)"
	run -2 --separate-stderr sc-report --every 0 synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --every: '0' is out of range (0.1..86400)"
	run -2 --separate-stderr sc-report --every 1 --html x.html synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --every and --html cannot go together (run --html once at the end)"
	run -2 --separate-stderr sc-report --bogus synth.log
	[[ $stderr == *"Try 'sc-report --help'"* ]]
}

@test "a bad --fail-if is a usage error, naming why" {
	run -2 --separate-stderr sc-report --fail-if 'p97<1s' synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --fail-if 'p97<1s': unknown metric 'p97'"
	run -2 --separate-stderr sc-report --fail-if 'p95 ~ 1s' synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --fail-if 'p95 ~ 1s': expected one of < <= > >= == != after the metric"
	run -2 --separate-stderr sc-report --fail-if 'p95<5%' synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --fail-if 'p95<5%': '5%' is not a duration (like 800ms or 1.5s)"
	run -2 --separate-stderr sc-report --fail-if 'errors<5ms' synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --fail-if 'errors<5ms': 'ms': errors takes a count or a percentage (N%)"
	run -2 --separate-stderr sc-report --fail-if 'host:a.test' synth.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: --fail-if 'host:a.test': host:NAME must be followed by a space and a metric"
	run -2 --separate-stderr sc-report --fail-if 'rate<5%' synth.log
	[[ $stderr == *"rate takes a number (requests/s)"* ]]
}

# ---- figures against an independent computation ----

@test "a real sc-fetch run: counts, status codes, error kinds and bytes match jq" {
	run -0 --separate-stderr sc-report --json real.log
	local j=$output
	local req
	req=$(jq -s '[.[] | select(.event == "request")]' real.log)
	assert_equal "$(jq .requests <<<"$j")" "$(jq length <<<"$req")"
	assert_equal "$(jq .ok <<<"$j")" "$(jq '[.[] | select(.error == null)] | length' <<<"$req")"
	assert_equal "$(jq .errors <<<"$j")" "$(jq '[.[] | select(.error != null)] | length' <<<"$req")"
	assert_equal "$(jq .bytes <<<"$j")" "$(jq '[.[].bytes] | add' <<<"$req")"
	assert_equal "$(jq -c .status <<<"$j")" \
		"$(jq -c 'group_by(.status // "none") | map({key: (.[0].status // "none" | tostring), value: length}) | sort_by(.key == "none") | from_entries' <<<"$req")"
	assert_equal "$(jq -c '.error_kinds | to_entries | sort' <<<"$j")" \
		"$(jq -c '[.[] | select(.error != null)] | group_by(.error) | map({key: .[0].error, value: length}) | sort' <<<"$req")"
	assert_equal "$(jq .rate_limits.status_429 <<<"$j")" "$(jq '[.[] | select(.status == 429)] | length' <<<"$req")"
	assert_equal "$(jq .rate_limits.not_modified <<<"$j")" "$(jq '[.[] | select(.status == 304)] | length' <<<"$req")"
	assert_equal "$(jq .rate_limits.cooldowns <<<"$j")" "$(jq '[.[] | select(.status == 429 and .next == "again")] | length' <<<"$req")"
	assert_equal "$(jq .robots.requests <<<"$j")" 0
	# The run had each on purpose: a 304, a 429, a connect error.
	[ "$(jq .rate_limits.not_modified <<<"$j")" -ge 1 ]
	[ "$(jq .rate_limits.status_429 <<<"$j")" -ge 1 ]
	[ "$(jq '.error_kinds.connect' <<<"$j")" -ge 1 ]
}

@test "a real sc-fetch run: latency min, mean, max, percentiles, phases and hosts match jq and awk" {
	run -0 --separate-stderr sc-report --json real.log
	local j=$output p
	jq -r 'select(.event == "request") | .latency_ms' real.log >lat.txt
	for p in 50 90 95 99; do
		assert_equal "$(jq ".latency_ms.p$p" <<<"$j")" "$(nearest_rank "$p" <lat.txt | sed 's/\.0$//')"
	done
	assert_equal "$(jq .latency_ms.min <<<"$j")" "$(jq -s '[.[] | select(.event == "request") | .latency_ms] | min' real.log)"
	assert_equal "$(jq .latency_ms.max <<<"$j")" "$(jq -s '[.[] | select(.event == "request") | .latency_ms] | max' real.log)"
	assert_equal "$(jq .latency_ms.mean <<<"$j")" \
		"$(jq -s '[.[] | select(.event == "request") | .latency_ms] | add / length * 10 | round / 10' real.log)"
	assert_equal "$(jq .queue_ms.max <<<"$j")" "$(jq -s '[.[] | select(.event == "request") | .timing.queue_ms] | max' real.log)"
	assert_equal "$(jq .phases_ms.transfer.max <<<"$j")" \
		"$(jq -s '[.[] | select(.event == "request") | .timing | if .ttfb_ms > 0 then ([.total_ms - .ttfb_ms, 0] | max) else 0 end] | max * 10 | round / 10' real.log)"
	# Per host: requests and p95 against the host's own lines.
	local host
	for host in $(jq -r '.hosts[].host' <<<"$j"); do
		assert_equal "$(jq --arg h "$host" '.hosts[] | select(.host == $h) | .requests' <<<"$j")" \
			"$(jq --arg h "$host" 'select(.event == "request" and .host == $h)' real.log | jq -s length)"
		assert_equal "$(jq --arg h "$host" '.hosts[] | select(.host == $h) | .latency_ms.p95' <<<"$j")" \
			"$(jq -r --arg h "$host" 'select(.event == "request" and .host == $h) | .latency_ms' real.log | nearest_rank 95 | sed 's/\.0$//')"
	done
	assert_equal "$(jq '.hosts | length' <<<"$j")" 4
}

@test "synthetic lines: percentiles, rate, duration, phases and the histogram are exact" {
	run -0 --separate-stderr sc-report --json --hist 0,100ms,250ms,500ms,1s synth.log
	local j=$output
	assert_equal "$(jq -c .latency_ms <<<"$j")" '{"min":1,"mean":500.5,"p50":500,"p90":900,"p95":950,"p99":990,"max":1000}'
	assert_equal "$(jq .duration_s <<<"$j")" 0.999
	assert_equal "$(jq .rate_rps <<<"$j")" 1001
	assert_equal "$(jq .errors <<<"$j")" 100
	assert_equal "$(jq -c .phases_ms.dns <<<"$j")" '{"mean":1,"min":1,"max":1}'
	assert_equal "$(jq -c .phases_ms.connect <<<"$j")" '{"mean":2,"min":2,"max":2}'
	assert_equal "$(jq -c .phases_ms.first_byte.max <<<"$j")" 996
	# i = 1 has no first byte (ttfb_ms 0), so no transfer time either.
	assert_equal "$(jq -c .phases_ms.transfer <<<"$j")" '{"mean":1,"min":0,"max":1}'
	assert_equal "$(jq -c .queue_ms <<<"$j")" '{"mean":2,"min":2,"max":2}'
	# The buckets against awk: [0,100) [100,250) [250,500) [500,1000) [1000,)
	assert_equal "$(jq -c '[.histogram[].count]' <<<"$j")" \
		"$(jq -r .latency_ms synth.log | awk '{ if ($1 < 100) a++; else if ($1 < 250) b++; else if ($1 < 500) c++; else if ($1 < 1000) d++; else e++ }
			END { printf "[0,%d,%d,%d,%d,%d]\n", a, b, c, d, e }')"
	assert_equal "$(jq -c '.histogram[0]' <<<"$j")" '{"from_ms":null,"to_ms":0,"count":0}'
	# Hosts, by requests: a.test has 750, b.test 250 (every fourth).
	assert_equal "$(jq -c '[.hosts[] | [.host, .requests, .errors, .latency_ms.p50]]' <<<"$j")" \
		'[["http://a.test:80",750,50,499],["http://b.test:80",250,50,500]]'
	run -0 sc-report --hist 0,100ms,250ms,500ms,1s synth.log
	assert_line --regexp '^  500 \.\. 1000 +500  50\.00%'
	assert_line --regexp '^latency +min 1\.0  mean 500\.5  p50 500\.0  p90 900\.0  p95 950\.0  p99 990\.0  max 1000\.0 ms$'
}

@test "--sort orders the host table by any column" {
	run -0 sc-report --json --sort host synth.log
	assert_equal "$(jq -c '[.hosts[].host]' <<<"$output")" '["http://a.test:80","http://b.test:80"]'
	run -0 sc-report --json --sort p95 real.log
	jq -e '[.hosts[].latency_ms.p95] | . == (sort | reverse)' <<<"$output"
	run -0 sc-report --sort errors real.log
	local first
	first=$(awk '/^host /{getline; print $1; exit}' <<<"$output")
	assert_equal "$first" "$(sc-report --json real.log | jq -r '.hosts | max_by(.errors) | .host')"
}

@test "throttle events are counted per host and reason, and rounds come from the path" {
	mkdir -p crawl/round-0 crawl/round-1
	head -500 synth.log >crawl/round-0/chunk-0-0.log
	tail -500 synth.log >crawl/round-1/chunk-0-0.log
	printf '%s\n' \
		'{"event":"throttle","ts":"2026-12-01T12:00:00.300Z","origin":"http://a.test:80","reason":"429","limit":[8,4],"interval_ms":0,"blocked_until":null}' \
		'{"event":"throttle","ts":"2026-12-01T12:00:00.600Z","origin":"http://a.test:80","reason":"recover","limit":[4,5],"interval_ms":0,"blocked_until":null}' \
		'{"event":"throttle","ts":"2026-12-01T12:00:00.700Z","origin":"http://b.test:80","reason":"retry_after","limit":[1,1],"interval_ms":250,"blocked_until":"2026-12-01T12:00:01.000Z"}' \
		>>crawl/round-1/chunk-0-0.log
	run -0 --separate-stderr sc-report --json crawl/round-*/chunk-*.log
	assert_equal "$(jq -c .rate_limits.throttle_reasons <<<"$output")" '{"429":1,"retry_after":1,"recover":1}'
	assert_equal "$(jq -c '[.hosts[] | [.host, .throttles]]' <<<"$output")" '[["http://a.test:80",2],["http://b.test:80",1]]'
	assert_equal "$(jq -c '[.rounds[] | [.round, .requests, .first_ts, .last_ts]]' <<<"$output")" \
		'[[0,500,"2026-12-01T12:00:00.001Z","2026-12-01T12:00:00.500Z"],[1,500,"2026-12-01T12:00:00.501Z","2026-12-01T12:00:01.000Z"]]'
	assert_equal "$(jq .requests <<<"$output")" 1000
}

@test "rounds: the hosts that finished last, and how long the rest waited on the last one" {
	mkdir -p crawl/round-0 crawl/round-1
	# round 0: a and b done by 12:00:02, c goes on to 12:00:09.5;
	# round 1: one host, nobody waits.  Two chunks of round 0 interleave.
	req() { printf '{"event":"request","ts":"2026-12-01T12:00:%s","url":"http://%s.test/x","host":"http://%s.test:80","status":200,"latency_ms":5,"bytes":10,"attempt":1,"error":null,"wait_ms":0,"next":"done"}\n' "$1" "$2" "$2"; }
	{ req 00.000Z a; req 01.000Z b; req 02.000Z a; req 03.000Z c; } >crawl/round-0/chunk-0-0.log
	{ req 01.500Z b; req 09.500Z c; req 00.500Z c; } >crawl/round-0/chunk-1-0.log
	{ req 10.000Z a; req 11.000Z a; } >crawl/round-1/chunk-0-0.log
	run -0 --separate-stderr sc-report --json crawl/round-*/chunk-*.log
	assert_equal "$(jq -c '[.rounds[] | [.round, .hosts, .waited_s, [.finished_last[] | .host]]]' <<<"$output")" \
		'[[0,3,7.5,["http://c.test:80","http://a.test:80","http://b.test:80"]],[1,1,0,["http://a.test:80"]]]'
	assert_equal "$(jq -r '.rounds[0].finished_last[0].last_ts' <<<"$output")" 2026-12-01T12:00:09.500Z
	run -0 sc-report --html report.html crawl/round-*/chunk-*.log
	grep -q '<td>http://c.test:80, http://a.test:80, http://b.test:80</td><td class="round-waited">7.5</td>' report.html ||
		fail "$(grep -A3 Rounds report.html)"
}

@test "robots.txt refusals: the total from the summary, per host from the records" {
	local rb=$BATS_TEST_TMPDIR/robots
	mkdir -p "$rb"
	printf 'User-agent: *\nDisallow: /page/2\n' >"$rb/127.0.0.1"
	# A server of its own (the file's has no robots.txt), stopped by its pid.
	"$SC_TESTSERVER" --port-file port --robots-dir "$rb" >/dev/null 2>&1 3>&- &
	local pid=$! base i
	for i in $(seq 1 50); do [ -s port ] && break; sleep 0.1; done
	base=http://127.0.0.1:$(<port)
	printf "$base/page/%s\n" 1 2 3 2 | sc-fetch --robots --metrics rm.log >rr.jsonl || true
	kill "$pid"
	run -0 sc-report --json rm.log
	assert_equal "$(jq -c .robots <<<"$output")" '{"requests":1,"refused":2,"status":{"200":1}}'
	assert_equal "$(jq '.hosts[0].robots_refused' <<<"$output")" 0
	run -0 sc-report --json rm.log rr.jsonl
	assert_equal "$(jq -c '.robots | del(.status)' <<<"$output")" "{\"requests\":1,\"refused\":$(grep -c '"kind":"robots"' rr.jsonl)}"
	assert_equal "$(jq -c '[.hosts[] | [.host, .robots_refused, .robots_requests]]' <<<"$output")" "[[\"$base\",2,1]]"
	assert_equal "$(jq .lines.records <<<"$output")" 4
}

@test "files and standard input are one stream; '-' is standard input" {
	head -300 synth.log >a.log
	run -0 sc-report --json a.log - < <(tail -700 synth.log)
	assert_equal "$(jq .requests <<<"$output")" 1000
	assert_equal "$(jq .latency_ms.p95 <<<"$output")" 950
	run -0 sc-report --json <synth.log
	assert_equal "$(jq .requests <<<"$output")" 1000
}

# ---- thresholds ----

@test "--fail-if: every comparison and unit, held or broken" {
	# p95 is 950 ms, mean 500.5 ms, errors 10% (100 of 1000), rate 1001/s.
	local held=('p95<1s' 'p95<=950ms' 'p95<=950' 'p95>0.9s' 'p95>=950000us' 'p95==950ms'
		'p95!=951ms' 'mean<1m' 'max<=1s' 'min>=1ms' 'p50==500' 'p90<901' 'p99<991ms'
		'errors<=10%' 'errors==100' 'errors>9.9%' 'http<11%' 'timeout==0' 'rate>1000'
		'requests==1000' 'rate_limited<0.5%' 'retries==0' 'malformed==0' 'not_modified<1'
		'host:a.test p50==499ms' 'host:http://b.test:80 requests==250' 'host:b.test:80 errors==20%'
		'host:a.test errors<10.1%' 'throttles==0' 'cooldowns<1')
	local broken=('p95<950ms' 'p95>1s' 'p95>=951ms' 'p95!=950' 'p95==0.95' 'mean>1s' 'errors<10%'
		'errors<100' 'rate<1000' 'http>10%' 'host:b.test requests>250' 'host:nowhere.test p95<1s'
		'p95<=949.9ms' 'requests!=1000')
	local e
	for e in "${held[@]}"; do
		run --separate-stderr sc-report --fail-if "$e" synth.log
		[ "$status" -eq 0 ] || fail "'$e' should hold: $stderr"
	done
	for e in "${broken[@]}"; do
		run --separate-stderr sc-report --fail-if "$e" synth.log
		[ "$status" -eq 3 ] || fail "'$e' should be broken (status $status)"
		[[ $stderr == *"threshold broken: '$e'"* ]] || fail "'$e' not named: $stderr"
	done
}

@test "--fail-if: several at once, each broken one named; the JSON says which held" {
	run -3 --separate-stderr sc-report --json --fail-if 'p95<800ms' --fail-if 'errors<1%' \
		--fail-if 'host:a.test rate_limited<0.5%' synth.log
	assert_equal "$stderr" "sc-report: threshold broken: 'p95<800ms' (measured 950.0ms)
sc-report: threshold broken: 'errors<1%' (measured 10%)"
	assert_equal "$(jq -c '[.thresholds[] | [.expr, .value, .ok]]' <<<"$output")" \
		'[["p95<800ms",950,false],["errors<1%",0.1,false],["host:a.test rate_limited<0.5%",0,true]]'
}

# ---- malformed and empty input ----

@test "malformed lines are counted and named, never fatal; other text is skipped" {
	{
		head -10 synth.log
		echo '{"event":"request","ts":'
		echo 'sc-parse: <stdin>:3: not valid JSON'
		echo '{"event":"request","latency_ms":5}'
		echo '{"event":"request","host":"h"} trailing'
		printf '{"event":"request","host":"x","url":"%s"}\n' "$(head -c 1100000 /dev/zero | tr '\0' a)"
		tail -10 synth.log
	} >mixed.log
	run -0 --separate-stderr sc-report --json mixed.log
	assert_equal "$(jq .requests <<<"$output")" 20
	assert_equal "$(jq -c .lines <<<"$output")" '{"read":25,"malformed":4,"not_json":1,"summaries":0,"records":0,"other_events":0}'
	assert_equal "$stderr" "sc-report: mixed.log:11: malformed metrics line: not valid JSON at byte 25
sc-report: mixed.log:13: malformed metrics line: a request line has no host
sc-report: mixed.log:14: malformed metrics line: text after the JSON object at byte 32
sc-report: mixed.log:15: malformed metrics line: longer than 1048576 bytes
sc-report: 4 malformed lines skipped"
	run -3 --separate-stderr sc-report --fail-if 'malformed<10%' mixed.log
	[[ $stderr == *"'malformed<10%' (measured 16%)"* ]]
}

@test "odd host names (not UTF-8, an escaped NUL) are kept apart and written as valid JSON" {
	printf '{"event":"request","host":"h\xff\\u0000x","status":200,"latency_ms":1.0,"bytes":1,"error":null}\n' >odd.log
	printf '{"event":"request","host":"h\xff","status":200,"latency_ms":2.0,"bytes":1,"error":null}\n' >>odd.log
	run -0 --separate-stderr sc-report --json odd.log
	assert_equal "$(jq -c '[.hosts[] | [(.host | explode), .requests]] | sort' <<<"$output")" '[[[104,65533],1],[[104,65533,0,120],1]]'
}

@test "an empty input says so plainly; thresholds on it are broken" {
	run -0 --separate-stderr sc-report </dev/null
	assert_equal "$output" "no request lines in the input (0 lines, 0 malformed)"
	assert_equal "$stderr" "sc-report: no request lines in the input (0 lines read, 0 malformed)"
	run -0 --separate-stderr sc-report --json </dev/null
	assert_equal "$(jq .requests <<<"$output")" 0
	run -3 --separate-stderr sc-report --fail-if 'p95<1s' </dev/null
	[[ $stderr == *"threshold broken: 'p95<1s': no request lines"* ]]
	run -1 --separate-stderr sc-report no-such.log
	assert_equal "${stderr%%$'\n'*}" "sc-report: no-such.log: No such file or directory"
}

# ---- --every ----

@test "--every follows a growing file and ends cleanly on SIGTERM" {
	head -100 synth.log >grow.log
	sc-report --every 0.2 grow.log >every.out 2>every.err &
	local pid=$! i
	for i in $(seq 1 50); do
		grep -q '^requests     100 ' every.out && break
		sleep 0.1
	done
	grep -q '^requests     100 ' every.out || fail "no first report: $(cat every.out every.err)"
	sed -n '101,400p' synth.log >>grow.log
	for i in $(seq 1 50); do
		grep -q '^requests     400 ' every.out && break
		sleep 0.1
	done
	grep -q '^requests     400 ' every.out || fail "the growth was not seen: $(tail -20 every.out)"
	sed -n '401,1000p' synth.log >>grow.log
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 143
	# The last report, after "---- final", has every line.
	assert_equal "$(sed -n '/^---- final/,$p' every.out | grep '^requests')" \
		"requests     1000 (ok 900, errors 100, retries 0, robots.txt 0)"
	[ "$(grep -c '^---- 20' every.out)" -ge 2 ]
}

# ---- HTML ----

# Distinct colours of a PNG (8-bit RGB/RGBA, not interlaced), by a decoder
# of its own: the screenshot check must not trust a library sc-report uses.
png_colours() {
	python3 - "$1" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
bpp = {2: 3, 6: 4}[ctype]
raw, stride, prev, colours = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set()
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp * 7):
        colours.add(bytes(line[x:x + 3]))
    prev = line
print(len(colours))
EOF
}

# Headless Chromium with no network (a network namespace of its own).
browser() {
	command -v chromium >/dev/null || fail "chromium is not installed (make deps installs it)"
	# A network namespace: as root, or in a user namespace of its own.
	local netns=(unshare -n)
	"${netns[@]}" true 2>/dev/null || netns=(unshare -rn)
	"${netns[@]}" true 2>/dev/null || fail "cannot take the network away (unshare -n, unshare -rn)"
	"${netns[@]}" chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$BATS_TEST_TMPDIR/chromium" "$@" 2>/dev/null
}

@test "the HTML page: Chromium without network draws the charts, and its figures match --json" {
	command -v gnuplot >/dev/null || fail "gnuplot is not installed (make deps installs gnuplot-nox)"
	mkdir -p crawl/round-0 crawl/round-1
	head -500 synth.log >crawl/round-0/chunk-0-0.log
	tail -500 synth.log >crawl/round-1/chunk-0-0.log
	run -0 --separate-stderr sc-report --html report.html crawl/round-*/chunk-*.log
	[ -s report.html ]
	! grep -qi '<script' report.html || fail "the page has a script"
	! grep -Eq '(src|href)="https?:' report.html || fail "the page loads something"
	assert_equal "$(grep -c '<svg' report.html)" 4
	browser --dump-dom "file://$PWD/report.html" >dom.html
	assert_equal "$(grep -o '<svg' dom.html | wc -l)" 4
	grep -q 'round 1' dom.html || fail "the rounds are not drawn"
	local j
	j=$(sc-report --json crawl/round-*/chunk-*.log)
	# The figures as the browser has them, against --json.
	cell() { sed -n "s|.*<td id=\"$1\">\([^<]*\)</td>.*|\1|p" dom.html; }
	assert_equal "$(cell requests)" "$(jq .requests <<<"$j")"
	assert_equal "$(cell errors)" "$(jq .errors <<<"$j")"
	assert_equal "$(cell lat-p95)" "$(jq '.latency_ms.p95 | . * 10 | round / 10' <<<"$j" | awk '{ printf "%.1f", $1 }')"
	assert_equal "$(cell lat-p50)" "$(jq .latency_ms.p50 <<<"$j" | awk '{ printf "%.1f", $1 }')"
	assert_equal "$(cell rate_rps)" "$(jq .rate_rps <<<"$j" | awk '{ printf "%.1f", $1 }')"
	grep -q '<td>http://a.test:80</td><td>750</td>' dom.html || fail "the host table is not in the page"
	browser --screenshot="$PWD/shot.png" --window-size=1000,2400 "file://$PWD/report.html"
	[ -s shot.png ] || fail "no screenshot"
	local colours
	colours=$(png_colours shot.png)
	[ "$colours" -ge 8 ] || fail "the screenshot is nearly one colour ($colours colours)"
}

@test "a CR or LF in any option's value is a usage error" {
	# --html, --sort, --hosts, --hist, --fail-if, --every.
	refuses_line_breaks sc-report 6
}

@test "--html: a TMPDIR with a quote and a line break is a directory, not gnuplot commands" {
	# The charts' directory went into the gnuplot script in quotes: this
	# one ended the quote and ran a command of its own.
	local tmp=$PWD/$'t\'\nsystem "touch ran"\nprint \''
	mkdir -p "$tmp"
	run -0 --separate-stderr env TMPDIR="$tmp" sc-report --html report.html synth.log
	assert_equal "$stderr" ""
	[ ! -e ran ] || fail "gnuplot ran the directory's command"
	assert_equal "$(grep -c '<svg' report.html)" 4
	# Its temporary directory is gone.
	assert_equal "$(find "$tmp" -mindepth 1 | wc -l)" 0
}

@test "the HTML page without gnuplot: the tables, and each missing chart says why" {
	run -0 --separate-stderr env SC_GNUPLOT=/nonexistent/gnuplot sc-report --html report.html synth.log
	assert_equal "$stderr" "sc-report: report.html: charts missing: /nonexistent/gnuplot was not found (install gnuplot; Debian: gnuplot-nox)"
	assert_equal "$(grep -c '<svg' report.html)" 0
	assert_equal "$(grep -c 'This chart is missing: /nonexistent/gnuplot was not found' report.html)" 4
	grep -q '<td id="requests">1000</td>' report.html
	grep -q '<td>http://a.test:80</td><td>750</td>' report.html
}

@test "a failed write to standard output is an error (exit 1)" {
	run -1 --separate-stderr bash -c 'sc-report synth.log >/dev/full'
	[[ $stderr == *"sc-report: "*"No space left on device"* ]] || fail "$stderr"
}

@test "an HTML page that cannot be written is an error (exit 1), and leaves nothing" {
	run -1 --separate-stderr env SC_GNUPLOT=/nonexistent sc-report --html no-such-dir/r.html synth.log
	[[ $stderr == *"no-such-dir/r.html.tmp"*"No such file or directory"* ]]
}
