# Fuzzing (issue 14): libFuzzer targets for every parser that takes outside
# bytes.  Included by the Makefile, whose variables it reads (LIB_SRC,
# PROG_DIRS, PKG_CFLAGS, PKG_LIBS, VERSION, BUILD_JOBS).
#
#   make fuzz                      build every test/fuzz/fuzz-NAME.c, run each
#                                  for FUZZ_SECONDS (default 10)
#   make fuzz FUZZ_SECONDS=300     the same, longer
#   make fuzz FUZZ_TARGETS="csv"   only those targets (NAME, without fuzz-)
#   make fuzz FUZZ_RUNS=10000000 FUZZ_SECONDS=3600
#                                  each target until 10 million executions
#                                  or an hour, whichever comes first
#   make fuzz-build                build only
#
# A target is found by its name alone: test/fuzz/fuzz-NAME.c, with its seed
# corpus in test/fuzz/seeds-NAME/ and, if present, a dictionary in
# test/fuzz/NAME.dict; it includes a program's headers as "sc-parse/css.h".  It is linked against the library and against every
# program's objects except its main, all built here with clang and the same
# sanitizers; they are archives, so a target pulls in only what it uses.
# The seeds are copied into a scratch corpus under build/fuzz/ (which keeps
# what each run finds, for the next), so the seeds in git stay as written.
# A run fails on any crash, leak, timeout or sanitizer report; what made it
# fail is kept as build/fuzz/NAME-crash-* (or -leak-, -timeout-) (add it to the seeds, with the fix
# and a regression test).

FUZZ_CC      = clang
FUZZ_SECONDS ?= 10
FUZZ_RUNS    ?= -1
FUZZ_OUT     = build/fuzz
FUZZ_SAN     = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
               -fno-omit-frame-pointer
FUZZ_CFLAGS  = -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -DSC_VERSION='"$(VERSION)"' \
               -Ilib -Iinclude -Icmd $(PKG_CFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link

FUZZ_SRC     = $(wildcard test/fuzz/fuzz-*.c)
FUZZ_NAMES   = $(FUZZ_SRC:test/fuzz/fuzz-%.c=%)
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_BINS    = $(FUZZ_NAMES:%=$(FUZZ_OUT)/fuzz-%)
FUZZ_LIBSC   = $(FUZZ_OUT)/libsc.a
# One archive per program folder (cmd/NAME/*.c less main.c).
FUZZ_PROG_LIBS = $(PROG_DIRS:%=$(FUZZ_OUT)/lib%.a)

.PHONY: fuzz fuzz-build fuzz-deps

fuzz-deps:
	@sh test/deps.sh clang

$(FUZZ_OUT)/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_LIBSC): $(LIB_SRC:%.c=$(FUZZ_OUT)/%.o)
	@rm -f $@
	$(AR) rcs $@ $^

define FUZZ_PROG_RULE
$(FUZZ_OUT)/lib$(1).a: $(patsubst %.c,$(FUZZ_OUT)/%.o,$(filter-out cmd/$(1)/main.c,$(wildcard cmd/$(1)/*.c)))
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach p,$(PROG_DIRS),$(eval $(call FUZZ_PROG_RULE,$(p))))

$(FUZZ_OUT)/fuzz-%: $(FUZZ_OUT)/test/fuzz/fuzz-%.o $(FUZZ_PROG_LIBS) $(FUZZ_LIBSC)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_PROG_LIBS) $(FUZZ_LIBSC) \
	    $(PKG_LIBS) -lpthread -lm

fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(FUZZ_BINS)

# Each target in turn: its scratch corpus topped up from the seeds, then
# libFuzzer for FUZZ_SECONDS or FUZZ_RUNS executions (-1: no limit), which
# ever ends first; its "Done N runs" line is printed, and the
# whole log when it fails.  -timeout catches an input that hangs.
fuzz: fuzz-build
	@status=0; for t in $(FUZZ_TARGETS); do \
	    corpus=$(FUZZ_OUT)/corpus-$$t; mkdir -p $$corpus; \
	    cp test/fuzz/seeds-$$t/* $$corpus/ 2>/dev/null; \
	    dict=; [ -f test/fuzz/$$t.dict ] && dict=-dict=test/fuzz/$$t.dict; \
	    log=$(FUZZ_OUT)/$$t.log; \
	    if $(FUZZ_OUT)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -timeout=30 \
	        -print_final_stats=1 -artifact_prefix=$(FUZZ_OUT)/$$t- $$dict \
	        $$corpus >$$log 2>&1; then \
	        echo "fuzz-$$t: $$(grep '^Done [0-9]* runs' $$log)"; \
	    else \
	        cat $$log; echo "fuzz-$$t: FAILED (log: $$log)"; status=1; \
	    fi; \
	done; exit $$status

-include $(wildcard $(FUZZ_OUT)/lib/*/*.d $(FUZZ_OUT)/cmd/*/*.d $(FUZZ_OUT)/test/fuzz/*.d)
