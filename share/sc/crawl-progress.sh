#!/bin/bash
# crawl-progress.sh: crawl.mk's progress (sc-crawl(7), "Progress"), sourced
# by crawl.sh only when PROGRESS=1: the crawl step's end line, and the
# watcher, the step "progress".  It reads crawl.sh's settings (DIR,
# DEPTH, ROUNDS, PER_HOST, WORKERS, METRICS, CSV, PROGRESS_EVERY) and
# defines functions only.
#
# progress PID is the watcher (sc-crawl(7), "Progress"): a process of its
# own, so that the chunks do no work for it, which looks at the files of
# the crawl once a second on a terminal (redrawing one line) or every
# PROGRESS_EVERY seconds (a plain line), until SIGTERM or until the crawl
# step PID is gone (make killed: no trap of the crawl step runs then).
# Its state lives in step_progress's locals, which the progress_*
# functions it calls share: the round n followed, the counts of its
# finished chunks, and for each running chunk how far its log (or, with
# METRICS=0, sc-sink's temporary file) was read and what that held.  A
# read takes the new bytes only (tail -c +OFFSET | head -c LENGTH) and
# counts whole lines (GROWN_AWK), so no byte is read twice; a finished
# chunk is counted once, all of them in one awk.  The rate is over the
# last samples of the pages done across rounds; the time left is the
# round's, at its rate since its chunks.mk (or since first seen).  The
# hosts held come from DIR/origins.db, one sqlite3 query per look.
# The wait between looks is a read with a time-out on a pipe nobody
# writes, which SIGTERM interrupts at once (a sleep would delay the
# crawl's end by up to a second).

# progress_stop: the crawl step's watcher ends (it clears its line first).
progress_stop() {
	[[ -n ${watcher:-} ]] || return 0
	kill "$watcher" 2>/dev/null || true
	wait "$watcher" 2>/dev/null || true
	watcher=
}

# progress_end STARTED: the watcher ends; the crawl's last line.
progress_end() {
	local pages failed csv=
	progress_stop
	pages=$(wc -l <"$DIR/pages.jsonl")
	failed=$(grep -c -F '"ok":false' "$DIR/pages.jsonl" || true)
	[[ $CSV != 1 ]] || csv=" and $DIR/pages.csv"
	echo "crawl.mk: $((pages - failed)) pages ok, $failed failed, in $(duration $((SECONDS - $1))): $DIR/pages.jsonl$csv" >&2
}

# duration SECS: 45s, 3m05s, 2h07m.
duration() {
	if (($1 < 60)); then
		echo "$1s"
	elif (($1 < 3600)); then
		printf '%dm%02ds\n' $(($1 / 60)) $(($1 % 60))
	else
		printf '%dh%02dm\n' $(($1 / 3600)) $(($1 % 3600 / 60))
	fi
}

# A finished chunk's records and failed records.
COUNT_AWK='/"ok":false/ { e++ } END { print NR, e + 0 }'
# What the L bytes read of a chunk being written add (LOG=1: its log,
# else sc-sink's temporary file): URLs done, failed, and the bytes of the
# whole lines.  In a log a URL is done at its last attempt's request line
# (not robots.txt's); in records, at its record.  The last line has no
# newline when the bytes end inside it (awk counts one byte too many then):
# it is left for the next read.  The bytes matched are fetch_metrics.c's
# and fetch_robots.c's (lib/engine); sc-fetch-robots.bats runs this awk
# on sc-fetch's own metrics, so a member moved there fails it.
# shellcheck disable=SC2016 # awk's fields
GROWN_AWK='{ len = length($0) + 1; b += len
		got = !LOG || (/^\{"event":"request"/ && !/"next":"again"/ && !/"robots":true[,}]/)
		bad = LOG ? got && /"error":"/ : /"ok":false/; n += got; e += bad }
	END { if (b > L) { n -= got; e -= bad; b -= len } print n + 0, e + 0, b + 0 }'

# progress PARENT: the watcher, a process of its own that the crawl step
# PARENT starts; it writes the crawl's progress to standard error until it
# is sent SIGTERM or PARENT is gone (notes).
step_progress() {
	set +e
	local parent=$1 tty='' cols=80 nap now last size stop='' started=${EPOCHREALTIME/./}
	# The round followed and what is counted of it; the rounds before.
	local n=0 r loaded='' total=0 fin_lines=0 fin_errs=0 t0=0 d0=-1 done_=0 failed=0
	local lines_before=0 errs_before=0
	local -A off=() lines=() errs=() fin=()
	# Pages done (all rounds) at the last looks, for the rate.
	local -a sample_t=() sample_d=()
	if [[ -t 2 ]]; then
		tty=1
		size=$(stty size <&2 2>/dev/null) size=${size#* }
		[[ $size != *[!0-9]* ]] && ((size > 20)) && cols=$size
	fi
	# SIGTERM ends the wait at once, but never a look half-way: every
	# child of a look (command substitutions, waited for) is gone before
	# the watcher is.
	trap 'stop=1' TERM
	exec {nap}<> <(:)
	now=$started last=$started
	progress_round
	progress_count
	while [[ -z $stop ]] && kill -0 "$parent" 2>/dev/null; do
		read -r -t 1 -u "$nap"
		[[ -z $stop ]] || break
		now=${EPOCHREALTIME/./}
		[[ -n $tty ]] || ((now - last >= PROGRESS_EVERY * 1000000)) || continue
		last=$now
		progress_round
		progress_count
		progress_show
	done
	# When the crawl step is gone instead (make killed, Ctrl-C), the line
	# stays as it was: the shell's prompt may be on it by now.
	[[ -z $stop ]] || progress_clear
}

progress_clear() { [[ -z $tty ]] || printf '\r\e[K' >&2; }

# progress_round: the finished rounds counted and left behind, then the
# files of round n counted as far as they are written.
progress_round() {
	r=$DIR/round-$n
	while [[ -e $r/done ]]; do
		[[ -n $loaded ]] || progress_load
		progress_scan
		lines_before=$((lines_before + fin_lines)) errs_before=$((errs_before + fin_errs))
		n=$((n + 1)) loaded='' total=0 fin_lines=0 fin_errs=0 t0=0 d0=-1
		r=$DIR/round-$n
		off=() lines=() errs=() fin=()
	done
	[[ -e $r/chunks.mk ]] || return 0
	[[ -n $loaded ]] || progress_load
	progress_scan
}

# progress_load: round n's chunks and their URL counts (chunks.mk); a
# round split since the watcher started began with its chunks.mk.
progress_load() {
	local name count made
	made=$(stat -c %Y "$r/chunks.mk" 2>/dev/null)000000
	((made < started)) || t0=$made d0=0
	while read -r name _ count; do
		[[ $name != N.* ]] || total=$((total + count))
	done <"$r/chunks.mk"
	loaded=1
}

# progress_scan: the chunks of round n: a finished one not yet counted is
# counted whole (one awk for all); one being written (its sc-sink
# temporary file is there) from where the last look left its log (METRICS)
# or its temporary file.
progress_scan() {
	local f id whole=() grown=() l e
	local -A running=()
	for f in "$r"/chunk-*.jsonl; do
		id=${f##*/chunk-} id=${id%.jsonl}
		[[ -n ${fin[$id]:-} ]] || whole+=("$f") fin[$id]=1
	done
	for f in "$r"/..chunk-*.jsonl.tmp.* "$r"/.chunk-*.jsonl.tmp; do
		id=${f##*/.*chunk-} id=${id%%.jsonl*}
		[[ -z ${fin[$id]:-} && -z ${running[$id]:-} ]] || continue
		running[$id]=1
		if [[ $METRICS == 1 ]]; then grown+=("$r/chunk-$id.log"); else grown+=("$f"); fi
	done
	# Finished, or failed and to be done again: no longer read.
	for id in "${!off[@]}"; do
		[[ -n ${running[$id]:-} ]] || unset "off[$id]" "lines[$id]" "errs[$id]"
	done
	if ((${#whole[@]} > 0)); then
		read -r l e <<<"$(awk "$COUNT_AWK" "${whole[@]}")"
		fin_lines=$((fin_lines + l)) fin_errs=$((fin_errs + e))
	fi
	((${#grown[@]} > 0)) || return 0
	while read -r size f; do
		[[ -z $f ]] || progress_read "$f" "$size"
	done <<<"$(stat -c '%s %n' -- "${grown[@]}" 2>/dev/null)"
}

# progress_read FILE SIZE: the bytes of FILE after those already read.
progress_read() {
	local f=$1 size=$2 id o l e b log=0
	id=${f##*/} id=${id#*chunk-} id=${id%%.*}
	[[ $f != *.log ]] || log=1
	o=${off[$id]:-0}
	# A smaller file is a new one: the chunk is being done again.
	((size >= o)) || o=0 lines[$id]=0 errs[$id]=0
	if ((size > o)); then
		read -r l e b <<<"$(tail -c +$((o + 1)) -- "$f" | head -c $((size - o)) |
			awk -v L=$((size - o)) -v LOG=$log "$GROWN_AWK")"
		lines[$id]=$((${lines[$id]:-0} + l)) errs[$id]=$((${errs[$id]:-0} + e)) o=$((o + b))
	fi
	off[$id]=$o
}

# progress_count: the round's pages done and the crawl's failed ones now;
# a sample of the pages done for the rate.
progress_count() {
	local id k
	done_=$fin_lines failed=$((errs_before + fin_errs))
	for id in "${!lines[@]}"; do
		done_=$((done_ + lines[$id])) failed=$((failed + errs[$id]))
	done
	[[ -z $loaded ]] || ((d0 >= 0)) || t0=$now d0=$done_
	sample_t+=("$now") sample_d+=($((lines_before + done_)))
	k=$((${#sample_t[@]} - (tty ? 6 : 2)))
	((k <= 0)) || sample_t=("${sample_t[@]:k}") sample_d=("${sample_d[@]:k}")
}

# progress_show: the status line (a terminal) or a plain line.
progress_show() {
	local text rate=0 left='' of=/$DEPTH held=''
	((n <= DEPTH)) || of=" (after DEPTH $DEPTH)"
	((now <= sample_t[0])) ||
		rate=$(((sample_d[-1] - sample_d[0]) * 10000000 / (now - sample_t[0])))
	if [[ -z $loaded ]]; then
		text="round $n$of: making its URLs, $((rate / 10)).$((rate % 10)) pages/s, $failed errors"
	else
		((done_ <= d0 || done_ >= total)) ||
			left=", ~$(duration $(((total - done_) * (now - t0) / (done_ - d0) / 1000000))) left"
		progress_held
		text="round $n$of: $done_/$total urls, $((rate / 10)).$((rate % 10)) pages/s, $failed errors$held$left"
	fi
	if [[ -n $tty ]]; then
		printf '\r%s\e[K' "${text:0:cols-1}" >&2
	else
		printf 'crawl.mk: %(%H:%M:%S)T %s\n' -1 "$text" >&2
	fi
}

# progress_held: sets held to ", N hosts held (B blocked): H1, H2 +K" from
# the crawl's origin state: origins whose pace sc-fetch slowed (fewer in
# flight than PER_HOST, or a spacing it learnt) or blocked, the ones that
# hold the round longest named first (blocked, then the widest spacing);
# nothing without sqlite3 or with WORKERS.
progress_held() {
	local db=$DIR/origins.db ms=$((now / 1000)) answer count blocked names more=''
	[[ -z $WORKERS && -s $db ]] && command -v sqlite3 >/dev/null || return 0
	answer=$(sqlite3 -batch -noheader -separator ' ' "$db" ".timeout 200" \
		"WITH held AS (SELECT origin, blocked_until > $ms AS b, coalesce(interval_ms, 0) AS gap
		 FROM origins WHERE has_pace AND (lim < $PER_HOST OR interval_ms > 0 OR blocked_until > $ms))
		 SELECT count(*), coalesce(sum(b), 0), coalesce((SELECT group_concat(o, ', ') FROM
		 (SELECT substr(origin, instr(origin, '://') + 3) AS o FROM held
		  ORDER BY b DESC, gap DESC, origin LIMIT 2)), '') FROM held" 2>/dev/null) || return 0
	read -r count blocked names <<<"$answer"
	[[ -n $count ]] || return 0
	((blocked == 0)) || more=" ($blocked blocked)"
	held=", $count hosts held$more"
	[[ -z $names ]] || held+=": $names"
	((count <= 2)) || held+=" +$((count - 2))"
}
