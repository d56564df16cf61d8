#!/bin/sh
# Installs the Debian packages given as arguments that are not installed yet.
# Silent when all are there; runs apt-get update first, because a fresh
# machine's package lists may be empty.
set -eu
missing=
for pkg in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $pkg"
	fi
done
[ -z "$missing" ] && exit 0

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
