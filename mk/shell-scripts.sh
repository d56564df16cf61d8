#!/bin/sh
# Lists the project's shell scripts, one a line: files under .ci/, debian/, mk/,
# share/ and test/ whose name ends in .sh or .bash, or whose first line is a
# sh or bash #!.  With --bats, lists the bats suites instead.  Paths are
# relative to the repository root, which is where this must run.  npm's
# test/npm/node_modules (not the project's: playwright-core ships a shell
# script) is left out.
set -eu
mode=${1:-scripts}
find .ci debian mk share test -name node_modules -prune -o -type f -print 2>/dev/null | LC_ALL=C sort | while IFS= read -r f; do
	case "$mode:$f" in
	--bats:*.bats) echo "$f" ;;
	--bats:*) ;;
	*:*.bats) ;;
	*:*.sh | *:*.bash) echo "$f" ;;
	*)
		first=$(head -n 1 "$f" 2>/dev/null | tr -d '\0' || true)
		case "$first" in
		'#!'*/sh | '#!'*/sh\ * | '#!'*/bash | '#!'*/bash\ * | '#!'*env\ sh* | '#!'*env\ bash*) echo "$f" ;;
		esac
		;;
	esac
done
