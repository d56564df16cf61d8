#!/usr/bin/env bats
# Differential: Debian's `wget --warc-file` and `sc-fetch --warc` fetch the
# same fixture pages (a Content-Length body, a chunked body, a gzip body, a
# redirect, a 404), and both archives are read by a reader neither wrote
# (test/lib/warc-responses.mjs: warcio's parser, SHA-1 by node:crypto):
# the same URLs, statuses and payload bytes.  Where they differ it is
# because wget is wrong, and each such test says so in its name: WARC/1.0,
# angle brackets around WARC-Target-URI, and a payload digest over the
# chunk framing.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/warc'

bats_require_minimum_version 1.5.0


setup_file() {
	sc_server_start
}

teardown_file() {
	sc_server_stop
}

setup() {
	command -v wget >/dev/null || fail "wget is not installed (make deps installs it)"
	warc_readers_present
	cd "$BATS_TEST_TMPDIR" || return 1
	PAGES=("$SC_BASE/page/1" "$SC_BASE/big/3000?chunked=1" "$SC_BASE/gzip"
		"$SC_BASE/redirect/1" "$SC_BASE/status/404")
	# wget exits 8 for the 404; gzip asked for, as sc-fetch asks for it
	local status=0
	wget -q --compression=gzip --warc-file=wget --no-warc-keep-log -O /dev/null \
		"${PAGES[@]}" || status=$?
	[[ $status -eq 8 ]] || fail "wget exited $status"
	# exit 3 for the 404 too
	status=0
	printf '%s\n' "${PAGES[@]}" | sc-fetch -q -c 1 --keep-order --warc sc.warc.gz >sc.out \
		2>/dev/null || status=$?
	[[ $status -eq 3 ]] || fail "sc-fetch exited $status"
	[[ -s wget.warc.gz && -s sc.warc.gz ]] || fail "an archive is missing"
}

# responses FILE: "URL STATUS PAYLOAD-SHA1" of each response record, as the
# independent reader finds them, sorted.
responses() {
	node "$RESPONSES" "$1" | cut -f2-4 | tr '\t' ' ' | LC_ALL=C sort
}

# The independent reader's line for the response record of URL in FILE.
response_of() {
	node "$RESPONSES" "$1" | awk -F'\t' -v u="$2" '$2 == u'
}

@test "the same URLs, statuses and payload bytes in both archives, by warcio's parser and node:crypto" {
	run -0 responses wget.warc.gz
	local theirs=$output
	assert_equal "${#lines[@]}" 6 # the redirect's two hops
	run -0 responses sc.warc.gz
	assert_equal "$output" "$theirs"
	assert_line "$SC_BASE/redirect/1 302 $(curl -s "$SC_BASE/redirect/1" | sha1sum | cut -d' ' -f1)"
	assert_line --regexp "^$SC_BASE/status/404 404 "
	# each payload is the bytes a plain fetch gets (gzip still encoded,
	# chunks joined)
	local url status sha1
	while read -r url status sha1; do
		assert_equal "$sha1" "$(curl -s -H 'Accept-Encoding: gzip' "$url" | sha1sum | cut -d' ' -f1)"
	done <<<"$theirs"
}

@test "sc-warc records reads both archives to the same url, status and body" {
	sc-warc records wget.warc.gz 2>/dev/null | jq -c '{url, status, body, body_base64}' |
		LC_ALL=C sort >from-wget
	sc-warc records sc.warc.gz 2>/dev/null | jq -c '{url, status, body, body_base64}' |
		LC_ALL=C sort >from-sc
	assert_equal "$(wc -l <from-sc)" 6
	cmp -s from-wget from-sc || fail "$(diff from-wget from-sc | head -20)"
	# the gzip page's body decoded, as sc-fetch's record has it
	assert_equal "$(jq -r "select(.url == \"$SC_BASE/gzip\") | .body" from-wget)" \
		"$(jq -r "select(.url == \"$SC_BASE/gzip\") | .body" sc.out)"
}

@test "wget is wrong: WARC/1.0 and angle brackets around every WARC-Target-URI; sc writes WARC/1.1 and the bare URI" {
	zcat wget.warc.gz >wget.warc
	zcat sc.warc.gz >sc.warc
	# every record's version line
	assert_equal "$(grep -a '^WARC/1\.' wget.warc | tr -d '\r' | sort -u)" "WARC/1.0"
	assert_equal "$(grep -a '^WARC/1\.' sc.warc | tr -d '\r' | sort -u)" "WARC/1.1"
	# WARC/1.1's WARC-Target-URI is a bare URI; wget writes WARC/1.0's <uri>
	grep -a '^WARC-Target-URI: ' wget.warc | tr -d '\r' >wget.uris
	[ "$(wc -l <wget.uris)" -ge 12 ]
	if grep -v '^WARC-Target-URI: <.*>$' wget.uris; then fail "a URI without brackets"; fi
	grep -aq "^WARC-Target-URI: <$SC_BASE/page/1>"$'\r$' wget.warc
	grep -a '^WARC-Target-URI: ' sc.warc >sc.uris
	if grep -q '<' sc.uris; then fail "sc wrote angle brackets"; fi
	grep -aq "^WARC-Target-URI: $SC_BASE/page/1"$'\r$' sc.warc
	# the independent reader sees the version in each response record
	assert_equal "$(node "$RESPONSES" wget.warc.gz | cut -f1 | sort -u)" "WARC/1.0"
	assert_equal "$(node "$RESPONSES" sc.warc.gz | cut -f1 | sort -u)" "WARC/1.1"
}

@test "wget is wrong: its payload digest of the chunked page is over the chunk framing; sc's is over the payload" {
	local url="$SC_BASE/big/3000?chunked=1"
	IFS=$'\t' read -r -a theirs < <(response_of wget.warc.gz "$url")
	IFS=$'\t' read -r -a ours < <(response_of sc.warc.gz "$url")
	# the same chunks came to both: the same payload, the same block body
	assert_equal "${ours[3]}" "${theirs[3]}"
	assert_equal "${ours[4]}" "${theirs[4]}"
	[[ ${ours[3]} != "${ours[4]}" ]] || fail "the page did not come chunked"
	# wget's WARC-Payload-Digest names the chunked bytes, sc's the payload
	assert_equal "${theirs[5]}" block-body
	assert_equal "${ours[5]}" payload
	# on every other page both name the payload, and the same digest
	run -0 bash -c "node '$RESPONSES' wget.warc.gz sc.warc.gz | grep -v 'chunked=1' | cut -f6 | sort -u"
	assert_output payload
	local digest
	for digest in $(zcat wget.warc.gz | grep -a '^WARC-Payload-Digest: ' | tr -d '\r' | cut -d' ' -f2); do
		zcat sc.warc.gz | grep -aq "^WARC-Payload-Digest: $digest"$'\r$' && continue
		# the one digest only wget has is the chunked page's
		assert_equal "$(zcat wget.warc.gz | grep -a -B30 "^WARC-Payload-Digest: $digest" |
			grep -a '^WARC-Target-URI: ' | tail -1 | tr -d '\r')" "WARC-Target-URI: <$url>"
	done
	# sc-warc check says what wget did; sc's archive passes
	run -3 --separate-stderr sc-warc check wget.warc.gz
	[[ $stderr == *"WARC-Payload-Digest is over the chunked bytes"* ]] || fail "$stderr"
	run -0 sc-warc check sc.warc.gz
}

@test "warcio's CDXJ of both archives: the same keys, statuses and digests but the chunked page's" {
	# url key, status and digest of each line, and the mime
	cdx_fields() {
		"$WARCIO" cdx-index "$1" 2>/dev/null | grep -v '^metadata' |
			while read -r key _ json; do
				echo "$key $(jq -r '"\(.status) \(.mime) \(.digest)"' <<<"$json")"
			done | LC_ALL=C sort
	}
	run -0 cdx_fields wget.warc.gz
	local theirs=$output
	run -0 cdx_fields sc.warc.gz
	assert_equal "${#lines[@]}" 6
	diff <(grep -v 'chunked=1' <<<"$theirs") <(grep -v 'chunked=1' <<<"$output") ||
		fail "the lines differ beyond the chunked page's"
	# the chunked page: the same key and status, wget's digest the framing's
	local w s
	w=$(grep 'chunked=1' <<<"$theirs")
	s=$(grep 'chunked=1' <<<"$output")
	assert_equal "${w% *}" "${s% *}"
	[[ ${w##* } != "${s##* }" ]] || fail "the same digest"
	# and sc-warc cdx reads wget's archive as warcio does
	assert_equal "$(sc-warc cdx wget.warc.gz)" "$("$WARCIO" cdx-index wget.warc.gz | LC_ALL=C sort)"
}
