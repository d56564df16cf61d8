#!/usr/bin/env bats
# The release tools themselves (mk/, .clang-format, .clang-tidy), on small
# hermetic inputs: what `make dist` packs, that `make distcheck` fails for
# each thing it promises to catch, and that the lint and format configs
# hold the project's style and find a planted bug.  The real `make lint`,
# `make format-check` and `make distcheck` run in CI, not here.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# Nothing of the build under test runs here (no program of SC_BIN, no
# library): under make asan this file would repeat make test's run of it
# exactly, so it is skipped there.
setup() {
	[ "${SANITIZE:-}" != 1 ] || skip "no ASan build is used here: make test runs this file"
}

# make deps installs every tool these tests use: a missing one is a failure.
need() {
	command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed (make deps)"
}

# git works here unless `make distcheck` is running this suite: it puts a
# failing git first on PATH to prove the build and tests do without it.
need_git() {
	git --version >/dev/null 2>&1 || skip "no working git (inside make distcheck)"
}

# A stand-in project with the shape distcheck expects: a Makefile with all,
# test, install, uninstall and dist; one program; one man page.  $1 is its
# folder.  Tests then break one thing and pack it with mk/dist.sh.
make_project() {
	local dir=$1
	mkdir -p "$dir/mk" "$dir/man"
	cp "$ROOT/mk/dist.sh" "$dir/mk/dist.sh"
	cat >"$dir/Makefile" <<'EOF'
VERSION  = 9.9.9
PREFIX  ?= /usr/local
DESTDIR ?=
all: bin/sc-fake
bin/sc-fake: sc-fake.sh
	@mkdir -p bin && cp sc-fake.sh $@ && chmod +x $@
test:
	@echo "1 passed, 0 failed"
install: all
	@mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	@install -m 755 bin/sc-fake $(DESTDIR)$(PREFIX)/bin/
	@install -m 644 man/sc-fake.1 $(DESTDIR)$(PREFIX)/share/man/man1/
uninstall:
	@rm -f $(DESTDIR)$(PREFIX)/bin/sc-fake $(DESTDIR)$(PREFIX)/share/man/man1/sc-fake.1
dist:
	@sh mk/dist.sh $(VERSION)
EOF
	printf '#!/bin/sh\necho "sc-fake 9.9.9 (stand-in)"\n' >"$dir/sc-fake.sh"
	cat >"$dir/man/sc-fake.1" <<'EOF'
.Dd November 29, 2026
.Dt SC-FAKE 1
.Os
.Sh NAME
.Nm sc-fake
.Nd a stand-in program for the release tests
.Sh SYNOPSIS
.Nm
.Sh DESCRIPTION
.Nm
prints its version.
EOF
}

# Packs the project in $1 (not a git checkout) and runs distcheck on it.
distcheck_project() {
	local dir=$1 progs=${2:-sc-fake}
	(cd "$dir" && sh mk/dist.sh 9.9.9 >/dev/null) || return 99
	run --separate-stderr env TMPDIR="$BATS_TEST_TMPDIR" \
		sh "$ROOT/mk/distcheck.sh" "$dir/sc-9.9.9.tar.gz" 9.9.9 "$progs" man/sc-fake.1
}

@test "distcheck fails when uninstall leaves a file behind" {
	need mandoc
	make_project "$BATS_TEST_TMPDIR/p"
	sed -i 's,^\t@rm -f $(DESTDIR)$(PREFIX)/bin/sc-fake ,\t@rm -f ,' "$BATS_TEST_TMPDIR/p/Makefile"
	distcheck_project "$BATS_TEST_TMPDIR/p"
	assert_failure
	assert_output --partial "distcheck: make uninstall"
	[[ $stderr == *"uninstall left files behind: /usr/local/bin/sc-fake"* ]]
}

@test "distcheck fails when --version does not print the Makefile's VERSION" {
	need mandoc
	make_project "$BATS_TEST_TMPDIR/p"
	printf '#!/bin/sh\necho "sc-fake 0.0.1"\n' >"$BATS_TEST_TMPDIR/p/sc-fake.sh"
	distcheck_project "$BATS_TEST_TMPDIR/p"
	assert_failure
	[[ $stderr == *"--version printed 'sc-fake 0.0.1', not 'sc-fake 9.9.9 ...'"* ]]
}

@test "distcheck fails when a man page has a mandoc warning" {
	need mandoc
	make_project "$BATS_TEST_TMPDIR/p"
	# SYNOPSIS after DESCRIPTION: "sections out of conventional order".
	sed -i '/^\.Sh SYNOPSIS$/,/^\.Nm$/d' "$BATS_TEST_TMPDIR/p/man/sc-fake.1"
	printf '.Sh SYNOPSIS\n.Nm\n' >>"$BATS_TEST_TMPDIR/p/man/sc-fake.1"
	distcheck_project "$BATS_TEST_TMPDIR/p"
	assert_failure
	[[ $stderr == *"mandoc -Tlint"*"sections out of conventional order"* ]]
}

@test "distcheck fails when a program of the checkout is not installed from the tarball" {
	need mandoc
	make_project "$BATS_TEST_TMPDIR/p"
	distcheck_project "$BATS_TEST_TMPDIR/p" "sc-fake sc-forgotten"
	assert_failure
	[[ $stderr == *"/usr/local/bin/sc-forgotten not installed"* ]]
}

@test "distcheck fails when the tarball's tests fail, and cleans up its folder" {
	need mandoc
	make_project "$BATS_TEST_TMPDIR/p"
	sed -i 's|^\t@echo "1 passed, 0 failed"$|\t@echo "0 passed, 1 failed"; exit 1|' "$BATS_TEST_TMPDIR/p/Makefile"
	distcheck_project "$BATS_TEST_TMPDIR/p"
	assert_failure
	[[ $stderr == *"FAILED: make test"* ]]
	run ls "$BATS_TEST_TMPDIR"
	refute_output --partial sc-distcheck.
}

@test "distcheck fails when the build calls git" {
	need mandoc
	make_project "$BATS_TEST_TMPDIR/p"
	sed -i 's,^\t@mkdir -p bin,\t@git describe \&\& mkdir -p bin,' "$BATS_TEST_TMPDIR/p/Makefile"
	distcheck_project "$BATS_TEST_TMPDIR/p"
	assert_failure
	[[ $stderr == *"git called while building or testing the tarball: git describe"* ]]
}

@test "distcheck passes a sound project: installs, checks, uninstalls" {
	need mandoc
	make_project "$BATS_TEST_TMPDIR/p"
	distcheck_project "$BATS_TEST_TMPDIR/p"
	assert_success
	assert_output --partial "installed sc-fake --version: sc-fake 9.9.9 (stand-in)"
	assert_output --partial "installed sc-fake.1: mandoc -Tlint"
	assert_output --partial "uninstall left no files"
}

@test "dist packs the tracked files only, under sc-VERSION/, reproducibly" {
	need_git
	local p=$BATS_TEST_TMPDIR/g
	make_project "$p"
	(
		cd "$p" &&
			git init -q &&
			git add Makefile mk/dist.sh man/sc-fake.1 sc-fake.sh &&
			git -c user.name=t -c user.email=t@t commit -q -m x
	)
	echo stray >"$p/notes.txt"
	run sh -c "cd '$p' && sh mk/dist.sh 9.9.9"
	assert_success
	assert_output --partial "sc-9.9.9.tar.gz: 4 files"
	run tar -tzf "$p/sc-9.9.9.tar.gz"
	assert_output "sc-9.9.9/Makefile
sc-9.9.9/man/sc-fake.1
sc-9.9.9/mk/dist.sh
sc-9.9.9/sc-fake.sh"
	local first
	first=$(sha256sum <"$p/sc-9.9.9.tar.gz")
	touch "$p/Makefile"
	(cd "$p" && sh mk/dist.sh 9.9.9 >/dev/null)
	[ "$(sha256sum <"$p/sc-9.9.9.tar.gz")" = "$first" ]
}

@test "dist outside git packs all but build outputs" {
	local p=$BATS_TEST_TMPDIR/n
	make_project "$p"
	mkdir -p "$p/build/release" "$p/bin"
	touch "$p/build/release/x.o" "$p/bin/sc-fake" "$p/sc-0.0.1.tar.gz"
	run sh -c "cd '$p' && PATH=/nonexistent:\$PATH sh mk/dist.sh 9.9.9"
	assert_success
	run tar -tzf "$p/sc-9.9.9.tar.gz"
	assert_output "sc-9.9.9/Makefile
sc-9.9.9/man/sc-fake.1
sc-9.9.9/mk/dist.sh
sc-9.9.9/sc-fake.sh"
}

@test "the shipped tarball holds what make test needs" {
	# The checkout's (or the unpacked tarball's) own files: whatever
	# dist packs from here must include these.
	for f in Makefile mk/release.mk mk/dist.sh mk/distcheck.sh .clang-format .clang-tidy \
		test/run test/deps.sh test/release.bats; do
		[ -f "$ROOT/$f" ] || fail "$f is missing"
	done
}

@test "VERSION is set in one place, the Makefile, and nowhere else in the code" {
	run grep -E '^VERSION[[:space:]]*=' "$ROOT/Makefile"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	# No version literal compiled into lib/ or cmd/: SC_VERSION comes from -D.
	# The one other version is a format's, not sc's: the WACZ spec's
	# version, written in datapackage.json under its own key.
	run grep -rnE '"[0-9]+\.[0-9]+\.[0-9]+"' "$ROOT/lib" "$ROOT/cmd"
	printf '%s\n' "$output" | grep -v '"wacz_version", "1\.1\.1"' | grep -q . &&
		fail "a version literal: $output"
	true
}

@test ".clang-format: tabs, function braces on their own line, case not indented" {
	need clang-format
	local in=$BATS_TEST_TMPDIR/style.c
	printf 'int f(int x) {\n  switch (x) {\n    case 1: return 2;\n    default: break;\n  }\n  if (x) { return 1; }\n  return 0;\n}\n' >"$in"
	run clang-format --style="file:$ROOT/.clang-format" "$in"
	assert_success
	assert_output "$(printf 'int f(int x)\n{\n\tswitch (x) {\n\tcase 1:\n\t\treturn 2;\n\tdefault:\n\t\tbreak;\n\t}\n\tif (x) {\n\t\treturn 1;\n\t}\n\treturn 0;\n}')"
}

@test ".clang-tidy: finds a leak and an unchecked fclose, allows unchecked fprintf to stderr" {
	need clang-tidy
	local d=$BATS_TEST_TMPDIR/tidy
	mkdir -p "$d"
	cp "$ROOT/.clang-tidy" "$d/"
	cat >"$d/bug.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>

struct item {
	int n;
};

int count(const char *path)
{
	struct item **items = calloc(4, sizeof(*items));
	FILE *f = fopen(path, "r");

	fprintf(stderr, "counting %s\n", path);
	if (!f || !items)
		return -1;
	fclose(f);
	return 0;
}
EOF
	run --separate-stderr clang-tidy --quiet "$d/bug.c" -- -std=c17 -D_GNU_SOURCE
	assert_failure
	assert_output --partial "bug.c:16:2: error: the value returned by this function should be used [cert-err33-c"
	assert_output --partial "Potential leak of memory pointed to by 'items' [clang-analyzer-unix.Malloc"
	refute_output --partial "bug.c:13:"
	refute_output --partial "[bugprone-sizeof-expression"
}
