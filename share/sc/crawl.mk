# crawl.mk: a breadth-first crawl in rounds, driven by make (sc-crawl(7)).
#
#     make -f /usr/local/share/sc/crawl.mk SEEDS=seeds.txt DEPTH=2 DIR=crawl
#
# Round N's URLs are DIR/round-N/urls.jsonl.  They are split into chunks
# (every host of the round in one chunk, crawl-split.awk), each chunk is
# fetched and parsed into DIR/round-N/chunk-ID.jsonl, and sc-frontier makes
# round N+1's URLs from them against the seen set, to which it first adds
# round N's URLs.  Every file is written
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
PER_HOST      ?= $(C)
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
ROUND_MAX_PER_HOST ?= 0

# Numbers are checked before anything runs, in make itself (no shell: this
# makefile is read once per round).
is_number = $(and $(1),$(if $(word 2,$(1)),,$(if $(call digits_left,$(1)),,ok)))
digits_left = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
$(foreach v,DEPTH C PER_HOST CHUNK ROUND_MAX_PER_HOST,$(if $(call is_number,$($(v))),,$(error $(v)=$($(v)) is not a number)))
ifeq ($(CHUNK),0)
$(error CHUNK must be at least 1)
endif
# File names go into make rules and shell words unquoted: make cannot name a
# target with a blank, ':' or '%' in it, and an empty DIR would put the
# crawl at the root of the file system.
$(foreach v,DIR SEEDS,$(if $(strip $($(v))),,$(error $(v) is empty)))
bad_char = $(or $(if $(word 2,$(1)),a blank),$(if $(findstring :,$(1)),a ':'),$(if $(findstring %,$(1)),a '%'))
$(foreach v,DIR SEEDS,$(if $(call bad_char,$($(v))),$(error $(v)="$($(v))": make cannot have $(call bad_char,$($(v))) in a file name)))

SHELL := /bin/bash
.SUFFIXES:
.PHONY: crawl round pages status retry retry-round recrawl recrawl-round
export LC_ALL := C

CRAWL_MK := $(abspath $(lastword $(MAKEFILE_LIST)))
SPLIT    := $(dir $(CRAWL_MK))crawl-split.awk
# Rounds 0 to DEPTH, and those after DEPTH that a per-round host cap
# made (ROUND_MAX_PER_HOST); the sub-makes get ROUNDS on their command
# line: one shell per crawl.
ifndef ROUNDS
ROUNDS   := $(shell seq 0 $(DEPTH); n=$$(($(DEPTH) + 1)); while [ -d $(DIR)/round-$$n ]; do echo $$n; n=$$((n + 1)); done)
endif
SUB       = $(MAKE) -f $(CRAWL_MK) --no-print-directory ROUNDS="$(ROUNDS)" $(ROUND_JOBS)
SHARDS   := $(if $(WORKERS),$(words $(WORKERS)),1)
# With WORKERS and no -j, a round runs as many chunks at once as its
# workers have job slots (N of N/host, else 1), not one at a time.
slots_of   = $(if $(and $(findstring /,$(1)),$(call is_number,$(firstword $(subst /, ,$(1))))),$(patsubst 0,1,$(firstword $(subst /, ,$(1)))),1)
ROUND_JOBS = $(if $(WORKERS),$(if $(filter -j%,$(MAKEFLAGS)),,-j$$((0$(foreach w,$(WORKERS),+$(call slots_of,$(w)))))))

# The robots.txt cache: DIR/robots.cache here; with WORKERS each worker's
# own, in its $XDG_CACHE_HOME/sc (else ~/.cache/sc), made by the job, which
# goes without it where that cannot be made (sc-crawl(7)).
ROBOTS_OPT  = $(if $(filter 1,$(ROBOTS)),--robots $(if $(WORKERS),"$$@",--robots-cache $(abspath $(DIR))/robots.cache))
WORKER_ROBOTS_CACHE = $(if $(and $(WORKERS),$(filter 1,$(ROBOTS))),d=$${XDG_CACHE_HOME:-$$HOME/.cache}/sc; set --; \
    if mkdir -p "$$d" 2>/dev/null; then set -- --robots-cache "$$d/robots.cache"; fi;)
HEADERS_OPT = --headers
FETCH_OPTS  = -q -c $(C) --per-host $(PER_HOST) $(ROBOTS_OPT) $(HEADERS_OPT) $(FETCH_ARGS)
PARSE_OPTS  = $(FIELDS) $(PARSE_ARGS)
RETRY_OPTS  = -q -c $(C) --per-host $(PER_HOST) $(RETRY_ARGS)

# The job every chunk runs, here or on a worker: URLs on stdin, records on
# stdout.  A POSIX shell command, exported so that it reaches GNU parallel
# as one argument whatever quotes FETCH_ARGS holds.  It succeeds when
# sc-parse does (status 0, or 3: some records not ok, which is data);
# sc-fetch failing shows as missing records, checked by chunk_commit.
export SC_CRAWL_JOB = $(WORKER_ROBOTS_CACHE) sc-fetch $(FETCH_OPTS) | sc-parse $(PARSE_OPTS); s=$$?; [ $$s = 0 ] || [ $$s = 3 ]

default_goal: crawl
.DEFAULT_GOAL := crawl

# ---- the crawl: one sub-make per round, then the merged pages ------------
# Round N's chunks are only known once its URLs are split, so each round's
# chunks are a make of their own (a generated include).  The steps before
# them (frontier, split) run here, in this one shell, each skipped
# when its file exists: every step forks as few processes as it can,
# because on a small crawl the processes, not the pages, are the cost.
# After DEPTH, rounds go on while the round before had URLs, once a per
# round host cap (ROUND_MAX_PER_HOST) has deferred any: those deferred, and
# the links of the pages they delayed.  A crawl resumed without the cap
# still fetches what it deferred.
crawl:
	+@set -e; shopt -s nullglob; [ -d $(DIR)/round-$(DEPTH) ] || mkdir -p $(ROUNDS:%=$(DIR)/round-%); \
	rounds=(); for ((n = 0; ; n++)); do \
	    r=$(DIR)/round-$$n; \
	    if [ $$n -gt $(DEPTH) ]; then $(more_rounds); fi; \
	    rounds+=($$n); [ ! -e $$r/done ] || continue; \
	    if [ $$n = 0 ] && [ ! -e $$r/urls.jsonl ]; then $(sitemap_step); fi; \
	    if [ ! -e $$r/urls.jsonl ]; then $(call frontier_step,$$n,$$r); fi; \
	    if [ ! -e $$r/chunks.mk ]; then $(split_step); fi; \
	    $(SUB) ROUND=$$n round; : >$$r/done; \
	done; \
	$(make_pages)
CAPPED = $(filter-out 0,$(ROUND_MAX_PER_HOST))
deferred_any = { d=($(DIR)/round-*/deferred.jsonl); [ $${\#d[@]} -gt 0 ]; }
more_rounds = [ -s $(DIR)/round-$$((n - 1))/urls.jsonl ] && \
    { $(if $(CAPPED),:,[ $$n -gt $$(($(DEPTH) + 1)) ] || $(deferred_any)); } || break; mkdir -p $$r

# Round 0's URLs are the seeds; round N's come from round N-1's pages.
# sc-frontier --no-commit never adds its own output to the seen set; its
# output is renamed into place as urls.jsonl.  The run that makes round
# N+1 first adds round N's urls.jsonl, a finished file, to the set (--add,
# idempotent), then looks round N+1's links up: one sc-frontier per round.
# A kill at any moment leaves the set holding only URLs of renamed round
# files, and the frontier of the round after is run again.  So no URL is
# ever marked seen without being in a round's urls.jsonl on disk, and none
# of an earlier round is emitted again.  The URLs round N deferred
# (ROUND_MAX_PER_HOST) are in its urls.jsonl, so seen, and head round N+1's:
# a chunk file or the deferred file that cannot be read fails the step.
SEEN = $(DIR)/seen.db
FRONTIER = sc-frontier --seen $(SEEN) --no-commit --scope $(SCOPE) --max-depth $(DEPTH) $(FRONTIER_ARGS)
# frontier_step,N,R (shell words): R/urls.jsonl from the seeds or round N-1.
frontier_step = \
    if [ $(1) = 0 ]; then $(seeds_frontier) >$(2)/.urls.jsonl.tmp 2>$(2)/frontier.log || $(frontier_ok); \
    else p=$(DIR)/round-$$(($(1) - 1)); set -- $$p/chunk-*.jsonl; \
        { [ ! -e $$p/deferred.jsonl ] || cat $$p/deferred.jsonl || exit 1; \
        if [ $$\# = 1 ]; then $(FRONTIER) --add $$p/urls.jsonl <"$$1"; \
        else (set -o pipefail; cat /dev/null "$$@" | $(FRONTIER) --add $$p/urls.jsonl); fi; } \
            >$(2)/.urls.jsonl.tmp 2>$(2)/frontier.log || $(frontier_ok); fi; \
    mv -f $(2)/.urls.jsonl.tmp $(2)/urls.jsonl
# SITEMAPS=1: before round 0, the URLs of the sitemaps the seeds' sites
# name in robots.txt become seeds too.  sc-fetch --robots fetches each
# seed origin's /robots.txt (its summary lists the Sitemap lines); the
# sitemaps go through sc-fetch | sc-parse, which gives a sitemap's <loc>
# URLs as links (gzip too); a sitemap index's links are sitemaps, followed
# SITEMAP_LEVELS deep.  The URLs are renamed into place as
# DIR/sitemaps/seeds.txt last, so a kill redoes the step; it touches no
# seen set.  Needs jq(1).
SITEMAP_LEVELS ?= 3
SITEMAP_SEEDS   = $(DIR)/sitemaps/seeds.txt
SM              = $(DIR)/sitemaps
ifeq ($(SITEMAPS),1)
sitemap_step = [ -e $(SITEMAP_SEEDS) ] || { \
    mkdir -p $(SM); rm -f $(SM)/robots.metrics; \
    awk '!/^[ \t]*\#/ && match($$0, /https?:\/\/[^\/?\#" ]+/) { o = substr($$0, RSTART, RLENGTH); if (!(o in seen)) { seen[o]; print o "/robots.txt" } }' $(SEEDS) \
        | sc-fetch -q --robots --metrics $(SM)/robots.metrics $(FETCH_ARGS) >/dev/null 2>$(SM)/robots.log || [ $$? = 3 ]; \
    jq -r 'select(.event == "summary") | .robots[]?.sitemaps[]?' $(SM)/robots.metrics | sort -u >$(SM)/level-0.txt; \
    : >$(SM)/.seeds.tmp; \
    for l in $$(seq 0 $$(($(SITEMAP_LEVELS) - 1))); do \
        [ -s $(SM)/level-$$l.txt ] || break; \
        sc-fetch $(FETCH_OPTS) <$(SM)/level-$$l.txt 2>>$(SM)/sitemaps.log | sc-parse 2>>$(SM)/sitemaps.log >$(SM)/level-$$l.jsonl || [ $$? = 3 ]; \
        jq -r 'select(.sitemap == "urlset") | .links[]?' $(SM)/level-$$l.jsonl >>$(SM)/.seeds.tmp; \
        jq -r 'select(.sitemap == "sitemapindex") | .links[]?' $(SM)/level-$$l.jsonl >$(SM)/level-$$((l + 1)).txt; \
    done; \
    mv -f $(SM)/.seeds.tmp $(SITEMAP_SEEDS); }
seeds_frontier = (set -o pipefail; cat $(SITEMAP_SEEDS) - <$(SEEDS) | $(FRONTIER) --seeds)
else
sitemap_step = :
seeds_frontier = $(FRONTIER) --seeds <$(SEEDS)
endif
# sc-frontier's status 3 (some input lines malformed) is data, not failure.
frontier_ok = { s=$$?; [ $$s = 3 ] || { echo "crawl.mk: sc-frontier failed (status $$s), see $$r/frontier.log" >&2; exit 1; }; }

# Split into chunks with one awk (crawl-split.awk); chunks.mk, renamed
# last, says the split is complete.  It names the chunks and the number of
# URLs in each, which is what a chunk's records are counted against.
split_step = set -- $$r/chunk-*.urls $$r/deferred.json[l]; [ $$\# = 0 ] || rm -f "$$@"; \
    awk -v SHARDS=$(SHARDS) -v CHUNK=$(CHUNK) -v CAP=$(ROUND_MAX_PER_HOST) -v DIR=$$r -f $(SPLIT) $$r/urls.jsonl $$r/urls.jsonl >$$r/chunks.mk.tmp; \
    mv -f $$r/chunks.mk.tmp $$r/chunks.mk

pages: $(DIR)/pages.jsonl $(if $(filter 1,$(CSV)),$(DIR)/pages.csv)
	@:

# Every page record of every round, in round order (the shell array
# rounds names them).  The chunks are sc-sink's output already, so
# pages.jsonl is their concatenation, renamed into place; pages.csv goes
# through sc-sink.
all_chunks = chunks=(); for n in "$${rounds[@]}"; do chunks+=($(DIR)/round-$$n/chunk-*.jsonl); done
merge_pages = shopt -s nullglob; $(all_chunks); cat /dev/null "$${chunks[@]}" | sc-sink -q $(1)
merge_jsonl = shopt -s nullglob; $(all_chunks); cat /dev/null "$${chunks[@]}" >$(DIR)/.pages.jsonl.tmp && mv -f $(DIR)/.pages.jsonl.tmp $(DIR)/pages.jsonl
make_pages = [ -e $(DIR)/pages.jsonl ] || { $(merge_jsonl); }; \
    $(if $(filter 1,$(CSV)),[ -e $(DIR)/pages.csv ] || { $(call merge_pages,--csv $(DIR)/pages.csv); })
$(DIR)/pages.jsonl: | $(DIR)/round-$(lastword $(ROUNDS))/done
	@$(crawl_finished); rounds=($(ROUNDS)); $(merge_jsonl)
$(DIR)/pages.csv: | $(DIR)/round-$(lastword $(ROUNDS))/done
	@$(crawl_finished); rounds=($(ROUNDS)); $(call merge_pages,--csv $@)
# A crawl that ever deferred URLs (ROUND_MAX_PER_HOST) ends with a round
# that has no URLs; one that did not, with round DEPTH.
crawl_finished = shopt -s nullglob; last=$(DIR)/round-$(lastword $(ROUNDS)); \
    [ ! -s $$last/urls.jsonl ] || { $(if $(CAPPED),false,[ $(lastword $(ROUNDS)) = $(DEPTH) ] && ! $(deferred_any)); } || \
    { echo "crawl.mk: round $(lastword $(ROUNDS)) is not the last: run make crawl first" >&2; exit 1; }

# A round that is not finished is made by `make crawl`, never from here.
$(DIR)/round-%/done:
	@echo "crawl.mk: round $* is not finished: run make crawl first" >&2; exit 1

# ---- one round's chunks (ROUND=N, chunks.mk made) -------------------------
ifdef ROUND
R    := $(DIR)/round-$(ROUND)

ifneq ($(filter round recrawl-round retry-round,$(MAKECMDGOALS)),)
include $(R)/chunks.mk
endif
# Made by the crawl's split step, never here (so make does not restart).
$(R)/chunks.mk: ;
CHUNK_OUTS = $(CHUNKS:%=$(R)/chunk-%.jsonl)

# Every chunk of the round; the crawl's shell then marks it done.
round: | $(CHUNK_OUTS) ;

# A chunk: its URLs through the job, here or on its worker, into a
# temporary file that becomes the chunk only when every program succeeded
# and sc-sink wrote one record per URL (its summary says how many; the
# split said how many URLs).  Locally the pipeline runs in the recipe's
# shell, so each program's status is known (sc-fetch's 130/143 after a
# shutdown); through a worker, only the job's, so cancelled records are
# looked for in the output.
$(R)/chunk-%.jsonl: | $(R)/chunk-%.urls
	@set -- $(R)/..chunk-$*.jsonl.tmp.*; [ ! -e "$$1" ] || rm -f "$$@"; \
	$(call chunk_job,$*,$(R)/chunk-$*.urls,$(R)/chunk-$*.log) \
	    | sc-sink --jsonl $(R)/.chunk-$*.jsonl.tmp 2>$(R)/chunk-$*.sum; \
	$(call chunk_check,$(or $(N.$*),$$(wc -l <$(R)/chunk-$*.urls)),$(R)/.chunk-$*.jsonl.tmp,$@,$(R)/chunk-$*.sum)
endif

# run_job,ID: locally, or with WORKERS on the worker of the chunk's shard
# (the part of ID before the dash, modulo the number of workers), in one of
# the worker's job slots (N of N/host, else 1): chunk SHARD-K takes slot K
# mod N, a lock file in DIR held while it runs, so that a worker never runs
# more chunks at once than its slots, whatever make's -j.
# chunk_job,ID,IN,LOG: the same for a chunk of the crawl, where locally the
# programs run in the recipe's own shell (no bash -c, and their statuses
# stay in PIPESTATUS for chunk_check).
ifeq ($(WORKERS),)
run_job = bash -c "$$SC_CRAWL_JOB"
chunk_job = sc-fetch $(FETCH_OPTS) <$(2) 2>$(3) | sc-parse $(PARSE_OPTS) 2>>$(3)
job_ok = [ "$${st[0]}" = 0 -o "$${st[0]}" = 3 ] && [ "$${st[1]}" = 0 -o "$${st[1]}" = 3 ] && [ "$${st[2]}" = 0 ]
else
chunk_job = $(call run_job,$(1)) <$(2) 2>$(3)
job_ok = [ "$${st[0]}" = 0 ] && [ "$${st[1]}" = 0 ] && ! grep -q '"kind":"cancelled"' $(1)
run_job = w=$$(( $(firstword $(subst -, ,$(1))) % $(SHARDS) )); set -- $(WORKERS); shift $$w; \
    slots=1; [[ $$1 =~ ^([0-9]+)/ ]] && [ $${BASH_REMATCH[1]} -gt 0 ] && slots=$${BASH_REMATCH[1]}; \
    flock $(DIR)/.worker-$$w.slot-$$(( 10\#$(lastword $(subst -, ,$(1))) % slots )) \
    parallel --will-cite --halt now,fail=1 -j1 -k --pipe --block 16M -S "$$1" "$$SC_CRAWL_JOB"
endif

# chunk_check,N,TMP,OUT,SUMMARY: OUT appears only if every program of the
# pipeline succeeded and sc-sink's summary says it wrote N records;
# otherwise TMP is removed and the recipe fails.
chunk_check = st=("$${PIPESTATUS[@]}"); read -r sum <$(4) || sum=; \
    if $(call job_ok,$(2)) && [[ $$sum == '{"records":$(1),'* ]]; then \
        mv -f $(2) $(3); \
    else \
        rm -f $(2); echo "crawl.mk: $(3) not finished (status $${st[*]}); make again redoes it" >&2; exit 1; \
    fi

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
	    later=; [ ! -e $$d/deferred.jsonl ] || later=" ($$(wc -l <$$d/deferred.jsonl) deferred to the next round)"; \
	    echo "round $$n: $$(wc -l <$$d/urls.jsonl) urls$$later, $$c chunks, $$done_ done, $$((c - done_)) pending;" \
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
