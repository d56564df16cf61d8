#!/usr/bin/env bats
# The fixture server itself (test/server/sc-testserver.c): every endpoint,
# the HTTP details the other suites rely on, and its /stats bookkeeping.
# Talks to 127.0.0.1 only, with curl, bash's /dev/tcp and a little python.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'

bats_require_minimum_version 1.5.0

setup_file() {
	# A --root tree; page/1 is there to show generated endpoints win.
	local root="$BATS_FILE_TMPDIR/root"
	mkdir -p "$root/docs" "$root/page"
	printf '<html><title>Root index</title></html>\n' >"$root/index.html"
	printf '<html><title>Docs index</title></html>\n' >"$root/docs/index.html"
	printf 'body { color: red; }\n' >"$root/style.css"
	printf '{"fixture": true}\n' >"$root/data.json"
	printf 'plain text\n' >"$root/notes.txt"
	printf '\x89PNG\r\n\x1a\n' >"$root/pixel.png"
	printf 'from a file\n' >"$root/page/1"
	printf 'secret\n' >"$BATS_FILE_TMPDIR/secret.txt"
	export SC_FIXTURE_ROOT=$root
	mkdir -p "$BATS_FILE_TMPDIR/robots"
	export SC_ROBOTS_DIR=$BATS_FILE_TMPDIR/robots
	sc_server_start --root "$root" --robots-dir "$SC_ROBOTS_DIR"
}

teardown_file() {
	sc_server_stop
}

setup() {
	sc_server_reset
}

# status code of a GET
http_code() {
	curl -s -o /dev/null -w '%{http_code}' "$@"
}

# One raw request (bytes as printf %b understands them) on a fresh
# connection; prints everything the server sends until it closes.
raw_request() {
	# shellcheck disable=SC2016 # $1 and $2 are the inner bash's arguments
	timeout 5 bash -c 'exec 5<>"/dev/tcp/127.0.0.1/$1" && printf "%b" "$2" >&5 && cat <&5' _ "$SC_PORT" "$1"
}

# Fails unless $1 >= $2 (decimals allowed).
assert_at_least() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }' || fail "$1 is not >= $2"
}

@test "startup: port on stdout and in the port file; usage errors exit 2; --help" {
	dir="$BATS_TEST_TMPDIR"
	"$SC_TESTSERVER" --port-file "$dir/p" >"$dir/out" 3>&- &
	pid=$!
	for _ in $(seq 100); do [ -s "$dir/p" ] && break; sleep 0.05; done
	port=$(cat "$dir/p")
	assert_equal "$(cat "$dir/out")" "$port"
	[ "$port" -gt 0 ] || fail "bad port $port"
	assert_equal "$(http_code "http://127.0.0.1:$port/page/1")" 200
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 0

	run -2 "$SC_TESTSERVER" --no-such-option
	assert_output --partial 'unknown option'
	run -2 "$SC_TESTSERVER" --port 99999
	run -2 "$SC_TESTSERVER" --root "$dir/missing"
	run -2 "$SC_TESTSERVER" stray-argument
	run -0 "$SC_TESTSERVER" --help
	assert_output --partial 'usage: sc-testserver'
}

@test "a fixed --port is honoured and SIGINT exits 0" {
	"$SC_TESTSERVER" --port 0 >"$BATS_TEST_TMPDIR/out" 3>&- &
	pid=$!
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/out" ] && break; sleep 0.05; done
	port=$(cat "$BATS_TEST_TMPDIR/out")
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 0
	# Now that port is free again; ask for it by number.
	"$SC_TESTSERVER" --port "$port" >"$BATS_TEST_TMPDIR/out2" 3>&- &
	pid=$!
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/out2" ] && break; sleep 0.05; done
	assert_equal "$(cat "$BATS_TEST_TMPDIR/out2")" "$port"
	kill "$pid"
	wait "$pid"
}

@test "/page/N: title, description, h1 and relative and absolute links" {
	run -0 curl -sf "$SC_BASE/page/7"
	assert_output --partial '<title>Page 7</title>'
	assert_output --partial '<meta name="description" content="Description of page 7">'
	assert_output --partial '<h1>Page 7</h1>'
	assert_output --partial 'href="/page/8"'
	assert_output --partial 'href="../page/9"'
	assert_output --partial 'href="10?x=1#frag"'
	assert_output --partial "href=\"http://127.0.0.1:$SC_PORT/page/11\""
	assert_output --partial "href=\"http://127.0.0.1:$SC_PORT/page/3\""
	[ "$(grep -c '<p>' <<<"$output")" -ge 3 ] || fail "too few paragraphs"
	# Deterministic, and the absolute links follow the Host header.
	assert_equal "$(curl -s "$SC_BASE/page/7")" "$output"
	run -0 curl -sf -H "Host: localhost:$SC_PORT" "$SC_BASE/page/7"
	assert_output --partial "href=\"http://localhost:$SC_PORT/page/11\""
	assert_equal "$(http_code "$SC_BASE/page/x")" 404
}

@test "/page/N?size= pads the page to about that size" {
	size=$(curl -s "$SC_BASE/page/2?size=20000" | wc -c)
	[ "$size" -ge 20000 ] && [ "$size" -le 21000 ] || fail "size $size"
	run -0 curl -s "$SC_BASE/page/2?size=20000"
	assert_output --regexp '</html>'$'\n''?$'
}

@test "/status/CODE answers that status; 1xx and out-of-range are 400" {
	for code in 200 201 204 301 404 418 429 500 503 599; do
		assert_equal "$(http_code "$SC_BASE/status/$code")" "$code"
	done
	for code in 100 199 600 abc; do
		assert_equal "$(http_code "$SC_BASE/status/$code")" 400
	done
	run -0 curl -s "$SC_BASE/status/404"
	assert_output --partial '404'
}

@test "/delay/MS waits at least MS milliseconds" {
	t=$(curl -sf -o /dev/null -w '%{time_total}' "$SC_BASE/delay/300")
	assert_at_least "$t" 0.3
	assert_equal "$(http_code "$SC_BASE/delay/0")" 200
	assert_equal "$(http_code "$SC_BASE/delay/soon")" 400
}

@test "/redirect/N, /redirect-loop and /redirect-to" {
	run -0 curl -s -o /dev/null -w '%{http_code} %{num_redirects} %{url_effective}' -L "$SC_BASE/redirect/3"
	assert_output "200 3 $SC_BASE/redirect/0"
	run -0 curl -s -D - -o /dev/null "$SC_BASE/redirect/2"
	assert_line --partial '302'
	assert_line --regexp '^Location: /redirect/1'
	run curl -s -o /dev/null -L --max-redirs 5 "$SC_BASE/redirect-loop"
	assert_equal "$status" 47 # too many redirects
	run -0 curl -s -D - -o /dev/null "$SC_BASE/redirect-to?url=ftp%3A%2F%2Fexample.invalid%2F&status=301"
	assert_line --partial ' 301 '
	assert_line --regexp '^Location: ftp://example.invalid/'
	assert_equal "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$SC_BASE/redirect-to?url=/page/1")" \
		"302 $SC_BASE/page/1"
	assert_equal "$(http_code "$SC_BASE/redirect-to")" 400
}

@test "/flaky/ID fails K times with STATUS and Retry-After, then succeeds" {
	url="$SC_BASE/flaky/f1?fail=2&status=502&retry_after=3"
	for expected in 502 502 200 200; do
		run -0 curl -s -D - -o /dev/null "$url"
		assert_line --partial "HTTP/1.1 $expected"
		if [ "$expected" = 502 ]; then
			assert_line --regexp '^Retry-After: 3'
		else
			refute_line --regexp '^Retry-After'
		fi
	done
	# Counters are per ID, default to one 503, and reset with /stats/reset.
	assert_equal "$(http_code "$SC_BASE/flaky/f2")" 503
	assert_equal "$(http_code "$SC_BASE/flaky/f2")" 200
	sc_server_reset
	assert_equal "$(http_code "$SC_BASE/flaky/f2")" 503
}

@test "/ratelimit/ID: 429 with Retry-After until the window has passed" {
	run -0 curl -s -D - -o /dev/null "$SC_BASE/ratelimit/r1?after=1"
	assert_line --partial 'HTTP/1.1 429'
	assert_line --regexp '^Retry-After: 1'
	run -0 curl -s -D - -o /dev/null "$SC_BASE/ratelimit/r1?after=1"
	assert_line --partial 'HTTP/1.1 429'
	assert_line --regexp '^Retry-After: 1'
	# date=1: an HTTP-date about 30 s ahead
	run -0 curl -s -D - -o /dev/null "$SC_BASE/ratelimit/r2?after=30&date=1"
	date_line=$(grep -i '^Retry-After:' <<<"$output" | tr -d '\r')
	[[ $date_line =~ ^Retry-After:\ [A-Z][a-z]{2},\ [0-9]{2}\ [A-Z][a-z]{2}\ [0-9]{4}\ [0-9:]{8}\ GMT$ ]] ||
		fail "not an HTTP-date: $date_line"
	ahead=$(($(date -d "${date_line#Retry-After: }" +%s) - $(date +%s)))
	[ "$ahead" -ge 28 ] && [ "$ahead" -le 31 ] || fail "Retry-After is $ahead s ahead"
	sleep 1.05
	assert_equal "$(http_code "$SC_BASE/ratelimit/r1?after=1")" 200
	assert_equal "$(http_code "$SC_BASE/ratelimit/r2?after=30&date=1")" 429
}

@test "/big/BYTES: exact length, streamed, also chunked" {
	run -0 curl -s -D - -o "$BATS_TEST_TMPDIR/big" "$SC_BASE/big/3000000"
	assert_line --regexp '^Content-Length: 3000000'
	assert_equal "$(wc -c <"$BATS_TEST_TMPDIR/big")" 3000000
	run -0 curl -s -D - -o "$BATS_TEST_TMPDIR/big.chunked" "$SC_BASE/big/3000000?chunked=1"
	assert_line --regexp '^Transfer-Encoding: chunked'
	refute_line --regexp '^Content-Length'
	cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/big.chunked"
	assert_equal "$(curl -s "$SC_BASE/big/0?chunked=1" | wc -c)" 0
	# 200 MB goes through without the server holding it in memory.
	assert_equal "$(curl -s "$SC_BASE/big/200000000" | wc -c)" 200000000
	rss_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$SC_SERVER_PID/status")
	[ "$rss_kb" -lt 100000 ] || fail "server peak RSS ${rss_kb} kB"
}

@test "/gzip is a valid gzip stream of the right size" {
	run -0 curl -s -D - -o "$BATS_TEST_TMPDIR/gz" "$SC_BASE/gzip"
	assert_line --regexp '^Content-Encoding: gzip'
	gzip -t <"$BATS_TEST_TMPDIR/gz"
	assert_equal "$(curl -s --compressed "$SC_BASE/gzip" | wc -c)" 10000
	assert_equal "$(curl -s --compressed "$SC_BASE/gzip?size=123456" | wc -c)" 123456
	assert_equal "$(curl -s "$SC_BASE/gzip?size=0" | gzip -dc | wc -c)" 0
	run -0 curl -s --compressed "$SC_BASE/gzip?size=5000"
	assert_output --partial '<title>Gzip</title>'
}

@test "/br is brotli (node's decoder reads it) when Accept-Encoding names br, the plain page when not" {
	command -v node >/dev/null || fail "node is not installed (make deps)"
	local d=$BATS_TEST_TMPDIR
	run -0 curl -s -D - -o "$d/br" -H 'Accept-Encoding: gzip, br' "$SC_BASE/br?size=200000"
	assert_line --regexp '^Content-Encoding: br'
	curl -s "$SC_BASE/br?size=200000" >"$d/plain"
	assert_equal "$(wc -c <"$d/plain")" 200000
	node -e 'process.stdout.write(require("zlib").brotliDecompressSync(require("fs").readFileSync(process.argv[1])))' "$d/br" >"$d/decoded"
	cmp "$d/decoded" "$d/plain"
	run -0 curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip, brx' "$SC_BASE/br"
	refute_line --regexp '^Content-Encoding'
	for size in 0 1 65536 65537; do
		curl -s -H 'Accept-Encoding: br' "$SC_BASE/br?size=$size" >"$d/br"
		run -0 node -e 'process.stdout.write(String(require("zlib").brotliDecompressSync(require("fs").readFileSync(process.argv[1])).length))' "$d/br"
		assert_output "$(curl -s "$SC_BASE/br?size=$size" | wc -c)"
	done
}

@test "/slow drips its body one byte per interval" {
	run -0 curl -s -D - -o "$BATS_TEST_TMPDIR/slow" -w '%{time_starttransfer} %{time_total}\n' \
		"$SC_BASE/slow?bytes=5&interval=100"
	assert_line --regexp '^Content-Length: 5'
	assert_equal "$(wc -c <"$BATS_TEST_TMPDIR/slow")" 5
	read -r first total <<<"${lines[-1]}"
	assert_at_least "$total" 0.5
	assert_at_least "$(awk -v t="$total" -v f="$first" 'BEGIN { print t - f }')" 0.3
}

@test "/reset sends part of the body, then resets the connection" {
	run curl -s -o "$BATS_TEST_TMPDIR/partial" "$SC_BASE/reset"
	# 56: connection reset; 18: transfer closed with bytes outstanding
	[[ $status == 56 || $status == 18 ]] || fail "curl exit $status"
	size=$(wc -c <"$BATS_TEST_TMPDIR/partial")
	[ "$size" -gt 0 ] && [ "$size" -lt 100000 ] || fail "got $size bytes"
}

@test "/hang never answers, and is in flight while it waits" {
	curl -s -m 5 "$SC_BASE/hang" >/dev/null 3>&- &
	pid=$!
	for _ in $(seq 50); do
		[ "$(sc_server_stats .inflight)" = 1 ] && break
		sleep 0.05
	done
	assert_equal "$(sc_server_stats .inflight)" 1
	kill "$pid"
	wait "$pid" || true
	for _ in $(seq 50); do
		[ "$(sc_server_stats .connections)" = 0 ] && break
		sleep 0.05
	done
	assert_equal "$(sc_server_stats '[.inflight, .connections]')" '[0,0]'
	run curl -s -m 0.3 "$SC_BASE/hang"
	assert_equal "$status" 28 # timed out
}

@test "/echo describes method, path, query, headers and body as JSON" {
	run -0 curl -sf -X PUT -H 'X-Test: a "quoted" value' --data-binary $'line1\nline2\t"q"\\' \
		"$SC_BASE/echo?a=1&b=two"
	assert_equal "$(jq -r .method <<<"$output")" PUT
	assert_equal "$(jq -r .path <<<"$output")" /echo
	assert_equal "$(jq -r .query <<<"$output")" 'a=1&b=two'
	assert_equal "$(jq -r '.headers["X-Test"]' <<<"$output")" 'a "quoted" value'
	assert_equal "$(jq -r .headers.Host <<<"$output")" "127.0.0.1:$SC_PORT"
	assert_equal "$(jq -j .body <<<"$output")" $'line1\nline2\t"q"\\'
	# Not UTF-8 in, still valid JSON out.
	printf 'caf\xe9 \xff' | curl -sf --data-binary @- "$SC_BASE/echo" | jq -e '.body_length == 6' >/dev/null
	run -0 curl -sf "$SC_BASE/echo"
	assert_equal "$(jq -r '.method + " " + .body' <<<"$output")" 'GET '
}

@test "/echo takes chunked bodies and Expect: 100-continue" {
	run -0 sh -c "printf 'chunked body' | curl -sf -H 'Transfer-Encoding: chunked' --data-binary @- '$SC_BASE/echo'"
	assert_equal "$(jq -r .body <<<"$output")" 'chunked body'
	head -c 100000 /dev/zero | tr '\0' x >"$BATS_TEST_TMPDIR/body"
	run -0 curl -sf -v -o "$BATS_TEST_TMPDIR/echo.json" -H 'Expect: 100-continue' \
		--data-binary @"$BATS_TEST_TMPDIR/body" "$SC_BASE/echo"
	assert_output --partial 'HTTP/1.1 100 Continue'
	assert_equal "$(jq .body_length "$BATS_TEST_TMPDIR/echo.json")" 100000
	# By hand: chunk extensions and trailers, and the 100 before the body.
	run -0 raw_request 'POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n'
	assert_equal "$(tail -n 1 <<<"$output" | jq -r .body)" 'hello world'
}

@test "request bodies over 16 MB are refused with 413" {
	run -0 raw_request 'POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 16777217\r\nExpect: 100-continue\r\n\r\n'
	assert_line --index 0 --partial 'HTTP/1.1 413'
	refute_output --partial '100 Continue'
}

@test "/binary/N is not UTF-8; /latin1 is ISO-8859-1 and says so" {
	run -0 curl -s -D - -o "$BATS_TEST_TMPDIR/bin" "$SC_BASE/binary/1000"
	assert_line --regexp '^Content-Type: application/octet-stream'
	assert_equal "$(wc -c <"$BATS_TEST_TMPDIR/bin")" 1000
	run iconv -f UTF-8 -t UTF-8 "$BATS_TEST_TMPDIR/bin"
	assert_failure
	run -0 curl -s -D - -o "$BATS_TEST_TMPDIR/latin1" "$SC_BASE/latin1"
	assert_line --regexp '^Content-Type: text/html; charset=iso-8859-1'
	grep -q $'caf\xe9' "$BATS_TEST_TMPDIR/latin1" || fail "no café in Latin-1"
	assert_equal "$(iconv -f ISO-8859-1 -t UTF-8 "$BATS_TEST_TMPDIR/latin1" | grep -o 'Café' | head -n 1)" 'Café'
}

@test "/stats: 50 parallel delayed requests show as max_inflight and max_connections" {
	urls=()
	for i in $(seq 50); do urls+=("$SC_BASE/delay/300?i=$i"); done
	curl -s --parallel --parallel-immediate --parallel-max 50 "${urls[@]}" -o /dev/null >/dev/null
	run -0 sc_server_stats
	assert_equal "$(jq .max_inflight <<<"$output")" 50
	assert_equal "$(jq .max_connections <<<"$output")" 50
	assert_equal "$(jq .requests <<<"$output")" 50
	assert_equal "$(jq '.paths["/delay/300"]' <<<"$output")" 50
	assert_equal "$(jq '[.inflight, .connections]' -c <<<"$output")" '[0,0]'
	# /stats itself is not counted.
	assert_equal "$(jq '.paths | has("/stats")' <<<"$output")" false
}

@test "1,000+ connections are held at once" {
	python3 - "$SC_PORT" 1100 <<'EOF'
import resource, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /delay/1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    socks.append(s)
ok = 0
for s in socks:
    data = b""
    while b"delayed" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    ok += data.startswith(b"HTTP/1.1 200 ")
    s.close()
if ok != n:
    sys.exit(f"only {ok} of {n} answered")
EOF
	run -0 sc_server_stats '[.max_connections, .max_inflight]'
	assert_equal "$output" '[1100,1100]'
}

@test "/stats and /log requests do not count as connections or requests" {
	# One connection: a page, then /stats on the same connection.
	run -0 curl -s "$SC_BASE/page/1" -o /dev/null "$SC_BASE/stats"
	assert_equal "$(jq -c '[.max_connections, .connections, .requests]' <<<"$output")" '[1,0,1]'
	curl -s "$SC_BASE/log" "$SC_BASE/stats" >/dev/null
	assert_equal "$(sc_server_stats '[.max_connections, .max_inflight, .requests]')" '[1,1,1]'
}

@test "/stats/reset zeroes counters, maxima and the log" {
	curl -s "$SC_BASE/page/1" "$SC_BASE/page/2" >/dev/null
	run -0 curl -s "$SC_BASE/stats/reset"
	assert_output '{}'
	assert_equal "$(sc_server_stats)" \
		'{"max_connections":0,"connections":0,"max_inflight":0,"inflight":0,"requests":0,"paths":{},"hosts":{}}'
	assert_equal "$(sc_server_log)" '[]'
}

@test "--loopback 3 serves 127.0.0.2 and 127.0.0.3 too; /stats hosts and /log agent tell them apart" {
	local dir=$BATS_TEST_TMPDIR/lo
	mkdir -p "$dir"
	"$SC_TESTSERVER" --loopback 3 --port-file "$dir/port" >/dev/null 2>&1 3>&- &
	local pid=$! tries
	for ((tries = 0; tries < 100; tries++)); do [[ -s $dir/port ]] && break; sleep 0.05; done
	local port
	port=$(<"$dir/port")
	curl -s -A one "http://127.0.0.2:$port/page/1" >/dev/null
	curl -s -A two "http://127.0.0.3:$port/delay/300" >/dev/null &
	curl -s -A two "http://127.0.0.3:$port/delay/300" >/dev/null
	wait %2 2>/dev/null || true
	run -0 curl -s "http://127.0.0.1:$port/stats"
	assert_equal "$(jq -c '.hosts | to_entries | map([.key, .value.max_inflight]) | sort' <<<"$output")" \
		"[[\"127.0.0.2:$port\",1],[\"127.0.0.3:$port\",2]]"
	run -0 curl -s "http://127.0.0.1:$port/log"
	assert_equal "$(jq -c 'map(.agent) | sort' <<<"$output")" '["one","two","two"]'
	run -2 "$SC_TESTSERVER" --loopback 33
	assert_output --partial 'not a number from 1 to 32'
	kill "$pid"
	wait "$pid"
}

@test "/log records time, Host, method, path with query, header names and status" {
	curl -s "$SC_BASE/page/1?q=1" >/dev/null
	curl -s -H "Host: localhost:$SC_PORT" -X POST "$SC_BASE/status/404" >/dev/null
	curl -s -m 0.2 "$SC_BASE/hang" || true
	run -0 sc_server_log
	assert_equal "$(jq -c 'map([.host, .method, .path, .status])' <<<"$output")" \
		"[[\"127.0.0.1:$SC_PORT\",\"GET\",\"/page/1?q=1\",200],[\"localhost:$SC_PORT\",\"POST\",\"/status/404\",404],[\"127.0.0.1:$SC_PORT\",\"GET\",\"/hang\",0]]"
	jq -e '.[0].t_ms > 0 and .[0].t_ms <= .[1].t_ms and .[1].t_ms <= .[2].t_ms' <<<"$output" >/dev/null
	assert_equal "$(jq -c '.[0].headers' <<<"$output")" '["Host","User-Agent","Accept"]'
	# Each header line is one more name.
	curl -s -H 'X-One: 1' -H 'X-Two: 2' "$SC_BASE/page/2" >/dev/null
	run -0 sc_server_header_names
	assert_output "$(printf '%s\n' Accept Host User-Agent X-One X-Two)"
}

@test "--root serves files by extension, index.html for directories, refuses .." {
	run -0 curl -s -D - "$SC_BASE/style.css"
	assert_line --regexp '^Content-Type: text/css'
	assert_output --partial 'color: red'
	assert_equal "$(curl -s -o /dev/null -w '%{content_type}' "$SC_BASE/data.json")" application/json
	assert_equal "$(curl -s -o /dev/null -w '%{content_type}' "$SC_BASE/notes.txt")" 'text/plain; charset=utf-8'
	assert_equal "$(curl -s -o /dev/null -w '%{content_type}' "$SC_BASE/pixel.png")" image/png
	cmp <(curl -s "$SC_BASE/pixel.png") "$SC_FIXTURE_ROOT/pixel.png"
	run -0 curl -s "$SC_BASE/"
	assert_output --partial 'Root index'
	run -0 curl -s -L "$SC_BASE/docs"
	assert_output --partial 'Docs index'
	assert_equal "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$SC_BASE/docs")" "301 $SC_BASE/docs/"
	assert_equal "$(http_code --path-as-is "$SC_BASE/../secret.txt")" 403
	assert_equal "$(http_code --path-as-is "$SC_BASE/docs/%2e%2e/%2e%2e/secret.txt")" 403
	# Generated endpoints win over files.
	run -0 curl -s "$SC_BASE/page/1"
	assert_output --partial '<title>Page 1</title>'
	run -0 curl -s -D - "$SC_BASE/no/such/file.html"
	assert_line --partial 'HTTP/1.1 404'
	assert_line --regexp '^Content-Type: text/html'
	assert_output --partial '<html>'
}

@test "HTTP: keep-alive, Connection: close, HEAD, Date and Server headers" {
	run -0 curl -sv "$SC_BASE/page/1" "$SC_BASE/page/2" -o /dev/null -o /dev/null
	assert_output --partial 'Re-using existing connection'
	assert_output --regexp '< Date: [A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT'
	assert_output --partial '< Server: sc-testserver'
	run -0 curl -sv -H 'Connection: close' "$SC_BASE/page/1" "$SC_BASE/page/2" -o /dev/null -o /dev/null
	refute_output --partial 'Re-using existing connection'
	assert_output --partial '< Connection: close'
	run -0 curl -sI "$SC_BASE/page/1"
	length=$(grep -i '^Content-Length:' <<<"$output" | tr -dc 0-9)
	assert_equal "$length" "$(curl -s "$SC_BASE/page/1" | wc -c)"
	run -0 raw_request 'HEAD /big/1000 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'
	assert_output --partial 'Content-Length: 1000'
	refute_output --partial 'abcdef'
}

@test "HTTP: pipelined requests are answered in order" {
	run -0 raw_request 'GET /status/201 HTTP/1.1\r\nHost: h\r\n\r\nGET /delay/50 HTTP/1.1\r\nHost: h\r\n\r\nGET /status/202 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'
	assert_equal "$(grep -o '^HTTP/1.1 [0-9]*' <<<"$output" | tr '\n' ' ')" 'HTTP/1.1 201 HTTP/1.1 200 HTTP/1.1 202 '
}

@test "HTTP: garbage is 400, oversized headers 431, unknown versions 505" {
	run -0 raw_request 'this is not http\r\n\r\n'
	assert_line --index 0 --partial 'HTTP/1.1 400'
	run -0 raw_request 'GET /page/1 HTTP/1.1\r\nno colon here\r\n\r\n'
	assert_line --index 0 --partial 'HTTP/1.1 400'
	run -0 raw_request "GET /page/1 HTTP/1.1\r\nX-Big: $(head -c 70000 /dev/zero | tr '\0' a)\r\n\r\n"
	assert_line --index 0 --partial 'HTTP/1.1 431'
	run -0 raw_request 'GET /page/1 HTTP/3.0\r\n\r\n'
	assert_line --index 0 --partial 'HTTP/1.1 505'
	# and the server is still fine
	assert_equal "$(http_code "$SC_BASE/page/1")" 200
}

@test "--robots-dir: /robots.txt per Host, status and redirect files, default, 404, in /log" {
	dir=$SC_ROBOTS_DIR
	printf 'User-agent: *\nDisallow: /a\n' >"$dir/127.0.0.1"
	printf 'User-agent: *\nDisallow: /other\n' >"$dir/other.test"
	printf '503\n' >"$dir/down.test.status"
	printf '404' >"$dir/gone.test.status"
	printf '301\n' >"$dir/moved.test.status"
	printf 'http://other.test/robots.txt\n' >"$dir/moved.test.location"
	: >"$dir/empty.test"

	run -0 curl -s -D "$BATS_TEST_TMPDIR/h" "$SC_BASE/robots.txt"
	assert_output "$(printf 'User-agent: *\nDisallow: /a')"
	grep -qi '^Content-Type: text/plain' "$BATS_TEST_TMPDIR/h"
	run -0 curl -s -H "Host: other.test:8080" "$SC_BASE/robots.txt"
	assert_output "$(printf 'User-agent: *\nDisallow: /other')"
	assert_equal "$(http_code -H 'Host: down.test' "$SC_BASE/robots.txt")" 503
	assert_equal "$(http_code -H 'Host: gone.test' "$SC_BASE/robots.txt")" 404
	run -0 curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -H 'Host: moved.test' "$SC_BASE/robots.txt"
	assert_output '301 http://other.test/robots.txt'
	run -0 curl -s -w '%{http_code} %{size_download}' -H 'Host: empty.test' "$SC_BASE/robots.txt"
	assert_output '200 0'
	# No file for the host and no default: 404; then a default serves it.
	assert_equal "$(http_code -H 'Host: unknown.test' "$SC_BASE/robots.txt")" 404
	assert_equal "$(http_code -H 'Host: ../etc' "$SC_BASE/robots.txt")" 404
	printf 'User-agent: *\nAllow: /\n' >"$dir/default"
	run -0 curl -s -H "Host: unknown.test" "$SC_BASE/robots.txt"
	assert_output "$(printf 'User-agent: *\nAllow: /')"
	rm "$dir/default"
	# Only /robots.txt is served from the folder.
	assert_equal "$(http_code -H 'Host: other.test' "$SC_BASE/robots.txt.bak")" 404

	run -0 sc_server_log
	assert_equal "$(jq -c 'map([.host, .path, .status])' <<<"$output")" \
		"[[\"127.0.0.1:$SC_PORT\",\"/robots.txt\",200],[\"other.test:8080\",\"/robots.txt\",200],[\"down.test\",\"/robots.txt\",503],[\"gone.test\",\"/robots.txt\",404],[\"moved.test\",\"/robots.txt\",301],[\"empty.test\",\"/robots.txt\",200],[\"unknown.test\",\"/robots.txt\",404],[\"../etc\",\"/robots.txt\",404],[\"unknown.test\",\"/robots.txt\",200],[\"other.test\",\"/robots.txt.bak\",404]]"
}

@test "--robots-dir: H.unreliable P makes P in 100 of H's /page/ requests a 503, other hosts untouched" {
	dir=$SC_ROBOTS_DIR
	printf '10\n' >"$dir/flaky.test.unreliable"
	local codes i
	codes=$(for ((i = 0; i < 100; i++)); do http_code -H 'Host: flaky.test' "$SC_BASE/page/$i"; echo; done | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
	assert_equal "$codes" "200:90 503:10 "
	# Another host's pages, and flaky.test's other paths, all answer.
	codes=$(for ((i = 0; i < 20; i++)); do http_code -H 'Host: steady.test' "$SC_BASE/page/$i"; echo; done | sort -u)
	assert_equal "$codes" 200
	assert_equal "$(http_code -H 'Host: flaky.test' "$SC_BASE/status/204")" 204
	# The robots.txt of the host is its own business (default: 404 here).
	assert_equal "$(http_code -H 'Host: flaky.test' "$SC_BASE/robots.txt")" 404
}

@test "--robots-dir: H.delay holds the answer that many ms (a client timeout sees none)" {
	dir=$SC_ROBOTS_DIR
	printf 'User-agent: *\nDisallow: /\n' >"$dir/slow.test"
	printf '400\n' >"$dir/slow.test.delay"
	run -0 curl -s -o /dev/null -w '%{http_code} %{time_total}' -H 'Host: slow.test' "$SC_BASE/robots.txt"
	read -r code secs <<<"$output"
	assert_equal "$code" 200
	assert_at_least "$secs" 0.39
	run -28 curl -s -m 0.1 -H 'Host: slow.test' "$SC_BASE/robots.txt"
	# Other hosts are not held meanwhile.
	run -0 curl -s -o /dev/null -w '%{http_code}' "$SC_BASE/page/1"
	assert_output 200
	# Both reached the server, the first answered.  The second's status is
	# not asserted: a client gone with a FIN looks like one that half-closed
	# after its request, which the server still answers when the delay ends
	# (200), unless the log is read before that (0).
	run -0 sc_server_log '[.[] | select(.host == "slow.test") | .status] | [length, .[0]]'
	assert_equal "$(jq -c . <<<"$output")" '[2,200]'
}
