#!/bin/sh
# Runs clang-tidy (with the committed .clang-tidy) over each C file given,
# with the compile flags that follow "--".  Reports every file, not just the
# first that fails, and drops clang's "N warnings generated." chatter (the
# warnings it counts are those of system headers, filtered out anyway).
#
#     sh mk/tidy.sh lib/kit/cli.c cmd/sc-sink.c -- -std=c17 -Ilib ...
set -u
files=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	files="$files $1"
	shift
done
[ $# -gt 0 ] && shift # the "--"

status=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in $files; do
	if ! clang-tidy --quiet "$f" -- "$@" >"$out" 2>&1; then
		status=1
	fi
	grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$out"
done
exit "$status"
