#!/usr/bin/env bats
# Every program under valgrind's memcheck on inputs that walk its main
# paths, failures included: no invalid access, no uninitialised use, no leak.
# (sc-parse's malformed-HTML corpus runs under valgrind in sc-parse.bats.)

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0
load 'lib/server'

# valgrind cannot run ASan binaries: in the SANITIZE=1 run these are
# skipped, and ASan itself checks the same programs in every other suite.
setup_file() {
	if [ "${SANITIZE:-}" != 1 ]; then
		sc_server_start
	fi
}

teardown_file() {
	if [ "${SANITIZE:-}" != 1 ]; then
		sc_server_stop
	fi
}

setup() {
	[ "${SANITIZE:-}" != 1 ] || skip "valgrind cannot run ASan+UBSan binaries"
	cd "$BATS_TEST_TMPDIR"
}

# Runs a program under memcheck; valgrind's own errors exit 99.
memcheck() {
	valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect "$@"
}

@test "sc-fetch: ok pages, errors, redirects, bad input and gzip are clean" {
	{
		echo "$SC_BASE/page/1"
		echo "$SC_BASE/status/404"
		echo "$SC_BASE/redirect/2"
		echo "$SC_BASE/redirect-loop"
		echo "$SC_BASE/gzip"
		echo "$SC_BASE/binary/100"
		echo "$SC_BASE/reset"
		echo "$SC_BASE/big/200000"
		echo "ftp://127.0.0.1/"
		echo '{"url": "'"$SC_BASE"'/echo", "request": {"method": "POST", "headers": {"X-A": "1"}, "body": "hi"}}'
		echo '{not json'
	} >urls.txt
	run -3 --separate-stderr memcheck "$SC_BIN/sc-fetch" -c 4 --retries 1 --retry-base 10 \
		--max-bytes 100000 --keep-order <urls.txt
	assert_equal "$(wc -l <<<"$output")" 11
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
}

@test "sc-retry: passthrough and refetch are clean" {
	{
		echo '{"url":"'"$SC_BASE"'/page/2","ok":true,"status":200}'
		echo '{"url":"'"$SC_BASE"'/flaky/mc?fail=1","ok":false,"status":503,"attempts":1,"error":{"kind":"http","message":"503"}}'
		echo '{"url":"'"$SC_BASE"'/status/404","ok":false,"status":404,"attempts":1,"error":{"kind":"http","message":"404"}}'
		echo 'garbage'
	} >records.jsonl
	run -3 --separate-stderr memcheck "$SC_BIN/sc-retry" --retries 2 --retry-base 10 <records.jsonl
	assert_equal "$(wc -l <<<"$output")" 4
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
}

@test "sc-sink: JSONL, CSV, TSV and SQLite at once are clean" {
	{
		echo '{"url":"a","title":"x, \"y\"","n":1,"links":["p","q"],"meta":{"host":"h"}}'
		echo '{"url":"b","title":"=cmd","n":2.5}'
		echo 'not json'
	} >records.jsonl
	run -3 --separate-stderr memcheck "$SC_BIN/sc-sink" --jsonl o.jsonl --csv o.csv --tsv o.tsv --sqlite o.db \
		-c url,title,host=meta.host --formula-escape <records.jsonl
	[ "$(wc -l <o.jsonl)" -eq 3 ] || fail "not 3 records"
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $stderr"
}

@test "sc-parse: default fields, selectors and --each are clean" {
	body='<html lang=en><head><title>T</title><base href="/b/"></head><body><h1>H</h1><ul><li class=c><a href=x>1</a></li><li class=c><a href=y>2</a></li></ul></body></html>'
	jq -nc --arg b "$body" '{url: "http://h/", ok: true, status: 200, content_type: "text/html", body: $b}' >r.jsonl
	echo '{"url":"http://h/x","ok":true,"body_base64":"iVBORw0KGgo="}' >>r.jsonl
	run -0 --separate-stderr memcheck "$SC_BIN/sc-parse" -j 2 <r.jsonl
	[ -z "$stderr" ] || fail "valgrind: $stderr"
	run -0 --separate-stderr memcheck "$SC_BIN/sc-parse" -j 1 --each 'li.c' -f 'link=a::attr(href)' -f 'text=a' <r.jsonl
	assert_line --index 0 --partial '"link":"http://h/b/x"'
}

@test "sc-frontier: links, seeds, scopes, the seen set and --commit are clean" {
	{
		echo '{"url":"http://www.example.co.uk/a/","links":["b","../c?utm_x=1&id=2","http://shop.example.co.uk/","http://bücher.example/","ftp://x/",1]}'
		echo '{"url":"http://www.example.co.uk/b","depth":1,"seed":"http://www.example.co.uk/","links":["http://www.example.co.uk/a/%7e%41/./x#f","http://h/ok?q=ツ&x=a b"]}'
		echo 'not json'
	} >pages.jsonl
	run -3 --separate-stderr memcheck "$SC_BIN/sc-frontier" --scope domain --strip-query '^utm_' \
		--max-per-host 10 --deny 'x$' --seen s.db <pages.jsonl
	assert_equal "$(wc -l <<<"$output")" 3
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
	printf '%s\n' 'http://a.example/' '{"url":"http://b.example/"}' >seeds.txt
	run -0 --separate-stderr memcheck "$SC_BIN/sc-frontier" --seeds --seen s.db --no-commit <seeds.txt
	assert_equal "$(wc -l <<<"$output")" 2
	echo "$output" >round.jsonl
	run -0 --separate-stderr memcheck "$SC_BIN/sc-frontier" --commit --seen s.db <round.jsonl
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
}

@test "sc-render: pages, a fetch record's body, bad input, a crash, a timeout, recycling, --js and --screenshot are clean" {
	# Only sc-render runs under memcheck: the browser it starts is exec'd
	# outside valgrind (no --trace-children).  -m 6: a page under valgrind
	# on a loaded machine took over 2 s, and timed out.
	[ -x /usr/lib/chromium/chromium-headless-shell ] || [ -x /usr/lib/chromium/chromium ] ||
		skip "no Chromium (make deps installs chromium-headless-shell)"
	local site="file://$BATS_TEST_DIRNAME/render/basic"
	export SC_RENDER_BROWSER_ARGS="--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
	printf '%s\n' "$site/js.html" "$site/alert.html" 'not a url' '{"url":"'"$site"'/nav.html","id":1}' \
		chrome://crash "$site/busy.html" \
		'{"url":"http://127.0.0.1:9/x.html","status":200,"ok":true,"content_type":"text/html","body":"<p>from the body</p>"}' >in.txt
	# --js and --screenshot too: every page that settles runs the script
	# and leaves a PNG.
	echo 'return document.title;' >title.js
	mkdir shots
	run -3 --separate-stderr memcheck "$SC_BIN/sc-render" -c 2 -m 6 --tab-pages 1 --browser-pages 3 \
		--wait stable:200 --js title.js --screenshot shots --viewport 320x240 <in.txt
	assert_equal "$(jq -r '.error.kind // "ok"' <<<"$output" | sort | tr '\n' ' ')" "bad_input ok ok ok ok render timeout "
	assert_equal "$(jq -r 'select(.ok) | .rendered.screenshot' <<<"$output" | xargs ls | wc -l)" 4
	assert_equal "$(jq -r 'select(.ok) | .rendered.js | type' <<<"$output" | uniq -c | tr -s ' ')" " 4 string"
}

@test "sc-render --robots, --robots-cache, --block and --delay: held requests, robots.txt's fetcher and the cache are clean" {
	[ -x /usr/lib/chromium/chromium-headless-shell ] || [ -x /usr/lib/chromium/chromium ] ||
		skip "no Chromium (make deps installs chromium-headless-shell)"
	export SC_RENDER_BROWSER_ARGS="--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
	printf '%s\n' "$SC_BASE/page/1" "$SC_BASE/page/2" "$SC_BASE/status/404" \
		"file://$BATS_TEST_DIRNAME/render/basic/assets.html" >in.txt
	local i
	for i in 1 2; do # fetched, then from the cache
		run -3 --separate-stderr memcheck "$SC_BIN/sc-render" -c 2 -m 6 --robots --robots-cache rc.db \
			--block 'images,*/nothing/*' --block stylesheets --delay 50 <in.txt
		assert_equal "$(jq -r '.error.kind // "ok"' <<<"$output" | sort | tr '\n' ' ')" "http ok ok ok "
		assert_equal "$(jq -r 'select(.url | endswith("assets.html")) | .rendered.blocked' <<<"$output")" 2
	done
}
