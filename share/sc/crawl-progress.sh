#!/bin/bash
# crawl-progress.sh: crawl.mk's progress (sc-crawl(7), "Progress"), sourced
# by crawl.sh only when PROGRESS=1: the crawl step's end line, and the
# watcher, the step "progress".  It reads crawl.sh's settings (DIR,
# DEPTH, PER_HOST, WORKERS, METRICS, CSV, PROGRESS_EVERY) and defines
# functions only; each note is above its function.

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
# whole lines, on the first line; then "HOST N FIRST LAST" per host: its
# URLs done and the times of the first and the last (ms of the day, from
# the line's ts or the record's fetched_at).  A host is the split's (the
# origin without its scheme and port).  In a log a URL is done at its
# last attempt's request line (not robots.txt's); in records, at its
# record.  The last line has no newline when the bytes end inside it (awk
# counts one byte too many then): it is left for the next read.  The bytes
# matched are fetch_metrics.c's and fetch_robots.c's (lib/engine);
# sc-fetch-robots.bats runs this awk on sc-fetch's own metrics, so a
# member moved there fails it.
# shellcheck disable=SC2016 # awk's fields
GROWN_AWK='function take() {
		n += got; e += bad
		if (!got || key == "") return
		hn[key]++
		if (ms < 0) return
		if (!(key in hf) || ms < hf[key]) hf[key] = ms
		if (!(key in hl) || ms > hl[key]) hl[key] = ms
	}
	NR > 1 { take() }
	{ len = length($0) + 1; b += len
		got = !LOG || (/^\{"event":"request"/ && !/"next":"again"/ && !/"robots":true[,}]/)
		bad = LOG ? got && /"error":"/ : /"ok":false/
		key = ""; ms = -1
		if (got && match($0, /"host":"[^"]*"/)) {
			key = substr($0, RSTART + 8, RLENGTH - 9)
			sub(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//, "", key); sub(/:[0-9]+$/, "", key)
		}
		if (got && match($0, /"(ts|fetched_at)":"[0-9-]+T[0-9][0-9]:[0-9][0-9]:[0-9.]+Z"/)) {
			split(substr($0, RSTART, RLENGTH - 2), t, "T"); split(t[2], c, ":")
			ms = int(((c[1] * 60 + c[2]) * 60 + c[3]) * 1000 + 0.5)
		}
	}
	END {
		if (b > L) b -= len; else if (NR > 0) take()
		print n + 0, e + 0, b + 0
		for (k in hn) print k, hn[k], (k in hf) ? hf[k] : -1, (k in hl) ? hl[k] : -1
	}'

# The URLs of a round's chunks by host: "ID HOST COUNT" per chunk and host
# (a host is in one chunk of a round), the host as crawl-split.awk takes it
# (its host member, else the URL's authority) without its port.
# shellcheck disable=SC2016 # awk's fields
HOSTS_AWK='{
		h = "-"
		if (match($0, /"host"[ \t]*:[ \t]*"[^"]*"/)) {
			h = substr($0, RSTART, RLENGTH); sub(/^"host"[ \t]*:[ \t]*"/, "", h); sub(/"$/, "", h)
		} else if (match($0, /"url"[ \t]*:[ \t]*"[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\/"?#]*/)) {
			h = substr($0, RSTART, RLENGTH); sub(/^"url"[ \t]*:[ \t]*"[^:]*:\/\//, "", h)
			sub(/^.*@/, "", h); h = tolower(h)
		}
		sub(/:[0-9]+$/, "", h)
		id = FILENAME; sub(/^.*\/chunk-/, "", id); sub(/\.urls$/, "", id)
		count[id " " h]++
	}
	END { for (k in count) print k, count[k] }'

# progress PARENT is the watcher (sc-crawl(7), "Progress"), a process of
# its own that the crawl step PARENT starts, so that the chunks do no
# work for it.  It looks at the files of the crawl once a second on a
# terminal (redrawing one line) or every PROGRESS_EVERY seconds (a plain
# line), until SIGTERM or until PARENT is gone (make killed: no trap of
# the crawl step runs then).  Its state lives in step_progress's locals,
# which the progress_* functions it calls share: the round n followed,
# the counts of its finished chunks, for each running chunk how far its
# log (or, with METRICS=0, sc-sink's temporary file) was read and what
# that held, and per host its URLs done.  A read takes the new bytes only
# (tail -c +OFFSET | head -c LENGTH) and counts whole lines (GROWN_AWK),
# so no byte is read twice; a finished chunk is counted once, all of them
# in one awk.  The rate is over the last samples of the pages done across
# rounds; the time left is the round's, at its rate since its chunks.mk
# (or since first seen), or what its slowest host still owes when that is
# more (progress_owed).  The hosts held come from DIR/origins.db, through
# sc-fetch --origin-state FILE --show, once per look.  The wait between
# looks is a read with a time-out on a pipe nobody writes, which SIGTERM
# interrupts at once (a sleep would delay the crawl's end by up to a
# second).
step_progress() {
	set +e
	local parent=$1 tty='' cols=80 nap now last size stop='' started=${EPOCHREALTIME/./}
	# The round followed and what is counted of it; the rounds before.
	local n=0 r loaded='' total=0 fin_lines=0 fin_errs=0 t0=0 d0=-1 done_=0 failed=0
	local lines_before=0 errs_before=0
	local -A off=() lines=() errs=() fin=()
	# Round n by host: its URLs and chunk, the hosts of each chunk; the
	# URLs done and the times of the first and last; the held ones'
	# spacing and block (progress_held).
	local -A hurls=() hchunk=() hosts_of=() hdone=() hfirst=() hlast=() gaps=() blocks=()
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
		hurls=() hchunk=() hosts_of=() hdone=() hfirst=() hlast=()
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
	while read -r name h count; do
		hurls[$h]=$count hchunk[$h]=$name hosts_of[$name]+=" $h"
	done < <(awk "$HOSTS_AWK" /dev/null "$r"/chunk-*.urls)
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
	if ((size < o)); then
		o=0 lines[$id]=0 errs[$id]=0
		for h in ${hosts_of[$id]:-}; do unset "hdone[$h]" "hfirst[$h]" "hlast[$h]"; done
	fi
	if ((size > o)); then
		{
			read -r l e b
			while read -r h k first last; do progress_host "$h" "$k" "$first" "$last"; done
		} < <(tail -c +$((o + 1)) -- "$f" | head -c $((size - o)) |
			awk -v L=$((size - o)) -v LOG=$log "$GROWN_AWK")
		lines[$id]=$((${lines[$id]:-0} + l)) errs[$id]=$((${errs[$id]:-0} + e)) o=$((o + b))
	fi
	off[$id]=$o
}

# progress_host HOST N FIRST LAST: N more of HOST's URLs done, the first
# and the last at FIRST and LAST (ms of the day; -1: not known).
progress_host() {
	local was
	hdone[$1]=$((${hdone[$1]:-0} + $2))
	(($3 >= 0)) || return 0
	was=${hfirst[$1]:-}
	[[ -n $was ]] && ((was <= $3)) || hfirst[$1]=$3
	was=${hlast[$1]:-}
	[[ -n $was ]] && ((was >= $4)) || hlast[$1]=$4
}

# progress_owed: sets owed (ms) and owed_by to the most that one host of
# round n still owes, and that host: its URLs not done times its spacing
# (the wider of the one it kept this round, from the times of its URLs
# done, and the one the origin state holds for it), and the rest of its
# block.  Over the hosts of the chunks being read and the held ones.
progress_owed() {
	local id h left gap g o k
	local -A those=()
	owed=0 owed_by=''
	for id in "${!off[@]}"; do
		for h in ${hosts_of[$id]:-}; do those[$h]=1; done
	done
	for h in "${!gaps[@]}"; do those[$h]=1; done
	for h in "${!those[@]}"; do
		id=${hchunk[$h]:-}
		[[ -n $id && -z ${fin[$id]:-} ]] || continue
		k=${hdone[$h]:-0} left=$((${hurls[$h]} - ${hdone[$h]:-0})) gap=0
		((left > 0)) || continue
		if ((k >= 2)) && [[ -n ${hfirst[$h]:-} ]]; then
			g=$((${hlast[$h]} - ${hfirst[$h]}))
			((g <= 0)) || gap=$((g / (k - 1)))
		fi
		g=${gaps[$h]:-0}
		((g <= gap)) || gap=$g
		o=$((left * gap + ${blocks[$h]:-0}))
		((o <= owed)) || owed=$o owed_by="$h, $left urls"
	done
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
	local text rate=0 left='' of=/$DEPTH held='' est=-1 by='' owed owed_by
	((n <= DEPTH)) || of=" (after DEPTH $DEPTH)"
	((now <= sample_t[0])) ||
		rate=$(((sample_d[-1] - sample_d[0]) * 10000000 / (now - sample_t[0])))
	if [[ -z $loaded ]]; then
		text="round $n$of: making its URLs, $((rate / 10)).$((rate % 10)) pages/s, $failed errors"
	else
		((done_ <= d0 || done_ >= total)) || est=$(((total - done_) * (now - t0) / (done_ - d0) / 1000))
		progress_held gaps blocks
		progress_owed
		((owed <= est)) || est=$owed by=" ($owed_by)"
		((est < 0)) || left=", ~$(duration $((est / 1000))) left$by"
		text="round $n$of: $done_/$total urls, $((rate / 10)).$((rate % 10)) pages/s, $failed errors$held$left"
	fi
	if [[ -n $tty ]]; then
		printf '\r%s\e[K' "${text:0:cols-1}" >&2
	else
		printf 'crawl.mk: %(%H:%M:%S)T %s\n' -1 "$text" >&2
	fi
}

# What sc-fetch --origin-state FILE --show says (one line per origin,
# its members in the order sc-fetch(1) gives: lib/web/origin_state.c
# writes them; crawl-progress.bats reads them through this awk), at NOW
# (wall ms) for PER_HOST: origins whose pace sc-fetch slowed (fewer in
# flight than PER_HOST, or a spacing it learnt) or blocked.  The first
# line is "COUNT BLOCKED NAMES", the two that hold the round longest
# named (blocked, then the widest spacing, then by name), as host:port;
# then "HOST GAP BLOCK" for each, by host (the split's: no scheme, no
# port), with its spacing and what is left of its block (ms).
# shellcheck disable=SC2016 # awk's fields
HELD_AWK='function num(name,    v) {
		if (!match($0, "\"" name "\":[^,}]*")) return ""
		v = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
		return v == "null" ? "" : v + 0
	}
	function longer(i, j) {
		if (b[i] != b[j]) return b[i] > b[j]
		if (gap[i] != gap[j]) return gap[i] > gap[j]
		return o[i] < o[j]
	}
	match($0, /^\{"origin":"[^"]*"/) {
		origin = substr($0, 12, RLENGTH - 12)
		lim = num("limit"); if (lim == "") next
		iv = num("interval_ms"); until = num("blocked_until")
		if (!(lim < PER_HOST || iv > 0 || until > NOW)) next
		n++; o[n] = origin; sub(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//, "", o[n])
		gap[n] = iv + 0; b[n] = until > NOW; left[n] = b[n] ? until - NOW : 0; blocked += b[n]
		if (!first || longer(n, first)) { second = first; first = n }
		else if (!second || longer(n, second)) second = n
	}
	END {
		names = first ? o[first] : ""
		if (second) names = names ", " o[second]
		print n + 0, blocked + 0, names
		for (k = 1; k <= n; k++) { h = o[k]; sub(/:[0-9]+$/, "", h); print h, int(gap[k] + 0.5), left[k] }
	}'

# progress_held GAPS BLOCKS: sets held to ", N hosts held (B blocked): H1,
# H2 +K" from the crawl's origin state (sc-fetch --show, HELD_AWK), and
# the caller's associative arrays GAPS and BLOCKS to each held host's
# spacing and the rest of its block (ms); nothing with WORKERS (each
# worker keeps its own).
# shellcheck disable=SC2034 # gaps_into and blocks_into are the caller's (namerefs)
progress_held() {
	local db=$DIR/origins.db count blocked names more='' h g l
	local -n gaps_into=$1 blocks_into=$2
	gaps_into=() blocks_into=()
	[[ -z $WORKERS && -s $db ]] || return 0
	{
		read -r count blocked names || return 0
		while read -r h g l; do gaps_into["$h"]=$g blocks_into["$h"]=$l; done
	} < <(sc-fetch --origin-state "$db" --show 2>/dev/null |
		awk -v NOW=$((now / 1000)) -v PER_HOST="$PER_HOST" "$HELD_AWK")
	[[ -n $count ]] || return 0
	((blocked == 0)) || more=" ($blocked blocked)"
	held=", $count hosts held$more"
	[[ -z $names ]] || held+=": $names"
	((count <= 2)) || held+=" +$((count - 2))"
}
