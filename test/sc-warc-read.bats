#!/usr/bin/env bats
# sc-warc reading gzip members (lib/warc/gz.c): libdeflate inflates a
# member whole when it can (more room asked for a member that does not fit
# at first), zlib takes the members it cannot (past 64 MiB, a header with
# a CRC-16) and says what is wrong with a bad one.  A .warc.gz must read
# exactly as the same records plain.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load 'lib/server'

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Writes NAME.warc (plain) and NAME.warc.gz (a member per record) holding
# a response of each size given (bytes of body), digests right.  With
# FHCRC=1 every member's header carries a CRC-16 (FHCRC=bad: a wrong one);
# with BADCRC=N the Nth member's CRC-32 is wrong.
make_warc() {
	local name=$1
	shift
	NAME=$name FHCRC=${FHCRC:-} BADCRC=${BADCRC:-} python3 - "$@" <<'EOF'
import base64, hashlib, os, struct, sys, zlib
name, fhcrc, badcrc = os.environ["NAME"], os.environ["FHCRC"], os.environ["BADCRC"]

def b32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()

def record(i, size):
    body = (b"<p>%d \"quoted\" text</p>\n" % i) * (size // 10 + 1)
    body = body[:size]
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    head = ("WARC/1.1\r\nWARC-Type: response\r\n"
            "WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-%012d>\r\n"
            "WARC-Date: 2026-12-01T10:00:00Z\r\nWARC-Target-URI: http://127.0.0.1/%d\r\n"
            "WARC-Block-Digest: %s\r\nWARC-Payload-Digest: %s\r\n"
            "Content-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n"
            % (i, i, b32(http), b32(body), len(http))).encode()
    return head + http + b"\r\n\r\n"

def member(data, n):
    flags = 2 if fhcrc else 0
    header = bytes([0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 255])
    if fhcrc:
        crc16 = zlib.crc32(header) & 0xffff
        header += struct.pack("<H", crc16 ^ 1 if fhcrc == "bad" else crc16)
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    crc = zlib.crc32(data) ^ (1 if badcrc == str(n) else 0)
    return header + z.compress(data) + z.flush() + struct.pack("<II", crc, len(data) & 0xffffffff)

records = [record(i, int(s)) for i, s in enumerate(sys.argv[1:], 1)]
with open(name + ".warc", "wb") as f:
    f.write(b"".join(records))
with open(name + ".warc.gz", "wb") as f:
    f.write(b"".join(member(r, n) for n, r in enumerate(records, 1)))
EOF
}

@test "members that fit, need twice and four times the first room, and pass 64 MiB read as the plain file" {
	make_warc big 100 3000000 5000000 70000000 200
	run --separate-stderr sc-warc check big.warc.gz
	assert_success
	assert_equal "$stderr" '{"files":1,"records":5,"bad":0}'
	# The same records but for where they are ("warc": file, offset, length).
	sc-warc records -q big.warc.gz | sed 's/"warc":{[^}]*}//' > gz.jsonl
	sc-warc records -q big.warc | sed 's/"warc":{[^}]*}//' > plain.jsonl
	assert_equal "$(grep -o '"bytes":[0-9]*' gz.jsonl | tr '\n' ' ')" \
		'"bytes":100 "bytes":3000000 "bytes":5000000 "bytes":70000000 "bytes":200 '
	cmp gz.jsonl plain.jsonl
}

@test "a member whose header has a CRC-16 is read by zlib, and a wrong one is zlib's error" {
	FHCRC=1 make_warc good 100 2000000
	run --separate-stderr sc-warc check good.warc.gz
	assert_success
	assert_equal "$stderr" '{"files":1,"records":2,"bad":0}'
	FHCRC=bad make_warc bad 100
	run -3 --separate-stderr sc-warc check -q bad.warc.gz
	assert_equal "$stderr" "sc-warc: bad.warc.gz:0: corrupt gzip member: header crc mismatch"
}

@test "a member with a wrong CRC-32 is zlib's 'incorrect data check', and the next member is read" {
	BADCRC=2 make_warc crc 100 2000000 300
	run -3 --separate-stderr sc-warc check crc.warc.gz
	# The bad member begins where the first (whole) one ends.
	offset=$(sc-warc records -q crc.warc.gz | head -1 | jq '.warc.length')
	assert_equal "$(printf '%s\n' "$stderr" | head -1)" \
		"sc-warc: crc.warc.gz:$offset: corrupt gzip member: incorrect data check"
	assert_equal "$(printf '%s\n' "$stderr" | tail -1)" '{"files":1,"records":3,"bad":1}'
}
