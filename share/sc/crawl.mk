# crawl.mk: a breadth-first crawl in rounds, driven by make (sc-crawl(7)).
#
#     make -f /usr/local/share/sc/crawl.mk SEEDS=seeds.txt DEPTH=2 DIR=crawl
#
# Round N's URLs are DIR/round-N/urls.jsonl.  They are split into chunks
# (every host of the round in one chunk, crawl-split.awk), each chunk is
# fetched and parsed into DIR/round-N/chunk-ID.jsonl, and sc-frontier makes
# round N+1's URLs from them against the seen set.  Every file is written
# under a temporary name and renamed into place as its recipe's last step,
# and nothing is ever rebuilt because of a timestamp (prerequisites are
# order-only): a file that exists is finished, one that does not is redone.
# The order of writes that keeps the seen set and the rounds in step is in
# sc-crawl(7), "Order of writes".

# ---- settings (names relied upon by scripts; see sc-crawl(7)) ------------
SEEDS         ?= seeds.txt
DEPTH         ?= 2
DIR           ?= crawl
C             ?= 16
PER_HOST      ?= 2
SCOPE         ?= host
FIELDS        ?=
FETCH_ARGS    ?=
PARSE_ARGS    ?=
FRONTIER_ARGS ?=
RETRY_ARGS    ?= $(FETCH_ARGS)
CHUNK         ?= 1000
ROBOTS        ?= 1
CSV           ?= 0
SITEMAPS      ?= 0
WORKERS       ?=
RECRAWL       ?= recrawl

# Numbers are checked before anything runs.
$(foreach v,DEPTH C PER_HOST CHUNK,$(if $(shell [ "$($(v))" -ge 0 ] 2>/dev/null && echo ok),,$(error $(v)=$($(v)) is not a number)))
ifeq ($(CHUNK),0)
$(error CHUNK must be at least 1)
endif

SHELL := /bin/bash
.SUFFIXES:
.PHONY: crawl round pages status retry retry-round recrawl recrawl-round
export LC_ALL := C

CRAWL_MK := $(abspath $(lastword $(MAKEFILE_LIST)))
SPLIT    := $(dir $(CRAWL_MK))crawl-split.awk
SUB       = $(MAKE) -f $(CRAWL_MK) --no-print-directory
ROUNDS   := $(shell seq 0 $(DEPTH))
SHARDS   := $(if $(WORKERS),$(words $(WORKERS)),1)

# What the installed sc-fetch can do: --robots and --headers are newer than
# some builds.  Asked once per make; said once, by the top-level make.
# The sub-makes inherit the answer through the environment.
ifndef SC_CRAWL_FETCH_HELP
export SC_CRAWL_FETCH_HELP := $(or $(filter --robots --robots-cache --headers,$(subst [, ,$(subst ], ,$(shell sc-fetch --help 2>&1)))),none)
endif
HAVE_ROBOTS  := $(filter --robots,$(SC_CRAWL_FETCH_HELP))
HAVE_RCACHE  := $(filter --robots-cache,$(SC_CRAWL_FETCH_HELP))
HAVE_HEADERS := $(filter --headers,$(SC_CRAWL_FETCH_HELP))
ifeq ($(ROBOTS),1)
ifeq ($(HAVE_ROBOTS),)
ifeq ($(MAKELEVEL),0)
$(info crawl.mk: this sc-fetch has no --robots; crawling without robots.txt)
endif
endif
endif

ROBOTS_OPT  = $(if $(filter 1,$(ROBOTS)),$(if $(HAVE_ROBOTS),--robots $(if $(and $(HAVE_RCACHE),$(if $(WORKERS),,1)),--robots-cache $(abspath $(DIR))/robots.cache)))
HEADERS_OPT = $(if $(HAVE_HEADERS),--headers)
FETCH_OPTS  = -q -c $(C) --per-host $(PER_HOST) $(ROBOTS_OPT) $(HEADERS_OPT) $(FETCH_ARGS)
PARSE_OPTS  = $(FIELDS) $(PARSE_ARGS)
RETRY_OPTS  = -q -c $(C) --per-host $(PER_HOST) $(RETRY_ARGS)

# The job every chunk runs, here or on a worker: URLs on stdin, records on
# stdout.  A POSIX shell command, exported so that it reaches GNU parallel
# as one argument whatever quotes FETCH_ARGS holds.  It succeeds when
# sc-parse does (status 0, or 3: some records not ok, which is data);
# sc-fetch failing shows as missing records, checked by chunk_commit.
export SC_CRAWL_JOB = sc-fetch $(FETCH_OPTS) | sc-parse $(PARSE_OPTS); s=$$?; [ $$s = 0 ] || [ $$s = 3 ]

default_goal: crawl
.DEFAULT_GOAL := crawl

# ---- the crawl: one sub-make per round, then the merged pages ------------
# Round N's chunks are only known once round N-1 is finished, so each round
# is a make of its own (its chunk list is a generated include).
crawl:
	+@set -e; for n in $(ROUNDS); do $(SUB) ROUND=$$n round; done
	+@$(SUB) pages

pages: $(DIR)/pages.jsonl $(if $(filter 1,$(CSV)),$(DIR)/pages.csv)
	@:

# Every page record of every round, in round order.
cat_chunks = for f in $(1)/chunk-*.jsonl; do [ ! -e "$$f" ] || cat "$$f"; done
merge_pages = for n in $(ROUNDS); do $(call cat_chunks,$(DIR)/round-$$n); done | sc-sink -q $(1)
$(DIR)/pages.jsonl: | $(DIR)/round-$(DEPTH)/done
	@$(call merge_pages,--jsonl $@)
$(DIR)/pages.csv: | $(DIR)/round-$(DEPTH)/done
	@$(call merge_pages,--csv $@)

# A round that is not finished is made by `make crawl`, never from here.
$(DIR)/round-%/done:
	@echo "crawl.mk: round $* is not finished: run make crawl first" >&2; exit 1

# ---- one round (ROUND=N) ------------------------------------------------
ifdef ROUND
R    := $(DIR)/round-$(ROUND)
PREV := $(DIR)/round-$(shell echo $$(($(ROUND) - 1)))

# The chunk list: made by the rule below, then make restarts with it.
ifneq ($(filter round recrawl-round retry-round,$(MAKECMDGOALS)),)
include $(R)/chunks.mk
endif
CHUNK_OUTS = $(CHUNKS:%=$(R)/chunk-%.jsonl)

round: $(R)/done
	@:
$(R)/done: | $(CHUNK_OUTS)
	@touch $@

$(R):
	@mkdir -p $@

# Round 0's URLs are the seeds; round N's come from round N-1's pages.
# sc-frontier --no-commit reads the seen set without changing it; its output
# is renamed into place as urls.jsonl; only then does sc-frontier --commit
# add that file's URLs to the set (idempotent), and "committed" marks it
# done.  A kill before the rename leaves the set as it was (the frontier is
# run again); a kill after it runs the commit again.  So no URL is ever
# marked seen without being in a round's urls.jsonl on disk.
SEEN = $(DIR)/seen.db
FRONTIER = sc-frontier --seen $(SEEN) --no-commit --scope $(SCOPE) --max-depth $(DEPTH) $(FRONTIER_ARGS)
ifeq ($(ROUND),0)
$(R)/urls.jsonl: | $(R)
	@$(FRONTIER) --seeds <$(SEEDS) >$(R)/.urls.jsonl.tmp 2>$(R)/frontier.log; $(frontier_ok)
	@mv -f $(R)/.urls.jsonl.tmp $@
else
$(R)/urls.jsonl: | $(PREV)/done $(R)
	@$(call cat_chunks,$(PREV)) | $(FRONTIER) >$(R)/.urls.jsonl.tmp 2>$(R)/frontier.log; $(frontier_ok)
	@mv -f $(R)/.urls.jsonl.tmp $@
endif
$(R)/committed: | $(R)/urls.jsonl
	@sc-frontier -q --commit --seen $(SEEN) <$(R)/urls.jsonl
	@touch $@
# sc-frontier's status 3 (some input lines malformed) is data, not failure.
frontier_ok = s=$$?; [ $$s = 0 ] || [ $$s = 3 ]

# Split into chunks; chunks.mk, renamed last, says the split is complete.
$(R)/chunks.mk: | $(R)/committed
	@rm -f $(R)/chunk-*.urls
	@awk -v stage=hosts -v SHARDS=$(SHARDS) -f $(SPLIT) $(R)/urls.jsonl \
	    | sort -k1,1n -k2,2n -k3,3 >$(R)/.hosts.tmp
	@awk -v stage=assign -v CHUNK=$(CHUNK) -f $(SPLIT) $(R)/.hosts.tmp $(R)/urls.jsonl \
	    | sort -s -k1,1 | awk -v stage=write -v DIR=$(R) -f $(SPLIT) >$(R)/.chunks.tmp
	@{ echo "# $(SHARDS) shards"; printf 'CHUNKS :='; printf ' %s' $$(cat $(R)/.chunks.tmp); echo; } >$@.tmp
	@rm -f $(R)/.hosts.tmp $(R)/.chunks.tmp && mv -f $@.tmp $@

# A chunk: its URLs through SC_CRAWL_JOB, here or on its worker, into a
# temporary file that becomes the chunk only when the job succeeded and
# every URL has its record (the count contract of sc-fetch and sc-parse).
$(R)/chunk-%.jsonl: | $(R)/chunk-%.urls
	@rm -f $(R)/..chunk-$*.jsonl.tmp.*
	@$(call run_job,$*) <$(R)/chunk-$*.urls 2>$(R)/chunk-$*.log | sc-sink -q --jsonl $(R)/.chunk-$*.jsonl.tmp; \
	    $(call chunk_commit,$(R)/chunk-$*.urls,$(R)/.chunk-$*.jsonl.tmp,$@)
endif

# run_job,ID: locally, or with WORKERS on the worker of the chunk's shard
# (the part of ID before the dash, modulo the number of workers).
ifeq ($(WORKERS),)
run_job = bash -c "$$SC_CRAWL_JOB"
else
run_job = set -- $(WORKERS); shift $$(( $(firstword $(subst -, ,$(1))) % $(SHARDS) )); \
    parallel --will-cite --halt now,fail=1 -j1 -k --pipe --block 16M -S "$$1" "$$SC_CRAWL_JOB"
endif

# chunk_commit,IN,TMP,OUT: OUT appears only if the job and sc-sink
# succeeded, TMP has one record per line of IN, and no record was cancelled
# by a shutdown; otherwise TMP is removed and the recipe fails.
chunk_commit = st=("$${PIPESTATUS[@]}"); \
    if [ "$${st[0]}" = 0 ] && { [ "$${st[1]}" = 0 ] || [ "$${st[1]}" = 3 ]; } \
       && [ "$$(wc -l <$(2))" = "$$(wc -l <$(1))" ] && ! grep -q '"kind":"cancelled"' $(2); then \
        mv -f $(2) $(3); \
    else \
        rm -f $(2); echo "crawl.mk: $(3) not finished (status $${st[*]}); make again redoes it" >&2; exit 1; \
    fi

.PRECIOUS: $(DIR)/%

# ---- status -------------------------------------------------------------
status:
	@tc=0; td=0; tok=0; tfail=0; \
	for n in $(ROUNDS); do \
	    d=$(DIR)/round-$$n; \
	    if [ ! -e $$d/chunks.mk ]; then echo "round $$n: not started"; continue; fi; \
	    c=$$(sed -n 's/^CHUNKS :=//p' $$d/chunks.mk | wc -w); \
	    done_=0; ok=0; fail=0; \
	    for f in $$d/chunk-*.jsonl; do [ -e "$$f" ] || continue; done_=$$((done_ + 1)); \
	        ok=$$((ok + $$(grep -c '"ok":true' "$$f"))); fail=$$((fail + $$(grep -c '"ok":false' "$$f"))); done; \
	    state=running; [ -e $$d/done ] && state=done; \
	    echo "round $$n: $$(wc -l <$$d/urls.jsonl) urls, $$c chunks, $$done_ done, $$((c - done_)) pending;" \
	         "pages $$ok ok, $$fail failed ($$state)"; \
	    tc=$$((tc + c)); td=$$((td + done_)); tok=$$((tok + ok)); tfail=$$((tfail + fail)); \
	done; \
	echo "total: $$tc chunks, $$td done, $$((tc - td)) pending; pages $$tok ok, $$tfail failed"

# ---- retry: sc-retry over every round's failures, in place --------------
# Rounds one after another (a host is in one chunk per round, but in many
# rounds), the chunks of a round side by side.  A chunk's ok records stay as
# they are; its failed ones go through sc-retry and sc-parse; the chunk is
# replaced (renamed) only when every record came back.  pages.* are removed
# so that the next make merges the new records.
retry:
	+@set -e; for n in $(ROUNDS); do \
	    [ ! -e $(DIR)/round-$$n/chunks.mk ] || $(SUB) ROUND=$$n retry-round; done
	@rm -f $(DIR)/pages.jsonl $(DIR)/pages.csv

ifdef ROUND
retry-round: $(CHUNKS:%=retry-chunk-%)
	@:
retry-chunk-%:
	@f=$(R)/chunk-$*.jsonl; t=$(R)/.chunk-$*.retry.tmp; \
	if [ -e $$f ] && grep -q '"ok":false' $$f; then \
	    { grep -v '"ok":false' $$f; grep '"ok":false' $$f | sc-retry $(RETRY_OPTS) | sc-parse $(PARSE_OPTS); } 2>>$(R)/chunk-$*.log \
	        | sc-sink -q --jsonl $$t; \
	    st=("$${PIPESTATUS[@]}"); \
	    if { [ "$${st[1]}" = 0 ] || [ "$${st[1]}" = 3 ]; } && [ "$$(wc -l <$$t)" = "$$(wc -l <$$f)" ] \
	       && ! grep -q '"kind":"cancelled"' $$t; then mv -f $$t $$f; \
	    else rm -f $$t; echo "crawl.mk: retry of $$f not finished" >&2; exit 1; fi; \
	fi
endif

# ---- recrawl: every page again, with conditional requests ----------------
# Into DIR/RECRAWL/round-N/ with the same chunks; a page whose record has
# headers (sc-fetch --headers) is asked for with If-None-Match and
# If-Modified-Since from its ETag and Last-Modified, so that an unchanged
# page costs a 304 (not_modified).  Needs jq(1).
RC = $(DIR)/$(RECRAWL)
recrawl:
	+@set -e; for n in $(ROUNDS); do \
	    [ ! -e $(DIR)/round-$$n/chunks.mk ] || $(SUB) ROUND=$$n recrawl-round; done
	@for n in $(ROUNDS); do for f in $(RC)/round-$$n/chunk-*.jsonl; do [ -e "$$f" ] && cat "$$f"; done; done \
	    | sc-sink -q --jsonl $(RC)/pages.jsonl

CONDITIONAL = with_entries(select(.key == "url" or .key == "depth" or .key == "seed" \
    or .key == "from" or .key == "host")) + ((.headers // {}) as $$h \
    | ({} + (if $$h.etag then {"If-None-Match": $$h.etag} else {} end) \
    + (if $$h["last-modified"] then {"If-Modified-Since": $$h["last-modified"]} else {} end)) \
    | if length > 0 then {request: {headers: .}} else {} end)

ifdef ROUND
recrawl-round: $(CHUNKS:%=$(RC)/round-$(ROUND)/chunk-%.jsonl)
	@:
$(RC)/round-$(ROUND)/chunk-%.jsonl: | $(R)/chunk-%.jsonl
	@mkdir -p $(@D)
	@jq -c '$(CONDITIONAL)' $(R)/chunk-$*.jsonl >$(@D)/.chunk-$*.in.tmp
	@$(call run_job,$*) <$(@D)/.chunk-$*.in.tmp 2>$(@D)/chunk-$*.log | sc-sink -q --jsonl $(@D)/.chunk-$*.jsonl.tmp; \
	    $(call chunk_commit,$(@D)/.chunk-$*.in.tmp,$(@D)/.chunk-$*.jsonl.tmp,$@)
	@rm -f $(@D)/.chunk-$*.in.tmp
endif
