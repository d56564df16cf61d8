#!/usr/bin/env bats
# crawl.mk's RENDER (sc-crawl(7)): RENDER=1 renders every page, RENDER=auto
# only the pages that need a browser (sc-render --only-if-needed), so that
# links a script builds are crawled; RENDER=0 (the default) crawls what
# servers send.  The site is test/render/site: router.html's links exist
# only in its rendered DOM.  The browser resolves nothing but loopback
# (SC_RENDER_HOST_RULES).

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/render'
load 'lib/crawl'

bats_require_minimum_version 1.5.0

setup_file() {
	sc_render_setup_file
}

teardown_file() {
	sc_server_stop
}

setup() {
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
	echo "$SC_BASE/router.html" >seeds.txt
}

# The crawl's pages: "DEPTH PATH RENDERED", sorted.
pages() {
	jq -r '"\(.depth) \(.url | sub("^[^/]*//[^/]*"; "")) \(.rendered != null)"' c/pages.jsonl | sort
}

@test "RENDER=0 crawls what the server sends: the router's links are not there" {
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c PROGRESS=0 C=4
	run -0 pages
	assert_output '0 /router.html false'
}

@test "RENDER=auto: the router is rendered and its three views are crawled; a page whole as sent is not rendered" {
	printf '%s\n' "$SC_BASE/router.html" "$SC_BASE/static.html" >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=1 DIR=c PROGRESS=0 C=4 RENDER=auto RENDER_C=2 PARSE_ARGS=--keep-body
	run -0 pages
	assert_output "$(printf '%s\n' '0 /router.html true' '0 /static.html false' \
		'1 /router.html?view=about true' '1 /router.html?view=contact true' \
		'1 /router.html?view=home true')"
	# Each page fetched once by sc-fetch; the browser answered from its body.
	run -0 sc_server_log '[.[] | select(.path | startswith("/router.html"))] | length'
	assert_output 4
	# The rendered views hold what only the browser builds.
	run -0 jq -r 'select(.url | endswith("view=about")) | .body | contains("ROUTER-ABOUT")' c/pages.jsonl
	assert_output true
}

@test "RENDER=1 renders every page; RENDER_IF names what needs the browser with RENDER=auto; a bad RENDER stops the crawl" {
	echo "$SC_BASE/static.html" >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 RENDER=auto
	run -0 pages
	assert_output '0 /static.html false'
	rm -rf c
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 RENDER=1
	run -0 pages
	assert_output '0 /static.html true'
	rm -rf c
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 RENDER=auto RENDER_IF=h1
	run -0 pages
	assert_output '0 /static.html true'
	rm -rf c
	run -2 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 RENDER=sometimes
	assert_output --partial 'RENDER=sometimes: 0, 1 or auto'
}

@test "WARC=1 with RENDER: sc-render's archive of each chunk beside sc-fetch's, gathered in DIR/warc with the browser's exchanges in its index" {
	load 'lib/warc'
	warc_readers_present
	printf '%s\n' "$SC_BASE/fetch-json.html" "$SC_BASE/static.html" >seeds.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 RENDER=auto WARC=1 PARSE_ARGS=--keep-body \
		RENDER_ARGS='--wait selector:#done' CONTACT=mailto:ops@example.org
	run -0 jq -r 'select(.url | endswith("fetch-json.html")) | .body | contains("RENDERED-FETCH-JSON")' c/pages.jsonl
	assert_output true
	# CONTACT names the crawl's operator in the browser's requests too.
	run -0 sc_server_log '[.[] | select(.path == "/data/items.json") | .agent | test("Chrome/.*\\(\\+mailto:ops@example\\.org\\)$")]'
	assert_output '[true]'
	local files=(c/warc/*.warc.gz)
	assert_equal "${#files[@]}" 2
	assert_equal "${files[1]%.warc.gz}-render.warc.gz" "${files[0]}"
	warc_checked "${files[@]}" >warcio.sorted
	diff -u warcio.sorted c/warc/index.cdxj || fail "index.cdxj is not warcio's CDXJ, sorted"
	# The document twice (sc-fetch's response, sc-render's DOM), the
	# browser's fetch() once, from sc-render's archive; the static page
	# (not rendered) and robots.txt (sc-fetch's; sc-render's answer came
	# from the crawl's cache) once.
	run -0 jq -rs '[.[] | (.url | sub("^[^/]*//[^/]*"; "")) + " " + .filename
		| sub("chunk-[0-9]+(-[0-9]+)*"; "chunk-ID")] | sort[]' <(cut -d' ' -f3- c/warc/index.cdxj)
	assert_output "$(printf '%s\n' '/data/items.json round-0-chunk-ID-render.warc.gz' \
		'/fetch-json.html round-0-chunk-ID-render.warc.gz' '/fetch-json.html round-0-chunk-ID.warc.gz' \
		'/robots.txt round-0-chunk-ID.warc.gz' '/static.html round-0-chunk-ID.warc.gz')"
}

@test "COOKIES with RENDER=1: the requests a page's script makes carry the crawl's cookies, and what the script sets is in the crawl's jar" {
	echo "$SC_BASE/session.html" >seeds.txt
	printf '# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tok-me\n' >seed.txt
	run -0 crawl_make SEEDS=seeds.txt DEPTH=0 DIR=c PROGRESS=0 RENDER=1 COOKIES=seed.txt \
		RENDER_ARGS='--wait networkidle' PARSE_ARGS=--keep-body
	run -0 jq -r '.body | capture("GOT\\[(?<c>[^]]*)\\]").c' c/pages.jsonl
	assert_output 'session=ok-me; fromscript=yes'
	grep -q $'\tfromscript\tyes$' c/cookies.txt || fail "$(cat c/cookies.txt)"
	grep -q $'\tsession\tok-me$' c/cookies.txt
}
