#!/usr/bin/env bats
# The whole pipeline, end to end, against the fixture server:
#     cat urls.txt | sc-fetch -c 20 | sc-parse | sc-sink --csv out.csv

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0
load 'lib/server'

setup_file() {
	sc_server_start --root "$BATS_TEST_DIRNAME/../share/demo/site"
}

teardown_file() {
	sc_server_stop
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# The demo crawl's URL list, on this test's server.
demo_urls() {
	grep -v '^#' "$BATS_TEST_DIRNAME/../share/demo/urls.txt" | sed "s|^/|$SC_BASE/|"
}

@test "the count contract holds end to end on the demo site" {
	demo_urls >urls.txt
	n=$(wc -l <urls.txt)
	# A JSONL copy, from the same pass, counts the records without worrying
	# about newlines inside quoted CSV cells.
	cat urls.txt | sc-fetch -c 20 2>metrics.jsonl | sc-parse | sc-sink --csv out.csv --jsonl out.jsonl
	assert_equal "$(wc -l <out.jsonl)" "$n"
	assert_equal "$(jq -s 'map(.url) | sort | unique | length' out.jsonl)" "$n"
	head -n 1 out.csv | grep -q '^url,' || fail "no header: $(head -n 1 out.csv)"
	# The demo's titles came through the parser.
	grep -q 'Backoff and Jitter | sc demo shop' out.csv || fail "no parsed title in out.csv"
	# The broken pages are records too, not lost.
	assert_equal "$(jq -r 'select(.status == 404) | .url' out.jsonl)" "$SC_BASE/missing.html"
	assert_equal "$(jq -r 'select(.url | contains("redirect-to")) | .final_url' out.jsonl)" "$SC_BASE/index.html"
}

@test "a URL list is read by one rule: sc-fetch and sc-frontier --seeds take the same URLs" {
	{
		printf '%s\n' '# a comment' "  $SC_BASE/index.html  " '' "	$SC_BASE/about.html	" \
			' 	 ' "  # $SC_BASE/commented.html" "{\"url\":\"$SC_BASE/missing.html\"}"
		printf '%s\r\n' "$SC_BASE/index.html?crlf " # a CRLF line, a blank before the CR
		printf ' \t\r\r\n'                          # blank but for a CR before the CRLF
	} >urls.txt
	run -0 sh -c 'sc-fetch -k <urls.txt 2>/dev/null | jq -r .url'
	fetched=$output
	run -0 sh -c 'sc-frontier --seeds <urls.txt 2>summary.json | jq -r .url'
	assert_equal "$output" "$fetched"
	# and no other line was taken for a URL
	assert_equal "$(jq -c '[.links, .reasons.not_url]' summary.json)" "[4,0]"
	assert_equal "$output" "$SC_BASE/index.html
$SC_BASE/about.html
$SC_BASE/missing.html
$SC_BASE/index.html?crlf"
}

@test "malformed input lines become bad_input records and keep the count" {
	{
		echo "$SC_BASE/index.html"
		echo '{"url": 42}'
		echo '{"url": "'"$SC_BASE"'/about.html", "id": 7}'
		echo '{not json'
	} >input.txt
	# sc-fetch made two records that are not ok: exit 3.  The later stages
	# take them as data: exit 0.
	run -3 sh -c 'sc-fetch <input.txt 2>fetch.err >fetched.jsonl'
	run -0 sh -c 'sc-parse <fetched.jsonl | sc-sink --jsonl out.jsonl'
	assert_equal "$(wc -l <out.jsonl)" 4
	assert_equal "$(jq -c 'select(.error.kind == "bad_input") | .line' out.jsonl | sort | tr '\n' ' ')" "2 4 "
	# Members of the input object are carried through the whole pipeline.
	assert_equal "$(jq -r 'select(.id == 7) | .title' out.jsonl)" "About | sc demo shop"
	# One warning per malformed line, with its position.
	assert_equal "$(grep -c '^sc-fetch: <stdin>:[24]: ' fetch.err)" 2
}

@test "an interrupted pipeline loses nothing: every record sc-fetch wrote reaches the sink whole" {
	for i in $(seq 1 400); do echo "$SC_BASE/delay/200?i=$i"; done >urls.txt
	# A pipeline in its own process group, interrupted as Ctrl-C would be:
	# SIGINT to every process at once.  tee -i keeps a copy of what
	# sc-fetch wrote, ignoring the interrupt itself.
	# The shell that setsid starts leads the new process group; it writes its
	# own pid, since setsid may fork and $! is then not the leader.
	setsid sh -c 'echo "$$" >leader.pid; sc-fetch -c 10 --retries 0 <urls.txt 2>fetch.err | tee -i fetched.jsonl | sc-parse 2>parse.err | sc-sink --jsonl out.jsonl 2>sink.err; echo "$?" >sink.status' &
	for _ in $(seq 1 50); do [ -s leader.pid ] && break; sleep 0.1; done
	# The interrupt once a few records are through (at most 30 s), not
	# after a fixed time, which a loaded machine may spend starting up.
	for _ in $(seq 1 300); do [ "$(cat fetched.jsonl 2>/dev/null | wc -l)" -gt 20 ] && break; sleep 0.1; done
	kill -INT -- "-$(cat leader.pid)"
	for _ in $(seq 1 200); do [ -s sink.status ] && break; sleep 0.1; done
	wait || true
	assert_equal "$(cat sink.status)" 130
	fetched=$(wc -l <fetched.jsonl)
	[ "$fetched" -gt 10 ] || fail "only $fetched records before the interrupt"
	[ "$fetched" -lt 400 ] || fail "the interrupt came too late to test anything"
	# Every line in the sink's file is a whole record ...
	jq -e . out.jsonl >/dev/null || fail "out.jsonl has a broken line"
	# ... and every record sc-fetch completed is there.
	assert_equal "$(wc -l <out.jsonl)" "$fetched"
	assert_equal "$(jq -r .url out.jsonl | sort)" "$(jq -r .url fetched.jsonl | sort)"
}

@test "make demo runs and prints the CSV's path, its rows and the summary" {
	run -0 env SC_DEMO_OUT="$BATS_TEST_TMPDIR/demo" make -s -C "$BATS_TEST_DIRNAME/.." demo
	assert_output --partial "$BATS_TEST_TMPDIR/demo/books.csv"
	assert_output --partial '"event": "summary"'
	[ -s "$BATS_TEST_TMPDIR/demo/books.csv" ] || fail "no CSV"
}
