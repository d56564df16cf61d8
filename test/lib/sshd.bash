# Bats helpers for a throw-away sshd on loopback (test/scaleout.bats).
#
# sshd_start NAMES...  starts /usr/sbin/sshd on a free 127.0.0.1 port with a
#                      new host key and an authorized key in a temp dir, and
#                      writes an ssh config there with one Host alias per
#                      NAME, each sending SC_WORKER=NAME (SetEnv; the sshd
#                      accepts it), so that every worker is a real remote
#                      login with its own processes and environment.
#                      Exports SSHD_DIR, SSHD_PID and
#                      PARALLEL_SSH="ssh -F $SSHD_DIR/ssh_config".
#                      Returns 1 with SSHD_SKIP set to the reason when sshd
#                      cannot start here.
# sshd_stop            stops it and removes SSHD_DIR.
# need_sshd            in a test: skips it, saying why, when sshd_start
#                      could not start one (SSHD_SKIP, exported by the
#                      suite's setup_file).
#
# Remote sessions get PATH=$SC_BIN:/usr/bin:/bin and a HOME of their own
# (SetEnv), as a fresh worker machine would: no shell start-up files of the
# user running the tests, and sc's programs under test on PATH.

# shellcheck disable=SC2034 # SSHD_SKIP is read by the suites
sshd_start() {
	SSHD_SKIP=
	local sshd=/usr/sbin/sshd
	if [[ ! -x $sshd ]]; then
		SSHD_SKIP="no $sshd (make deps installs openssh-server)"
		return 1
	fi
	# sshd's privilege separation directory is compiled in.
	if [[ ! -d /run/sshd ]] && ! { mkdir -p /run/sshd && chmod 755 /run/sshd; } 2>/dev/null; then
		SSHD_SKIP="sshd needs /run/sshd, which cannot be created here"
		return 1
	fi
	local tmp_base=${BATS_FILE_TMPDIR:-${TMPDIR:-/tmp}}
	SSHD_DIR=$(mktemp -d "$tmp_base/sshd.XXXXXX") || return 1
	local d=$SSHD_DIR
	mkdir -p "$d/home"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$d/id" || return 1
	cp "$d/id.pub" "$d/authorized_keys"
	chmod 600 "$d/authorized_keys"
	local port tries
	for ((tries = 0; tries < 20; tries++)); do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat >"$d/sshd_config" <<-EOF
			Port $port
			ListenAddress 127.0.0.1
			HostKey $d/host_key
			PidFile $d/sshd.pid
			AuthorizedKeysFile $d/authorized_keys
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			UsePAM no
			StrictModes no
			PermitRootLogin prohibit-password
			AcceptEnv SC_WORKER
			SetEnv PATH=$SC_BIN:/usr/bin:/bin HOME=$d/home
			MaxStartups 100
			MaxSessions 100
			LogLevel ERROR
		EOF
		"$sshd" -f "$d/sshd_config" -D -e 2>>"$d/sshd.log" 3>&- &
		SSHD_PID=$!
		sleep 0.2
		kill -0 "$SSHD_PID" 2>/dev/null && break
		SSHD_PID=
	done
	if [[ -z $SSHD_PID ]]; then
		SSHD_SKIP="sshd does not start: $(tail -1 "$d/sshd.log")"
		return 1
	fi
	local name
	{
		for name in "$@"; do
			printf 'Host %s\n\tSetEnv SC_WORKER=%s\n' "$name" "$name"
		done
		cat <<-EOF
			Host *
			 HostName 127.0.0.1
			 Port $port
			 User $(id -un)
			 IdentityFile $d/id
			 IdentitiesOnly yes
			 StrictHostKeyChecking no
			 UserKnownHostsFile /dev/null
			 BatchMode yes
			 LogLevel ERROR
		EOF
	} >"$d/ssh_config"
	PARALLEL_SSH="ssh -F $d/ssh_config"
	export SSHD_DIR SSHD_PID PARALLEL_SSH
	for ((tries = 0; tries < 50; tries++)); do
		[[ $(ssh -F "$d/ssh_config" "$1" 'echo $SC_WORKER' 2>/dev/null) == "$1" ]] && return 0
		sleep 0.2
	done
	SSHD_SKIP="cannot log in to the test sshd: $(tail -1 "$d/sshd.log")"
	sshd_stop
	return 1
}

sshd_stop() {
	if [[ -n ${SSHD_PID:-} ]]; then
		kill "$SSHD_PID" 2>/dev/null
		wait "$SSHD_PID" 2>/dev/null
	fi
	[[ -n ${SSHD_DIR:-} ]] && rm -rf "$SSHD_DIR"
	unset SSHD_PID SSHD_DIR
	return 0
}

need_sshd() {
	[[ -z ${SSHD_SKIP:-} ]] || skip "$SSHD_SKIP"
}
