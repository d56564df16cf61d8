#!/usr/bin/env bats
# sc-fetch --warc: every exchange with the fixture server kept as WARC/1.1
# records.  Each archive a test writes is read by an independent reader
# (npm's warcio: cdx-index exits 0 with nothing on stderr, its CDXJ equal
# to sc-warc cdx's line for line) and its digests recomputed by an
# independent checker (test/lib/warc-digests.mjs, node:crypto over
# warcio's parser); the records sc-fetch writes stay byte for byte the
# golden ones but for their "warc" member, which points at the response.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/warc'
load 'lib/golden'

bats_require_minimum_version 1.5.0

GOLDEN="$BATS_TEST_DIRNAME/golden"

setup_file() {
	# The golden tests' site, control characters and all (lib/server.bash).
	sc_golden_site "$BATS_FILE_TMPDIR/site"
	sc_server_start --root "$BATS_FILE_TMPDIR/site"
}

teardown_file() {
	sc_server_stop
}

teardown() {
	nginx_stop
}

setup() {
	warc_readers_present
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
}

# archive_ok FILE...: warcio reads the files and its CDXJ is sc-warc cdx's,
# the independent checker finds every digest right, sc-warc check passes.
# Every line is compared, those of POSTs and PUTs too (keyed by their
# method and body, pywb's "__wb_method=post&..." form).
archive_ok() {
	local ours theirs
	theirs=$(warcio_cdx "$@")
	ours=$(sc-warc cdx "$@") || fail "sc-warc cdx failed"
	[[ $ours == "$theirs" ]] || fail "CDXJ differs: $(diff <(echo "$ours") <(echo "$theirs"))"
	run -0 node "$DIGESTS" "$@"
	assert_output --regexp ' 0 bad$'
	run -0 sc-warc check "$@"
}

# fetch_warc FILE [sc-fetch options] < input: records on stdout.
fetch_warc() {
	local file=$1
	shift
	sc-fetch -q --warc "$file" "$@" 2>/dev/null
}

# The WARC header field NAME of the record in the gzip member at OFFSET,
# LENGTH bytes long, of FILE: the member cut out alone and gunzipped.
member_field() {
	tail -c +"$(($2 + 1))" "$1" | head -c "$3" | gunzip |
		sed -n "1,/^\r\$/p" | grep -a "^$4: " | cut -d' ' -f2- | tr -d '\r'
}

# The response records of FILE as "TARGET-URI STATUS" lines, in file order.
responses() {
	sc-warc records "$@" 2>/dev/null | jq -r '"\(.url) \(.status)"'
}

# An RFC 4648 base32 SHA-1 of standard input, "sha1:...", by python3.
sha1_b32() {
	python3 -c 'import sys, hashlib, base64; print("sha1:" + base64.b32encode(hashlib.sha1(sys.stdin.buffer.read()).digest()).decode())'
}

# Records as test/golden.bats normalises them (lib/golden.bash), their
# warc member taken out first: on the raw lines, so that every other byte
# is compared.
golden_normalize() {
	sed -E -e 's/,"warc":(null|\{[^}]*\})//' | sc_golden_normalize
}

@test "records with --warc are the golden ones but for their warc member, and the archive is read by warcio" {
	sed "s|@BASE@|$SC_BASE|g" "$GOLDEN/fetch.in" >in
	echo "$SC_BASE/ctl-nonul.txt" >>in
	local status=0
	sc-fetch -c 4 --keep-order --seed 1 -m 1 --retries 2 --retry-base 10 \
		--retry-max 20 --max-redirs 3 --warc golden.warc.gz <in >out 2>err || status=$?
	[ "$status" -eq 3 ] || fail "exit $status: $(cat err)"
	# every record that was fetched has the member, after the fetch members
	run jq -r 'select(has("final_url")) | has("warc")' out
	refute_output --partial false
	golden_normalize <out >records
	cmp -s "$GOLDEN/fetch.out" records || fail "$(diff "$GOLDEN/fetch.out" records | head -40)"
	[[ -f golden.warc.gz && ! -e golden.warc.gz.open ]] || fail "the archive was not closed"
	archive_ok golden.warc.gz
}

@test "sc-retry's records with --warc are the golden ones but for their warc member" {
	sed "s|@BASE@|$SC_BASE|g" "$GOLDEN/retry.in" >in
	local status=0
	sc-retry -c 4 --keep-order --seed 1 -m 1 --retries 2 --retry-base 10 \
		--retry-max 20 --warc retry.warc.gz <in >out 2>err || status=$?
	[ "$status" -eq 3 ] || fail "exit $status: $(cat err)"
	golden_normalize <out >records
	cmp -s "$GOLDEN/retry.out" records || fail "$(diff "$GOLDEN/retry.out" records | head -40)"
	archive_ok retry.warc.gz
}

@test "a page, a gzip body, a chunked body and a 404: each a request, a response and a metadata record" {
	printf '%s\n' "$SC_BASE/index.html" "$SC_BASE/gzip" "$SC_BASE/big/5000?chunked=1" \
		"$SC_BASE/status/404" >in
	run -3 fetch_warc a.warc.gz --keep-order <in
	echo "$output" >out
	archive_ok a.warc.gz
	zcat a.warc.gz >a.warc
	assert_equal "$(grep -ac $'^WARC-Type: request\r' a.warc)" 4
	assert_equal "$(grep -ac $'^WARC-Type: response\r' a.warc)" 4
	assert_equal "$(grep -ac $'^WARC-Type: metadata\r' a.warc)" 4
	assert_equal "$(grep -ac $'^WARC-Type: warcinfo\r' a.warc)" 1
	grep -aq $'^WARC-Target-URI: http://127.0.0.1:'"$SC_PORT"$'/index.html\r$' a.warc
	grep -aq $'^WARC-IP-Address: 127.0.0.1\r$' a.warc
	grep -aq $'^WARC-Protocol: http/1.1\r$' a.warc
	grep -aq $'^format: WARC File Format 1.1\r$' a.warc
	grep -aq $'^command-line: sc-fetch -q --warc a.warc.gz --keep-order\r$' a.warc
	grep -aq $'^outcome: http\r$' a.warc
	# the request as sent
	grep -aq $'^GET /gzip HTTP/1.1\r$' a.warc
	grep -aq $'^Accept-Encoding: ' a.warc
	if grep -aq '<urn:uuid:[^>]*>>\|Target-URI: <' a.warc; then fail "angle brackets"; fi
}

@test "each record's warc member locates its response record: the gzip member alone gunzips to it" {
	printf '%s\n' "$SC_BASE/index.html" "$SC_BASE/books/1.html" "$SC_BASE/status/404" >in
	run -3 fetch_warc m.warc.gz <in
	echo "$output" >out
	local n=0 url file offset length
	while read -r url file offset length; do
		assert_equal "$file" m.warc.gz
		assert_equal "$(member_field m.warc.gz "$offset" "$length" WARC-Type)" response
		assert_equal "$(member_field m.warc.gz "$offset" "$length" WARC-Target-URI)" "$url"
		n=$((n + 1))
	done < <(jq -r '"\(.url) \(.warc.filename) \(.warc.offset) \(.warc.length)"' out)
	assert_equal "$n" 3
	# the same places as the CDXJ's
	run -0 sc-warc cdx m.warc.gz
	for offset in $(jq -r .warc.offset out); do
		assert_output --partial "\"offset\":\"$offset\""
	done
}

@test "sc-warc records gives the url, status and body the fetch records have" {
	printf '%s\n' "$SC_BASE/index.html" "$SC_BASE/books/1.html" "$SC_BASE/gzip" \
		"$SC_BASE/big/3000?chunked=1" "$SC_BASE/ctl-nonul.txt" >in
	run -0 fetch_warc r.warc.gz --keep-order <in
	jq -c '{url, status, body}' <<<"$output" | sort >fetched
	sc-warc records r.warc.gz 2>/dev/null | jq -c '{url, status, body}' | sort >replayed
	assert_equal "$(wc -l <fetched)" 5
	cmp -s fetched replayed || fail "$(diff fetched replayed | head)"
}

@test "a chunked body and the same body with a Content-Length: one payload digest, the chunks kept in the block" {
	printf '%s\n' "$SC_BASE/big/70000?chunked=1" "$SC_BASE/big/70000?chunked=0" >in
	run -0 fetch_warc c.warc.gz --keep-order <in
	archive_ok c.warc.gz
	zcat c.warc.gz >c.warc
	mapfile -t digests < <(grep -a '^WARC-Payload-Digest: ' c.warc | tr -d '\r' | cut -d' ' -f2)
	assert_equal "${#digests[@]}" 2
	assert_equal "${digests[0]}" "${digests[1]}"
	# the digest of the bytes themselves, computed apart
	assert_equal "${digests[0]}" "$(curl -s "$SC_BASE/big/70000" | sha1_b32)"
	# the chunked response's block holds the chunk framing as received
	grep -aq $'^Transfer-Encoding: chunked\r$' c.warc
	local lengths
	lengths=$(grep -a -B1 -A0 $'^Content-Length: ' c.warc | grep -a '^Content-Length' | tr -d '\r' | sort -u | wc -l)
	[ "$lengths" -gt 2 ]
}

@test "a gzip body: the payload digest is over the compressed bytes, the record's body decoded" {
	echo "$SC_BASE/gzip" | fetch_warc g.warc.gz >out
	archive_ok g.warc.gz
	local digest
	digest=$(zcat g.warc.gz | grep -a '^WARC-Payload-Digest: ' | tr -d '\r' | cut -d' ' -f2)
	assert_equal "$digest" "$(curl -s -H 'Accept-Encoding: gzip' "$SC_BASE/gzip" | sha1_b32)"
	[[ $digest != "$(curl -s --compressed "$SC_BASE/gzip" | sha1_b32)" ]]
	# the record's body is the decoded page, as without --warc
	echo "$SC_BASE/gzip" | sc-fetch -q >plain
	assert_equal "$(jq -r .body out)" "$(jq -r .body plain)"
	zcat g.warc.gz | grep -aq $'^Content-Encoding: gzip\r$'
}

@test "a br body: asked for by Accept-Encoding, the payload digest over the brotli bytes, the record's body decoded" {
	echo "$SC_BASE/br?size=150000" | fetch_warc b.warc.gz >out
	assert_equal "$(jq -c '[.status, .ok]' out)" "[200,true]"
	archive_ok b.warc.gz
	zcat b.warc.gz >b.warc
	grep -aq $'^Accept-Encoding: [^\r]*br' b.warc || fail "the request did not ask for br"
	grep -aq $'^Content-Encoding: br\r$' b.warc
	# the bytes as sent, fetched apart by curl and decoded apart by node's
	# brotli: they are the plain page
	curl -s -H 'Accept-Encoding: br' "$SC_BASE/br?size=150000" >raw
	curl -s "$SC_BASE/br?size=150000" >plain
	node -e 'process.stdout.write(require("zlib").brotliDecompressSync(require("fs").readFileSync("raw")))' >decoded
	cmp -s decoded plain || fail "node does not decode the br bytes to the page"
	cmp -s raw plain && fail "the br body is the plain page"
	local digest
	digest=$(grep -a '^WARC-Payload-Digest: ' b.warc | tr -d '\r' | cut -d' ' -f2)
	assert_equal "$digest" "$(sha1_b32 <raw)"
	# the record's body is the decoded page, sc-warc records' too
	jq -j .body out >body
	cmp -s body plain || fail "the record's body is not the decoded page"
	sc-warc records b.warc.gz 2>/dev/null | jq -j .body >replayed
	cmp -s replayed plain || fail "sc-warc records' body is not the decoded page"
}

@test "a zstd body: asked for, archived as sent, decoded by sc-warc records as by the fetch and by zstd(1)" {
	echo "$SC_BASE/zstd?size=300000" | fetch_warc z.warc.gz >out
	assert_equal "$(jq -c '[.status, .ok]' out)" "[200,true]"
	archive_ok z.warc.gz
	zcat z.warc.gz >z.warc
	grep -aq $'^Accept-Encoding: [^\r]*zstd' z.warc || fail "the request did not ask for zstd"
	grep -aq $'^Content-Encoding: zstd\r$' z.warc
	curl -s -H 'Accept-Encoding: zstd' "$SC_BASE/zstd?size=300000" >raw
	curl -s "$SC_BASE/zstd?size=300000" >plain
	if command -v zstd >/dev/null; then
		zstd -qdc raw >decoded
		cmp -s decoded plain || fail "zstd(1) does not decode the fixture's bytes to the page"
	fi
	cmp -s raw plain && fail "the zstd body is the plain page"
	assert_equal "$(grep -a '^WARC-Payload-Digest: ' z.warc | tr -d '\r' | cut -d' ' -f2)" "$(sha1_b32 <raw)"
	jq -j .body out >body
	cmp -s body plain || fail "the record's body is not the decoded page"
	run -0 --separate-stderr sc-warc records z.warc.gz
	jq -j .body <<<"$output" >replayed
	cmp -s replayed plain || fail "sc-warc records' body is not the decoded page: $stderr"
}

@test "a redirect: one capture per hop, each with its own target URI; the member points at the last" {
	echo "$SC_BASE/redirect/2" | fetch_warc d.warc.gz >out
	archive_ok d.warc.gz
	run -0 responses d.warc.gz
	assert_line --index 0 "$SC_BASE/redirect/2 302"
	assert_line --index 1 "$SC_BASE/redirect/1 302"
	assert_line --index 2 "$SC_BASE/redirect/0 200"
	assert_equal "${#lines[@]}" 3
	assert_equal "$(zcat d.warc.gz | grep -ac $'^WARC-Type: request\r')" 3
	zcat d.warc.gz | grep -aq $'^redirectHop: 2\r$'
	# every hop has its address, not only the last
	assert_equal "$(zcat d.warc.gz | grep -ac $'^WARC-IP-Address: 127.0.0.1\r$')" 6
	zcat d.warc.gz | grep -aq $'^outcome: redirect\r$'
	assert_equal "$(jq -r .final_url out)" "$SC_BASE/redirect/0"
	local offset length
	read -r offset length < <(jq -r '"\(.warc.offset) \(.warc.length)"' out)
	assert_equal "$(member_field d.warc.gz "$offset" "$length" WARC-Target-URI)" "$SC_BASE/redirect/0"
}

@test "a retried URL: one capture per attempt, the attempt in each metadata record" {
	echo "$SC_BASE/flaky/w1?fail=2" |
		fetch_warc f.warc.gz --retries 2 --retry-base 10 --retry-max 20 >out
	assert_equal "$(jq .attempts out)" 3
	archive_ok f.warc.gz
	run -0 responses f.warc.gz
	assert_equal "${lines[*]}" "$SC_BASE/flaky/w1?fail=2 503 $SC_BASE/flaky/w1?fail=2 503 $SC_BASE/flaky/w1?fail=2 200"
	run -0 bash -c "zcat f.warc.gz | grep -a '^attempt: ' | tr -d '\r'"
	assert_equal "${lines[*]}" "attempt: 1 attempt: 2 attempt: 3"
	# the member points at the last attempt's response
	local offset length
	read -r offset length < <(jq -r '"\(.warc.offset) \(.warc.length)"' out)
	tail -c +"$((offset + 1))" f.warc.gz | head -c "$length" | gunzip | grep -aq '^HTTP/1.1 200'
}

@test "--max-bytes: the response record is WARC-Truncated: length, the record too_large as before" {
	printf '%s\n' "$SC_BASE/big/100000?chunked=1" "$SC_BASE/big/100000" >in
	run -3 fetch_warc t.warc.gz --max-bytes 1000 --keep-order <in
	echo "$output" >out
	assert_equal "$(jq -r .error.kind out | sort -u)" too_large
	archive_ok t.warc.gz
	assert_equal "$(zcat t.warc.gz | grep -ac $'^WARC-Truncated: length\r$')" 2
	assert_equal "$(jq -r '.warc | type' out | sort -u)" object
}

@test "robots.txt requests are captures too, and an attempt without a response writes nothing" {
	printf '%s\n' "$SC_BASE/index.html" "http://127.0.0.1:1/nothing-listens" >in
	run -3 fetch_warc rb.warc.gz --robots --keep-order <in
	echo "$output" >out
	archive_ok rb.warc.gz
	run -0 responses rb.warc.gz
	assert_line "$SC_BASE/robots.txt 404"
	assert_line "$SC_BASE/index.html 200"
	assert_equal "${#lines[@]}" 2
	zcat rb.warc.gz | grep -aq $'^robots: robots.txt request\r$'
	zcat rb.warc.gz | grep -aq $'^robots: obey (as sc-fetch)\r$'
	assert_equal "$(jq -c .warc out | tail -1)" null
}

@test "a POST with Expect: 100-continue: the request record holds its body, the response is the 200 after the 100" {
	python3 -c 'import json, sys; print(json.dumps({"url": sys.argv[1] + "/echo", "request": {"method": "POST", "headers": {"Expect": "100-continue"}, "body": "x" * 300000}}))' "$SC_BASE" >in
	fetch_warc p.warc.gz <in >out
	assert_equal "$(jq .status out)" 200
	archive_ok p.warc.gz
	zcat p.warc.gz >p.warc
	grep -aq $'^POST /echo HTTP/1.1\r$' p.warc
	grep -aq $'^Content-Length: 300224\r$' p.warc # the request record: header and body
	if grep -aq '^HTTP/1.1 100' p.warc; then fail "the interim 100 was kept"; fi
	grep -aq $'^HTTP/1.1 200 OK\r$' p.warc
}

@test "a form POST, a JSON POST and a PUT: keyed by method and body as warcio keys them, --warc-cdx too" {
	python3 - "$SC_BASE" >in <<-'EOF'
		import json, sys
		base = sys.argv[1]
		def rec(method, ctype, body, path="/echo"):
		    r = {"method": method, "body": body}
		    if ctype:
		        r["headers"] = {"Content-Type": ctype}
		    print(json.dumps({"url": base + path, "request": r}))
		rec("POST", None, "q=sc+warc&lang=%C3%A9n&page=2")
		rec("POST", "application/json; charset=utf-8",
		    json.dumps({"query": "Ünï", "n": [1, 2.5, 1e21, 1e-7, True, None], "o": {"query": "again", "1": "one"}}),
		    "/echo?from=json")
		rec("PUT", "application/octet-stream", "\u0001bytes\u00ff")
		rec("POST", "text/plain", "not json")
		rec("POST", None, "x" * 5000)
		rec("DELETE", None, "")
	EOF
	run -0 fetch_warc post.warc.gz --keep-order --warc-cdx <in
	archive_ok post.warc.gz
	assert_equal "$(cat post.cdxj)" "$(sc-warc cdx post.warc.gz)"
	run -0 cat post.cdxj
	assert_equal "${#lines[@]}" 6
	local key="1,0,0,127:$SC_PORT)/echo"
	# the form's parameters, sorted, after __wb_method; the body as sent
	assert_line --partial "$key?__wb_method=post&lang=%C3%A9n&page=2&q=sc+warc "
	assert_line --partial '"method":"POST","requestBody":"q=sc+warc&lang=%C3%A9n&page=2"}'
	# JSON: values named by their keys, a name met again numbered, lower case
	assert_line --partial "$key?1=one&__wb_method=post&from=json&n.2_=2.5&n.3_=1e%2b21&n.4_=1e-7&n.5_=true&n.6_=null&n=1&query.2_=again&query=%C3%BCn%C3%AF "
	# anything else: its bytes in base64
	assert_line --partial "$key?__wb_method=put&__wb_post_data=awj5dgvzw78= "
	assert_line --partial '"method":"PUT","requestBody":"__wb_post_data=AWJ5dGVzw78="}'
	# text/plain that is not JSON: no parameters, no requestBody
	assert_line --regexp "\\?&__wb_method=post .*\"method\":\"POST\"}\$"
	# at most 4096 units of the body
	assert_line --regexp "__wb_method=post&x{4096} "
	assert_line --partial "$key?&__wb_method=delete "
}

@test "depth, seed and via of the input record go into the metadata record" {
	echo "{\"url\":\"$SC_BASE/books/1.html\",\"depth\":2,\"seed\":\"$SC_BASE/\",\"via\":\"$SC_BASE/books/\"}" |
		fetch_warc v.warc.gz >out
	zcat v.warc.gz >v.warc
	grep -aq $'^depth: 2\r$' v.warc
	grep -aq "^seed: $SC_BASE/"$'\r$' v.warc
	grep -aq "^via: $SC_BASE/books/"$'\r$' v.warc
	grep -aq $'^fetchTimeMs: [0-9.]*\r$' v.warc
	# the input members stay as they were, the warc member after the fetch members
	assert_equal "$(jq -c '[.depth, .via]' out)" "[2,\"$SC_BASE/books/\"]"
	assert_equal "$(jq -r 'keys_unsorted | .[index("warc") - 1]' out)" fetched_at
}

@test "a seed or via with a CR, LF or NUL is left out of the metadata; warcinfo's fields stay one a line, whatever argv[0]" {
	printf '%s\n' "{\"url\":\"$SC_BASE/books/1.html\",\"seed\":\"$SC_BASE/\\r\\nX-Evil: 1\",\"via\":\"$SC_BASE/\\u0000\\nX-Evil: 1\"}" >in
	# argv[0] with a line break: the one word of warcinfo no option check sees.
	run -0 --separate-stderr bash -c "exec -a \$'sc-fetch\\nX-Evil: 1' sc-fetch -q --warc e.warc.gz -A 'my bot/1.0' <in"
	archive_ok e.warc.gz
	zcat e.warc.gz >e.warc
	if grep -aq '^X-Evil' e.warc; then fail "a line of its own: $(grep -a '^X-Evil' e.warc)"; fi
	if grep -aqE '^(seed|via):' e.warc; then fail "a seed or via was written"; fi
	grep -aq $'^software: sc-fetchX-Evil: 1/' e.warc || fail "software: $(grep -a '^software' e.warc)"
	grep -aq $'^http-header-user-agent: my bot/1.0\r$' e.warc
	grep -aq $'^depth: \|^fetchTimeMs: ' e.warc
}

@test "--warc-max-size rotates into Annex C names, each with a warcinfo; --warc-cdx writes each file's CDXJ" {
	for i in $(seq 1 12); do echo "$SC_BASE/big/4000?n=$i"; done >in
	run -0 fetch_warc series.warc.gz --warc-max-size 10000 --warc-level 0 --warc-cdx -c 2 <in
	echo "$output" >out
	local files
	mapfile -t files < <(ls series-*.warc.gz)
	[ "${#files[@]}" -ge 3 ] || fail "${#files[@]} files"
	[[ ! -e series.warc.gz ]]
	local f
	for f in "${files[@]}"; do
		[[ $f =~ ^series-[0-9]{14}-[0-9]{5}-.+\.warc\.gz$ ]] || fail "name $f"
		assert_equal "$(zcat "$f" | grep -a -m1 '^WARC-Type: ' | tr -d '\r')" "WARC-Type: warcinfo"
		zcat "$f" | grep -aq $'^format: WARC File Format 1.1\r$' || fail "$f: no warcinfo text"
		assert_equal "$(cat "${f%.warc.gz}.cdxj")" "$(sc-warc cdx "$f")"
	done
	archive_ok "${files[@]}"
	assert_equal "$(cat series-*.cdxj | wc -l)" 12
	# every record names a file that is there
	for f in $(jq -r .warc.filename out | sort -u); do [[ -f $f ]] || fail "no $f"; done
	assert_equal "$(find . -name '*.open' | wc -l)" 0
}

@test "--warc-level: 0 stores, 9 compresses; both read by warcio" {
	for i in 1 2 3; do echo "$SC_BASE/big/20000?n=$i"; done >in
	fetch_warc l0.warc.gz --warc-level 0 <in >/dev/null
	fetch_warc l9.warc.gz --warc-level 9 <in >/dev/null
	archive_ok l0.warc.gz l9.warc.gz
	[ "$(stat -c %s l0.warc.gz)" -gt 60000 ]
	[ "$(stat -c %s l9.warc.gz)" -lt 20000 ]
}

@test "SIGTERM: the run drains and the archive is closed whole" {
	for i in $(seq 1 40); do echo "$SC_BASE/delay/100?n=$i"; done >in
	sc-fetch -q -c 4 --warc s.warc.gz <in >out 2>/dev/null &
	local pid=$!
	sleep 0.5
	kill -TERM "$pid"
	wait "$pid" || true
	[[ -f s.warc.gz && ! -e s.warc.gz.open ]] || fail "not closed"
	archive_ok s.warc.gz
}

@test "kill -9 mid-run leaves NAME.open: sc-warc mend and the next run cut it back, nothing whole lost" {
	for i in $(seq 1 400); do echo "$SC_BASE/big/30000?n=$i"; done >in
	sc-fetch -q -c 8 --warc k.warc.gz --warc-level 0 <in >out 2>/dev/null &
	local pid=$!
	local tries
	for ((tries = 0; tries < 100; tries++)); do
		[[ -s k.warc.gz.open && $(stat -c %s k.warc.gz.open) -gt 300000 ]] && break
		sleep 0.02
	done
	kill -KILL "$pid"
	wait "$pid" || true
	[[ -f k.warc.gz.open && ! -e k.warc.gz ]] || fail "no .open file left"
	cp k.warc.gz.open copy.warc.gz.open
	# sc-warc mend: cut back and renamed, then read by warcio
	run -0 sc-warc mend copy.warc.gz.open
	archive_ok copy.warc.gz
	local kept
	kept=$(sc-warc cdx copy.warc.gz | wc -l)
	[ "$kept" -gt 0 ]
	# the next run with the same file mends it and writes on
	echo "$SC_BASE/index.html" | fetch_warc k.warc.gz >/dev/null
	[[ -f k.warc.gz && ! -e k.warc.gz.open ]]
	archive_ok k.warc.gz
	assert_equal "$(sc-warc cdx k.warc.gz | wc -l)" "$((kept + 1))"
	assert_equal "$(zcat k.warc.gz | grep -ac $'^WARC-Type: warcinfo\r')" 2
}

@test "sc-retry takes --warc too: its attempts are captured; without it a refetched record loses its old member" {
	echo "$SC_BASE/flaky/rt?fail=1" | fetch_warc first.warc.gz --retries 0 >first || true
	assert_equal "$(jq -r .warc.filename first)" first.warc.gz
	# fetched again without --warc, the member would point at the 503: gone
	run -0 --separate-stderr sc-retry -q --retry-base 10 <first
	assert_equal "$(jq 'has("warc")' <<<"$output")" false
	echo "$SC_BASE/flaky/rt2?fail=1" | fetch_warc first.warc.gz --retries 0 >first || true
	run -0 --separate-stderr sc-retry -q --warc rt.warc.gz --retry-base 10 <first
	assert_equal "$(jq -r .status <<<"$output")" 200
	archive_ok rt.warc.gz
	run -0 responses rt.warc.gz
	assert_output "$SC_BASE/flaky/rt2?fail=1 200"
	zcat rt.warc.gz | grep -aq $'^software: sc-retry/'
}

@test "--warc-dedupe: a payload met again, under another URL or in another crawl, is a revisit of the first" {
	printf '%s\n' "$SC_BASE/big/5000?n=1" "$SC_BASE/big/5000?n=2" >in
	fetch_warc d1.warc.gz -c 1 --keep-order --warc-dedupe dd.sqlite <in >out1
	echo "$SC_BASE/big/5000?n=3" | fetch_warc d2.warc.gz --warc-dedupe dd.sqlite >out2
	archive_ok d1.warc.gz d2.warc.gz
	local first
	first=$(zcat d1.warc.gz | grep -a -A1 $'^WARC-Type: response\r$' | grep -a '^WARC-Record-ID: ' | tr -d '\r' | cut -d' ' -f2)
	[[ -n $first ]] || fail "no response record"
	run -0 bash -c "zcat d1.warc.gz d2.warc.gz | grep -a '^WARC-Type: re[qsv]' | tr -d '\r'"
	assert_equal "${lines[*]}" "WARC-Type: request WARC-Type: response WARC-Type: request WARC-Type: revisit WARC-Type: request WARC-Type: revisit"
	for f in d1.warc.gz d2.warc.gz; do
		zcat "$f" | grep -aq $'^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r$'
		zcat "$f" | grep -aq "^WARC-Refers-To: $first"$'\r$'
		zcat "$f" | grep -aq "^WARC-Refers-To-Target-URI: $SC_BASE/big/5000?n=1"$'\r$'
		zcat "$f" | grep -aq $'^WARC-Refers-To-Date: 20'
	done
	# the revisits' records point at them; sc-warc records resolves them
	# to the original's body
	assert_equal "$(jq -r '.warc.offset as $o | .warc.length as $l | "\(.warc.filename) \($o) \($l)"' out2 |
		{ read -r f o l; member_field "$f" "$o" "$l" WARC-Type; })" revisit
	run -0 bash -c "sc-warc records d1.warc.gz d2.warc.gz 2>/dev/null | jq -r '\"\(.url) \(.body | length)\"'"
	assert_equal "${lines[*]}" "$SC_BASE/big/5000?n=1 5000 $SC_BASE/big/5000?n=2 5000 $SC_BASE/big/5000?n=3 5000"
}

@test "a 304 is a revisit with the server-not-modified profile, referring to the URI's archived payload" {
	echo "$SC_BASE/conditional/w" | fetch_warc n1.warc.gz --warc-dedupe nn.sqlite >/dev/null
	echo "{\"url\":\"$SC_BASE/conditional/w\",\"request\":{\"headers\":{\"If-None-Match\":\"\\\"w-v1\\\"\"}}}" |
		fetch_warc n2.warc.gz --warc-dedupe nn.sqlite >out
	assert_equal "$(jq -c '[.status, .ok, .not_modified]' out)" "[304,true,true]"
	archive_ok n1.warc.gz n2.warc.gz
	zcat n2.warc.gz >n2.warc
	grep -aq $'^WARC-Type: revisit\r$' n2.warc
	grep -aq $'^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified\r$' n2.warc
	grep -aq "^WARC-Refers-To-Target-URI: $SC_BASE/conditional/w"$'\r$' n2.warc
	if grep -aq '^WARC-Payload-Digest' n2.warc; then fail "a 304's revisit names no payload"; fi
	# without --warc-dedupe too, but referring to nothing
	echo "{\"url\":\"$SC_BASE/conditional/w\",\"request\":{\"headers\":{\"If-None-Match\":\"\\\"w-v1\\\"\"}}}" |
		fetch_warc n3.warc.gz >/dev/null
	zcat n3.warc.gz | grep -aq $'^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified\r$'
	if zcat n3.warc.gz | grep -aq '^WARC-Refers-To'; then fail "refers to something"; fi
	archive_ok n3.warc.gz
}

# nginx_start: nginx serving HTTP/2 over TLS (a self-signed certificate)
# on a free loopback port, its root a page and a gzip-encoded text; sets
# H2_BASE.  Its process is stopped by nginx_stop.
nginx_start() {
	command -v nginx >/dev/null || fail "nginx is not installed (make deps)"
	command -v openssl >/dev/null || fail "openssl is not installed (make deps)"
	local d=$BATS_TEST_TMPDIR/nginx port
	mkdir -p "$d/www" "$d/tmp"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" \
		-days 2 -subj /CN=127.0.0.1 2>/dev/null || fail "openssl req failed"
	printf 'hello over h2\n' >"$d/www/index.html"
	seq 1 2000 >"$d/www/numbers.txt"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$d/nginx.conf" <<-EOF
		daemon on;
		$([[ $EUID -eq 0 ]] && echo 'user root;')
		worker_processes 1;
		pid $d/nginx.pid;
		error_log $d/error.log;
		events { worker_connections 64; }
		http {
			access_log off;
			client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
			uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
			types { text/html html; text/plain txt; }
			server {
				listen 127.0.0.1:$port ssl http2;
				ssl_certificate $d/cert.pem;
				ssl_certificate_key $d/key.pem;
				root $d/www;
				gzip on; gzip_types text/plain; gzip_min_length 1;
			}
		}
	EOF
	nginx -c "$d/nginx.conf" -p "$d" 2>"$d/start.err" 3>&- || fail "nginx: $(cat "$d/start.err")"
	NGINX_PID_FILE=$d/nginx.pid
	H2_BASE="https://127.0.0.1:$port"
}

nginx_stop() {
	[[ -s ${NGINX_PID_FILE:-} ]] && kill -TERM "$(cat "$NGINX_PID_FILE")" 2>/dev/null
	return 0
}

@test "HTTP/2 over TLS (nginx on loopback): an HTTP/1.1 status line, WARC-Protocol h2 and the TLS version" {
	nginx_start
	printf '%s\n' "$H2_BASE/index.html" "$H2_BASE/numbers.txt" |
		fetch_warc h2.warc.gz -k --keep-order >out
	nginx_stop
	assert_equal "$(jq -c '[.status, .ok]' out | sort -u)" "[200,true]"
	archive_ok h2.warc.gz
	zcat h2.warc.gz >h2.warc
	grep -aq $'^WARC-Protocol: h2\r$' h2.warc
	grep -aq $'^WARC-Protocol: tls/1\\.[0-9]\r$' h2.warc
	grep -aq $'^HTTP/1.1 200 OK\r$' h2.warc
	grep -aq $'^GET /index.html HTTP/1.1\r$' h2.warc
	if grep -aq '^HTTP/2' h2.warc; then fail "an HTTP/2 status line"; fi
	# the gzip-encoded text: the record's body decoded, the payload
	# digest over the bytes as sent
	assert_equal "$(jq -r 'select(.url | endswith("numbers.txt")) | .body' out)" "$(seq 1 2000)"
	grep -aq $'^content-encoding: gzip\r$' h2.warc
	run -0 bash -c "sc-warc records h2.warc.gz 2>/dev/null | jq -r 'select(.url | endswith(\"numbers.txt\")) | .body'"
	assert_output "$(seq 1 2000)"
}

@test "usage: --warc-cdx, --warc-max-size and --warc-dedupe need --warc; --warc-level is 0 to 9; an archive that cannot be opened is exit 1" {
	run -2 sc-fetch --warc-cdx </dev/null
	assert_output --partial -- '--warc-cdx needs --warc'
	run -2 sc-fetch --warc-max-size 100 </dev/null
	assert_output --partial -- '--warc-max-size needs --warc'
	run -2 sc-fetch --warc-dedupe x.sqlite </dev/null
	assert_output --partial -- '--warc-dedupe needs --warc'
	run -2 sc-fetch --warc x.warc.gz --warc-level 10 </dev/null
	run -1 sc-fetch --warc no/such/dir/x.warc.gz </dev/null
	assert_output --partial -- '--warc: cannot open'
}

@test "under valgrind: --warc with redirects, retries, truncation, rotation, CDXJ and dedupe is clean" {
	[ "${SANITIZE:-}" != 1 ] || skip "valgrind cannot run ASan+UBSan binaries (ASan checks this suite)"
	command -v valgrind >/dev/null || fail "valgrind is not installed (make deps)"
	printf '%s\n' "$SC_BASE/redirect/2" "$SC_BASE/flaky/vg?fail=1" "$SC_BASE/gzip" \
		"$SC_BASE/big/20000?chunked=1" "$SC_BASE/big/20000?chunked=1&n=2" "$SC_BASE/big/300000" \
		"http://127.0.0.1:1/" >in
	run -3 --separate-stderr valgrind -q --error-exitcode=99 --leak-check=full \
		--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
		"$SC_BIN/sc-fetch" -q -c 3 --retries 1 --retry-base 10 --max-bytes 100000 --robots \
		--warc vg.warc.gz --warc-max-size 20000 --warc-cdx --warc-dedupe vg.sqlite <in
	assert_equal "$(wc -l <<<"$output")" 7
	! grep -q '^==' <<<"$stderr" || fail "valgrind: $(grep '^==' <<<"$stderr" | head -30)"
	archive_ok vg-*.warc.gz
}

@test "without --warc nothing changes: no warc member, no file" {
	echo "$SC_BASE/index.html" | sc-fetch -q >out
	assert_equal "$(jq 'has("warc")' out)" false
	assert_equal "$(find . -name '*warc*' | wc -l)" 0
}
