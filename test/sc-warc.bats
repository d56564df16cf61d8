#!/usr/bin/env bats
# sc-warc and lib/warc: files the writer makes are read by an independent
# reader (npm's warcio: cdx-index exits 0, says nothing on stderr, and its
# CDXJ equals sc-warc cdx's line for line) and their digests recomputed by
# an independent checker (test/lib/warc-digests.mjs, node:crypto over
# warcio's parser); a WARC Debian's wget writes is read back (payload
# bytes equal to a plain fetch's) and checked (wget's digest over chunked
# bytes named as its error); bad input gets its error and offset; mend.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/warc'

bats_require_minimum_version 1.5.0

setup_file() {
	sc_server_start
	export SAMPLES="$BATS_FILE_TMPDIR/samples"
	mkdir -p "$SAMPLES"
	"$SC_OUT/test/test-warc" write "$SAMPLES"
}

teardown_file() {
	sc_server_stop
}

setup() {
	warc_readers_present
	cd "$BATS_TEST_TMPDIR" || return 1
}

# One plain WARC record: record TYPE BLOCK [EXTRA-FIELD-LINES]
record() {
	printf 'WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s>\r\nWARC-Date: 2026-12-01T10:00:00Z\r\nWARC-Target-URI: http://127.0.0.1/x\r\n%sContent-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n' \
		"$1" "$(cat /proc/sys/kernel/random/uuid)" "${3:-}" "${#2}" "$2"
}

# ---- the writer's files, read by others ----

@test "warcio reads the writer's file: exit 0, empty stderr, its CDXJ equal to sc-warc cdx's" {
	cd "$SAMPLES"
	warcio_cdx sample.warc.gz >"$BATS_TEST_TMPDIR/warcio.cdxj"
	run -0 sc-warc cdx sample.warc.gz
	[[ $output == "$(cat "$BATS_TEST_TMPDIR/warcio.cdxj")" ]] ||
		fail "$(diff <(echo "$output") "$BATS_TEST_TMPDIR/warcio.cdxj")"
	# 5 responses and 2 revisits; requests, warcinfo and metadata are not indexed
	assert_equal "$(echo "$output" | wc -l)" 7
	assert_line --partial '1,0,0,127)/gzip 20251201150000 {"url":"http://127.0.0.1/gzip","mime":"text/html","status":"200","digest":"'
	assert_line --partial 'com,example:8080)/a/b?a=2&z=1 20251201150140 {"url":"http://www.Example.com:8080/a/b?z=1&a=2","mime":"warc/revisit","status":"304"'
}

@test "offsets strictly increase, and each names the start of a gzip member that holds one record" {
	cd "$SAMPLES"
	"$WARCIO" index sample.warc.gz -f offset,length,warc-type >index.jsonl
	run jq -s '[.[] | .offset] | . == (sort | unique)' index.jsonl
	assert_output true
	# each member, cut out by its offset and length, is a whole gzip file
	# with one record
	jq -r '"\(.offset) \(.length)"' index.jsonl | while read -r offset length; do
		tail -c +"$((offset + 1))" sample.warc.gz | head -c "$length" | gzip -t ||
			fail "no whole member at $offset"
		n=$(tail -c +"$((offset + 1))" sample.warc.gz | head -c "$length" | zcat | grep -c '^WARC/1.1')
		assert_equal "$n" 1
	done
}

@test "the independent checker recomputes every block and payload digest of the writer's files" {
	cd "$SAMPLES"
	run -0 node "$DIGESTS" sample.warc.gz series-*.warc.gz
	assert_output --regexp '^31 records, [0-9]+ digests checked, 0 bad$'
}

@test "the independent checker fails a digest that does not match (it checks something)" {
	record response $'HTTP/1.1 200 OK\r\n\r\nhello' \
		$'WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n' >bad.warc
	run -1 node "$DIGESTS" bad.warc
	assert_output --partial 'payload digest sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ, computed'
}

@test "record fields as WARC/1.1 wants them: no angle brackets, sha1 base32, revisit profiles, h2" {
	zcat "$SAMPLES/sample.warc.gz" >plain.warc
	run grep -c '^WARC-Target-URI: <' plain.warc
	assert_output 0
	grep -q $'^WARC-Target-URI: http://127.0.0.1/gzip\r$' plain.warc
	grep -q $'^WARC-Payload-Digest: sha1:[A-Z2-7]\\{32\\}\r$' plain.warc
	grep -q $'^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r$' plain.warc
	grep -q $'^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified\r$' plain.warc
	grep -q $'^WARC-Refers-To-Target-URI: http://www.Example.com:8080/a/b?z=1&a=2\r$' plain.warc
	grep -q $'^WARC-Refers-To-Date: 2025-12-01T15:00:00.123Z\r$' plain.warc
	grep -q $'^WARC-Truncated: length\r$' plain.warc
	grep -q $'^WARC-Protocol: h2\r$' plain.warc
	grep -q $'^WARC-Protocol: tls/1.3\r$' plain.warc
	grep -q $'^HTTP/1.1 200 OK\r$' plain.warc
	run grep -c '^HTTP/2' plain.warc
	assert_output 0
	grep -q $'^format: WARC File Format 1.1\r$' plain.warc
	grep -q $'^conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r$' plain.warc
	grep -q $'^Content-Type: application/http;msgtype=request\r$' plain.warc
}

@test "request and response share one WARC-Date and name each other in WARC-Concurrent-To" {
	zcat "$SAMPLES/sample.warc.gz" | tr -d '\r' | awk '
		/^WARC\/1.1$/ { head = 1 }
		/^$/ { head = 0 }
		!head { next }
		/^WARC-Type: / { type = $2 }
		/^WARC-Record-ID: / { id[type] = $2 }
		/^WARC-Date: / { date[type] = $2 }
		/^WARC-Concurrent-To: / { to[type] = $2 }
		/^Content-Length: / && type == "response" {
			if (to["response"] != id["request"] || to["request"] != id["response"] ||
			    date["request"] != date["response"]) bad++
			pairs++
		}
		END { print pairs, bad + 0 }' >pairs
	assert_equal "$(cat pairs)" "5 0"
}

@test "rotation: files named as WARC/1.1 Annex C suggests, each opened by a warcinfo, read by warcio" {
	cd "$SAMPLES"
	run ls series-*.warc.gz
	assert_equal "${#lines[@]}" 3
	for f in "${lines[@]}"; do
		[[ $f =~ ^series-[0-9]{14}-0000[0-2]-[^/]+\.warc\.gz$ ]] || fail "name: $f"
		assert_equal "$(zcat "$f" | grep -a -m1 '^WARC-Type:' | tr -d '\r')" "WARC-Type: warcinfo"
		zcat "$f" | grep -q "^WARC-Filename: $f"
	done
	warcio_cdx series-*.warc.gz >"$BATS_TEST_TMPDIR/warcio.cdxj"
	run -0 sc-warc cdx series-*.warc.gz
	assert_equal "$output" "$(cat "$BATS_TEST_TMPDIR/warcio.cdxj")"
	assert_equal "${#lines[@]}" 3
}

@test "sc-warc check passes the writer's files" {
	run -0 --separate-stderr sc-warc check "$SAMPLES"/*.warc.gz
	assert_equal "$stderr" '{"files":4,"records":31,"bad":0}'
}

# ---- records ----

@test "records: fetch records with decoded bodies, revisits resolved, truncation and 404 failed" {
	run -3 --separate-stderr sc-warc records --headers "$SAMPLES/sample.warc.gz"
	assert_equal "${#lines[@]}" 7
	page='"<!DOCTYPE html><title>Hello</title><p>café au lait</p>\n"'
	# the gzip body decoded, the identical-payload revisit given its original's body
	run jq -c 'select(.url == "http://127.0.0.1/gzip" or .url == "http://127.0.0.1/copy") | .body' <<<"$output"
	assert_equal "$output" "$page"$'\n'"$page"
	run -3 sc-warc records --headers -q "$SAMPLES/sample.warc.gz"
	run jq -c 'select(.url == "http://127.0.0.1/big") | [.ok, .error.kind, .body]' <<<"$output"
	assert_output '[false,"too_large",null]'
	run -3 sc-warc records -q "$SAMPLES/sample.warc.gz"
	run jq -c 'select(.url == "http://127.0.0.1/missing") | [.status, .ok, .error.kind, .body]' <<<"$output"
	assert_output '[404,false,"http","gone\n"]'
	run -3 sc-warc records --headers -q "$SAMPLES/sample.warc.gz"
	run jq -c 'select(.url == "https://127.0.0.1:8443/h2") | [.status, .http_version, .headers.server, .warc.filename]' <<<"$output"
	assert_output '[200,"2","nginx","sample.warc.gz"]'
}

@test "records: a revisit whose original comes in a later file is resolved at the end" {
	# The revisit alone: no original, an error record, the count kept.
	zcat "$SAMPLES/sample.warc.gz" >all.warc
	run -3 --separate-stderr sc-warc records all.warc
	assert_equal "${#lines[@]}" 7
	awk 'BEGIN { RS = "WARC/1.1\r\n" } /WARC-Type: revisit/ && /copy/ { printf "WARC/1.1\r\n%s", $0 }' all.warc >revisit.warc
	run -3 --separate-stderr sc-warc records revisit.warc
	assert_output --partial '"error":{"kind":"internal","message":"revisit: its original record is not in the files given"}'
	run -3 --separate-stderr sc-warc records revisit.warc all.warc
	assert_equal "${#lines[@]}" 8
	run jq -r 'select(.url == "http://127.0.0.1/copy") | .ok' <<<"$output"
	assert_output $'true\ntrue'
}

# ---- wget's WARC ----

@test "wget's WARC: records gives the payload bytes a plain fetch gets; warcio's CDXJ equals ours" {
	command -v wget >/dev/null || fail "wget is not installed (make deps installs it)"
	wget -q --warc-file=wget -O /dev/null "$SC_BASE/page/1" "$SC_BASE/latin1" "$SC_BASE/big/3000?chunked=1"
	run -0 --separate-stderr sc-warc records wget.warc.gz
	assert_equal "${#lines[@]}" 3
	for path in /page/1 /latin1 '/big/3000?chunked=1'; do
		curl -s "$SC_BASE$path" >want
		# the bytes, whether they came as body (UTF-8) or body_base64
		jq -r --arg u "$SC_BASE$path" 'select(.url == $u) | .body_base64 // (.body | @base64)' \
			<<<"$output" | base64 -d >got
		cmp got want || fail "$path differs"
	done
	warcio_cdx wget.warc.gz >warcio.cdxj
	run -0 sc-warc cdx wget.warc.gz
	assert_equal "$output" "$(cat warcio.cdxj)"
}

@test "wget's WARC: check passes what wget gets right and names its chunked payload digest" {
	command -v wget >/dev/null || fail "wget is not installed (make deps installs it)"
	wget -q --warc-file=plain -O /dev/null "$SC_BASE/page/1" "$SC_BASE/gzip"
	run -0 --separate-stderr sc-warc check plain.warc.gz
	# wget is wrong here: WARC/1.1 defines the payload digest over the
	# entity body, the chunked transfer coding removed
	wget -q --warc-file=chunked -O /dev/null "$SC_BASE/big/3000?chunked=1"
	run -3 --separate-stderr sc-warc check chunked.warc.gz
	[[ $stderr =~ sc-warc:\ chunked\.warc\.gz:[0-9]+:\ WARC-Payload-Digest\ is\ over\ the\ chunked\ bytes ]] || fail "$stderr"
	# and the independent checker agrees that it does not match the payload
	run -1 node "$DIGESTS" chunked.warc.gz
	assert_output --partial 'payload digest'
}

# ---- bad input ----

@test "not a WARC: the error and offset 0, exit 3, never a crash" {
	echo "hello, world" >hello.txt
	run -3 --separate-stderr sc-warc check hello.txt
	[[ $stderr == "sc-warc: hello.txt:0: not a WARC file"* ]] || fail "$stderr"
	run -3 --separate-stderr sc-warc records hello.txt
	assert_output ''
	[[ $stderr == "sc-warc: hello.txt:0: not a WARC file"* ]] || fail "$stderr"
}

@test "a gzip member cut short: its offset, and the records before it kept" {
	cp "$SAMPLES/sample.warc.gz" cut.warc.gz
	size=$(stat -c %s cut.warc.gz)
	offset=$("$WARCIO" index cut.warc.gz -f offset | tail -1 | jq .offset)
	truncate -s $((size - 10)) cut.warc.gz
	run -3 --separate-stderr sc-warc check cut.warc.gz
	[[ $stderr == "sc-warc: cut.warc.gz:$offset: gzip member cut short (the file ends inside it)"* ]] || fail "$stderr"
	run -3 --separate-stderr sc-warc records -q cut.warc.gz
	assert_equal "${#lines[@]}" 6
}

@test "a wrong Content-Length: too long and too short, each with its offset" {
	record resource 'hello' >good.warc
	printf 'WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Date: 2026-12-01T10:00:00Z\r\nContent-Length: 99\r\n\r\nhello\r\n\r\n' >long.warc
	cat good.warc long.warc >both.warc
	offset=$(stat -c %s good.warc)
	run -3 --separate-stderr sc-warc check both.warc
	[[ $stderr == "sc-warc: both.warc:$offset: Content-Length 99 is more than the 9 bytes that follow"* ]] || fail "$stderr"
	printf 'WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Date: 2026-12-01T10:00:00Z\r\nContent-Length: 3\r\n\r\nhello\r\n\r\n' | gzip >short.warc.gz
	run -3 --separate-stderr sc-warc check short.warc.gz
	[[ $stderr == "sc-warc: short.warc.gz:0: Content-Length 3 does not end the record"* ]] || fail "$stderr"
}

@test "a digest that does not match: block and payload, each reported with its offset" {
	record resource 'hello' >first.warc
	record response $'HTTP/1.1 200 OK\r\n\r\nhello' \
		$'WARC-Block-Digest: sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\nWARC-Payload-Digest: sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n' >second.warc
	for f in first.warc second.warc; do gzip -c "$f"; done >digests.warc.gz
	offset=$(gzip -c first.warc | wc -c)
	run -3 --separate-stderr sc-warc check digests.warc.gz
	assert_equal "$(grep -c "^sc-warc: digests.warc.gz:$offset: " <<<"$stderr")" 2
	[[ $stderr == *"$offset: WARC-Block-Digest sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA does not match the block (sha1:"* ]] || fail "$stderr"
	[[ $stderr == *"$offset: WARC-Payload-Digest sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA does not match the payload (sha1:"* ]] || fail "$stderr"
	[[ $stderr == *'"records":2,"bad":1}'* ]] || fail "$stderr"
}

@test "a chunked payload's wrong digest: the digest check says it computed is the payload's, chunks removed" {
	record response $'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n' \
		$'WARC-Payload-Digest: sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n' | gzip >chunked.warc.gz
	run -3 --separate-stderr sc-warc check chunked.warc.gz
	local payload chunked
	payload=$(printf 'hello world' | python3 -c 'import sys, hashlib, base64; print("sha1:" + base64.b32encode(hashlib.sha1(sys.stdin.buffer.read()).digest()).decode())')
	chunked=$(printf '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n' | python3 -c 'import sys, hashlib, base64; print("sha1:" + base64.b32encode(hashlib.sha1(sys.stdin.buffer.read()).digest()).decode())')
	[[ $stderr == *"WARC-Payload-Digest sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA does not match the payload ($payload)"* ]] || fail "$stderr"
	[[ $stderr != *"$chunked"* ]] || fail "the chunked bytes' digest: $stderr"
	# The digest it names, pasted in, is the fix.
	record response $'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n' \
		"WARC-Payload-Digest: $payload"$'\r\n' | gzip >fixed.warc.gz
	run -0 sc-warc check fixed.warc.gz
}

@test "records goes on after a corrupt member" {
	cp "$SAMPLES/sample.warc.gz" corrupt.warc.gz
	# a byte in the middle of the first response's member
	offset=$(sc-warc cdx corrupt.warc.gz | grep -m1 'example' | jq -R 'split(" ")[2:] | join(" ") | fromjson | .offset | tonumber')
	printf '\xff\xff\xff\xff' | dd of=corrupt.warc.gz bs=1 seek=$((offset + 40)) conv=notrunc 2>/dev/null
	run -3 --separate-stderr sc-warc records -q corrupt.warc.gz
	assert_equal "${#lines[@]}" 6
	[[ $stderr == "sc-warc: corrupt.warc.gz:$offset: corrupt gzip member"* ]] || fail "$stderr"
}

# ---- mend ----

@test "mend: a .open file cut inside a member is cut back to its last whole member and renamed" {
	cp "$SAMPLES/sample.warc.gz" crawl.warc.gz.open
	size=$(stat -c %s crawl.warc.gz.open)
	truncate -s $((size - 20)) crawl.warc.gz.open
	run -0 --separate-stderr sc-warc mend crawl.warc.gz.open
	[[ ! -e crawl.warc.gz.open ]] || fail ".open is still there"
	[[ $stderr == "sc-warc: crawl.warc.gz.open: "*" bytes kept, "*" cut, renamed crawl.warc.gz" ]] || fail "$stderr"
	run -0 sc-warc check -q crawl.warc.gz
	warcio_cdx crawl.warc.gz >warcio.cdxj
	assert_equal "$(sc-warc cdx crawl.warc.gz)" "$(cat warcio.cdxj)"
	# the last capture (the h2 response) was cut; the six before it are whole
	assert_equal "$(wc -l <warcio.cdxj)" 6
}

@test "mend refuses a file that is not gzip, and leaves it alone" {
	record resource 'hello' >plain.warc
	cp plain.warc before
	run -1 --separate-stderr sc-warc mend plain.warc
	[[ $stderr == *"not a gzipped WARC"* ]] || fail "$stderr"
	cmp plain.warc before
}

# ---- forget ----

# A dedupe index of the pages of the fixture's /page/1..N: archives one.warc.gz.
dedupe_two_archives() {
	for i in 1 2 3 4; do echo "$SC_BASE/page/$i"; done >urls
	run -0 sc-fetch -q --warc one.warc.gz --warc-dedupe seen.db <urls
	# The same pages again: revisits of one's records, nothing learnt.
	run -0 sc-fetch -q --warc two.warc.gz --warc-dedupe seen.db <urls
	assert_equal "$(sqlite3 seen.db 'SELECT count(*) FROM payloads')" 4
}

@test "forget: the index forgets the payloads of an archive's records, and only those" {
	dedupe_two_archives
	n=$(zcat two.warc.gz | grep -ac '^WARC-Record-ID: ')
	run -0 --separate-stderr sc-warc forget seen.db two.warc.gz
	assert_equal "$stderr" "{\"files\":1,\"records\":$n,\"forgotten\":0}"
	n=$(zcat one.warc.gz | grep -ac '^WARC-Record-ID: ')
	run -0 --separate-stderr sc-warc forget seen.db one.warc.gz
	# Of all its records, the 4 responses held the payloads.
	assert_equal "$stderr" "{\"files\":1,\"records\":$n,\"forgotten\":4}"
	assert_equal "$(sqlite3 seen.db 'SELECT count(*) FROM payloads')" 0
	# The index learns again: a third run archives the payloads in full.
	run -0 sc-fetch -q --warc three.warc.gz --warc-dedupe seen.db <urls
	assert_equal "$(zcat three.warc.gz | grep -ac '^WARC-Type: revisit')" 0
}

@test "forget: a file cut short gives its whole records (status 3); a missing index is an error, not created" {
	dedupe_two_archives
	# Cut inside the last response's gzip member (sc-warc cdx gives it).
	last=$(sc-warc cdx one.warc.gz | sed 's/.*"offset":"\?\([0-9]*\).*/\1/' | sort -n | tail -1)
	truncate -s $((last + 20)) one.warc.gz
	run -3 --separate-stderr sc-warc forget seen.db one.warc.gz
	[[ $stderr == *'"forgotten":3}' ]] || fail "$stderr"
	assert_equal "$(sqlite3 seen.db 'SELECT count(*) FROM payloads')" 1
	run -1 --separate-stderr sc-warc forget nothere.db one.warc.gz
	[[ $stderr == "sc-warc: nothere.db: No such file or directory" ]] || fail "$stderr"
	[[ ! -e nothere.db ]] || fail "the index was created"
	run -2 --separate-stderr sc-warc forget seen.db
	[[ $stderr == *"forget: an index and the files"* ]] || fail "$stderr"
}

@test "crawl.sh reaches into no program's file: the dedupe index through sc-warc forget" {
	run grep -n 'FROM payloads\|INTO payloads' "$BATS_TEST_DIRNAME/../share/sc/"*.sh "$BATS_TEST_DIRNAME/../share/sc/crawl.mk"
	assert_failure
}

# ---- usage ----

@test "usage errors exit 2: no command, an unknown command, no file, --headers elsewhere" {
	run -2 --separate-stderr sc-warc
	run -2 --separate-stderr sc-warc frobnicate x
	[[ $stderr == *"'frobnicate': not a command"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-warc check
	run -2 --separate-stderr sc-warc check --headers x
	run -0 sc-warc --help
	assert_line --index 0 --partial 'usage: sc-warc records'
}
