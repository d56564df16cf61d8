#!/usr/bin/env bats
# Regressions for what `make fuzz` found (issue 14).  Each test names the
# target and the seed file (test/fuzz/seeds-NAME/crash-*) that first showed
# the fault; the seed keeps the fuzzer itself checking it too.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
}

# fuzz-css, seeds-css/crash-not-utf8-type: a type selector with a byte that
# is not UTF-8 compiled to XPath libxml2 refuses ("cannot compile XPath",
# exit 1 from a worker), instead of a usage error with its column.
@test "css: a selector that is not UTF-8 is a usage error at its column" {
	run -2 --separate-stderr sc-parse --explain $'ab\xff[href]'
	assert_equal "${stderr_lines[0]}" "sc-parse: --explain: invalid selector at column 3: not valid UTF-8"
	run -2 --separate-stderr sc-parse -f $'t=p[title="\xc3"]' </dev/null
	assert_output ""
}

# fuzz-css, seeds-css/crash-control-escape: an escape for a character XML
# cannot hold (\1, \0) made a literal libxml2 refuses, or cut the XPath at
# a NUL; CSS Syntax makes them U+FFFD.
@test "css: an escape for NUL or a control character becomes U+FFFD" {
	run -0 sc-parse --explain '\1 23'
	assert_output "descendant-or-self::*[local-name() = '�23']"
	run -0 sc-parse --explain '[title="a\0 b"]'
	assert_output "descendant-or-self::*[@title = 'a�b']"
	run -0 sc-parse --explain '\D800 x'
	assert_output "descendant-or-self::*[local-name() = '�x']"
	# seeds-css/crash-escaped-form-feed: an escaped form feed, too.
	run -0 sc-parse --explain $'\\\fh'
	assert_output "descendant-or-self::*[local-name() = '�h']"
	# seeds-css/crash-form-feed-in-string: and a raw one inside a string.
	run -0 sc-parse --explain $'[title="a\fb"]'
	assert_output "descendant-or-self::*[@title = 'a�b']"
	run -2 --separate-stderr sc-parse --explain $'p\x01'
	assert_equal "${stderr_lines[0]}" "sc-parse: --explain: invalid selector at column 2: a control character"
}

# fuzz-css: a non-ASCII character that is no XML name character (U+00D7)
# as a type name is compared as a string, as an escaped name is.
@test "css: a type name libxml2 cannot take as a name test is compared as a string" {
	run -0 sc-parse --explain 'a×b'
	assert_output "descendant-or-self::*[local-name() = 'a×b']"
	run -0 sc-parse --explain 'é'
	assert_output "descendant-or-self::é"
}

# fuzz-css, seeds-css/crash-attribute-name-dash: an attribute name CSS
# allows and XPath does not (-ref) made "@-ref", which libxml2 refuses.
@test "css: an attribute name that is no XPath name is compared as a string" {
	run -0 sc-parse --explain 'a[-ref*=o]'
	assert_output "descendant-or-self::a[contains(@*[local-name() = '-ref'], 'o')]"
	run -0 sc-parse --explain 'a::attr(-x)'
	assert_output "descendant-or-self::a/@*[local-name() = '-x']"
	# It runs (libxml2's HTML parser drops such attributes: nothing matches).
	jq -nc '{url: "http://ex.com/", ok: true, content_type: "text/html", body: "<a -ref=foo>A</a><a ref=o>B</a>"}' |
		sc-parse -f 'v[]=a[-ref*=o]' -f 'w=a::attr(-ref)' -f 'r=a::attr(ref)' >out
	assert_equal "$(jq -c '[.v, .w, .r]' out)" '[[],null,"o"]'
}

# fuzz-record, seeds-record/crash-message-cut-utf8: jansson's reason quotes
# the line ("near '\u<first byte of a UTF-8 sequence>"), json_pack refused
# the message as not UTF-8, and the bad_input record had no "error" at all.
@test "record: a bad_input record keeps its error when the reason quotes cut UTF-8" {
	printf '{"url":"\\u\xe2\x82\xac0000"}\n' >in
	run -3 --separate-stderr sc-parse <in
	run jq -r '.error.kind + " " + (.error.message | startswith("not valid JSON: invalid escape") | tostring)' <<<"$output"
	assert_output "bad_input true"
	run -3 sc-sink --jsonl out.jsonl <in
	assert_equal "$(jq -r .error.kind out.jsonl)" "bad_input"
}

# fuzz-lines, seeds-lines/crash-long-line-in-one-read: a line over the
# maximum was flagged only when it arrived in pieces; one that came in a
# single read was taken whole (so the result depended on pipe timing).
@test "lines: a line over SC_MAX_LINE is too long however it arrives" {
	line=$(printf '{"url":"http://x/%0150d"}' 0)
	printf '%s\n{"url":"http://y/"}\n' "$line" >in
	SC_MAX_LINE=100 run -3 --separate-stderr sc-parse <in
	assert_equal "${#lines[@]}" 2
	assert_equal "$(jq -r '.error.message' <<<"${lines[0]}")" "line longer than 100 bytes"
	assert_equal "$(jq -r '.raw | length' <<<"${lines[0]}")" 100
	assert_equal "$(jq -r '.url' <<<"${lines[1]}")" "http://y/"
	# The same line through a pipe, a byte at a time, gives the same record.
	SC_MAX_LINE=100 run -3 --separate-stderr sh -c 'while IFS= read -r l; do printf "%s\n" "$l"; done <in | sc-parse'
	assert_equal "$(jq -r '.error.message' <<<"${lines[0]}")" "line longer than 100 bytes"
}

# fuzz-html, seeds-html/crash-prefixed-meta: libxml2's tree names
# <x:meta> meta (it splits element names as QNames, HTML too) while the SAX
# path saw "x:meta": the description differed with SC_PARSE_TREE=1.
@test "html: a prefixed element name is read alike by the SAX path and the tree" {
	jq -nc '{url: "http://ex.com/", ok: true, content_type: "text/html",
		body: "<x:title>T</x:title><rhop:meta name=description content=D><y:h1>H</y:h1>"}' >in
	run -0 sc-parse <in
	sax=$output
	SC_PARSE_TREE=1 run -0 sc-parse <in
	assert_equal "$sax" "$output"
	assert_equal "$(jq -r '[.title, .description, .h1] | join(" ")' <<<"$sax")" "T D H"
}
