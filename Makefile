# sc: small C programs that scrape the web, composed with pipes.
# Settings live at the top; everything below is derived from the tree
# (cmd/*.c or cmd/NAME/*.c is a program, lib/PART/*.c the shared library,
# test/unit/*.c a unit test, test/server/*.c the fixture server).

VERSION   = 0.1.0
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
SHAREDIR ?= $(PREFIX)/share/sc
LIBDIR   ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR  ?=

CC       ?= cc
CFLAGS   ?= -O2 -g
PKGS      = libcurl libxml-2.0 jansson sqlite3 zlib libpsl libidn2 libxxhash libcrypto libssl libbrotlidec libdeflate libzstd libzip
# Debian packages that `make deps` installs; the first column is what dpkg knows.
DEB_PKGS  = libcurl4-openssl-dev libxml2-dev libjansson-dev libsqlite3-dev zlib1g-dev \
            libpsl-dev libidn2-dev libxxhash-dev libssl-dev libbrotli-dev libdeflate-dev libzstd-dev libzip-dev publicsuffix \
            pkg-config jq bats bats-support bats-assert curl sqlite3 valgrind \
            mandoc python3 cppcheck clang-tidy clang-format shellcheck clang \
            openssh-server openssh-client parallel rsync gnuplot-nox chromium chromium-headless-shell nodejs wget \
            nginx openssl abigail-tools tinyproxy $(DEB_TEST_DATA) $(DEB_BUILD_TOOLS)
# What tests compare with or read: extruct (sc-parse --structured's anchor,
# test/sc-parse-structured.bats), the Python docs (a real Sphinx tree,
# test/sc-parse-main.bats).
DEB_TEST_DATA = python3-extruct python3.11-doc
# What `make deb` needs besides the build's own libraries (debian/control's
# Build-Depends), and man-db for test/deb.bats' `man -w`.
DEB_BUILD_TOOLS = build-essential debhelper dpkg-dev fakeroot lintian man-db

ifeq ($(SANITIZE),1)
OUT       = build/asan
BIN       = $(OUT)/bin
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
OUT       = build/release
BIN       = bin
SAN_FLAGS =
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
SC_CFLAGS   = -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -DSC_VERSION='"$(VERSION)"' \
              -Ilib -Iinclude -fPIC -fvisibility=hidden $(PKG_CFLAGS) $(SAN_FLAGS) $(CPPFLAGS) $(CFLAGS)
SC_LDFLAGS  = $(SAN_FLAGS) -Wl,--as-needed $(LDFLAGS)
SC_LIBS     = $(PKG_LIBS) -lpthread -lm

LIB_SRC   = $(wildcard lib/*/*.c)
LIB_OBJ   = $(LIB_SRC:%.c=$(OUT)/%.o)
# The programs link the library's objects statically from this archive
# (every symbol visible to them); what is installed is $(LIBSC_SO) and
# $(LIBSC_PUB): only include/sc.h's functions exported (lib/api/README.md).
LIBSC     = $(OUT)/libsc.a
SONAME    = libsc.so.0
LIBSC_SO  = $(OUT)/libsc/libsc.so.$(VERSION)
LIBSC_PUB = $(OUT)/libsc/libsc.a

# A program is cmd/NAME.c, or cmd/NAME/*.c once it outgrows one file.
PROG_FILES = $(patsubst cmd/%.c,%,$(wildcard cmd/sc-*.c))
PROG_DIRS  = $(patsubst cmd/%/,%,$(wildcard cmd/sc-*/))
PROGS      = $(sort $(PROG_FILES) $(PROG_DIRS))
PROG_BINS  = $(PROGS:%=$(BIN)/%)

UNIT_SRC   = $(wildcard test/unit/*.c)
UNIT_BINS  = $(UNIT_SRC:test/unit/%.c=$(OUT)/test/%)
# Programs on libsc's public API alone (-Iinclude, linked to libsc.so.0):
# the API's tests (test/libsc/*.c) and the examples (examples/*.c).
API_TEST_BINS = $(patsubst test/libsc/%.c,$(OUT)/libsc-test/%,$(wildcard test/libsc/*.c))
EXAMPLE_BINS  = $(patsubst examples/%.c,$(OUT)/examples/%,$(wildcard examples/*.c))
API_CFLAGS    = -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude $(SAN_FLAGS) $(CFLAGS)
API_LDFLAGS   = $(SAN_FLAGS) -L$(OUT)/libsc -Wl,-rpath,$(abspath $(OUT)/libsc) $(LDFLAGS)
SERVER_SRC = $(wildcard test/server/*.c)
BENCH_SRC  = $(wildcard test/bench/*.c)
BENCH_BINS = $(BENCH_SRC:test/bench/%.c=$(OUT)/bench/%)
TESTSERVER = build/test/sc-testserver

MAN1 = $(wildcard man/*.1)
MAN3 = $(wildcard man/*.3)
MAN5 = $(wildcard man/*.5)
MAN7 = $(wildcard man/*.7)
# crawl.mk and the files it uses, installed to $(SHAREDIR) (sc-crawl(7)).
SHARE_SC = share/sc/crawl.mk share/sc/crawl.sh share/sc/crawl-progress.sh share/sc/crawl-split.awk share/sc/crawl-held.awk share/sc/hadoop-map.sh share/sc/hadoop-reduce.sh

.PHONY: all deps test demo install uninstall clean asan testserver bench bench-smoke print-version lib

all: $(PROG_BINS) lib

lib: $(LIBSC_SO) $(LIBSC_PUB)

deps:
	@sh test/deps.sh $(DEB_PKGS)

$(OUT)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(SC_CFLAGS) -MMD -MP -c -o $@ $<

$(LIBSC): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# libsc.so.0: hidden visibility for everything but SC_EXPORT (include/sc.h),
# and the version script names exactly those (lib/api/symbols).
$(LIBSC_SO): $(LIB_OBJ) lib/api/libsc.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/api/libsc.map \
	    -Wl,--no-undefined $(SC_LDFLAGS) -o $@ $(LIB_OBJ) $(SC_LIBS)
	ln -sf libsc.so.$(VERSION) $(@D)/$(SONAME)
	ln -sf $(SONAME) $(@D)/libsc.so

# The static libsc.a: the objects linked into one, whose hidden symbols are
# then made local, so that a program linking it sees only sc.h's names.
$(LIBSC_PUB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(LD) -r -o $(@D)/libsc-all.o $(LIB_OBJ)
	objcopy --localize-hidden $(@D)/libsc-all.o
	@rm -f $@
	$(AR) rcs $@ $(@D)/libsc-all.o

# One rule per program, whether it is a file or a folder.
define PROG_RULE
$(BIN)/$(1): $(patsubst %.c,$(OUT)/%.o,$(wildcard cmd/$(1).c cmd/$(1)/*.c)) $(LIBSC)
	@mkdir -p $$(@D)
	$$(CC) $$(SC_LDFLAGS) -o $$@ $$^ $$(SC_LIBS)
endef
$(foreach p,$(PROGS),$(eval $(call PROG_RULE,$(p))))

$(OUT)/test/%: $(OUT)/test/unit/%.o $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(SC_LDFLAGS) -o $@ $^ $(SC_LIBS)

$(OUT)/libsc-test/%: test/libsc/%.c include/sc.h $(LIBSC_SO)
	@mkdir -p $(@D)
	$(CC) $(API_CFLAGS) -pthread -o $@ $< $(API_LDFLAGS) -lsc

# The examples read the parser's JSON with jansson; the crawler parses on
# threads of its own.
$(OUT)/examples/%: examples/%.c include/sc.h $(LIBSC_SO)
	@mkdir -p $(@D)
	$(CC) $(API_CFLAGS) -pthread -o $@ $< $(API_LDFLAGS) -lsc $(shell pkg-config --libs jansson)

# Micro-benchmarks in C (test/bench/*.c), run by test/bench/run.
$(OUT)/bench/%: $(OUT)/test/bench/%.o $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(SC_LDFLAGS) -o $@ $^ $(SC_LIBS)

# The fixture server links nothing but libc, and is always built without
# sanitizers: it is the tests' world, not the code under test.
$(TESTSERVER): $(SERVER_SRC)
	@mkdir -p $(@D)
	$(CC) -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE $(CFLAGS) -o $@ $(SERVER_SRC)

testserver: $(TESTSERVER)

# `make test` is the whole suite: set-up, build, unit tests, every bats suite.
# TESTS= narrows it (e.g. make test TESTS=test/sc-sink.bats), FILTER= to the
# tests whose names match (bats -f); test/README.md says more.  What it
# runs is built with a job per CPU unless make was given -j (BUILD_JOBS,
# which make fuzz's build uses too).
BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))
test: deps
	@$(MAKE) --no-print-directory $(BUILD_JOBS) all testserver $(UNIT_BINS) $(API_TEST_BINS) $(EXAMPLE_BINS)
	@SC_BIN=$(abspath $(BIN)) SC_OUT=$(abspath $(OUT)) SC_TESTSERVER=$(abspath $(TESTSERVER)) \
	    SANITIZE=$(SANITIZE) SC_TEST_FILTER='$(FILTER)' sh test/run $(TESTS)

asan:
	@$(MAKE) --no-print-directory SANITIZE=1 test

demo: deps
	@$(MAKE) --no-print-directory all testserver
	@sh share/demo/run

bench: deps all testserver $(BENCH_BINS) $(EXAMPLE_BINS)
	@SC_BENCH_C=$(abspath $(OUT)/bench) sh test/bench/run

bench-smoke: deps all testserver $(BENCH_BINS) $(EXAMPLE_BINS)
	@SC_BENCH_C=$(abspath $(OUT)/bench) SC_BENCH_SMOKE=1 sh test/bench/run

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	for p in $(PROGS); do install -m 755 $(BIN)/$$p $(DESTDIR)$(BINDIR)/$$p; done
	for m in $(MAN1); do install -m 644 $$m $(DESTDIR)$(MANDIR)/man1/; done
	for m in $(MAN5); do install -m 644 $$m $(DESTDIR)$(MANDIR)/man5/; done
	for m in $(MAN7); do install -m 644 $$m $(DESTDIR)$(MANDIR)/man7/; done
	mkdir -p $(DESTDIR)$(SHAREDIR)
	for f in $(SHARE_SC); do install -m 644 $$f $(DESTDIR)$(SHAREDIR)/; done
	chmod 755 $(DESTDIR)$(SHAREDIR)/*.sh
	mkdir -p $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man3
	install -m 644 $(LIBSC_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libsc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsc.so
	install -m 644 $(LIBSC_PUB) $(DESTDIR)$(LIBDIR)/libsc.a
	install -m 644 include/sc.h $(DESTDIR)$(INCLUDEDIR)/sc.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@PKGS@|$(PKGS)|' lib/api/sc.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/sc.pc
	for m in $(MAN3); do install -m 644 $$m $(DESTDIR)$(MANDIR)/man3/; done

uninstall:
	for p in $(PROGS); do rm -f $(DESTDIR)$(BINDIR)/$$p; done
	for m in $(MAN1); do rm -f $(DESTDIR)$(MANDIR)/man1/$${m#man/}; done
	for m in $(MAN5); do rm -f $(DESTDIR)$(MANDIR)/man5/$${m#man/}; done
	for m in $(MAN7); do rm -f $(DESTDIR)$(MANDIR)/man7/$${m#man/}; done
	for f in $(SHARE_SC); do rm -f $(DESTDIR)$(SHAREDIR)/$${f#share/sc/}; done
	-rmdir $(DESTDIR)$(SHAREDIR) 2>/dev/null
	rm -f $(DESTDIR)$(LIBDIR)/libsc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	    $(DESTDIR)$(LIBDIR)/libsc.so $(DESTDIR)$(LIBDIR)/libsc.a \
	    $(DESTDIR)$(INCLUDEDIR)/sc.h $(DESTDIR)$(PKGCONFIGDIR)/sc.pc
	for m in $(MAN3); do rm -f $(DESTDIR)$(MANDIR)/man3/$${m#man/}; done

clean:
	rm -rf bin build sc-*.tar.gz

# The version, for scripts (debian/rules' smoke test, test/deb.bats).
print-version:
	@echo $(VERSION)

# Release discipline: lint, format, format-check, dist, distcheck.
include mk/release.mk
# Fuzzing: make fuzz [FUZZ_SECONDS=N].
include mk/fuzz.mk
# Debian packages: make deb (debian/, mk/deb.sh).
include mk/deb.mk

include mk/abi.mk

-include $(LIB_OBJ:.o=.d) $(wildcard $(OUT)/cmd/*.d $(OUT)/cmd/*/*.d $(OUT)/test/unit/*.d $(OUT)/test/bench/*.d)
