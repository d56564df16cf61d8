#!/bin/sh
# Packs sc-VERSION.tar.gz in the current directory (the repository root),
# or in OUTDIR (mk/deb.sh packs into its own temporary folder).
#
#     sh mk/dist.sh VERSION [OUTDIR]
#
# In a git checkout the file list is `git ls-files` (what is tracked, as it
# is in the work tree), so nothing stray is packed; a tracked file deleted
# from the work tree is left out.  Outside git (an unpacked tarball) it is
# every file but the build outputs, so `make dist` works there too.
#
# The tarball is reproducible: entries sorted, owner root, one mtime (the
# last commit's, or SOURCE_DATE_EPOCH), gzip without a name or time stamp.
set -eu
version=$1
name=sc-$version
tarball=${2:+$2/}$name.tar.gz

list=$(mktemp)
trap 'rm -f "$list" "$tarball.tmp"' EXIT

if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
	[ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
	git ls-files -z | tr '\0' '\n' | while IFS= read -r f; do
		[ -f "$f" ] || [ -L "$f" ] && echo "$f"
	done >"$list"
	: "${SOURCE_DATE_EPOCH:=$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
else
	find . \( -path ./.git -o -path ./build -o -path ./bin \) -prune -o \
		\( -type f -o -type l \) ! -name 'sc-*.tar.gz' ! -name '*.o' ! -name '*.d' -print |
		sed 's,^\./,,' >"$list"
	: "${SOURCE_DATE_EPOCH:=$(date +%s)}"
fi
# A file name with a newline cannot be listed; none belongs in the tree.
if [ ! -s "$list" ]; then
	echo "dist: no files to pack" >&2
	exit 1
fi

LC_ALL=C sort -o "$list" "$list"
# Through a plain .tar first, so that a failing tar is not hidden by a pipe.
tar --create --file="$tarball.tmp" --transform="s,^,$name/," --sort=name --format=gnu \
	--owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
	--verbatim-files-from --files-from="$list"
gzip -n -9 -c "$tarball.tmp" >"$tarball"
echo "dist: $tarball: $(wc -l <"$list") files, $(wc -c <"$tarball") bytes"
