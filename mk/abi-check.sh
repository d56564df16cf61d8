#!/bin/sh
# abi-check.sh BASELINE LIBRARY: is LIBRARY's ABI that of BASELINE (an
# abidw file, mk/abi.mk)?  Exit 0 when it is, or when it only adds
# functions, or when its SONAME is not the baseline's (the bump that allows
# an incompatible change: the baseline is then to be made again); 1 when a
# function or type of sc.h was removed or changed under the same SONAME.
set -u
baseline=$1 lib=$2
root=$(cd "$(dirname "$0")/.." && pwd)

for tool in abidiff readelf; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "abi-check: $tool is not installed (make deps)" >&2
		exit 2
	}
done
[ -f "$baseline" ] || {
	echo "abi-check: $baseline: no baseline (make abi-baseline writes it)" >&2
	exit 2
}
[ -f "$lib" ] || {
	echo "abi-check: $lib: no library (make lib)" >&2
	exit 2
}

old=$(sed -n "s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$baseline" | head -n 1)
new=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$old" != "$new" ]; then
	echo "abi-check: the SONAME is $new, the baseline's $old: an incompatible change on purpose;"
	echo "abi-check: make abi-baseline to start $new's baseline"
	exit 0
fi

# --no-added-syms: a new function is no break (lib/api/symbols lists it).
report=$(abidiff --headers-dir2 "$root/include" --drop-private-types --no-added-syms \
	"$baseline" "$lib")
status=$?
if [ "$status" -eq 0 ]; then
	echo "abi-check: $lib ($new) keeps the ABI of $baseline"
	exit 0
fi
printf '%s\n' "$report"
# abidiff's status is a bit set: 1 its own error, 2 usage, 4 a change,
# 8 an incompatible change.
if [ $((status & 3)) -ne 0 ]; then
	echo "abi-check: abidiff failed (status $status)" >&2
	exit 2
fi
echo "abi-check: $lib changes the ABI of $new (above): bump the SONAME on purpose" \
	"(Makefile, lib/api/libsc.map) and make abi-baseline, or undo the change" >&2
exit 1
