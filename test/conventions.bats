#!/usr/bin/env bats
# The command-line conventions the programs share (sc(7)): --help,
# --version, usage errors with exit status 2, a failed read of stdin and a
# failed write to stdout.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

PROGRAMS="sc-fetch sc-frontier sc-parse sc-report sc-retry sc-sink sc-warc"
# The programs that read standard input (sc-warc reads only the files named).
READERS="sc-fetch sc-frontier sc-parse sc-report sc-retry sc-sink"

@test "every program is built" {
	for p in $PROGRAMS; do
		[ -x "$SC_BIN/$p" ] || fail "$p is not built"
	done
}

@test "a read error on standard input is one message in every program, exit 1" {
	cd "$BATS_TEST_TMPDIR" || return 1
	for p in $READERS; do
		local args=()
		[ "$p" = sc-sink ] && args=(--jsonl out.jsonl)
		run -1 --separate-stderr "$p" "${args[@]}" </
		[[ $stderr == *"$p: <stdin>: read error: Is a directory"* ]] || fail "$p: $stderr"
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

# The options of a usage text or a rendered SYNOPSIS, one "OPTION WORD"
# line each (WORD empty for a flag), sorted: "[-kq]" is -k and -q,
# "[-c N]" is "-c N", "[-H 'name: value']..." is "-H 'name: value'".
option_words() {
	tr -s ' \t\n' '\n' | awk '
		{ tok[n++] = $0 }
		END {
			for (i = 0; i < n; i++) {
				t = tok[i]
				sub(/^\[+/, "", t)
				if (t !~ /^-[-A-Za-z]/)
					continue
				closed = t ~ /\]/
				sub(/\].*$/, "", t)
				if (t !~ /^--/ && length(t) > 2) {
					for (k = 2; k <= length(t); k++)
						print "-" substr(t, k, 1)
					continue
				}
				word = ""
				if (!closed && i + 1 < n && tok[i + 1] !~ /^[-[|<]/) {
					word = tok[++i]
					while (word ~ /^'"'"'[^'"'"']*$/ && i + 1 < n)
						word = word " " tok[++i]
					sub(/\].*$/, "", word)
				}
				print t (word == "" ? "" : " " word)
			}
		}' | sort
}

# The SYNOPSIS of man/PROG.1 as mandoc renders it, without its bold (a
# character, a backspace, the character again).
synopsis() {
	mandoc -T ascii "$BATS_TEST_DIRNAME/../man/$1.1" | sed 's/.\x08//g' |
		awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 } on'
}

@test "the options and their words in --help are those of the man page's SYNOPSIS" {
	for p in $PROGRAMS; do
		run -0 "$p" --help
		usage=$(option_words <<<"$output")
		man=$(synopsis "$p" | option_words)
		[ -n "$man" ] || fail "$p: no options in the SYNOPSIS of man/$p.1"
		[ "$usage" = "$man" ] || fail "$p: --help and man/$p.1 differ:
$(diff <(echo "$usage") <(echo "$man"))"
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
