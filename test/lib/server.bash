# Bats helpers for the fixture HTTP server, build/test/sc-testserver.
#
#     load 'lib/server'
#     setup_file()    { sc_server_start --root "$BATS_TEST_DIRNAME/fixtures"; }
#     teardown_file() { sc_server_stop; }
#
# sc_server_start [ARGS...]  starts $SC_TESTSERVER with ARGS on a free loopback
#                            port, waits (at most ~5 s) until it listens, and
#                            exports SC_PORT, SC_BASE (http://127.0.0.1:PORT),
#                            SC_SERVER_PID and SC_SERVER_DIR (its temp dir,
#                            holding the port file and the server's stderr).
# sc_server_stop             SIGTERMs it, waits for it, removes SC_SERVER_DIR.
# sc_server_reset            GET /stats/reset: zero counters, log, flaky and
#                            ratelimit state (call it from setup() if tests
#                            share one server and look at /stats or /log).
# sc_server_stats [FILTER]   /stats through jq (default filter: .).
# sc_server_log [FILTER]     /log through jq (default filter: .).
# sc_server_header_names     every header name the logged requests carried,
#                            one a line, sorted, each once: no header that
#                            was not to be sent reached the server.
# sc_golden_site DIR         makes DIR the golden tests' site (test/golden.bats):
#                            the demo site, ctl.txt (every control character
#                            and DEL, quotes, a backslash, UTF-8) and
#                            ctl-nonul.txt (the same without the NUL).
#
# Works from setup_file/teardown_file (one server per file) as well as from
# setup/teardown (one per test).  One server at a time per shell.

# The repository root, from this file's own location (test/lib/server.bash),
# so suites work whatever the current directory is.
SC_REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${SC_TESTSERVER:=$SC_REPO_ROOT/build/test/sc-testserver}"
export SC_TESTSERVER

sc_server_start() {
	if [[ ! -x $SC_TESTSERVER ]]; then
		# Running a suite by hand before `make test` built anything.
		make -s -C "$SC_REPO_ROOT" testserver >&2 || true
	fi
	if [[ ! -x $SC_TESTSERVER ]]; then
		echo "sc_server_start: $SC_TESTSERVER is not built (make testserver)" >&2
		return 1
	fi
	local tmp_base=${BATS_FILE_TMPDIR:-${BATS_TMPDIR:-${TMPDIR:-/tmp}}}
	SC_SERVER_DIR=$(mktemp -d "$tmp_base/sc-server.XXXXXX") || return 1
	# 3>&- : bats waits for every holder of its fd 3 to exit; the server
	# outlives this function, so it must not inherit it.
	"$SC_TESTSERVER" --port-file "$SC_SERVER_DIR/port" "$@" \
		>"$SC_SERVER_DIR/stdout" 2>"$SC_SERVER_DIR/stderr" 3>&- &
	SC_SERVER_PID=$!
	local tries
	for ((tries = 0; tries < 100; tries++)); do
		[[ -s $SC_SERVER_DIR/port ]] && break
		if ! kill -0 "$SC_SERVER_PID" 2>/dev/null; then
			echo "sc_server_start: the server exited at start:" >&2
			cat "$SC_SERVER_DIR/stderr" >&2
			return 1
		fi
		sleep 0.05
	done
	if [[ ! -s $SC_SERVER_DIR/port ]]; then
		echo "sc_server_start: no port after 5 s" >&2
		sc_server_stop
		return 1
	fi
	SC_PORT=$(<"$SC_SERVER_DIR/port")
	SC_BASE="http://127.0.0.1:$SC_PORT"
	export SC_PORT SC_BASE SC_SERVER_PID SC_SERVER_DIR
}

sc_golden_site() {
	cp -R "$SC_REPO_ROOT/share/demo/site" "$1"
	printf 'c0:\000|\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017|' >"$1/ctl.txt"
	printf '\020\021\022\023\024\025\026\027\030\031\032\033\034\035\036\037|' >>"$1/ctl.txt"
	printf 'del:\177 q:" bs:\\ sl:/ u:\303\251\342\202\254\360\237\230\200 end\n' >>"$1/ctl.txt"
	# The same without the NUL: text that is UTF-8 (the NUL makes body_base64).
	tr -d '\000' <"$1/ctl.txt" >"$1/ctl-nonul.txt"
}

sc_server_stop() {
	if [[ -n ${SC_SERVER_PID:-} ]]; then
		kill -TERM "$SC_SERVER_PID" 2>/dev/null
		# `wait` only works in the shell that started it; otherwise poll.
		if ! wait "$SC_SERVER_PID" 2>/dev/null; then
			local tries
			for ((tries = 0; tries < 100; tries++)); do
				kill -0 "$SC_SERVER_PID" 2>/dev/null || break
				sleep 0.05
			done
			kill -KILL "$SC_SERVER_PID" 2>/dev/null
		fi
	fi
	[[ -n ${SC_SERVER_DIR:-} ]] && rm -rf "$SC_SERVER_DIR"
	unset SC_SERVER_PID SC_SERVER_DIR SC_PORT SC_BASE
	return 0
}

sc_server_reset() {
	curl -fsS --max-time 5 "$SC_BASE/stats/reset" >/dev/null
}

sc_server_stats() {
	curl -fsS --max-time 5 "$SC_BASE/stats" | jq -c "${1:-.}"
}

sc_server_log() {
	curl -fsS --max-time 5 "$SC_BASE/log" | jq -c "${1:-.}"
}

sc_server_header_names() {
	curl -fsS --max-time 5 "$SC_BASE/log" | jq -r '[.[].headers[]] | unique[]'
}
