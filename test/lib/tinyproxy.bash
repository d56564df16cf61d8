# Bats helper: Debian's tinyproxy as a forward proxy that needs
# credentials (test/sc-fetch-proxy.bats, test/crawl-sessions.bats).
#
# start_tinyproxy   starts it in BATS_FILE_TMPDIR/tinyproxy on a free
#                   loopback port; PROXY its URL with the credentials
#                   (scuser:s3cret), PROXY_NAME without; its pid in
#                   BATS_FILE_TMPDIR/tinyproxy/child (stop_tinyproxy)
# stop_tinyproxy    kills it

# tinyproxy on a free loopback port, in the file's folder; PROXY its URL.
start_tinyproxy() {
	local dir=$BATS_FILE_TMPDIR/tinyproxy port
	mkdir -p "$dir"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$dir/conf" <<EOF
Port $port
Listen 127.0.0.1
Timeout 30
MaxClients 20
Allow 127.0.0.1
LogLevel Info
LogFile "$dir/log"
PidFile "$dir/pid"
BasicAuth scuser s3cret
EOF
	tinyproxy -d -c "$dir/conf" >"$dir/out" 2>&1 &
	echo $! >"$dir/child"
	for _ in $(seq 100); do
		curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/" && break
		sleep 0.05
	done
	export PROXY=http://scuser:s3cret@127.0.0.1:$port PROXY_NAME=http://127.0.0.1:$port
}

stop_tinyproxy() {
	[ ! -e "$BATS_FILE_TMPDIR/tinyproxy/child" ] || kill "$(cat "$BATS_FILE_TMPDIR/tinyproxy/child")" 2>/dev/null || true
}
