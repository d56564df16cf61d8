# Bats helpers for crawls with share/sc/crawl.mk (test/crawl.bats,
# test/scaleout.bats).  Load after lib/server.
#
# crawl_make ARGS...        make -f crawl.mk ARGS... (output in $output)
# expected_pages BASE D     "DEPTH URL" of every page of the fixture's link
#                           graph within D links of BASE/page/1, sorted
# crawled_pages DIR         "DEPTH URL" of every record in DIR/pages.jsonl
# requested_urls            every page URL the fixture server was asked
#                           for, once per request, from /log (robots.txt,
#                           which sc-fetch --robots asks for, left out)
# seeds_for HOSTS...        BASE/page/1 for each 127.0.0.x of HOSTS

CRAWL_MK=$SC_REPO_ROOT/share/sc/crawl.mk
# Byte order for every sort and comm here and in the suites.
export LC_ALL=C

crawl_make() {
	make -f "$CRAWL_MK" --no-print-directory "$@"
}

expected_pages() {
	awk -v START=1 -v D="$2" -f "$SC_REPO_ROOT/test/lib/page-graph.awk" |
		awk -v base="$1" '{ print $1, base $2 }' | LC_ALL=C sort
}

crawled_pages() {
	jq -r '"\(.depth) \(.url)"' "$1/pages.jsonl" | LC_ALL=C sort
}

requested_urls() {
	sc_server_log '.[] | select(.path != "/robots.txt") | "http://\(.host)\(.path)"' |
		jq -r . | LC_ALL=C sort
}

seeds_for() {
	local h
	for h in "$@"; do echo "http://$h:$SC_PORT/page/1"; done
}
