#!/usr/bin/env bats
# crawl.mk WARC=1 (sc-crawl(7), "WARC"): each chunk's WARC beside its
# records, committed with them; DIR/warc/ with the files and one merged
# CDXJ.  Every archive is read by an independent reader (npm's warcio:
# cdx-index exits 0 with nothing on stderr) and by sc-warc check; the
# archive replays into the crawl's own fields; a crawl killed with SIGKILL
# and made again leaves each page archived once.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/warc'
load 'lib/crawl'

bats_require_minimum_version 1.5.0

FIELDS="-f heading=h1 -f 'links[]=a::attr(href)'"

setup_file() {
	sc_server_start --loopback 3
}

teardown_file() {
	sc_server_stop
}

setup() {
	warc_readers_present
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
}

# archive_ok DEST: every file of DEST/warc/ passes sc-warc check and warcio
# cdx-index (exit 0, empty stderr), is a hard link to its chunk's file,
# its digests recomputed by the independent checker are right, and
# DEST/warc/index.cdxj is warcio's lines of all of them, sorted (and
# sc-warc cdx's).
archive_ok() {
	local f files=("$1"/warc/*.warc.gz)
	((${#files[@]} > 0)) || fail "no WARC in $1/warc"
	for f in "${files[@]}"; do
		[ "$(stat -c %h "$f")" -ge 2 ] || fail "$f is not a hard link"
	done
	warc_checked "${files[@]}" >warcio.sorted
	diff -u warcio.sorted "$1/warc/index.cdxj" || fail "index.cdxj is not warcio's CDXJ, sorted"
	sc-warc cdx "${files[@]}" | LC_ALL=C sort | diff -u - "$1/warc/index.cdxj" || fail "index.cdxj is not sc-warc cdx's"
	run -0 node "$DIGESTS" "${files[@]}"
	assert_output --regexp ' 0 bad$'
	if compgen -G "$1/round-*/*.open" >/dev/null; then fail "an .open file is left"; fi
}

# archived_once DEST: each page of DEST/pages.jsonl has exactly one
# response record in DEST/warc/ (robots.txt's left out), and its record's
# warc member points at it.
archived_once() {
	sc-warc records "$1"/warc/*.warc.gz 2>/dev/null | jq -r '.url' | grep -v '/robots.txt$' | sort >archived
	jq -r .url "$1/pages.jsonl" | sort >pages.urls
	diff -u pages.urls archived || fail "not every page archived exactly once"
	local f o l url
	while read -r url f o l; do
		[[ $f != null ]] || fail "$url has no warc member"
		[ "$(tail -c +$((o + 1)) "$1/warc/$f" | head -c "$l" | gunzip | sed -n 's/^WARC-Target-URI: //p' | tr -d '\r')" = "$url" ] ||
			fail "$url: its warc member $f $o $l is not its response"
	done < <(jq -r '"\(.url) \(.warc.filename) \(.warc.offset) \(.warc.length)"' "$1/pages.jsonl")
}

@test "WARC=1 crawl: one WARC per chunk, DIR/warc/ of hard links and a merged CDXJ, read by warcio, each page once" {
	seeds_for 127.0.0.1 127.0.0.2 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c CHUNK=4 WARC=1 -j2
	local chunks warcs files
	files=(c/round-*/chunk-*.jsonl)
	chunks=${#files[@]}
	files=(c/warc/*.warc.gz)
	warcs=${#files[@]}
	[ "$chunks" -gt 2 ] || fail "only $chunks chunks"
	[ "$warcs" = "$chunks" ] || fail "$warcs WARCs for $chunks chunks"
	# Names carry the round, so that rounds do not collide in DIR/warc/.
	[ -e c/warc/round-0-chunk-0-0000.warc.gz ] && [ -e c/warc/round-2-chunk-0-0000.warc.gz ]
	archive_ok c
	archived_once c
	[ "$(wc -l <c/pages.jsonl)" = "$(grep -c '^' archived)" ]
	# Made again, nothing changes.
	local before
	before=$(stat -c %i c/warc/index.cdxj)
	run -0 crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c CHUNK=4 WARC=1
	[ "$(stat -c %i c/warc/index.cdxj)" = "$before" ]
}

@test "WARC_PREFIX: every archive's name begins with it (the records, the CDXJ, DIR/warc/); a bad one is refused" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c CHUNK=4 WARC=1 WARC_PREFIX=docs-2026.12_a
	local f
	for f in c/warc/*.warc.gz c/round-*/*.warc.gz; do
		[[ ${f##*/} == docs-2026.12_a-round-* ]] || fail "$f does not begin with the prefix"
	done
	[ -e c/warc/docs-2026.12_a-round-0-chunk-0-0000.warc.gz ]
	archive_ok c
	archived_once c
	jq -e -s 'map(.warc.filename | startswith("docs-2026.12_a-round-")) | all' c/pages.jsonl
	jq -e -s 'map(.filename | startswith("docs-2026.12_a-round-")) | all' \
		< <(sed 's/^[^{]*//' c/warc/index.cdxj)
	run -2 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=d WARC=1 'WARC_PREFIX=a/b'
	assert_output --partial "WARC_PREFIX=\"a/b\" may hold letters, digits"
	[ ! -e d ]
}

@test "replay: sc-warc records of DIR/warc/ through sc-parse gives the crawl's own fields, without the network" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c CHUNK=4 WARC=1 "FIELDS=$FIELDS"
	jq -c '{url, status, ok, heading, links}' c/pages.jsonl | sort >crawled
	[ "$(wc -l <crawled)" -gt 5 ]
	jq -e -s 'all(.[]; (.links | length) > 0 and .heading != null)' c/pages.jsonl >/dev/null
	sc_server_reset
	local status=0
	sc-warc records c/warc/*.warc.gz 2>warc.err | eval "sc-parse $FIELDS" >replayed.jsonl 2>parse.err || status=$?
	[ "$status" = 0 ] || fail "replay failed ($status): $(cat warc.err parse.err)"
	[ "$(sc_server_log length)" = 0 ] || fail "the replay asked the server"
	jq -c 'select(.url | endswith("/robots.txt") | not) | {url, status, ok, heading, links}' replayed.jsonl | sort >replayed
	diff -u crawled replayed
}

@test "WARC=0 (the default) writes no WARC; WARC=2 and WARC_DEDUPE with WORKERS are refused before anything runs" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c
	if compgen -G 'c/round-*/*.warc.gz*' >/dev/null || [ -e c/warc ]; then fail "a WARC without WARC=1"; fi
	run -0 jq -s 'map(has("warc")) | any' c/pages.jsonl
	assert_output false
	run -2 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=d WARC=2
	assert_output --partial "WARC=2 is not 0 or 1"
	run -2 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=d WARC=1 WARC_DEDUPE=d.db WORKERS=w1
	assert_output --partial "WARC_DEDUPE cannot be used with WORKERS"
	[ ! -e d ]
	# make warc of a crawl that had no WARC=1 says so.
	run -2 crawl_make warc SEEDS=seeds.txt DEPTH=1 DIR=c
	assert_output --partial "crawled without WARC=1"
	[ ! -e c/warc ]
}

@test "a chunk that fails takes its WARC with it; make again writes it anew" {
	seeds_for 127.0.0.1 >seeds.txt
	mkdir fake
	# An sc-parse that fails once: the chunk's WARC is written, then not
	# committed.
	cat >fake/sc-parse <<-EOF
		#!/bin/bash
		if [[ ! -e $PWD/failed ]]; then : >$PWD/failed; cat >/dev/null; exit 1; fi
		exec $(command -v sc-parse) "\$@"
	EOF
	chmod +x fake/sc-parse
	PATH=$PWD/fake:$PATH run -2 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c WARC=1
	[ ! -e c/round-0/chunk-0-0000.jsonl ]
	if compgen -G 'c/round-0/*warc*' >/dev/null || compgen -G 'c/round-0/*.cdxj' >/dev/null; then
		fail "the failed chunk's WARC stayed: $(ls c/round-0)"
	fi
	# A left-over .open (a kill -9) is removed at the chunk's start.
	echo junk >c/round-0/round-0-chunk-0-0000.warc.gz.open
	PATH=$PWD/fake:$PATH run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c WARC=1
	archive_ok c
	archived_once c
}

# fresh_open: the WARC .open files written since this run of make started.
fresh_open() {
	find c -name '*.warc.gz.open' -newer started 2>/dev/null
}

# killed_warc_crawl: the crawl of args into DIR=c, make's process group
# killed with SIGKILL at a random moment (the first, and two in three of
# the others, inside a chunk's fetch), KILLS times, then made to the end.
killed_warc_crawl() {
	local pid ms tries k=0
	while :; do
		# A .open older than this start is one a kill left, not this run's.
		touch started
		setsid make -f "$CRAWL_MK" --no-print-directory -j 2 "${args[@]}" >>make.log 2>&1 3>&- &
		pid=$!
		if ((k < KILLS)); then
			ms=$((RANDOM % 600))
			if ((k == 0 || RANDOM % 3)); then
				# A moment inside a chunk's fetch: once this run's WARC
				# .open is there (bounded wait: 30 s, for a loaded machine
				# or an ASan build), then 0-40 ms more; a chunk of six
				# under --delay 100 is open for 100 ms at least.
				for ((tries = 0; tries < 1500; tries++)); do
					[ -z "$(fresh_open)" ] || break
					kill -0 "$pid" 2>/dev/null || break
					sleep 0.02
				done
				ms=$((RANDOM % 40))
			fi
			sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
			if kill -0 "$pid" 2>/dev/null; then
				kill -KILL -- "-$pid" 2>/dev/null || true
				wait "$pid" 2>/dev/null || true
				for ((tries = 0; tries < 200; tries++)); do
					kill -0 -- "-$pid" 2>/dev/null || break
					sleep 0.05
				done
				k=$((k + 1))
				echo "kill $k after $ms ms" >>kills.log
				# A kill inside a chunk's fetch leaves its WARC's .open.
				[ -z "$(fresh_open)" ] || left=$((left + 1))
				continue
			fi
		fi
		wait "$pid" || fail "make failed after $k kills: $(tail -20 make.log)"
		return 0
	done
}

@test "kill -9 at random moments, then make: every WARC checks, each page archived once, no .open left" {
	local seed=${SC_CRAWL_KILL_SEED:-$((($(date +%s%N) / 1000) % 32768))} crawl left
	echo "# kill seed $seed (SC_CRAWL_KILL_SEED=$seed to repeat)" >&3
	RANDOM=$seed
	seeds_for 127.0.0.1 127.0.0.2 127.0.0.3 >seeds.txt
	left=0
	for crawl in 1 2 3; do
		args=(SEEDS=seeds.txt DEPTH=2 DIR=c CHUNK=6 PER_HOST=1 WARC=1 "FETCH_ARGS=--delay 100")
		# With a digest file: what a kill left is forgotten in it, else a
		# page redone would be a revisit of a record that is gone.
		((crawl == 1)) || args+=(WARC_DEDUPE=digests.db)
		rm -rf c digests.db
		KILLS=3 killed_warc_crawl
		archive_ok c
		archived_once c
		if compgen -G 'c/round-*/*.open' >/dev/null; then fail "an .open file is left"; fi
		# No WARC without its chunk.
		local w id
		for w in c/round-*/round-*-chunk-*.warc.gz; do
			id=${w##*/round-*-chunk-} id=${id%.warc.gz}
			[ -e "${w%/*}/chunk-$id.jsonl" ] || fail "$w has no chunk"
		done
		# The fixture serves /page/N?x=1 as /page/N: revisits, each naming
		# a record that the archive holds.
		zcat c/warc/*.warc.gz | tr -d '\r' >all.warc
		sed -n 's/^WARC-Record-ID: //p' all.warc | sort -u >ids
		sed -n 's/^WARC-Refers-To: //p' all.warc | sort -u >refers
		((crawl == 1)) || [ -s refers ] || fail "crawl $crawl: no revisit"
		[ -z "$(comm -23 refers ids)" ] || fail "crawl $crawl: a revisit names a record that is gone: $(comm -23 refers ids)"
	done
	echo "# $(grep -c '^' kills.log) kills, $left inside a chunk's WARC" >&3
	((left > 0)) || fail "no kill landed inside a chunk's WARC: $(cat kills.log)"
}

@test "WARC_DEDUPE: a second crawl of the same site is identical-payload revisits against the first" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c1 WARC=1 WARC_DEDUPE=digests.db
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c2 WARC=1 WARC_DEDUPE=digests.db
	archive_ok c1
	archive_ok c2
	local pages revisits
	pages=$(wc -l <c2/pages.jsonl)
	zcat c2/warc/*.warc.gz | tr -d '\r' >c2.warc
	revisits=$(grep -ac '^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest$' c2.warc)
	[ "$revisits" = "$pages" ] || fail "$revisits revisits for $pages pages"
	if zcat c1/warc/*.warc.gz | grep -aq '^WARC-Type: revisit'; then fail "the first crawl has revisits"; fi
	# Resolved against the first crawl's files, the second replays whole.
	sc-warc records c1/warc/*.warc.gz c2/warc/*.warc.gz 2>/dev/null |
		jq -r 'select(.url | endswith("/robots.txt") | not) | "\(.url) \(.body | length)"' | sort -u >bodies
	[ "$(wc -l <bodies)" = "$pages" ]
	if grep -q ' 0$' bodies; then fail "a revisit not resolved: $(cat bodies)"; fi
}

@test "WARC_DEDUPE: a chunk's archive removed takes its digests with it, so the redone chunk is no revisit of a lost record" {
	seeds_for 127.0.0.1 >seeds.txt
	mkdir fake
	cat >fake/sc-parse <<-EOF
		#!/bin/bash
		if [[ ! -e $PWD/failed ]]; then : >$PWD/failed; cat >/dev/null; exit 1; fi
		exec $(command -v sc-parse) "\$@"
	EOF
	chmod +x fake/sc-parse
	PATH=$PWD/fake:$PATH run -2 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c WARC=1 WARC_DEDUPE=digests.db
	[ "$(sqlite3 digests.db 'SELECT count(*) FROM payloads')" = 0 ]
	# The archive a kill -9 left (an .open) is forgotten too.
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=k WARC=1 WARC_DEDUPE=digests.db
	[ "$(sqlite3 digests.db 'SELECT count(*) FROM payloads')" = 1 ]
	rm k/round-0/chunk-0-0000.jsonl k/round-0/round-0-chunk-0-0000.cdxj k/round-0/done k/pages.jsonl
	rm -r k/warc
	mv k/round-0/round-0-chunk-0-0000.warc.gz k/round-0/round-0-chunk-0-0000.warc.gz.open
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=k WARC=1 WARC_DEDUPE=digests.db
	if zcat k/warc/*.warc.gz | grep -aq '^WARC-Type: revisit'; then fail "the redone chunk is a revisit of its lost self"; fi
	PATH=$PWD/fake:$PATH run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c WARC=1 WARC_DEDUPE=digests.db
	archive_ok c
	archived_once c
	# Every page of c is a response but the one k archived before.
	[ "$(zcat c/warc/*.warc.gz | grep -ac '^WARC-Type: revisit')" = 1 ]
}

@test "recrawl: 304s are server-not-modified revisits, in the recrawl's own WARCs and DIR/recrawl/warc/" {
	{
		echo "$SC_BASE/conditional/a"
		echo "$SC_BASE/conditional/b"
		echo "$SC_BASE/page/1"
	} >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c WARC=1
	run -0 crawl_make recrawl SEEDS=seeds.txt DEPTH=0 DIR=c WARC=1
	run -0 jq -r '"\(.url | sub(".*:[0-9]+"; "")) \(.status)"' c/recrawl/pages.jsonl
	assert_line "/conditional/a 304"
	assert_line "/conditional/b 304"
	assert_line "/page/1 200"
	[ -e c/recrawl/round-0/recrawl-round-0-chunk-0-0000.warc.gz ]
	[ -e c/recrawl/warc/recrawl-round-0-chunk-0-0000.warc.gz ]
	archive_ok c/recrawl
	zcat c/recrawl/warc/*.warc.gz | tr -d '\r' >r.warc
	[ "$(grep -ac '^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified$' r.warc)" = 2 ]
	# The crawl's own archive is untouched.
	archive_ok c
	if zcat c/warc/*.warc.gz | grep -aq '^WARC-Type: revisit'; then fail "revisits in the crawl's WARC"; fi
}

@test "retry: the retried records point into a retry WARC of their own; the chunk's first WARC stays" {
	{
		seeds_for 127.0.0.1
		echo "http://127.0.0.1:$SC_PORT/flaky/crawl-warc-retry?fail=1"
	} >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c WARC=1 FETCH_ARGS='--retries 0'
	[ "$(jq -s 'map(select(.ok == false)) | length' c/pages.jsonl)" = 1 ]
	local first
	first=$(md5sum <c/round-0/round-0-chunk-0-0000.warc.gz)
	# A retry WARC left by a retry killed before its commit is not taken.
	echo junk >c/round-0/round-0-chunk-0-0000-retry-1.warc.gz
	run -0 crawl_make retry SEEDS=seeds.txt DEPTH=1 DIR=c WARC=1 RETRY_ARGS='--retry-base 10'
	[ ! -e c/warc ]
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c WARC=1
	[ "$(md5sum <c/round-0/round-0-chunk-0-0000.warc.gz)" = "$first" ]
	run -0 jq -r 'select(.url | contains("flaky")) | "\(.ok) \(.warc.filename)"' c/pages.jsonl
	assert_output "true round-0-chunk-0-0000-retry-1.warc.gz"
	run -0 jq -r 'select(.url | endswith("/page/1")) | .warc.filename' c/pages.jsonl
	assert_output "round-0-chunk-0-0000.warc.gz"
	[ -e c/warc/round-0-chunk-0-0000-retry-1.warc.gz ]
	archive_ok c
	# The failed attempt stays in the chunk's first WARC, the retried one in
	# the retry's: two responses for the flaky URL, one for every other page.
	sc-warc records c/warc/*.warc.gz 2>/dev/null | jq -r '"\(.url) \(.status)"' | grep -v robots.txt | sort >got
	[ "$(grep -c flaky got)" = 2 ]
	[ "$(grep -v flaky got | sort | uniq -d | wc -l)" = 0 ]
}

# records_and_info FILE: "TYPE ID WARCINFO-ID DATE" of every record of
# FILE ("-": no WARC-Warcinfo-ID), read by python3's gzip, not ours.
records_and_info() {
	python3 - "$1" <<-'PY'
		import gzip, sys
		data = gzip.open(sys.argv[1]).read()
		i = 0
		while i < len(data):
		    head_end = data.index(b"\r\n\r\n", i)
		    fields = {}
		    for line in data[i:head_end].split(b"\r\n")[1:]:
		        k, _, v = line.decode().partition(": ")
		        fields[k] = v
		    print(fields["WARC-Type"], fields["WARC-Record-ID"], fields.get("WARC-Warcinfo-ID", "-"), fields["WARC-Date"])
		    i = head_end + 4 + int(fields["Content-Length"]) + 4
	PY
}

@test "provenance: warcinfo's operator, isPartOf, description and robots, every record's WARC-Warcinfo-ID, a contact in the User-Agent, via from the frontier, dates to the ms that replay as fetched_at; report counts robots.txt apart" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c CHUNK=4 WARC=1 CONTACT=mailto:crawl@example.org \
		'WARC_OPERATOR=Jane Doe <jane@example.org>' WARC_COLLECTION=docs-2026 'WARC_DESCRIPTION=a test crawl'
	archive_ok c
	archived_once c
	local f info
	for f in c/warc/*.warc.gz; do
		records_and_info "$f" >recs
		info=$(awk '$1 == "warcinfo" { print $2 }' recs)
		[ "$(wc -l <<<"$info")" = 1 ] || fail "$f: not one warcinfo: $info"
		awk -v info="$info" '$1 != "warcinfo" && $3 != info { bad = 1; print } END { exit bad }' recs ||
			fail "$f: a record without its warcinfo's id"
		awk '$4 !~ /^[0-9-]+T[0-9:]+\.[0-9][0-9][0-9]Z$/ { bad = 1; print } END { exit bad }' recs ||
			fail "$f: a WARC-Date without milliseconds"
		zcat "$f" | tr -d '\r' >all.warc
		grep -qx 'operator: Jane Doe <jane@example.org>' all.warc
		grep -qx 'isPartOf: docs-2026' all.warc
		grep -qx 'description: a test crawl' all.warc
		grep -qx 'robots: obey (as sc-fetch)' all.warc
		if grep -a '^User-Agent: ' all.warc | grep -vqxF "User-Agent: sc-fetch/$(sc-fetch --version | awk '{ print $2; exit }') (+mailto:crawl@example.org)"; then
			fail "a request without the contact: $(grep -a '^User-Agent: ' all.warc | sort -u)"
		fi
	done
	# via: each round-1 page's metadata names the page that linked to it.
	zcat c/warc/round-1-*.warc.gz | tr -d '\r' >r1.warc
	jq -r 'select(.from) | "\(.url) \(.from)"' c/round-1/urls.jsonl | sort >want.via
	[ -s want.via ] || fail "no from in round 1's URLs"
	awk '/^WARC-Type: metadata$/ { m = 1 } m && /^WARC-Target-URI: / { u = $2 } m && /^via: / { print u, $2; m = 0 }' r1.warc |
		grep -v '/robots.txt ' | sort >got.via
	diff -u want.via got.via || fail "via is not the frontier's from"
	# Replayed, each page has the fetched_at it had live.
	jq -r '"\(.url) \(.fetched_at)"' c/pages.jsonl | sort >live.at
	sc-warc records c/warc/*.warc.gz 2>/dev/null | jq -r 'select(.url | endswith("/robots.txt") | not) | "\(.url) \(.fetched_at)"' | sort >replayed.at
	diff -u live.at replayed.at || fail "fetched_at changed in replay"
	# The fixture has no robots.txt: its 404 is no error, in the report
	# as at the crawl's end.
	run -0 crawl_make report DIR=c
	assert_line --regexp '^requests +[0-9]+ \(ok [0-9]+, errors 0, retries 0, robots.txt 1\)$'
	assert_line --regexp '^robots +1 robots.txt requests \(404 1; not in ok or errors\), 0 URLs refused$'
	assert_line --regexp '^throughput .*body bytes, decoded\)$'
	# Refused before anything runs: a series of files per chunk, a contact
	# that is no URL.
	run -2 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=d WARC=1 'FETCH_ARGS=--warc-max-size 100000'
	assert_output --partial "FETCH_ARGS has --warc-max-size, which WARC=1 cannot use"
	run -2 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=d CONTACT=crawl@example.org
	assert_output --partial 'CONTACT="crawl@example.org" is not an http(s) URL or a mailto: address'
	[ ! -e d ]
}

@test "a chunk killed after robots.txt is cached, before its commit: the redone chunk archives robots.txt again" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c WARC=1
	[ "$(sqlite3 c/robots.cache 'SELECT count(*) FROM robots WHERE archive LIKE "%/round-0-chunk-0-0000.warc.gz"')" = 1 ]
	# What a kill -9 leaves then: the cached rule, the chunk's archive an
	# .open, no records.
	rm c/round-0/chunk-0-0000.jsonl c/round-0/round-0-chunk-0-0000.cdxj c/round-0/done c/pages.jsonl
	rm -r c/warc
	mv c/round-0/round-0-chunk-0-0000.warc.gz c/round-0/round-0-chunk-0-0000.warc.gz.open
	sc_server_reset
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c WARC=1
	[ "$(sc_server_log '[.[] | select(.path == "/robots.txt")] | length')" = 1 ] || fail "robots.txt not fetched again"
	run -3 --separate-stderr sc-warc records c/warc/*.warc.gz # robots.txt 404: not ok
	assert_line --partial "\"url\":\"$SC_BASE/robots.txt\""
	archive_ok c
	# A fetch after it, the rule's archive there, takes the rule from the
	# cache; the archive gone, it asks again.
	sc_server_reset
	echo "$SC_BASE/page/2" | sc-fetch -q --robots --robots-cache c/robots.cache --warc x.warc.gz >/dev/null 2>&1
	[ "$(sc_server_log '[.[] | select(.path == "/robots.txt")] | length')" = 0 ] || fail "the cached rule was not taken"
	rm c/round-0/round-0-chunk-0-0000.warc.gz
	echo "$SC_BASE/page/2" | sc-fetch -q --robots --robots-cache c/robots.cache --warc y.warc.gz >/dev/null 2>&1
	[ "$(sc_server_log '[.[] | select(.path == "/robots.txt")] | length')" = 1 ] || fail "a rule whose archive is gone was taken"
}
