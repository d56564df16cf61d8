#!/usr/bin/env bats
# The render fixtures (test/render/site, its manifest expected.json) need a
# browser and say what they claim: sc-fetch gets each page's shell without
# its marker; the reference renderers (test/bench/render-ref.js: puppeteer-
# core and playwright-core driving Debian's Chromium) get what the manifest
# says, and so does sc-render (--scroll too; --robots against robots.txt,
# checked in the server's log).  Also the helpers of test/lib/render.bash: the browser's process
# group found and found empty afterwards, its connections only to the
# fixture server, no name resolved but loopback's.  Loopback only.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/render'

bats_require_minimum_version 1.5.0

setup_file() {
	if [[ ! -d $SC_REPO_ROOT/test/npm/node_modules/puppeteer-core ||
		! -d $SC_REPO_ROOT/test/npm/node_modules/playwright-core ]]; then
		echo "test/npm/node_modules lacks puppeteer-core or playwright-core: make deps" >&2
		return 1
	fi
	sc_render_browser >/dev/null
	# The site and three generated pages, served from one root.
	sc_render_gen_site "$BATS_FILE_TMPDIR/site" 3
	sc_server_start --root "$BATS_FILE_TMPDIR/site"
}

teardown_file() {
	sc_server_stop
}

# render ENGINE ENTRY...: renders the entries' pages (one wait, scroll and
# browser_args: the first entry's) with ENGINE (puppeteer, playwright, or
# sc-render with the same options) into $OUT (default $BATS_TEST_TMPDIR/out).
render() {
	local engine=$1 first=$2 args=() a out=${OUT:-$BATS_TEST_TMPDIR/out}
	args=(--engine "$engine" -c 2 -m 20 --wait "$(jq -r .wait <<<"$first")"
		--scroll "$(jq -r '.scroll // 0' <<<"$first")")
	while IFS= read -r a; do
		[[ -n $a ]] && args+=(--browser-arg "$a")
	done < <(jq -r '.browser_args // [] | .[]' <<<"$first")
	shift
	local e urls=${out%/*}/urls.${out##*/}
	for e in "$@"; do
		echo "$SC_BASE/$(jq -r .page <<<"$e")"
	done >"$urls"
	if [[ $engine == sc-render ]]; then
		SC_RENDER_BROWSER_ARGS="--host-resolver-rules=$SC_RENDER_HOST_RULES" \
			sc-render "${args[@]:2}" <"$urls" >"$out"
	else
		sc_render_ref "${args[@]}" <"$urls" >"$out"
	fi
}

# record PAGE [FILE]: the record of $SC_BASE/PAGE in FILE ($BATS_TEST_TMPDIR/out).
record() {
	jq -c --arg u "$SC_BASE/$1" 'select(.url == $u)' "${2:-$BATS_TEST_TMPDIR/out}"
}

# check_engine ENGINE [FILTER]: every page the manifest calls ok (and
# FILTER selects) renders as it says, grouped by the way each is rendered:
# one browser per group, the groups side by side.
check_engine() {
	local groups group entries e i=0 pids=() pid
	groups=$(sc_render_expected "[.[] | select(.ok and (.robots | not)) | select(${2:-true})]
		| group_by([.wait, (.scroll // 0), (.browser_args // [])])[]")
	while IFS= read -r group; do
		mapfile -t entries < <(jq -c '.[]' <<<"$group")
		OUT=$BATS_TEST_TMPDIR/out.$i render "$1" "${entries[@]}" 3>&- &
		pids+=("$!")
		((++i))
	done <<<"$groups"
	for pid in "${pids[@]}"; do
		wait "$pid"
	done
	cat "$BATS_TEST_TMPDIR"/out.* >"$BATS_TEST_TMPDIR/out"
	mapfile -t entries < <(sc_render_expected ".[] | select(.ok and (.robots | not)) | select(${2:-true})")
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/out")" "${#entries[@]}"
	for e in "${entries[@]}"; do
		local page rec
		page=$(jq -r .page <<<"$e")
		# A page listed twice (scroll.html) is rendered in two groups.
		rec=$(cat "$BATS_TEST_TMPDIR"/out.* | jq -c --arg u "$SC_BASE/$page" --argjson e "$e" \
			'select(.url == $u and (.rendered.waited_for == $e.wait) and ((.rendered.scroll // 0) == ($e.scroll // 0)))')
		[[ -n $rec ]] || fail "$1: no record of $page"
		jq -e '.ok and .status == 200 and .error == null' <<<"$rec" >/dev/null ||
			fail "$1: $page: $(jq -c 'del(.body)' <<<"$rec")"
		run sc_render_check "$rec" "$e"
		[[ $status -eq 0 ]] || fail "$1: $page (wait $(jq -r .wait <<<"$e")): $output"
	done
}

@test "each page's shell, as sc-fetch gets it, lacks the marker only the browser builds" {
	local n=0 page marker
	while IFS=$'\t' read -r page marker; do
		run -0 --separate-stderr bash -c 'echo "$1" | sc-fetch -m 10' _ "$SC_BASE/$page"
		jq -e '.ok and .status == 200' <<<"$output" >/dev/null || fail "$page: $output"
		if jq -e --arg m "$marker" '.body | contains($m)' <<<"$output" >/dev/null; then
			fail "$page: the shell already holds $marker"
		fi
		((++n))
	done < <(sc_render_expected '.[] | select(.marker != null) | [.page, .marker] | @tsv' | jq -r .)
	[[ $n -ge 10 ]]
	# The generated pages too.
	run -0 --separate-stderr bash -c 'echo "$1" | sc-fetch' _ "$SC_BASE/js/1.html"
	refute_output --partial 'JS-PAGE-1'
}

@test "puppeteer-core renders every page the manifest calls ok as it says" {
	check_engine puppeteer
}

@test "sc-render renders every page the manifest calls ok as it says, --scroll's included" {
	check_engine sc-render
	# The scroll entries: all 50 rows after 4 scrolls that grew the page
	# (the fifth did not: it stopped there), 10 without.
	assert_equal "$(jq -sc 'map(select(.url | endswith("/scroll.html")) | .rendered | [.scroll, .scrolled])
		| sort' "$BATS_TEST_TMPDIR/out")" '[[null,null],[8,4]]'
}

@test "playwright-core renders the pages that fetch, route, navigate and load slowly as the manifest says" {
	check_engine playwright '.wait | startswith("selector:")'
}

@test "the router's links are in the rendered DOM only: sc-parse finds them there" {
	local want
	want=$(sc_render_expected '.[] | select(.page == "router.html") | .links | map("'"$SC_BASE"'/" + .)')
	run -0 --separate-stderr bash -c 'echo "$1" | sc-fetch | sc-parse -f "links[]=a.route::attr(href)"' _ "$SC_BASE/router.html"
	assert_equal "$(jq -c '.links' <<<"$output")" '[]'
	echo "$SC_BASE/router.html" | sc_render_ref -c 1 -m 20 >"$BATS_TEST_TMPDIR/out"
	run -0 --separate-stderr sc-parse -f 'links[]=a.route::attr(href)' <"$BATS_TEST_TMPDIR/out"
	assert_equal "$(jq -c '.links' <<<"$output")" "$(jq -c . <<<"$want")"
}

@test "a generated page is built by its script: 20 paragraphs and its marker" {
	render puppeteer '{"wait": "selector:#done", "page": "js/2.html"}'
	run -0 sc_render_check "$(record js/2.html)" \
		'{"contains": ["JS-PAGE-2", "JS page 2"], "count": {"p.para": 20, "p#done": 1}}'
}

@test "robots.txt disallows the script robots.html loads; a renderer that ignores it runs it" {
	local e
	e=$(sc_render_expected '.[] | select(.robots)')
	# 3: some record not ok (sc(7)).
	run -3 --separate-stderr bash -c 'printf "%s\n" "$1/private/disallowed.js" "$1/allowed.js" | sc-fetch --robots' _ "$SC_BASE"
	assert_equal "$(jq -sc 'map(.error.kind)' <<<"$output")" '["robots",null]'
	render puppeteer "$e"
	run -0 sc_render_check "$(record robots.html)" \
		"$(jq -c '{contains: (.contains + .impolite_contains)}' <<<"$e")"
}

@test "sc-render --robots: the disallowed script is never asked for nor run, and counted; a disallowed page is a robots error, never loaded" {
	local e rec
	e=$(sc_render_expected '.[] | select(.robots)')
	sc_server_reset
	printf '%s\n' "$SC_BASE/robots.html" "$SC_BASE/$(jq -r '.disallowed[0]' <<<"$e")" >"$BATS_TEST_TMPDIR/in"
	run -3 --separate-stderr env SC_RENDER_BROWSER_ARGS="--host-resolver-rules=$SC_RENDER_HOST_RULES" \
		sc-render -c 2 -m 20 --robots --robots-cache "$BATS_TEST_TMPDIR/robots.db" <"$BATS_TEST_TMPDIR/in"
	echo "$output" >"$BATS_TEST_TMPDIR/out"
	rec=$(record robots.html)
	jq -e --argjson e "$e" '.ok and .status == 200 and .rendered.blocked == $e.blocked
		and .rendered.failed == 0 and .rendered.requests == 3' <<<"$rec" >/dev/null ||
		fail "$(jq -c 'del(.body)' <<<"$rec")"
	run -0 sc_render_check "$rec" "$e"
	# The page itself: refused as sc-fetch --robots refuses it, with no request.
	rec=$(record "$(jq -r '.disallowed[0]' <<<"$e")")
	run -3 --separate-stderr bash -c 'echo "$1" | sc-fetch --robots' _ "$SC_BASE/$(jq -r '.disallowed[0]' <<<"$e")"
	assert_equal "$(jq -c '[.ok, .status, .error, .rendered.blocked, has("body")]' <<<"$rec")" \
		"$(jq -c '[.ok, .status, .error, 1, false]' <<<"$output")"
	# The server's log: robots.txt asked once (by sc-render; then by the
	# sc-fetch above), nothing under the disallowed path.
	run -0 sc_server_log '[.[] | .path]'
	assert_equal "$(jq -c '[.[] | select(. == "/robots.txt")] | length' <<<"$output")" 2
	assert_equal "$(jq -c '[.[] | select(startswith("/private/"))]' <<<"$output")" '[]'
	assert_equal "$(jq -c 'map(select(. == "/allowed.js")) | length' <<<"$output")" 1
	# --robots-cache: the next run asks for no robots.txt.
	sc_server_reset
	echo "$SC_BASE/robots.html" | SC_RENDER_BROWSER_ARGS="--host-resolver-rules=$SC_RENDER_HOST_RULES" \
		sc-render --robots --robots-cache "$BATS_TEST_TMPDIR/robots.db" >"$BATS_TEST_TMPDIR/out"
	jq -e '.ok and .rendered.blocked == 1' "$BATS_TEST_TMPDIR/out"
	assert_equal "$(sc_server_log '[.[] | .path] | sort | join(" ")' | jq -r .)" "/allowed.js /robots.html"
}

@test "the page that never settles, under a 3 s deadline: a render error holding what was there; only loopback reached" {
	local e rec groups=() pid
	e=$(sc_render_expected '.[] | select(.timeout)')
	echo "$SC_BASE/$(jq -r .page <<<"$e")" >"$BATS_TEST_TMPDIR/in"
	sc_render_ref -c 1 -m 3 --wait networkidle <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" 3>&- &
	pid=$!
	mapfile -t groups < <(sc_render_browser_groups "$pid" 20)
	((${#groups[@]})) || fail "no browser found"
	# The page polls all along: sample its connections while it does.
	local tries addrs=
	for ((tries = 0; tries < 200; tries++)); do
		addrs+=$(sc_render_remote_addrs "${groups[@]}")$'\n'
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	wait "$pid"
	# Every connection seen was to the fixture; the connections are short
	# (a sample may see none on a loaded machine), so that the browser
	# did reach the fixture is read from the server's log instead.
	local elsewhere
	elsewhere=$(grep . <<<"$addrs" | sort -u | grep -vxF "127.0.0.1:$SC_PORT" || true)
	[[ -z $elsewhere ]] || fail "the browser reached $elsewhere"
	local polls
	polls=$(sc_server_log '[.[] | select(.path | startswith("/data/items.json?poll="))] | length')
	((polls >= 3)) || fail "$polls polls reached the fixture"
	sc_render_wait_gone 10 "${groups[@]}"
	rec=$(record "$(jq -r .page <<<"$e")")
	jq -e '(.ok | not) and .error.kind == "render" and .elapsed_ms >= 2900' <<<"$rec" >/dev/null ||
		fail "$(jq -c 'del(.body)' <<<"$rec")"
	run -0 sc_render_check "$rec" "$e"
}

@test "the memory hog kills its renderer: a render error record, and no Chromium process left" {
	local e rec groups=() pid
	e=$(sc_render_expected '.[] | select(.crash)')
	echo "$SC_BASE/$(jq -r .page <<<"$e")" >"$BATS_TEST_TMPDIR/in"
	sc_render_ref -c 1 -m 30 --browser-arg "$(jq -r '.browser_args[0]' <<<"$e")" \
		<"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	mapfile -t groups < <(sc_render_browser_groups "$pid" 20)
	((${#groups[@]})) || fail "no browser: $(cat "$BATS_TEST_TMPDIR/err")"
	wait "$pid"
	sc_render_wait_gone 10 "${groups[@]}"
	rec=$(cat "$BATS_TEST_TMPDIR/out")
	jq -e '(.ok | not) and .error.kind == "render" and (.error.message | test("crash"))' <<<"$rec" >/dev/null ||
		fail "$rec"
}

@test "the browser resolves no name but loopback's (SC_RENDER_HOST_RULES)" {
	printf '%s\n' "http://sc-render.example/" "http://localhost:$SC_PORT/fetch-json.html" >"$BATS_TEST_TMPDIR/in"
	sc_render_ref -c 1 -m 10 <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out"
	run -0 jq -sc 'sort_by(.url) | map([.ok, (.error.message // "" | test("NAME_NOT_RESOLVED"))])' "$BATS_TEST_TMPDIR/out"
	assert_output '[[true,false],[false,true]]'
	# 127.0.0.2 is resolved (nothing listens there: refused), 10.0.0.1 is not.
	printf '%s\n' "http://127.0.0.2:$SC_PORT/" "http://10.0.0.1:$SC_PORT/" >"$BATS_TEST_TMPDIR/in"
	sc_render_ref -c 1 -m 10 <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out"
	run -0 jq -sc 'sort_by(.url) | map(.error.message | sub(" at .*"; ""))' "$BATS_TEST_TMPDIR/out"
	assert_output '["net::ERR_NAME_NOT_RESOLVED","net::ERR_CONNECTION_REFUSED"]'
}

@test "render-ref.js: usage errors exit 2" {
	run -2 --separate-stderr sc_render_ref --wait sometime </dev/null
	assert_equal "$stderr" "render-ref.js: --wait: sometime
usage: render-ref.js [--engine puppeteer|playwright] [-c N] [--wait W] [-m SECONDS]
                     [--scroll N] [--viewport WxH] [--browser PATH] [--browser-arg FLAG]... < urls"
	run -2 --separate-stderr sc_render_ref -c 0 </dev/null
	assert_equal "${stderr%%$'\n'*}" "render-ref.js: -c: not a number from 1 to 256: 0"
	run -2 --separate-stderr sc_render_ref --viewport 12 </dev/null
	assert_equal "${stderr%%$'\n'*}" "render-ref.js: --viewport: WxH: 12"
}

@test "render-ref.js --viewport: the window sc-render's is (1280x800) unless given" {
	local url="data:text/html,<p id=v></p><script>v.textContent=innerWidth+'x'+innerHeight</script>"
	# One browser each: the default in one engine, the option in the other.
	run -0 --separate-stderr sc_render_ref --engine puppeteer -c 1 <<<"$url"
	assert_equal "$(jq -r '.body | capture("<p id=\"v\">(?<v>[^<]*)").v' <<<"$output")" 1280x800
	run -0 --separate-stderr sc_render_ref --engine playwright -c 1 --viewport 640x480 <<<"$url"
	assert_equal "$(jq -r '.body | capture("<p id=\"v\">(?<v>[^<]*)").v' <<<"$output")" 640x480
}
