# shellcheck shell=bash
# The golden records' normalisation, shared by golden.bats and
# sc-fetch-warc.bats (which compares sc-fetch --warc's records with the same
# golden files): only what differs from run to run goes, on the raw lines
# with sed (jq would write every string again in its own escaping and hide
# the very bytes the golden files guard).
#
# The server's port, timings and dates go; a retry's wait is jittered (from
# one random stream shared by all records, drawn in the order attempts end,
# which the machine's load changes), so only whether there was one stays:
# any wait is 1, and so is the wait of every attempt after the first,
# whatever was drawn (0 included).  Needs SC_PORT (lib/server.bash).
sc_golden_normalize() {
	sed -E \
		-e "s/127\\.0\\.0\\.1:$SC_PORT/127.0.0.1:PORT/g" \
		-e 's/"(elapsed_ms|latency_ms|queue_ms|dns_ms|connect_ms|tls_ms|ttfb_ms|redirect_ms|total_ms)":[0-9.e+-]+/"\1":0/g' \
		-e 's/"(fetched_at|ts)":"[^"]*"/"\1":"T"/g' \
		-e 's/"wait_ms":[1-9][0-9]*/"wait_ms":1/g' \
		-e 's/("attempt":([2-9]|[1-9][0-9]+),[^{}]*"wait_ms":)[0-9]+/\11/g' \
		-e 's/after [0-9]+ milliseconds/after N milliseconds/g'
}
