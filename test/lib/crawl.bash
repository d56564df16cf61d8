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
# check_crawl D HOSTS...    the crawl in DIR c holds exactly the pages of
#                           the link graph of HOSTS within D links of their
#                           seeds, and the server was asked for each once;
#                           leaves the lists in expected and expected.urls
# host_gaps                 "HOST GAP" per host the server was asked more
#                           than once: the smallest gap (ms) between two
#                           consecutive arrivals of its requests, robots.txt
#                           included, from /log

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

check_crawl() {
	local depth=$1 h
	shift
	for h in "$@"; do expected_pages "http://$h:$SC_PORT" "$depth"; done | LC_ALL=C sort >expected
	crawled_pages c >crawled
	diff -u expected crawled
	cut -d' ' -f2 expected | LC_ALL=C sort >expected.urls
	requested_urls >requested
	diff -u expected.urls requested
}

host_gaps() {
	# shellcheck disable=SC2016 # jq's variables
	sc_server_log 'group_by(.host) | .[] | select(length > 1) | (map(.t_ms) | sort) as $t |
		"\(.[0].host) \([range(1; $t | length) as $i | $t[$i] - $t[$i - 1]] | min)"' | jq -r .
}
