#!/usr/bin/env bats
# sc-frontier: canonical URLs end to end, depth and seed carried over, each
# scope (the PSL's co.uk and github.io), --allow/--deny, --max-depth,
# --max-per-host, dedupe within a run and across runs (--seen, --no-commit,
# --commit), --seeds, malformed input, the summary, write failures, signals,
# and memory that stays flat with a large seen set.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/options'

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

wait_for() {
	for _ in $(seq 1 100); do
		eval "$1" && return 0
		sleep 0.1
	done
	fail "timed out waiting for: $1"
}

# The URLs sc-frontier emits for these links of one page (a seed page).
links_of() {
	local page=$1
	shift
	jq -cn --arg u "$page" '{url: $u, links: $ARGS.positional}' --args "$@" |
		sc-frontier -q --scope any | jq -r .url
}

# The canonical form of one URL, through --seeds.
canonical() {
	printf '%s\n' "$1" | sc-frontier -q --seeds | jq -r .url
}

# ---- usage errors ----

@test "usage errors name the option, exit 2, write nothing" {
	run -2 --separate-stderr sc-frontier --scope world </dev/null
	assert_equal "$stderr" "sc-frontier: --scope: 'world' is not host, domain, prefix or any
Try 'sc-frontier --help' for more information."
	[ -z "$output" ]
	run -2 --separate-stderr sc-frontier --commit </dev/null
	[[ $stderr == "sc-frontier: --commit needs --seen"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-frontier --no-commit </dev/null
	[[ $stderr == "sc-frontier: --no-commit needs --seen"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-frontier --commit --seen s.db --max-depth 2 </dev/null
	[[ $stderr == *"--commit adds every URL it reads"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-frontier --seeds --commit --seen s.db </dev/null
	[[ $stderr == *"one or the other"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-frontier --deny '(' </dev/null
	[[ $stderr == "sc-frontier: --deny: '(': "* ]] || fail "$stderr"
	run -2 --separate-stderr sc-frontier --max-depth -1 </dev/null
	[[ $stderr == *"--max-depth"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-frontier --max-per-host x </dev/null
	[[ $stderr == *"--max-per-host: 'x' is not a whole number"* ]] || fail "$stderr"
	run -2 --separate-stderr sc-frontier pages.jsonl </dev/null
	[[ $stderr == *"'pages.jsonl': records are read from standard input"* ]] || fail "$stderr"
	[ ! -e s.db ] || fail "a usage error created the seen set"
}

# ---- canonical URLs ----

@test "a CR or LF in any option's value is a usage error; a --seen name SQLite reads as a URI or memory is refused" {
	# -d, -s, --allow, --deny, --links, --max-per-host, --strip-query, --seen, --add.
	refuses_line_breaks sc-frontier 9 d=max-depth s=scope
	run -2 --separate-stderr sc-frontier --seen 'file:seen.db?mode=memory' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-frontier: --seen: 'file:seen.db?mode=memory' is a URI to SQLite, not a file name (write ./file:seen.db?mode=memory)"
	run -2 --separate-stderr sc-frontier --seen 'file:seen.db' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-frontier: --seen: 'file:seen.db' is a URI to SQLite, not a file name (write ./file:seen.db)"
	run -2 --separate-stderr sc-frontier --seen ':memory:' </dev/null
	assert_equal "${stderr_lines[0]}" "sc-frontier: --seen: ':memory:' is a database in memory to SQLite, not a file (write ./:memory:)"
	[ ! -e seen.db ] && [ ! -e 'file:seen.db' ] || fail "a file was made"
	# ./file:seen.db is that file.
	echo '{"url":"http://a.example/","links":["/b"]}' | sc-frontier -q --seen ./file:seen.db >/dev/null
	[ -s 'file:seen.db' ] && [ ! -e seen.db ] || fail "./file:seen.db was not the file named"
}

@test "canonical form: every RFC 3986 section 6.2.2 rule, end to end" {
	assert_equal "$(canonical 'HTTP://Example.COM/A')" "http://example.com/A"
	assert_equal "$(canonical 'http://example.com:80/')" "http://example.com/"
	assert_equal "$(canonical 'https://example.com:443/x')" "https://example.com/x"
	assert_equal "$(canonical 'http://example.com:8080/x')" "http://example.com:8080/x"
	assert_equal "$(canonical 'http://example.com/a/./b/../c')" "http://example.com/a/c"
	assert_equal "$(canonical 'http://example.com/a/%2e%2E/c')" "http://example.com/c"
	assert_equal "$(canonical 'http://example.com/%7Euser/%41')" "http://example.com/~user/A"
	assert_equal "$(canonical 'http://example.com/a%2fb?x=%c3%a9')" "http://example.com/a%2Fb?x=%C3%A9"
	assert_equal "$(canonical 'http://example.com')" "http://example.com/"
	assert_equal "$(canonical 'http://example.com/p?#frag')" "http://example.com/p"
	assert_equal "$(canonical 'http://example.com/p?b=2&a=1#x')" "http://example.com/p?b=2&a=1"
	assert_equal "$(canonical 'http://bücher.example/')" "http://xn--bcher-kva.example/"
	assert_equal "$(canonical 'http://h/ok?q=ツ&x=a b')" "http://h/ok?q=%E3%83%84&x=a%20b"
}

@test "only http and https; what is no URL is counted, not emitted" {
	run -0 --separate-stderr bash -c "printf '%s\n' ftp://h/ 'mailto:a@b' 'no url' http://h/ | sc-frontier --seeds"
	assert_equal "$output" '{"url":"http://h/","depth":0,"seed":"http://h/","from":null,"host":"h"}'
	assert_equal "$(jq -c .reasons.not_http,.reasons.not_url,.invalid <<<"$stderr" | tr '\n' ' ')" "1 2 3 "
}

@test "relative links are resolved against final_url, else url" {
	run -0 bash -c "echo '{\"url\":\"http://h/a/page\",\"final_url\":\"http://h/b/moved\",\"links\":[\"x\",\"../y\",\"/z\"]}' | sc-frontier -q | jq -r .url"
	assert_output "http://h/b/x
http://h/y
http://h/z"
	run -0 bash -c "echo '{\"url\":\"http://h/a/page\",\"links\":[\"x\"]}' | sc-frontier -q | jq -r .url"
	assert_output "http://h/a/x"
}

@test "--strip-query removes matching parameters and a query left empty" {
	jq -cn '{url: "http://h/", links: ["http://h/p?utm_source=a&id=3&utm_medium=b", "http://h/q?utm_x=1", "http://h/r?id=1"]}' >p.jsonl
	run -0 bash -c "sc-frontier -q --strip-query '^utm_' <p.jsonl | jq -r .url"
	assert_output "http://h/p?id=3
http://h/q
http://h/r?id=1"
	# after stripping, two links are one URL
	jq -cn '{url: "http://h/", links: ["http://h/p?utm_source=a", "http://h/p?utm_source=b", "http://h/p"]}' >p.jsonl
	run -0 --separate-stderr sc-frontier --strip-query '^utm_' <p.jsonl
	assert_equal "${#lines[@]}" 1
	assert_equal "$(jq .reasons.repeated <<<"$stderr")" 2
}

@test "the host key: the same host whatever case, port or IDN form" {
	printf '%s\n' 'http://BÜCHER.example:80/a' 'http://xn--bcher-kva.example/b' 'https://Bücher.Example:8443/c' \
		'http://[::1]:8080/' 'http://u:p@Example.com:81/' >urls
	run -0 bash -c "sc-frontier -q --seeds <urls | jq -r .host"
	assert_output "xn--bcher-kva.example
xn--bcher-kva.example
xn--bcher-kva.example
[::1]
example.com"
}

# ---- depth and seed ----

@test "depth and seed travel: a link is its page's depth + 1 and keeps its seed" {
	cat >pages.jsonl <<-'EOF'
		{"url":"http://h/","links":["http://h/a"]}
		{"url":"http://h/a","depth":1,"seed":"http://h/","links":["http://h/b"]}
		{"url":"http://h/b","depth":2,"seed":"http://H:80/","ok":true,"links":["http://h/c"]}
	EOF
	run -0 sc-frontier -q <pages.jsonl
	assert_output '{"url":"http://h/a","depth":1,"seed":"http://h/","from":"http://h/","host":"h"}
{"url":"http://h/b","depth":2,"seed":"http://h/","from":"http://h/a","host":"h"}
{"url":"http://h/c","depth":3,"seed":"http://h/","from":"http://h/b","host":"h"}'
}

@test "strings are written as every program writes them (sc-record(5)): \\n, not \\u000a" {
	# a page URL with every control, quotes, a backslash, DEL and UTF-8,
	# through sc-parse (lib/record/jsonstr) and on to sc-frontier's "from"
	jq -nc '{url: ("http://h/" + ([range(1;32)] | implode) + "\"\\/\u007f\u00e9\u20ac\ud83d\ude00"),
		final_url: "http://h/", ok: true, status: 200, content_type: "text/html",
		body: "<a href=\"/p\">p</a>"}' >in.jsonl
	sc-parse <in.jsonl >parsed.jsonl
	run -0 --separate-stderr sc-frontier -q --scope any <parsed.jsonl
	local string='"([^"\\]|\\.)*"'
	parsed=$(grep -oE "^[{]\"url\":$string" parsed.jsonl)
	from=$(grep -oE "\"from\":$string" <<<"$output")
	assert_equal "${from#\"from\":}" "${parsed#\{\"url\":}"
	[[ $from == *'\u0007\b\t\n\u000B\f\r\u000E'*'\u001F\"\\/'* ]] || fail "$from"
	# the same string that came in
	assert_equal "$(jq -c .from <<<"$output")" "$(jq -c .url in.jsonl)"
}

@test "--max-depth drops links beyond it, counted as depth" {
	cat >pages.jsonl <<-'EOF'
		{"url":"http://h/","links":["http://h/a","http://h/a2"]}
		{"url":"http://h/a","depth":1,"seed":"http://h/","links":["http://h/b"]}
		{"url":"http://h/b","depth":2,"seed":"http://h/","links":["http://h/c","http://h/d"]}
	EOF
	run -0 --separate-stderr sc-frontier -d 2 <pages.jsonl
	assert_equal "$(jq -r .url <<<"$output" | tr '\n' ' ')" "http://h/a http://h/a2 http://h/b "
	assert_equal "$(jq -c '[.reasons.depth, .out_of_scope]' <<<"$stderr")" "[2,2]"
	run -0 --separate-stderr sc-frontier --max-depth 0 <pages.jsonl
	[ -z "$output" ] || fail "$output"
}

# ---- scopes ----

@test "--scope host (the default) keeps the seed's host exactly" {
	run -0 bash -c "jq -cn '{url: \"http://www.example.com/\", links: [\"http://www.example.com/a\", \"http://WWW.EXAMPLE.COM:80/b\", \"http://example.com/c\", \"http://shop.example.com/d\", \"https://www.example.com/e\"]}' | sc-frontier -q | jq -r .url"
	assert_output "http://www.example.com/a
http://www.example.com/b
https://www.example.com/e"
}

@test "--scope domain: the registrable domain by the PSL (co.uk, github.io, .com, IPs)" {
	jq -cn '{url: "http://www.example.co.uk/", links: ["http://shop.example.co.uk/", "http://example.co.uk/", "http://other.co.uk/", "http://co.uk/"]}' >uk.jsonl
	run -0 bash -c "sc-frontier -q --scope domain <uk.jsonl | jq -r .url"
	assert_output "http://shop.example.co.uk/
http://example.co.uk/"
	jq -cn '{url: "https://alice.github.io/", links: ["https://alice.github.io/x", "https://www.alice.github.io/", "https://bob.github.io/", "https://github.io/"]}' >gh.jsonl
	run -0 bash -c "sc-frontier -q --scope domain <gh.jsonl | jq -r .url"
	assert_output "https://alice.github.io/x
https://www.alice.github.io/"
	jq -cn '{url: "http://a.b.example.com/", links: ["http://example.com/", "http://z.example.com/", "http://example.org/"]}' >com.jsonl
	run -0 bash -c "sc-frontier -q --scope domain <com.jsonl | jq -r .url"
	assert_output "http://example.com/
http://z.example.com/"
	jq -cn '{url: "http://127.0.0.1:8080/", links: ["http://127.0.0.1/", "http://127.0.0.2/", "http://localhost/"]}' >ip.jsonl
	run -0 bash -c "sc-frontier -q --scope domain <ip.jsonl | jq -r .url"
	assert_output "http://127.0.0.1/"
}

@test "--scope prefix keeps the seed's directory and below" {
	jq -cn '{url: "http://h/docs/3/index.html", links: ["http://h/docs/3/lib/x.html", "http://h/docs/3/", "http://h/docs/2/", "http://h/docs/3", "http://h/docs/3x/"]}' >p.jsonl
	run -0 bash -c "sc-frontier -q --scope prefix <p.jsonl | jq -r .url"
	assert_output "http://h/docs/3/lib/x.html
http://h/docs/3/"
	# the seed that travels is the reference, not the page
	echo '{"url":"http://h/docs/3/lib/x.html","depth":1,"seed":"http://h/docs/3/index.html","links":["http://h/docs/3/a","http://h/docs/3/lib/b","http://h/other"]}' >p2.jsonl
	run -0 bash -c "sc-frontier -q --scope prefix <p2.jsonl | jq -r .url"
	assert_output "http://h/docs/3/a
http://h/docs/3/lib/b"
}

@test "--scope any keeps every host; counted scope drops say why" {
	jq -cn '{url: "http://a/", links: ["http://a/1", "http://b/2", "https://c/3"]}' >p.jsonl
	run -0 bash -c "sc-frontier -q --scope any <p.jsonl | jq -r .url"
	assert_output "http://a/1
http://b/2
https://c/3"
	run -0 --separate-stderr sc-frontier <p.jsonl
	assert_equal "$(jq -c '[.reasons.scope, .out_of_scope, .emitted]' <<<"$stderr")" "[2,2,1]"
}

@test "--allow and --deny: POSIX EREs on the canonical URL, repeatable, deny wins" {
	jq -cn '{url: "http://h/", links: ["http://h/a.html", "http://h/b.pdf", "http://h/C.HTML", "http://h/img/c.html", "http://h/d.txt"]}' >p.jsonl
	run -0 --separate-stderr sc-frontier --allow '\.html$' --allow '\.HTML$' --allow '\.pdf$' --deny '\.pdf$' --deny '^http://h/img/' <p.jsonl
	assert_equal "$(jq -r .url <<<"$output" | tr '\n' ' ')" "http://h/a.html http://h/C.HTML "
	assert_equal "$(jq -c '[.reasons.denied, .reasons.not_allowed]' <<<"$stderr")" "[2,1]"
}

# ---- dedupe ----

@test "within a run each URL is emitted once, first occurrence, input order kept" {
	cat >pages.jsonl <<-'EOF'
		{"url":"http://h/1","links":["http://h/z","http://h/a","http://h/z#x"]}
		{"url":"http://h/2","links":["http://h/a","http://h/m","HTTP://h/z"]}
	EOF
	run -0 --separate-stderr sc-frontier <pages.jsonl
	assert_equal "$(jq -r '.url + " " + .from' <<<"$output")" "http://h/z http://h/1
http://h/a http://h/1
http://h/m http://h/2"
	assert_equal "$(jq -c '[.links, .emitted, .duplicates, .reasons.repeated, .committed]' <<<"$stderr")" "[6,3,3,3,null]"
}

@test "a large batch (sorted by key buckets) keeps the first occurrence of each URL, in input order" {
	# 24,000 links in one batch, each URL on several pages: the first page
	# that links it is the one emitted, and the output is in input order.
	awk 'BEGIN { for (p = 0; p < 24; p++) { printf "{\"url\":\"http://h/page%d\",\"links\":[", p
		for (j = 0; j < 1000; j++) printf "%s\"http://h/u%d\"", (j ? "," : ""), (p * 389 + j * 7) % 9001
		print "]}" } }' >pages.jsonl
	jq -r '.url as $f | .links[] | $f + " " + .' pages.jsonl | awk '!seen[$2]++ { print $2 " " $1 }' >want
	run -0 --separate-stderr sc-frontier <pages.jsonl
	jq -r '.url + " " + .from' <<<"$output" >got
	assert_equal "$(wc -l <want)" "$(wc -l <got)"
	run cmp want got
	assert_success
	assert_equal "$(jq -c '[.links, .emitted + .reasons.repeated]' <<<"$stderr")" "[24000,24000]"
}

@test "a URL repeated batches apart is emitted once and counted as repeated, not seen" {
	seq 1 40000 | awk '{print "http://h/p" $1}' >urls
	printf '%s\n' http://h/p1 http://h/p39999 >>urls
	printf 'http://h/old\n' | sc-frontier -q --seeds --seen s.db >/dev/null
	echo http://h/old >>urls
	run -0 --separate-stderr bash -c "sc-frontier --seeds --seen s.db <urls | wc -l"
	assert_output 40000
	assert_equal "$(jq -c '[.reasons.repeated, .reasons.seen, .committed]' <<<"$stderr")" "[2,1,40000]"
}

@test "--seen: a later run emits only what no earlier run emitted" {
	jq -cn '{url: "http://h/", links: ["http://h/a", "http://h/b"]}' >r1.jsonl
	jq -cn '{url: "http://h/a", links: ["http://h/b", "http://h/c", "http://H:80/a"]}' >r2.jsonl
	run -0 --separate-stderr sc-frontier --seen s.db <r1.jsonl
	assert_equal "${#lines[@]}" 2
	assert_equal "$(jq .committed <<<"$stderr")" 2
	run -0 --separate-stderr sc-frontier --seen s.db <r2.jsonl
	assert_equal "$(jq -r .url <<<"$output")" "http://h/c"
	assert_equal "$(jq -c '[.reasons.seen, .committed]' <<<"$stderr")" "[2,1]"
	# the same input again: nothing new
	run -0 --separate-stderr sc-frontier --seen s.db <r2.jsonl
	[ -z "$output" ] || fail "$output"
	assert_equal "$(sqlite3 s.db 'select count(*) from seen; select length(k) from seen limit 1')" "3
16"
}

@test "--add commits a round file first, then computes the next round against the set that holds it" {
	printf 'http://h/\nhttp://h/a\n' | sc-frontier -q --seeds --seen s.db --no-commit >round-0.jsonl
	assert_equal "$(sqlite3 s.db 'select count(*) from seen')" 0
	jq -cn '{url: "http://h/", links: ["http://h/a", "http://h/b", "http://h/b"]}' >pages-0.jsonl
	run -0 --separate-stderr sc-frontier --seen s.db --no-commit --add round-0.jsonl <pages-0.jsonl
	assert_equal "$(jq -r .url <<<"$output")" "http://h/b"
	assert_equal "$(jq -c '[.added, .committed, .reasons.seen, .reasons.repeated]' <<<"$stderr")" "[2,null,1,1]"
	# round 0 is in the set, with its host count; round 1 is not
	assert_equal "$(sqlite3 s.db 'select count(*) from seen; select n from hosts')" "2
2"
	# again, as after a kill before the rename: the same round, nothing added twice
	run -0 --separate-stderr sc-frontier --seen s.db --no-commit --add round-0.jsonl <pages-0.jsonl
	assert_equal "$(jq -r .url <<<"$output")" "http://h/b"
	assert_equal "$(jq -c '[.added]' <<<"$stderr")" "[0]"
	assert_equal "$(sqlite3 s.db 'select count(*) from seen; select n from hosts')" "2
2"
	# --max-per-host counts what --add committed
	run -0 sc-frontier -q --seen s.db --no-commit --max-per-host 2 <pages-0.jsonl
	[ -z "$output" ] || fail "$output"
}

@test "--add: a file that cannot be read fails before any input; a bad line is status 3; usage errors" {
	run -1 --separate-stderr sc-frontier --seen s.db --add missing.jsonl </dev/null
	assert_equal "$stderr" "sc-frontier: missing.jsonl: No such file or directory"
	printf '{"url":"http://h/x"}\n{"url":\n' >bad.jsonl
	run -3 --separate-stderr sc-frontier -q --seen s.db --no-commit --add bad.jsonl </dev/null
	[[ $stderr == "sc-frontier: bad.jsonl:2: "* ]] || fail "$stderr"
	assert_equal "$(sqlite3 s.db 'select count(*) from seen')" 1
	run -2 sc-frontier --add bad.jsonl </dev/null
	run -2 sc-frontier --seen s.db --commit --add bad.jsonl </dev/null
	run -2 sc-frontier --seen s.db --add '' </dev/null
}

@test "--no-commit reads the set but leaves it as it was; --commit adds a round file, idempotently" {
	jq -cn '{url: "http://h/", links: ["http://h/a"]}' | sc-frontier -q --seen s.db >/dev/null
	jq -cn '{url: "http://h/", links: ["http://h/a", "http://h/b", "http://h/c"]}' >p.jsonl
	run -0 --separate-stderr sc-frontier --seen s.db --no-commit <p.jsonl
	echo "$output" >round.jsonl
	assert_equal "$(jq -r .url round.jsonl | tr '\n' ' ')" "http://h/b http://h/c "
	assert_equal "$(jq .committed <<<"$stderr")" null
	assert_equal "$(sqlite3 s.db 'select count(*) from seen')" 1
	# the same again gives the same round: nothing was marked seen
	run -0 sc-frontier -q --seen s.db --no-commit <p.jsonl
	assert_equal "$output" "$(cat round.jsonl)"
	run -0 --separate-stderr sc-frontier --commit --seen s.db <round.jsonl
	[ -z "$output" ] || fail "--commit wrote to stdout: $output"
	assert_equal "$(jq -c '[.committed, .links]' <<<"$stderr")" "[2,2]"
	run -0 --separate-stderr sc-frontier --commit --seen s.db <round.jsonl
	assert_equal "$(jq .committed <<<"$stderr")" 0
	assert_equal "$(sqlite3 s.db 'select count(*) from seen; select n from hosts')" "3
3"
	run -0 sc-frontier -q --seen s.db <p.jsonl
	[ -z "$output" ] || fail "$output"
}

@test "a file that is not a seen set is refused, exit 1, and not changed" {
	sqlite3 other.db 'create table t(x); insert into t values (1)'
	cp other.db before.db
	run -1 --separate-stderr sc-frontier --seen other.db </dev/null
	assert_equal "$stderr" "sc-frontier: other.db: not a seen set of sc-frontier"
	cmp other.db before.db
	echo 'not a database at all, just text that is long enough to be read as a header' >text.db
	run -1 --separate-stderr sc-frontier --seen text.db </dev/null
	[[ $stderr == "sc-frontier: text.db: "* ]] || fail "$stderr"
}

@test "a seen set whose tables a kill left half made is completed, not refused" {
	# What a kill between the tables left, when they were made one by one
	# (the crawl's kill test found it): the application id, one table.
	sqlite3 half.db 'PRAGMA page_size = 65536; PRAGMA application_id = 1935885906;
		CREATE TABLE seen(k BLOB PRIMARY KEY) WITHOUT ROWID;'
	echo https://a.example/x >seeds
	run -0 --separate-stderr sc-frontier --seen half.db --seeds <seeds
	assert_output '{"url":"https://a.example/x","depth":0,"seed":"https://a.example/x","from":null,"host":"a.example"}'
	run -0 --separate-stderr sc-frontier --seen half.db --seeds <seeds
	assert_output ''
	[ "$(sqlite3 half.db "SELECT count(*) FROM sqlite_schema WHERE name IN ('seen', 'hosts')")" = 2 ]
}

@test "processes making the same new seen set at once all succeed" {
	local i pids=()
	for i in 1 2 3 4 5 6; do
		echo "https://a.example/$i" | sc-frontier -q --seen new.db --seeds >"out.$i" 2>"err.$i" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || fail "run $((i + 1)): $(cat "err.$((i + 1))")"
	done
	[ "$(cat out.* | wc -l)" = 6 ]
}

@test "--max-per-host counts URLs ever emitted per host, across runs of one seen set" {
	jq -cn '{url: "http://a/", links: ["http://a/1", "http://a/2", "http://a/3", "http://b/1"]}' >p1.jsonl
	run -0 --separate-stderr sc-frontier --scope any --max-per-host 2 --seen s.db <p1.jsonl
	assert_equal "$(jq -r .url <<<"$output" | tr '\n' ' ')" "http://a/1 http://a/2 http://b/1 "
	assert_equal "$(jq .reasons.per_host <<<"$stderr")" 1
	jq -cn '{url: "http://a/", links: ["http://a/4", "http://b/2", "http://b/3"]}' >p2.jsonl
	run -0 --separate-stderr sc-frontier --scope any --max-per-host 2 --seen s.db <p2.jsonl
	assert_equal "$(jq -r .url <<<"$output")" "http://b/2"
	# without the set each run counts from zero
	run -0 bash -c "sc-frontier -q --scope any --max-per-host 2 <p2.jsonl | jq -r .url | tr '\n' ' '"
	assert_output "http://a/4 http://b/2 http://b/3 "
}

# ---- seeds ----

@test "--seeds: plain URLs and records become depth-0 seeds, through dedupe and filters" {
	printf '%s\n' '# the shop' 'http://Example.com/a#top' '{"url":"http://example.com/a","depth":5}' '  https://b.example/  ' '' \
		'  # https://c.example/ (off for now)' '{"url":"http://example.com/x.pdf"}' >seeds.txt
	run -0 --separate-stderr sc-frontier --seeds --deny '\.pdf$' --seen s.db <seeds.txt
	assert_output '{"url":"http://example.com/a","depth":0,"seed":"http://example.com/a","from":null,"host":"example.com"}
{"url":"https://b.example/","depth":0,"seed":"https://b.example/","from":null,"host":"b.example"}'
	assert_equal "$(jq -c '[.pages, .links, .emitted, .reasons.repeated, .reasons.denied]' <<<"$stderr")" "[0,4,2,1,1]"
	# a crawl's first round then finds the seeds already seen
	run -0 bash -c "jq -cn '{url: \"http://example.com/a\", links: [\"http://example.com/a\", \"http://example.com/n\"]}' | sc-frontier -q --seen s.db | jq -r .url"
	assert_output "http://example.com/n"
}

# ---- malformed input, the summary, exit statuses ----

@test "malformed lines: a diagnostic with position on stderr, counted, exit 3, nothing emitted for them" {
	printf '%s\n' '{"url":"http://h/","links":["http://h/a"]}' 'not json' '' '[1,2]' \
		'{"url":"http://h/","links":"http://h/x"}' '{"url":"http://h/","links":[1,"http://h/b"]}' >p.jsonl
	run -3 --separate-stderr sc-frontier <p.jsonl
	assert_equal "$(jq -r .url <<<"$output" | tr '\n' ' ')" "http://h/a http://h/b "
	[[ $stderr == *"sc-frontier: <stdin>:2: not valid JSON"* ]] || fail "$stderr"
	[[ $stderr == *"sc-frontier: <stdin>:4: not a JSON object"* ]] || fail "$stderr"
	[[ $stderr == *'sc-frontier: <stdin>:5: "links" is not an array'* ]] || fail "$stderr"
	summary=$(tail -n 1 <<<"$stderr")
	assert_equal "$(jq -c '[.pages, .links, .malformed, .reasons.not_url]' <<<"$summary")" "[3,3,3,1]"
	# --seeds: a record without url is malformed
	run -3 --separate-stderr sc-frontier --seeds <<<'{"href":"http://h/"}'
	[[ $stderr == *'sc-frontier: <stdin>:1: no "url" string'* ]] || fail "$stderr"
}

@test "--links takes the links from another member; -q drops the summary" {
	echo '{"url":"http://h/","links":["http://h/no"],"hrefs":["http://h/yes"]}' >p.jsonl
	run -0 --separate-stderr sc-frontier -q --links hrefs <p.jsonl
	assert_equal "$(jq -r .url <<<"$output")" "http://h/yes"
	[ -z "$stderr" ] || fail "$stderr"
}

@test "a failed write to stdout is exit 1 and the seen set is not changed" {
	jq -cn '{url: "http://h/", links: ["http://h/a"]}' >p.jsonl
	run -1 --separate-stderr bash -c "sc-frontier --seen s.db <p.jsonl >/dev/full"
	[[ $stderr == *"sc-frontier: error writing standard output"* ]] || fail "$stderr"
	assert_equal "$(sqlite3 s.db 'select count(*) from seen')" 0
	run -0 bash -c "sc-frontier -q --seen s.db <p.jsonl | jq -r .url"
	assert_output "http://h/a"
}

# ---- signals and kills ----

@test "SIGINT: keeps reading to the end of the input, writes and commits, exits 130" {
	mkfifo in
	sc-frontier --seen s.db <in >out 2>err &
	pid=$!
	exec 7>in
	echo '{"url":"http://h/","links":["http://h/a"]}' >&7
	wait_for '[ -s out ]'
	kill -INT "$pid"
	sleep 0.2
	kill -0 "$pid" || fail "sc-frontier did not wait for the end of its input"
	echo '{"url":"http://h/","links":["http://h/b"]}' >&7
	exec 7>&-
	status=0
	wait "$pid" || status=$?
	assert_equal "$status" 130
	assert_equal "$(jq -r .url out | tr '\n' ' ')" "http://h/a http://h/b "
	assert_equal "$(sqlite3 s.db 'select count(*) from seen')" 2
}

@test "SIGTERM twice: exits 143 at once, whole lines only, the seen set as before" {
	jq -cn '{url: "http://h/", links: ["http://h/old"]}' | sc-frontier -q --seen s.db >/dev/null
	mkfifo in
	sc-frontier --seen s.db <in >out 2>err &
	pid=$!
	exec 7>in
	echo '{"url":"http://h/","links":["http://h/a","http://h/b"]}' >&7
	wait_for '[ "$(wc -l <out)" = 2 ]'
	kill -TERM "$pid"
	sleep 0.2
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	exec 7>&-
	assert_equal "$status" 143
	jq -e . out >/dev/null || fail "a partial line: $(cat out)"
	assert_equal "$(sqlite3 s.db 'select count(*) from seen')" 1
}

@test "kill -9 in the middle of a large run leaves the seen set as it was" {
	seq 1 300000 | awk '{print "http://h" ($1 % 7) ".example/p" $1}' >urls
	printf 'http://before.example/\n' | sc-frontier -q --seeds --seen s.db >/dev/null
	sc-frontier --seeds --seen s.db <urls >out 2>/dev/null &
	pid=$!
	wait_for '[ "$(wc -l <out)" -gt 1000 ]'
	kill -9 "$pid"
	wait "$pid" || true
	assert_equal "$(sqlite3 s.db 'pragma integrity_check; select count(*) from seen')" "ok
1"
	# and the run done again emits the whole set
	run -0 bash -c "sc-frontier -q --seeds --seen s.db <urls | wc -l"
	assert_output 300000
}

# ---- memory ----

@test "peak memory stays flat with a large seen set" {
	[ "${SANITIZE:-}" != 1 ] || skip "ASan's shadow memory makes RSS meaningless"
	seq 1 1000000 | awk '{print "https://docs.example.org/3/library/m" ($1 % 300) "/p" $1 ".html"}' >urls
	/usr/bin/time -f %M -o rss-commit sc-frontier -q --commit --seen s.db <urls
	head -n 20000 urls >few
	seq 1000001 1020000 | awk '{print "https://docs.example.org/3/library/m" ($1 % 300) "/p" $1 ".html"}' >>few
	/usr/bin/time -f %M -o rss-probe sc-frontier -q --seeds --seen s.db --no-commit <few >new
	assert_equal "$(wc -l <new)" 20000
	# a set ten times smaller for comparison
	head -n 100000 urls | sc-frontier -q --commit --seen small.db
	/usr/bin/time -f %M -o rss-small sc-frontier -q --seeds --seen small.db --no-commit <few >/dev/null
	echo "# peak RSS KiB: commit of 1M $(cat rss-commit), probe 1M-set $(cat rss-probe), probe 100k-set $(cat rss-small)" >&3
	[ "$(cat rss-commit)" -lt 65536 ] || fail "commit used $(cat rss-commit) KiB"
	[ "$(cat rss-probe)" -lt 65536 ] || fail "probe used $(cat rss-probe) KiB"
	# the cache is bounded: ten times the set is not ten times the memory
	[ "$(cat rss-probe)" -lt $(($(cat rss-small) + 20000)) ] || fail "grew: $(cat rss-small) -> $(cat rss-probe) KiB"
	# a batch is bounded in bytes too: 120 MB of 8 KB URLs
	long=$(printf 'x%.0s' $(seq 1 8000))
	seq 1 15000 | awk -v l="$long" '{print "http://h/" l $1}' >long
	/usr/bin/time -f %M -o rss-long sc-frontier -q --seeds <long >/dev/null
	[ "$(cat rss-long)" -lt 65536 ] || fail "long URLs used $(cat rss-long) KiB"
}
