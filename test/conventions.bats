#!/usr/bin/env bats
# The command-line conventions the programs share (sc(7)): --help,
# --version, usage errors with exit status 2, a failed read of stdin and a
# failed write to stdout.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

PROGRAMS="sc-fetch sc-frontier sc-parse sc-render sc-report sc-retry sc-sink sc-warc"
# The programs that read standard input (sc-warc reads only the files named).
READERS="sc-fetch sc-frontier sc-parse sc-render sc-report sc-retry sc-sink"

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

@test "every man page is clean under mandoc -Tlint -Wwarning and groff -ww, as distcheck checks its installed copy" {
	local page lint bad=0
	for page in "$BATS_TEST_DIRNAME"/../man/*.[1-9]; do
		lint=$(mandoc -Tlint -Wwarning "$page" 2>&1) || true
		[[ -z $lint ]] || { echo "$lint"; bad=1; }
		lint=$(groff -ww -z -mandoc -Tutf8 "$page" 2>&1) || true
		[[ -z $lint ]] || { echo "${page##*/}: $lint"; bad=1; }
	done
	((bad == 0))
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

# ---- the layering rule (README, "The tree shows the parts") ----

ROOT="$BATS_TEST_DIRNAME/.."

# The parts of lib/, one a line.
lib_parts() {
	for d in "$ROOT"/lib/*/; do
		basename "$d"
	done
}

# one_line: the lines of standard input on one line, for a message.
one_line() {
	paste -sd ' ' -
}

# words: the names of parts among the words on standard input, sorted, once.
part_names() {
	tr -c 'a-z\n' '\n' | grep -Fx -f <(lib_parts) | sort -u
}

# may_use PART: the parts lib/PART/README.md's "May use" names (the words
# before its first parenthesis).
may_use() {
	awk '/^\*\*May use:\*\*/ { on = 1 } on && /^$/ { exit } on' "$ROOT/lib/$1/README.md" |
		sed 's/^\*\*May use:\*\*//' | tr '\n' ' ' | sed 's/(.*//' | part_names
}

# must_not_use PART: the parts its "Must not: use A, B or C" names.
must_not_use() {
	awk '/^\*\*Must not:\*\*/ { on = 1 } on && /^$/ { exit } on' "$ROOT/lib/$1/README.md" |
		tr '\n' ' ' | grep -o 'use [a-z]*\(, [a-z]*\)*\( or [a-z]*\)\?' | part_names
}

# table_uses PART: the "uses" column of lib/PART's row in the README's table.
table_uses() {
	awk -F'|' -v row="\`lib/$1\`" '$2 ~ "^ *" row " *$" { print $4 }' "$ROOT/README.md" | part_names
}

# table_order: the parts in the README's table, top first.
table_order() {
	sed -n 's/^| `lib\/\([a-z]*\)` |.*/\1/p' "$ROOT/README.md"
}

# includes FILE...: "FILE:LINE: PART" for each #include "PART/..." of a part.
includes() {
	grep -Hno '#include "[a-z]*/' "$@" | sed 's/#include "\([a-z]*\)\/$/ \1/'
}

@test "every part of lib/ includes only the parts its README.md may use" {
	for part in $(lib_parts); do
		allowed=$(may_use "$part")
		while read -r where used; do
			[ "$used" = "$part" ] && continue
			grep -qx "$used" <<<"$allowed" ||
				fail "${where#"$ROOT/"} includes $used/, which lib/$part/README.md does not allow (May use: $(one_line <<<"$allowed"))"
		done < <(includes "$ROOT"/lib/"$part"/*.[ch])
	done
}

@test "no part uses what its README.md says it must not, nor allows it" {
	for part in $(lib_parts); do
		for banned in $(must_not_use "$part"); do
			! may_use "$part" | grep -qx "$banned" ||
				fail "lib/$part/README.md both allows and forbids $banned"
			run grep -ln "#include \"$banned/" "$ROOT"/lib/"$part"/*.[ch]
			[ -z "$output" ] || fail "lib/$part uses $banned, which its README.md forbids: $output"
		done
	done
}

@test "the README's table of parts says what each folder's README.md says, in order" {
	order=$(table_order)
	for part in $(lib_parts); do
		grep -qx "$part" <<<"$order" || fail "lib/$part has no row in the README's table"
		[ "$(table_uses "$part")" = "$(may_use "$part")" ] ||
			fail "lib/$part: the README's table says it uses '$(table_uses "$part" | one_line)', its README.md '$(may_use "$part" | one_line)'"
		# A part uses only parts below it in the table.
		below=$(sed -n "/^$part\$/,\$p" <<<"$order" | tail -n +2)
		for used in $(may_use "$part"); do
			grep -qx "$used" <<<"$below" || fail "lib/$part uses $used, which is not below it in the README's table"
		done
	done
}

@test "nothing in lib/ includes a program's header: a part's, or sc.h" {
	run grep -Hn '#include "' "$ROOT"/lib/*/*.[ch]
	while IFS= read -r line; do
		name=${line#*#include \"}
		name=${name%%\"*}
		[ "$name" = sc.h ] && continue
		part=${name%%/*}
		[ "$part" != "$name" ] && [ -d "$ROOT/lib/$part" ] || fail "${line#"$ROOT/"}: not a part's header"
	done <<<"$output"
}

@test "sc-fetch and sc-parse fetch and extract only through sc.h" {
	# Besides sc.h, what every program's command line and input share.
	# But one look that is no fetch, and has no libsc call: sc-fetch
	# --origin-state FILE --show prints the file through the part that owns
	# it (web/origin_state.h), its one include of web/.
	[ "$(grep -c '#include "web/' "$ROOT/cmd/sc-fetch.c")" = 1 ] &&
		grep -q '#include "web/origin_state.h"' "$ROOT/cmd/sc-fetch.c" ||
		fail "cmd/sc-fetch.c includes web/ other than web/origin_state.h (its --show)"
	for prog in "$ROOT/cmd/sc-fetch.c" "$ROOT"/cmd/sc-parse/*.[ch]; do
		while read -r where used; do
			[[ $where != "$ROOT/cmd/sc-fetch.c:"* || $used != web ]] || continue
			case $used in
			core | kit | record) ;;
			*) fail "${where#"$ROOT/"} includes $used/: sc-fetch and sc-parse reach it only through sc.h" ;;
			esac
		done < <(includes "$prog")
	done
	grep -q '#include <sc.h>' "$ROOT/cmd/sc-fetch.c" || fail "cmd/sc-fetch.c does not include sc.h"
	grep -q '#include "sc.h"' "$ROOT/cmd/sc-parse/sc-parse.h" || fail "sc-parse does not include sc.h"
}

@test "every file of lib/ has a row in its folder's README.md" {
	for f in "$ROOT"/lib/*/*.[ch]; do
		grep -qF "\`$(basename "$f")\`" "$(dirname "$f")/README.md" ||
			fail "${f#"$ROOT/"} has no row in $(dirname "${f#"$ROOT/"}")/README.md"
	done
}

# The engine's files, ranked as lib/engine/README.md orders their calls
# ("Calls among the files run one way"): a file calls only files of a
# higher rank.  fetch_opts is called by none of them; fetch_global calls none.
ENGINE_RANKS="fetch:0 fetch_line:0 fetch_submit:1 fetch_transfer:1 fetch_metrics:1 fetch_warc:2
fetch_pace:3 fetch_robots:4 fetch_output:5 fetch_headers:6 fetch_origin:6 fetch_cookies:6 fetch_cookiefile:7 fetch_form:6 fetch_proxy:6 fetch_opts:9
fetch_global:9"

@test "the engine's files call each other in the order lib/engine/README.md gives" {
	local objs="$SC_OUT/lib/engine"
	[ -f "$objs/fetch.o" ] || fail "no objects in $objs: build first"
	declare -A rank=() owner=()
	for r in $ENGINE_RANKS; do rank[${r%:*}]=${r#*:}; done
	for o in "$objs"/*.o; do
		f=$(basename "$o" .o)
		[ -n "${rank[$f]:-}" ] || fail "lib/engine/$f.c has no rank here nor a place in the README's order"
		for sym in $(nm --defined-only "$o" | awk '$2 ~ /^[TDBR]$/ { print $3 }'); do
			owner[$sym]=$f
		done
	done
	for o in "$objs"/*.o; do
		f=$(basename "$o" .o)
		for sym in $(nm -u "$o" | awk '{ print $2 }'); do
			to=${owner[$sym]:-}
			[ -z "$to" ] || [ "$to" = "$f" ] && continue
			[ "$to" != fetch_opts ] || fail "$f.c calls fetch_opts.c ($sym), which no engine file calls"
			((rank[$f] < rank[$to])) || fail "$f.c calls $to.c ($sym): against the order of lib/engine/README.md"
		done
	done
}

@test "the engine's names are fetch_, not sc_, which is sc.h's (lib/engine/README.md)" {
	local found
	found=$(nm --defined-only "$SC_OUT"/lib/engine/*.o | awk '$2 ~ /^[TDBR]$/ && $3 ~ /^sc_/ { print $3 }')
	[ -z "$found" ] || fail "engine symbols named sc_: $found"
	found=$(grep -rnE '\bsc_fetch_[a-z]' "$ROOT/lib" "$ROOT/cmd" || true)
	[ -z "$found" ] || fail "the engine's old prefix: $found"
}

# lib/README.md: one error convention, the caller's buffer and its size.
@test "lib/'s prototypes return an error text in the caller's buffer and its size (lib/README.md)" {
	local h found
	for h in "$ROOT"/lib/*/*.h; do
		# An out-parameter for a text made by the callee (char **err,
		# const char **error, **why, **what, **msg), or a buffer whose
		# size the callee assumes (char err[256]).
		found=$(grep -nE 'char \*\*(err|error|why|what|msg|reason)\b|\(.*char (err|why|msg)\[[0-9A-Z_]*\][,)]|, char (err|why|msg)\[[0-9A-Z_]*\][,)]' "$h" || true)
		[ -z "$found" ] || fail "${h#"$ROOT/"}: $found: not the caller's buffer and its size (lib/README.md: err, errlen)"
	done
}
