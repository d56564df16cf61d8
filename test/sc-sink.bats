#!/usr/bin/env bats
# sc-sink: records into JSONL, CSV, TSV and SQLite files that are never
# half-written.  Failure modes first, then formats, then files and signals.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/options'

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return
	printf '%s\n' \
		'{"url":"http://a/1","status":200,"ok":true,"title":"One","body":"<p>1</p>"}' \
		'{"url":"http://a/2","status":404,"ok":false,"title":"Two","error":{"kind":"http","message":"404"}}' \
		'{"url":"http://a/3","status":200,"ok":true,"title":"Three","extra":1}' >three.jsonl
}

# How many temporary files of sink $1 (".$1.XXXXXX") are here.
temps() {
	local f n=0
	for f in ."$1".??????; do
		[ -e "$f" ] && n=$((n + 1))
	done
	echo "$n"
}

# Waits (at most 10 s) until the shell condition $1 holds.
wait_for() {
	for _ in $(seq 1 100); do
		eval "$1" && return 0
		sleep 0.1
	done
	fail "timed out waiting for: $1"
}

# ---- usage errors ----

@test "a CR or LF in any option's value is a usage error; a database name SQLite reads as a URI or memory is refused" {
	# -c, --table, --key, --batch, --batch-ms, --jsonl, --csv, --tsv, --sqlite.
	refuses_line_breaks sc-sink 9 c=columns -- '{"url":"u"}'
	run -2 --separate-stderr sc-sink --sqlite 'file:o.db?mode=memory' <three.jsonl
	assert_equal "${stderr_lines[0]}" "sc-sink: --sqlite: 'file:o.db?mode=memory' is a URI to SQLite, not a file name (write ./file:o.db?mode=memory)"
	run -2 --separate-stderr sc-sink file:o.db <three.jsonl
	assert_equal "${stderr_lines[0]}" "sc-sink: --sqlite: 'file:o.db' is a URI to SQLite, not a file name (write ./file:o.db)"
	run -2 --separate-stderr sc-sink --sqlite :memory: <three.jsonl
	assert_equal "${stderr_lines[0]}" "sc-sink: --sqlite: ':memory:' is a database in memory to SQLite, not a file (write ./:memory:)"
	[ ! -e o.db ] || fail "file:o.db wrote o.db"
	sc-sink -q ./file:o.db <three.jsonl
	assert_equal "$(sqlite3 ./file:o.db 'select count(*) from records')" 3
}

@test "SQLite: a table, key and columns named with quotes, semicolons and line breaks are names, not SQL" {
	local evil='x"); DROP TABLE t; --'
	jq -nc --arg e "$evil" '{url: "u1", ($e): 1, "a\nb": 2, "c'"'"'d": 3, "e]f": 4}' >in
	jq -nc --arg e "$evil" '{url: "u2", ($e): 5, "a\nb": 6, "c'"'"'d": 7, "e]f": 8}' >>in
	run -0 --separate-stderr sc-sink -q --table 't"; DROP TABLE records; --' --key url o.db <in
	run -0 sqlite3 -json o.db 'select name from sqlite_master where type = "table"'
	assert_equal "$(jq -c 'map(.name)' <<<"$output")" '["t\"; DROP TABLE records; --"]'
	run -0 sqlite3 -json o.db 'select * from "t""; DROP TABLE records; --" order by url'
	assert_equal "$(jq -c --arg e "$evil" 'map([.url, .[$e], .["a\nb"], .["c'"'"'d"], .["e]f"]])' <<<"$output")" \
		'[["u1",1,2,3,4],["u2",5,6,7,8]]'
	# The key's unique index is named from them too.
	printf '%s\n' '{"url":"u1","z":9}' | sc-sink -q --table 't"; DROP TABLE records; --' --key url o.db
	assert_equal "$(sqlite3 o.db 'select count(*) || ":" || max(z) from "t""; DROP TABLE records; --"')" 2:9
}

@test "a new file under /dev/shm is a file like any other, written through a temporary and renamed" {
	[[ -d /dev/shm && -w /dev/shm ]] || skip "no writable /dev/shm here"
	local d
	d=$(mktemp -d /dev/shm/sc-sink-test.XXXXXX)
	echo '{"a":1}' | sc-sink --jsonl "$d/new.jsonl" 2>/dev/null
	echo '{"a":2}' | sc-sink --jsonl "$d/new.jsonl" 2>/dev/null
	run cat "$d/new.jsonl"
	assert_output '{"a":2}'
	run ls -A "$d"
	assert_output 'new.jsonl'
	rm -rf "$d"
}

@test "no sink is a usage error" {
	run -2 --separate-stderr sc-sink </dev/null
	assert_equal "$output" ""
	assert_equal "$stderr" "sc-sink: no sink given
Try 'sc-sink --help' for more information."
}

@test "a bare file with an unknown extension is a usage error" {
	run -2 --separate-stderr sc-sink out.txt </dev/null
	assert_equal "$stderr" "sc-sink: out.txt: cannot tell the format from the name; use --jsonl, --csv, --tsv or --sqlite
Try 'sc-sink --help' for more information."
	[ ! -e out.txt ] || fail "out.txt was created"
}

@test "numeric options are bounded and their errors name them" {
	run -2 --separate-stderr sc-sink --sqlite o.db --batch 0 </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-sink: --batch: '0' is out of range (1..1000000)"
	run -2 --separate-stderr sc-sink --sqlite o.db --batch 10x </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-sink: --batch: '10x' is not a whole number"
	run -2 --separate-stderr sc-sink --sqlite o.db --batch-ms 3600001 </dev/null
	assert_equal "${stderr%%$'\n'*}" "sc-sink: --batch-ms: '3600001' is out of range (1..3600000)"
	[ ! -e o.db ] || fail "o.db was created"
}

@test "bad combinations are rejected by name" {
	check() {
		local want=$1
		shift
		run -2 --separate-stderr sc-sink "$@" </dev/null
		assert_equal "$stderr" "sc-sink: $want
Try 'sc-sink --help' for more information."
	}
	check "--table needs a --sqlite sink" --csv o.csv --table t
	check "--key needs a --sqlite sink" --csv o.csv --key url
	check "--batch needs a --sqlite sink" --csv o.csv --batch-ms 5
	check "--no-header needs a --csv or --tsv sink" --jsonl o.jsonl --no-header
	check "--formula-escape needs a --csv or --tsv sink" o.db --formula-escape
	check "--crlf needs a --csv or --tsv sink" o.jsonl --crlf
	check "--columns needs a --csv, --tsv or --sqlite sink" o.jsonl -c url
	check "--append needs a --jsonl, --csv or --tsv sink" o.db --append
	check "--tee: standard output is already a sink ('-')" --tee -
	check "--sqlite: cannot write a database to standard output" --sqlite -
	check "o.csv: given twice" o.csv --csv o.csv
	check "--table: empty name" o.db --table ''
	check "--key: 'record' is the column of whole records" o.db --key Record
	check "--columns: 'a=' is not a column (NAME or NAME=PATH)" o.csv -c a=
	check "--columns: '' is not a column (NAME or NAME=PATH)" o.csv -c 'a,,b'
	check "--columns: 'x=a..b' is not a column (NAME or NAME=PATH)" o.csv -c 'x=a..b'
	check "--columns: column 'a' given twice" o.csv -c 'a,a=b'
	check "--key: 'id' is not one of --columns" o.db -c url --key id
	check "too many sinks (at most 8)" 1.csv 2.csv 3.csv 4.csv 5.csv 6.csv 7.csv 8.csv 9.csv
	for f in o.csv o.db o.jsonl 1.csv; do [ ! -e "$f" ] || fail "$f was created"; done
}

@test "--help prints the SYNOPSIS on stdout" {
	run -0 --separate-stderr sc-sink --help
	assert_line --index 0 "usage: sc-sink [-aq] [--tee] [-c columns] [--no-header] [--formula-escape]"
	assert_equal "$stderr" ""
	run -0 sc-sink -V
	assert_line --index 0 --regexp '^sc-sink [0-9]'
}

# ---- runtime failures ----

@test "an unwritable directory fails before any input is read, naming the file" {
	run -1 --separate-stderr timeout 10 sc-sink --csv nodir/out.csv </dev/zero
	assert_equal "$stderr" "sc-sink: nodir/out.csv: cannot create a temporary file: No such file or directory"
	mkdir ro && chmod 555 ro
	if [ "$(id -u)" -ne 0 ]; then
		run -1 --separate-stderr timeout 10 sc-sink ro/out.jsonl </dev/zero
		assert_equal "$stderr" "sc-sink: ro/out.jsonl: cannot create a temporary file: Permission denied"
	fi
	run -1 --separate-stderr timeout 10 sc-sink --sqlite nodir/out.db </dev/zero
	assert_equal "$stderr" "sc-sink: nodir/out.db: unable to open database file"
}

@test "a file that is not a database is an error before any input is read" {
	echo 'not a database, just long enough to have a header of sorts....................................' >bogus.db
	cp bogus.db before
	run -1 --separate-stderr timeout 10 sc-sink bogus.db </dev/zero
	assert_equal "$stderr" "sc-sink: bogus.db: file is not a database"
	cmp bogus.db before
}

@test "a write error (/dev/full) is exit 1 with a message, for a sink and for --tee" {
	run -1 --separate-stderr sc-sink --csv /dev/full <three.jsonl
	assert_equal "$stderr" "sc-sink: /dev/full: write error: No space left on device"
	run -1 --separate-stderr sh -c 'sc-sink - <three.jsonl >/dev/full'
	assert_equal "$stderr" "sc-sink: -: write error: No space left on device"
	run -1 --separate-stderr sh -c 'sc-sink --tee o.csv <three.jsonl >/dev/full'
	assert_equal "$stderr" "sc-sink: error writing standard output: No space left on device"
	[ ! -e o.csv ] || fail "o.csv was put in place after a failure"
	assert_equal "$(temps o.csv)" 0
}

@test "a failure replaces none of the files: the old ones stay, no temporary is left" {
	echo old >o.jsonl
	run -1 --separate-stderr sc-sink o.jsonl --csv /dev/full <three.jsonl
	assert_equal "$(cat o.jsonl)" old
	assert_equal "$(temps o.jsonl)" 0
}

# ---- CSV ----

@test "CSV quoting: commas, quotes, newlines, CR, unicode, empty strings" {
	printf '%s\n' '{"a":"x,y","b":"say \"hi\"","c":"l1\nl2","d":"héllo ☃ 日本","e":"","f":"cr\rhere"}' |
		sc-sink -q o.csv
	printf 'a,b,c,d,e,f\n"x,y","say ""hi""","l1\nl2",héllo ☃ 日本,,"cr\rhere"\n' >want
	cmp o.csv want
	# Python's csv module reads it back to the same values.
	run -0 python3 -c 'import csv,json; r=list(csv.DictReader(open("o.csv", newline=""))); print(json.dumps(r[0], ensure_ascii=False))'
	assert_output '{"a": "x,y", "b": "say \"hi\"", "c": "l1\nl2", "d": "héllo ☃ 日本", "e": "", "f": "cr\rhere"}'
}

@test "CSV values: numbers, booleans, null, missing, objects and arrays" {
	printf '%s\n' '{"i":-42,"r":0.1,"big":1e300,"t":true,"f":false,"n":null,"o":{"k":"v,w"},"a":[1,"x"]}' \
		'{"i":9007199254740993,"r":285.0,"big":-2.50}' | sc-sink -q o.csv
	printf 'i,r,big,t,f,n,o,a\n-42,0.1,1e+300,true,false,,"{""k"":""v,w""}","[1,""x""]"\n9007199254740993,285.0,-2.5,,,,,\n' >want
	cmp o.csv want
}

@test "a leading = is written as is, and escaped with --formula-escape" {
	printf '%s\n' '{"a":"=1+1","b":"+x","c":"-x","d":"@x","e":"\tx","f":"\rx","g":-3,"h":"a=b"}' >in
	sc-sink -q o.csv <in
	assert_equal "$(sed -n 2p o.csv)" $'=1+1,+x,-x,@x,\tx,"\rx",-3,a=b'
	sc-sink -q --formula-escape o.csv <in
	assert_equal "$(sed -n 2p o.csv)" $'"\'=1+1","\'+x","\'-x","\'@x","\'\tx","\'\rx",-3,a=b'
	sc-sink -q --formula-escape o.tsv <in
	assert_equal "$(sed -n 2p o.tsv)" $'\'=1+1\t\'+x\t\'-x\t\'@x\t\'\\tx\t\'\\rx\t-3\ta=b'
}

@test "the header comes from the first record, without body and body_base64" {
	sc-sink -q o.csv <three.jsonl
	assert_equal "$(head -n 1 o.csv)" "url,status,ok,title"
	# A later member not in the header is not a column; a missing one is empty.
	assert_equal "$(sed -n 3p o.csv)" "http://a/2,404,false,Two"
	assert_equal "$(wc -l <o.csv)" 4
	sc-sink -q --no-header o.csv <three.jsonl
	assert_equal "$(head -n 1 o.csv)" "http://a/1,200,true,One"
	assert_equal "$(wc -l <o.csv)" 3
}

@test "-c: dotted paths, renames, array indexes, missing values" {
	printf '%s\n' '{"url":"u1","meta":{"host":"h1","tags":["x","y"]},"title":"t1"}' \
		'{"url":"u2","meta":"flat"}' '{"url":"u3"}' |
		sc-sink -q -c 'title,host=meta.host,meta.tags.1,url' o.csv
	printf 'title,host,meta.tags.1,url\nt1,h1,y,u1\n,,,u2\n,,,u3\n' >want
	cmp o.csv want
}

@test "--crlf ends rows with CRLF" {
	sc-sink -q --crlf -c url,title o.csv <three.jsonl
	assert_equal "$(head -c 11 o.csv | od -An -c | tr -s ' ')" " u r l , t i t l e \r \n"
}

@test "TSV escapes tab, newline, CR and backslash" {
	printf '%s\n' '{"a":"x\ty","b":"l1\nl2","c":"back\\slash","d":"q\"uote,comma"}' | sc-sink -q o.tsv
	printf 'a\tb\tc\td\nx\\ty\tl1\\nl2\tback\\\\slash\tq"uote,comma\n' >want
	cmp o.tsv want
}

@test "no records: an empty file, or just the header with -c" {
	sc-sink -q o.csv </dev/null
	[ -f o.csv ] && [ ! -s o.csv ] || fail "o.csv is not an empty file"
	sc-sink -q -c url,title o.csv </dev/null
	assert_equal "$(cat o.csv)" "url,title"
}

# ---- bad input and the count contract ----

@test "bad input lines are records too: a row each, a warning each, exit 3" {
	printf '%s\n' '{"url":"u1","n":1}' 'not json' '' '[1]' '{"url":"u4","n":4}' >in
	run -3 --separate-stderr sc-sink o.csv o.jsonl o.db <in
	assert_equal "$stderr" "sc-sink: <stdin>:2: not valid JSON: '[' or '{' expected near 'not'
sc-sink: <stdin>:4: not a JSON object
{\"records\":4,\"bad_input\":2,\"sinks\":[{\"format\":\"csv\",\"file\":\"o.csv\",\"records\":4},{\"format\":\"jsonl\",\"file\":\"o.jsonl\",\"records\":4},{\"format\":\"sqlite\",\"file\":\"o.db\",\"records\":4}]}"
	printf 'url,n\nu1,1\n,\n,\nu4,4\n' >want
	cmp o.csv want
	assert_equal "$(jq -c '[.error.kind, .line, .raw]' o.jsonl | sed -n '2p;3p' | tr '\n' ' ')" '["bad_input",2,"not json"] ["bad_input",4,"[1]"] '
	assert_equal "$(sqlite3 o.db 'select count(*) from records')" 4
}

# The summary's bytes are also what crawl.sh's commit_or_remove reads ({"records":N,).
@test "records that arrive not ok are data: exit 0" {
	run -0 --separate-stderr sc-sink o.jsonl <three.jsonl
	assert_equal "$stderr" '{"records":3,"bad_input":0,"sinks":[{"format":"jsonl","file":"o.jsonl","records":3}]}'
	cmp o.jsonl three.jsonl
}

@test "the count contract: several sinks at once, one row per record in each" {
	python3 -c '
import json
for i in range(5000):
    print(json.dumps({"url": "http://x/%d" % i, "i": i, "t": "a,\"b\"\nc" if i % 7 == 0 else "x"}))
    if i % 1000 == 0:
        print("")          # blank lines are no record
        print("{broken")   # a malformed one is
' >in
	run -3 --separate-stderr sc-sink --tee o.jsonl o.csv o.tsv o.db -c url,i,t <in
	assert_equal "$(echo "$output" | wc -l)" 5005
	assert_equal "$(wc -l <o.jsonl)" 5005
	assert_equal "$(python3 -c 'import csv; print(sum(1 for _ in csv.reader(open("o.csv", newline=""))))')" 5006
	assert_equal "$(wc -l <o.tsv)" 5006
	assert_equal "$(sqlite3 o.db 'select count(*) from records')" 5005
	assert_equal "$(echo "$stderr" | tail -n 1 | jq -c '[.records, .bad_input, [.sinks[].records]]')" '[5005,5,[5005,5005,5005,5005]]'
}

@test "--tee copies every record to stdout, as it came in" {
	run -0 --separate-stderr sc-sink -q --tee o.csv <three.jsonl
	assert_equal "$output" "$(cat three.jsonl)"
	assert_equal "$stderr" ""
	# and sinks chain
	sc-sink -q --tee a.jsonl <three.jsonl | sc-sink -q b.jsonl
	cmp a.jsonl b.jsonl
}

@test "- is JSONL on stdout" {
	run -0 --separate-stderr sc-sink -q - <three.jsonl
	assert_equal "$output" "$(cat three.jsonl)"
}

# ---- SQLite ----

@test "SQLite: columns typed by the first record, the whole record in 'record'" {
	printf '%s\n' '{"url":"u1","status":200,"ok":true,"size":1.5,"meta":{"a":1},"body":"b"}' \
		'{"url":"u2","status":null,"ok":false,"later":"x"}' >in
	sc-sink -q o.db <in
	run -0 sqlite3 o.db "select sql from sqlite_master where name = 'records'"
	assert_output 'CREATE TABLE "records" ("url" TEXT, "status" INTEGER, "ok" INTEGER, "size" REAL, "meta" TEXT, "record" TEXT)'
	run -0 sqlite3 o.db "select url, typeof(status), ok, json_extract(record, '\$.later'), json_extract(meta, '\$.a') from records"
	assert_output "u1|integer|1||1
u2|null|0|x|"
	assert_equal "$(sqlite3 o.db 'pragma journal_mode')" wal
	[ ! -s o.db-wal ] || fail "the WAL was not checkpointed"
}

@test "SQLite contents equal the JSONL contents" {
	printf '%s\n' '{"url":"u1","x":1.25,"s":"é\"q"}' 'bad' '{"url":"u2","x":[1,{"y":null}]}' >in
	run -3 sc-sink -q o.jsonl o.db <in
	sqlite3 o.db 'select record from records order by rowid' >from-db
	cmp o.jsonl from-db
}

@test "SQLite: --key upserts, --table names the table, a second run adds columns" {
	printf '%s\n' '{"url":"u1","v":1}' '{"url":"u2","v":2}' '{"url":"u1","v":3}' | sc-sink -q --key url --table pages o.db
	assert_equal "$(sqlite3 o.db 'select url, v from pages order by url')" "u1|3
u2|2"
	printf '%s\n' '{"url":"u2","w":"new"}' | sc-sink -q --key url --table pages o.db
	assert_equal "$(sqlite3 o.db 'select url, v, w from pages order by url')" "u1|3|
u2||new"
	# without --key, rows are added (the unique index stays)
	printf '%s\n' '{"url":"u3"}' | sc-sink -q --table pages o.db
	assert_equal "$(sqlite3 o.db 'select count(*) from pages')" 3
	run -1 --separate-stderr sc-sink -q --table pages o.db <<<'{"url":"u3"}'
	assert_equal "$stderr" "sc-sink: o.db: insert: UNIQUE constraint failed: pages.url"
}

@test "SQLite: --key on a column that already holds duplicates is an error" {
	printf '%s\n' '{"url":"u1"}' '{"url":"u1"}' | sc-sink -q o.db
	run -1 --separate-stderr sc-sink --key url o.db <three.jsonl
	assert_equal "$stderr" "sc-sink: o.db: --key: cannot make the column unique: UNIQUE constraint failed: records.url"
}

@test "SQLite: a batch is committed after --batch-ms while the input is still open" {
	mkfifo in
	sc-sink -q --batch-ms 200 o.db <in &
	pid=$!
	exec 7>in
	printf '%s\n' '{"url":"u1"}' '{"url":"u2"}' >&7
	wait_for '[ "$(sqlite3 o.db "select count(*) from records" 2>/dev/null)" = 2 ]'
	kill -9 "$pid"
	exec 7>&-
	wait "$pid" || true
	assert_equal "$(sqlite3 o.db 'select count(*) from records')" 2
}

# ---- files ----

@test "kill -9 mid-run leaves the old file byte for byte; the temporary stays behind" {
	printf 'old,file\n1,2\n' >o.csv
	cp o.csv before
	mkfifo in
	sc-sink -q o.csv <in &
	pid=$!
	exec 7>in
	for i in $(seq 1 2000); do echo "{\"url\":\"u$i\"}"; done >&7
	wait_for '[ "$(temps o.csv)" = 1 ]'
	kill -9 "$pid"
	exec 7>&-
	wait "$pid" || true
	cmp o.csv before
	assert_equal "$(temps o.csv)" 1
}

@test "SIGINT while the input is open: keeps reading to the end, finishes, exits 130" {
	echo old >o.jsonl
	mkfifo in
	sc-sink o.jsonl o.csv <in 2>err &
	pid=$!
	exec 7>in
	echo '{"url":"u1"}' >&7
	# the handlers are in place once the temporary files exist
	wait_for '[ "$(temps o.jsonl)$(temps o.csv)" = 11 ]'
	kill -INT "$pid"
	sleep 0.2
	kill -0 "$pid" || fail "sc-sink did not wait for the end of its input"
	echo '{"url":"u2"}' >&7
	exec 7>&-
	status=0
	wait "$pid" || status=$?
	assert_equal "$status" 130
	assert_equal "$(cat o.jsonl)" '{"url":"u1"}
{"url":"u2"}'
	assert_equal "$(cat o.csv)" 'url
u1
u2'
	assert_equal "$(tail -n 1 err)" '{"records":2,"bad_input":0,"sinks":[{"format":"jsonl","file":"o.jsonl","records":2},{"format":"csv","file":"o.csv","records":2}]}'
}

@test "SIGTERM drains the same way and exits 143; a second signal removes the temporary" {
	mkfifo in
	sc-sink o.jsonl <in 2>err &
	pid=$!
	exec 7>in
	echo '{"url":"u1"}' >&7
	wait_for '[ "$(temps o.jsonl)" = 1 ]'
	kill -TERM "$pid"
	exec 7>&-
	status=0
	wait "$pid" || status=$?
	assert_equal "$status" 143
	assert_equal "$(cat o.jsonl)" '{"url":"u1"}'

	echo old >p.jsonl
	sc-sink p.jsonl <in &
	pid=$!
	exec 7>in
	echo '{"url":"u1"}' >&7
	wait_for '[ "$(temps p.jsonl)" = 1 ]'
	kill -INT "$pid"
	sleep 0.2
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
	exec 7>&-
	assert_equal "$status" 130
	assert_equal "$(cat p.jsonl)" old
	assert_equal "$(temps p.jsonl)" 0
}

@test "--append adds whole records; CSV gets no second header and keeps the file's columns" {
	sc-sink -q o.jsonl o.csv <three.jsonl
	printf '%s\n' '{"title":"Four","url":"http://a/4","new":1}' | sc-sink -q --append o.jsonl o.csv
	assert_equal "$(wc -l <o.jsonl)" 4
	assert_equal "$(tail -n 1 o.jsonl)" '{"title":"Four","url":"http://a/4","new":1}'
	assert_equal "$(grep -c '^url,' o.csv)" 1
	assert_equal "$(tail -n 1 o.csv)" "http://a/4,,,Four"
	# -c must agree with the header already there
	run -1 --separate-stderr sc-sink --append -c title o.csv </dev/null
	assert_equal "$stderr" "sc-sink: o.csv: its header does not match --columns"
	# a new file gets its header
	sc-sink -q --append n.csv <three.jsonl
	assert_equal "$(head -n 1 n.csv)" "url,status,ok,title"
}

@test "--append refuses a file whose last line is cut short" {
	printf '{"url":"u1"}\n{"url":"u' >o.jsonl
	cp o.jsonl before
	run -1 --separate-stderr sc-sink --append o.jsonl <three.jsonl
	assert_equal "$stderr" "sc-sink: o.jsonl: does not end with a newline; not appending to a partial line"
	cmp o.jsonl before
}

@test "--append to the file being read is refused, as cat(1) does" {
	cp three.jsonl o.jsonl
	# shellcheck disable=SC2094 # reading the output file is the point
	run -1 --separate-stderr timeout 10 sc-sink --append o.jsonl <o.jsonl
	assert_equal "$stderr" "sc-sink: o.jsonl: is also the input; not appending to it"
	cmp o.jsonl three.jsonl
	# replacing it is fine: the old file is read to the end first
	# shellcheck disable=SC2094 # reading the output file is the point
	sc-sink -q o.jsonl <o.jsonl
	cmp o.jsonl three.jsonl
}

@test "--append to a full device leaves no partial record" {
	run -1 --separate-stderr sc-sink --append --jsonl /dev/full <three.jsonl
	assert_equal "$stderr" "sc-sink: /dev/full: write error: No space left on device"
}

@test "a replaced file keeps its permissions; a new one follows the umask" {
	echo old >o.csv
	chmod 640 o.csv
	sc-sink -q o.csv <three.jsonl
	assert_equal "$(stat -c %a o.csv)" 640
	(umask 027 && sc-sink -q n.csv <three.jsonl)
	assert_equal "$(stat -c %a n.csv)" 640
	(umask 022 && sc-sink -q m.csv <three.jsonl)
	assert_equal "$(stat -c %a m.csv)" 644
}

@test "a symlink stays a symlink: the file it points to is replaced" {
	mkdir real
	echo old >real/o.jsonl
	ln -s real/o.jsonl link.jsonl
	sc-sink -q link.jsonl <three.jsonl
	[ -L link.jsonl ] || fail "the link was replaced"
	cmp real/o.jsonl three.jsonl
}

@test "a FIFO and /dev/stdout are written directly" {
	mkfifo f.csv
	cat f.csv >got &
	sc-sink -q f.csv <three.jsonl
	wait
	assert_equal "$(wc -l <got)" 4
	[ -p f.csv ] || fail "the FIFO was replaced"
	echo keep >log.jsonl
	sc-sink -q --jsonl /dev/stdout <three.jsonl >>log.jsonl
	assert_equal "$(head -n 1 log.jsonl)" keep
	assert_equal "$(wc -l <log.jsonl)" 4
}

@test "constant memory: a long stream does not grow the process" {
	# ASan's quarantine keeps freed memory on purpose
	[ "${SANITIZE:-}" != 1 ] || skip "not meaningful under ASan"
	python3 -c '
import json, sys
r = json.dumps({"url": "http://x/", "t": "y" * 200, "n": 1})
sys.stdout.write((r + "\n") * 200000)
' >big
	/usr/bin/time -f %M -o rss1 sc-sink -q o.csv o.db <<<"$(head -n 2000 big)"
	/usr/bin/time -f %M -o rss2 sc-sink -q o.csv o.db <big
	# the same ballpark for 100 times the input (generous: 3x + 8 MB)
	[ "$(cat rss2)" -lt $(($(cat rss1) * 3 + 8192)) ] || fail "RSS $(cat rss1) KB -> $(cat rss2) KB"
}
