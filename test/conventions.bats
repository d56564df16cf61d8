#!/usr/bin/env bats
# The command-line conventions the programs share (sc(7)): --help,
# --version, usage errors with exit status 2, and a failed write to stdout.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

PROGRAMS="sc-fetch sc-frontier sc-parse sc-retry sc-sink sc-warc"

@test "every program is built" {
	for p in $PROGRAMS; do
		[ -x "$SC_BIN/$p" ] || fail "$p is not built"
	done
}

@test "--help and -h print the usage on stdout and exit 0" {
	for p in $PROGRAMS; do
		for opt in --help -h; do
			run -0 --separate-stderr "$p" "$opt"
			assert_output --partial "usage: $p"
			[ -z "$stderr" ] || fail "$p $opt wrote to stderr: $stderr"
		done
	done
}

@test "the usage line matches the man page's SYNOPSIS name" {
	for p in $PROGRAMS; do
		grep -q "^\.Nm $p\$" "$BATS_TEST_DIRNAME/../man/$p.1" || fail "man/$p.1 has no .Nm $p"
	done
}

@test "--version and -V print the name and the version from the Makefile" {
	version=$(sed -n 's/^VERSION *= *//p' "$BATS_TEST_DIRNAME/../Makefile")
	for p in $PROGRAMS; do
		for opt in --version -V; do
			run -0 "$p" "$opt"
			assert_line --index 0 --regexp "^$p $version( |\$)"
		done
	done
}

@test "an unknown option is a usage error: exit 2, a hint, nothing on stdout" {
	for p in $PROGRAMS; do
		run -2 --separate-stderr "$p" --no-such-option </dev/null
		[ -z "$output" ] || fail "$p wrote to stdout: $output"
		[[ "$stderr" == *"Try '$p --help' for more information."* ]] || fail "$p: no hint in: $stderr"
	done
}

@test "a bad number is a usage error that names the option" {
	run -2 --separate-stderr sc-fetch -c 0 </dev/null
	[[ "$stderr" == *"sc-fetch: "*"0"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-fetch --concurrency abc </dev/null
	[[ "$stderr" == *"abc"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-parse -j 0 </dev/null
	[[ "$stderr" == *"sc-parse: "* ]] || fail "$stderr"
}

@test "--help when stdout is full is an error (exit 1), not silence" {
	for p in $PROGRAMS; do
		run -1 --separate-stderr bash -c "'$SC_BIN/$p' --help >/dev/full"
		[[ "$stderr" == *"$p: error writing standard output"* ]] || fail "$p: $stderr"
	done
}
