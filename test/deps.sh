#!/bin/sh
# Installs the Debian packages given as arguments that are not installed yet.
# Silent when all are there; runs apt-get update first, because a fresh
# machine's package lists may be empty.  Then the test-only npm packages
# (test/npm: warcio, the independent WARC reader of test/sc-warc.bats;
# puppeteer-core and playwright-core, the reference renderers of
# test/render-ref.bats and the render benchmark), pinned by its
# package-lock.json, with `npm ci` from the npm registry when
# test/npm/node_modules is missing or older than the lock (npm ci writes
# node_modules/.package-lock.json; a lock changed since is installed again).
set -eu

npm_deps() {
	npm_dir=$(dirname "$0")/npm
	# find -newer: POSIX sh has no -nt.
	if [ -f "$npm_dir/node_modules/.package-lock.json" ] &&
		[ -z "$(find "$npm_dir/package-lock.json" -newer "$npm_dir/node_modules/.package-lock.json")" ]; then
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1; then
		echo "make deps: npm is missing (it comes with nodejs): test/sc-warc.bats needs it" >&2
		return 0
	fi
	echo "make deps: npm ci in $npm_dir" >&2
	(cd "$npm_dir" && npm ci --no-audit --no-fund >&2)
}

missing=
for pkg in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $pkg"
	fi
done
if [ -z "$missing" ]; then
	npm_deps
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	sudo=
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo=sudo
else
	echo "make deps: missing packages:$missing" >&2
	echo "make deps: run as root: apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
echo "make deps: installing$missing" >&2
$sudo apt-get update -qq >&2
# shellcheck disable=SC2086 # word splitting of the package list is intended
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >&2
npm_deps
