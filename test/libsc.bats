#!/usr/bin/env bats
# libsc, the public C API (include/sc.h, sc(3)), against the programs: the
# fetcher's records byte for byte sc-fetch's for the same input, the done
# callback exactly once per submit, the parser's output byte for byte
# sc-parse's on the suite's corpora; the shared library exports exactly
# lib/api/symbols; make install gives a header, libraries and sc.pc that
# pkg-config and a compiler can use; examples/crawler.c crawls the demo
# site.  The test programs (test/libsc/*.c) include sc.h alone.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/tinyproxy'

bats_require_minimum_version 1.5.0

setup_file() {
	sc_server_start --root "$SC_REPO_ROOT/share/demo/site"
	export API="$SC_OUT/libsc-test" EXAMPLES="$SC_OUT/examples" LIBSC="$SC_OUT/libsc"
	# The demo crawl's URLs, and lines sc-fetch makes bad_input records of
	# (or skips: a comment, a blank line), mixed in.
	{
		grep -v '^#' "$SC_REPO_ROOT/share/demo/urls.txt" | sed "s|^/|$SC_BASE/|"
		printf 'not a url\n# a comment\n{"url":"ftp://x/"}\n\n{"bad json\n'
		printf '{"url":"%s/echo","request":{"method":"POST","body":"b"}}\n' "$SC_BASE"
		printf '{"url":"%s/x","request":{"method":"NO SUCH"}}\n' "$SC_BASE"
	} >"$BATS_FILE_TMPDIR/urls.txt"
}

teardown_file() {
	sc_server_stop
}

setup() {
	[[ -x $API/fetch-records && -x $API/parse-records && -x $EXAMPLES/crawler ]] ||
		fail "the libsc test programs are not built (make test builds them)"
	cd "$BATS_TEST_TMPDIR" || return 1
	cp "$BATS_FILE_TMPDIR/urls.txt" .
}

# What differs from run to run, out (as test/golden.bats does it, on the
# raw lines so that every other byte is compared).
normalize() {
	sed -E \
		-e 's/"(elapsed_ms|latency_ms|queue_ms|dns_ms|connect_ms|tls_ms|ttfb_ms|redirect_ms|total_ms)":[0-9.e+-]+/"\1":0/g' \
		-e 's/"(fetched_at|ts)":"[^"]*"/"\1":"T"/g' \
		-e 's/"wait_ms":[1-9][0-9]*/"wait_ms":1/g'
}

@test "fetcher: done once per submit, records byte-identical to sc-fetch's (--keep-order)" {
	run -3 --separate-stderr bash -c 'sc-fetch --keep-order <urls.txt >cli.jsonl'
	run -0 --separate-stderr "$API/fetch-records" -k <urls.txt
	printf '%s\n' "$output" >lib.jsonl
	[ -z "$stderr" ] || fail "fetch-records: $stderr"
	# Two lines of urls.txt are no item (a comment, a blank line).
	assert_equal "$(wc -l <lib.jsonl)" "$(($(wc -l <urls.txt) - 2))"
	cmp <(normalize <cli.jsonl) <(normalize <lib.jsonl) || {
		diff <(normalize <cli.jsonl) <(normalize <lib.jsonl) | head -5
		fail "libsc's records differ from sc-fetch's"
	}
	# The bad lines are numbered as sc-fetch numbers them.
	assert_equal "$(jq -c 'select(.line) | .line' lib.jsonl | tr '\n' ' ')" \
		"$(jq -c 'select(.line) | .line' cli.jsonl | tr '\n' ' ')"
}

@test "fetcher: driven from the caller's poll loop (fd, timeout, perform), the same records" {
	run -3 --separate-stderr bash -c 'sc-fetch <urls.txt >cli.jsonl'
	run -0 --separate-stderr "$API/fetch-records" -e -c 4 <urls.txt
	[ -z "$stderr" ] || fail "fetch-records: $stderr"
	printf '%s\n' "$output" >lib.jsonl
	cmp <(normalize <cli.jsonl | sort) <(normalize <lib.jsonl | sort) ||
		fail "the event-loop run's records differ from sc-fetch's"
}

@test "fetcher: SC_FETCHOPT_COOKIES and SC_FETCHOPT_PROXY, and a record's session and proxy members, through sc_fetcher_submit as through sc-fetch" {
	command -v tinyproxy >/dev/null || fail "tinyproxy is not installed (make deps)"
	start_tinyproxy
	{
		echo "$SC_BASE/set-cookie?c=sid%3Dlib1"
		echo "$SC_BASE/set-cookie"
		echo "{\"url\":\"$SC_BASE/set-cookie\",\"session\":\"other\"}"
		echo "{\"url\":\"$SC_BASE/echo\",\"proxy\":\"\"}"
		echo "$SC_BASE/echo"
	} >jar.in
	run -0 --separate-stderr "$API/fetch-records" -k -c 1 -j lib.txt -p "$PROXY" <jar.in
	[ -z "$stderr" ] || fail "fetch-records: $stderr"
	printf '%s\n' "$output" >lib.jsonl
	# The default jar kept the cookie, the session's own had none; the
	# record's "" went direct, the others through the proxy (its Via).
	assert_equal "$(jq -r 'select(.url | contains("set-cookie")) | .body' lib.jsonl | tr '\n' '|')" '|sid=lib1||'
	assert_equal "$(jq -r 'select(.url | endswith("/echo")) | .body | fromjson | .headers | has("Via")' lib.jsonl | tr '\n' ' ')" 'false true '
	grep -q $'\tsid\tlib1$' lib.txt
	assert_equal "$(stat -c %a lib.txt)" 600
	# Byte for byte what sc-fetch writes with the same options.
	run -0 --separate-stderr bash -c 'sc-fetch --keep-order -c 1 --cookies cli.txt --proxy "$1" <jar.in >cli.jsonl' _ "$PROXY"
	stop_tinyproxy
	cmp <(normalize <cli.jsonl) <(normalize <lib.jsonl) || {
		diff <(normalize <cli.jsonl) <(normalize <lib.jsonl) | head -5
		fail "libsc's records differ from sc-fetch's"
	}
	cmp <(grep -v '^#' cli.txt | cut -f1-4,6-) <(grep -v '^#' lib.txt | cut -f1-4,6-)
}

@test "fetcher: metrics lines to the callback, one per request and the summary, as sc-fetch's" {
	run -3 --separate-stderr bash -c 'sc-fetch --keep-order <urls.txt >/dev/null 2>cli.metrics'
	run -0 --separate-stderr "$API/fetch-records" -k -m lib.metrics <urls.txt
	assert_equal "$(jq -r .event lib.metrics | sort | uniq -c)" \
		"$(grep '^{' cli.metrics | jq -r .event | sort | uniq -c)"
	assert_equal "$(tail -1 lib.metrics | jq -c '[.final, .records, .ok, .not_ok, .requests]')" \
		"$(grep '^{' cli.metrics | tail -1 | jq -c '[.final, .records, .ok, .not_ok, .requests]')"
}

@test "fetcher: an option's bad value is refused in sc-fetch's words" {
	run -2 --separate-stderr "$API/fetch-records" -c x </dev/null
	assert_equal "$stderr" "fetch-records: value refused: --concurrency: 'x' is not a whole number"
	run -2 --separate-stderr "$API/fetch-records" -c 0 </dev/null
	assert_equal "$stderr" "fetch-records: value refused: --concurrency: '0' is out of range (1..100000)"
}

@test "fetcher: a CR, LF or NUL in any option's value is refused in sc-fetch's words; no header is smuggled in" {
	sc_server_reset
	run -0 --separate-stderr "$API/refuse-lines" "$SC_BASE"
	[ -z "$stderr" ] || fail "refuse-lines: $stderr"
	# One line per option the fetcher knows, each refused in the same words
	# (setopt), then -A and --header through setopt_argv, then the records.
	local n
	n=$(grep -cE '^\s*SC_FETCHOPT_[A-Z_]+ = [0-9]+' "$SC_REPO_ROOT/include/sc.h")
	assert_equal "$(grep -cE '^--[a-z-]+: a value may not hold a CR, LF or NUL$' <<<"$output")" "$((n + 2))"
	assert_equal "${lines[0]}" "--insecure: a value may not hold a CR, LF or NUL"
	assert_line --index 4 "--user-agent: a value may not hold a CR, LF or NUL"
	assert_line --index 5 "--header: a value may not hold a CR, LF or NUL"
	assert_line --index "$n" "--user-agent: a value may not hold a CR, LF or NUL"
	assert_line --index "$((n + 1))" "--header: a value may not hold a CR, LF or NUL"
	# Every option of sc-fetch --help is among them (--no-adaptive is
	# SC_FETCHOPT_ADAPTIVE's 0).  The usage lines of their own are not
	# bracketed, and are no fetcher's options: --origin-state file --show
	# (a look at the file, sc-fetch(1)), --help, --version.
	local opt
	for opt in $(sc-fetch --help | grep -oE '\[--[a-z-]+' | tr -d '[' | grep -vx -- --no-adaptive); do
		assert_line "$opt: a value may not hold a CR, LF or NUL"
	done
	assert_equal "$(grep -c '^done: ' <<<"$output")" 2
	assert_line "done: bad_input request.headers has a malformed header"
	assert_line "done: ok"
	# The one request the server saw: the echo, with the default agent.
	assert_equal "$(sc_server_log '[.[] | [.path, (.agent | startswith("sc-fetch/"))]]')" '[["/echo",true]]'
	run -0 sc_server_header_names
	refute_line --regexp '^[Xx]-'
}

# The parser's corpus: the demo site's records, the fuzz seeds' malformed
# HTML as records, and lines that are no records.
parse_corpus() {
	sc-fetch -q <urls.txt 2>/dev/null || true # 3: some are not ok
	for f in "$SC_REPO_ROOT"/test/fuzz/seeds-html/*; do
		jq -Rsc '{url: "http://x.example/a/", ok: true, content_type: "text/html", body: .}' <"$f"
	done
	printf 'not json\n\n[1]\n{"url":"http://x/","body_base64":"@@@"}\n'
}

@test "parser: output, diagnostics and status byte-identical to sc-parse's, for each kind of spec" {
	parse_corpus >corpus.jsonl
	local specs
	for specs in "" "-f t=title -f links[]=a::attr(href)" "-f t=title -f h=h1 --each li --require t" \
		"--keep-body -f t=title" "--require title" "-f x=xpath://meta/@content"; do
		# shellcheck disable=SC2086 # the specs are words
		run --separate-stderr sc-parse -j 1 $specs <corpus.jsonl
		local want=$output want_status=$status want_err=${stderr//sc-parse: /}
		# shellcheck disable=SC2086
		run --separate-stderr "$API/parse-records" $specs <corpus.jsonl
		assert_equal "$status" "$want_status"
		[ "$output" = "$want" ] || fail "parse-records $specs: output differs from sc-parse's"
		assert_equal "${stderr//parse-records: /}" "$want_err"
	done
	# sc-parse's own worker threads (sc_parser_dup) write the same.
	run -0 --separate-stderr bash -c 'sc-parse -j 3 <corpus.jsonl | cmp - <("$API/parse-records" <corpus.jsonl)'
}

@test "parser: a bad spec is refused with sc-parse's usage error's words" {
	local spec
	for spec in "-f url=title" "-f t=title -f t=h1" "-f t=" "-f t=p[" "--each li" \
		"-f t=title --require x"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr sc-parse $spec </dev/null
		local want=${stderr_lines[0]#sc-parse: }
		# shellcheck disable=SC2086
		run -2 --separate-stderr "$API/parse-records" $spec </dev/null
		assert_equal "${stderr#parse-records: }" "$want"
	done
}

@test "the API's contract: version, codes' words, setters' codes, no-items, refusals, NULLs" {
	run -0 "$API/api-contract"
	assert_output ""
}

@test "sc_selector_explain gives the XPath of sc-parse --explain, and its refusal's words" {
	local sel
	for sel in 'h1' 'ul > li:nth-child(2n+1) a[href^="/x"]' 'a::attr(href)' 'p:not(.x) ~ span' \
		'xpath://meta/@content' 'div::html'; do
		run -0 sc-parse --explain "$sel"
		local want=$output
		run -0 "$API/api-contract" "$sel"
		assert_equal "$output" "$want"
	done
	run -2 --separate-stderr sc-parse --explain 'p['
	local want=${stderr_lines[0]#sc-parse: --explain: }
	run -2 "$API/api-contract" 'p['
	assert_equal "$output" "$want"
}

@test "libsc.so.0: its SONAME, and it exports exactly lib/api/symbols (all sc_), the static one too" {
	run -0 readelf -d "$LIBSC/libsc.so.0"
	assert_output --partial "Library soname: [libsc.so.0]"
	# Every defined dynamic symbol but the version node (SC_0, type A).
	nm -D --defined-only "$LIBSC/libsc.so.0" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' |
		sort >exported
	grep -v '^#' "$SC_REPO_ROOT/lib/api/symbols" | awk '{print $1}' | sort >listed
	diff listed exported || fail "libsc.so.0 exports other symbols than lib/api/symbols lists"
	[ "$(wc -l <exported)" -gt 30 ] || fail "too few symbols: $(wc -l <exported)"
	run -1 grep -v '^sc_' exported
	# The static archive's global symbols are the same.
	nm -g --defined-only "$LIBSC/libsc.a" | awk 'NF == 3 {print $3}' | sort >static
	diff listed static || fail "libsc.a's global symbols are not exactly the public ones"
	# Every public function is in sc.h, and documented in a section-3 page.
	local s
	while read -r s; do
		grep -q "^SC_EXPORT .*[ *]$s(" "$SC_REPO_ROOT/include/sc.h" || fail "$s is not in sc.h"
		grep -qx "\.Fn $s.*" "$SC_REPO_ROOT"/man/*.3 || grep -q "^\.Fo $s$" "$SC_REPO_ROOT"/man/*.3 ||
			fail "$s has no .Fn or .Fo in man/*.3"
	done <listed
}

@test "abi-check: the library keeps lib/api/libsc.abi; a removed or changed function fails, a new SONAME passes" {
	command -v abidiff >/dev/null || fail "abidiff is not installed (make deps installs abigail-tools)"
	local check="$SC_REPO_ROOT/mk/abi-check.sh" base="$SC_REPO_ROOT/lib/api/libsc.abi"
	local lib="$LIBSC/libsc.so.0"
	run -0 sh "$check" "$base" "$lib"
	assert_output --partial "keeps the ABI"
	# An older ABI that had one more function: this library removed it.
	sed "s|<elf-function-symbols>|&\n    <elf-symbol name='sc_gone' version='SC_0' is-default-version='yes' type='func-type' binding='global-binding' visibility='default-visibility' is-defined='yes'/>|" \
		"$base" >removed.abi
	run -1 --separate-stderr sh "$check" removed.abi "$lib"
	assert_output --partial "sc_gone"
	[[ $stderr == *"bump the SONAME"* ]] || fail "no advice: $stderr"
	# An older ABI in which sc_version_num returned a pointer (the type of
	# sc_version's return): the same name, another signature.
	local ptr
	ptr=$(awk "/name='sc_version' mangled-name/ { getline; print; exit }" "$base" | sed -n "s/.*type-id='\([^']*\)'.*/\1/p")
	[ -n "$ptr" ] || fail "no return type of sc_version in the baseline"
	sed "/name='sc_version_num' mangled-name/{n;s/type-id='[^']*'/type-id='$ptr'/}" "$base" >changed.abi
	! cmp -s "$base" changed.abi || fail "the baseline was not changed"
	run -1 --separate-stderr sh "$check" changed.abi "$lib"
	assert_output --partial "sc_version_num"
	# The same change under another SONAME is the bump made on purpose.
	sed "s/soname='libsc.so.0'/soname='libsc.so.9'/" removed.abi >bumped.abi
	run -0 sh "$check" bumped.abi "$lib"
	assert_output --partial "make abi-baseline"
}

@test "make install: header, libraries, sc.pc and man pages; pkg-config compiles the example against them" {
	command -v pkg-config >/dev/null || fail "pkg-config is not installed (make deps installs it)"
	local dest=$BATS_TEST_TMPDIR/dest prefix=/opt/sc san=
	# Under make asan the library is the sanitized one: so is its user.
	[ "${SANITIZE:-}" != 1 ] || san="-fsanitize=address,undefined"
	run -0 make -s -C "$SC_REPO_ROOT" install DESTDIR="$dest" PREFIX="$prefix" SANITIZE="${SANITIZE:-}"
	[ -f "$dest$prefix/include/sc.h" ] && [ -f "$dest$prefix/lib/libsc.a" ] &&
		[ -L "$dest$prefix/lib/libsc.so" ] && [ -f "$dest$prefix/lib/libsc.so.0.1.0" ] &&
		[ -f "$dest$prefix/share/man/man3/sc_fetcher.3" ] || fail "a file is not installed"
	assert_equal "$(readlink "$dest$prefix/lib/libsc.so.0")" "libsc.so.0.1.0"
	export PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
	run -0 pkg-config --cflags --libs sc
	assert_output --partial "-I$dest$prefix/include"
	assert_output --partial "-lsc"
	# shellcheck disable=SC2046,SC2086 # pkg-config's words
	run -0 cc -std=c17 -Wall -Wextra -Werror $san -o crawler "$SC_REPO_ROOT/examples/crawler.c" \
		$(pkg-config --cflags --libs sc jansson) -Wl,-rpath,"$dest$prefix/lib"
	run -0 bash -c "echo '$SC_BASE/books/1.html' | ./crawler 3"
	assert_equal "${#lines[@]}" 3
	# Statically, by the very line sc(3) gives (libsc.a into the program,
	# the libraries it uses shared), on the example as prog.c.
	local line
	line=$(grep '^cc -o prog prog.c ' "$SC_REPO_ROOT/man/sc.3")
	[ "$(wc -l <<<"$line")" -eq 1 ] && [[ $line == *"-Wl,-Bstatic"* ]] || fail "sc(3) has no static line: $line"
	cp "$SC_REPO_ROOT/examples/crawler.c" prog.c
	# Under make asan the archive is the sanitized one: its user is too.
	run -0 bash -c "$line $san"
	run -1 bash -c "ldd prog | grep libsc"
	run -0 bash -c "echo '$SC_BASE/books/2.html' | ./prog 1"
	assert_output --partial "Small Tools"
	run -0 make -s -C "$SC_REPO_ROOT" uninstall DESTDIR="$dest" PREFIX="$prefix" SANITIZE="${SANITIZE:-}"
	[ -z "$(find "$dest$prefix" -type f -o -type l)" ] || fail "uninstall left: $(find "$dest$prefix" -type f -o -type l)"
}

@test "fetcher: freed in mid-run (sc_fetcher_run's timeout), it drops what it holds, no callback after" {
	for i in $(seq 30); do echo "$SC_BASE/delay/$((1000 + i))"; done >slow.txt
	run -0 --separate-stderr "$API/fetch-records" -c 4 -t 300 <slow.txt
	assert_equal "$stderr" "fetch-records: timed out, 30 pending"
	assert_equal "$output" ""
	if [ "${SANITIZE:-}" != 1 ]; then
		command -v valgrind >/dev/null || fail "valgrind is not installed (make deps installs it)"
		run -0 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--error-exitcode=99 "$API/fetch-records" -c 4 -t 300 <slow.txt
	fi
}

@test "fetcher: sc_fetcher_cancel from a done callback ends the run at once; every submit still done once" {
	# The first answer comes at once, the others would take 2 s each, two
	# at a time: 20 s.  Cancelled after the first, they are done at once.
	{
		echo "$SC_BASE/index.html"
		for i in $(seq 19); do echo "$SC_BASE/delay/$((2000 + i))"; done
	} >slow.txt
	run -0 --separate-stderr timeout 10 "$API/fetch-records" -k -c 2 -x 1 <slow.txt
	[ -z "$stderr" ] || fail "fetch-records: $stderr"
	printf '%s\n' "$output" >lib.jsonl
	assert_equal "$(wc -l <lib.jsonl)" 20
	assert_equal "$(jq -c 'select(.ok) | .url' lib.jsonl)" "\"$SC_BASE/index.html\""
	assert_equal "$(jq -r 'select(.ok | not) | .error.kind' lib.jsonl | sort | uniq -c | awk '{print $1, $2}')" \
		"19 cancelled"
}

@test "fetcher: sc_fetcher_drain lets what is in flight end within the grace, the queued ones are cancelled" {
	# Two in flight when the first is done (-c 2): the one in flight ends
	# ok (300 ms, within the grace), the 17 queued are cancelled.
	{
		echo "$SC_BASE/index.html"
		for i in $(seq 18); do echo "$SC_BASE/delay/$((300 + i))"; done
	} >slow.txt
	run -0 --separate-stderr timeout 10 "$API/fetch-records" -k -c 2 -d 1 -g 5 <slow.txt
	[ -z "$stderr" ] || fail "fetch-records: $stderr"
	printf '%s\n' "$output" >lib.jsonl
	assert_equal "$(wc -l <lib.jsonl)" 19
	local ok cancelled
	ok=$(jq -c 'select(.ok)' lib.jsonl | wc -l)
	cancelled=$(jq -c 'select(.error.kind == "cancelled")' lib.jsonl | wc -l)
	[ "$ok" -ge 2 ] && [ "$ok" -le 3 ] || fail "$ok ok records, not the first and those in flight"
	assert_equal "$((ok + cancelled))" 19
	# A drain before the grace ran out: a transfer in flight is not cut.
	run -0 --separate-stderr timeout 10 "$API/fetch-records" -k -c 2 -d 1 -g 0 <slow.txt
	printf '%s\n' "$output" >cut.jsonl
	assert_equal "$(wc -l <cut.jsonl)" 19
	assert_equal "$(jq -c 'select(.ok)' cut.jsonl | wc -l)" 1
}

@test "fetcher: the warning callback says what sc-fetch warns, for the same lines" {
	run -3 --separate-stderr bash -c 'sc-fetch <urls.txt >/dev/null 2>cli.err'
	run -0 --separate-stderr "$API/fetch-records" -w <urls.txt
	grep '^sc-fetch: <stdin>:' cli.err | sed 's/^sc-fetch: <stdin>://' >cli.warnings
	[ -s cli.warnings ] || fail "sc-fetch warned about nothing"
	assert_equal "$stderr" "$(cat cli.warnings)"
}

@test "fetcher and parser under valgrind: no error, nothing lost (run, poll loop, --each)" {
	command -v valgrind >/dev/null || fail "valgrind is not installed (make deps installs it)"
	[ "${SANITIZE:-}" != 1 ] || skip "valgrind does not run sanitized programs (make test runs this)"
	local vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99)
	head -12 urls.txt >u.txt
	printf 'not a url\n{"url":"ftp://x/"}\n' >>u.txt
	run -0 "${vg[@]}" "$API/fetch-records" -k -m /dev/null <u.txt
	run -0 "${vg[@]}" "$API/fetch-records" -e <u.txt
	parse_corpus >corpus.jsonl # malformed lines included: both runs end 3
	run -3 "${vg[@]}" "$API/parse-records" -f t=title -f h=h1 --each li --require t <corpus.jsonl
	run -3 "${vg[@]}" "$API/parse-records" <corpus.jsonl
}

@test "examples/crawler.c: crawls the demo site politely (robots.txt first), each page once, with its title" {
	run -0 --separate-stderr bash -c "echo '$SC_BASE/index.html' | '$EXAMPLES/crawler' 100"
	# Every page of the demo shop the index reaches, once.
	assert_equal "$(printf '%s\n' "$output" | cut -f2 | sort | uniq -d)" ""
	printf '%s\n' "$output" | grep -q "^200	$SC_BASE/books/24.html	Signals in the Pipeline | sc demo shop$" ||
		fail "no title for books/24.html: $output"
	[ "${#lines[@]}" -ge 27 ] || fail "only ${#lines[@]} pages"
	sc_server_log | grep -q '/robots.txt' || fail "robots.txt was not asked for"
	# MAX bounds the pages.
	run -0 --separate-stderr bash -c "echo '$SC_BASE/index.html' | '$EXAMPLES/crawler' 5"
	assert_equal "${#lines[@]}" 5
}

# ---- Two fetchers in two threads (issue 26, item 4) ----

# The demo site's first URLs, for the two-thread runs.
two_thread_urls() {
	grep "^$SC_BASE/" urls.txt | head -6 >u.txt
	[ "$(wc -l <u.txt)" -eq 6 ] || fail "too few URLs"
}

@test "two fetchers in two threads: done once per submit each, and no descriptor left after free and cleanup" {
	two_thread_urls
	# two-fetchers counts /proc/self/fd before its first libsc call and
	# after sc_global_cleanup (with -g) or the last sc_fetcher_free.
	run -0 --separate-stderr "$API/two-fetchers" <u.txt
	[ -z "$stderr" ] || fail "$stderr"
	run -0 --separate-stderr "$API/two-fetchers" -g -d <u.txt
	[ -z "$stderr" ] || fail "$stderr"
}

@test "two fetchers in two threads under helgrind: no race with a frame in libsc; valgrind --track-fds: no descriptor left" {
	command -v valgrind >/dev/null || fail "valgrind is not installed (make deps installs it)"
	[ "${SANITIZE:-}" != 1 ] || skip "valgrind does not run sanitized programs (make test runs this)"
	two_thread_urls
	local supp=$SC_REPO_ROOT/test/libsc/helgrind.supp check=$SC_REPO_ROOT/test/lib/valgrind-errors.py
	local hg=(valgrind --tool=helgrind --suppressions="$supp" --xml=yes --xml-file=hg.xml)
	# A race of the program's own is found (helgrind runs, and its report
	# is read): the check can fail.
	run -0 "${hg[@]}" "$API/two-fetchers" -r <u.txt
	run -1 python3 "$check" two-fetchers hg.xml
	assert_output --partial "Race: Possible data race"
	# libsc's code races with nothing: libcurl set up by the first fetcher
	# while the other starts, or once by sc_global_init; the drains.  The
	# suppressions are libcurl's insides only (test/libsc/helgrind.supp).
	local args
	for args in "" "-g -d"; do
		# shellcheck disable=SC2086 # the options are words
		run -0 "${hg[@]}" "$API/two-fetchers" $args <u.txt
		run -0 python3 "$check" libsc.so hg.xml
		assert_output ""
	done
	# Every descriptor open at the end was inherited (valgrind says where
	# any other was opened: the wake pipe was, by fetch_engine_new).
	run -0 valgrind -q --track-fds=yes --log-file=fds.txt "$API/two-fetchers" -g <u.txt
	grep -q 'FILE DESCRIPTORS' fds.txt || fail "valgrind listed no descriptors: $(cat fds.txt)"
	run -0 awk '/Open (file descriptor|AF_)/ { open = $0; next }
		open && !/inherited from parent/ { print open; print } { open = "" }' fds.txt
	assert_output ""
}

@test "sc_global_init sets libcurl up once for the process: two fetchers in two threads set it up no more" {
	[ "${SANITIZE:-}" != 1 ] || skip "an LD_PRELOAD library cannot go before ASan's runtime (make test runs this)"
	# curl_global_init counted by a library put before libcurl.
	cat >count.c <<'C'
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int calls; /* the program calls it from one thread at a time (libsc's lock) */

CURLcode curl_global_init(long flags)
{
	CURLcode (*real)(long) = (CURLcode(*)(long))dlsym(RTLD_NEXT, "curl_global_init");
	calls++;
	return real(flags);
}

__attribute__((destructor)) static void report(void)
{
	FILE *f = fopen(getenv("COUNT_FILE"), "w");
	if (f)
		fprintf(f, "%d\n", calls), fclose(f);
}
C
	run -0 cc -shared -fPIC -o count.so count.c -ldl
	two_thread_urls
	run -0 env LD_PRELOAD="$PWD/count.so" COUNT_FILE=global.count "$API/two-fetchers" -g <u.txt
	assert_equal "$(cat global.count)" 1
	# Without it, the fetchers hold it between them: set up once or twice
	# (whether one ended before the other started), never per submit.
	run -0 env LD_PRELOAD="$PWD/count.so" COUNT_FILE=alone.count "$API/two-fetchers" <u.txt
	(($(cat alone.count) >= 1 && $(cat alone.count) <= 2)) || fail "$(cat alone.count) set-ups"
}

@test "sc_fetcher(3)'s table of options gives the engine's own defaults, for every option" {
	# test-fetch-defaults --list: each row of the engine's option table
	# (lib/engine/fetch_opts.c) with its default from fetch_options_init.
	run -0 "$SC_OUT/test/test-fetch-defaults" --list
	printf '%s\n' "$output" | grep -v '^no-adaptive ' |
		sed "s|^user-agent sc-fetch/$(sc-fetch --version | awk '{print $2}')\$|user-agent sc-fetch/VERSION|" |
		sort >engine
	[ "$(wc -l <engine)" -ge 38 ] || fail "only $(wc -l <engine) options"
	# The page's rows: ".It Dv SC_FETCHOPT_NAME Ta option Ta DEFAULT ...".
	awk -F ' Ta ' '/^\.It Dv SC_FETCHOPT_/ {
		sub(/^\.It Dv SC_FETCHOPT_/, "", $1); n = tolower($1); gsub(/_/, "-", n)
		split($3, w, " "); print n, w[1] }' "$SC_REPO_ROOT/man/sc_fetcher.3" | sort >page
	diff engine page || fail "sc_fetcher(3)'s defaults differ from the engine's (< engine, > page)"
}
