# Shared by the WARC suites (sc-warc, sc-fetch-warc, crawl-warc,
# warc-wget): the independent readers every archive the tests write goes
# through, none of them sc's code.  warcio is npm's (pinned in test/npm,
# installed by make deps); the Node scripts use warcio's parser and
# node:crypto only.

WARCIO="$BATS_TEST_DIRNAME/npm/node_modules/.bin/warcio"
# test/lib/warc-digests.mjs FILE...: recomputes both digests of every
# record ("... N bad" last); warc-responses.mjs: each response's URL,
# status and payload SHA-1.
# shellcheck disable=SC2034 # read by the suites
DIGESTS="$BATS_TEST_DIRNAME/lib/warc-digests.mjs"
# shellcheck disable=SC2034 # read by the suites
RESPONSES="$BATS_TEST_DIRNAME/lib/warc-responses.mjs"

# Fails the test (it never skips) when a reader is missing.
warc_readers_present() {
	[[ -x $WARCIO ]] || fail "warcio is not installed (make deps installs it under test/npm)"
	command -v node >/dev/null || fail "node is not installed (make deps)"
}

# warcio's CDXJ of the files, sorted bytewise as sc-warc cdx sorts; fails
# the test if warcio exits non-zero or writes anything on stderr.
warcio_cdx() {
	local status=0
	"$WARCIO" cdx-index "$@" >warcio.out 2>warcio.err || status=$?
	[[ $status -eq 0 ]] || fail "warcio exited $status on $*: $(cat warcio.err)"
	[[ ! -s warcio.err ]] || fail "warcio wrote on stderr for $*: $(cat warcio.err)"
	LC_ALL=C sort warcio.out
}

# warc_checked FILE...: every file passes sc-warc check and warcio_cdx
# (exit 0, nothing on stderr); prints warcio's CDXJ of all of them,
# sorted.  One run of each over all the files: a crawl writes a WARC per
# chunk, and node's start-up is most of warcio's time on a small one.
warc_checked() {
	run -0 sc-warc check "$@"
	warcio_cdx "$@"
}
