#!/usr/bin/env bats
# share/sc/crawl.sh, the steps of crawl.mk (sc-crawl(7)), each called on
# its own, as crawl.mk calls them: the settings in the environment, the
# step and its arguments on the command line.  The chunk and worker-job
# tests put stand-ins for sc-fetch and sc-parse first on PATH, which
# write the arguments they were given to files and pass their input on,
# so that what reaches each program is seen word by word.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

STEPS=$BATS_TEST_DIRNAME/../share/sc/crawl.sh
CRAWL_MK=$BATS_TEST_DIRNAME/../share/sc/crawl.mk

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	export LC_ALL=C
	# The settings as a step run by hand takes them: crawl.mk's, with its
	# defaults for the rest (crawl.sh holds none).
	eval "$(make -sf "$CRAWL_MK" settings DIR=c DEPTH=1 C=4 PER_HOST=2 SEEDS=seeds.txt)"
	mkdir -p c/round-0
}

# ---- the settings ----

@test "settings: crawl.mk prints every setting, its defaults included, as shell lines a step run by hand takes" {
	# (From a clean environment: setup's settings would be taken as the user's.)
	run -0 env -i PATH="$PATH" make -sf "$CRAWL_MK" settings C=3 'FETCH_ARGS=-A "a b"'
	assert_line "export C=3"
	assert_line "export PER_HOST=3"
	assert_line "export DEFER_AFTER=10000"
	assert_line "export METRICS=1"
	assert_line "export WORKERS=''"
	assert_line 'export FETCH_ARGS=-A\ \"a\ b\"'
	assert_line 'export RETRY_ARGS=-A\ \"a\ b\"'
	# One line per setting crawl.mk lists, and CRAWL_SETTINGS naming them.
	local names
	names=$(sed -n 's/^SETTINGS += \([A-Z_]*\)=.*/\1/p' "$CRAWL_MK" | paste -sd ' ')
	assert_line "export CRAWL_SETTINGS=${names// /\\ }\\ CRAWL_MK"
	assert_equal "${#lines[@]}" "$(($(wc -w <<<"$names") + 2))"
}

@test "a step run without crawl.mk's settings, or without one of them, stops and says so" {
	run -1 env -u CRAWL_SETTINGS "$STEPS" status
	assert_output --partial "CRAWL_SETTINGS: is not set: the steps take the settings of crawl.mk"
	run -1 env -u DEPTH "$STEPS" status
	assert_output "crawl.sh: DEPTH is not set: the steps take the settings of crawl.mk (by hand: eval the output of make -sf crawl.mk settings first)"
	# An empty one is a setting (FIELDS= is crawl.mk's default).
	FIELDS='' run -0 "$STEPS" status
}

# stand_ins [FETCH_STATUS]: sc-fetch and sc-parse that write their
# arguments, one a line, to fetch.args and parse.args in this folder and
# copy stdin to stdout; sc-fetch then exits FETCH_STATUS (default 0).
stand_ins() {
	mkdir -p fake
	cat >fake/sc-fetch <<-EOF
		#!/bin/sh
		printf '%s\n' "\$@" >"$PWD/fetch.args"
		cat
		exit ${1:-0}
	EOF
	cat >fake/sc-parse <<-EOF
		#!/bin/sh
		printf '%s\n' "\$@" >"$PWD/parse.args"
		cat
	EOF
	cat >fake/sc-render <<-EOF
		#!/bin/sh
		printf '%s\n' "\$@" >"$PWD/render.args"
		cat
	EOF
	chmod +x fake/sc-fetch fake/sc-parse fake/sc-render
	PATH=$PWD/fake:$PATH
}

# urls HOST:COUNT...: URL records, COUNT of each HOST, in that order.
urls() {
	local spec i
	for spec in "$@"; do
		for ((i = 1; i <= ${spec#*:}; i++)); do
			printf '{"url":"http://%s/%d","host":"%s","depth":0}\n' "${spec%:*}" "$i" "${spec%:*}"
		done
	done
}

# ---- commit-or-remove ----

# A temporary chunk of two records and sc-sink's summary of it.
tmp_chunk() {
	local second='{"url":"http://a/2","ok":false}'
	[[ -z ${1:-} ]] || second=$1
	printf '%s\n' '{"url":"http://a/1","ok":true}' "$second" >c/tmp
	printf '{"records":%s,"ok":1}\n' "${2:-2}" >c/sum
}

@test "commit-or-remove: a complete file becomes the chunk, status 3 (records not ok) included" {
	tmp_chunk
	run -0 "$STEPS" commit-or-remove c/out c/tmp c/sum 2 status 0 3 0
	[ ! -e c/tmp ]
	[ "$(wc -l <c/out)" = 2 ]
}

@test "commit-or-remove: a short file, a failed program or a shutdown removes it and fails" {
	tmp_chunk '' 1
	run -1 "$STEPS" commit-or-remove c/out c/tmp c/sum 2 status 0 0 0
	assert_output --partial "c/out not finished (status 0 0 0); make again redoes it"
	[ ! -e c/tmp ] && [ ! -e c/out ]
	local st
	for st in "1 0 0" "130 0 0" "143 0 0" "0 0 1" "0 2 0"; do
		tmp_chunk
		# shellcheck disable=SC2086 # the statuses are words
		run -1 "$STEPS" commit-or-remove c/out c/tmp c/sum 2 status $st
		[ ! -e c/tmp ] && [ ! -e c/out ] || fail "status $st: committed"
	done
	# No summary at all (sc-sink never ran).
	tmp_chunk
	rm c/sum
	run -1 "$STEPS" commit-or-remove c/out c/tmp c/sum 2 status 0 0 0
	[ ! -e c/tmp ] && [ ! -e c/out ]
}

@test "commit-or-remove: a cancelled record is looked for only where the statuses cannot tell (CHECK records)" {
	local cancelled='{"url":"http://a/2","ok":false,"error":{"kind":"cancelled"}}'
	tmp_chunk "$cancelled"
	run -1 "$STEPS" commit-or-remove c/out c/tmp c/sum 2 records 0 0
	[ ! -e c/tmp ] && [ ! -e c/out ]
	tmp_chunk "$cancelled"
	run -0 "$STEPS" commit-or-remove c/out c/tmp c/sum 2 status 0 0 0
	[ -e c/out ]
}

# ---- split ----

@test "split: every host in one chunk, at most CHUNK URLs unless one host has more; chunks.mk counts them" {
	urls a:3 b:1 c:2 d:4 >c/round-0/urls.jsonl
	CHUNK=3 run -0 "$STEPS" split 0
	run -0 cat c/round-0/chunks.mk
	# Listed with the largest host first (d, 4 URLs; then a, 3; then c, 2):
	# under politeness the long chunks must start first.
	assert_output "$(printf '%s\n' 'CHUNKS := 0-0002 0-0000 0-0001' 'N.0-0000 := 3' 'N.0-0001 := 3' 'N.0-0002 := 4')"
	[ "$(jq -r .host c/round-0/chunk-0-0000.urls | sort -u)" = a ]
	[ "$(jq -r .host c/round-0/chunk-0-0001.urls | sort -u | paste -sd ' ')" = "b c" ]
	[ "$(wc -l <c/round-0/chunk-0-0002.urls)" = 4 ]
	[ ! -e c/round-0/chunks.mk.tmp ]
}

@test "split: one big host among many small ones: its chunk is listed first, whatever its place in the round" {
	# Twelve hosts of 2 URLs, then one of 30 (last in sc-frontier's order):
	# under politeness its chunk lasts longest, so make -j must start it
	# first, not after the small ones.
	urls a:2 b:2 c:2 d:2 e:2 f:2 g:2 h:2 i:2 j:2 k:2 l:2 big:30 >c/round-0/urls.jsonl
	CHUNK=6 run -0 "$STEPS" split 0
	run -0 sed -n 's/^CHUNKS := //p' c/round-0/chunks.mk
	local first=${output%% *}
	[ "$(wc -w <<<"$output")" = 5 ]
	[ "$(jq -r .host "c/round-0/chunk-$first.urls" | sort -u)" = big ]
	# The small ones follow in the order they were made.
	[ "${output#* }" = "0-0000 0-0001 0-0002 0-0003" ]
}

@test "split: with WORKERS a host goes to one shard; a split again replaces the last one's files" {
	urls a:2 b:2 c:2 d:2 e:2 f:2 >c/round-0/urls.jsonl
	: >c/round-0/chunk-7-0000.urls
	echo stale >c/round-0/deferred.jsonl
	WORKERS="w1 w2" run -0 "$STEPS" split 0
	[ ! -e c/round-0/chunk-7-0000.urls ] && [ ! -e c/round-0/deferred.jsonl ]
	# Both shards used, and no host in two chunks.
	ls c/round-0/chunk-0-*.urls c/round-0/chunk-1-*.urls
	for f in c/round-0/chunk-*.urls; do jq -r .host "$f" | sort -u; done | sort | uniq -d >twice
	[ ! -s twice ]
	[ "$(cat c/round-0/chunk-*.urls | wc -l)" = 12 ]
}

@test "split: ROUND_MAX_PER_HOST keeps a host's first URLs in the round, the rest in deferred.jsonl" {
	urls a:3 b:1 >c/round-0/urls.jsonl
	ROUND_MAX_PER_HOST=2 run -0 "$STEPS" split 0
	[ "$(jq -r .url c/round-0/chunk-0-0000.urls | paste -sd ' ')" = "http://a/1 http://a/2 http://b/1" ]
	[ "$(jq -r .url c/round-0/deferred.jsonl)" = http://a/3 ]
}

# ---- status ----

@test "status: rounds not started, running and done; chunks pending; pages ok and failed" {
	mkdir -p c/round-1 c/round-2
	urls a:3 >c/round-0/urls.jsonl
	printf '%s\n' 'CHUNKS := 0-0000 0-0001' >c/round-0/chunks.mk
	printf '%s\n' '{"url":"http://a/1","ok":true}' '{"url":"http://a/2","ok":false}' >c/round-0/chunk-0-0000.jsonl
	urls b:1 >c/round-1/urls.jsonl
	urls b:1 >c/round-1/deferred.jsonl
	printf '%s\n' 'CHUNKS := 0-0000' >c/round-1/chunks.mk
	printf '%s\n' '{"url":"http://b/1","ok":true}' >c/round-1/chunk-0-0000.jsonl
	: >c/round-1/done
	# Rounds 0 to DEPTH (1), and round 2, which exists.
	run -0 "$STEPS" status
	assert_output "$(printf '%s\n' \
		"round 0: 3 urls, 2 chunks, 1 done, 1 pending; pages 1 ok, 1 failed (running)" \
		"round 1: 1 urls (1 deferred to the next round), 1 chunks, 1 done, 0 pending; pages 1 ok, 0 failed (done)" \
		"round 2: not started" \
		"total: 3 chunks, 2 done, 1 pending; pages 2 ok, 1 failed")"
}

# ---- chunk ----

@test "chunk: the users' FIELDS and FETCH_ARGS reach the programs as the shell words they are, after ours" {
	stand_ins
	urls a:2 >c/round-0/chunk-0-0000.urls
	FIELDS="-f 'title=h1' -f 'links[]=a::attr(href)'" FETCH_ARGS="-A 'my bot/1' --delay \$((2 * 25))" \
		run -0 "$STEPS" chunk 0 0-0000 2
	[ "$(wc -l <c/round-0/chunk-0-0000.jsonl)" = 2 ]
	[ ! -e c/round-0/.chunk-0-0000.jsonl.tmp ]
	run -0 cat fetch.args
	# METRICS=1 and DEFER_AFTER=10000 are crawl.mk's defaults.
	assert_output "$(printf '%s\n' -c 4 --per-host 2 --defer-after 10000 --robots --robots-cache "$PWD/c/robots.cache" --origin-state "$PWD/c/origins.db" --headers -A 'my bot/1' --delay 50)"
	run -0 cat parse.args
	assert_output "$(printf '%s\n' -f title=h1 -f 'links[]=a::attr(href)')"
	# The summary sc-sink wrote is the one counted.
	grep -q '^{"records":2,' c/round-0/chunk-0-0000.sum
}

@test "chunk: a chunk whose fetch was shut down (143), or short of its count, is not made" {
	stand_ins 143
	urls a:2 >c/round-0/chunk-0-0000.urls
	run -1 "$STEPS" chunk 0 0-0000 2
	assert_output --partial "c/round-0/chunk-0-0000.jsonl not finished (status 143 0 0)"
	[ ! -e c/round-0/chunk-0-0000.jsonl ] && [ ! -e c/round-0/.chunk-0-0000.jsonl.tmp ]
	stand_ins 0
	run -1 "$STEPS" chunk 0 0-0000 3
	[ ! -e c/round-0/chunk-0-0000.jsonl ]
	# Without a count, the URLs are counted.
	run -0 "$STEPS" chunk 0 0-0000
	[ -e c/round-0/chunk-0-0000.jsonl ]
}

@test "retry-chunk: sc-retry gets --robots and the crawl's robots cache with ROBOTS=1, not with ROBOTS=0; RETRY_ARGS last" {
	stand_ins
	cp fake/sc-fetch fake/sc-retry
	sed -i 's/fetch[.]args/retry.args/' fake/sc-retry
	printf '%s\n' '{"url":"http://a/1","ok":true}' \
		'{"url":"http://a/2","ok":false,"error":{"kind":"robots","message":"robots.txt unreachable"}}' >c/round-0/chunk-0-0000.jsonl
	RETRY_ARGS='--retries 1' run -0 "$STEPS" retry-chunk 0 0-0000
	run -0 cat retry.args
	# A URL that an unreachable robots.txt refused is asked for again only
	# through robots.txt.
	assert_output "$(printf '%s\n' -q -c 4 --per-host 2 --origin-state "$PWD/c/origins.db" --robots --robots-cache "$PWD/c/robots.cache" --retries 1)"
	[ "$(wc -l <c/round-0/chunk-0-0000.jsonl)" = 2 ]
	ROBOTS=0 run -0 "$STEPS" retry-chunk 0 0-0000
	run -0 cat retry.args
	assert_output "$(printf '%s\n' -q -c 4 --per-host 2 --origin-state "$PWD/c/origins.db")"
}

# ---- a worker's job ----

@test "worker-job: one self-contained shell command: our options quoted, the users' words for the worker's shell, its own robots cache and origin state" {
	stand_ins
	local job
	job=$(WORKERS="w1 2/w2" FETCH_ARGS="-A bot/\$SC_WORKER -H 'X-A: b c'" FIELDS="-f 'a b=h1'" PARSE_ARGS=--quiet-ish "$STEPS" worker-job)
	urls a:2 >in
	# As a worker runs it: a POSIX shell, only sc's programs on PATH.
	run -0 env SC_WORKER=w7 XDG_CACHE_HOME="$PWD/cache" sh -c "$job" <in
	assert_output "$(cat in)"
	run -0 cat fetch.args
	assert_output "$(printf '%s\n' -c 4 --per-host 2 --defer-after 10000 --robots --headers --robots-cache "$PWD/cache/sc/robots.cache" --origin-state "$PWD/cache/sc/origins.db" -A bot/w7 -H 'X-A: b c')"
	[ -d cache/sc ]
	run -0 cat parse.args
	assert_output "$(printf '%s\n' -f 'a b=h1' --quiet-ish)"
	# Where the cache cannot be made, the job goes without it.
	run -0 env XDG_CACHE_HOME=/proc/nope sh -c "$job" <in
	run -1 grep -q -- --robots-cache fetch.args
	run -1 grep -q -- --origin-state fetch.args
	# ROBOTS=0: no robots options at all.
	job=$(WORKERS=w1 ROBOTS=0 "$STEPS" worker-job)
	run -0 env XDG_CACHE_HOME="$PWD/cache" sh -c "$job" <in
	run -1 grep -q -- --robots fetch.args
	grep -q -- --origin-state fetch.args
	# ADAPTIVE=0: the programs are told so.
	job=$(WORKERS=w1 ADAPTIVE=0 "$STEPS" worker-job)
	run -0 sh -c "$job" <in
	grep -qx -- --no-adaptive fetch.args
}

@test "worker-job with RENDER=1: sc-render between sc-fetch and sc-parse, with the crawl's politeness (PER_HOST, CONTACT, the worker's origin state and robots cache) and RENDER_ARGS as the worker's words" {
	stand_ins
	local job
	job=$(WORKERS=w1 RENDER=1 RENDER_C=3 CONTACT=mailto:ops@example.org RENDER_ARGS="--delay 250 -A bot/\$SC_WORKER" "$STEPS" worker-job)
	urls a:2 >in
	run -0 env SC_WORKER=w7 XDG_CACHE_HOME="$PWD/cache" sh -c "$job" <in
	assert_output "$(cat in)"
	run -0 cat render.args
	assert_output "$(printf '%s\n' -c 3 --per-host 2 --contact mailto:ops@example.org --robots --robots-cache "$PWD/cache/sc/robots.cache" --origin-state "$PWD/cache/sc/origins.db" --delay 250 -A bot/w7)"
	grep -qx -- --contact fetch.args
}

@test "worker-job N ID with WARC=1: sc-fetch writes the chunk's archive under its local name, in the job's folder; N ID are needed" {
	stand_ins
	local job
	job=$(WORKERS=w1 WARC=1 "$STEPS" worker-job 2 1-0003)
	urls a:2 >in
	run -0 env XDG_CACHE_HOME="$PWD/cache" sh -c "$job" <in
	assert_output "$(cat in)"
	run -0 cat fetch.args
	assert_output "$(printf '%s\n' -c 4 --per-host 2 --defer-after 10000 --robots --headers --warc round-2-chunk-1-0003.warc.gz --warc-cdx --robots-cache "$PWD/cache/sc/robots.cache" --origin-state "$PWD/cache/sc/origins.db")"
	run -1 env WORKERS=w1 WARC=1 "$STEPS" worker-job
	assert_output --partial "worker-job N ID with WARC=1"
}

@test "worker-job: it fails when sc-parse does, and succeeds on sc-parse's 3 (records not ok)" {
	stand_ins
	local job
	job=$(WORKERS=w1 "$STEPS" worker-job)
	printf '#!/bin/sh\ncat\nexit 3\n' >fake/sc-parse
	run -0 sh -c "$job" </dev/null
	printf '#!/bin/sh\ncat\nexit 1\n' >fake/sc-parse
	run -1 sh -c "$job" </dev/null
}

@test "an unknown step, or none, is refused" {
	run -1 "$STEPS" nope
	assert_output "crawl.sh: no step nope"
	run -1 "$STEPS"
	assert_output --partial "usage: crawl.sh STEP"
}
