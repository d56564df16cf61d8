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
# The one list of the settings, NAME=DEFAULT, a word each ('$$(C)': the
# value of C when read).  It makes each default (?=, so the command line
# and the environment win) and the list exported to the steps, which hold
# no defaults of their own: crawl.sh stops on a setting not set.
SETTINGS :=
SETTINGS += SEEDS=seeds.txt
SETTINGS += DEPTH=2
SETTINGS += DIR=crawl
SETTINGS += C=16
SETTINGS += PER_HOST=$$(C)
SETTINGS += SCOPE=host
SETTINGS += FIELDS=
SETTINGS += FETCH_ARGS=
SETTINGS += PARSE_ARGS=
SETTINGS += FRONTIER_ARGS=
SETTINGS += RETRY_ARGS=$$(FETCH_ARGS)
SETTINGS += CHUNK=1000
SETTINGS += ROBOTS=1
SETTINGS += ADAPTIVE=1
SETTINGS += CSV=0
SETTINGS += SITEMAPS=0
SETTINGS += SITEMAP_LEVELS=3
SETTINGS += WORKERS=
SETTINGS += RECRAWL=recrawl
SETTINGS += ROUND_MAX_PER_HOST=0
SETTINGS += DEFER_AFTER=10000
SETTINGS += METRICS=1
SETTINGS += PROGRESS=1
SETTINGS += PROGRESS_EVERY=60
SETTINGS += REPORT_ARGS=
SETTINGS += WARC=0
SETTINGS += WARC_DEDUPE=
SETTINGS += WARC_PREFIX=
SETTINGS += REQUISITES=0
SETTINGS += REQUISITE_LEVELS=4
SETTINGS += WACZ=
SETTINGS += WARC_OPERATOR=
SETTINGS += WARC_COLLECTION=
SETTINGS += WARC_DESCRIPTION=
SETTINGS += CONTACT=
SETTINGS += COOKIES=
SETTINGS += LOGIN=
SETTINGS += LOGIN_CHECK=
SETTINGS += LOGIN_URL=
SETTINGS += RENDER=0
SETTINGS += RENDER_C=4
SETTINGS += RENDER_IF=
SETTINGS += RENDER_ARGS=
$(foreach setting,$(SETTINGS),$(eval $(subst =, ?= ,$(setting))))
SETTING_NAMES := $(foreach setting,$(SETTINGS),$(firstword $(subst =, ,$(setting))))

# Numbers are checked before anything runs, in make itself (no shell: this
# makefile is read once per round).
is_number = $(and $(1),$(if $(word 2,$(1)),,$(if $(call digits_left,$(1)),,ok)))
digits_left = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
$(foreach v,DEPTH C PER_HOST CHUNK ROUND_MAX_PER_HOST DEFER_AFTER SITEMAP_LEVELS REQUISITE_LEVELS PROGRESS_EVERY,$(if $(call is_number,$($(v))),,$(error $(v)=$($(v)) is not a number)))
$(foreach v,CHUNK PROGRESS_EVERY,$(if $(filter 0,$($(v))),$(error $(v) must be at least 1)))
# File names go into make rules unquoted: make cannot name a target with a
# blank, ':' or '%' in it, and an empty DIR would put the crawl at the root
# of the file system.
$(foreach v,DIR SEEDS,$(if $(strip $($(v))),,$(error $(v) is empty)))
$(if $(filter-out 0 1,$(WARC)),$(error WARC=$(WARC) is not 0 or 1))
$(if $(filter-out 0 1,$(REQUISITES)),$(error REQUISITES=$(REQUISITES) is not 0 or 1))
# WARC_DEDUPE's index is one local SQLite file, which the workers cannot
# share (sc-crawl(7), WARC).
$(if $(and $(filter 1,$(WARC)),$(strip $(WARC_DEDUPE)),$(strip $(WORKERS))),$(error WARC_DEDUPE cannot be used with WORKERS: its index is a local file that the workers cannot share))
# A chunk's archive is one file, which its commit and DIR/warc/ name:
# --warc-max-size's series of files would leave every chunk "without a
# WARC" once the whole crawl has run, so it is refused before.
$(foreach v,FETCH_ARGS RETRY_ARGS,$(if $(and $(filter 1,$(WARC)),$(findstring --warc-max-size,$($(v)))),$(error $(v) has --warc-max-size, which WARC=1 cannot use: a chunk's archive is one file (sc-crawl(7), WARC))))
# CONTACT goes in the User-Agent (sc-fetch --contact): a URL or mailto:.
$(if $(strip $(CONTACT)),$(if $(or $(word 2,$(CONTACT)),$(if $(filter http://% https://% mailto:%,$(CONTACT)),,bad)),$(error CONTACT="$(CONTACT)" is not an http(s) URL or a mailto: address)))
# WARC_PREFIX begins every archive's name: letters, digits, '.', '_', '-'.
name_chars := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z 0 1 2 3 4 5 6 7 8 9 . _ -
strip_chars = $(if $(2),$(call strip_chars,$(subst $(firstword $(2)),,$(1)),$(wordlist 2,$(words $(2)),$(2))),$(1))
$(if $(or $(word 2,$(WARC_PREFIX)),$(call strip_chars,$(WARC_PREFIX),$(name_chars))),$(error WARC_PREFIX="$(WARC_PREFIX)" may hold letters, digits, '.', '_' and '-' only: it begins file names))
bad_char = $(or $(if $(word 2,$(1)),a blank),$(if $(findstring :,$(1)),a ':'),$(if $(findstring %,$(1)),a '%'))
$(foreach v,DIR SEEDS,$(if $(call bad_char,$($(v))),$(error $(v)="$($(v))": make cannot have $(call bad_char,$($(v))) in a file name)))

.SUFFIXES:
.PHONY: crawl round pages warc wacz settings status report retry retry-round recrawl recrawl-round
.DEFAULT_GOAL := crawl

CRAWL_MK := $(abspath $(lastword $(MAKEFILE_LIST)))
# Every recipe is one plain command, which make runs without a shell: a
# chunk costs one bash, this step's.
STEPS    := /bin/bash $(dir $(CRAWL_MK))crawl.sh
# What the steps read (crawl.sh): the settings, their names (which
# crawl.sh checks are all set) and this file.  The users' FIELDS and
# *_ARGS arrive as make made them ('$$' is '$'); crawl.sh splits them into
# words, once.  The rounds are crawl.sh's to work out (its rounds).
CRAWL_SETTINGS := $(SETTING_NAMES) CRAWL_MK
export $(CRAWL_SETTINGS) CRAWL_SETTINGS
export LC_ALL := C

# ---- the crawl: one sub-make per round, then the merged pages ------------
# Round N's chunks are only known once its URLs are split, so each round's
# chunks are a make of their own (ROUND=N round, a generated include).
# The steps before them (sitemaps, frontier, split) run in the crawl
# step's one shell, each skipped when its file exists.
crawl:
	+@$(STEPS) crawl $(MAKE)

# pages.* and warc are of a finished crawl: the step checks that its last
# round is done (and says to run make crawl first otherwise).
pages: $(DIR)/pages.jsonl $(if $(filter 1,$(CSV)),$(DIR)/pages.csv)
	@:
$(DIR)/pages.jsonl:
	@$(STEPS) pages jsonl
$(DIR)/pages.csv:
	@$(STEPS) pages csv
# warc: DIR/warc/ of a finished crawl (WARC=1 makes it with the pages).
warc:
	@$(STEPS) warc

# wacz: DIR/crawl.wacz (or WACZ=FILE) of a finished crawl made with
# WARC=1: DIR/warc/ packaged by sc-warc wacz, its pages those of
# DIR/pages.jsonl (requisites are no pages).
wacz:
	@$(STEPS) wacz

# settings: the settings as this file gives them, one shell line each
# (export NAME=VALUE), for a step run by hand (sc-crawl(7)).
settings:
	@$(STEPS) settings

status:
	@$(STEPS) status

# cookies: DIR/cookies.txt, the crawl's cookie jar (COOKIES), its path
# printed.
cookies:
	@$(STEPS) cookies

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
