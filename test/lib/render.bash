# Bats helpers for tests of sc-render and the reference renderers
# (test/sc-render*.bats, test/crawl-render.bats, test/render-ref.bats).
# Load after lib/server.
#
#     load 'lib/server'
#     load 'lib/render'
#     setup_file()    { sc_render_setup_file; }      # test/render/site
#     teardown_file() { sc_server_stop; }
#     setup()         { sc_render_setup; }
#
# The browser
# sc_render_browser          prints the browser to drive: $SC_BROWSER if set,
#                            else /usr/lib/chromium/chromium-headless-shell,
#                            else /usr/lib/chromium/chromium; 1 if none
# SC_RENDER_HOST_RULES       a --host-resolver-rules value by which the
#                            browser resolves nothing but loopback (names
#                            and address literals alike: 127.0.0.*,
#                            localhost): --host-resolver-rules="$SC_RENDER_HOST_RULES"
#                            (render-ref.js reads it from the environment)
# sc_render_ref ARGS...      test/bench/render-ref.js ARGS... (puppeteer-core
#                            unless --engine playwright): URL lines on stdin,
#                            one sc-record per URL on stdout
#
# A test file of sc-render
# sc_render_setup_file [ROOT [ARGS...]]  its setup_file: a Chromium there
#                            (else it fails: make deps installs one), the
#                            fixture server on ROOT (default
#                            test/render/site) with ARGS, and
#                            SC_RENDER_BROWSER_ARGS the resolver rule
# sc_render_setup            its setup: the server's log and counts reset,
#                            the test in its own folder
#
# The fixture site (test/render/site, its manifest expected.json)
# sc_render_site_start [ARGS...]  sc_server_start --root test/render/site ARGS;
#                            SC_BASE as sc_server_start sets it
# sc_render_gen_site DIR N   DIR: a copy of test/render/site plus N pages
#                            JavaScript builds (DIR/js/I.html, gen-pages.py)
# sc_render_expected FILTER  jq -c FILTER on expected.json, e.g.
#                            '.[] | select(.page == "fetch-json.html")'
# sc_render_text [FILE]      of each record (stdin or FILE): "URL<TAB>TEXT",
#                            TEXT the body's text: scripts, styles and tags
#                            left out, entities as written, white space
#                            runs made one space, trimmed
# sc_render_check RECORD ENTRY  the record (one JSON line) holds what the
#                            manifest ENTRY says: each "contains" in its
#                            text, no "lacks", each "count" selector's
#                            element count (by the tag's opening markup,
#                            see below), final_url; prints what differs
#
# Processes (no orphan).  The browser runs in a process group of its own
# (its pid; sc-render setpgid()s it, as puppeteer's setsid() does), which
# every Chromium child keeps after its parent dies.  So: find the groups
# while the program runs, then look for processes in them afterwards.
# sc_render_browser_groups PID [SECONDS]  waits (default 20 s) until some
#                            Chromium process descends from PID; prints the
#                            process group of each, once a line; 1 if none
# sc_render_chromium_in GROUP...  pids of live (not zombie) Chromium
#                            processes whose process group or session is
#                            one of GROUPs, one a line
# sc_render_chromium_with TEXT  pids of live Chromium processes whose
#                            command line holds TEXT (a --user-data-dir
#                            under a directory of the test's), and every
#                            live Chromium process in their groups
# sc_render_wait_gone SECONDS GROUP...  waits until sc_render_chromium_in
#                            GROUP... is empty; else prints the survivors
#                            (ps lines) on stderr and returns 1
# sc_render_reap GROUP...    SIGKILLs whatever sc_render_chromium_in finds
#                            (teardown: a failed test leaves nothing)
# sc_render_remote_addrs GROUP...  "ADDR:PORT" of each TCP connection the
#                            processes of GROUPs hold, once a line, sorted
#                            (ss -tnp): a test finds none but the fixtures'

SC_RENDER_SITE=$SC_REPO_ROOT/test/render/site
SC_RENDER_EXPECTED=$SC_RENDER_SITE/expected.json
SC_RENDER_HOST_RULES='MAP * ~NOTFOUND, EXCLUDE 127.0.0.*, EXCLUDE localhost'
export SC_RENDER_SITE SC_RENDER_EXPECTED SC_RENDER_HOST_RULES

sc_render_browser() {
	local b
	for b in "${SC_BROWSER:-}" /usr/lib/chromium/chromium-headless-shell /usr/lib/chromium/chromium; do
		if [[ -n $b && -x $b ]]; then
			printf '%s\n' "$b"
			return 0
		fi
	done
	echo "sc_render_browser: no Chromium (make deps installs chromium-headless-shell)" >&2
	return 1
}

sc_render_setup_file() {
	sc_render_browser >/dev/null || return 1
	sc_server_start --root "${1:-$SC_RENDER_SITE}" "${@:2}"
	export SC_RENDER_BROWSER_ARGS="--host-resolver-rules=$SC_RENDER_HOST_RULES"
}

sc_render_setup() {
	sc_server_reset
	cd "$BATS_TEST_TMPDIR" || return 1
}

sc_render_ref() {
	node "$SC_REPO_ROOT/test/bench/render-ref.js" "$@"
}

sc_render_site_start() {
	sc_server_start --root "$SC_RENDER_SITE" "$@"
}

sc_render_gen_site() {
	mkdir -p "$1" &&
		cp -R "$SC_RENDER_SITE/." "$1" &&
		python3 "$SC_REPO_ROOT/test/render/gen-pages.py" "$2" "$1"
}

sc_render_expected() {
	jq -c "$1" "$SC_RENDER_EXPECTED"
}

# The text of a body, as jq: what sc_render_text and sc_render_check read.
_SC_RENDER_TEXT_JQ='(.body // "")
	| gsub("(?is)<(script|style|noscript)\\b.*?</\\1\\s*>"; " ")
	| gsub("(?s)<!--.*?-->"; " ")
	| gsub("<[^>]*>"; " ")
	| gsub("\\s+"; " ")
	| ltrimstr(" ") | rtrimstr(" ")'

sc_render_text() {
	jq -r "\"\\(.url)\\t\\($_SC_RENDER_TEXT_JQ)\"" "$@"
}

# Counts are of opening tags matching a selector of the forms the manifest
# uses: TAG, .CLASS, TAG.CLASS, TAG#ID, #ID.
sc_render_check() {
	jq -rn --argjson r "$1" --argjson e "$2" "
		def text: $_SC_RENDER_TEXT_JQ;
		def count(\$sel):
			(\$sel | capture(\"^(?<tag>[a-z0-9]*)(?<kind>[.#]?)(?<name>[-_a-zA-Z0-9]*)\$\")) as \$s
			| (if \$s.tag == \"\" then \"[a-z0-9]+\" else \$s.tag end) as \$t
			| (if \$s.kind == \".\" then \"[^>]*\\\\bclass=\\\"([^\\\"]* )?\" + \$s.name + \"( [^\\\"]*)?\\\"\"
			   elif \$s.kind == \"#\" then \"[^>]*\\\\bid=\\\"\" + \$s.name + \"\\\"\"
			   else \"\" end) as \$a
			| [\$r.body // \"\" | match(\"<\" + \$t + \"\\\\b\" + \$a + \"[^>]*>\"; \"g\")] | length;
		(\$r | text) as \$txt
		| (\$e.contains // [] | map(select(. as \$m | \$txt | contains(\$m) | not)) | map(\"missing: \" + .)[]),
		  (\$e.lacks // [] | map(select(. as \$m | \$txt | contains(\$m))) | map(\"present: \" + .)[]),
		  (\$e.count // {} | to_entries[] | select(count(.key) != .value)
			| \"count \\(.key): \\(count(.key)), not \\(.value)\"),
		  (if \$e.final_url and ((\$r.final_url // \"\") | endswith(\"/\" + \$e.final_url) | not)
			then \"final_url: \\(\$r.final_url), not .../\\(\$e.final_url)\" else empty end)
	" | { ! grep .; }
}

# Whether pid $1 is a live Chromium process (its executable's name).
_sc_render_is_chromium() {
	local exe state
	exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
	[[ ${exe##*/} == chrom* ]] || return 1
	{ read -r state <"/proc/$1/stat"; } 2>/dev/null || return 1
	state=${state##*) }
	[[ ${state:0:1} != Z ]]
}

# "PID PPID PGID SID" of every process.
_sc_render_procs() {
	local stat rest
	for stat in /proc/[0-9]*/stat; do
		# read, not $(<...): no fork per process, so that a scan of a
		# loaded machine's /proc takes milliseconds, not seconds.
		{ read -r rest <"$stat"; } 2>/dev/null || continue
		# Fields after the command name, which may hold spaces: ") S PPID PGRP SESSION".
		rest=${rest##*) }
		# shellcheck disable=SC2086 # the fields are split on purpose
		set -- $rest
		printf '%s %s %s %s\n' "${stat//[^0-9]/}" "$2" "$3" "$4"
	done
}

sc_render_browser_groups() {
	local root=$1 secs=${2:-20} tries found pid ppid pgid sid
	for ((tries = 0; tries < secs * 10; tries++)); do
		# Descendants of root, breadth first.
		local -A parent_of=() group_of=()
		while read -r pid ppid pgid sid; do
			parent_of[$pid]=$ppid
			group_of[$pid]=$pgid
		done < <(_sc_render_procs)
		found=()
		for pid in "${!parent_of[@]}"; do
			local p=$pid hops=0
			while [[ -n ${parent_of[$p]:-} && $p != "$root" && $hops -lt 64 ]]; do
				p=${parent_of[$p]}
				((++hops))
			done
			if [[ $p == "$root" && $pid != "$root" ]] && _sc_render_is_chromium "$pid"; then
				found+=("${group_of[$pid]}")
			fi
		done
		unset parent_of group_of
		if ((${#found[@]})); then
			printf '%s\n' "${found[@]}" | sort -un
			return 0
		fi
		kill -0 "$root" 2>/dev/null || break
		sleep 0.1
	done
	echo "sc_render_browser_groups: no Chromium under pid $root" >&2
	return 1
}

sc_render_chromium_in() {
	local pid ppid pgid sid g
	while read -r pid ppid pgid sid; do
		for g in "$@"; do
			if [[ $pgid == "$g" || $sid == "$g" ]] && _sc_render_is_chromium "$pid"; then
				echo "$pid"
				break
			fi
		done
	done < <(_sc_render_procs)
}

sc_render_chromium_with() {
	local pid cmd groups=()
	for pid in /proc/[0-9]*; do
		pid=${pid#/proc/}
		_sc_render_is_chromium "$pid" || continue
		cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
		[[ $cmd == *"$1"* ]] && groups+=("$(awk '{ sub(/^.*\) /, ""); print $3 }' "/proc/$pid/stat")")
	done
	((${#groups[@]})) || return 0
	sc_render_chromium_in "${groups[@]}" | sort -un
}

sc_render_wait_gone() {
	local secs=$1 tries left
	shift
	for ((tries = 0; tries < secs * 10; tries++)); do
		left=$(sc_render_chromium_in "$@")
		[[ -z $left ]] && return 0
		sleep 0.1
	done
	echo "sc_render_wait_gone: Chromium processes left after ${secs} s:" >&2
	# shellcheck disable=SC2086 # one pid a word
	ps -o pid,ppid,pgid,stat,args -p "$(echo $left | tr ' ' ,)" >&2
	return 1
}

sc_render_reap() {
	local pid
	for pid in $(sc_render_chromium_in "$@"); do
		kill -KILL "$pid" 2>/dev/null
	done
	return 0
}

sc_render_remote_addrs() {
	local pids=() pid g
	# The groups' members by pgrep, not sc_render_chromium_in's walk of
	# every /proc entry: a sample takes milliseconds, not seconds.
	for g in "$@"; do
		for pid in $(pgrep -g "$g"); do
			_sc_render_is_chromium "$pid" && pids+=("$pid")
		done
	done
	((${#pids[@]})) || return 0
	# ss -p prints users:(("name",pid=N,fd=M),...) for sockets of our processes.
	ss -tnpH 2>/dev/null | while read -r _ _ _ _ peer users; do
		for pid in "${pids[@]}"; do
			if [[ $users == *"pid=$pid,"* ]]; then
				echo "$peer"
				break
			fi
		done
	done | sort -u
}
