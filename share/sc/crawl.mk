# crawl.mk: a breadth-first crawl in rounds, driven by make (sc-crawl(7)).
#
#     make -f /usr/local/share/sc/crawl.mk SEEDS=seeds.txt DEPTH=2 DIR=crawl
#
# Round N's URLs are DIR/round-N/urls.jsonl.  They are split into chunks
# (every host of the round in one chunk, crawl-split.awk), each chunk is
# fetched and parsed into DIR/round-N/chunk-ID.jsonl, and sc-frontier makes
# round N+1's URLs from them against the seen set, to which it first adds
# round N's URLs.
#
# This file holds the graph: the settings and their checks, which files
# exist and which are to do, -j, one sub-make per round.  What a recipe
# does is a step of crawl.sh, beside this file (a function each, read by
# shellcheck, callable on its own): every recipe that does work is one
# line naming a step, and the settings reach it in the environment, under
# these names.
# Every file is written under a temporary name and renamed into place as
# its step's last act, and nothing is ever rebuilt because of a timestamp
# (prerequisites are order-only): a file that exists is finished, one that
# does not is redone.  The order of writes that keeps the seen set and the
# rounds in step is in sc-crawl(7), "Order of writes".

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
ADAPTIVE      ?= 1
CSV           ?= 0
SITEMAPS      ?= 0
SITEMAP_LEVELS ?= 3
WORKERS       ?=
RECRAWL       ?= recrawl
ROUND_MAX_PER_HOST ?= 0
DEFER_AFTER   ?= 10000
METRICS       ?= 1
PROGRESS      ?= 1
PROGRESS_EVERY ?= 60
REPORT_ARGS   ?=
WARC          ?= 0
WARC_DEDUPE   ?=
WARC_PREFIX   ?=

# Numbers are checked before anything runs, in make itself (no shell: this
# makefile is read once per round).
is_number = $(and $(1),$(if $(word 2,$(1)),,$(if $(call digits_left,$(1)),,ok)))
digits_left = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
$(foreach v,DEPTH C PER_HOST CHUNK ROUND_MAX_PER_HOST DEFER_AFTER SITEMAP_LEVELS PROGRESS_EVERY,$(if $(call is_number,$($(v))),,$(error $(v)=$($(v)) is not a number)))
$(foreach v,CHUNK PROGRESS_EVERY,$(if $(filter 0,$($(v))),$(error $(v) must be at least 1)))
# File names go into make rules unquoted: make cannot name a target with a
# blank, ':' or '%' in it, and an empty DIR would put the crawl at the root
# of the file system.
$(foreach v,DIR SEEDS,$(if $(strip $($(v))),,$(error $(v) is empty)))
$(if $(filter-out 0 1,$(WARC)),$(error WARC=$(WARC) is not 0 or 1))
# WARC_DEDUPE's index is one local SQLite file, which the workers cannot
# share (sc-crawl(7), WARC).
$(if $(and $(filter 1,$(WARC)),$(strip $(WARC_DEDUPE)),$(strip $(WORKERS))),$(error WARC_DEDUPE cannot be used with WORKERS: its index is a local file that the workers cannot share))
# WARC_PREFIX begins every archive's name: letters, digits, '.', '_', '-'.
name_chars := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z 0 1 2 3 4 5 6 7 8 9 . _ -
strip_chars = $(if $(2),$(call strip_chars,$(subst $(firstword $(2)),,$(1)),$(wordlist 2,$(words $(2)),$(2))),$(1))
$(if $(or $(word 2,$(WARC_PREFIX)),$(call strip_chars,$(WARC_PREFIX),$(name_chars))),$(error WARC_PREFIX="$(WARC_PREFIX)" may hold letters, digits, '.', '_' and '-' only: it begins file names))
bad_char = $(or $(if $(word 2,$(1)),a blank),$(if $(findstring :,$(1)),a ':'),$(if $(findstring %,$(1)),a '%'))
$(foreach v,DIR SEEDS,$(if $(call bad_char,$($(v))),$(error $(v)="$($(v))": make cannot have $(call bad_char,$($(v))) in a file name)))

.SUFFIXES:
.PHONY: crawl round pages warc status report retry retry-round recrawl recrawl-round
default_goal: crawl
.DEFAULT_GOAL := crawl

CRAWL_MK := $(abspath $(lastword $(MAKEFILE_LIST)))
# Every recipe is one plain command, which make runs without a shell: a
# chunk costs one bash, this step's.
STEPS    := /bin/bash $(dir $(CRAWL_MK))crawl.sh
# Rounds 0 to DEPTH, and those after DEPTH that a per-round host cap
# made (ROUND_MAX_PER_HOST); the sub-makes get ROUNDS on their command
# line: one shell per crawl.
ifndef ROUNDS
ROUNDS   := $(shell seq 0 $(DEPTH); n=$$(($(DEPTH) + 1)); while [ -d $(DIR)/round-$$n ]; do echo $$n; n=$$((n + 1)); done)
endif
# What the steps read (crawl.sh).  The users' FIELDS and *_ARGS arrive as
# make made them ('$$' is '$'); crawl.sh splits them into words, once.
export SEEDS DEPTH DIR C PER_HOST SCOPE FIELDS FETCH_ARGS PARSE_ARGS FRONTIER_ARGS RETRY_ARGS \
    CHUNK ROBOTS ADAPTIVE CSV SITEMAPS SITEMAP_LEVELS WORKERS RECRAWL ROUND_MAX_PER_HOST DEFER_AFTER ROUNDS CRAWL_MK \
    METRICS PROGRESS PROGRESS_EVERY REPORT_ARGS WARC WARC_DEDUPE WARC_PREFIX
export LC_ALL := C

# ---- the crawl: one sub-make per round, then the merged pages ------------
# Round N's chunks are only known once its URLs are split, so each round's
# chunks are a make of their own (ROUND=N round, a generated include).
# The steps before them (sitemaps, frontier, split) run in the crawl
# step's one shell, each skipped when its file exists.
crawl:
	+@$(STEPS) crawl $(MAKE)

pages: $(DIR)/pages.jsonl $(if $(filter 1,$(CSV)),$(DIR)/pages.csv)
	@:
$(DIR)/pages.jsonl: | $(DIR)/round-$(lastword $(ROUNDS))/done
	@$(STEPS) pages jsonl
$(DIR)/pages.csv: | $(DIR)/round-$(lastword $(ROUNDS))/done
	@$(STEPS) pages csv
# warc: DIR/warc/ of a finished crawl (WARC=1 makes it with the pages).
warc: | $(DIR)/round-$(lastword $(ROUNDS))/done
	@$(STEPS) warc

# A round that is not finished is made by `make crawl`, never from here.
$(DIR)/round-%/done:
	@echo "crawl.mk: round $* is not finished: run make crawl first" >&2; exit 1

status:
	@$(STEPS) status

# report: sc-report over every chunk's metrics so far, finished or not:
# DIR/report.html and DIR/report.txt, the text also on stdout.
report:
	@$(STEPS) report

# retry: sc-retry over every round's failures, in place (always here);
# recrawl: every page again into DIR/RECRAWL, with conditional requests.
retry:
	+@$(STEPS) retry $(MAKE)
recrawl:
	+@$(STEPS) recrawl $(MAKE)

# ---- one round (ROUND=N, chunks.mk made) ----------------------------------
# chunks.mk names the round's chunks (CHUNKS) and the URLs of each (N.ID),
# which a chunk's records are counted against.
ifdef ROUND
R  := $(DIR)/round-$(ROUND)
RC := $(DIR)/$(RECRAWL)/round-$(ROUND)

ifneq ($(filter round recrawl-round retry-round,$(MAKECMDGOALS)),)
include $(R)/chunks.mk
endif
# Made by the crawl's split step, never here (so make does not restart).
$(R)/chunks.mk: ;

# Every chunk of the round; the crawl step then marks it done.  A chunk
# runs here or, with WORKERS, on the worker of its shard.
round: | $(CHUNKS:%=$(R)/chunk-%.jsonl) ;
$(R)/chunk-%.jsonl: | $(R)/chunk-%.urls
	@$(STEPS) chunk $(ROUND) $* $(N.$*)

retry-round: $(CHUNKS:%=retry-chunk-%) ;
retry-chunk-%:
	@$(STEPS) retry-chunk $(ROUND) $*

recrawl-round: | $(CHUNKS:%=$(RC)/chunk-%.jsonl) ;
$(RC)/chunk-%.jsonl: | $(R)/chunk-%.jsonl
	@$(STEPS) recrawl-chunk $(ROUND) $* $(N.$*)
endif

# make never deletes a finished file because a signal arrived just after
# its rename.
.PRECIOUS: $(DIR)/%
