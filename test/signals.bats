#!/usr/bin/env bats
# Signals at random moments (issue 14): the whole pipeline
#     sc-fetch | copy | sc-parse | sc-sink --jsonl A --csv B --sqlite C
# over a few thousand fixture-server pages, a quarter of them slow, gets
# SIGINT or SIGTERM on its whole process group at a random moment, many
# times.  The copy is tee(1) in a process that ignores both signals, so it
# holds every record sc-fetch wrote.  After each run (test/lib/outputs.py):
# every record of the copy is in A, B and C, whole, and nothing else is;
# every stage exits 130 (SIGINT) or 143 (SIGTERM); no temporary file is
# left.  With a second signal 50 ms after the first: each file is its
# previous version or a whole new one, never a partial one.  The same with
# sc-retry in the middle.
#
# The moments come from bash's RANDOM, seeded with SC_SIGNAL_SEED (printed
# by each test; set it to replay a failure's sequence of moments) and the
# number of runs from SC_SIGNAL_RUNS (default 20 for the single signal,
# a fifth of that for the others; 50 or more for a longer soak: each run is
# seconds of the suite's time).

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0
load 'lib/server'

setup_file() {
	sc_server_start
	: "${SC_SIGNAL_SEED:=$((($(date +%s) ^ $$) % 32768))}"
	: "${SC_SIGNAL_RUNS:=20}"
	export SC_SIGNAL_SEED SC_SIGNAL_RUNS
	# 3000 urls, every fourth one slow (50-250 ms): the run lasts seconds,
	# the signal comes in its first 0.7 s, and the drain has slow
	# transfers in flight to wait for.
	awk -v base="$SC_BASE" 'BEGIN {
		for (i = 1; i <= 3000; i++)
			if (i % 4 == 0) printf "%s/delay/%d?i=%d\n", base, 50 + i % 3 * 100, i
			else printf "%s/page/%d?size=%d\n", base, i, i % 7 * 1000
	}' >"$BATS_FILE_TMPDIR/urls.txt"
	# For sc-retry: every third url fails once (503) and then succeeds.
	awk -v base="$SC_BASE" -v seed="$SC_SIGNAL_SEED" 'BEGIN {
		for (i = 1; i <= 1500; i++)
			if (i % 3 == 0) printf "%s/flaky/r%d-%d?fail=1&status=503\n", base, i, seed
			else printf "%s/delay/%d?i=%d\n", base, 50 + i % 5 * 50, i
	}' >"$BATS_FILE_TMPDIR/retry-urls.txt"
}

teardown_file() {
	sc_server_stop
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	RANDOM=$SC_SIGNAL_SEED
	echo "# SC_SIGNAL_SEED=$SC_SIGNAL_SEED SC_SIGNAL_RUNS=$SC_SIGNAL_RUNS" >&3
}

# A failed run may leave its pipeline running: end it.
teardown() {
	local f
	for f in "$BATS_TEST_TMPDIR"/run*/leader.pid; do
		[[ -s $f ]] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
	done
	return 0
}

SINKS='sc-sink --jsonl A.jsonl --csv B.csv --sqlite C.sqlite'

# start_pipeline DIR PIPELINE: runs PIPELINE (stages joined by |, each a
# command) in DIR as its own process group, in the background.  The
# group's leader, a bash that ignores SIGINT and SIGTERM, writes its pid to
# DIR/leader.pid and, when the pipeline is over, the stages' statuses
# to DIR/status.  Every stage named sc-* gets the signals' default
# disposition back (so a signal that came before its handlers were set
# still ends it, with the same status); `tee` keeps them ignored: the copy.
start_pipeline() {
	local dir=$1 pipeline=$2 stage cmd='' IFS='|'
	for stage in $pipeline; do
		stage=${stage# }
		stage=${stage% }
		case $stage in
		sc-*) stage="(trap - INT TERM; exec $stage)" ;;
		esac
		cmd+="${cmd:+ | }$stage"
	done
	(cd "$dir" && setsid bash -c "trap '' INT TERM; echo \$\$ >leader.pid; $cmd; echo \"\${PIPESTATUS[*]}\" >status" 3>&- &)
}

# wait_for FILE [TENTHS]: until FILE is not empty (at most TENTHS/10 s).
wait_for() {
	local i
	for ((i = 0; i < ${2:-300}; i++)); do
		[[ -s $1 ]] && return 0
		sleep 0.1
	done
	return 1
}

# signal_run DIR SIG PIPELINE [SECOND]: starts PIPELINE in DIR, waits for
# the copy (DIR/copy.jsonl) to have a record, then a random 0-0.7 s, and
# sends SIG to the whole group (and, with SECOND, SIG again 50 ms later).
# Fails unless every stage's status is 128 + SIG ("0" for tee, or 141
# with SECOND).
signal_run() {
	local dir=$1 sig=$2 pipeline=$3 second=${4-} want i st stage statuses stages
	mkdir -p "$dir"
	start_pipeline "$dir" "$pipeline"
	wait_for "$dir/leader.pid" || fail "the pipeline did not start"
	wait_for "$dir/copy.jsonl" ||
		fail "$dir: no record in 30 s; status: $(cat "$dir/status" 2>&1); $(tail -n 3 "$dir"/*.err 2>&1 | cut -c 1-300)"
	sleep "0.$(printf %03d $((RANDOM % 700)))"
	[[ -e $dir/status ]] && fail "the pipeline ended before the signal: make it longer"
	kill "-$sig" -- "-$(cat "$dir/leader.pid")"
	if [[ -n $second ]]; then
		sleep 0.05
		kill "-$sig" -- "-$(cat "$dir/leader.pid")" 2>/dev/null || true
	fi
	wait_for "$dir/status" 600 || fail "the pipeline did not end within 60 s of $sig"
	want=$((128 + $(kill -l "$sig")))
	read -ra statuses <"$dir/status"
	IFS='|' read -ra stages <<<"$pipeline"
	for i in "${!statuses[@]}"; do
		st=${statuses[$i]}
		read -r stage _ <<<"${stages[$i]}"
		if [[ $stage == tee ]]; then
			# A second signal ends the stages after tee at once, without
			# reading the rest of their input: tee, still copying, may then
			# get SIGPIPE (141).  Only then.
			[[ $st == 0 || (-n $second && $st == 141) ]] || fail "$dir: tee exited $st"
		elif [[ $st != "$want" ]]; then
			fail "$dir: $stage exited $st after SIG$sig, not $want (statuses: ${statuses[*]})"
		fi
	done
}

# no_temporaries DIR: nothing in DIR but what the run is meant to leave.
no_temporaries() {
	local left
	left=$(cd "$1" && ls -A | grep -vxE 'leader\.pid|status|copy\.jsonl|fetched\.jsonl|[A-C]\.(jsonl|csv|sqlite)|old|.*\.err' || true)
	[[ -z $left ]] || fail "$1: left behind: $left"
}

@test "SIGINT or SIGTERM at a random moment: every record sc-fetch wrote is in all three sinks, whole" {
	local n sig stopped=0
	for ((n = 1; n <= SC_SIGNAL_RUNS; n++)); do
		sig=$( ((RANDOM % 2)) && echo INT || echo TERM)
		signal_run "run$n" "$sig" \
			"sc-fetch -c 20 --retries 0 <$BATS_FILE_TMPDIR/urls.txt 2>fetch.err | tee copy.jsonl | sc-parse 2>parse.err | $SINKS 2>sink.err"
		run -0 python3 "$BATS_TEST_DIRNAME/lib/outputs.py" whole run$n/copy.jsonl run$n/A.jsonl run$n/B.csv run$n/C.sqlite
		no_temporaries "run$n"
		stopped=$((stopped + $(wc -l <"run$n/copy.jsonl")))
		rm -rf "run$n"
	done
	echo "# $SC_SIGNAL_RUNS runs, $stopped records in all" >&3
}

# The previous version of every sink: three records of an earlier run.
old_outputs() {
	mkdir -p "$1/old"
	for i in 1 2 3; do
		printf '{"url":"http://old.example/%d","ok":true,"status":200,"title":"old"}\n' "$i"
	done | (cd "$1/old" && $SINKS)
	cp "$1"/old/* "$1/"
}

@test "a second signal 50 ms after the first: each sink is its previous version or a whole new one" {
	local n sig runs=$(((SC_SIGNAL_RUNS + 4) / 5))
	for ((n = 1; n <= runs; n++)); do
		sig=$( ((RANDOM % 2)) && echo INT || echo TERM)
		old_outputs "run$n"
		signal_run "run$n" "$sig" \
			"sc-fetch -c 20 --retries 0 <$BATS_FILE_TMPDIR/urls.txt 2>fetch.err | tee copy.jsonl | sc-parse 2>parse.err | $SINKS 2>sink.err" second
		run -0 python3 "$BATS_TEST_DIRNAME/lib/outputs.py" either run$n/copy.jsonl run$n/A.jsonl run$n/B.csv run$n/C.sqlite run$n/old
		no_temporaries "run$n"
		rm -rf "run$n"
	done
}

@test "sc-retry in the middle: every record it wrote is in all three sinks, and every record sc-fetch wrote reached it" {
	local n sig runs=$(((SC_SIGNAL_RUNS + 4) / 5))
	for ((n = 1; n <= runs; n++)); do
		sig=$( ((RANDOM % 2)) && echo INT || echo TERM)
		signal_run "run$n" "$sig" \
			"sc-fetch -c 20 --retries 0 <$BATS_FILE_TMPDIR/retry-urls.txt 2>fetch.err | tee fetched.jsonl | sc-retry -c 20 --retry-base 10 2>retry.err | tee copy.jsonl | sc-parse 2>parse.err | $SINKS 2>sink.err"
		run -0 python3 "$BATS_TEST_DIRNAME/lib/outputs.py" whole run$n/copy.jsonl run$n/A.jsonl run$n/B.csv run$n/C.sqlite
		assert_equal "$(jq -r .url "run$n/copy.jsonl" | sort)" "$(jq -r .url "run$n/fetched.jsonl" | sort)"
		no_temporaries "run$n"
		rm -rf "run$n"
	done
}
