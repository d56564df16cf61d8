#!/usr/bin/env bats
# Scale-out (sc-crawl(7), WORKERS): each round's chunks fetched and parsed
# on remote workers through GNU parallel -S over a real sshd started here
# (test/lib/sshd.bash), workers being Host aliases w1, w2, w3 of it, each
# sending SC_WORKER=wN; the fixture server serves 8 origins (127.0.0.2-9)
# and logs each request's User-Agent, which carries the worker's name.
# Also the Hadoop Streaming shape run locally: mapper | partition | sort |
# reducer, with KeyFieldBasedPartitioner's hash.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/crawl'
load 'lib/sshd'
load 'lib/warc'

bats_require_minimum_version 1.5.0

HOSTS=(127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.8 127.0.0.9)

setup_file() {
	sc_server_start --loopback 9
	if ! sshd_start w1 w2 w3; then
		export SSHD_SKIP
	fi
}

teardown_file() {
	sshd_stop
	sc_server_stop
}

setup() {
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
	seeds_for "${HOSTS[@]}" >seeds.txt
	for h in "${HOSTS[@]}"; do expected_pages "http://$h:$SC_PORT" 2; done | sort >expected
	cut -d' ' -f2 expected | sort >expected.urls
}

# "HOST AGENT" of every page request the server saw.
host_agents() {
	sc_server_log '.[] | select(.path != "/robots.txt") | "\(.host) \(.agent)"' | jq -r . | sort -u
}

# Checks a finished crawl in c: the local crawl's pages (the link graph),
# each URL requested once (unless $1 = again), each host served by exactly
# one worker, $2 workers used, the per-host cap held.
check_worker_crawl() {
	crawled_pages c >crawled
	diff -u expected crawled
	requested_urls | sort -u >requested
	diff -u expected.urls requested
	if [[ $1 != again ]]; then
		requested_urls | uniq -d >twice
		[ ! -s twice ] || fail "requested twice: $(cat twice)"
	fi
	host_agents >agents
	awk '{ print $1 }' agents | uniq -d >shared
	[ ! -s shared ] || fail "hosts served by more than one worker: $(cat shared)"
	[ "$(wc -l <agents)" = 8 ]
	[ "$(awk '{ print $2 }' agents | sort -u | wc -l)" = "$2" ]
	! grep -v ' sc-worker/w[123]$' agents || fail "a request not made by a worker"
	local max
	max=$(sc_server_stats '[.hosts[].max_inflight] | max')
	[ "$max" -le 2 ] || fail "per-host in flight $max > PER_HOST 2"
}

ARGS=(SEEDS=seeds.txt DEPTH=2 DIR=c PER_HOST=2 'FETCH_ARGS=-A sc-worker/$$SC_WORKER')

@test "2 workers: the local crawl's pages, each host on one worker, per-host cap held" {
	need_sshd
	run -0 crawl_make -j 2 "${ARGS[@]}" WORKERS="w1 w2"
	check_worker_crawl once 2
	# The mapping is the documented one: chunk S-NNNN runs on worker S.
	[ -n "$(ls c/round-2/chunk-0-*.jsonl)" ] && [ -n "$(ls c/round-2/chunk-1-*.jsonl)" ]
	# A worker keeps robots.txt in its own cache (the workers' HOME here is
	# the sshd's): a host's robots.txt is asked for once in the crawl, not
	# once a round.
	[ -s "$SSHD_DIR/home/.cache/sc/robots.cache" ]
	sc_server_log '.[] | select(.path == "/robots.txt") | .host' | jq -r . | sort | uniq -c |
		awk '$1 > 1' >again
	[ ! -s again ] || fail "robots.txt asked for more than once: $(cat again)"
}

@test "3 workers, sshlogin syntax N/host: the same pages, each host on one worker" {
	need_sshd
	run -0 crawl_make -j 3 "${ARGS[@]}" WORKERS="w1 2/w2 w3"
	check_worker_crawl once 3
}

# "WORKER ROUND/CHUNK FIRST_MS LAST_MS": when each chunk's requests began
# and ended on the server, and which worker made them.
chunk_spans() {
	local f
	for f in c/round-*/chunk-*.urls; do
		jq -r --arg c "${f#c/}" '"\(.url) \($c)"' "$f"
	done | sort >chunk-of
	sc_server_log '.[] | select(.path != "/robots.txt") | "http://\(.host)\(.path) \(.agent) \(.t_ms)"' |
		jq -r . | sort | join - chunk-of |
		awk '{ k = $2 " " $4; if (!(k in lo) || $3 < lo[k]) lo[k] = $3; if ($3 > hi[k]) hi[k] = $3 }
		     END { for (k in lo) print k, lo[k], hi[k] }' | sort -k1,1 -k3,3n
}

# The most chunks worker $1 (any worker, without $1) had running at once,
# from chunk_spans on stdin.
most_at_once() {
	awk -v w="sc-worker/$1" '$1 == w || w == "sc-worker/" { print $3, 1; print $4, -1 }' |
		sort -k1,1n -k2,2n | awk '{ n += $2; if (n > max) max = n } END { print max + 0 }'
}

@test "job slots N/host: a worker runs at most N chunks at once, however large make -j is" {
	need_sshd
	run -0 crawl_make -j 6 "${ARGS[@]}" CHUNK=1 WORKERS="1/w1 2/w2" \
		'FETCH_ARGS=-A sc-worker/$$SC_WORKER --delay 150'
	check_worker_crawl once 2
	chunk_spans >spans
	# Several chunks per worker per round, so that make -j 6 could have
	# run them side by side.
	[ "$(grep -c ' round-2/chunk-0-' spans)" -ge 3 ] || fail "$(cat spans)"
	[ "$(grep -c ' round-2/chunk-1-' spans)" -ge 3 ] || fail "$(cat spans)"
	local w1 w2
	w1=$(most_at_once w1 <spans)
	w2=$(most_at_once w2 <spans)
	[ "$w1" = 1 ] || fail "w1 (1 slot) ran $w1 chunks at once: $(cat spans)"
	# Two slots are two: the slots bound the chunks, they do not serialise them.
	[ "$w2" = 2 ] || fail "w2 (2 slots) ran $w2 chunks at once: $(cat spans)"
}

@test "WORKERS without make -j: a round's chunks still run on every worker at once" {
	need_sshd
	run -0 crawl_make "${ARGS[@]}" CHUNK=1 WORKERS="w1 w2" 'FETCH_ARGS=-A sc-worker/$$SC_WORKER --delay 150'
	check_worker_crawl once 2
	chunk_spans >spans
	local all w1
	all=$(most_at_once <spans)
	w1=$(most_at_once w1 <spans)
	[ "$all" = 2 ] || fail "$all chunks at once over 2 workers of 1 slot: $(cat spans)"
	[ "$w1" = 1 ] || fail "w1 ran $w1 chunks at once: $(cat spans)"
}

# The remote sc-fetch of worker $1, and the sshd session process above it.
session_of_worker() {
	local p q comm
	for p in $(pgrep -x sc-fetch); do
		{ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "SC_WORKER=$1" || continue
		q=$p
		while [[ $q -gt 1 ]]; do
			q=$(awk '{ print $4 }' "/proc/$q/stat" 2>/dev/null) || break
			comm=$(cat "/proc/$q/comm" 2>/dev/null)
			if [[ $comm == sshd ]]; then
				echo "$q"
				return 0
			fi
		done
	done
	return 1
}

# make_killing_w1 ARGS...: runs the crawl make with ARGS, kills worker w1's
# ssh session while it fetches round 1 (waiting at most 30 s for that), and
# checks that make then failed, saying a chunk is not finished.
make_killing_w1() {
	setsid env --default-signal=INT make -f "$CRAWL_MK" --no-print-directory -j 2 "$@" \
		>make.log 2>&1 3>&- &
	local pid=$! session= tries
	for ((tries = 0; tries < 600; tries++)); do
		if [[ -e c/round-1/chunks.mk && ! -e c/round-1/done ]] && session=$(session_of_worker w1) &&
			kill -KILL "$session" 2>/dev/null; then
			break
		fi
		session=
		sleep 0.05
	done
	[ -n "$session" ] || fail "w1 never fetched round 1: $(cat make.log)"
	local status=0
	wait "$pid" || status=$?
	[ "$status" -ne 0 ] || fail "make succeeded although a worker died: $(cat make.log)"
	grep -q 'not finished' make.log
}

@test "a worker killed mid-round: make fails, make again finishes with the same pages, only the killed chunk fetched again" {
	need_sshd
	local args=("${ARGS[@]}" WORKERS="w1 w2" 'FETCH_ARGS=-A sc-worker/$$SC_WORKER --delay 300')
	make_killing_w1 "${args[@]}"
	local n
	n=$(sc_server_log length)
	ls c/round-*/chunk-*.jsonl >done-at-kill
	[ ! -e c/round-1/done ]
	# No half-written chunk: every chunk file has a record per URL.
	for f in $(cat done-at-kill); do
		[ "$(wc -l <"$f")" = "$(wc -l <"${f%.jsonl}.urls")" ]
	done

	run -0 crawl_make -j 2 "${args[@]}"
	check_worker_crawl again 2
	# After the kill, no URL of a chunk finished before it was asked for.
	for f in c/round-*/chunk-*.urls; do
		jq -r --arg c "${f%.urls}.jsonl" '"\(.url) \($c)"' "$f"
	done | sort >chunk-of
	sc_server_log '.[] | select(.path != "/robots.txt") | "http://\(.host)\(.path)"' | jq -r . >log.urls
	tail -n +$((n + 1)) log.urls | sort | join - chunk-of | awk '{ print $2 }' | sort -u >chunks-after
	sort done-at-kill | comm -12 chunks-after - >refetched
	[ ! -s refetched ] || fail "finished chunks fetched again: $(cat refetched)"
	# What was asked for twice is all in w1's (shard 0) round-1 chunk.
	sort log.urls | uniq -d | join - chunk-of | awk '{ print $2 }' | sort -u >twice
	[ ! -s twice ] || [ "$(cat twice)" = "$(ls c/round-1/chunk-0-*.jsonl)" ] || fail "$(cat twice)"
}

# warc_crawl_ok DIR: every file of DIR/warc/ passes sc-warc check and
# warcio (DIR/warc/index.cdxj is warcio's lines of all of them), no .open
# file is left, and each page of DIR/pages.jsonl has exactly one response
# record there (robots.txt's left out), which its warc member points at.
warc_crawl_ok() {
	local f files=("$1"/warc/*.warc.gz) url o l
	[[ -e ${files[0]} ]] || fail "no WARC in $1/warc"
	warc_checked "${files[@]}" >warcio.sorted
	diff -u warcio.sorted "$1/warc/index.cdxj" || fail "index.cdxj is not warcio's CDXJ"
	if compgen -G "$1/round-*/*.open" >/dev/null; then fail "an .open file is left"; fi
	sc-warc records "${files[@]}" 2>/dev/null | jq -r .url | grep -v '/robots.txt$' | sort >archived
	jq -r .url "$1/pages.jsonl" | sort >pages.urls
	diff -u pages.urls archived || fail "not every page archived exactly once"
	while read -r url f o l; do
		[[ $f != null && -e $1/warc/$f ]] || fail "$url: its warc member names $f, not a file of $1/warc"
		[ "$(tail -c +$((o + 1)) "$1/warc/$f" | head -c "$l" | gunzip | sed -n 's/^WARC-Target-URI: //p' | tr -d '\r')" = "$url" ] ||
			fail "$url: its warc member $f $o $l is not its response"
	done < <(jq -r '"\(.url) \(.warc.filename) \(.warc.offset) \(.warc.length)"' "$1/pages.jsonl")
}

@test "WARC=1 with 2 workers: each chunk's archive comes back beside it, whole; each page archived once" {
	need_sshd
	warc_readers_present
	run -0 crawl_make -j 2 "${ARGS[@]}" WORKERS="w1 w2" WARC=1
	check_worker_crawl once 2
	local chunks=(c/round-*/chunk-*.jsonl) warcs=(c/warc/*.warc.gz)
	[ "${#warcs[@]}" = "${#chunks[@]}" ] || fail "${#warcs[@]} WARCs for ${#chunks[@]} chunks"
	[ -e c/round-2/round-2-chunk-0-0000.warc.gz ] && [ -e c/round-2/round-2-chunk-1-0000.cdxj ]
	warc_crawl_ok c
	# WARC_DEDUPE's local index cannot be shared by the workers: refused.
	run -2 crawl_make "${ARGS[@]}" DIR=d WORKERS="w1 w2" WARC=1 WARC_DEDUPE=dedupe.db
	assert_output --partial "WARC_DEDUPE cannot be used with WORKERS"
	[ ! -e d ]
}

@test "WARC=1, a worker killed mid-round: make fails, make again gives whole archives, each page once" {
	need_sshd
	warc_readers_present
	local args=("${ARGS[@]}" WORKERS="w1 w2" WARC=1 'FETCH_ARGS=-A sc-worker/$$SC_WORKER --delay 300')
	make_killing_w1 "${args[@]}"
	# The killed chunk left no archive: a committed chunk has its own.
	local f c
	for f in c/round-1/round-1-chunk-*; do
		[[ -e $f ]] || continue
		c=${f##*/round-1-}
		[ -e "c/round-1/${c%%.*}.jsonl" ] || fail "$f without its chunk"
	done
	run -0 crawl_make -j 2 "${args[@]}"
	check_worker_crawl again 2
	local chunks=(c/round-*/chunk-*.jsonl) warcs=(c/warc/*.warc.gz)
	[ "${#warcs[@]}" = "${#chunks[@]}" ] || fail "${#warcs[@]} WARCs for ${#chunks[@]} chunks"
	warc_crawl_ok c
}

# Hadoop Streaming's KeyFieldBasedPartitioner on field 1: Java's
# h = 31 * h + byte over the key (int arithmetic), (h & MAX_INT) % R.
partition() {
	awk -F '\t' -v R="$1" -v dir="$2" '
		BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
		{
			h = 0
			for (i = 1; i <= length($1); i++)
				h = (h * 31 + ord[substr($1, i, 1)]) % 4294967296
			print >(dir "/part-" ((h % 2147483648) % R))
		}'
}

@test "Hadoop Streaming shape, locally: mapper | partition | sort -k1,1 | reducer: every URL once, each host in one reducer" {
	cut -d' ' -f2 expected | sc-frontier -q --seeds >urls.jsonl
	[ "$(wc -l <urls.jsonl)" = "$(wc -l <expected)" ]
	mkdir parts
	sh "$SC_REPO_ROOT/share/sc/hadoop-map.sh" <urls.jsonl | partition 3 parts
	local p pids=()
	for p in parts/part-*; do
		LC_ALL=C sort -t "$(printf '\t')" -k1,1 "$p" |
			sh "$SC_REPO_ROOT/share/sc/hadoop-reduce.sh" -c 8 --per-host 2 >"$p.out" 2>"$p.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	[ "$(ls parts/*.out | wc -l)" -ge 2 ]
	cat parts/*.out | jq -r .url | sort >fetched
	diff -u expected.urls fetched
	requested_urls >requested
	diff -u expected.urls requested
	# Each host's records all came out of one reducer.
	for p in parts/*.out; do jq -r .host "$p" | sort -u; done | sort | uniq -d >shared
	[ ! -s shared ]
	[ "$(jq -s 'map(select(.ok and .title != null)) | length' parts/*.out)" = "$(wc -l <expected)" ]
	grep -q '^reporter:status:{' parts/part-0.err
	! grep -v '^reporter:status:' parts/*.err
	[ "$(sc_server_stats '[.hosts[].max_inflight] | max')" -le 2 ]
}
