# Release discipline (issue 8): what a maintainer runs before a release, and
# CI on every change.  Included by the Makefile, whose variables it reads
# (VERSION, PROGS, MAN1, MAN3, MAN5, MAN7, PKG_CFLAGS).
#
#   make lint          cppcheck and clang-tidy over the C code of lib/, cmd/, test/,
#                      and shellcheck (so CI, which runs lint, checks the scripts)
#   make format        rewrite that code with clang-format (.clang-format)
#   make format-check  fail if clang-format would change anything
#   make shellcheck    shellcheck over every shell script (mk/shell-scripts.sh)
#   make dist          sc-$(VERSION).tar.gz, from `git ls-files`
#   make distcheck     unpack, build, test, install, check, uninstall (mk/distcheck.sh)
#
# The version lives in one place, the Makefile's VERSION line: it names the
# tarball and is compiled in as SC_VERSION, which --version prints.

# The tools these targets need, installed like `make deps` does (Debian).
RELEASE_DEB_PKGS = cppcheck clang-tidy clang-format shellcheck mandoc

# Every C file of ours: the library, the programs, the unit tests, the
# fixture server and whatever C the benchmarks grow.  Headers are linted
# through the files that include them (.clang-tidy's HeaderFilterRegex).
LINT_SRC   = $(sort $(wildcard lib/*/*.c cmd/*.c cmd/*/*.c test/*/*.c examples/*.c))
FORMAT_SRC = $(sort $(wildcard include/*.h lib/*/*.[ch] cmd/*.[ch] cmd/*/*.[ch] test/*/*.[ch] examples/*.c))

# The Makefile's compile flags, less optimisation and -Werror (clang-tidy
# reports clang's own -Wall -Wextra warnings as clang-diagnostic-*, errors
# through WarningsAsErrors).
LINT_CFLAGS = -std=c17 -Wall -Wextra -D_GNU_SOURCE -DSC_VERSION='"$(VERSION)"' \
              -Ilib -Iinclude -Icmd -Itest/unit $(PKG_CFLAGS)

# cppcheck knows C11 at most (C17 only fixed defects).  The libraries' .cfg
# files teach it which calls allocate, free and must be checked (not
# gnu.cfg: it wrongly forbids accept4(fd, NULL, NULL)).  cppcheck 2.10
# ignores C11's _Noreturn, so that after "if (!p) sc_die(...)" it takes p
# to be possibly NULL; it does honour the GNU attribute, hence the -D.
# Inline suppressions ("// cppcheck-suppress id" with a comment why) are
# honoured.
CPPCHECK_FLAGS = --enable=warning,performance,portability --error-exitcode=1 \
                 --inline-suppr --quiet --std=c11 \
                 --library=posix --library=libcurl --library=sqlite3 \
                 '-D_Noreturn=__attribute__((noreturn))' \
                 -D_GNU_SOURCE -DSC_VERSION='"$(VERSION)"' -Ilib -Iinclude -Icmd -Itest/unit

DIST_NAME    = sc-$(VERSION)
DIST_TARBALL = $(DIST_NAME).tar.gz

.PHONY: release-deps lint lint-cppcheck lint-tidy format format-check shellcheck \
        shellcheck-bats dist distcheck

release-deps:
	@sh test/deps.sh $(RELEASE_DEB_PKGS)

lint: release-deps
	@$(MAKE) --no-print-directory -k lint-cppcheck lint-tidy shellcheck

lint-cppcheck:
	cppcheck $(CPPCHECK_FLAGS) $(LINT_SRC)

lint-tidy:
	@echo "clang-tidy $(words $(LINT_SRC)) files (.clang-tidy)"
	@sh mk/tidy.sh $(LINT_SRC) -- $(LINT_CFLAGS)

format: release-deps
	clang-format -i --style=file $(FORMAT_SRC)

format-check: release-deps
	@clang-format --dry-run --Werror --style=file $(FORMAT_SRC) || \
	    { echo "format-check: run 'make format' (clang-format, .clang-format)" >&2; exit 1; }
	@echo "format-check: $(words $(FORMAT_SRC)) files formatted"

# Every shell script; the bats suites are bash underneath and are checked
# on a best-effort basis by shellcheck-bats, which reports but never fails
# (bats' own syntax, such as `run -2`, is not shell that shellcheck knows).
# Excluded there: SC1091 (load'ed helpers are not followed), SC2016 ('$x'
# meant for `run bash -c`), SC2030/SC2031 (each test is its own subshell),
# SC2034/SC2154 (status, output and lines are set and read by bats).
shellcheck: release-deps
	@scripts=$$(sh mk/shell-scripts.sh) && echo "shellcheck:" $$scripts && \
	    shellcheck -x -P SCRIPTDIR $$scripts

shellcheck-bats: release-deps
	-@for f in $$(sh mk/shell-scripts.sh --bats); do \
	    shellcheck -s bash -x -P SCRIPTDIR -e SC1091,SC2016,SC2030,SC2031,SC2034,SC2154 "$$f"; done

# No dependency on the build: the tarball is sources only.  Rebuilt every
# time, since its contents follow the git index, not file dates.
dist:
	@sh mk/dist.sh $(VERSION)

# TESTS=... narrows the test run inside the tarball, to rehearse quickly;
# a release runs it whole.
distcheck: release-deps dist
	@sh mk/distcheck.sh $(DIST_TARBALL) $(VERSION) "$(PROGS)" "$(MAN1) $(MAN3) $(MAN5) $(MAN7)"
