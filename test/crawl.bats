#!/usr/bin/env bats
# share/sc/crawl.mk (sc-crawl(7)): a crawl of the fixture server's /page/N
# link graph in rounds, checked against the graph worked out by hand
# (test/lib/page-graph.awk) and against the server's own log: the exact
# page set at each depth, each URL requested once, resume after kills at
# random moments, make -j with the per-host cap held, status and retry.
#
# ROBOTS is left at its default (1): robots.txt requests are left out of
# the server-side counts (requested_urls).

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/crawl'

bats_require_minimum_version 1.5.0

HOSTS=(127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.8 127.0.0.9)

setup_file() {
	# robots.txt files per host for the SITEMAPS test; a host without one
	# gets a 404, which allows everything.
	mkdir -p "$BATS_FILE_TMPDIR/robots"
	sc_server_start --loopback 9 --robots-dir "$BATS_FILE_TMPDIR/robots"
}

teardown_file() {
	sc_server_stop
}

setup() {
	rm -f "$BATS_FILE_TMPDIR"/robots/*
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
}

# ---- failures first ----

@test "a missing seeds file fails the crawl and leaves no round behind" {
	run -2 crawl_make SEEDS=nope.txt DEPTH=1 DIR=c
	[[ $output == *"nope.txt"* ]] || fail "$output"
	[ ! -e c/round-0/urls.jsonl ]
	[ ! -e c/pages.jsonl ]
}

@test "a setting that is not a number is refused by name before anything runs" {
	run -2 crawl_make DEPTH=two DIR=c
	[[ $output == *"DEPTH=two is not a number"* ]] || fail "$output"
	run -2 crawl_make CHUNK=0 DIR=c
	[[ $output == *"CHUNK must be at least 1"* ]] || fail "$output"
	[ ! -e c ]
}

@test "a DIR or SEEDS make cannot use as a file name is refused by name, before anything runs" {
	run -2 crawl_make DEPTH=1 "DIR=my crawl"
	[[ $output == *'DIR="my crawl": make cannot have a blank in a file name'* ]] || fail "$output"
	run -2 crawl_make DEPTH=1 DIR=c:1
	[[ $output == *"DIR=\"c:1\": make cannot have a ':' in a file name"* ]] || fail "$output"
	run -2 crawl_make DEPTH=1 DIR=
	[[ $output == *"DIR is empty"* ]] || fail "$output"
	run -2 crawl_make DEPTH=1 DIR=c SEEDS=
	[[ $output == *"SEEDS is empty"* ]] || fail "$output"
	[ ! -e c ] && [ ! -e my ] && [ ! -e c:1 ] && [ ! -e /round-0 ]
}

@test "pages.jsonl of a crawl that has not run says so instead of crawling" {
	run -2 crawl_make DEPTH=1 DIR=c c/pages.jsonl
	[[ $output == *"round 1 is not finished: run make crawl first"* ]] || fail "$output"
}

# ---- the crawl ----

@test "depths 0 to 3: exactly the pages of the link graph, each URL requested once" {
	seeds_for 127.0.0.1 >seeds.txt
	for depth in 0 1 2 3; do
		sc_server_reset
		run -0 crawl_make SEEDS=seeds.txt DEPTH=$depth DIR=c$depth CHUNK=4
		expected_pages "http://127.0.0.1:$SC_PORT" $depth >expected
		crawled_pages c$depth >crawled
		diff -u expected crawled || fail "depth $depth: pages differ"
		# Server side: every page requested exactly once, nothing else.
		cut -d' ' -f2 expected | sort >expected.urls
		requested_urls >requested
		diff -u expected.urls requested || fail "depth $depth: requests differ"
		[ "$(jq -s 'map(select(.ok != true)) | length' c$depth/pages.jsonl)" = 0 ]
	done
	# The rounds are on disk as sc-crawl(7) says.
	[ "$(wc -l <c3/round-2/urls.jsonl)" = "$(grep -c '^2 ' expected)" ]
	[ -e c3/round-3/done ]
}

@test "CSV=1 also writes pages.csv, one row per page and a header" {
	seeds_for 127.0.0.1 >seeds.txt
	# FIELDS replaces sc-parse's default fields: links[] is what is followed.
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c CSV=1 FIELDS="-f heading=h1 -f 'links[]=a::attr(href)'"
	[ "$(wc -l <c/pages.csv)" = 7 ]
	head -1 c/pages.csv | grep -q ',heading,links$'
	[ "$(jq -r .heading c/pages.jsonl | sort | head -1)" = "Page 0" ]
}

@test "a second make is a no-op: no request is made again" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c
	sc_server_reset
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c
	[ "$(requested_urls | wc -l)" = 0 ]
}

# sitemaps PATH...: 127.0.0.1's robots.txt names a sitemap index, which
# names a sitemap of PATH...  The fixture server serves files only as
# robots.txt: 127.0.0.3's is the sitemap index, 127.0.0.4's the sitemap
# (sc-parse goes by content).
sitemaps() {
	local robots=$BATS_FILE_TMPDIR/robots base=http://127.0.0.1:$SC_PORT p urls=
	local ns='xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
	printf 'User-agent: *\nAllow: /\nSitemap: http://127.0.0.3:%s/robots.txt\n' "$SC_PORT" >"$robots/127.0.0.1"
	printf '<?xml version="1.0"?>\n<sitemapindex %s><sitemap><loc>http://127.0.0.4:%s/robots.txt</loc></sitemap></sitemapindex>\n' \
		"$ns" "$SC_PORT" >"$robots/127.0.0.3"
	for p in "$@"; do urls+="<url><loc>$base$p</loc></url>"; done
	printf '<?xml version="1.0"?>\n<urlset %s>%s</urlset>\n' "$ns" "$urls" >"$robots/127.0.0.4"
}

@test "SITEMAPS=1: the URLs of the sitemaps robots.txt names, through a sitemap index, are seeds too" {
	local robots=$BATS_FILE_TMPDIR/robots base=http://127.0.0.1:$SC_PORT
	sitemaps /page/7 /page/11
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c SITEMAPS=1
	rm -f "$robots"/127.0.0.*
	printf '0 %s\n' "$base/page/1" "$base/page/7" "$base/page/11" | LC_ALL=C sort >expected
	crawled_pages c >crawled
	diff -u expected crawled
	# Without SITEMAPS the same crawl is the seed alone.
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c0
	[ "$(jq -r .url c0/pages.jsonl)" = "$base/page/1" ]
}

@test "SITEMAPS=1 WARC=1: the sitemaps step's fetches are archived too, in DIR/warc/ and its index" {
	local robots=$BATS_FILE_TMPDIR/robots base=http://127.0.0.1:$SC_PORT
	sitemaps /page/7
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c SITEMAPS=1 WARC=1
	rm -f "$robots"/127.0.0.*
	# The step's three fetches, each its own archive: the seeds' robots.txt,
	# the sitemap index (level 0), the sitemap (level 1).
	local f
	for f in sitemaps-robots sitemaps-level-0 sitemaps-level-1; do
		[ -e "c/sitemaps/$f.warc.gz" ] && [ -e "c/sitemaps/$f.cdxj" ] || fail "no $f archive"
		[ "$(stat -c %h "c/warc/$f.warc.gz")" -ge 2 ] || fail "c/warc/$f.warc.gz is not a link to the step's"
		run -0 sc-warc check "c/warc/$f.warc.gz"
	done
	# (Each robots.txt twice, as sc-fetch --robots exchanged it: once for its
	# rules, once as the URL asked.  The fixture serves the sitemaps as
	# robots.txt.)
	sc-warc records c/warc/sitemaps-*.warc.gz 2>/dev/null | jq -r .url | sort -u >step.urls
	printf '%s\n' "$base/robots.txt" "http://127.0.0.3:$SC_PORT/robots.txt" \
		"http://127.0.0.4:$SC_PORT/robots.txt" | sort >expected
	diff -u expected step.urls
	# The index is every archive's, sorted: the sitemap's response is in it.
	sc-warc cdx c/warc/*.warc.gz | LC_ALL=C sort | diff -u - c/warc/index.cdxj
	grep -q "\"url\": \"http://127.0.0.4:$SC_PORT/robots.txt\"" c/warc/index.cdxj ||
		grep -q "\"url\":\"http://127.0.0.4:$SC_PORT/robots.txt\"" c/warc/index.cdxj ||
		fail "the sitemap's capture is not in index.cdxj"
	# The pages are archived as always, each once.
	[ "$(sc-warc records c/warc/round-0-*.warc.gz 2>/dev/null | jq -r .url | grep -c '/page/')" = 2 ]
}

@test "PER_HOST defaults to C: one host may use the whole concurrency of its chunk" {
	for i in $(seq 1 8); do echo "http://127.0.0.1:$SC_PORT/delay/400?i=$i"; done >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c C=4
	[ "$(jq -c 'select(.ok)' c/pages.jsonl | wc -l)" = 8 ]
	# Eight slow requests queued at once: with the old default of 2 the
	# server never saw more than 2 at a time.
	max=$(sc_server_stats '[.hosts[].max_inflight] | max')
	[ "$max" -ge 3 ] && [ "$max" -le 4 ] || fail "in-flight max $max, want 3 or 4 (C=4)"
}

@test "make -j 4 over 8 hosts: the same pages, each host's in-flight maximum within PER_HOST" {
	seeds_for "${HOSTS[@]}" >seeds.txt
	run -0 crawl_make -j 4 SEEDS=seeds.txt DEPTH=3 DIR=c CHUNK=20 C=16 PER_HOST=2
	check_crawl 3 "${HOSTS[@]}"
	# Chunks ran side by side (more than one chunk in a round), and every
	# host of a round is in exactly one of them.
	[ "$(ls c/round-2/chunk-*.urls | wc -l)" -gt 1 ]
	for f in c/round-2/chunk-*.urls; do jq -r .host "$f" | sort -u; done | sort | uniq -d >split
	[ ! -s split ] || fail "hosts split over chunks: $(cat split)"
	max=$(sc_server_stats '[.hosts[].max_inflight] | max')
	[ "$max" -ge 1 ] && [ "$max" -le 2 ] || fail "per-host in-flight max $max > PER_HOST 2"
	[ "$(sc_server_stats '.hosts | length')" = 8 ]
}

@test "ROUND_MAX_PER_HOST: a host's URLs beyond the cap wait for later rounds; the same pages, each requested once" {
	seeds_for "${HOSTS[@]:0:3}" >seeds.txt
	run -0 crawl_make -j 2 SEEDS=seeds.txt DEPTH=3 DIR=c CHUNK=2 ROUND_MAX_PER_HOST=2
	check_crawl 3 "${HOSTS[@]:0:3}"
	# No round fetched more than 2 URLs of a host; rounds went on after
	# DEPTH for the deferred ones, and the last has no URLs.
	local r last
	for r in c/round-*; do
		cat /dev/null "$r"/chunk-*.urls | jq -r .host | sort | uniq -c | awk '$1 > 2' >over
		[ ! -s over ] || fail "$r: $(cat over)"
	done
	[ -s c/round-3/deferred.jsonl ]
	last=$(ls -d c/round-* | sed 's/.*-//' | sort -n | tail -1)
	[ "$last" -gt 4 ] && [ ! -s "c/round-$last/urls.jsonl" ]
	# Finished: make again asks for nothing; status lists every round.
	sc_server_reset
	run -0 crawl_make SEEDS=seeds.txt DEPTH=3 DIR=c ROUND_MAX_PER_HOST=2
	[ "$(sc_server_log length)" = 0 ]
	run -0 crawl_make status SEEDS=seeds.txt DEPTH=3 DIR=c ROUND_MAX_PER_HOST=2
	assert_line --partial "round $last: 0 urls"
	assert_line --regexp "^round 3: [0-9]+ urls \([0-9]+ deferred to the next round\), "
	# pages.jsonl is remade from every round, with the cap or without.
	rm c/pages.jsonl
	run -0 crawl_make SEEDS=seeds.txt DEPTH=3 DIR=c c/pages.jsonl
	crawled_pages c >crawled
	diff -u expected crawled
}

# Runs the crawl of "${args[@]}" into DIR=c, killing make's whole process
# group at random moments (mixed SIGINT and SIGKILL) and starting the same
# make again each time, 11 times at most, then lets it finish.  Leaves kills.N (the kills of this
# crawl), and per kill K: log-length.K (server log entries at that moment)
# and done.K (the chunk files finished by then).
killed_crawl() {
	local pid sig ms tries runs=0
	kills=0
	while ((runs < 80)); do
		runs=$((runs + 1))
		# A background job starts with SIGINT ignored (no job control
		# here), which make and its children would keep: restore it.
		setsid env --default-signal=INT make -f "$CRAWL_MK" --no-print-directory -j 2 "${args[@]}" \
			>>make.log 2>&1 3>&- &
		pid=$!
		if ((kills < 11 && RANDOM % 2)); then
			# A moment inside a chunk's fetch: once sc-sink's temporary
			# file is there (bounded wait), then 0-150 ms more.
			for ((tries = 0; tries < 150; tries++)); do
				compgen -G 'c/round-*/.*chunk-*' >/dev/null && break
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.02
			done
			ms=$((RANDOM % 150))
		else
			ms=$((RANDOM % 700))
		fi
		((kills < 11)) && sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
		if ((kills < 11)) && kill -0 "$pid" 2>/dev/null; then
			compgen -G 'c/round-*/.*chunk-*' >/dev/null && in_chunk=$((in_chunk + 1))
			sig=KILL
			((RANDOM % 2)) && sig=INT
			# (it may have finished in between)
			kill -s "$sig" -- "-$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			# Every process of the group is gone before looking.
			for ((tries = 0; tries < 200; tries++)); do
				kill -0 -- "-$pid" 2>/dev/null || break
				sleep 0.05
			done
			kills=$((kills + 1))
			echo "kill $kills: SIG$sig after $ms ms" >>kills.log
			sc_server_log length >"log-length.$kills"
			ls c/round-*/chunk-*.jsonl >"done.$kills" 2>/dev/null || true
			continue
		fi
		wait "$pid" || fail "make failed after $kills kills: $(tail -20 make.log)"
		return 0
	done
	fail "the crawl did not finish in $runs runs"
}

# The crawl ends with the uninterrupted crawl's pages, and after each kill
# no URL of a chunk that was finished at that kill is requested again.
# Crawls are repeated (afresh) until 20 kills have landed in all.
@test "interrupted at 20+ random moments and resumed: same pages, no finished chunk fetched again" {
	local seed=${SC_CRAWL_KILL_SEED:-$((($(date +%s%N) / 1000) % 32768))}
	echo "# kill seed $seed (SC_CRAWL_KILL_SEED=$seed to repeat)" >&3
	RANDOM=$seed
	seeds_for "${HOSTS[@]}" >seeds.txt
	for h in "${HOSTS[@]}"; do expected_pages "http://$h:$SC_PORT" 2; done | sort >expected
	cut -d' ' -f2 expected | sort >expected.urls
	local args total=0 crawls=0 kills k n in_chunk=0
	while ((total < 20)); do
		crawls=$((crawls + 1))
		args=(SEEDS=seeds.txt DEPTH=2 DIR=c CHUNK=20 PER_HOST=1 "FETCH_ARGS=--delay 50")
		# Every third crawl with a per-round host cap: rounds after DEPTH,
		# and URLs deferred from one round file to the next; every third
		# with DEFER_AFTER under the delay: a host held past it hands its
		# URLs from each sc-fetch to the next round.
		case $((crawls % 3)) in
		2) args+=(DEFER_AFTER=30) ;;
		0) args+=(ROUND_MAX_PER_HOST=2) ;;
		esac
		rm -rf c log-length.* done.*
		sc_server_reset
		killed_crawl
		total=$((total + kills))

		crawled_pages c >crawled
		diff -u expected crawled || fail "pages differ (seed $seed, crawl $crawls)"
		requested_urls | sort -u >requested
		diff -u expected.urls requested || fail "requests differ (seed $seed, crawl $crawls)"

		# URL -> the chunk file that fetched it (not one that deferred it).
		for f in c/round-*/chunk-*.jsonl; do
			jq -r --arg c "$f" 'select(.error.kind != "deferred") | "\(.url) \($c)"' "$f"
		done | sort >chunk-of
		[ "$(wc -l <chunk-of)" = "$(wc -l <expected)" ] || fail "chunk-of: $(wc -l <chunk-of) URLs"
		if [[ ${args[6]-} == DEFER_AFTER=* ]]; then
			compgen -G 'c/round-*/held.jsonl' >/dev/null || fail "DEFER_AFTER deferred nothing (seed $seed)"
		fi
		sc_server_log '.[] | select(.path != "/robots.txt") | "http://\(.host)\(.path)"' |
			jq -r . >log.urls
		for ((k = 1; k <= kills; k++)); do
			n=$(cat "log-length.$k")
			# Requests after kill k whose chunk was finished at kill k.
			tail -n +$((n + 1)) log.urls | sort | join - chunk-of | awk '{ print $2 }' | sort -u >chunks-after
			sort "done.$k" | comm -12 chunks-after - >refetched
			[ ! -s refetched ] || fail "after kill $k (seed $seed), finished chunks fetched again: $(cat refetched)"
		done
		echo "# crawl $crawls${args[6]:+ (${args[6]})}: $kills kills ($in_chunk so far during a chunk), $(sort log.urls | uniq -d | wc -l) URLs requested again (all in interrupted chunks)" >&3
	done
}

@test "status: rounds, chunks done and pending, pages ok and failed" {
	{ seeds_for 127.0.0.1; echo "http://127.0.0.1:$SC_PORT/status/404"; } >seeds.txt
	run -0 crawl_make status SEEDS=seeds.txt DEPTH=1 DIR=c
	assert_line "round 0: not started"
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c
	run -0 crawl_make status SEEDS=seeds.txt DEPTH=1 DIR=c
	assert_line "round 0: 2 urls, 1 chunks, 1 done, 0 pending; pages 1 ok, 1 failed (done)"
	assert_line "round 1: 5 urls, 1 chunks, 1 done, 0 pending; pages 5 ok, 0 failed (done)"
	assert_line "total: 2 chunks, 2 done, 0 pending; pages 6 ok, 1 failed"
	# A chunk lost (or never finished) is pending, and make redoes it alone.
	rm c/round-1/chunk-*.jsonl c/round-1/done c/pages.jsonl
	run -0 crawl_make status SEEDS=seeds.txt DEPTH=1 DIR=c
	assert_line "round 1: 5 urls, 1 chunks, 0 done, 1 pending; pages 0 ok, 0 failed (running)"
	sc_server_reset
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c
	[ "$(requested_urls | wc -l)" = 5 ]
}

@test "retry: the failures of every round fetched again in place, pages.jsonl remade" {
	{ seeds_for 127.0.0.1; echo "http://127.0.0.1:$SC_PORT/flaky/crawl-retry?fail=1"; } >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c FETCH_ARGS='--retries 0'
	[ "$(jq -s 'map(select(.ok == false)) | length' c/pages.jsonl)" = 1 ]
	run -0 crawl_make retry SEEDS=seeds.txt DEPTH=1 DIR=c RETRY_ARGS='--retry-base 10'
	[ ! -e c/pages.jsonl ]
	run -0 crawl_make status SEEDS=seeds.txt DEPTH=1 DIR=c
	assert_line "total: 2 chunks, 2 done, 0 pending; pages 7 ok, 0 failed"
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c
	[ "$(jq -s 'map(select(.ok == true)) | length' c/pages.jsonl)" = 7 ]
	[ "$(jq -s 'map(select(.url | contains("flaky")))[0].attempts' c/pages.jsonl)" = 2 ]
	# Only the failure was asked for again.
	[ "$(sc_server_stats '.paths["/flaky/crawl-retry"]')" = 2 ]
	[ "$(requested_urls | wc -l)" = 8 ]
}

@test "recrawl: every page again into DIR/recrawl, conditional on the ETag and Last-Modified of its record" {
	seeds_for 127.0.0.1 >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c
	# Validators as sc-fetch --headers records them, on one page.
	jq -c 'if .url | endswith("/page/1") then .headers = {"etag": "\"v1\"", "last-modified": "Sat, 28 Nov 2026 10:00:00 GMT"} else . end' \
		c/round-0/chunk-0-0000.jsonl >tmp && mv tmp c/round-0/chunk-0-0000.jsonl
	sc_server_reset
	run -0 crawl_make recrawl SEEDS=seeds.txt DEPTH=1 DIR=c
	[ "$(requested_urls | wc -l)" = 6 ]
	diff <(jq -r .url c/pages.jsonl | sort) <(jq -r .url c/recrawl/pages.jsonl | sort)
	run -0 jq -c 'select(.request) | .request.headers' c/recrawl/pages.jsonl
	assert_output '{"If-None-Match":"\"v1\"","If-Modified-Since":"Sat, 28 Nov 2026 10:00:00 GMT"}'
	# Depth and seed travel on; a second recrawl into the same folder is a no-op.
	[ "$(jq -s 'map(.depth) | add' c/recrawl/pages.jsonl)" = 5 ]
	sc_server_reset
	run -0 crawl_make recrawl SEEDS=seeds.txt DEPTH=1 DIR=c
	[ "$(requested_urls | wc -l)" = 0 ]
}

@test "COOKIES=FILE seeds the crawl's one jar (DIR/cookies.txt, 0600), which its sc-fetch use; make cookies prints it" {
	printf '# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tok-me\n' >seed.txt
	echo "http://127.0.0.1:$SC_PORT/account" >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 COOKIES=seed.txt
	assert_equal "$(jq -r '[.status, .final_url] | @tsv' c/pages.jsonl)" "$(printf '200\thttp://127.0.0.1:%s/account' "$SC_PORT")"
	[ "$(stat -c %a c/cookies.txt)" = 600 ]
	run -0 crawl_make --no-print-directory -s DIR=c COOKIES=seed.txt cookies
	assert_output c/cookies.txt
	# Without the jar the account sends the crawler to its login.
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=d PROGRESS=0
	assert_equal "$(jq -r .final_url d/pages.jsonl)" "http://127.0.0.1:$SC_PORT/login"
	run -2 crawl_make DIR=d cookies
	assert_output --partial 'COOKIES is not set'
}

@test "LOGIN: the script logs in before anything is fetched, LOGIN_CHECK holds it; a login that fails stops the crawl" {
	export SITE=http://127.0.0.1:$SC_PORT PASS=secret
	cat >login.sh <<'SH'
#!/bin/sh
# The login pipeline of sc-fetch(1): the form, its fields filled, posted.
echo "$SITE/login" | sc-fetch -q --cookies "$1" | sc-parse --forms |
	jq -c 'select(.form.user != null) | .form.user = "me" | .form.pass = env.PASS' |
	sc-fetch -q --cookies "$SC_COOKIES" >/dev/null
SH
	chmod +x login.sh
	echo "$SITE/account" >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 LOGIN=./login.sh \
		LOGIN_CHECK="$SITE/account" LOGIN_URL="$SITE/login"
	assert_equal "$(jq -r '[.status, .final_url] | @tsv' c/pages.jsonl)" "$(printf '200\t%s/account' "$SITE")"
	# A wrong password: the check fails, the crawl stops before round 0.
	sc_server_reset
	PASS=wrong run -2 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=d PROGRESS=0 LOGIN=./login.sh \
		LOGIN_CHECK="$SITE/account" LOGIN_URL="$SITE/login"
	# (its last sc-fetch exits 3: the 403 is a record not ok)
	assert_output --partial "LOGIN=./login.sh failed (status 3; d/login.log): nothing was fetched"
	[ ! -e d/pages.jsonl ]
	[ -z "$(find d -name 'chunk-*.jsonl')" ]
	# A script that succeeds without logging in: the check stops it.
	run -2 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=e PROGRESS=0 LOGIN=true \
		LOGIN_CHECK="$SITE/account" LOGIN_URL="$SITE/login"
	assert_output --partial "LOGIN_CHECK=$SITE/account: not logged in after LOGIN=true"
	[ -z "$(find e -name 'chunk-*.jsonl')" ]
}
