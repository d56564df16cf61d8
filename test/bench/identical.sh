#!/bin/bash
# identical.sh REV: the programs of git revision REV and of this tree's
# bin/ on the suite's corpora, their outputs compared byte for byte once
# what differs from run to run is gone (test/lib/golden.bash): a change
# that should leave the bytes alone (issue 27, "byte-identical") is
# checked with
#     make all testserver && test/bench/identical.sh main
# What is run, on each side, against one fixture server serving the
# golden tests' site (test/golden.bats):
#   fetch      sc-fetch over test/golden/fetch.in: records, request lines
#              (sorted), the summary's counts, the warnings
#   retry      sc-retry over test/golden/retry.in: the same
#   pipeline   sc-fetch | sc-parse | sc-sink over test/golden/pipeline.in:
#              the JSONL, and the CSV of the same records
#   warc       sc-fetch --warc --warc-cdx over pipeline.in: the archive's
#              records (WARC-Date, record ids, digests and lengths of
#              blocks that hold a date, and the server's Date gone), its
#              CDXJ, and sc-warc records read back from it
# REV is built from git archive under $TMPDIR (make all), unless
# SC_IDENTICAL_BIN names a bin/ of it already built.  Prints one line per
# output, "same" or "DIFFERS" with the start of the diff; exits 1 when any
# differs.  It runs one build and seconds of fetching: not part of make test.
set -eu
shopt -s nullglob
export LC_ALL=C

[[ $# == 1 ]] || {
	echo "usage: test/bench/identical.sh REV" >&2
	exit 2
}
rev=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
head_bin=$root/bin
[[ -x $head_bin/sc-fetch && -x $root/build/test/sc-testserver ]] ||
	{
		echo "identical.sh: build this tree first (make all testserver)" >&2
		exit 2
	}
work=$(mktemp -d "${TMPDIR:-/tmp}/sc-identical.XXXXXX")

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	sc_server_stop 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=test/lib/server.bash
source "$root/test/lib/server.bash"
# shellcheck source=test/lib/golden.bash
source "$root/test/lib/golden.bash"

# rev_bin: sets bin to the bin/ of REV, built unless SC_IDENTICAL_BIN
# gives it.
rev_bin() {
	bin=${SC_IDENTICAL_BIN:-}
	[[ -z $bin ]] || return 0
	mkdir "$work/rev"
	git -C "$root" archive "$rev" | tar -x -C "$work/rev"
	make -C "$work/rev" -s -j2 all >/dev/null
	bin=$work/rev/bin
}

# normalize_summary: the summary line's counts (golden.bats').
normalize_summary() {
	jq -c 'del(.ts, .elapsed_s, .rps, .latency_ms, .hosts, .pace)' |
		sed -E "s/127\\.0\\.0\\.1:$SC_PORT/127.0.0.1:PORT/g"
}

# metrics FILE OUT: FILE's request lines (sorted: their order is timing's),
# summary and other lines (the warnings), normalised, as OUT.*.
metrics() {
	{ grep '"event":"request"' "$1" || true; } | sc_golden_normalize | sort >"$2.requests"
	{ grep '"event":"summary"' "$1" || true; } | normalize_summary >"$2.summary"
	{ grep -v '^{' "$1" || true; } | sc_golden_normalize >"$2.warnings"
}

# normalize_warc: an archive's lines without what a run changes.
normalize_warc() {
	sed -E \
		-e "s/127\\.0\\.0\\.1:$SC_PORT/127.0.0.1:PORT/g" -e "s/^1,0,0,127:$SC_PORT\\)/1,0,0,127:PORT)/" \
		-e 's/^(WARC-Date|WARC-Record-ID|WARC-Concurrent-To|WARC-Refers-To|WARC-Block-Digest|Content-Length|Date|software|WARC-Filename|fetchTimeMs): .*/\1: X/' \
		-e 's|^command-line: [^ ]*/sc-fetch |command-line: sc-fetch |' \
		-e 's/^([^ ]+) [0-9]{14} \{/\1 T {/' \
		-e 's/("(timestamp|filename|offset|length|digest)"): ?"?[^",}]*"?/\1:X/g' |
		sc_golden_normalize
}

# run_side BIN DIR: every corpus through BIN's programs, the outputs
# compared in DIR (what they are made from in DIR/raw).
run_side() {
	local bin=$1 o=$2 d=$2/raw in=$work/in
	mkdir -p "$d"
	"$bin/sc-fetch" -c 4 --keep-order --seed 1 -m 1 --retries 2 --retry-base 10 --retry-max 20 \
		--max-redirs 3 <"$in/fetch.in" >"$d/fetch.raw" 2>"$d/fetch.err" || true
	sc_golden_normalize <"$d/fetch.raw" >"$o/fetch.records"
	metrics "$d/fetch.err" "$o/fetch"
	"$bin/sc-retry" -c 4 --keep-order --seed 1 -m 1 --retries 2 --retry-base 10 --retry-max 20 \
		<"$in/retry.in" >"$d/retry.raw" 2>"$d/retry.err" || true
	sc_golden_normalize <"$d/retry.raw" >"$o/retry.records"
	metrics "$d/retry.err" "$o/retry"
	"$bin/sc-fetch" -q -c 4 --keep-order -m 1 --retries 0 <"$in/pipeline.in" 2>/dev/null |
		"$bin/sc-parse" 2>/dev/null | tee "$d/parsed.raw" |
		"$bin/sc-sink" -q --jsonl "$d/sink.raw" >/dev/null 2>&1 || true
	sc_golden_normalize <"$d/sink.raw" >"$o/pipeline.records"
	# The CSV of the records without their times (a column each).
	sc_golden_normalize <"$d/parsed.raw" | "$bin/sc-sink" -q --csv "$o/pipeline.csv" >/dev/null 2>&1 || true
	(cd "$d" && "$bin/sc-fetch" -q -c 4 --keep-order -m 1 --retries 0 --warc x.warc.gz --warc-cdx \
		<"$in/pipeline.in" >x.records 2>/dev/null) || true
	zcat "$d/x.warc.gz" | tr -d '\r' | normalize_warc >"$o/warc.records"
	normalize_warc <"$d/x.cdxj" >"$o/warc.cdxj"
	sc_golden_normalize <"$d/x.records" | normalize_warc >"$o/warc.fetched"
	"$bin/sc-warc" records "$d/x.warc.gz" 2>/dev/null | sc_golden_normalize | normalize_warc >"$o/warc.replay" || true
}

mkdir -p "$work/in" "$work/site"
sc_golden_site "$work/site"
BATS_FILE_TMPDIR=$work sc_server_start --root "$work/site"
for f in fetch.in retry.in pipeline.in; do
	sed "s|@BASE@|$SC_BASE|g" "$root/test/golden/$f" >"$work/in/$f"
done
echo "$SC_BASE/ctl-nonul.txt" >>"$work/in/fetch.in"
rev_bin
sc_server_reset
run_side "$bin" "$work/rev-out"
sc_server_reset
run_side "$head_bin" "$work/head-out"

status=0
for f in "$work/head-out"/*; do
	[[ -f $f ]] || continue
	name=${f##*/}
	if [[ $name == *.records && ! -s $f ]]; then
		echo "$name: EMPTY (the corpus did not run)"
		status=1
	elif cmp -s "$work/rev-out/$name" "$f"; then
		echo "$name: same ($(wc -l <"$f") lines)"
	else
		echo "$name: DIFFERS ($rev <, HEAD >)"
		diff "$work/rev-out/$name" "$f" | head -20 || true
		status=1
	fi
done
exit "$status"
