#!/bin/sh
# make distcheck: proves that sc-VERSION.tar.gz builds, tests, installs and
# uninstalls on its own, away from this checkout and without git.
#
#     sh mk/distcheck.sh TARBALL VERSION "PROGS" "MAN PAGES"
#
# PROGS and MAN PAGES are what this checkout's Makefile found (cmd/sc-*,
# man/*.[157]): the tarball must install every one of them, so a file left
# out of the tarball shows up here.  Steps, in a fresh temporary folder:
#  1. unpack; `make dist` there (no git) must list the same files;
#  2. make; make test (the whole suite), with a `git` on PATH that fails,
#     so that nothing in the build or the tests leans on git;
#  3. make install DESTDIR=STAGE PREFIX=/usr/local; every program is
#     installed executable in bin/, every page in share/man/manN/, nothing
#     lands outside the prefix; mandoc -Tlint -Wwarning and groff -ww
#     (what `man -l` runs) are silent on each installed page; each installed program's --version prints
#     "NAME VERSION" (sc-fetch named, once it exists);
#  4. make uninstall with the same DESTDIR and PREFIX leaves no file or
#     link under STAGE (the empty folders that install made are left by
#     uninstall, as with most Makefiles; distcheck then removes STAGE).
# Set DISTCHECK_KEEP=1 to keep the temporary folder for a look.
set -eu
tarball=$1
version=$2
progs=$3
mans=$4
prefix=/usr/local
name=sc-$version

say() { echo "distcheck: $*"; }
fail() {
	echo "distcheck: FAILED: $*" >&2
	exit 1
}

[ -f "$tarball" ] || fail "no $tarball (run make dist)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sc-distcheck.XXXXXX")
tarball_abs=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
cleanup() {
	if [ "${DISTCHECK_KEEP:-0}" = 1 ]; then
		echo "distcheck: kept $tmp" >&2
	else
		chmod -R u+w "$tmp" 2>/dev/null
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

src=$tmp/$name
stage=$tmp/stage
mkdir -p "$tmp/nogit" "$stage"
printf '#!/bin/sh\necho "distcheck: git called while building or testing the tarball: git $*" >&2\nexit 127\n' >"$tmp/nogit/git"
chmod +x "$tmp/nogit/git"

# This make's own settings are not the tarball's business; a caller's
# TESTS= (to rehearse quickly) is passed on explicitly below.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
tests=${TESTS:-}

say "unpacking $tarball into $tmp"
tar -xzf "$tarball_abs" -C "$tmp"
[ -d "$src" ] || fail "$tarball does not unpack into $name/"
[ -f "$src/Makefile" ] || fail "$tarball has no Makefile"

say "make dist inside the unpacked tree (no git) packs the same files"
(cd "$src" && PATH="$tmp/nogit:$PATH" make --no-print-directory dist >/dev/null) ||
	fail "make dist in the unpacked tree"
tar -tzf "$tarball_abs" | LC_ALL=C sort >"$tmp/list.outer"
tar -tzf "$src/$name.tar.gz" | LC_ALL=C sort >"$tmp/list.inner"
diff -u "$tmp/list.outer" "$tmp/list.inner" >&2 || fail "the tarball's own make dist packs other files"
rm -f "$src/$name.tar.gz"

say "make -j$(nproc)"
PATH="$tmp/nogit:$PATH" make -C "$src" --no-print-directory -j"$(nproc)" || fail "make"
say "make test${tests:+ TESTS=$tests}"
PATH="$tmp/nogit:$PATH" make -C "$src" --no-print-directory test ${tests:+TESTS="$tests"} ||
	fail "make test"

say "make install DESTDIR=$stage PREFIX=$prefix"
make -C "$src" --no-print-directory install DESTDIR="$stage" PREFIX="$prefix" >/dev/null ||
	fail "make install"

# Nothing outside the prefix.
outside=$(find "$stage" ! -type d | sed "s,^$stage,," | grep -v "^$prefix/" || true)
[ -z "$outside" ] || fail "installed outside $prefix: $outside"

for p in $progs; do
	bin=$stage$prefix/bin/$p
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		fail "$prefix/bin/$p not installed (or not executable)"
	fi
	out=$("$bin" --version 2>&1) || fail "$prefix/bin/$p --version exited $?: $out"
	case "$out" in
	"$p $version" | "$p $version "*) ;;
	*) fail "$prefix/bin/$p --version printed '$out', not '$p $version ...'" ;;
	esac
	say "installed $p --version: $out"
done
case " $progs " in
*" sc-fetch "*) ;;
*) say "note: no sc-fetch in this tree yet; checked the programs there are" ;;
esac

for m in $mans; do
	page=$(basename "$m")
	section=${page##*.}
	installed=$stage$prefix/share/man/man$section/$page
	[ -f "$installed" ] || fail "$prefix/share/man/man$section/$page not installed"
	# Warnings and worse fail; style notes (e.g. an .Xr to a page that
	# is not installed on this machine) are shown but do not.
	lint=$(mandoc -Tlint -Wwarning "$installed" 2>&1) || fail "mandoc -Tlint: $lint"
	[ -z "$lint" ] || fail "mandoc -Tlint: $lint"
	# What `man -l` does on a machine with man-db: groff, all warnings on.
	if command -v groff >/dev/null 2>&1; then
		lint=$(groff -ww -z -mandoc -Tutf8 "$installed" 2>&1) || fail "groff -ww: $lint"
		[ -z "$lint" ] || fail "groff -ww: $lint"
	fi
	say "installed $page: mandoc -Tlint and groff -ww clean"
done

say "make uninstall DESTDIR=$stage PREFIX=$prefix"
make -C "$src" --no-print-directory uninstall DESTDIR="$stage" PREFIX="$prefix" >/dev/null ||
	fail "make uninstall"
left=$(find "$stage" ! -type d | sed "s,^$stage,,")
[ -z "$left" ] || fail "uninstall left files behind: $left"
say "uninstall left no files ($(find "$stage" -mindepth 1 -type d | wc -l) empty folders, removed with the stage)"

nprogs=$(echo "$progs" | wc -w)
nmans=$(echo "$mans" | wc -w)
say "$tarball is ready: $nprogs programs, $nmans man pages"
