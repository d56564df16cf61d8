#!/bin/sh
# make deb: the Debian binary packages, built by Debian's tools from the
# debian/ folder, out of tree, then checked by lintian.
#
#     sh mk/deb.sh VERSION OUTDIR
#
#  1. debian/changelog's version must be the Makefile's VERSION (a release
#     adds a changelog entry, dch -v VERSION);
#  2. the tracked files are packed as `make dist` packs them (mk/dist.sh)
#     and unpacked in a temporary folder: the build never writes into the
#     checkout, and a file that is not tracked cannot slip into a package;
#  3. dpkg-buildpackage -b -us -uc there (binary packages only, unsigned),
#     its log kept as OUTDIR/build.log;
#  4. the .deb, .changes and .buildinfo files replace OUTDIR's;
#  5. lintian on the .changes (every .deb, and the .buildinfo): its output
#     is kept as OUTDIR/lintian.txt and an error fails.  Warnings are listed
#     with their reasons in doc/release.md ("Debian packages").
set -eu
version=$1
out=$2

say() { echo "deb: $*"; }
fail() {
	echo "deb: FAILED: $*" >&2
	exit 1
}

[ -f debian/changelog ] || fail "no debian/changelog here (run make deb at the repository root)"
changelog_version=$(dpkg-parsechangelog -S Version)
[ "$changelog_version" = "$version" ] ||
	fail "debian/changelog is at $changelog_version, the Makefile's VERSION is $version: add an entry (dch -v $version)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sc-deb.XXXXXX")
cleanup() {
	if [ "${DEB_KEEP:-0}" = 1 ]; then
		echo "deb: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sh mk/dist.sh "$version" "$tmp" >/dev/null || fail "packing the tracked files (mk/dist.sh)"
tar -xzf "$tmp/sc-$version.tar.gz" -C "$tmp"

# This make's settings are not the package build's business; nor is a
# SANITIZE=1 of the caller's (make deb SANITIZE=1): a package is built
# as Debian builds it, and ASan's programs would not even run under
# dpkg-buildpackage's fakeroot.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES SANITIZE
case " ${DEB_BUILD_OPTIONS:-} " in
*" parallel="*) ;;
*) DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=2" ;;
esac
export DEB_BUILD_OPTIONS

mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/build.log "$out"/lintian.txt
say "dpkg-buildpackage -b -us -uc (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS), log in $out/build.log"
start=$(date +%s)
if ! (cd "$tmp/sc-$version" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	fail "dpkg-buildpackage (the end of $out/build.log is above)"
fi
say "built in $(($(date +%s) - start)) s"

for f in "$tmp"/*.deb "$tmp"/*.changes "$tmp"/*.buildinfo; do
	[ -f "$f" ] || fail "dpkg-buildpackage made no $(basename "$f")"
	cp "$f" "$out/"
	say "$out/$(basename "$f")"
done

changes=$(ls "$out"/*.changes)
say "lintian $changes"
status=0
lintian --fail-on error "$changes" >"$out/lintian.txt" 2>&1 || status=$?
cat "$out/lintian.txt"
[ "$status" -eq 0 ] || fail "lintian found errors (above, and in $out/lintian.txt)"
say "lintian: no errors, $(grep -c '^W: ' "$out/lintian.txt" || true) warnings"
