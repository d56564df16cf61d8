#!/bin/bash
# shellcheck disable=SC2153 # the settings are crawl.mk's, in the environment
# crawl.sh: the steps of crawl.mk (sc-crawl(7)), one function each; the
# list of steps is above the main case at the end.
# A crawl runs this file once per chunk, so the chunk step comes first and
# exits before bash has read the rest: bash lexes comments as it reads, and
# on a small crawl each chunk's start counts.  So the functions a chunk
# calls come first, each note above its function, short down to there;
# those of a chunk on a worker (WORKERS) come after the local chunk's exit.
set -eu
shopt -s nullglob
export LC_ALL=C

here=.
[[ ${BASH_SOURCE[0]} != */* ]] || here=${BASH_SOURCE[0]%/*}

die() {
	echo "crawl.sh: $*" >&2
	exit 1
}

# The settings: crawl.mk's, in the environment (settings, below).
: "${CRAWL_SETTINGS:?is not set: the steps take the settings of crawl.mk, which runs them; by hand, eval the output of make -sf crawl.mk settings first (sc-crawl(7))}"

# A chunk's WARC options and files (warc_for); none without WARC=1.
# Every archive's name begins with WARC_PREFIX and a '-' (when set).
# With RENDER, sc-render's archive (render_warc) is NAME-render.warc.gz
# beside sc-fetch's NAME.warc.gz: the exchanges of the browser.
warc=() render_warc=() made=() warc_name='' warc_pfx=${WARC_PREFIX:+$WARC_PREFIX-}

# user_words ARRAY STRING: appends to ARRAY the shell words of STRING (the
# users' FIELDS and *_ARGS: split, unquoted and expanded as a command's
# arguments are), the one place they become words (a worker's shell, for
# a worker: worker_job).
user_words() {
	[[ $2 == *[![:space:]]* ]] || return 0
	local -n words_into=$1
	shopt -u nullglob
	set +u
	eval "set -- $2"
	set -u
	shopt -s nullglob
	words_into+=("$@")
}

# options WHERE [DEFER]: sets fetch_opts and parse_opts (ours); "here"
# also retry_opts, frontier_opts and the users' words after them, which
# win (fetch_args, ...); "worker", the job's (worker_job adds the rest).
# DEFER: --defer-after (DEFER_AFTER when not given; 0: none).
options() {
	local dir=$DIR pace=() quiet=(-q) defer=${2:-$DEFER_AFTER}
	[[ $dir == /* ]] || dir=$PWD/$dir
	[[ $ADAPTIVE == 1 ]] || pace=(--no-adaptive)
	[[ $METRICS != 1 ]] || quiet=()
	# CONTACT: in every request's User-Agent (unless FETCH_ARGS has -A).
	contact=()
	[[ -z $CONTACT ]] || contact=(--contact "$CONTACT")
	fetch_opts=("${quiet[@]}" -c "$C" --per-host "$PER_HOST" "${pace[@]}" "${contact[@]}")
	[[ $defer == 0 ]] || fetch_opts+=(--defer-after "$defer")
	if [[ $ROBOTS == 1 ]]; then
		fetch_opts+=(--robots)
		[[ $1 == worker ]] || fetch_opts+=(--robots-cache "$dir/robots.cache")
	fi
	# One origin state per crawl (per worker with WORKERS: worker_job), so
	# that a host's spacing holds from one chunk and round to the next.
	[[ $1 == worker ]] || fetch_opts+=(--origin-state "$dir/origins.db")
	# COOKIES (or LOGIN): one jar for every process of the crawl here
	# (seed_cookies).
	[[ -z $COOKIES$LOGIN || $1 == worker ]] || fetch_opts+=(--cookies "$dir/cookies.txt")
	# LOGIN_URL: a page that ends there is the session lost (relogin).
	[[ -z $LOGIN || -z $LOGIN_URL || $1 == worker ]] || fetch_opts+=(--login-url "$LOGIN_URL")
	fetch_opts+=(--headers)
	parse_opts=()
	# REQUISITES=1: each page's requisites listed, for step_requisites.
	[[ $REQUISITES != 1 ]] || parse_opts=(--requisites)
	render_options "$1" "$dir"
	[[ $1 == here ]] || return 0
	retry_opts=(-q -c "$C" --per-host "$PER_HOST" "${pace[@]}" "${contact[@]}" --origin-state "$dir/origins.db")
	[[ -z $COOKIES$LOGIN ]] || retry_opts+=(--cookies "$dir/cookies.txt")
	[[ -z $LOGIN || -z $LOGIN_URL ]] || retry_opts+=(--login-url "$LOGIN_URL")
	# sc-retry asks robots.txt too: a URL that an unreachable robots.txt
	# refused is fetched again only once robots.txt answers and allows it.
	[[ $ROBOTS != 1 ]] || retry_opts+=(--robots --robots-cache "$dir/robots.cache")
	frontier_opts=(--seen "$DIR/seen.db" --no-commit --scope "$SCOPE" --max-depth "$DEPTH")
	fetch_args=() parse_args=() retry_args=() frontier_args=()
	user_words fetch_args "$FETCH_ARGS"
	user_words parse_args "$FIELDS $PARSE_ARGS"
	user_words retry_args "$RETRY_ARGS"
	user_words frontier_args "$FRONTIER_ARGS"
	user_words render_args "$RENDER_ARGS"
}

# render_options WHERE DIR: render_opts, sc-render's between sc-fetch and
# sc-parse with RENDER=1 (every page) or auto (--only-if-needed: the pages
# that need a browser), none with RENDER=0.  robots.txt as sc-fetch asks
# it, for the browser's own requests (its cache: the crawl's, here).
render_options() {
	render_opts=() render_args=()
	case $RENDER in
	0) return 0 ;;
	1 | auto) ;;
	*) die "RENDER=$RENDER: 0, 1 or auto" ;;
	esac
	# The browser's requests keep the crawl's politeness: PER_HOST, CONTACT,
	# and the origin state sc-fetch's of the crawl share (the spacing and
	# the pace they learnt; a worker's: worker_job).
	render_opts=(-c "$RENDER_C" --per-host "$PER_HOST" "${contact[@]}")
	[[ $1 == worker ]] || render_opts+=(--origin-state "$2/origins.db")
	[[ $RENDER != auto ]] || render_opts+=(--only-if-needed)
	[[ $RENDER != auto || -z $RENDER_IF ]] || render_opts+=(--needed-if "$RENDER_IF")
	# The browser's cookies are the crawl's jar too (COOKIES, LOGIN).
	[[ -z $COOKIES$LOGIN || $1 == worker ]] || render_opts+=(--cookies "$2/cookies.txt")
	[[ $ROBOTS == 1 ]] || return 0
	render_opts+=(--robots)
	[[ $1 == worker ]] || render_opts+=(--robots-cache "$2/robots.cache")
}

# render_stage: stdin through sc-render (RENDER=1 or auto), else as it is.
render_stage() {
	if [[ $RENDER == 0 ]]; then
		cat
	else
		sc-render "${render_opts[@]}" "${render_warc[@]}" "${render_args[@]}"
	fi
}

# held_only N: whether round N's URLs are only those round N-1 held
# (held.jsonl): the crawl's other hosts are done, and nothing is left for a
# hand-over to let go on, only the rounds it would cost.
held_only() {
	local held=$DIR/round-$(($1 - 1))/held.jsonl
	(($1 > 0)) && [[ -e $held ]] && (($(wc -l <"$held") == $(wc -l <"$DIR/round-$1/urls.jsonl")))
}

# chunk N ID [COUNT]: DIR/round-N/chunk-ID.jsonl: its URLs through
# sc-fetch | sc-parse, here or on a worker, into sc-sink's temporary file,
# which commit_or_remove makes the chunk.  COUNT: the split's (else
# counted).  A round of held URLs alone is fetched to its end (DEFER_AFTER
# would only hand them on).  A chunk is one bash (make runs it without a
# shell), its programs and a rename: on a small crawl, starts are the cost.
step_chunk() {
	local r=$DIR/round-$1 id=$2 want=${3:-} defer=$DEFER_AFTER st=() check=''
	! held_only "$1" || defer=0
	local stale=("$r/..chunk-$id.jsonl.tmp".*)
	warc_for "$r" "${warc_pfx}round-$1-chunk-$id" stale
	((${#stale[@]} == 0)) || remove "${stale[@]}"
	[[ -n $want ]] || want=$(wc -l <"$r/chunk-$id.urls")
	fetch_parse_sink "$id" "$r/chunk-$id.urls" "$r/chunk-$id.log" "$r/.chunk-$id.jsonl.tmp" "$r/chunk-$id.sum" st check "$defer"
	commit_or_remove "$r/chunk-$id.jsonl" "$r/.chunk-$id.jsonl.tmp" "$r/chunk-$id.sum" "$want" "$check" "${st[@]}"
}

# fetch_parse_sink ID IN LOG TMP SUM STATUSES CHECK [DEFER]: the chunk's
# pipeline; sets the caller's STATUSES to its statuses and CHECK to
# "status" (every program's own: a shutdown is sc-fetch's 130 or 143) or
# "records" (a worker's job's: search the records for cancelled ones).
# shellcheck disable=SC2034 # piped and check_by are the caller's (namerefs)
fetch_parse_sink() {
	local -n piped=$6 check_by=$7
	local job=()
	if [[ -z $WORKERS ]]; then
		options here "${8:-}"
		check_by=status
		set +e
		# Two pipelines, not a stage that is cat without RENDER: on a
		# small crawl each process of a chunk counts.
		if [[ $RENDER == 0 ]]; then
			sc-fetch "${fetch_opts[@]}" "${warc[@]}" "${fetch_args[@]}" <"$2" 2>"$3" |
				sc-parse "${parse_opts[@]}" "${parse_args[@]}" 2>>"$3" |
				sc-sink --jsonl "$4" 2>"$5"
		else
			sc-fetch "${fetch_opts[@]}" "${warc[@]}" "${fetch_args[@]}" <"$2" 2>"$3" |
				sc-render "${render_opts[@]}" "${render_warc[@]}" "${render_args[@]}" 2>>"$3" |
				sc-parse "${parse_opts[@]}" "${parse_args[@]}" 2>>"$3" |
				sc-sink --jsonl "$4" 2>"$5"
		fi
		piped=("${PIPESTATUS[@]}")
		set -e
	else
		options worker "${8:-}"
		check_by=records
		on_worker job "$1"
		set +e
		"${job[@]}" <"$2" 2>"$3" | sc-sink --jsonl "$4" 2>"$5"
		piped=("${PIPESTATUS[@]}")
		warc_returned
		piped+=($?)
		set -e
	fi
}

# commit_or_remove OUT TMP SUM COUNT CHECK STATUS...: TMP becomes OUT when
# every status is 0 or 3 (some records not ok: data), sc-sink's summary
# SUM counts COUNT records (one per URL) and, CHECK "records", none was
# cancelled; else TMP and made (its archive) go and the step fails.  The
# one commit check of every chunk (crawl, retry, recrawl): a file that
# exists is finished (sc-crawl(7), "Order of writes").
commit_or_remove() {
	local out=$1 tmp=$2 sum=$3 want=$4 check=$5 s line ok=1
	shift 5
	for s in "$@"; do [[ $s == 0 || $s == 3 ]] || ok=; done
	read -r line <"$sum" || line=
	[[ $line == "{\"records\":$want,"* ]] || ok=
	if [[ -n $ok && $check == records ]] && grep -q '"kind":"cancelled"' "$tmp"; then ok=; fi
	if [[ -n $ok ]]; then
		mv -f "$tmp" "$out"
	else
		remove "$tmp" "${made[@]}"
		die "$out not finished (status $*); make again redoes it"
	fi
}

# warc_for DIR NAME [STALE]: WARC=1: the archive DIR/NAME.warc.gz (NAME
# holds the round: the records and CDXJ name it by base name): sets warc
# (sc-fetch's options), made (its files, which go with a failed chunk) and
# adds to the caller's STALE what a killed run left (its .open, which
# sc-fetch would mend): an archive is kept only with its chunk's records.
# With RENDER, the same for sc-render's DIR/NAME-render.warc.gz
# (render_warc, its options).
warc_for() {
	[[ $WARC == 1 ]] || return 0
	made=("$1/$2.warc.gz" "$1/$2.warc.gz.open" "$1/$2.cdxj")
	warc_name=$1/$2
	render_warc=()
	if [[ $RENDER != 0 ]]; then
		made+=("$1/$2-render.warc.gz" "$1/$2-render.warc.gz.open" "$1/$2-render.cdxj")
		render_warc=(--warc "$1/$2-render.warc.gz" --warc-cdx)
	fi
	if [[ -n ${3:-} ]]; then
		local -n leftovers=$3
		leftovers+=("$1/$2".warc.gz* "$1/$2".cdx[j] "$1/$2"-render.warc.gz* "$1/$2"-render.cdx[j])
	fi
	warc=(--warc "$1/$2.warc.gz" --warc-cdx)
	warc_info warc
	[[ -z $WARC_DEDUPE ]] || warc+=(--warc-dedupe "$WARC_DEDUPE")
}

# warc_info ARRAY: appends to ARRAY the warcinfo fields of WARC_OPERATOR,
# WARC_COLLECTION and WARC_DESCRIPTION (sc-fetch --warc-info) that are set.
warc_info() {
	local -n info_into=$1
	[[ -z $WARC_OPERATOR ]] || info_into+=(--warc-info "operator=$WARC_OPERATOR")
	[[ -z $WARC_COLLECTION ]] || info_into+=(--warc-info "isPartOf=$WARC_COLLECTION")
	[[ -z $WARC_DESCRIPTION ]] || info_into+=(--warc-info "description=$WARC_DESCRIPTION")
}

# warc_forget FILE...: WARC_DEDUPE forgets the records of the archives
# among FILE... (sc-warc forget owns the index), else the chunk done again
# would be revisits of records no file holds.  remove calls it first.
warc_forget() {
	local f archives=() said rc=0
	[[ -n $WARC_DEDUPE && -e $WARC_DEDUPE ]] || return 0
	for f in "$@"; do [[ ! -e $f || $f != *.warc.gz* ]] || archives+=("$f"); done
	((${#archives[@]} > 0)) || return 0
	# A file a kill cut short is read as far as it is whole (status 3):
	# what it holds is forgotten all the same.
	said=$(sc-warc forget -q "$WARC_DEDUPE" "${archives[@]}" 2>&1) || rc=$?
	((rc == 0 || rc == 3)) || die "cannot forget the payloads of ${archives[*]} in $WARC_DEDUPE: $said"
}

# remove FILE...: rm -f, the archives among them forgotten first.
remove() {
	warc_forget "$@"
	rm -f "$@"
}

if [[ ${1:-} == chunk && -z $WORKERS ]]; then
	shift
	step_chunk "$@"
	exit
fi

# ==== a chunk on a worker, and the other steps ================================

# warc_returned: with WARC=1, fails unless the worker's archive came back
# whole: the WARC (every gzip member whole) and its CDXJ (rsync renames a
# file only once it is whole, but a job that ended early leaves none);
# with RENDER, sc-render's too.
warc_returned() {
	[[ $WARC == 1 ]] || return 0
	local w
	for w in "$warc_name" ${render_warc[@]:+"$warc_name-render"}; do
		[[ -s $w.warc.gz && -e $w.cdxj ]] || return 2
		gzip -t "$w.warc.gz" 2>/dev/null || return 2
	done
}

# on_worker JOB ID: sets the caller's array JOB to the command that runs
# chunk ID on its worker.
# With WORKERS, chunk ID runs on the worker of its shard (the part of ID
# before the dash, modulo the number of workers), through GNU parallel, in
# one of the worker's job slots (N of N/host, else 1): chunk SHARD-K takes
# slot K mod N, a lock file in DIR held with flock while it runs, so that
# a worker never runs more chunks at once than its slots, whatever make's
# -j.  With WARC=1 the job runs in a folder of its own on the worker
# (parallel --wd ...), where the worker's sc-fetch writes the chunk's
# archive under its local name; --return brings it and its CDXJ back
# beside the chunk (the /./ in the path: what follows is relative to that
# folder; rsync) and --cleanup removes the folder; warc_returned then
# checks that both came back.
# shellcheck disable=SC2034 # job_into is the caller's (a nameref)
on_worker() {
	local -n job_into=$1
	local shard=${2%%-*} k=${2##*-} workers w slots text back=() at
	read -ra workers <<<"$WORKERS"
	w=$((10#$shard % ${#workers[@]}))
	slots_of slots "${workers[w]}"
	worker_job text
	if [[ $WARC == 1 ]]; then
		at=$warc_name
		[[ $at == /* ]] || at=$PWD/$at
		at=${at%/*}/./${at##*/}
		back=(--wd ... --cleanup --return "$at.warc.gz" --return "$at.cdxj")
		[[ $RENDER == 0 ]] || back+=(--return "$at-render.warc.gz" --return "$at-render.cdxj")
	fi
	job_into=(flock "$DIR/.worker-$w.slot-$((10#$k % slots))"
		parallel --will-cite --halt "now,fail=1" -j1 -k --pipe --block 16M -S "${workers[w]}" "${back[@]}" "$text")
}

# slots_of VAR SSHLOGIN: sets VAR to its job slots (N of N/host, else 1).
# shellcheck disable=SC2034 # slots_into is the caller's (a nameref)
slots_of() {
	local -n slots_into=$1
	slots_into=1
	if [[ $2 =~ ^([0-9]+)/ ]] && ((10#${BASH_REMATCH[1]} > 0)); then
		slots_into=$((10#${BASH_REMATCH[1]}))
	fi
}

# worker_job VAR: sets VAR to the shell command a worker runs for a
# chunk, URLs on stdin, records on stdout: one POSIX shell command, since
# the worker has only the sc programs (not this file).  Our options are
# quoted here (printf %q); the users' FETCH_ARGS, FIELDS and PARSE_ARGS go
# as they are, shell words for the worker's shell (so
# 'FETCH_ARGS=-A bot/$$(hostname)' names the worker).  The robots.txt
# cache and origin state are the worker's own, in its $XDG_CACHE_HOME/sc
# (else ~/.cache/sc), made by the job, which goes without them where that
# cannot be made.  The job succeeds when sc-parse does (0, or 3: some
# records not ok); sc-fetch failing shows as missing records.  Needs
# options worker.
worker_job() {
	# shellcheck disable=SC2016 # expanded by the worker's shell
	local cache='' files='--origin-state "$d/origins.db"' fetch
	local archive=()
	# WARC=1: the chunk's archive, in the job's folder (on_worker).
	[[ $WARC != 1 ]] || archive=(--warc "${warc_name##*/}.warc.gz" --warc-cdx)
	[[ $WARC != 1 ]] || warc_info archive
	printf -v fetch '%q ' sc-fetch "${fetch_opts[@]}" "${archive[@]}"
	# shellcheck disable=SC2016 # expanded by the worker's shell
	[[ $ROBOTS != 1 ]] || files='--robots-cache "$d/robots.cache" '$files
	# shellcheck disable=SC2016 # expanded by the worker's shell
	cache='d=${XDG_CACHE_HOME:-$HOME/.cache}/sc; set --; if mkdir -p "$d" 2>/dev/null; then set -- '$files'; fi; '
	fetch+='"$@" '
	# RENDER: sc-render on the worker too (it needs a Chromium there),
	# RENDER_ARGS as the worker's shell words, like FETCH_ARGS.
	local render=''
	if ((${#render_opts[@]} > 0)); then
		[[ $WARC != 1 ]] || archive=(--warc "${warc_name##*/}-render.warc.gz" --warc-cdx)
		printf -v render '%q ' sc-render "${render_opts[@]}" "${archive[@]}"
		# shellcheck disable=SC2016 # "$@": the worker's files, as sc-fetch's
		render='| '$render'"$@" '"$RENDER_ARGS "
	fi
	# shellcheck disable=SC2016 # expanded by the worker's shell
	printf -v "$1" '%s%s%s %s| sc-parse %s%s %s; s=$?; [ $s = 0 ] || [ $s = 3 ]' \
		"$cache" "$fetch" "$FETCH_ARGS" "$render" "${parse_opts[*]}${parse_opts:+ }" "$FIELDS" "$PARSE_ARGS"
}

if [[ ${1:-} == chunk ]]; then
	shift
	step_chunk "$@"
	exit
fi

# The settings are crawl.mk's variables, under the same names, in the
# environment: crawl.mk exports them with their defaults (its SETTINGS,
# the one list) and CRAWL_SETTINGS, their names.  This file holds no
# default: a step run without a setting stops here (a chunk, which only
# crawl.mk runs, on the first use of one: set -u).  A step run by hand
# takes them from crawl.mk first (sc-crawl(7), "How it is built"):
#     eval "$(make -sf crawl.mk DIR=crawl settings)"; crawl.sh status
for setting in $CRAWL_SETTINGS; do
	[[ -v $setting ]] || die "$setting is not set: the steps take the settings of crawl.mk (by hand: eval the output of make -sf crawl.mk settings first)"
done


# all_slots: the job slots of every worker together.
all_slots() {
	local workers w slots total=0
	read -ra workers <<<"$WORKERS"
	for w in "${workers[@]}"; do
		slots_of slots "$w"
		total=$((total + slots))
	done
	echo "$total"
}

# ---- the crawl ------------------------------------------------------------

# rounds ARRAY: sets the caller's ARRAY to the crawl's rounds: 0 to DEPTH,
# and those after DEPTH that exist (made by a per-round host cap or a
# hand-over: more_rounds).  The one place the rounds are worked out; the
# crawl step makes the next one while more_rounds says so.
rounds() {
	local -n rounds_into=$1
	local n
	rounds_into=()
	for ((n = 0; n <= DEPTH; n++)); do rounds_into+=("$n"); done
	while [[ -d $DIR/round-$n ]]; do
		rounds_into+=("$n")
		n=$((n + 1))
	done
}

# crawl MAKE: rounds 0 to DEPTH, each skipped when its done file exists;
# for each its frontier and split here, in this one shell, then a sub-make
# for its chunks (sub_make).  After DEPTH, rounds go on while the round
# before had URLs, once a per-round host cap (ROUND_MAX_PER_HOST) has
# deferred any.  Then DIR/pages.*.
step_crawl() {
	local make=$1 n r crawled=() dirs=() started=$SECONDS
	for ((n = 0; n <= DEPTH; n++)); do dirs+=("$DIR/round-$n"); done
	[[ -d $DIR/round-$DEPTH ]] || mkdir -p "${dirs[@]}"
	[[ -z $COOKIES && -z $LOGIN ]] || seed_cookies
	options here
	[[ -z $LOGIN ]] || step_login
	if [[ $PROGRESS == 1 ]]; then
		# shellcheck source=share/sc/crawl-progress.sh
		source "$here/crawl-progress.sh"
		"$BASH" "${BASH_SOURCE[0]}" progress "$$" &
		# (a global: the EXIT trap may run outside this function)
		watcher=$!
		trap progress_stop EXIT
	fi
	for ((n = 0; ; n++)); do
		r=$DIR/round-$n
		if ((n > DEPTH)); then
			more_rounds "$n" || break
			mkdir -p "$r"
		fi
		crawled+=("$n")
		[[ ! -e $r/done ]] || continue
		if ((n == 0)) && [[ $SITEMAPS == 1 && ! -e $r/urls.jsonl ]]; then step_sitemaps; fi
		[[ -e $r/urls.jsonl ]] || step_frontier "$n"
		[[ -e $r/chunks.mk ]] || step_split "$n"
		sub_make "$make" "$n" round
		[[ -z $LOGIN || -z $LOGIN_URL ]] || relogin "$n"
		[[ $REQUISITES != 1 ]] || step_requisites "$n"
		step_held "$n"
		: >"$r/done"
	done
	merge jsonl "${crawled[@]}"
	[[ $CSV != 1 ]] || merge csv "${crawled[@]}"
	[[ $WARC != 1 ]] || warc_gather "$DIR" "" "${crawled[@]/#/$DIR/round-}"
	[[ $PROGRESS != 1 ]] || progress_end "$started"
}

# requisites N [TAG]: REQUISITES=1, round N's pages' requisites (sc-parse
# --requisites listed them in the chunks), fetched in levels: level 0 the
# pages', level L+1 those of the stylesheets fetched at level L, up to
# REQUISITE_LEVELS.  Each level's URLs, DIR/round-N/requisites-L.urls,
# come from sc-frontier over the seen set, in any scope (a requisite is
# no page: it may be on any host) and at any depth (it costs none); the
# URLs of the level before (of the round, for level 0) are added to the
# set first, so nothing is fetched twice.  A level's records,
# requisites-L.jsonl, are fetched as a chunk is (robots.txt, the pace
# and origin state, FETCH_ARGS; never deferred), marked "requisite"
# (their metadata record says hop: E), with WARC=1 into
# round-N-requisites-L.warc.gz, and committed as a chunk is; their links
# are never followed.  Last, the URLs of every level go into the seen
# set, so the next rounds fetch none of them as a page.  A kill redoes
# the level it stopped in.
#
# With TAG (a retry's pass, retry_requisites): the files are
# requisites-TAG-L.*, and level 0 also reads the stylesheets of the
# round's earlier levels, so that the requisites of a page or a
# stylesheet a retry made ok are fetched; what the earlier passes
# fetched is in the seen set already, so only those come out.
step_requisites() {
	local r=$DIR/round-$1 l in chunks=("$DIR/round-$1"/chunk-*.jsonl) st check status
	local base=requisites-${2:+$2-} earlier=()
	local req_opts=(--seen "$DIR/seen.db" --no-commit --scope any --max-depth 1000000 --links requisites)
	[[ -z ${2-} ]] || earlier=("$r"/requisites-*.jsonl)
	options here 0
	for ((l = 0; l < REQUISITE_LEVELS; l++)); do
		in=$r/$base$l
		if [[ ! -e $in.urls ]]; then
			status=0
			if ((l == 0)); then
				{
					cat /dev/null "${chunks[@]}"
					cat /dev/null "${earlier[@]}" | stylesheets
				} | sc-frontier -q "${req_opts[@]}" --add "$r/urls.jsonl" \
					>"$in.urls.tmp" 2>>"$r/requisites.log" || status=$?
			else
				stylesheets <"$r/$base$((l - 1)).jsonl" |
					sc-frontier -q "${req_opts[@]}" --add "$r/$base$((l - 1)).urls" \
						>"$in.urls.tmp" 2>>"$r/requisites.log" || status=$?
			fi
			[[ $status == 0 || $status == 3 ]] || die "sc-frontier failed (status $status), see $r/requisites.log"
			mv -f "$in.urls.tmp" "$in.urls"
		fi
		[[ -s $in.urls ]] || break
		[[ ! -e $in.jsonl ]] || continue
		made=() warc=()
		local stale=("$r/.$base$l.jsonl.tmp".*)
		warc_for "$r" "${warc_pfx}round-$1-$base$l" stale
		((${#stale[@]} == 0)) || remove "${stale[@]}"
		set +e
		sed 's/}$/,"requisite":true}/' "$in.urls" |
			sc-fetch "${fetch_opts[@]}" "${warc[@]}" "${fetch_args[@]}" 2>"$in.log" |
			sc-parse --requisites 2>>"$in.log" | sc-sink --jsonl "$r/.$base$l.jsonl.tmp" 2>"$in.sum"
		st=("${PIPESTATUS[@]}")
		set -e
		commit_or_remove "$in.jsonl" "$r/.$base$l.jsonl.tmp" "$in.sum" "$(wc -l <"$in.urls")" status "${st[@]:1}"
	done
	# Every level's URLs into the seen set (each file is on disk: the
	# order of writes holds).
	cat /dev/null "$r"/requisites-*.urls | sc-frontier -q --commit --seen "$DIR/seen.db" 2>>"$r/requisites.log" ||
		die "sc-frontier --commit failed, see $r/requisites.log"
}

# stylesheets: the records on stdin that are CSS, whose requisites
# (@import, url()) are the next level's.
stylesheets() {
	jq -c 'select((.content_type // "") | test("^[ \t]*text/css"; "i"))'
}

# seed_cookies: with COOKIES=FILE, DIR/cookies.txt, the crawl's one jar,
# which every sc-fetch and sc-retry of the crawl here reads before its
# requests and writes after a Set-Cookie (sc-fetch --cookies): FILE (a
# cookies.txt, as curl -c and wget --save-cookies write) copied in at the
# crawl's start, once, so that a resumed crawl keeps what it learnt; an
# empty jar when FILE is not there.  0600: cookies are credentials.
seed_cookies() {
	local jar=$DIR/cookies.txt
	[[ ! -e $jar ]] || return 0
	(
		umask 077
		if [[ -n $COOKIES && -e $COOKIES ]]; then cat -- "$COOKIES"; else printf '# Netscape HTTP Cookie File\n'; fi >"$jar.tmp"
	) || die "COOKIES=$COOKIES: cannot be read"
	mv -f "$jar.tmp" "$jar"
}

# login: with LOGIN=SCRIPT, the crawl logs in before it fetches anything
# (and again at each start of the crawl step, a resume included, unless
# the session still holds): SCRIPT runs with the jar's path as $1 and in
# SC_COOKIES, the crawl's folder as its working directory's DIR, and
# fills the jar (a pipeline of sc-fetch --cookies, sc-parse --forms).  It
# must succeed, and then LOGIN_CHECK (a URL) must answer 200 through the
# jar and not end at LOGIN_URL (a login page's URL, by prefix): else the
# crawl stops, nothing fetched.
step_login() {
	local jar=$DIR/cookies.txt status=0
	# (again: the session was lost; no check would find it held)
	[[ ${1:-} != again ]] || : >"$DIR/login.log"
	[[ $jar == /* ]] || jar=$PWD/$jar
	if [[ -z ${1:-} && -n $LOGIN_CHECK ]] && login_holds "$jar"; then return 0; fi
	SC_COOKIES=$jar "$LOGIN" "$jar" >"$DIR/login.log" 2>&1 || status=$?
	((status == 0)) || die "LOGIN=$LOGIN failed (status $status; $DIR/login.log): nothing was fetched"
	[[ -z $LOGIN_CHECK ]] || login_holds "$jar" ||
		die "LOGIN_CHECK=$LOGIN_CHECK: not logged in after LOGIN=$LOGIN ($DIR/login.log): nothing was fetched"
}

# relogin N: with LOGIN and LOGIN_URL, the session lost in round N (a
# page redirected to LOGIN_URL: sc-fetch --login-url made it and the
# chunk's pages not yet requested session_lost records, so that a loss
# costs a chunk only its requests in flight) is logged in again, once per
# loss, and those pages fetched again in place (relogin_chunk), until
# none is lost.  A login that fails stops the crawl (step_login) before
# anything more is fetched.  A pass that brings no page back although
# the login holds leaves the pages that end at LOGIN_URL as they are:
# the site's answer to this user.
relogin() {
	local r=$DIR/round-$1 f k lost before=-1 now
	while :; do
		lost=() now=0
		for f in "$r"/chunk-*.jsonl; do
			k=$(grep -c -F '"kind":"session_lost"' "$f" || true)
			((k == 0)) || lost+=("$f")
			now=$((now + k))
		done
		((now > 0)) || return 0
		if ((before >= 0 && now >= before)); then
			echo "crawl.sh: round $1: $now pages still end at LOGIN_URL=$LOGIN_URL after a login that holds: kept as they are" >&2
			return 0
		fi
		before=$now
		echo "crawl.sh: round $1: the session was lost ($now pages at LOGIN_URL=$LOGIN_URL): logging in again" >&2
		step_login again
		for f in "${lost[@]}"; do
			f=${f##*/chunk-}
			relogin_chunk "$1" "${f%.jsonl}"
		done
	done
}

# relogin_chunk N ID: chunk ID's session_lost records fetched again (the
# members a URL record has: KEPT), its others kept, through the chunk's
# pipeline and commit check; the metrics added to the chunk's log.
relogin_chunk() {
	local r=$DIR/round-$1 id=$2 st=() check='' want
	local f=$r/chunk-$2.jsonl in=$r/.chunk-$2.relogin.in tmp=$r/.chunk-$2.relogin.tmp
	local sum=$r/.chunk-$2.relogin.sum log=$r/.chunk-$2.relogin.log
	[[ $WARC != 1 ]] || retry_warc "$r" "${warc_pfx}round-$1-chunk-$id" "$f"
	grep -F '"kind":"session_lost"' "$f" | jq -c "$KEPT" >"$in"
	want=$(wc -l <"$in")
	fetch_parse_sink "$id" "$in" "$log" "$tmp" "$sum" st check
	cat "$log" >>"$r/chunk-$id.log"
	commit_or_remove "$tmp.done" "$tmp" "$sum" "$want" "$check" "${st[@]}"
	{
		grep -v -F '"kind":"session_lost"' "$f" || (($? == 1))
		cat "$tmp.done"
	} >"$f.tmp"
	mv -f "$f.tmp" "$f"
	rm -f "$in" "$tmp.done" "$sum" "$log"
}

# login_holds JAR: whether LOGIN_CHECK answers 200 through JAR, not at
# LOGIN_URL.
login_holds() {
	local rec str='"(([^"\\]|\\.)*)"'
	rec=$(printf '%s\n' "$LOGIN_CHECK" | sc-fetch -q --cookies "$1" 2>>"$DIR/login.log") || true
	# A fetch record begins url, final_url, status (sc-record(5)).
	[[ $rec =~ ^\{\"url\":$str,\"final_url\":$str,\"status\":200, ]] || return 1
	[[ -z $LOGIN_URL || ${BASH_REMATCH[3]} != "$LOGIN_URL"* ]]
}

# cookies: the crawl's jar made (seeded, as the crawl step does) and its
# path printed: a Netscape cookies.txt that curl -b and wget
# --load-cookies read.
step_cookies() {
	[[ -n $COOKIES$LOGIN ]] || die "COOKIES is not set: the crawl keeps no jar of its own"
	mkdir -p "$DIR"
	seed_cookies
	printf '%s\n' "$DIR/cookies.txt"
}

# more_rounds N: whether round N, after DEPTH, is to be crawled: the round
# before had URLs, and a cap is set, or was set once (a deferred file).
more_rounds() {
	[[ -s $DIR/round-$(($1 - 1))/urls.jsonl ]] || return 1
	capped || (($1 > DEPTH + 1)) || deferred_any
}

capped() { [[ $ROUND_MAX_PER_HOST != 0 ]]; }

deferred_any() {
	local d=("$DIR"/round-*/deferred.jsonl "$DIR"/round-*/held.jsonl)
	((${#d[@]} > 0))
}

# held N: DIR/round-N/held.jsonl, the URLs of round N that sc-fetch
# deferred (--defer-after: their host held past DEFER_AFTER), as the
# split gave them (their depth and origin), for the head of round N+1.
# Made from the chunks alone, so a kill redoes it the same; none when
# nothing was deferred.
step_held() {
	local r=$DIR/round-$1 chunks=("$DIR/round-$1"/chunk-*.jsonl)
	rm -f "$r/.held.jsonl.tmp"
	((${#chunks[@]} > 0)) || return 0
	awk -f "$here/crawl-held.awk" "${chunks[@]}" "$r"/chunk-*.urls >"$r/.held.jsonl.tmp"
	if [[ -s $r/.held.jsonl.tmp ]]; then
		mv -f "$r/.held.jsonl.tmp" "$r/held.jsonl"
	else
		rm -f "$r/.held.jsonl.tmp" "$r/held.jsonl"
	fi
}

# sub_make MAKE N GOAL: crawl.mk's GOAL for round N, in a make of its own
# (its chunks are known only now).  With WORKERS and no -j, as many jobs
# as the workers have slots.
sub_make() {
	local jobs=()
	[[ -z $WORKERS ]] || make_has_jobs || jobs=(-j"$(all_slots)")
	"$1" -f "$CRAWL_MK" --no-print-directory "${jobs[@]}" ROUND="$2" "$3"
}

# make_has_jobs: the make that ran this step was given -j (MAKEFLAGS holds
# the flags, then "--" and the command line's variables).
make_has_jobs() {
	local flags flag
	read -ra flags <<<"${MAKEFLAGS:-}"
	for flag in "${flags[@]}"; do
		[[ $flag != -- ]] || return 1
		[[ $flag != -j* ]] || return 0
	done
	return 1
}

# ---- a round's URLs -------------------------------------------------------

# frontier N: round N's URLs, from the seeds (N = 0) or from round N-1's
# pages and deferred URLs.  sc-frontier --no-commit never adds its own
# output to the seen set; the run for round N first adds round N-1's
# urls.jsonl, a finished file (--add, idempotent).  So no URL is ever seen
# without being in a round's urls.jsonl on disk (sc-crawl(7), "Order of
# writes").  Its output is renamed into place last.
step_frontier() {
	local n=$1 r=$DIR/round-$1 status=0
	if ((n == 0)); then
		[[ -r $SEEDS ]] || die "cannot read SEEDS=$SEEDS"
		seeds_frontier >"$r/.urls.jsonl.tmp" 2>"$r/frontier.log" || status=$?
	else
		links_frontier "$DIR/round-$((n - 1))" >"$r/.urls.jsonl.tmp" 2>"$r/frontier.log" || status=$?
	fi
	# Status 3 (some input lines malformed) is data, not failure.
	[[ $status == 0 || $status == 3 ]] || die "sc-frontier failed (status $status), see $r/frontier.log"
	mv -f "$r/.urls.jsonl.tmp" "$r/urls.jsonl"
}

seeds_frontier() {
	if [[ $SITEMAPS == 1 ]]; then
		local -
		set -o pipefail
		cat "$DIR/sitemaps/seeds.txt" - <"$SEEDS" | sc-frontier "${frontier_opts[@]}" "${frontier_args[@]}" --seeds
	else
		sc-frontier "${frontier_opts[@]}" "${frontier_args[@]}" --seeds <"$SEEDS"
	fi
}

# links_frontier R: the next round's URLs from round R: the URLs R
# deferred head them; a chunk file or the deferred file that cannot be
# read fails the step.
links_frontier() {
	local -
	set -o pipefail
	local p=$1 chunks=("$1"/chunk-*.jsonl)
	if [[ -e $p/deferred.jsonl ]]; then cat "$p/deferred.jsonl" || return 1; fi
	if [[ -e $p/held.jsonl ]]; then cat "$p/held.jsonl" || return 1; fi
	if ((${#chunks[@]} == 1)); then
		sc-frontier "${frontier_opts[@]}" "${frontier_args[@]}" --add "$p/urls.jsonl" <"${chunks[0]}"
	else
		cat /dev/null "${chunks[@]}" | sc-frontier "${frontier_opts[@]}" "${frontier_args[@]}" --add "$p/urls.jsonl"
	fi
}

# sitemaps: SITEMAPS=1, before round 0: the URLs of the sitemaps the
# seeds' sites name in robots.txt, into DIR/sitemaps/seeds.txt (renamed
# last, so a kill redoes the step; it touches no seen set).  sc-fetch
# --robots fetches each seed origin's /robots.txt, whose summary lists the
# Sitemap lines; the sitemaps go through sc-fetch | sc-parse, which gives
# a sitemap's <loc> URLs as links; a sitemap index's links are sitemaps,
# followed SITEMAP_LEVELS deep.  Needs jq(1).
step_sitemaps() {
	local sm=$DIR/sitemaps l status
	[[ ! -e $sm/seeds.txt ]] || return 0
	mkdir -p "$sm"
	rm -f "$sm/robots.metrics"
	# WARC=1: what this step fetches is archived too; a step killed before
	# starts again, its archives gone (with their payloads, WARC_DEDUPE).
	warc_forget "$sm/$warc_pfx"sitemaps-*.warc.gz*
	rm -f "$sm/$warc_pfx"sitemaps-*.warc.gz* "$sm/$warc_pfx"sitemaps-*.cdxj
	warc_for "$sm" "${warc_pfx}sitemaps-robots"
	status=0
	robots_urls <"$SEEDS" | sc-fetch -q "${contact[@]}" --robots --metrics "$sm/robots.metrics" "${warc[@]}" "${fetch_args[@]}" \
		>/dev/null 2>"$sm/robots.log" || status=$?
	[[ $status == 0 || $status == 3 ]] || return "$status"
	jq -r 'select(.event == "summary") | .robots[]?.sitemaps[]?' "$sm/robots.metrics" | sort -u >"$sm/level-0.txt"
	: >"$sm/.seeds.tmp"
	for ((l = 0; l < SITEMAP_LEVELS; l++)); do
		[[ -s $sm/level-$l.txt ]] || break
		warc_for "$sm" "${warc_pfx}sitemaps-level-$l"
		status=0
		sc-fetch "${fetch_opts[@]}" "${warc[@]}" "${fetch_args[@]}" <"$sm/level-$l.txt" 2>>"$sm/sitemaps.log" |
			sc-parse 2>>"$sm/sitemaps.log" >"$sm/level-$l.jsonl" || status=$?
		[[ $status == 0 || $status == 3 ]] || return "$status"
		jq -r 'select(.sitemap == "urlset") | .links[]?' "$sm/level-$l.jsonl" >>"$sm/.seeds.tmp"
		jq -r 'select(.sitemap == "sitemapindex") | .links[]?' "$sm/level-$l.jsonl" >"$sm/level-$((l + 1)).txt"
	done
	mv -f "$sm/.seeds.tmp" "$sm/seeds.txt"
}

# robots_urls: ORIGIN/robots.txt of every origin of the seeds on stdin.
robots_urls() {
	awk '!/^[ \t]*#/ && match($0, /https?:\/\/[^\/?#" ]+/) {
		o = substr($0, RSTART, RLENGTH); if (!(o in seen)) { seen[o]; print o "/robots.txt" } }'
}

# split N: round N's URLs into chunks with one awk (crawl-split.awk): every
# host of the round in one chunk, its shard hash(host) mod the number of
# WORKERS.  chunks.mk, renamed last, says the split is complete; it names
# the chunks and the number of URLs in each, which is what a chunk's
# records are counted against.
step_split() {
	local r=$DIR/round-$1 workers old=("$DIR/round-$1"/chunk-*.urls "$DIR/round-$1"/deferred.json[l])
	read -ra workers <<<"$WORKERS"
	((${#old[@]} == 0)) || rm -f "${old[@]}"
	awk -v SHARDS="${#workers[@]}" -v CHUNK="$CHUNK" -v CAP="$ROUND_MAX_PER_HOST" -v DIR="$r" \
		-f "$here/crawl-split.awk" "$r/urls.jsonl" "$r/urls.jsonl" >"$r/chunks.mk.tmp"
	mv -f "$r/chunks.mk.tmp" "$r/chunks.mk"
}

# ---- pages, status --------------------------------------------------------

# merge FORMAT ROUND...: DIR/pages.FORMAT (jsonl or csv), unless it
# exists, from every page record of ROUND..., in round order.  The chunks
# are sc-sink's output already, so pages.jsonl is their concatenation,
# renamed into place; pages.csv goes through sc-sink.
merge() {
	local format=$1 n chunks=() -
	shift
	set -o pipefail
	[[ ! -e $DIR/pages.$format ]] || return 0
	for n in "$@"; do chunks+=("$DIR/round-$n"/chunk-*.jsonl); done
	if [[ $format == csv ]]; then
		cat /dev/null "${chunks[@]}" | not_deferred | sc-sink -q --csv "$DIR/pages.csv"
	else
		cat /dev/null "${chunks[@]}" | not_deferred >"$DIR/.pages.jsonl.tmp"
		mv -f "$DIR/.pages.jsonl.tmp" "$DIR/pages.jsonl"
	fi
}

# not_deferred: the records of stdin but those sc-fetch deferred (their
# URLs are fetched in a later round: step_held).
not_deferred() {
	grep -v -F '"kind":"deferred"' || (($? == 1))
}

# pages FORMAT: DIR/pages.FORMAT of a crawl that has finished, and with
# WARC=1 DIR/warc/ (FORMAT warc: that alone).  One that ever deferred URLs
# (ROUND_MAX_PER_HOST) ends with a round that has no URLs; one that did
# not, with round DEPTH.
step_pages() {
	local listed last
	rounds listed
	last=${listed[-1]}
	[[ -e $DIR/round-$last/done ]] || die "round $last is not finished: run make crawl first"
	if [[ -s $DIR/round-$last/urls.jsonl ]] && { capped || ((last != DEPTH)) || deferred_any; }; then
		die "round $last is not the last: run make crawl first"
	fi
	[[ $1 == warc ]] || merge "$1" "${listed[@]}"
	[[ $WARC != 1 && $1 != warc ]] || warc_gather "$DIR" "" "${listed[@]/#/$DIR/round-}"
}

# warc_gather DEST PREFIX ROUNDDIR...: DEST/warc/, unless it exists: a hard
# link (else a copy) to the WARC of every finished chunk of ROUNDDIR...
# (PREFIX + round-N-chunk-ID.warc.gz), to each retry's WARC the chunk's
# records name and, for the crawl itself (no PREFIX), to the sitemaps
# step's, and index.cdxj, their CDXJs merged (each is sorted).
# Written as DEST/.warc.tmp and renamed last.
warc_gather() {
	local dest=$1/warc tmp=$1/.warc.tmp pfx=$2 d c f w files=() cdx=() mine
	[[ ! -e $dest ]] || return 0
	shift 2
	for d in "$@"; do
		for c in "$d"/chunk-*.jsonl; do
			w=$d/$warc_pfx$pfx${d##*/}-${c##*/} w=${w%.jsonl}
			[[ -e $w.warc.gz && -e $w.cdxj ]] || die "$c has no WARC $w.warc.gz (crawled without WARC=1?)"
			mine=("$w.warc.gz")
			for f in "$w"-retry-*.warc.gz; do
				[[ $f != *-render.warc.gz ]] || continue
				grep -qF "\"filename\":\"${f##*/}\"" "$c" || continue
				mine+=("$f")
			done
			# Each with sc-render's archive beside it (RENDER).
			for f in "${mine[@]}"; do
				files+=("$f") cdx+=("${f%.warc.gz}.cdxj") f=${f%.warc.gz}-render.warc.gz
				[[ ! -e $f ]] || files+=("$f") cdx+=("${f%.warc.gz}.cdxj")
			done
		done
		# The requisites' archives (REQUISITES=1), a level's with its
		# records, and its retries' that they name.
		for c in "$d"/requisites-*.jsonl; do
			w=$d/$warc_pfx$pfx${d##*/}-${c##*/} w=${w%.jsonl}
			[[ -e $w.warc.gz && -e $w.cdxj ]] || die "$c has no WARC $w.warc.gz (crawled without WARC=1?)"
			files+=("$w.warc.gz") cdx+=("$w.cdxj")
			for f in "$w"-retry-*.warc.gz; do
				grep -qF "\"filename\":\"${f##*/}\"" "$c" || continue
				files+=("$f") cdx+=("${f%.warc.gz}.cdxj")
			done
		done
	done
	# The sitemaps step's archives (SITEMAPS=1), the crawl's, not a recrawl's.
	if [[ -z $pfx ]]; then
		for f in "$DIR/sitemaps/$warc_pfx"sitemaps-*.warc.gz; do
			files+=("$f") cdx+=("${f%.warc.gz}.cdxj")
		done
	fi
	rm -rf "$tmp"
	mkdir "$tmp"
	if ((${#files[@]} > 0)) && ! ln -f "${files[@]}" "$tmp/" 2>/dev/null; then
		cp -f "${files[@]}" "$tmp/"
	fi
	sort -m /dev/null "${cdx[@]}" >"$tmp/index.cdxj"
	mv -T "$tmp" "$dest"
}

# wacz: the WACZ of a finished crawl (WACZ, else DIR/crawl.wacz), unless
# it exists: DIR/warc/ (made if need be) packaged by sc-warc wacz, the
# pages those of DIR/pages.jsonl (the crawl's pages, never a requisite).
step_wacz() {
	local out=${WACZ:-$DIR/crawl.wacz} files status=0
	[[ ! -e $out ]] || return 0
	[[ $WARC == 1 ]] || die "make wacz needs a crawl made with WARC=1"
	step_pages jsonl
	files=("$DIR"/warc/*.warc.gz)
	((${#files[@]} > 0)) || die "$DIR/warc has no WARC"
	sc-warc wacz --pages "$DIR/pages.jsonl" "$out" "${files[@]}" || status=$?
	[[ $status == 0 ]] || die "sc-warc wacz failed (status $status): $out not made"
}

step_status() {
	local n d c done_ ok fail held state later f words listed
	local tc=0 td=0 tok=0 tfail=0
	rounds listed
	for n in "${listed[@]}"; do
		d=$DIR/round-$n
		if [[ ! -e $d/chunks.mk ]]; then
			echo "round $n: not started"
			continue
		fi
		read -ra words < <(sed -n 's/^CHUNKS :=//p' "$d/chunks.mk") || true
		c=${#words[@]} done_=0 ok=0 fail=0 held=0
		for f in "$d"/chunk-*.jsonl; do
			done_=$((done_ + 1))
			ok=$((ok + $(grep -c '"ok":true' "$f" || true)))
			fail=$((fail + $(grep -c '"ok":false' "$f" || true)))
			# What sc-fetch deferred (DEFER_AFTER) is no failure: it is for later.
			held=$((held + $(grep -c -F '"kind":"deferred"' "$f" || true)))
		done
		fail=$((fail - held))
		state=running
		[[ ! -e $d/done ]] || state="done"
		[[ ! -e $d/deferred.jsonl ]] || held=$((held + $(wc -l <"$d/deferred.jsonl")))
		later=
		((held == 0)) || later=" ($held deferred to the next round)"
		echo "round $n: $(wc -l <"$d/urls.jsonl") urls$later, $c chunks, $done_ done, $((c - done_)) pending;" \
			"pages $ok ok, $fail failed ($state)"
		tc=$((tc + c)) td=$((td + done_)) tok=$((tok + ok)) tfail=$((tfail + fail))
	done
	echo "total: $tc chunks, $td done, $((tc - td)) pending; pages $tok ok, $tfail failed"
}

# report: sc-report over every chunk log of the crawl as it is now.
step_report() {
	local logs=("$DIR"/round-*/chunk-*.log) args=() status=0
	((${#logs[@]} > 0)) || die "no chunk logs in $DIR: nothing crawled yet"
	user_words args "$REPORT_ARGS"
	sc-report --html "$DIR/report.html" "${args[@]}" "${logs[@]}" >"$DIR/.report.txt.tmp" || status=$?
	if [[ $status != 0 && $status != 3 ]]; then
		rm -f "$DIR/.report.txt.tmp"
		die "sc-report failed (status $status)"
	fi
	mv -f "$DIR/.report.txt.tmp" "$DIR/report.txt"
	cat "$DIR/report.txt"
	echo "crawl.mk: $DIR/report.html, $DIR/report.txt" >&2
	return "$status"
}

# ---- retry and recrawl ----------------------------------------------------

# retry MAKE: the rounds one after another (a host is in one chunk per
# round, but in many rounds), the chunks of a round side by side (a
# sub-make each); with REQUISITES=1, then the round's requisites
# (retry_requisites).  DIR/pages.* are removed, so that the next make
# merges the new records.
step_retry() {
	local n listed
	rounds listed
	for n in "${listed[@]}"; do
		[[ -e $DIR/round-$n/chunks.mk ]] || continue
		sub_make "$1" "$n" retry-round
		[[ $REQUISITES != 1 ]] || retry_requisites "$n"
	done
	rm -rf "$DIR/pages.jsonl" "$DIR/pages.csv" "$DIR/warc" "${WACZ:-$DIR/crawl.wacz}"
}

# retry-chunk N ID: a chunk's ok records stay as they are; its failed ones
# go through sc-retry and sc-parse, always here (retry_records).
step_retry_chunk() {
	options here
	retry_records "$1" "chunk-$2" page
}

# retry_records N NAME KIND: round N's NAME.jsonl (a chunk's, KIND page;
# a requisites level's, KIND requisite) with its failed records fetched
# again by sc-retry, then parsed as the step that made them parsed them
# (a page with the crawl's fields, and rendered with RENDER; a requisite
# for its requisites only); its ok records stay as they are.  The file is
# replaced only when every record came back.  sc-retry's status is
# hidden in the group, so the records are searched for cancelled ones.
# options here is the caller's.
retry_records() {
	local r=$DIR/round-$1 name=$2 st
	local f=$r/$2.jsonl tmp=$r/.$2.retry.tmp sum=$r/.$2.retry.sum want log=$r/$2.log
	[[ -e $f ]] && grep -q '"ok":false' "$f" || return 0
	[[ $WARC != 1 ]] || retry_warc "$r" "${warc_pfx}round-$1-$name" "$f"
	want=$(wc -l <"$f")
	set +e
	{
		grep -v '"ok":false' "$f"
		if [[ $3 == page ]]; then
			grep '"ok":false' "$f" | sc-retry "${retry_opts[@]}" "${warc[@]}" "${retry_args[@]}" |
				render_stage | sc-parse "${parse_opts[@]}" "${parse_args[@]}"
		else
			grep '"ok":false' "$f" | sc-retry "${retry_opts[@]}" "${warc[@]}" "${retry_args[@]}" |
				sc-parse --requisites
		fi
	} 2>>"$log" | sc-sink --jsonl "$tmp" 2>"$sum"
	st=("${PIPESTATUS[@]}")
	set -e
	commit_or_remove "$f" "$tmp" "$sum" "$want" records "${st[@]}"
	rm -f "$sum"
}

# retry_requisites N: REQUISITES=1, after round N's chunks were retried:
# the failed requisites of each of its levels fetched again
# (retry_records), then the requisites no pass fetched yet, those of the
# pages and stylesheets the retry made ok, in a pass of their own,
# requisites-rK-L (step_requisites N rK: K the first pass not done; a
# pass that finds nothing leaves no file, so make retry again looks
# again).  Only a round that is done: an unfinished round's own pass
# reads the retried chunks when the crawl goes on.
retry_requisites() {
	local r=$DIR/round-$1 f k=1
	[[ -e $r/done ]] || return 0
	options here
	for f in "$r"/requisites-*.jsonl; do
		f=${f##*/}
		retry_records "$1" "${f%.jsonl}" requisite
	done
	while [[ -e $r/requisites-r$k.done ]]; do k=$((k + 1)); done
	step_requisites "$1" "r$k"
	if [[ -s $r/requisites-r$k-0.urls ]]; then
		: >"$r/requisites-r$k.done"
	else
		rm -f "$r/requisites-r$k-0.urls"
	fi
}

# retry_warc DIR NAME CHUNK: the WARC of a retry of CHUNK, DIR/NAME-retry-K
# with the first K free, once the retry WARCs CHUNK's records do not name
# (left by a retry killed or failed before its commit) are removed.
retry_warc() {
	local f k=1 stale=()
	for f in "$1/$2"-retry-*.warc.gz "$1/$2"-retry-*.open; do
		# sc-render's archive goes with its retry's (NAME-retry-K-render).
		[[ $f != *-render.warc.gz ]] || continue
		grep -qF "\"filename\":\"${f##*/}\"" "$3" || stale+=("$f" "${f%.warc.gz*}.cdxj")
		[[ $f != *.open ]] || continue
		grep -qF "\"filename\":\"${f##*/}\"" "$3" ||
			stale+=("${f%.warc.gz}"-render.warc.gz* "${f%.warc.gz}-render.cdxj")
	done
	((${#stale[@]} == 0)) || remove "${stale[@]}"
	while [[ -e $1/$2-retry-$k.warc.gz ]]; do k=$((k + 1)); done
	stale=()
	warc_for "$1" "$2-retry-$k" stale
	((${#stale[@]} == 0)) || remove "${stale[@]}"
}

# recrawl MAKE: every page again, into DIR/RECRAWL/round-N/ with the same
# chunks (a sub-make per round), then DIR/RECRAWL/pages.jsonl.
step_recrawl() {
	local n files=() dirs=() listed
	rounds listed
	for n in "${listed[@]}"; do
		[[ -e $DIR/round-$n/chunks.mk ]] || continue
		mkdir -p "$DIR/$RECRAWL/round-$n"
		sub_make "$1" "$n" recrawl-round
	done
	for n in "${listed[@]}"; do files+=("$DIR/$RECRAWL/round-$n"/chunk-*.jsonl) dirs+=("$DIR/$RECRAWL/round-$n"); done
	cat /dev/null "${files[@]}" | sc-sink -q --jsonl "$DIR/$RECRAWL/pages.jsonl"
	[[ $WARC != 1 ]] || warc_gather "$DIR/$RECRAWL" "${RECRAWL##*/}-" "${dirs[@]}"
}

# KEPT: the members of a URL record, to fetch a page again (relogin_chunk,
# recrawl).  A page whose record has headers (sc-fetch --headers) is asked
# for with If-None-Match and If-Modified-Since from its ETag and
# Last-Modified, so that an unchanged page costs a 304 (not_modified).
KEPT='with_entries(select(.key == "url" or .key == "depth" or .key == "seed"
    or .key == "from" or .key == "host"))'
# shellcheck disable=SC2016 # jq's variables
CONDITIONAL=$KEPT' + ((.headers // {}) as $h
    | ({} + (if $h.etag then {"If-None-Match": $h.etag} else {} end)
    + (if $h["last-modified"] then {"If-Modified-Since": $h["last-modified"]} else {} end))
    | if length > 0 then {request: {headers: .}} else {} end)'

# recrawl-chunk N ID [COUNT]: chunk ID of round N again, conditionally,
# through the same job and the same commit check as a chunk.  Needs jq(1).
step_recrawl_chunk() {
	local r=$DIR/round-$1 id=$2 want=${3:-}
	local d=$DIR/$RECRAWL/round-$1 stale=() st=() check=''
	warc_for "$d" "$warc_pfx${RECRAWL##*/}-round-$1-chunk-$id" stale
	((${#stale[@]} == 0)) || remove "${stale[@]}"
	[[ -n $want ]] || want=$(wc -l <"$r/chunk-$id.jsonl")
	jq -c "$CONDITIONAL" "$r/chunk-$id.jsonl" >"$d/.chunk-$id.in.tmp"
	fetch_parse_sink "$id" "$d/.chunk-$id.in.tmp" "$d/chunk-$id.log" "$d/.chunk-$id.jsonl.tmp" "$d/chunk-$id.sum" st check
	rm -f "$d/.chunk-$id.in.tmp"
	commit_or_remove "$d/chunk-$id.jsonl" "$d/.chunk-$id.jsonl.tmp" "$d/chunk-$id.sum" "$want" "$check" "${st[@]}"
}

# ---- main -----------------------------------------------------------------
#
#     crawl.sh STEP ARGS...
#
# crawl.mk holds the graph (rounds, chunks, what exists and what is to do)
# and runs each recipe as one call of a step here; this file holds what
# the steps do.  The steps (the recipes of crawl.mk):
#   crawl MAKE             the rounds, one after another, then DIR/pages.*
#   frontier N             DIR/round-N/urls.jsonl (from the seeds for 0)
#   sitemaps               DIR/sitemaps/seeds.txt (SITEMAPS=1)
#   split N                DIR/round-N/chunk-*.urls and chunks.mk
#   chunk N ID [COUNT]     DIR/round-N/chunk-ID.jsonl (at the top)
#   pages FORMAT           DIR/pages.FORMAT (jsonl or csv) of a finished crawl
#   warc                   DIR/warc/ of a finished crawl (WARC=1)
#   wacz                   DIR/crawl.wacz (or WACZ) of a finished crawl (WARC=1)
#   status                 one line per round, then the totals
#   report                 DIR/report.html and report.txt (sc-report)
#   progress PID           the watcher the crawl step starts (crawl-progress.sh)
#   retry MAKE             sc-retry over the failures of every round
#   retry-chunk N ID       one chunk's failures, in place
#   recrawl MAKE           every page again into DIR/RECRAWL
#   recrawl-chunk N ID [COUNT]  one chunk of it
#   commit-or-remove OUT TMP SUM COUNT CHECK STATUS...  (commit_or_remove)
#   worker-job [N ID]      prints the shell command a worker runs per chunk
#                          (N ID, the chunk, with WARC=1)
#   cookies                DIR/cookies.txt (COOKIES), its path printed
#   settings               prints the settings, export NAME=VALUE a line
#                          (crawl.mk's settings target)

[[ $# -gt 0 ]] || die "usage: crawl.sh STEP ARGS... (see the comment above its main case)"
step=$1
shift
case $step in
frontier | sitemaps)
	options here
	"step_$step" "$@"
	;;
crawl | split | pages | status | report | retry | recrawl | cookies) "step_$step" "$@" ;;
progress)
	# shellcheck source=share/sc/crawl-progress.sh
	source "$here/crawl-progress.sh"
	step_progress "$@"
	;;
warc) step_pages warc ;;
wacz) step_wacz ;;
retry-chunk | recrawl-chunk) "step_${step/-/_}" "$@" ;;
commit-or-remove) commit_or_remove "$@" ;;
settings)
	for setting in $CRAWL_SETTINGS CRAWL_SETTINGS; do printf 'export %s=%q\n' "$setting" "${!setting}"; done
	;;
worker-job)
	options worker
	[[ $WARC != 1 ]] || warc_for "$DIR/round-${1:?worker-job N ID with WARC=1}" "${warc_pfx}round-$1-chunk-${2:?worker-job N ID with WARC=1}"
	worker_job text
	printf '%s\n' "$text"
	;;
*) die "no step $step" ;;
esac
