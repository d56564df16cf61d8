#!/usr/bin/env bats
# sc-render --warc and --from-warc: every exchange a page made archived as
# sc-fetch archives its own (request, response and metadata records, read
# back by sc-warc check and by warcio, an independent reader), the
# rendered DOM and the screenshot beside them; and pages rendered again
# from archives with no request to any server.  Pages of test/render/site
# and the server's /gzip and /redirect-to; loopback only.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0
load 'lib/server'
load 'lib/render'
load 'lib/warc'

RECORDS="$BATS_TEST_DIRNAME/lib/warc-records.mjs"

setup_file() {
	sc_render_setup_file
}

teardown_file() {
	sc_server_stop
}

setup() {
	warc_readers_present
	sc_render_setup
}

# The pages: a fetch() of JSON, an iframe, a script's navigation, a
# redirect, a gzipped page and a client-side route.
pages() {
	printf '%s\n' "$SC_BASE/fetch-json.html" "$SC_BASE/iframe.html" "$SC_BASE/navigate.html" \
		"$SC_BASE/redirect-to?url=/static.html&status=301" "$SC_BASE/gzip" \
		"$SC_BASE/router.html?view=about"
}

@test "--warc: every exchange as sc-fetch writes it, the DOM and the screenshot beside; --from-warc renders the capture again, nothing missing, the same DOM, no request" {
	mkdir shots
	pages >urls
	run -0 --separate-stderr sc-render -c 2 --wait stable:400 --screenshot shots \
		--warc cap.warc.gz --warc-cdx <urls
	printf '%s\n' "$output" >cap.jsonl
	assert_equal "$(jq -s 'map(select(.ok)) | length' cap.jsonl)" 6
	# Read by sc-warc check and warcio; its CDXJ is warcio's, sorted;
	# every digest recomputed by node.
	warc_checked cap.warc.gz >warcio.sorted
	diff -u warcio.sorted cap.cdxj || fail "cap.cdxj is not warcio's CDXJ, sorted"
	run -0 node "$DIGESTS" cap.warc.gz
	assert_output --regexp ', 0 bad$'
	node "$RECORDS" cap.warc.gz >recs.jsonl
	# Every request the server saw is a request record, and no other.
	sc_server_log '.[] | .path' | jq -r --arg b "$SC_BASE" '$b + .' | LC_ALL=C sort >served
	jq -r 'select(.type == "request") | .uri' recs.jsonl | LC_ALL=C sort >requested
	diff -u served requested || fail "the archive's requests are not the server's"
	grep -qx "$SC_BASE/data/items.json" requested || fail "the fetch() is not archived"
	grep -qx "$SC_BASE/iframe-inner.html" requested || fail "the iframe is not archived"
	grep -qx "$SC_BASE/navigated.html" requested || fail "the navigation is not archived"
	# Each request and response names the other, with WARC-Protocol.
	run jq -rs '[.[] | select(.type == "request" or .type == "response")] as $x
		| ($x | map({key: .id, value: .}) | from_entries) as $by
		| $x[] | select(.protocol != "http/1.1" or ($by[.concurrent] | not)
			or $by[.concurrent].concurrent != .id) | .uri' recs.jsonl
	assert_output ''
	# The payloads: the JSON as served, the gzipped page decoded (the
	# coding undone named in the metadata), the redirect's 301.
	jq -r --arg u "$SC_BASE/data/items.json" 'select(.type == "response" and .uri == $u) | .sha1' \
		recs.jsonl >got
	sha1sum <"$SC_RENDER_SITE/data/items.json" | cut -d' ' -f1 | diff - got
	run jq -rc --arg u "$SC_BASE/gzip" 'select(.uri == $u and .type != "conversion")
		| [.type, .status, (.headers // [] | index("content-encoding")), .text] | @json' recs.jsonl
	assert_line --index 1 '["response",200,null,null]'
	assert_line --index 2 --partial 'browserRemoved: Content-Encoding: gzip'
	run jq -r --arg u "$SC_BASE/redirect-to?url=/static.html&status=301" \
		'select(.type == "response" and .uri == $u) | .status' recs.jsonl
	assert_output 301
	# Each page's DOM: a conversion record of its final URL, the body of
	# its record, referring to the document's response; its screenshot a
	# resource record of the PNG written.
	local final body shot conv
	while IFS=$'\t' read -r final body shot; do
		conv=$(jq -c --arg u "$final" 'select(.type == "conversion" and .uri == $u)' recs.jsonl)
		assert_equal "$(jq -r .sha1 <<<"$conv")" "$(printf '%s' "$body" | base64 -d | sha1sum | cut -d' ' -f1)"
		assert_equal "$(jq -r --arg id "$(jq -r .refers <<<"$conv")" \
			'select(.type == "response" and .id == $id) | .uri' recs.jsonl)" "$final"
		assert_equal "$(jq -r --arg u "urn:screenshot:$final" \
			'select(.type == "resource" and .uri == $u) | [.content_type, .sha1] | @tsv' recs.jsonl)" \
			"image/png	$(sha1sum <"$shot" | cut -d' ' -f1)"
	done < <(jq -r '[.final_url, (.body | @base64), .rendered.screenshot] | @tsv' cap.jsonl)

	# Rendered again from the archive: nothing asked of the server,
	# nothing missing, the same DOM page for page.
	sc_server_reset
	run -0 --separate-stderr sc-render -c 2 --wait stable:400 --from-warc cap.warc.gz <urls
	printf '%s\n' "$output" >again.jsonl
	assert_equal "$(sc_server_stats .requests)" 0
	run jq -r 'select(.ok | not) or .rendered.missing != [] or .rendered.failed != 0 | select(.)' again.jsonl
	assert_output ''
	diff -u <(jq -r '[.url, .final_url, .status, .body] | @json' cap.jsonl | sort) \
		<(jq -r '[.url, .final_url, .status, .body] | @json' again.jsonl | sort) ||
		fail "the DOM rendered from the archive is not the DOM captured"
}

@test "--from-warc: sc-fetch's archive (gzip as sent) renders; what it lacks is rendered.missing, a page it lacks a render error; usage errors" {
	printf '%s\n' "$SC_BASE/fetch-json.html" "$SC_BASE/gzip" "$SC_BASE/iframe.html" \
		"$SC_BASE/iframe-inner.html" | sc-fetch -q --warc f.warc.gz >/dev/null 2>&1
	sc_server_reset
	printf '%s\n' "$SC_BASE/fetch-json.html" "$SC_BASE/gzip" "$SC_BASE/iframe.html" \
		"$SC_BASE/scroll.html" >urls
	# networkidle: fetch-json.html's record waits for its fetch() to be
	# refused (under load, its pause came after a record at load).
	run -3 --separate-stderr sc-render -c 2 --wait networkidle --from-warc f.warc.gz <urls
	printf '%s\n' "$output" >out.jsonl
	assert_equal "$(sc_server_stats .requests)" 0
	run jq -rc '[.url, .ok, .rendered.missing, .rendered.failed, .error] | @json' out.jsonl
	assert_line "[\"$SC_BASE/fetch-json.html\",true,[\"$SC_BASE/data/items.json\"],1,null]"
	assert_line "[\"$SC_BASE/gzip\",true,[],0,null]"
	assert_line "[\"$SC_BASE/iframe.html\",true,[],0,null]"
	assert_line "[\"$SC_BASE/scroll.html\",false,[\"$SC_BASE/scroll.html\"],1,{\"kind\":\"render\",\"message\":\"not in the archive: $SC_BASE/scroll.html\"}]"
	run sc_render_text out.jsonl
	assert_line --partial "$SC_BASE/gzip	Gzip Line 1 of the Gzip document"
	assert_line --partial "IFRAME-OUTER"
	refute_output --partial "RENDERED-FETCH-JSON"

	run -2 --separate-stderr sc-render --from-warc f.warc.gz --robots </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --from-warc asks nothing of the network: not with --robots"
	run -2 --separate-stderr sc-render --warc-cdx </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-render: --warc-cdx needs --warc"
	run -1 --separate-stderr sc-render --from-warc nothere.warc.gz </dev/null
	assert_equal "$stderr" "sc-render: --from-warc: cannot open nothere.warc.gz: No such file or directory"
	run -1 --separate-stderr sc-render --warc nodir/x.warc.gz </dev/null
	assert_output ''
	assert_equal "${stderr%%:*}" "sc-render"
	assert [ ! -e nodir ]
}
