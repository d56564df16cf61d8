#!/bin/sh
# Runs clang-tidy (with the committed .clang-tidy) over each C file given,
# with the compile flags that follow "--".  Reports every file, not just the
# first that fails, and drops clang's "N warnings generated." chatter (the
# warnings it counts are those of system headers, filtered out anyway).
# The files are checked side by side, TIDY_JOBS at a time (default: the
# CPUs; a file takes seconds, the largest a quarter of a minute), and
# their reports printed in the order given.
#
#     sh mk/tidy.sh lib/kit/cli.c cmd/sc-sink.c -- -std=c17 -Ilib ...
set -u

# --one DIR "N FILE" -- FLAGS...: one file's report into DIR/N.out, and
# DIR/N.failed if clang-tidy failed on it.
if [ "${1:-}" = --one ]; then
	dir=$2 n=${3%% *} f=${3#* }
	shift 4
	clang-tidy --quiet "$f" -- "$@" >"$dir/$n.raw" 2>&1 || : >"$dir/$n.failed"
	grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$dir/$n.raw" >"$dir/$n.out"
	exit 0
fi

files=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	files="$files $1"
	shift
done
[ $# -gt 0 ] && shift # the "--"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
for f in $files; do
	n=$((n + 1))
	echo "$n $f" >>"$dir/list"
done
[ "$n" -gt 0 ] || exit 0
xargs -d '\n' -P "${TIDY_JOBS:-$(nproc)}" -I '{}' sh "$0" --one "$dir" '{}' -- "$@" <"$dir/list"

status=0
i=0
while [ "$i" -lt "$n" ]; do
	i=$((i + 1))
	cat "$dir/$i.out" 2>/dev/null || status=1 # a job that never ran
	[ ! -e "$dir/$i.failed" ] || status=1
done
exit "$status"
