#!/usr/bin/env bats
# crawl.mk REQUISITES=1 and make wacz (sc-crawl(7), "Requisites", "WACZ"):
# a crawl of test/requisites/site (pages on 127.0.0.1, their stylesheets,
# fonts, scripts and images on an asset host, 127.0.0.2, whose robots.txt
# disallows /cdn/private/) and of Debian's Python policy documentation
# (/usr/share/doc/python3, a Sphinx tree: the nearest thing here to the
# Python documentation the issue names), with WARC=1 and a delay.  One
# crawl for the file (setup_file); then every requisite archived once and
# never a page, the WACZ checked by Python's zipfile and npm's warcio, and
# the pages replayed in ReplayWeb.page in Chromium, pixel for pixel the
# live page.  Serial: it asserts the delay between the asset host's
# requests, and Chromium wants the cores.
# bats file_tags=serial

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/warc'
load 'lib/crawl'

bats_require_minimum_version 1.5.0

REPLAY="$BATS_TEST_DIRNAME/lib/wacz-replay.mjs"

setup_file() {
	local d=$BATS_FILE_TMPDIR
	mkdir -p "$d/site" "$d/robots"
	printf 'User-agent: *\nDisallow: /cdn/private/\n' >"$d/robots/127.0.0.2"
	sc_server_start --loopback 2 --root "$d/site" --robots-dir "$d/robots"
	python3 "$BATS_TEST_DIRNAME/requisites/make-site.py" "$BATS_TEST_DIRNAME/requisites/site" "$d/site" \
		"http://127.0.0.2:$SC_PORT"
	cp -RL /usr/share/doc/python3 "$d/site/python3"
	printf '%s\n' "$SC_BASE/index.html" "$SC_BASE/python3/index.html" >"$d/seeds.txt"
	cd "$d" || return 1
	crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c WARC=1 REQUISITES=1 PROGRESS=0 \
		FETCH_ARGS='--delay 150' >crawl.out 2>&1 || {
		cat crawl.out >&2
		return 1
	}
	sc_server_log >log.json
	crawl_make SEEDS=seeds.txt DEPTH=2 DIR=c WARC=1 REQUISITES=1 wacz >wacz.out 2>&1 || {
		cat wacz.out >&2
		return 1
	}
}

teardown_file() {
	sc_server_stop
}

setup() {
	warc_readers_present
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "REQUISITES=1: every requisite archived once from either host, none followed as a page, robots.txt and the delay held" {
	local cdn="http://127.0.0.2:$SC_PORT" u
	# The pages: the two trees' HTML, nothing of their requisites.
	jq -r 'select(.ok) | .url' c/pages.jsonl | sort >pages
	printf '%s\n' "$SC_BASE/about.html" "$SC_BASE/index.html" "$SC_BASE/python3/index.html" >expected
	diff -u expected pages
	# What the fixture's pages need, each fetched (from either host), in
	# levels: the page's, its stylesheet's @imports and url()s, theirs.
	for u in cdn/site.css cdn/fonts/fixture.ttf cdn/img/icon.png cdn/app.js cdn/widget.html \
		cdn/img/hero-1x.png cdn/img/hero-2x.png cdn/img/wide.png cdn/img/narrow.png \
		cdn/base.css cdn/print.css cdn/img/header.png cdn/img/tile.png; do
		echo "$cdn/$u"
	done >wanted
	printf '%s\n' "$SC_BASE/img/band.png" "$SC_BASE/img/dot.png" \
		"$SC_BASE/python3/_static/nature.css" "$SC_BASE/python3/_static/basic.css" \
		"$SC_BASE/python3/_static/jquery.js" "$SC_BASE/python3/_static/file.png" >>wanted
	sort -o wanted wanted
	jq -r 'select(.ok) | .url' c/round-*/requisites-*.jsonl | sort >fetched
	comm -23 wanted fetched >missing
	[[ ! -s missing ]] || fail "requisites not fetched: $(cat missing)"
	# robots.txt of the asset host holds: its private image is refused,
	# never asked for; the feed (rel=alternate) and <a href>s are no
	# requisites.
	jq -se --arg u "$cdn/cdn/private/hidden.png" 'map(select(.url == $u)) | length == 1 and .[0].error.kind == "robots"' \
		c/round-0/requisites-0.jsonl
	run jq -r '.[] | .path' log.json
	refute_line --partial /cdn/private/
	refute_line /feed.xml
	# Every URL asked for once (robots.txt once per host), the asset
	# host's robots.txt before its first asset.
	jq -r '.[] | "\(.host)\(.path)"' log.json | sort | uniq -d >twice
	[[ ! -s twice ]] || fail "asked for more than once: $(cat twice)"
	jq -e --arg h "127.0.0.2:$SC_PORT" '[.[] | select(.host == $h)] | sort_by(.t_ms) | .[0].path == "/robots.txt"' log.json
	# The delay holds on the asset host (the smallest gap between two of
	# its requests).
	local gap
	gap=$(jq -r --arg h "127.0.0.2:$SC_PORT" '[.[] | select(.host == $h) | .t_ms] | sort |
		[range(1; length) as $i | .[$i] - .[$i - 1]] | min' log.json)
	awk -v g="$gap" 'BEGIN { exit !(g >= 145) }' || fail "asset host requests $gap ms apart, under --delay 150"
	# Archived once each, with a hop: E metadata record per requisite; the
	# archives read by warcio (exit 0, nothing on stderr) and sc-warc check.
	warc_checked c/warc/*.warc.gz >/dev/null
	sc-warc records c/warc/*.warc.gz 2>/dev/null | jq -r .url | sort | uniq -d >dup
	[[ ! -s dup ]] || fail "archived twice: $(cat dup)"
	sc-warc records c/warc/*.warc.gz 2>/dev/null | jq -r .url | sort >archived
	comm -23 wanted archived >unarchived
	[[ ! -s unarchived ]] || fail "requisites not archived: $(cat unarchived)"
	local hops
	hops=$(zcat c/warc/*requisites-*.warc.gz | grep -ac '^hop: E')
	[ "$hops" -eq "$(jq -s 'map(select(.status != null)) | length' c/round-*/requisites-*.jsonl)" ]
}

@test "make wacz: WACZ 1.1.1 (hashes, stored WARCs, pages, CDXJ), read by warcio; sc-warc wacz without --pages lists the same pages" {
	[ -s c/crawl.wacz ]
	python3 "$BATS_TEST_DIRNAME/lib/wacz-check.py" c/crawl.wacz unpacked >pages.listed
	jq -r .url pages.listed | sort >listed
	jq -r 'select(.ok) | .url' c/pages.jsonl | sort >pages
	diff -u pages listed
	jq -se 'map(select(.url | endswith("/index.html")) | .title | length > 0) | length == 2 and all' pages.listed
	# The main page a replay tool may open first: the first page listed,
	# a seed (wacz-check.py: a listed page, with its ts).
	unzip -p c/crawl.wacz datapackage.json >dp.json
	jq -e --arg first "$(jq -r .url pages.listed | head -1)" '.mainPageUrl == $first' dp.json
	grep -qxF "$(jq -r .mainPageUrl dp.json)" seeds.txt
	# The WARCs of the package are the crawl's, byte for byte, and read by
	# npm's warcio; the index is sc-warc cdx's of them.
	local f
	for f in c/warc/*.warc.gz; do cmp "$f" "unpacked/${f##*/}"; done
	warc_checked unpacked/*.warc.gz >/dev/null
	unzip -p c/crawl.wacz indexes/index.cdx >index.cdx
	sc-warc cdx unpacked/*.warc.gz | diff -u - index.cdx
	# From the archives alone: the same pages, the widget (an HTML
	# requisite, hop: E) left out.
	run -0 sc-warc wacz alone.wacz c/warc/*.warc.gz
	local warcs=(c/warc/*.warc.gz)
	jq -e --argjson n "${#warcs[@]}" '.wacz == "alone.wacz" and .files == $n and .pages == 3' <<<"$output"
	python3 "$BATS_TEST_DIRNAME/lib/wacz-check.py" alone.wacz unpacked2 | jq -r .url | sort >alone
	diff -u pages alone
	# --main-page chooses among the pages; a URL that is no page is refused.
	run -0 sc-warc wacz -q --pages c/pages.jsonl --main-page "$SC_BASE/python3/index.html" main.wacz c/warc/*.warc.gz
	python3 "$BATS_TEST_DIRNAME/lib/wacz-check.py" main.wacz unpacked3 >/dev/null
	unzip -p main.wacz datapackage.json | jq -e --arg u "$SC_BASE/python3/index.html" '.mainPageUrl == $u'
	run -1 sc-warc wacz --main-page "$SC_BASE/no-such-page.html" nomain.wacz c/warc/*.warc.gz
	assert_output --partial 'not a page of the package'
	[ ! -e nomain.wacz ]
	# A bad use is refused before anything is written.
	run -2 sc-warc wacz out.wacz c/warc/round-0-chunk-0-0000.warc.gz c/round-0/round-0-chunk-0-0000.warc.gz
	assert_output --partial 'two files named'
	[ ! -e out.wacz ]
}

@test "ReplayWeb.page replays the WACZ as the live pages, pixel for pixel, with its pages listed; without the requisites it does not" {
	local n0 n1 diffs
	node "$REPLAY" live "$SC_BASE/index.html" live1.png "$SC_BASE/python3/index.html" live2.png
	n0=$(sc_server_log length)
	run -0 node "$REPLAY" replay c/crawl.wacz "$SC_BASE/index.html" replay1.png "$SC_BASE/python3/index.html" replay2.png
	# ReplayWeb.page's pages list is the crawl's pages, with their titles.
	jq -r '.[] | .url' <<<"$output" | sort >replayed.pages
	jq -r 'select(.ok) | .url' c/pages.jsonl | sort | diff -u - replayed.pages
	jq -e '.[] | select(.url | endswith("/python3/index.html")) | .title | test("Python Policy")' <<<"$output"
	# Replayed from the archive alone: the live server was asked nothing.
	n1=$(sc_server_log length)
	[ "$n0" -eq "$n1" ] || fail "the replay reached the live server ($((n1 - n0)) requests)"
	for diffs in 1 2; do
		run -0 node "$REPLAY" diff "live$diffs.png" "replay$diffs.png"
		jq -e '.ratio < 0.005' <<<"$output" || fail "page $diffs: replay differs from live: $output"
	done
	# The same crawl packaged without its requisites' WARCs replays as
	# the bare HTML that the issue saw: the comparison can tell.
	sc-warc wacz -q bare.wacz c/warc/*chunk-*.warc.gz
	node "$REPLAY" replay bare.wacz "$SC_BASE/index.html" bare1.png >/dev/null
	run -0 node "$REPLAY" diff live1.png bare1.png
	jq -e '.ratio > 0.2' <<<"$output" || fail "a replay without requisites looks live: $output"
}

@test "make retry with REQUISITES=1: failed requisites fetched again, then the requisites of the page and the stylesheet the retry made ok, each once" {
	local base=$SC_BASE/retry
	# a.html comes whole, but its stylesheet fails once (503) and
	# @imports deep.css, whose url() is tile.png; b.html fails once and
	# needs b.css and b.png.
	mkdir -p site/retry
	printf '<!doctype html><title>a</title><link rel=stylesheet href="a.css?fail=1"><img src="dot.png" alt="">\n' \
		>site/retry/a.html
	printf '@import "deep.css";\nbody { color: black }\n' >site/retry/a.css
	printf 'p { background: url(tile.png) }\n' >site/retry/deep.css
	printf '<!doctype html><title>b</title><link rel=stylesheet href="b.css"><img src="b.png" alt="">\n' \
		>site/retry/b.html
	printf 'h1 { color: red }\n' >site/retry/b.css
	local png
	for png in dot tile b; do cp site/img/dot.png "site/retry/$png.png"; done
	printf '%s\n' "$base/a.html" "$base/b.html?fail=1" >retry-seeds.txt
	sc_server_reset
	local settings=(SEEDS=retry-seeds.txt DEPTH=0 DIR=rt WARC=1 REQUISITES=1 PROGRESS=0)
	run -0 crawl_make "${settings[@]}" FETCH_ARGS='--retries 0'
	jq -se --arg u "$base/b.html?fail=1" 'map(select(.ok == false) | .url) == [$u]' rt/pages.jsonl
	jq -se --arg u "$base/a.css?fail=1" 'map(select(.ok == false) | .url) == [$u]' rt/round-0/requisites-0.jsonl
	run -0 crawl_make retry "${settings[@]}" RETRY_ARGS='--retry-base 10'
	run -0 crawl_make "${settings[@]}"
	jq -se 'length == 2 and all(.ok)' rt/pages.jsonl
	# Every requisite now ok, the new ones in the retry's own pass (its
	# levels: the page's and the stylesheet's, then deep.css's tile).
	jq -se 'all(.ok)' rt/round-0/requisites-*.jsonl
	jq -r .url rt/round-0/requisites-*.jsonl | sort >fetched
	printf '%s\n' "$base/a.css?fail=1" "$base/b.css" "$base/b.png" "$base/deep.css" "$base/dot.png" \
		"$base/tile.png" | sort >wanted
	diff -u wanted fetched
	jq -r .url rt/round-0/requisites-r1-1.jsonl | diff -u - <(echo "$base/tile.png")
	# Asked for once each, but the two that failed once: twice.
	sc_server_log '.[] | select(.path | startswith("/retry/")) | .path' | jq -r . | sort | uniq -c |
		awk '{ print $2, $1 }' >asked
	printf '%s\n' "/retry/a.css?fail=1 2" "/retry/a.html 1" "/retry/b.css 1" "/retry/b.html?fail=1 2" \
		"/retry/b.png 1" "/retry/deep.css 1" "/retry/dot.png 1" "/retry/tile.png 1" | diff -u - asked
	# The archive: each URL's 200 once, the requisite retried in a retry
	# WARC of its level, which marks it a requisite (hop: E).
	warc_checked rt/warc/*.warc.gz >/dev/null
	sc-warc records rt/warc/*.warc.gz 2>/dev/null | jq -r 'select(.status == 200) | .url' | sort >archived
	sort wanted - <<<"$(printf '%s\n' "$base/a.html" "$base/b.html?fail=1")" | diff -u - archived
	jq -r --arg u "$base/a.css?fail=1" 'select(.url == $u) | .warc.filename' rt/round-0/requisites-0.jsonl |
		diff -u - <(echo round-0-requisites-0-retry-1.warc.gz)
	[ "$(zcat rt/warc/round-0-requisites-0-retry-1.warc.gz | grep -ac '^hop: E')" = 1 ]
	# A second retry finds nothing to do and asks for nothing.
	sc_server_reset
	run -0 crawl_make retry "${settings[@]}" RETRY_ARGS='--retry-base 10'
	[ "$(sc_server_log length)" = 0 ]
	[ ! -e rt/round-0/requisites-r2-0.urls ]
}
