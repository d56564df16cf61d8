#!/usr/bin/env bats
# The Debian packages (issue 23, doc/release.md "Debian packages"): `make deb`
# builds them from debian/ with dpkg-buildpackage and lintian passes them;
# dpkg installs sc-tools, libsc0 and libsc0-dev on this machine; the
# installed programs, man pages and crawl.mk work from their Debian paths,
# the example crawler compiles against the installed library with
# pkg-config and runs; dpkg --purge leaves nothing.
#
# The build and the install are done once, in setup_file (about half a
# minute: the build is the slow part).  Installing needs root (or sudo
# without a password): without it the suite fails, it does not skip.
# Only the installed files are used here: programs by their /usr/bin path,
# crawl.mk with PATH=/usr/bin:/bin (not the checkout's bin/, which test/run
# puts first, nor /usr/local/bin, where `make install` puts its own), man
# pages with MANPATH=/usr/share/man.  Runs of this suite at the same time
# (make distcheck runs the suite inside its tarball) wait for each other
# on a lock, since both would install and purge the one sc-tools.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'
load 'lib/crawl'

bats_require_minimum_version 1.5.0

PKG=sc-tools
PKGS=(sc-tools libsc0 libsc0-dev)
LOCK=${TMPDIR:-/tmp}/sc-deb.bats.lock
INSTALLED_PATH=/usr/bin:/bin

# root, or sudo that asks no password; else the suite fails, saying why.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo -n "$@"
	fi
}

check_root() {
	[ "$(id -u)" -eq 0 ] && return 0
	command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && return 0
	echo "test/deb.bats installs packages with dpkg: run it as root, or with a sudo that needs no password" >&2
	return 1
}

# dpkg's status of a package (sc-tools unless named): installed,
# config-files, not-installed...
pkg_status() {
	dpkg-query -W -f='${db:Status-Status}' "${1:-$PKG}" 2>/dev/null || echo not-installed
}

# not-installed when none of PKGS is on the machine, else the first one's
# name and status.
pkgs_status() {
	local p
	for p in "${PKGS[@]}"; do
		[ "$(pkg_status "$p")" = not-installed ] || {
			echo "$p $(pkg_status "$p")"
			return
		}
	done
	echo not-installed
}

# dpkg ARGS..., waiting (at most 2 minutes) while another dpkg or apt
# (a `make deps` elsewhere) holds dpkg's lock.
dpkg_waiting() {
	local tries out
	for ((tries = 0; tries < 120; tries++)); do
		out=$(as_root dpkg "$@" 2>&1) && return 0
		[[ $out == *"dpkg frontend lock"* || $out == *"dpkg status database is locked"* ]] || break
		sleep 1
	done
	echo "$out" >&2
	return 1
}

# The package is built as Debian builds it, whatever SANITIZE says (see
# mk/deb.sh), and only what it installs is run: under make asan this file
# would repeat make test's run of it exactly, so it is skipped there.
asan_run() {
	[ "${SANITIZE:-}" = 1 ]
}

setup_file() {
	asan_run && return 0
	local need
	for need in dpkg-buildpackage dh lintian fakeroot man flock jq; do
		command -v "$need" >/dev/null 2>&1 || {
			echo "$need is not installed (make deps)" >&2
			return 1
		}
	done
	check_root || return 1
	exec {DEB_LOCK_FD}>"$LOCK"
	flock -w 900 "$DEB_LOCK_FD" || {
		echo "another test/deb.bats held $LOCK for 15 minutes" >&2
		return 1
	}
	if [ "$(pkgs_status)" != not-installed ]; then
		echo "$(pkgs_status) is already on this machine; this suite installs and purges ${PKGS[*]}." >&2
		echo "Remove them first: dpkg --purge ${PKGS[*]}" >&2
		return 1
	fi

	DEB_DIR=$BATS_FILE_TMPDIR/deb
	VERSION=$(make -s -C "$SC_REPO_ROOT" --no-print-directory print-version)
	DEB=$DEB_DIR/${PKG}_${VERSION}_$(dpkg --print-architecture).deb
	LIB_DEBS="$DEB_DIR/libsc0_${VERSION}_$(dpkg --print-architecture).deb $DEB_DIR/libsc0-dev_${VERSION}_$(dpkg --print-architecture).deb"
	export DEB_DIR VERSION DEB LIB_DEBS
	local start=$SECONDS
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$SC_REPO_ROOT" --no-print-directory deb \
		DEB_OUT="$DEB_DIR" >"$BATS_FILE_TMPDIR/make-deb.out" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/make-deb.rc"
	echo $((SECONDS - start)) >"$BATS_FILE_TMPDIR/make-deb.seconds"

	sc_server_start
	# A failed build is reported by the first test; the others fail on
	# the missing package.
	[ -f "$DEB" ] || return 0
	# From here on the package on the machine is this suite's to purge.
	touch "$BATS_FILE_TMPDIR/ours"
	# shellcheck disable=SC2086 # two file names
	dpkg_waiting -i "$DEB" $LIB_DEBS || return 1
	# (a blank line between one package's files and the next's)
	dpkg-query -L "${PKGS[@]}" | grep -v '^$' >"$BATS_FILE_TMPDIR/files"
}

teardown_file() {
	sc_server_stop
	# A test that failed before the purge test must not leave the
	# package on the machine; one this suite did not install (setup_file
	# refused to run) is not its to remove.
	[ -e "$BATS_FILE_TMPDIR/ours" ] || return 0
	[ "$(pkgs_status)" = not-installed ] || dpkg_waiting --purge "${PKGS[@]}"
}

setup() {
	! asan_run || skip "the package is no ASan build: make test runs this file"
	cd "$BATS_TEST_TMPDIR" || return 1
}

@test "make deb builds sc-tools at the Makefile's version, and lintian finds no error" {
	run cat "$BATS_FILE_TMPDIR/make-deb.out"
	[ "$(cat "$BATS_FILE_TMPDIR/make-deb.rc")" = 0 ] || fail "make deb failed: $output"
	echo "# make deb took $(cat "$BATS_FILE_TMPDIR/make-deb.seconds") s" >&3
	assert_output --partial "deb: lintian: no errors"
	[ -f "$DEB" ] || fail "no $DEB"
	[ "$(dpkg-deb -f "$DEB" Package)" = "$PKG" ]
	[ "$(dpkg-deb -f "$DEB" Version)" = "$VERSION" ]
	# The lintian output kept beside the packages has no error line.
	run grep '^E: ' "$DEB_DIR/lintian.txt"
	assert_failure
	# The build wrote nothing into the checkout but build/: it ran on a
	# copy of the tracked files.
	[ ! -e "$SC_REPO_ROOT/debian/tmp" ] && [ ! -e "$SC_REPO_ROOT/debian/$PKG" ]
}

@test "the package holds every program, crawl.mk and its helpers, and every man page, at Debian's paths" {
	local p m
	[ "$(pkg_status)" = installed ] || fail "$PKG is not installed ($(pkg_status))"
	for p in "$SC_REPO_ROOT"/cmd/sc-*; do
		p=$(basename "${p%.c}")
		grep -qx "/usr/bin/$p" "$BATS_FILE_TMPDIR/files" || fail "/usr/bin/$p is not in $PKG"
		[ -x "/usr/bin/$p" ] || fail "/usr/bin/$p is not executable"
	done
	for m in "$SC_REPO_ROOT"/man/*.[157]; do
		m=$(basename "$m")
		grep -qx "/usr/share/man/man${m##*.}/$m.gz" "$BATS_FILE_TMPDIR/files" || fail "$m is not in $PKG"
	done
	for f in crawl.mk crawl.sh crawl-progress.sh crawl-split.awk hadoop-map.sh hadoop-reduce.sh; do
		grep -qx "/usr/share/sc/$f" "$BATS_FILE_TMPDIR/files" || fail "/usr/share/sc/$f is not in $PKG"
	done
	[ -f /usr/share/doc/$PKG/copyright ]
	# Nothing outside /usr.
	run grep -v '^/usr/\|^/\.$\|^/usr$' "$BATS_FILE_TMPDIR/files"
	assert_failure
}

@test "the installed sc-fetch fetches from the fixture server and the installed sc-parse parses its record" {
	run --separate-stderr /usr/bin/sc-fetch --version
	assert_success
	[[ $output == "sc-fetch $VERSION"* ]] || fail "$output"
	echo "$SC_BASE/page/1" | /usr/bin/sc-fetch 2>fetch.log >fetched.jsonl
	[ "$(jq -r '"\(.status) \(.ok)"' fetched.jsonl)" = "200 true" ]
	/usr/bin/sc-parse <fetched.jsonl >parsed.jsonl
	[ "$(wc -l <parsed.jsonl)" = 1 ]
	[ "$(jq -r .title parsed.jsonl)" = "Page 1" ]
	[ "$(jq -r '.links[0]' parsed.jsonl)" = "$SC_BASE/page/2" ]
}

@test "man finds the installed pages under /usr/share/man" {
	# MANPATH: a page that `make install` put under /usr/local would
	# otherwise be found first.
	run env MANPATH=/usr/share/man man -w sc-fetch
	assert_success
	assert_output /usr/share/man/man1/sc-fetch.1.gz
	run env MANPATH=/usr/share/man man -w 7 sc-crawl
	assert_output /usr/share/man/man7/sc-crawl.7.gz
	run env MANPATH=/usr/share/man man -w 5 sc-record
	assert_output /usr/share/man/man5/sc-record.5.gz
	# And it renders.
	run env MANPATH=/usr/share/man MANPAGER=cat MANWIDTH=80 man sc-fetch
	assert_success
	assert_output --partial "sc-fetch"
	assert_output --partial "SYNOPSIS"
}

@test "the installed crawl.mk crawls with the installed programs" {
	[ -f /usr/share/sc/crawl.mk ] || fail "no /usr/share/sc/crawl.mk"
	seeds_for 127.0.0.1 >seeds.txt
	run env PATH="$INSTALLED_PATH" make -f /usr/share/sc/crawl.mk --no-print-directory \
		SEEDS=seeds.txt DEPTH=1 DIR=c CHUNK=4
	assert_success
	expected_pages "$SC_BASE" 1 >expected
	crawled_pages c >crawled
	diff -u expected crawled
	[ "$(jq -s 'map(select(.ok != true)) | length' c/pages.jsonl)" = 0 ]
}

@test "the example crawler compiles against the installed libsc0-dev with pkg-config, and crawls" {
	[ "$(pkg_status libsc0-dev)" = installed ] || fail "libsc0-dev is not installed"
	[ -f /usr/include/sc.h ] && [ -f "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libsc.so.0" ]
	# Not the checkout's build: only what the packages installed.
	run -0 env PKG_CONFIG_PATH= pkg-config --cflags --libs sc
	assert_output --partial "-lsc"
	# shellcheck disable=SC2046 # pkg-config's words
	run -0 cc -std=c17 -Wall -Wextra -Werror -o crawler "$SC_REPO_ROOT/examples/crawler.c" \
		$(PKG_CONFIG_PATH='' pkg-config --cflags --libs sc jansson)
	# The packaged library (ldd may name it by /lib, merged into /usr/lib).
	local linked
	linked=$(ldd ./crawler | awk '$1 == "libsc.so.0" { print $3 }')
	[ -n "$linked" ] || fail "crawler is not linked to libsc.so.0: $(ldd ./crawler)"
	dpkg-query -S "$(readlink -f "$linked")" | grep -q '^libsc0:' ||
		fail "$linked is not libsc0's"
	dpkg-query -S "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/$(basename "$(readlink -f "$linked")")" >/dev/null
	run -0 --separate-stderr bash -c "echo '$SC_BASE/page/1' | ./crawler 1"
	assert_output --regexp "^200	$SC_BASE/page/1	.+"
	sc_server_log | grep -q '"/page/1"' || fail "the crawler did not fetch /page/1"

	MANPATH=/usr/share/man run -0 man -w 3 sc_fetcher
	assert_output --partial /usr/share/man/man3/sc_fetcher.3
}

@test "dpkg --purge removes every file the packages installed" {
	[ -s "$BATS_FILE_TMPDIR/files" ] || fail "no file list: ${PKGS[*]} were not installed"
	dpkg_waiting --purge "${PKGS[@]}"
	[ "$(pkgs_status)" = not-installed ]
	local f left=
	# Folders such as /usr/bin stay (other packages own them too); every
	# file and link of the package is gone, and its own folders.
	while IFS= read -r f; do
		if [ -d "$f" ] && [ ! -L "$f" ]; then
			continue
		fi
		if [ -e "$f" ] || [ -L "$f" ]; then left="$left $f"; fi
	done <"$BATS_FILE_TMPDIR/files"
	[ -z "$left" ] || fail "left behind:$left"
	[ ! -e /usr/share/sc ] && [ ! -e /usr/share/doc/$PKG ]
	# No /usr/bin/sc-* left that no other package owns.
	for f in /usr/bin/sc-*; do
		[ -e "$f" ] || continue
		dpkg-query -S "$f" >/dev/null 2>&1 || fail "$f is left, owned by no package"
	done
}
