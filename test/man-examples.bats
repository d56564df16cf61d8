#!/usr/bin/env bats
# Every man page's EXAMPLES, run as written, keep the docs honest: against
# the demo site on the fixture server, in one folder per page (an example may
# use the files an earlier one made).  An example that names a remote address
# is not run: tests talk only to 127.0.0.1.  A block that is a record (it
# starts with '{') is checked to be JSON; "$ command" blocks must print what
# follows them; a block that starts with "target: ..." is run as a Makefile;
# a block that starts with "#include" is a C program on libsc (sc(3)),
# compiled against the library the suite built and run.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0
load 'lib/server'

setup_file() {
	sc_server_start --root "$BATS_TEST_DIRNAME/../share/demo/site"
	export SC_EXAMPLE_FILES="$BATS_FILE_TMPDIR/files"
	mkdir -p "$SC_EXAMPLE_FILES"
	cd "$SC_EXAMPLE_FILES" || return 1
	grep -v '^#' "$BATS_TEST_DIRNAME/../share/demo/urls.txt" | sed "s|^/|$SC_BASE/|" >urls.txt
	echo "$SC_BASE/index.html" >category-urls.txt
	sc-fetch -q <urls.txt >fetched.jsonl 2>/dev/null || true
	cp fetched.jsonl results.jsonl
	jq -c '{link: .url, id: (.url | length)}' fetched.jsonl >links.jsonl
}

teardown_file() {
	sc_server_stop
}

# Runs the examples of man page $1; fails naming the first that fails.
run_examples() {
	local page=$BATS_TEST_DIRNAME/../man/$1 dir=$BATS_TEST_TMPDIR/run ran=0
	REMOTE_EXAMPLES=0
	mkdir -p "$dir"
	cp "$SC_EXAMPLE_FILES"/* "$dir"/
	cd "$dir" || return 1
	awk -f "$BATS_TEST_DIRNAME/lib/man-examples.awk" "$page" >examples.txt
	[ -s examples.txt ] || fail "$1 has no EXAMPLES"
	local block=
	while IFS= read -r line; do
		if [ "$line" != "%%" ]; then
			block+="$line"$'\n'
			continue
		fi
		run_example "$1" "$block"
		ran=$((ran + 1))
		block=
	done <examples.txt
	echo "# $1: $((ran - REMOTE_EXAMPLES)) examples run, $REMOTE_EXAMPLES naming a remote address not run" >&3
	[ "$ran" -gt "$REMOTE_EXAMPLES" ] || fail "$1: no example could run"
}

run_example() {
	local page=$1 block=$2 first
	first=${block%%$'\n'*}
	local addresses=${block//:\/\/127.0.0.1/}
	if [[ $addresses =~ (https?|ftp):// ]]; then
		# names a remote address: not run here
		REMOTE_EXAMPLES=$((REMOTE_EXAMPLES + 1))
		return 0
	fi
	if [[ $first =~ ^[A-Za-z0-9_./-]+:( |$) && $block == *$'\n\t'* ]]; then
		printf '%s' "$block" >Makefile.example
		run --separate-stderr make -s -f Makefile.example
		[ "$status" -eq 0 ] || fail "$page: the Makefile example failed ($status): $stderr"
		return 0
	fi
	case "$first" in
	'#include'*)
		# A C program on libsc: compiled against the library the suite
		# built, with the public header only, and run with the demo
		# site's index as its argument and its URL list as input.
		printf '%s' "$block" >example.c
		local san=
		[ "${SANITIZE:-}" != 1 ] || san="-fsanitize=address,undefined"
		# shellcheck disable=SC2086 # $san is words or none
		run --separate-stderr cc -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE $san \
			-I"$BATS_TEST_DIRNAME/../include" -o example example.c -L"$SC_OUT/libsc" \
			-Wl,-rpath,"$SC_OUT/libsc" -lsc
		[ "$status" -eq 0 ] || fail "$page: a C example does not compile: $stderr"
		run --separate-stderr ./example "$SC_BASE/index.html" <urls.txt
		[ "$status" -eq 0 ] || fail "$page: a C example exited $status: $stderr"
		[ -n "$output" ] || [[ $block == *poll* ]] || fail "$page: a C example printed nothing"
		;;
	'{'*)
		# A record, shortened with "...": JSON once that is taken out.
		jq -e . >/dev/null <<<"${block//.../}" || fail "$page: a record example is not JSON: $block"
		;;
	'$ '*)
		run --separate-stderr bash -c "${first#\$ }"
		[ "$status" -eq 0 ] || fail "$page: '${first#\$ }' exited $status: $stderr"
		assert_equal "$output"$'\n' "${block#*$'\n'}"
		;;
	*)
		run --separate-stderr bash -c "$block"
		# 3 is a run that completed with some records not ok: the demo
		# site has a broken page or two on purpose.
		[ "$status" -eq 0 ] || [ "$status" -eq 3 ] ||
			fail "$page: example exited $status: $block$stderr"
		[[ "$stderr" != *"for more information"* ]] || fail "$page: usage error in: $block$stderr"
		;;
	esac
}

@test "sc-fetch(1) EXAMPLES run as written" {
	run_examples sc-fetch.1
	[ -s pages2.jsonl ] || fail "sc-retry wrote nothing"
}

@test "sc-parse(1) EXAMPLES run as written" {
	run_examples sc-parse.1
	[ -s pages.csv ] || fail "no pages.csv"
}

@test "sc-retry(1) EXAMPLES run as written" {
	run_examples sc-retry.1
	assert_equal "$(wc -l <done.jsonl)" "$(wc -l <part.jsonl)"
}

@test "sc-sink(1) EXAMPLES run as written" {
	run_examples sc-sink.1
	[ -s pages.db ] && [ -s pages.csv ] && [ -s pages.jsonl ] || fail "a sink is missing"
}

@test "sc-frontier(1) EXAMPLES run as written" {
	run_examples sc-frontier.1
	[ -s round-0.jsonl ] && [ -e round-2.jsonl ] || fail "no rounds"
	[ -z "$(sort round-0.jsonl round-1.jsonl round-2.jsonl | jq -r .url | sort | uniq -d)" ] ||
		fail "a URL is in two rounds"
}

@test "sc-render(1) EXAMPLES run as written" {
	[ -x /usr/lib/chromium/chromium-headless-shell ] || [ -x /usr/lib/chromium/chromium ] ||
		skip "no Chromium (make deps installs chromium-headless-shell)"
	export SC_RENDER_BROWSER_ARGS="--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
	run_examples sc-render.1
	assert_equal "$(wc -l <rendered.jsonl)" "$(wc -l <urls.txt)"
}

@test "sc-record(5) EXAMPLES run as written" {
	run_examples sc-record.5
	[ -s out.csv ] || fail "no out.csv"
}

@test "sc(7) EXAMPLES run as written" {
	run_examples sc.7
	[ -s out.csv ] && [ -s shop.db ] || fail "the recipes made nothing"
}

@test "sc-report(1) EXAMPLES run as written" {
	run_examples sc-report.1
	[ -s metrics.log ] && [ -s report.html ] || fail "no metrics or no page"
}

@test "sc-warc(1) EXAMPLES run as written" {
	command -v wget >/dev/null || fail "wget is not installed (make deps installs it)"
	run_examples sc-warc.1
	[ -s site.cdxj ] && [ -s titles.jsonl ] && [ -s crawl.warc.gz ] || fail "sc-warc made nothing"
	[ ! -e crawl.warc.gz.open ] || fail "mend left the .open file"
}

@test "sc(3), sc_fetcher(3), sc_fetcher_argv(3), sc_result(3), sc_parser(3), sc_version(3) EXAMPLES compile and run" {
	command -v cc >/dev/null || fail "cc is not installed"
	[ -e "$SC_OUT/libsc/libsc.so.0" ] || fail "libsc.so.0 is not built (make test builds it)"
	local page
	for page in sc.3 sc_fetcher.3 sc_fetcher_argv.3 sc_result.3 sc_parser.3 sc_version.3; do
		run_examples "$page"
	done
}
