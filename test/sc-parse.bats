#!/usr/bin/env bats
# sc-parse: fields from messy HTML with CSS and XPath selectors.
# Failure modes first (usage errors with their columns, malformed records,
# a malformed-HTML corpus made here, under valgrind too), then charsets,
# default fields, each CSS construct (compiled form and on a document),
# --each, --require, and the count contract and order under -j.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
}

# rec BODY [CONTENT_TYPE [URL]]: an ok fetch record with a text body.
rec() {
	jq -nc --arg b "$1" --arg ct "${2-text/html}" --arg u "${3-http://ex.com/dir/page.html?q=1}" \
		'{url: $u, ok: true, status: 200, content_type: (if $ct == "" then null else $ct end), body: $b}'
}

# rec64 FILE [CONTENT_TYPE]: an ok fetch record whose body is FILE's bytes.
rec64() {
	printf '{"url":"http://ex.com/","ok":true,"status":200,"content_type":%s,"body_base64":"%s"}\n' \
		"$(jq -nc --arg ct "${2-text/html}" 'if $ct == "" then null else $ct end')" "$(base64 -w0 "$1")"
}

# Valgrind's own errors exit 99; leaks of definite/indirect kind count.
memcheck() {
	valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect "$@"
}

# ---- usage errors ----

@test "usage: -f without NAME=SELECTOR" {
	run -2 --separate-stderr sc-parse -f title </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f: 'title' is not NAME=SELECTOR"
	assert_equal "${stderr_lines[1]}" "Try 'sc-parse --help' for more information."
	[ -z "$output" ]
}

@test "usage: an invalid CSS selector names the field and the column" {
	run -2 --separate-stderr sc-parse -f 'title=h1 >> p' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f title: invalid selector at column 5: expected a selector, found '>'"
	run -2 --separate-stderr sc-parse -f 'price=div.card span[data-x' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f price: invalid selector at column 21: expected ']' or an operator (= ~= |= ^= $= *=), found end of selector"
	run -2 --separate-stderr sc-parse -f 'x=li:nth-child(2n+)' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f x: invalid selector at column 17: expected a number in an+b, found ')'"
	run -2 --separate-stderr sc-parse -f 'x=p:hover' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f x: invalid selector at column 2: unsupported pseudo-class ':hover'"
	run -2 --separate-stderr sc-parse -f 'x=a::text b' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f x: invalid selector at column 9: a pseudo-element must end the selector, found 'b'"
	run -2 --separate-stderr sc-parse -f 'x=é é.' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f x: invalid selector at column 5: expected a class name after '.', found end of selector"
}

@test "usage: an invalid XPath selector names the column" {
	run -2 --separate-stderr sc-parse -f 'x=xpath://a[@href' </dev/null
	[[ "${stderr_lines[0]}" == "sc-parse: -f x: invalid selector at column "[0-9]*": "* ]] || fail "$stderr"
	run -2 --separate-stderr sc-parse --each 'xpath:///' -f 'a=b' </dev/null
	[[ "${stderr_lines[0]}" == "sc-parse: --each: invalid selector at column "* ]] || fail "$stderr"
}

@test "usage: field names that collide with fetch members are refused" {
	for name in url final_url status ok content_type bytes attempts elapsed_ms fetched_at body body_base64 error history index; do
		run -2 --separate-stderr sc-parse -f "$name=h1" </dev/null
		assert_equal "${stderr_lines[0]}" "sc-parse: -f $name: '$name' is a member of the fetch record; choose another name"
	done
	run -2 --separate-stderr sc-parse -f 'url[]=a' </dev/null
	run -2 --separate-stderr sc-parse -f 't=h1' -f 't=h2' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: -f t: field named twice"
}

@test "a selector may be written over lines (sc alone reads it); -j refuses a line break as every value does" {
	rec '<div class="c"><p>one</p></div><p>two</p>' >in
	run -0 --separate-stderr sc-parse -f $'p=div.c\n  p' --require p <in
	assert_equal "$(jq -c .p <<<"$output")" '"one"'
	run -0 --separate-stderr sc-parse --each $'\ndiv.c\n' -f $'q=\r\np' <in
	assert_equal "$(jq -c .q <<<"$output")" '"one"'
	run -0 --separate-stderr sc-parse --explain $'div\r\np'
	assert_output "$(sc-parse --explain 'div p')"
	run -2 --separate-stderr sc-parse -j $'2\n' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --jobs: a value may not hold a CR, LF or NUL"
}

@test "usage: bad combinations and numbers are refused by name" {
	run -2 --separate-stderr sc-parse --each .card </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --each needs at least one -f to say what to extract per item"
	run -2 --separate-stderr sc-parse -f t=h1 --require price </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --require: no field named 'price'"
	run -2 --separate-stderr sc-parse --require price </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --require: no field named 'price'"
	run -2 --separate-stderr sc-parse --explain h1 -f t=h1 </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --explain cannot be combined with -f, --each or --require"
	run -2 --separate-stderr sc-parse -j 0 </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --jobs: '0' is out of range (1..256)"
	run -2 --separate-stderr sc-parse --jobs many </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: --jobs: 'many' is not a whole number"
	run -2 --separate-stderr sc-parse -j 257 </dev/null
	run -2 --separate-stderr sc-parse pages.jsonl </dev/null
	assert_equal "${stderr_lines[0]}" "sc-parse: unexpected argument 'pages.jsonl' (sc-parse reads standard input)"
}

@test "a failed write to stdout is an error, with -j 1 and with threads" {
	rec '<title>t</title>' >r.jsonl
	run -1 --separate-stderr bash -c "sc-parse -j 1 <r.jsonl >/dev/full"
	[[ "$stderr" == *"sc-parse: error writing standard output: No space left on device"* ]] || fail "$stderr"
	for _ in $(seq 50); do cat r.jsonl; done >r50.jsonl
	run -1 --separate-stderr bash -c "sc-parse -j 3 <r50.jsonl >/dev/full"
	[[ "$stderr" == *"sc-parse: error writing standard output: No space left on device"* ]] || fail "$stderr"
}

# ---- malformed records ----

@test "malformed lines become bad_input records with a position; exit 3" {
	{ rec '<title>a</title>'; echo 'not json'; echo; echo '[1]'; rec '<title>b</title>'; } >in.jsonl
	run -3 --separate-stderr sc-parse -f t=title <in.jsonl
	assert_equal "${#lines[@]}" 4
	assert_equal "${stderr_lines[0]}" "sc-parse: <stdin>:2: not valid JSON: '[' or '{' expected near 'not'"
	assert_equal "${stderr_lines[1]}" "sc-parse: <stdin>:4: not a JSON object"
	assert_equal "$(jq -c '[.ok, .error.kind, .line, .t]' <<<"${lines[1]}")" '[false,"bad_input",2,null]'
	assert_equal "$(jq -c '[.ok, .t]' <<<"${lines[3]}")" '[true,"b"]'
}

@test "body_base64 that is not base64 is bad input; a body that is not a string too" {
	{
		echo '{"url":"http://x/","ok":true,"content_type":"text/html","body_base64":"!!!"}'
		echo '{"url":"http://x/","ok":true,"content_type":"text/html","body":42}'
	} >in.jsonl
	run -3 --separate-stderr sc-parse <in.jsonl
	assert_equal "${stderr_lines[0]}" "sc-parse: <stdin>:1: body_base64 is not base64"
	assert_equal "${stderr_lines[1]}" "sc-parse: <stdin>:2: body is not a string"
	assert_equal "$(jq -c '[.ok, .error.kind, .title, has("body_base64")]' <<<"${lines[0]}")" '[false,"bad_input",null,false]'
}

@test "links as people write them are made as sc-fetch requests them: UTF-8 percent-encoded, %20, IDN in punycode" {
	rec '<a href="/p?q=ツ&x=a b">1</a><a href="http://bücher.example/x y">2</a><a href="rel ツ">3</a><a href="/ok%41">4</a>' text/html 'http://ex.com/d/' >in.jsonl
	run -0 --separate-stderr sc-parse <in.jsonl
	assert_equal "$(jq -c .links <<<"$output")" '["http://ex.com/p?q=%E3%83%84&x=a%20b","http://xn--bcher-kva.example/x%20y","http://ex.com/d/rel%20%E3%83%84","http://ex.com/ok%41"]'
	SC_PARSE_TREE=1 run -0 --separate-stderr sc-parse <in.jsonl
	assert_equal "$(jq -c .links <<<"$output")" '["http://ex.com/p?q=%E3%83%84&x=a%20b","http://xn--bcher-kva.example/x%20y","http://ex.com/d/rel%20%E3%83%84","http://ex.com/ok%41"]'
}

@test "a hand-made record without ok is parsed; only ok: false skips parsing" {
	echo '{"url":"http://x/a/","body":"<title>Hand</title><a href=b>b</a>"}' >in.jsonl
	run -0 --separate-stderr sc-parse <in.jsonl
	assert_equal "$(jq -c '[.title, .links]' <<<"$output")" '["Hand",["http://x/a/b"]]'
	echo '{"url":"http://x/","body":"<p>no title</p>"}' >req.jsonl
	run -3 --separate-stderr sc-parse -f t=title --require t <req.jsonl
	assert_equal "$(jq -c '[.ok, .error.kind]' <<<"$output")" '[false,"validation"]'
}

@test "records that are not ok pass through, fields null, exit 0 (they are data)" {
	echo '{"url":"http://x/","ok":false,"status":404,"error":{"kind":"http","message":"HTTP 404"},"body":"<title>Not found</title>"}' >in.jsonl
	run -0 --separate-stderr sc-parse <in.jsonl
	assert_output '{"url":"http://x/","ok":false,"status":404,"error":{"kind":"http","message":"HTTP 404"},"title":null,"description":null,"canonical":null,"lang":null,"h1":null,"links":null}'
	run -0 --separate-stderr sc-parse -f t=title --require t <in.jsonl
	assert_equal "$(jq -c '[.ok, .error.kind, .t]' <<<"$output")" '[false,"http",null]'
}

@test "bodies that are not HTML stay unparsed: JSON, PNG labelled text/html, empty, none" {
	printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR<title>no</title>' >png.bin
	{
		rec '{"title": "json"}' application/json
		rec64 png.bin text/html
		rec ''
		rec '   '
		echo '{"url":"http://x/","ok":true,"status":204}'
		rec '<title>sniffed</title>' ''
		rec 'plain <title>text</title>' ''
	} >in.jsonl
	run -0 --separate-stderr sc-parse -f t=title <in.jsonl
	assert_equal "$(jq -c '.t' <<<"$output" | tr '\n' ' ')" 'null null null null null "sniffed" null '
	assert_equal "$(jq -c '.ok' <<<"$output" | sort -u)" "true"
}

@test "the body is dropped unless --keep-body" {
	rec '<title>t</title>' >in.jsonl
	run -0 sc-parse -f t=title <in.jsonl
	assert_equal "$(jq -c 'has("body")' <<<"$output")" false
	run -0 sc-parse -f t=title --keep-body <in.jsonl
	assert_equal "$(jq -r '.body' <<<"$output")" '<title>t</title>'
	rec64 <(printf '<title>t</title>') >in64.jsonl
	run -0 sc-parse --keep-body <in64.jsonl
	assert_equal "$(jq -r '.body_base64 | @base64d' <<<"$output")" '<title>t</title>'
}

@test "strings are written in the one form of sc-record(5): jansson's, upper-case \\u00XX" {
	# Every byte below 0x20, the quote, the backslash, '/', DEL and UTF-8,
	# in a body kept and in a value, and long enough for the fast paths.
	jq -nc '{url:"http://x/",ok:true,content_type:"text/html",
		body:("<title>" + ([range(1;32)] | implode) + "\"\\/\u007f\u00e9\u20ac\ud83d\ude00" + "</title>" + ("x" * 100))}' >in.jsonl
	run -0 sc-parse -f t=title --keep-body <in.jsonl
	local want='\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000B\f\r\u000E\u000F\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001A\u001B\u001C\u001D\u001E\u001F\"\\/'"$(printf '\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80')"
	assert_output --partial "\"body\":\"<title>$want</title>xxxx"
	# A value (the title's text, its controls dropped as white space) too.
	assert_output --partial "\"t\":\"\\\"\\\\/$(printf '\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80')\"}"
}

@test "one line's output records past 8 times the line limit become too_large; exit 3" {
	# 15 items, each with the ~800-byte body (--keep-body): past 8 x 1000.
	rec "<html><body>$(printf '<p>%d</p>' $(seq 15))$(printf 'x%.0s' $(seq 600))</body></html>" >in.jsonl
	rec '<p>one</p>' text/html http://y/ >>in.jsonl
	SC_MAX_LINE=1000 run -3 --separate-stderr sc-parse --each p -f t=p --keep-body <in.jsonl
	assert_equal "$stderr" "sc-parse: <stdin>:1: output records longer than 8000 bytes"
	assert_equal "${#lines[@]}" 16
	assert_equal "$(jq -c 'select(.ok) | .index' <<<"$output" | head -c 100 | tr '\n' ' ')" "0 1 2 3 4 5 6 7 8 0 "
	assert_equal "$(jq -c 'select(.ok == false)' <<<"$output" | sort -u)" \
		'{"url":"http://ex.com/dir/page.html?q=1","ok":false,"error":{"kind":"too_large","message":"output records longer than 8000 bytes"}}'
	# Within the limit, the same line is whole.
	SC_MAX_LINE=20000 run -0 sc-parse --each p -f t=p --keep-body <in.jsonl
	assert_equal "$(jq -c 'select(.ok) | .index' <<<"$output" | wc -l)" 16
}

# ---- the malformed-HTML corpus ----

# Writes corpus.jsonl: pages truncated at many points, unclosed tags,
# 10,000-deep nesting, invalid UTF-8, NUL bytes, a 1 MB attribute,
# unclosed comment/script/style, empty and non-HTML bodies.
make_corpus() {
	local page='<!DOCTYPE html><html lang=en><head><title>T</title><meta name=description content=d><link rel=canonical href=/c></head><body><h1>H <b>b</b></h1><div class="c x"><a href="/a#f">a</a><p>text &amp; <i>more</i></p><!-- c --><script>if (a<b) {}</script><table><tr><td>1<td>2</table></div></body></html>'
	local n
	for n in 1 2 5 9 17 33 40 63 77 90 100 120 150 177 200 230 260 290 310; do
		rec "${page:0:$n}"
	done
	rec '<div><p><span><a href=x>unclosed<table><tr><td>cell<li>item<select><option>o'
	rec "$(printf '<div>%.0s' $(seq 10000))deep$(printf '</div>%.0s' $(seq 10000))"
	rec "$(printf '<div><span>%.0s' $(seq 5000))deep and unclosed"
	printf '<title>bad \xff\xfe\xc3 utf8 \xed\xa0\x80</title><h1>\xc0\xaf\xe2\x82</h1><a href="/\xff">x</a>' >bad.bin
	rec64 bad.bin text/html
	rec64 bad.bin 'text/html; charset=utf-8'
	jq -nc '{url:"http://x/",ok:true,content_type:"text/html",body:"<title>nul\u0000byte</title>\u0000<h1>a\u0000b</h1><a href=\"/x\u0000y\">"}'
	printf '<title>nul\0byte</title>\0\0<h1>after nul</h1>' >nul.bin
	rec64 nul.bin
	head -c 1000000 /dev/zero | tr '\0' x >v.txt
	jq -nc --rawfile v v.txt '{url:"http://x/",ok:true,content_type:"text/html",body:("<title>big</title><a href=\"/" + $v + "\" title=\"" + $v + "\">big</a>")}'
	rec '<title>x</title><!-- never closed <h1>no</h1>'
	rec '<title>x</title><script>document.write("<h1>no</h1>") never closed'
	rec '<title>x</title><style>h1 {'
	rec '<title>x</title><textarea><h1>no'
	rec '<a href="&#0;&#xD800;&amp;&bogus;&#1114112;">ents &#0; &#xD800; &#1114112;</a><h1>&#x1F600;</h1>'
	rec '<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0//EN" "x.dtd"><html xmlns="http://www.w3.org/1999/xhtml"><title>xhtml</title><svg><title>s</title></svg></html>'
	rec '<<<>>><</ /><a <a href=1 href=2>x</a>< title>t</title><h1 <h1>>y</h1>'
	rec ''
	rec '{"a": [1, 2]}' application/json
	rec '{"a": [1, 2]}' text/html
	printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01' >png.bin
	rec64 png.bin text/html
	head -c 5000 /dev/urandom >random.bin
	rec64 random.bin text/html
}

@test "malformed corpus: nothing crashes, one valid record each, values valid UTF-8" {
	make_corpus >corpus.jsonl
	total=$(wc -l <corpus.jsonl)
	for j in 1 3; do
		run -0 --separate-stderr sc-parse -j "$j" -f 't=title' -f 'h=h1' -f 'a[]=a::attr(href)' -f 'html=h1::html' <corpus.jsonl
		assert_equal "${#lines[@]}" "$total"
		# jq refuses invalid UTF-8 and invalid JSON alike.
		jq -c . <<<"$output" >/dev/null || fail "invalid JSON out"
		iconv -f UTF-8 -t UTF-8 <<<"$output" >/dev/null || fail "invalid UTF-8 out"
	done
	run -0 sc-parse <corpus.jsonl
	assert_equal "${#lines[@]}" "$total"
	assert_equal "$(jq -r 'select(.title == "T" and .h1 != null) | .h1' <<<"$output" | sort -u)" "H b"
	assert_equal "$(jq -c 'select(.title == "nul byte") | .h1' <<<"$output" | tr '\n' ' ')" '"a b" "after nul" '
	assert_equal "$(jq -c 'select(.title == "big") | .links[0] | length' <<<"$output")" 1000009
}

@test "malformed corpus: 10,000-deep nesting through selectors, --each and ::html" {
	rec "$(printf '<div>%.0s' $(seq 10000))deep$(printf '</div>%.0s' $(seq 10000))" >deep.jsonl
	run -0 sc-parse -f 'n=xpath:count(//div)' -f 'last=xpath:(//div)[last()]' -f 'html=body::html' -f 'text=body' <deep.jsonl
	assert_equal "$(jq -c '[.n, .last, (.html | length), .text]' <<<"$output")" '["10000","deep",110017,"deep"]'
	run -0 sc-parse --each 'body > div' -f 'text=div' <deep.jsonl
	assert_equal "$(jq -c '[.index, .text]' <<<"$output")" '[0,"deep"]'
}

@test "malformed corpus under valgrind: no invalid access, no leak (-j 1 and -j 2)" {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	[[ "${SANITIZE-}" != 1 && "$SC_BIN" != */asan/* ]] || skip "an ASan build does not run under valgrind"
	# Without the 1 MB attribute and the 10,000-deep pages, slow under
	# valgrind (ASan runs them: make asan).
	make_corpus | grep -v -e 'xxxxxxxxxx' -e '<div><div><div><div>' -e '<div><span><div><span>' >corpus.jsonl
	total=$(wc -l <corpus.jsonl)
	run -0 --separate-stderr memcheck "$SC_BIN/sc-parse" -j 1 <corpus.jsonl
	assert_equal "${#lines[@]}" "$total"
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
	run -0 --separate-stderr memcheck "$SC_BIN/sc-parse" -j 2 -f 't=title' -f 'a[]=a::attr(href)' \
		-f 'h=h1::html' -f 'x=xpath:count(//*)' --each 'xpath:/html | //div' <corpus.jsonl
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
	run -2 --separate-stderr memcheck "$SC_BIN/sc-parse" -f 'x=div > [a~=' </dev/null
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
}

@test "a 50 MB page parses (not under valgrind)" {
	para='<p class=t>Lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit, sed do eiusmod tempor <a href="/x">incididunt</a> ut labore.</p>'
	{
		printf '<html><head><title>Fifty</title></head><body><h1>Big</h1>'
		yes "$para" | head -n 400000
		printf '</body></html>'
	} >big.html
	[ "$(stat -c %s big.html)" -gt 50000000 ]
	jq -nc --rawfile b big.html '{url:"http://x/",ok:true,content_type:"text/html",body:$b}' >big.jsonl
	run -0 --separate-stderr sc-parse -f 't=title' -f 'n=xpath:count(//p)' -f 'last=p:last-child' <big.jsonl
	assert_equal "$(jq -c '[.t, .n, .last]' <<<"$output")" '["Fifty","400000","Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore."]'
}

# ---- charsets ----

@test "charsets declared by the header only: ISO-8859-1, Windows-1252, Shift_JIS" {
	printf '<html><head><title>caf\xe9 \x80uro \x93q\x94</title></head></html>' >w.html
	printf '<html><head><title>\x93\xfa\x96\x7b\x8c\xea</title></head></html>' >sj.html
	{
		rec64 w.html 'text/html; charset=ISO-8859-1'
		rec64 w.html 'text/html;charset="windows-1252"'
		rec64 sj.html 'text/html; charset=Shift_JIS'
	} >in.jsonl
	run -0 sc-parse -f t=title <in.jsonl
	assert_equal "$(jq -r .t <<<"$output")" "$(printf 'café €uro “q”\ncafé €uro “q”\n日本語')"
}

@test "charsets declared by <meta> only: charset and http-equiv" {
	printf '<html><head><meta charset="iso-8859-1"><title>caf\xe9</title></head></html>' >l1.html
	printf '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><title>\x80 \x93q\x94</title></head></html>' >w.html
	printf '<html><head><meta charset=Shift_JIS><title>\x93\xfa\x96\x7b\x8c\xea</title></head></html>' >sj.html
	printf '<html><head><META HTTP-EQUIV=content-type CONTENT="text/html; charset=shift_jis"><title>\x93\xfa\x96\x7b</title></head></html>' >sj2.html
	{ rec64 l1.html; rec64 w.html; rec64 sj.html; rec64 sj2.html; } >in.jsonl
	run -0 sc-parse -f t=title <in.jsonl
	assert_equal "$(jq -r .t <<<"$output")" "$(printf 'café\n€ “q”\n日本語\n日本')"
}

@test "charsets: the header wins over <meta>; BOM wins over both; undeclared bytes" {
	printf '<meta charset="shift_jis"><title>caf\xe9</title>' >l1.html
	printf '\xef\xbb\xbf<meta charset="iso-8859-1"><title>caf\xc3\xa9</title>' >bom.html
	printf '<title>caf\xc3\xa9</title>' >u8.html
	printf '<title>caf\xe9</title>' >latin.html
	{ rec64 l1.html 'text/html; charset=latin1'; rec64 bom.html; rec64 u8.html; rec64 latin.html; } >in.jsonl
	run -0 sc-parse -f t=title <in.jsonl
	assert_equal "$(jq -r .t <<<"$output")" "$(printf 'café\ncafé\ncafé\ncafé')"
}

@test "a body string is UTF-8 already: a <meta> declaring another charset is ignored" {
	rec '<meta charset="iso-8859-1"><title>café ☕</title>' 'text/html; charset=iso-8859-1' >in.jsonl
	run -0 sc-parse -f t=title <in.jsonl
	assert_equal "$(jq -r .t <<<"$output")" "café ☕"
}

# ---- default fields ----

@test "default fields: title, description, canonical, lang, h1, links" {
	rec '<html lang=" en-GB "><head><title>
	  Hello
	  World </title><meta name="Description" content=" A  page "><link rel="alternate canonical" href="/canon"></head>
	<body><h1>Big <b>T</b><script>no()</script></h1><h1>second</h1>
	<a href="a.html#x">1</a><a href="a.html#y">2</a><a href="#top">3</a><a href="mailto:x@y">4</a>
	<a href="javascript:void(0)">5</a><a href="//cdn.ex.com/z">6</a><a href=" ../up?a=1 ">7</a><a>8</a>
	<a href="https://other.org/Q?x#f">9</a><a href="">10</a><script>var s = "<a href=/no>"</script></body></html>' >in.jsonl
	run -0 sc-parse <in.jsonl
	assert_equal "$(jq -c 'del(.links)' <<<"$output")" '{"url":"http://ex.com/dir/page.html?q=1","ok":true,"status":200,"content_type":"text/html","title":"Hello World","description":"A page","canonical":"http://ex.com/canon","lang":"en-GB","h1":"Big T"}'
	assert_equal "$(jq -c .links <<<"$output")" '["http://ex.com/dir/a.html","http://ex.com/dir/page.html?q=1","http://cdn.ex.com/z","http://ex.com/up?a=1","https://other.org/Q?x"]'
}

@test "base URL: final_url over url, and <base href> over both" {
	body='<a href="p">x</a>'
	jq -nc --arg b "$body" '{url:"http://a.com/1/", final_url:"http://b.com/2/", ok:true, content_type:"text/html", body:$b}' >in.jsonl
	jq -nc --arg b "<base href=\"/base/\">$body" '{url:"http://a.com/1/", final_url:"http://b.com/2/", ok:true, content_type:"text/html", body:$b}' >>in.jsonl
	jq -nc --arg b "<head><base href=\"https://c.com/x/\"></head>$body<img src=i.png>" '{url:"http://a.com/1/", ok:true, content_type:"text/html", body:$b}' >>in.jsonl
	run -0 sc-parse -f 'l=a::attr(href)' -f 'i=img::attr(src)' <in.jsonl
	assert_equal "$(jq -c '[.l, .i]' <<<"$output" | tr '\n' ' ')" '["http://b.com/2/p",null] ["http://b.com/base/p",null] ["https://c.com/x/p","https://c.com/x/i.png"] '
}

# ---- CSS, compiled ----

@test "--explain: each CSS construct compiles to the expected XPath" {
	check() {
		run -0 --separate-stderr sc-parse --explain "$1"
		assert_equal "$output" "$2"
	}
	check 'h1' 'descendant-or-self::h1'
	check 'DIV' 'descendant-or-self::div'
	check '*' 'descendant-or-self::*'
	check '#main' "descendant-or-self::*[@id = 'main']"
	check '.card' "descendant-or-self::*[contains(concat(' ', normalize-space(@class), ' '), ' card ')]"
	check 'a[href]' 'descendant-or-self::a[@href]'
	check 'a[rel="nofollow"]' "descendant-or-self::a[@rel = 'nofollow']"
	check 'a[rel~=next]' "descendant-or-self::a[@rel and contains(concat(' ', normalize-space(@rel), ' '), ' next ')]"
	check '[lang|=en]' "descendant-or-self::*[@lang = 'en' or starts-with(@lang, 'en-')]"
	check 'a[href^="https:"]' "descendant-or-self::a[starts-with(@href, 'https:')]"
	check 'img[src$=".png"]' "descendant-or-self::img[substring(@src, string-length(@src) - 3) = '.png']"
	check 'a[href*=shop]' "descendant-or-self::a[contains(@href, 'shop')]"
	check 'a[href^=""]' 'descendant-or-self::a[false()]'
	check "[title='it\"s']" "descendant-or-self::*[@title = 'it\"s']"
	check 'div p' 'descendant-or-self::div/descendant::p'
	check 'ul > li' 'descendant-or-self::ul/li'
	check 'h2 + p' 'descendant-or-self::h2/following-sibling::*[1]/self::p'
	check 'h2 ~ p' 'descendant-or-self::h2/following-sibling::p'
	check 'h1, h2' 'descendant-or-self::h1 | descendant-or-self::h2'
	check 'li:first-child' 'descendant-or-self::li[not(preceding-sibling::*[1])]'
	check 'div:empty' 'descendant-or-self::div[not(*) and not(text())]'
	check 'li:last-child' 'descendant-or-self::li[not(following-sibling::*[1])]'
	check 'li:nth-child(3)' 'descendant-or-self::li[(count(preceding-sibling::*) + 1) = 3]'
	check 'li:nth-child(2n+1)' 'descendant-or-self::li[((count(preceding-sibling::*) + 1) - 1) mod 2 = 0]'
	check 'li:nth-child(even)' 'descendant-or-self::li[((count(preceding-sibling::*) + 1) - 0) mod 2 = 0]'
	check 'li:nth-child(-n+2)' 'descendant-or-self::li[(count(preceding-sibling::*) + 1) <= 2]'
	check 'li:not(.x)' "descendant-or-self::li[not(self::*[contains(concat(' ', normalize-space(@class), ' '), ' x ')])]"
	check 'a::attr(href)' 'descendant-or-self::a/@href'
	check 'p::text' 'descendant-or-self::p/text()'
	check 'p::html' 'descendant-or-self::p'
	check 'xpath://a[@id]/@href' '//a[@id]/@href'
	# An escaped type name that is no XPath name test is compared as a string.
	check '\31 23' "descendant-or-self::*[local-name() = '123']"
	check '\31 23:not(\31 23)' "descendant-or-self::*[local-name() = '123'][not(self::*[local-name() = '123'])]"
}

# ---- CSS, on a document ----

doc() {
	rec '<html><body>
	<div id="main" class="page  wide">
	  <h2 lang="en-US" title="it&apos;s">Heading</h2>
	  <p class="intro first">Intro <b>bold</b> text</p>
	  <p class="x">Second</p>
	  <ul><li>one</li><li class="x">two</li><li>three</li><li>four</li><li>five</li></ul>
	  <a href="/a" rel="next nofollow">A</a><a href="https://shop.ex/b.png" rel="prev">B</a>
	  <img src="i.png"> <span>after img</span> <em>em</em>
	</div></body></html>'
}

# sel SELECTOR: every match's value, one per line.
sel() {
	doc | sc-parse -f "v[]=$1" | jq -r '.v[]'
}

@test "CSS on a document: type, universal, #id, .class" {
	assert_equal "$(sel 'h2')" "Heading"
	assert_equal "$(sel '#main > *' | wc -l)" 9
	assert_equal "$(sel '#main h2')" "Heading"
	assert_equal "$(sel '.wide > .x')" "Second"
	assert_equal "$(sel 'p.intro.first')" "Intro bold text"
	assert_equal "$(sel '.nope')" ""
}

@test "CSS on a document: attribute selectors [a] = ~= |= ^= \$= *=" {
	assert_equal "$(sel '[lang]')" "Heading"
	assert_equal "$(sel '[rel="prev"]')" "B"
	assert_equal "$(sel '[rel~=nofollow]')" "A"
	assert_equal "$(sel '[rel~=nof]')" ""
	assert_equal "$(sel '[lang|=en]')" "Heading"
	assert_equal "$(sel '[lang|=e]')" ""
	assert_equal "$(sel 'a[href^=https]')" "B"
	assert_equal "$(sel 'a[href$=".png"]')" "B"
	assert_equal "$(sel 'a[href*=shop]')" "B"
	assert_equal "$(sel "[title=\"it's\"]")" "Heading"
}

@test "CSS on a document: combinators, groups, pseudo-classes" {
	assert_equal "$(sel 'div p')" "$(printf 'Intro bold text\nSecond')"
	assert_equal "$(sel 'body > p')" ""
	assert_equal "$(sel 'h2 + p')" "Intro bold text"
	assert_equal "$(sel 'h2 + ul')" ""
	assert_equal "$(sel 'img ~ em')" "em"
	assert_equal "$(sel 'em, h2')" "$(printf 'Heading\nem')" # document order
	assert_equal "$(sel 'li:first-child')" "one"
	assert_equal "$(sel 'li:last-child')" "five"
	assert_equal "$(sel 'li:nth-child(2n+1)' | tr '\n' ' ')" "one three five "
	assert_equal "$(sel 'li:nth-child(even)' | tr '\n' ' ')" "two four "
	assert_equal "$(sel 'li:nth-child(-n+2)' | tr '\n' ' ')" "one two "
	assert_equal "$(sel 'li:nth-child(3n+2)' | tr '\n' ' ')" "two five "
	assert_equal "$(sel 'li:nth-child(4)')" "four"
	assert_equal "$(sel 'li:not(.x):not(:first-child)' | tr '\n' ' ')" "three four five "
	assert_equal "$(sel 'ul :nth-last-child(1)')" "five"
	# :empty: the img alone has neither a child nor text.
	run -0 bash -c "$(declare -f rec doc); doc | sc-parse -f 'n=xpath:count(//*[@id=\"main\"]//*)' -f 'e[]=:empty::html'"
	assert_equal "$(jq -c '.e' <<<"$output")" '["<img src=\"i.png\">"]'
}

@test "values: text, ::text, ::attr (absolute for URLs), ::html, NAME[] and single" {
	run -0 bash -c "$(declare -f rec doc); doc | sc-parse -f 'p=p' -f 'ptext[]=p.intro::text' -f 'href=a::attr(href)' \
		-f 'rel=a::attr(rel)' -f 'src=img::attr(src)' -f 'html=p.intro::html' -f 'none=table' -f 'all[]=li' \
		-f 'nothing[]=table' -f 'n=xpath:count(//li)' -f 'x=xpath://li[2]/@class' -f 'lang=h2::attr(LANG)'"
	assert_equal "$(jq -c 'del(.url, .ok, .status, .content_type)' <<<"$output")" \
		'{"p":"Intro bold text","ptext":["Intro "," text"],"href":"http://ex.com/a","rel":"next nofollow","src":"http://ex.com/dir/i.png","html":"<p class=\"intro first\">Intro <b>bold</b> text</p>","none":null,"all":["one","two","three","four","five"],"nothing":[],"n":"5","x":"x","lang":"en-US"}'
}

# ---- --each and --require ----

@test "--each: one record per match with index; fields relative to it" {
	rec '<div class=card><h2>P1</h2><span class=price>$1</span><a href=/p/1>x</a></div>
	     <div class=card><h2>P2</h2><a href=/p/2>y</a></div><h2>outside</h2>' >in.jsonl
	rec '<p>no cards</p>' >>in.jsonl
	echo '{"url":"http://x/","ok":false,"status":500,"error":{"kind":"http","message":"HTTP 500"}}' >>in.jsonl
	run -0 sc-parse --each .card -f name=h2 -f 'price=.price' -f 'link=a::attr(href)' -f 'rel=xpath:.//h2' <in.jsonl
	assert_equal "${#lines[@]}" 4
	assert_equal "$(jq -c '[.url, .index, .name, .price, .link, .rel]' <<<"$output" | tr '\n' ' ')" \
		'["http://ex.com/dir/page.html?q=1",0,"P1","$1","http://ex.com/p/1","P1"] ["http://ex.com/dir/page.html?q=1",1,"P2",null,"http://ex.com/p/2","P2"] ["http://ex.com/dir/page.html?q=1",null,null,null,null,null] ["http://x/",null,null,null,null,null] '
}

@test "--require: missing fields make validation errors (exit 3); failed input stays as is" {
	rec '<div class=card><h2>P1</h2><span class=price>$1</span></div><div class=card><h2>P2</h2><span class=price> </span></div>' >in.jsonl
	run -3 --separate-stderr sc-parse --each .card -f name=h2 -f price=.price --require price <in.jsonl
	assert_equal "$(jq -c '[.ok, .error]' <<<"$output" | tr '\n' ' ')" '[true,null] [false,{"kind":"validation","message":"required field '"'price'"' is empty"}] '
	rec '<h1>x</h1>' >in2.jsonl
	run -3 sc-parse --require title <in2.jsonl
	assert_equal "$(jq -c '.error' <<<"$output")" '{"kind":"validation","message":"required field '"'title'"' is null"}'
	run -3 sc-parse -f 'l[]=a' --require l <in2.jsonl
	run -0 sc-parse --require h1 <in2.jsonl
}

# ---- count contract and order ----

@test "count contract and input order under -j, with --each items kept together" {
	# Page sizes vary so that workers finish out of order; every 37th
	# line is garbage, every 11th record failed upstream.
	jq -nc '
		range(1; 301) as $i
		| if $i % 37 == 0 then "garbage \($i)"
		  elif $i % 11 == 0 then {url: "http://x/\($i)", ok: false, status: 503}
		  else {url: "http://x/\($i)", ok: true, status: 200, content_type: "text/html",
		        body: ("<title>\($i)</title><ul><li>\($i).a</li><li>\($i).b</li></ul>" + (" " * (($i * 7919) % 60000)))}
		  end
		| if type == "string" then . else tojson end' -r >in.jsonl
	for j in 1 2 4 8; do
		run -3 --separate-stderr sc-parse -j "$j" -f t=title <in.jsonl
		assert_equal "${#lines[@]}" 300
		assert_equal "$(jq -r '.url // "bad"' <<<"$output" | grep -c . )" 300
		assert_equal "$(jq -r 'select(.url) | .url | ltrimstr("http://x/")' <<<"$output" | sort -n -c && echo sorted)" sorted
		assert_equal "$(jq -r 'select(.t) | "\(.url) \(.t)"' <<<"$output" | awk '{ sub("http://x/", "", $1); if ($1 != $2) print }')" ""
		assert_equal "${#stderr_lines[@]}" 8
	done
	run -3 --separate-stderr sc-parse -j 4 --each li -f v=li <in.jsonl
	assert_equal "$(jq -r 'select(.v) | .v' <<<"$output" | head -4 | tr '\n' ' ')" "1.a 1.b 2.a 2.b "
	assert_equal "${#lines[@]}" $((300 + 300 - 8 - 27))
}

@test "malformed corpus: default fields gathered while parsing equal those read from the tree" {
	make_corpus >corpus.jsonl
	for j in 1 2; do
		run -0 --separate-stderr sc-parse -j "$j" <corpus.jsonl
		scanned=$output
		SC_PARSE_TREE=1 run -0 --separate-stderr sc-parse -j "$j" <corpus.jsonl
		[ "$output" = "$scanned" ] || fail "$(diff <(echo "$output") <(echo "$scanned") | head -20)"
	done
	# Both read the same values (not merely both null).
	assert_equal "$(jq -c 'select(.h1 == "H b" and .canonical != null and .links != []) | [.title, .lang, .description, .canonical, .links]' <<<"$output" | sort -u)" \
		'["T","en","d","http://ex.com/c",["http://ex.com/a"]]'
}

# ---- sitemaps ----

# A sitemap with what a real one holds: a declaration, a stylesheet, a
# comment, an image extension, entities and CDATA, and <loc>s to drop.
write_sitemap() {
	cat <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>
<!-- generated -->
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc>
     https://ex.com/a
  </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc>https://ex.com/b?x=1&amp;y=2</loc>
    <image:image><image:loc>https://ex.com/picture.png</image:loc></image:image></url>
  <url><loc>/relative</loc></url>
  <url><loc>ftp://ex.com/f</loc></url>
  <url><loc>https://ex.com/a</loc></url>
  <url><loc><![CDATA[HTTP://ex.com/c]]></loc></url>
  <url><loc>http://</loc></url>
</urlset>
XML
}

@test "sitemap: <loc> URLs into links (absolute http/https, trimmed, deduplicated, in order), other fields null" {
	write_sitemap >sm.xml
	want='["https://ex.com/a","https://ex.com/b?x=1&y=2","HTTP://ex.com/c"]'
	# Whatever the content type says, or none.
	for ct in application/xml text/xml text/plain text/html ""; do
		run -0 --separate-stderr sc-parse < <(rec "$(cat sm.xml)" "$ct" https://ex.com/sitemap.xml)
		assert_equal "$(jq -c .links <<<"$output")" "$want"
		assert_equal "$(jq -c '[.sitemap, .title, .h1, .canonical, has("body")]' <<<"$output")" '["urlset",null,null,null,false]'
		[ -z "$stderr" ]
	done
	# From body_base64 too, with --keep-body, -f and --each.
	run -0 sc-parse --keep-body -f t=title --each li < <(rec64 sm.xml application/xml)
	assert_equal "$(jq -c '[.links, .sitemap, .t, .index, (.body_base64 | @base64d | startswith("<?xml"))]' <<<"$output")" \
		"[$want,\"urlset\",null,null,true]"
	# --require sees the links.
	run -0 sc-parse --require links < <(rec "$(cat sm.xml)" application/xml)
	assert_equal "$(jq -c .ok <<<"$output")" true
}

@test "sitemap: a sitemap index gives its sitemaps' URLs" {
	rec '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://ex.com/s1.xml</loc><lastmod>2024</lastmod></sitemap><sitemap><loc>https://ex.com/s2.xml.gz</loc></sitemap></sitemapindex>' application/xml >in.jsonl
	run -0 sc-parse <in.jsonl
	assert_equal "$(jq -c '[.sitemap, .links]' <<<"$output")" '["sitemapindex",["https://ex.com/s1.xml","https://ex.com/s2.xml.gz"]]'
}

@test "sitemap: gzip-compressed (.xml.gz bytes in body_base64), also two gzip members" {
	write_sitemap | gzip -c >sm.xml.gz
	run -0 sc-parse < <(rec64 sm.xml.gz application/x-gzip)
	assert_equal "$(jq -c '[.sitemap, .links]' <<<"$output")" '["urlset",["https://ex.com/a","https://ex.com/b?x=1&y=2","HTTP://ex.com/c"]]'
	# A stream of two members is one document (gzip's own rule).
	{ printf '<urlset><url><loc>https://ex.com/1</loc></url>' | gzip -c
	  printf '<url><loc>https://ex.com/2</loc></url></urlset>' | gzip -c; } >two.gz
	run -0 sc-parse < <(rec64 two.gz "")
	assert_equal "$(jq -c .links <<<"$output")" '["https://ex.com/1","https://ex.com/2"]'
	# gzip that is not a sitemap is left alone: not HTML, fields null.
	printf '<html><title>x</title></html>' | gzip -c >page.gz
	run -0 sc-parse < <(rec64 page.gz application/gzip)
	assert_equal "$(jq -c '[.sitemap, .links, .title]' <<<"$output")" '[null,null,null]'
}

@test "sitemap: malformed ones give what the parser recovers; other XML and failed records are not sitemaps" {
	rec '<urlset><url><loc>https://ex.com/1</loc></url><url><loc>https://ex.com/2</loc></url><url><loc>https://ex.com/cut' application/xml >in.jsonl
	rec '<urlset><url><loc>https://ex.com/1</loc></url><url><loc>https://ex.com/2</oops></url><url><loc>https://ex.com/3</loc></url></urlset>' application/xml >>in.jsonl
	rec '<urlset></urlset>' application/xml >>in.jsonl
	rec '<rss><channel><link>https://ex.com/feed</link></channel></rss>' application/xml >>in.jsonl
	rec '<urlsetx><url><loc>https://ex.com/1</loc></url></urlsetx>' application/xml >>in.jsonl
	jq -nc '{url: "https://ex.com/s.xml", ok: false, status: 503, body: "<urlset><url><loc>https://ex.com/1</loc></url></urlset>"}' >>in.jsonl
	write_sitemap | gzip -c | head -c 200 >cut.gz
	rec64 cut.gz application/gzip >>in.jsonl
	run -0 --separate-stderr sc-parse <in.jsonl
	assert_equal "${#lines[@]}" 7
	assert_equal "$(jq -c '[.sitemap, .links]' <<<"$output" | tr '\n' ' ')" \
		'["urlset",["https://ex.com/1","https://ex.com/2"]] ["urlset",["https://ex.com/1","https://ex.com/2","https://ex.com/3"]] ["urlset",[]] [null,null] [null,null] [null,null] ["urlset",[]] '
	[ -z "$stderr" ]
}

@test "sitemap: 50,000 URLs (the sitemaps.org maximum) plain and gzip; a gzip bomb is cut at 50 MiB with a warning" {
	python3 -c '
import sys
sys.stdout.write("<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
for i in range(50000):
    sys.stdout.write("<url><loc>https://ex.com/page/%d</loc><lastmod>2024-01-01</lastmod></url>\n" % i)
sys.stdout.write("</urlset>\n")' >big.xml
	gzip -c big.xml >big.xml.gz
	for f in big.xml big.xml.gz; do
		run -0 --separate-stderr sc-parse < <(rec64 "$f" "")
		assert_equal "$(jq -c '[(.links | length), .links[0], .links[-1]]' <<<"$output")" \
			'[50000,"https://ex.com/page/0","https://ex.com/page/49999"]'
		[ -z "$stderr" ]
	done
	# 60 MiB of whitespace between two URLs, compressed to a few KiB.
	{ printf '<urlset><url><loc>https://ex.com/early</loc></url>'
	  head -c 62914560 /dev/zero | tr '\0' ' '
	  printf '<url><loc>https://ex.com/late</loc></url></urlset>'; } | gzip -c >bomb.gz
	run -0 --separate-stderr sc-parse < <(rec64 bomb.gz application/gzip)
	assert_equal "$(jq -c .links <<<"$output")" '["https://ex.com/early"]'
	assert_equal "$stderr" "sc-parse: <stdin>:1: sitemap larger than 50 MiB uncompressed; read its start"
}

@test "sitemap: entities are not expanded and nothing outside is read" {
	cat >xxe.xml <<'XML'
<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd"><!ENTITY a "aaaaaaaaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">]>
<urlset><url><loc>https://ex.com/&x;</loc></url><url><loc>https://ex.com/&e;&e;&e;&e;&e;&e;&e;&e;</loc></url></urlset>
XML
	run -0 sc-parse < <(rec "$(cat xxe.xml)" application/xml)
	assert_equal "$(jq -c .sitemap <<<"$output")" '"urlset"'
	refute_output --partial 'root:'
	refute_output --partial 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
}

@test "sitemap: under valgrind, plain, gzip and malformed" {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	[[ "${SANITIZE-}" != 1 && "$SC_BIN" != */asan/* ]] || skip "an ASan build does not run under valgrind"
	write_sitemap >sm.xml
	gzip -c sm.xml >sm.xml.gz
	{ rec "$(cat sm.xml)" application/xml; rec64 sm.xml.gz ""; rec '<urlset><url><loc>https://ex.com/cut' ""
	  head -c 100 sm.xml.gz >cut.gz; rec64 cut.gz ""
	  rec '<!DOCTYPE urlset [<!ENTITY a "x">]><urlset><url><loc>https://ex.com/&a;</loc></url></urlset>' ""; } >in.jsonl
	run -0 memcheck sc-parse -j 2 <in.jsonl
	assert_equal "${#lines[@]}" 5
}

@test "--forms: a record per form as sc-fetch sends it: action, method, enctype, the fields a browser submits; a page without one gives one record" {
	page='<html><head><base href="http://ex.com/dir/"></head><body>
<form action="login" method="post">
 <input type="hidden" name="csrf" value="tok1"><input name="user"><input type="password" name="pass">
 <input type="checkbox" name="remember" checked><input type="checkbox" name="news" value="yes">
 <input type="radio" name="plan" value="a"><input type="radio" name="plan" value="b" checked>
 <select name="lang"><option value="en">English</option><option selected>Deutsch</option></select>
 <select name="tz"><optgroup label="x"><option>UTC</option></optgroup></select>
 <select name="multi" multiple><option selected>1</option><option>2</option><option selected>3</option></select>
 <textarea name="bio">two
lines</textarea>
 <input name="off" value="x" disabled><input type="file" name="cv"><input type="reset" name="r">
 <input name="tag" value="t1"><input name="tag" value="t2">
 <button name="go" value="in">Log in</button><input type="submit" name="other" value="no">
</form>
<form><input name="q" value="search"></form>
<form action="/up" method="POST" enctype="multipart/form-data"><input name="n"></form>
</body></html>'
	run -0 bash -c "$(declare -f rec); rec \"\$1\" | sc-parse --forms" _ "$page"
	assert_equal "${#lines[@]}" 3
	assert_equal "${lines[0]}" '{"url":"http://ex.com/dir/login","request":{"method":"POST"},"enctype":"application/x-www-form-urlencoded","form":{"csrf":"tok1","user":"","pass":"","remember":"on","plan":"b","lang":"Deutsch","tz":"UTC","multi":["1","3"],"bio":"two\nlines","tag":["t1","t2"],"go":"in"},"page":"http://ex.com/dir/page.html?q=1","form_index":0}'
	# No action: the page itself, with GET (HTML's defaults).
	assert_equal "$(jq -c '[.url, .request.method, .form, .enctype]' <<<"${lines[1]}")" '["http://ex.com/dir/page.html?q=1","GET",{"q":"search"},null]'
	assert_equal "$(jq -c '[.url, .enctype, .form_index]' <<<"${lines[2]}")" '["http://ex.com/up","multipart/form-data",2]'
	# A page without a form still gives its record.
	run -0 bash -c "$(declare -f rec); rec '<p>none</p>' | sc-parse --forms"
	assert_equal "$(jq -c '[.url, .form, .form_index, has("body")]' <<<"$output")" '["http://ex.com/dir/page.html?q=1",null,null,false]'
	run -2 --separate-stderr sc-parse --forms -f 'x=p' </dev/null
	[[ $stderr == *"--forms cannot be combined with -f, --each, --require, --keep-body, --structured, --main, --markdown or --simhash"* ]]
}
