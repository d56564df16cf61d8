#!/usr/bin/env bats
# sc-render: pages that JavaScript builds, rendered by Debian's headless
# Chromium over the DevTools pipe (test/render/basic/ holds the pages).
# The browser resolves no name: SC_RENDER_BROWSER_ARGS gives it a
# host-resolver rule, and every page is on 127.0.0.1.  Each test starts one
# sc-render on a few pages; no Chromium process may outlive it.

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

# The browser of sc-render $1 (its child in a process group of its own),
# once it runs; waits at most ~10 s.
browser_of() {
	local b
	for _ in $(seq 100); do
		b=$(pgrep -P "$1" | head -1)
		if [ -n "$b" ] && [ "$(ps -o pgid= -p "$b" | tr -d ' ')" = "$b" ]; then
			echo "$b"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# No process is left in process group $1; waits at most ~5 s.
assert_no_orphan() {
	for _ in $(seq 50); do
		[ -z "$(pgrep -g "$1")" ] && return 0
		sleep 0.1
	done
	fail "Chromium processes left: $(pgrep -g "$1" -a)"
}

@test "usage errors name the option: exit 2, nothing on stdout" {
	run -2 --separate-stderr sc-render --wait sometime </dev/null
	assert_equal "$stderr" "sc-render: --wait: 'sometime' is not load, domcontentloaded, networkidle, selector:CSS, js:EXPR or stable:MS
Try 'sc-render --help' for more information."
	assert_output ''
	run -2 --separate-stderr sc-render --wait stable:0 </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --wait: 'stable:0': stable:MS needs MS in 1..600000"
	run -2 --separate-stderr sc-render -c 0 </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --concurrency: '0' is out of range (1..64)"
	run -2 --separate-stderr sc-render --scroll 1001 </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --scroll: '1001' is out of range (0..1000)"
	local v
	for v in 800 0x600 800x 800x600x x600 16385x10; do
		run -2 --separate-stderr sc-render --viewport "$v" </dev/null
		assert_equal "${stderr%%$'\n'*}" "sc-render: --viewport: '$v' is not WxH (each 1 to 16384)"
	done
	run -2 --separate-stderr sc-render --block images,pictures </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --block: 'pictures' is no resource type (images, fonts, media, stylesheets, scripts, xhr, fetch, websockets, eventsource, manifests, texttracks, pings, prefetch, frames, other) nor a URL pattern (with '/' or '*')"
	run -2 --separate-stderr sc-render --robots-cache r.db </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --robots-cache needs --robots"
	run -2 --separate-stderr sc-render --delay -1 </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --delay: '-1' is out of range (0..3600000)"
	run -2 --separate-stderr sc-render http://127.0.0.1/ </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: unexpected argument 'http://127.0.0.1/': URLs are read from standard input"
}

@test "a browser that cannot start is exit 1 with its path" {
	run -1 --separate-stderr sc-render --browser /nonexistent/chrome <<<"$SC_BASE/js.html"
	assert_equal "$stderr" "sc-render: /nonexistent/chrome: No such file or directory"
	assert_output ''
}

@test "a page built by script: its DOM, status, and the rendered counts; sc-parse reads it" {
	run -0 --separate-stderr sc-render -c 2 --wait networkidle <<<"$SC_BASE/list.html"
	assert_equal "$(jq -r '[.url, .final_url, .status, .ok, .content_type, .attempts] | @tsv' <<<"$output")" \
		"$SC_BASE/list.html	$SC_BASE/list.html	200	true	text/html	1"
	jq -e '.rendered.requests == 2 and .rendered.failed == 0 and .rendered.waited_for == "networkidle"
		and .bytes == (.body | length) and (.fetched_at | test("Z$")) and .elapsed_ms > 0' <<<"$output"
	run -0 sc-parse -f 'item[]=li.item' <<<"$output"
	assert_equal "$(jq -c .item <<<"$output")" '["one","two","three"]'
}

@test "the count contract: URLs, records, a malformed line, blank lines and comments" {
	printf '%s\n' "$SC_BASE/js.html" '' '# a comment' '{"url": "'"$SC_BASE"'/alert.html", "id": 7}' \
		'{"nourl": 1}' 'not json {' 'no url' >in.txt
	run -3 --separate-stderr sc-render -c 2 <in.txt
	assert_equal "$(wc -l <<<"$output")" 5
	assert_equal "$(jq -c 'select(.id == 7) | [.ok, .rendered.dialogs]' <<<"$output")" '[true,1]'
	assert_equal "$(jq -r 'select(.ok | not) | .error.kind' <<<"$output" | sort | uniq -c | tr -s ' ')" " 3 bad_input"
	[[ $stderr == *"sc-render: <stdin>:5: "* ]] || fail "no warning for line 5: $stderr"
	jq -se 'map(select((.url // "") | test("alert")))[0].body | test("after alert")' <<<"$output"
}

@test "a fetch record's body answers the document: the page is not fetched twice" {
	sc-fetch -q <<<"$SC_BASE/js.html" | jq -c '. + {id: "x"}' >fetched.jsonl
	sc_server_reset
	run -0 --separate-stderr sc-render <fetched.jsonl
	jq -e '.ok and .id == "x" and .status == 200 and (.body | test("built by js")) and .history != null' <<<"$output"
	assert_equal "$(sc_server_log '[.[] | select(.path == "/js.html")] | length')" 0
	# A fetch that failed passes through as it is.
	sc-fetch -q <<<"$SC_BASE/missing.html" >failed.jsonl || true
	run -3 --separate-stderr sc-render <failed.jsonl
	assert_equal "$output" "$(cat failed.jsonl)"
}

@test "--only-if-needed: a page whole as fetched passes through as it came, without a browser; the others are rendered" {
	local page
	for page in static js noscript filled; do
		sc-fetch -q <<<"$SC_BASE/$page.html"
	done >fetched.jsonl
	# No page needs a browser: none is started (this one does not exist).
	run -0 --separate-stderr sc-render --only-if-needed --browser /nonexistent/chrome < <(head -1 fetched.jsonl)
	assert_equal "$output" "$(head -1 fetched.jsonl)"
	run -0 --separate-stderr sc-render --only-if-needed <fetched.jsonl
	printf '%s\n' "$output" >out
	# Built: the script's element is in the DOM (not only in its source).
	run -0 jq -r '[(.url | sub(".*/"; "")), (.rendered != null), (.body | test("\"><p class=\"built\">built by js</p></div>"))] | @tsv' out
	assert_equal "$(sort <<<"$output")" "$(printf 'filled.html\tfalse\tfalse\njs.html\ttrue\ttrue\nnoscript.html\ttrue\ttrue\nstatic.html\tfalse\tfalse')"
	# What passed through is the fetch record, byte for byte.
	grep -F '/static.html"' out | cmp - <(grep -F '/static.html"' fetched.jsonl)
	# --needed-if: a selector that matches needs the browser too.
	run -0 --separate-stderr sc-render --needed-if '#root:empty' <fetched.jsonl
	assert_equal "$(jq -r 'select(.url | endswith("/filled.html")) | .body | test("root\"><p class=\"built\">")' <<<"$output")" true
	assert_equal "$(jq -r 'select(.url | endswith("/static.html")) | .rendered' <<<"$output")" null
	run -2 --separate-stderr sc-render --needed-if 'div[' </dev/null
	[[ $stderr == "sc-render: --needed-if: "* ]] || fail "$stderr"
}

@test "a script's navigation, a 404 and a connection refused" {
	# A port nothing listens on: the server's own, once it is stopped.
	CLOSED_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	printf '%s\n' "$SC_BASE/nav.html" "$SC_BASE/missing.html" "http://127.0.0.1:$CLOSED_PORT/" >in.txt
	run -3 --separate-stderr sc-render -c 3 <in.txt
	assert_equal "$(jq -r 'select(.url | test("nav")) | .final_url' <<<"$output")" "$SC_BASE/js.html"
	assert_equal "$(jq -r 'select(.url | test("missing")) | [.status, .error.kind] | @tsv' <<<"$output")" "404	http"
	assert_equal "$(jq -r 'select(.url | test(":'"$CLOSED_PORT"'/")) | .error.kind' <<<"$output")" "connect"
}

@test "--wait selector, js and stable; a page that never settles is a timeout holding what was there" {
	run -0 --separate-stderr sc-render --wait 'selector:li.item' <<<"$SC_BASE/list.html"
	jq -e '.rendered.waited_for == "selector:li.item" and (.body | test("three"))' <<<"$output"
	run -0 --separate-stderr sc-render --wait 'js:document.querySelectorAll("li").length == 3' <<<"$SC_BASE/list.html"
	jq -e '.body | test("three")' <<<"$output"
	run -3 --separate-stderr sc-render -m 1.5 --wait stable:300 <<<"$SC_BASE/busy.html"
	jq -e '.ok == false and .error.kind == "timeout" and .rendered.waited_for == "timeout"
		and (.body | test("what was there")) and .rendered.ms < 6000' <<<"$output"
}

@test "--scroll N: scrolls while the page grows, at most N times, within -m; sc-parse counts the rows" {
	local page="file://$BATS_TEST_DIRNAME/render/site/scroll.html"
	run -0 --separate-stderr sc-render --scroll 2 <<<"$page"
	jq -e '.rendered.scroll == 2 and .rendered.scrolled == 2' <<<"$output"
	run -0 sc-parse -f 'rows[]=div.row' <<<"$output"
	assert_equal "$(jq '.rows | length' <<<"$output")" 30
	# 50 rows after 4 scrolls; the fifth found no growth and ended it.
	run -0 --separate-stderr sc-render --scroll 1000 <<<"$page"
	jq -e '.rendered.scrolled == 4 and (.body | test("SCROLL-ALL-LOADED"))' <<<"$output"
	run -0 sc-parse -f 'rows[]=div.row' <<<"$output"
	assert_equal "$(jq '.rows | length' <<<"$output")" 50
	# The last wait for growth (3 s at most) is cut short by -m: ok, no
	# timeout, within -m.
	run -0 --separate-stderr sc-render -m 2.5 --scroll 1000 <<<"$page"
	jq -e '.ok and .rendered.waited_for == "load" and .rendered.ms < 3000' <<<"$output"
}

@test "--viewport WxH: the page's window.innerWidth and innerHeight, 1280x800 unless given, in every tab" {
	run -0 --separate-stderr sc-render <<<"$SC_BASE/viewport.html"
	run -0 sc-parse -f 'size=#size' <<<"$output"
	assert_equal "$(jq -r .size <<<"$output")" 1280x800
	# A fresh tab for each page (--tab-pages 1): each is given the size.
	printf '%s\n' "$SC_BASE/viewport.html?1" "$SC_BASE/viewport.html?2" "$SC_BASE/viewport.html?3" >in.txt
	run -0 --separate-stderr sc-render -c 1 --tab-pages 1 --viewport 375x667 <in.txt
	run -0 sc-parse -f 'size=#size' <<<"$output"
	assert_equal "$(jq -r .size <<<"$output" | sort | uniq -c | tr -s ' ')" " 3 375x667"
}

# png_width FILE: the width in FILE's IHDR, if FILE starts with the PNG
# signature and an IHDR chunk.
png_width() {
	[ "$(od -An -tx1 -N16 "$1" | tr -d ' \n')" = 89504e470d0a1a0a0000000d49484452 ] || return 1
	od -An -tu1 -j16 -N4 "$1" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }'
}

@test "--screenshot DIR: a PNG per page, the viewport's width, named by URL and line, its path in the record" {
	mkdir shots
	printf '%s\n' "$SC_BASE/viewport.html" "$SC_BASE/viewport.html" "$SC_BASE/list.html" >in.txt
	run -0 --separate-stderr sc-render -c 2 --viewport 640x480 --screenshot shots <in.txt
	assert_equal "$(jq -r .rendered.screenshot <<<"$output" | sort -u | wc -l)" 3
	local f
	for f in $(jq -r .rendered.screenshot <<<"$output"); do
		[[ $f == shots/[0-9a-f]*-[123].png ]] || fail "a screenshot's name: $f"
		assert_equal "$(png_width "$f")" 640
	done
	assert_equal "$(ls shots | wc -l)" 3 # no temporary file left
	# The default viewport, 1280 wide; the DOM is read as usual.
	run -0 --separate-stderr sc-render --screenshot "$PWD/shots" <<<"$SC_BASE/list.html"
	jq -e '.body | test("three")' <<<"$output"
	assert_equal "$(png_width "$(jq -r .rendered.screenshot <<<"$output")")" 1280
	run -1 --separate-stderr sc-render --screenshot nowhere </dev/null
	assert_equal "$stderr" "sc-render: --screenshot: nowhere: No such file or directory"
	run -1 --separate-stderr sc-render --screenshot in.txt </dev/null
	assert_equal "$stderr" "sc-render: --screenshot: in.txt: Not a directory"
}

@test "--js FILE: clicks load more after the wait, its JSON result in the record; an exception is a render error holding the body" {
	cat >more.js <<-'EOF'
		// Clicks "load more" and waits for its items.
		document.querySelector('#more').click();
		while (document.querySelectorAll('li.item').length < 4)
			await new Promise(r => setTimeout(r, 50));
		return { items: document.querySelectorAll('li.item').length, title: document.title }; // the result
	EOF
	run -0 --separate-stderr sc-render --js more.js <<<"$SC_BASE/load-more.html"
	assert_equal "$(jq -c .rendered.js <<<"$output")" '{"items":4,"title":"load more"}'
	run -0 sc-parse -f 'items[]=li.item' <<<"$output"
	assert_equal "$(jq -c .items <<<"$output")" '["first","one","two","three"]'
	# Nothing returned: null.
	echo 'document.title = "changed";' >title.js
	run -0 --separate-stderr sc-render --js title.js <<<"$SC_BASE/load-more.html"
	jq -e '.rendered.js == null and (.rendered | has("js")) and (.body | test("<title>changed</title>"))' <<<"$output"
	# An exception, a syntax error, a promise that never settles (the
	# command's deadline): render errors, each with the page's body.
	echo "throw new Error('no such button');" >bad.js
	echo '1 +' >syntax.js
	echo 'await new Promise(() => {});' >hang.js
	local f
	for f in bad syntax hang; do
		run -3 --separate-stderr sc-render --command-timeout 1 --js "$f.js" <<<"$SC_BASE/load-more.html"
		jq -e '(.ok | not) and .error.kind == "render" and (.rendered | has("js") | not)
			and .attempts == 1 and (.body | test("load more"))' <<<"$output"
		echo "$output" >"$f.out"
	done
	assert_equal "$(jq -r .error.message bad.out syntax.out hang.out)" "--js: bad.js: Error: no such button
--js: syntax.js: SyntaxError: Unexpected token '}'
--js: hang.js: did not end within 1000 ms"
	run -1 --separate-stderr sc-render --js nothing.js </dev/null
	assert_equal "$stderr" "sc-render: --js: nothing.js: No such file or directory"
}

# The paths the fixture server was asked for since its reset, sorted.
paths_asked() {
	sc_server_log '[.[] | .path] | sort | join(" ")' | jq -r .
}

@test "--block: resource types and URL patterns refused in the browser, never asked of the server; counted in blocked" {
	run -0 --separate-stderr sc-render <<<"$SC_BASE/assets.html"
	jq -e '.rendered.blocked == 0 and (.body | test("APP-RAN"))' <<<"$output"
	assert_equal "$(paths_asked)" "/app.js /assets.html /dot.svg /style.css"
	sc_server_reset
	run -0 --separate-stderr sc-render --block images,stylesheets <<<"$SC_BASE/assets.html"
	assert_equal "$(jq -c '.rendered | [.requests, .failed, .blocked]' <<<"$output")" '[4,0,2]'
	jq -e '.body | test("APP-RAN")' <<<"$output"
	assert_equal "$(paths_asked)" "/app.js /assets.html"
	# A word with '/' or '*' is a pattern on the URL; --block adds up.
	sc_server_reset
	run -0 --separate-stderr sc-render --block '*/app.js' --block images <<<"$SC_BASE/assets.html"
	assert_equal "$(jq -c '.rendered | [.requests, .failed, .blocked]' <<<"$output")" '[4,0,2]'
	run -0 sc-parse -f 'text=#text' <<<"$output"
	assert_equal "$(jq -r .text <<<"$output")" "no script ran"
	assert_equal "$(paths_asked)" "/assets.html /style.css"
	# The page's own document is not --block's: it is rendered.
	sc_server_reset
	run -0 --separate-stderr sc-render --block '*' <<<"$SC_BASE/assets.html"
	assert_equal "$(jq -c '[.ok, .status, .rendered.blocked]' <<<"$output")" '[true,200,3]'
	assert_equal "$(paths_asked)" "/assets.html"
}

@test "--per-host N caps the browser's requests in flight to one origin, over every tab; -A and -H reach the server on every request" {
	local wait='js:document.getElementById("n").textContent == "6"'
	printf '%s\n' "$SC_BASE/many.html?1" "$SC_BASE/many.html?2" >in.txt
	# Six fetch() of 300 ms each, and two tabs: together without it...
	run -0 --separate-stderr sc-render -c 2 --wait "$wait" <in.txt
	jq -e -n "$(sc_server_stats .max_inflight) >= 2" || fail "max_inflight without --per-host: $(sc_server_stats .max_inflight)"
	# ... one at a time with it, the pages whole.
	sc_server_reset
	run -0 --separate-stderr sc-render -c 2 --per-host 1 --wait "$wait" -A 'probe/1.0 (+https://example.org/bot)' \
		-H 'X-Probe: yes' -H 'accept-language: de' -H 'X-Empty;' <in.txt
	assert_equal "$(jq -sc 'map([.ok, .rendered.requests, .rendered.waited_for != "timeout"])' <<<"$output")" \
		'[[true,7,true],[true,7,true]]'
	assert_equal "$(sc_server_stats .max_inflight)" 1
	assert_equal "$(sc_server_stats .requests)" 14
	# Every request, the pages' and their fetch()es', carried them.
	assert_equal "$(sc_server_log '[.[] | .agent] | unique')" '["probe/1.0 (+https://example.org/bot)"]'
	assert_equal "$(sc_server_log '[.[] | (.headers | map(select(. == "X-Probe" or . == "accept-language" or . == "X-Empty")) | sort | join(","))] | unique')" \
		'["X-Empty,X-Probe,accept-language"]'
	run -2 --separate-stderr sc-render -H 'no colon' </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --header: 'no colon' is not 'Name: value'"
	run -2 --separate-stderr sc-render -A '' </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --user-agent: empty, or holds a control character but a tab"
	run -2 --separate-stderr sc-render --from-warc x.warc.gz --per-host 2 </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --from-warc asks nothing of the network: not with --per-host"
}

@test "--contact: Chromium's own agent with (+URL) on every request, robots.txt asked as sc-render/VERSION (+URL); -A wins; a bad one is a usage error" {
	local v
	v=$(sc-render -V | awk '{ print $2; exit }')
	run -0 --separate-stderr sc-render --robots --contact mailto:ops@example.org <<<"$SC_BASE/many.html?1"
	jq -e .ok <<<"$output" >/dev/null || fail "$output"
	run -0 sc_server_log '[.[] | select(.path != "/robots.txt") | .agent] | unique | length'
	assert_output 1
	run -0 sc_server_log '[.[] | select(.path != "/robots.txt") | .agent][0]'
	assert_output --regexp '^"Mozilla/5\.0 .*Chrome/[0-9.]+ .*\(\+mailto:ops@example\.org\)"$'
	assert_equal "$(sc_server_log '[.[] | select(.path == "/robots.txt") | .agent]')" "[\"sc-render/$v (+mailto:ops@example.org)\"]"
	sc_server_reset
	run -0 --separate-stderr sc-render -A 'mine/2' --contact https://example.org/bot <<<"$SC_BASE/many.html?2"
	assert_equal "$(sc_server_log '[.[] | .agent] | unique')" '["mine/2"]'
	run -2 --separate-stderr sc-render --contact 'https://x.org/(a)' </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --contact: 'https://x.org/(a)' is not an http(s) URL or a mailto: address (visible ASCII, no parentheses)"
}

@test "a record's request: the document sent with its method, headers and body, as sc-fetch sends it; a bad one is bad_input" {
	{
		echo '{"url":"'"$SC_BASE"'/echo","request":{"method":"POST","headers":{"X-Rec":"1","user-agent":"rec/2"},"body":{"a":[1,2]}},"id":7}'
		echo '{"url":"'"$SC_BASE"'/echo","request":{"method":"PUT","body":"x=1","headers":{"Content-Type":"application/x-www-form-urlencoded"}}}'
		echo '{"url":"'"$SC_BASE"'/echo","request":{"method":"GET POST"}}'
		echo '{"url":"'"$SC_BASE"'/echo","request":{"headers":{"X-Bad":"a\u0001b"}}}'
	} >in.jsonl
	run -3 --separate-stderr sc-render -c 2 <in.jsonl
	# What the server read, from the page it answered (its <pre>).
	run jq -c 'select(.ok) | [.id, (.body | capture("<pre>(?<j>[^<]*)</pre>").j | fromjson
		| [.method, .headers["X-Rec"], [.headers | to_entries[] | select(.key | ascii_downcase == "user-agent") | .value],
			.headers["Content-Type"], .body])]' <<<"$output"
	# The record's user-agent replaces Chromium's User-Agent: one field.
	assert_line '[7,["POST","1",["rec/2"],"application/json","{\"a\":[1,2]}"]]'
	assert_line --partial '["PUT",null,["Mozilla/5.0 '
	assert_line --partial '"application/x-www-form-urlencoded","x=1"]]'
	run jq -rc 'select(.ok | not) | .error.message' <<<"$(sc-render <in.jsonl 2>/dev/null)"
	assert_output "$(printf '%s\n' 'request.method is not a method name' 'request.headers has a malformed header')"
	assert_equal "$(sc_server_log '[.[] | .method] | join(" ")' | jq -r .)" "POST PUT POST PUT"
}

@test "--keep-order: the records in the input's order, a slow page's first, a malformed line and a passed-through record in their places" {
	{
		echo "$SC_BASE/delay/1200"
		echo "$SC_BASE/js.html"
		echo 'not a url'
		echo '# a comment'
		echo '{"url":"'"$SC_BASE"'/x","ok":false,"error":{"kind":"http","message":"HTTP 404"}}'
		echo "$SC_BASE/js.html?2"
	} >in.txt
	run -3 --separate-stderr sc-render -c 3 <in.txt
	# Without it, as they end: the slow page last.
	assert_equal "$(jq -r .url <<<"${lines[4]}")" "$SC_BASE/delay/1200"
	run -3 --separate-stderr sc-render -c 3 --keep-order <in.txt
	assert_equal "$(jq -rc '[.url, .ok] | @json' <<<"$output" | tr '\n' ' ')" \
		"[\"$SC_BASE/delay/1200\",true] [\"$SC_BASE/js.html\",true] [null,false] [\"$SC_BASE/x\",false] [\"$SC_BASE/js.html?2\",true] "
}

@test "a tab that misses a deadline, and one that crashes: tried once more, then a render error" {
	printf '%s\n' "$SC_BASE/spin.html" chrome://crash "$SC_BASE/js.html" >in.txt
	run -3 --separate-stderr sc-render -c 2 --command-timeout 1 -m 2 --wait 'js:false' <in.txt
	assert_equal "$(wc -l <<<"$output")" 3
	assert_equal "$(jq -r 'select(.url | test("spin")) | [.attempts, .error.kind] | @tsv' <<<"$output")" "2	render"
	assert_equal "$(jq -r 'select(.url | test("crash")) | [.attempts, .error.kind, .error.message] | @tsv' <<<"$output")" \
		"2	render	the tab crashed"
	assert_equal "$(jq -r 'select(.url | test("js.html")) | .error.kind' <<<"$output")" timeout
}

@test "a browser that dies (its descriptor 4 ends) is started again: the pages it held tried again, every page rendered, none left behind" {
	mkfifo in
	sc-render -c 2 <in >out.jsonl 2>err.txt 3>&- &
	local pid=$! b b2
	exec 5>in
	b=$(browser_of $pid) || fail "no browser"
	echo "$SC_BASE/js.html?before" >&5
	for _ in $(seq 100); do [ -s out.jsonl ] && break; sleep 0.1; done
	[ -s out.jsonl ] || fail "no first record: $(cat err.txt)"
	# Two pages in flight (the server has both requests and answers them
	# after 3 s), then the browser's whole group killed under them.
	printf '%s\n' "$SC_BASE/delay/3000?a" "$SC_BASE/delay/3000?b" >&5
	for _ in $(seq 150); do
		(($(sc_server_log '[.[] | select(.path | startswith("/delay/3000"))] | length') == 2)) && break
		sleep 0.1
	done
	kill -KILL -- "-$b"
	for _ in $(seq 100); do
		b2=$(browser_of $pid) && [ "$b2" != "$b" ] && break
		sleep 0.1
	done
	[ -n "$b2" ] && [ "$b2" != "$b" ] || fail "no new browser after the kill: $(cat err.txt)"
	echo "$SC_BASE/js.html?after" >&5
	exec 5>&-
	status=0
	wait $pid || status=$?
	assert_equal "$status" 0
	assert_no_orphan "$b"
	assert_no_orphan "$b2"
	assert_equal "$(jq -c . out.jsonl | wc -l)" 4
	assert_equal "$(jq -r 'select(.ok | not) | .url' out.jsonl)" ""
	# The held pages were tried again in the new browser; the others once.
	assert_equal "$(jq -r '[(.url | sub(".*/"; "")), .attempts] | @tsv' out.jsonl | sort | tr '\t\n' ': ')" \
		"3000?a:2 3000?b:2 js.html?after:1 js.html?before:1 "
}

@test "no traffic but the page's: every connection the browser holds, sampled through a run and an idle spell, is to the fixture server" {
	mkfifo in
	sc-render -c 2 <in >out.jsonl 2>err.txt 3>&- &
	local pid=$! b peers=0 samples
	exec 5>in
	b=$(browser_of $pid) || fail "no browser"
	# Pages that hold their connection (0.8 s), one built by script with its
	# XHR, then 3 s with nothing to do: Chromium's background services
	# (updates, safe browsing, metrics) would connect then.
	printf '%s\n' "$SC_BASE/delay/800?1" "$SC_BASE/delay/800?2" "$SC_BASE/js.html" "$SC_BASE/delay/800?3" >&5
	# Sampled for 6 s (a sample takes 0.05 s on a quiet machine, more on a
	# loaded one), at most 60 times.
	SECONDS=0
	for ((samples = 0; samples < 60 && SECONDS < 6; samples++)); do
		sc_render_remote_addrs "$b" >>peers.txt
		sleep 0.05
	done
	exec 5>&-
	wait $pid || fail "sc-render failed: $(cat err.txt)"
	assert_equal "$(jq -r 'select(.ok) | .url' out.jsonl | wc -l)" 4
	peers=$(grep -c . peers.txt) || true
	echo "# $peers connections seen in $samples samples: $(sort -u peers.txt | paste -sd ' ')" >&3
	((peers > 0)) || fail "no connection of the browser seen: the sampling saw nothing"
	assert_equal "$(sort -u peers.txt)" "${SC_BASE#http://}"
}

@test "recycling: a tab after K pages, the browser after M, every page rendered" {
	for i in 1 2 3 4 5; do echo "$SC_BASE/js.html?$i"; done >in.txt
	run -0 --separate-stderr sc-render -c 2 --tab-pages 1 --browser-pages 2 <in.txt
	assert_equal "$(jq -r 'select(.ok and (.body | test("built by js"))) | .url' <<<"$output" | sort)" "$(sort in.txt)"
	# A bound of 1 MB: the browser is restarted after every page.
	run -0 --separate-stderr sc-render -c 2 --browser-rss 1 <in.txt
	assert_equal "$(jq -r 'select(.ok) | .url' <<<"$output" | sort)" "$(sort in.txt)"
}

@test "no Chromium process outlives a normal end" {
	mkfifo in
	sc-render <in >out.jsonl 3>&- &
	local pid=$! b
	exec 5>in
	b=$(browser_of $pid) || fail "no browser"
	echo "$SC_BASE/js.html" >&5
	exec 5>&-
	wait $pid || fail "sc-render failed"
	assert_no_orphan "$b"
	jq -e .ok out.jsonl
}

# Starts sc-render on a page that never settles, waits for its browser,
# sends signal $1 once the first record is out; sets pid and b.
interrupt() {
	printf '%s\n' "$SC_BASE/js.html" "$SC_BASE/busy.html" "$SC_BASE/busy.html" >in.txt
	sc-render -c 1 -m 1.5 --wait stable:100000 <in.txt >out.jsonl 2>err.txt 3>&- &
	pid=$!
	b=$(browser_of $pid) || fail "no browser"
	for _ in $(seq 100); do [ -s out.jsonl ] && break; sleep 0.1; done
	kill -"$1" $pid
}

@test "SIGTERM drains: whole records, the count kept, exit 143, no Chromium left" {
	interrupt TERM
	status=0
	wait "$pid" || status=$?
	assert_equal "$status" 143
	assert_no_orphan "$b"
	assert_equal "$(jq -c . out.jsonl | wc -l)" 3
	assert_equal "$(jq -r '.error.kind // "ok"' out.jsonl | sort | tr '\n' ' ')" "cancelled timeout timeout "
}

@test "a drain reads on to the input's end: lines written after the signal (an sc-fetch draining before it) each make a record" {
	mkfifo in
	sc-render -c 1 <in >out.jsonl 2>err.txt 3>&- &
	local pid=$! b
	exec 5>in
	b=$(browser_of $pid) || fail "no browser"
	echo "$SC_BASE/js.html" >&5
	for _ in $(seq 100); do [ -s out.jsonl ] && break; sleep 0.1; done
	[ -s out.jsonl ] || fail "no first record: $(cat err.txt)"
	kill -TERM $pid
	# The browser goes once no page is in flight: the drain has begun.
	assert_no_orphan "$b"
	printf '%s\n' "$SC_BASE/js.html?late" \
		'{"url":"http://127.0.0.1:9/x","ok":false,"error":{"kind":"connect","message":"refused"}}' \
		'{"url":' >&5
	exec 5>&-
	status=0
	wait "$pid" || status=$?
	assert_equal "$status" 143
	assert_equal "$(jq -c . out.jsonl | wc -l)" 4
	assert_equal "$(jq -r '[.ok, (.error.kind // "-")] | @tsv' out.jsonl)" "$(printf 'true\t-\nfalse\tcancelled\nfalse\tconnect\nfalse\tbad_input')"
	assert_equal "$(sed -n 3p out.jsonl)" '{"url":"http://127.0.0.1:9/x","ok":false,"error":{"kind":"connect","message":"refused"}}'
	# Nothing after the signal reached the server.
	assert_equal "$(sc_server_log '[.[] | select(.path | endswith("?late"))] | length')" 0
}

@test "SIGINT drains too: exit 130, no Chromium left" {
	interrupt INT
	status=0
	wait "$pid" || status=$?
	assert_equal "$status" 130
	assert_no_orphan "$b"
	jq -e . out.jsonl >/dev/null
}

@test "SIGKILL of sc-render leaves no Chromium process; the profile it left, the next run removes" {
	mkdir tmp
	export TMPDIR=$PWD/tmp
	interrupt KILL
	status=0
	wait "$pid" || status=$?
	assert_equal "$status" 137
	assert_no_orphan "$b"
	# mkdtemp's: 0700, named by sc-render's pid and six random characters.
	run -0 find tmp -mindepth 1 -maxdepth 1 -printf '%f %m\n'
	assert_output --regexp "^sc-render-$pid-[A-Za-z0-9]{6} 700\$"
	# Another user's folder, or one whose run is alive, stays.
	mkdir "tmp/sc-render-$$-keepme"
	run -0 --separate-stderr sc-render <<<"$SC_BASE/js.html"
	run -0 find tmp -mindepth 1 -maxdepth 1 -printf '%f\n'
	assert_output "sc-render-$$-keepme"
}
