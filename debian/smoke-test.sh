#!/bin/sh
# dh_auto_test's smoke test (debian/rules): each program in bin/ runs and
# its --version line is "NAME VERSION ...", VERSION being $1.
set -eu
version=$1
count=0
for bin in bin/sc-*; do
	name=$(basename "$bin")
	line=$("$bin" --version 2>&1) || {
		echo "smoke test: $name --version exited $?: $line" >&2
		exit 1
	}
	case "$line" in
	"$name $version" | "$name $version "*) ;;
	*)
		echo "smoke test: $name --version printed '$line', not '$name $version ...'" >&2
		exit 1
		;;
	esac
	count=$((count + 1))
done
[ "$count" -gt 0 ] || {
	echo "smoke test: no programs in bin/" >&2
	exit 1
}
echo "smoke test: $count programs print version $version"
