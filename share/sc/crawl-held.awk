# crawl-held.awk: the held step of crawl.mk (sc-crawl(7)).
#
# Prints the URL records of a round that sc-fetch deferred (--defer-after:
# their host was held past the bound), as the split wrote them to the
# chunk's .urls file (with their depth, host and origin), so that they head
# the next round's URLs.  A deferred record is one whose error kind is
# "deferred"; it and its URL record are matched by their "url" member's
# JSON text, which sc-fetch copies from its input.
#
# Usage (crawl.sh's step_held):
#   awk -f crawl-held.awk round-N/chunk-*.jsonl round-N/chunk-*.urls
# The records (*.jsonl) come first; every line of a *.urls file whose URL
# was deferred is printed, once.
# Run it with LC_ALL=C, so that characters are bytes.

function url_of(line) {
	if (match(line, /"url"[ \t]*:[ \t]*"([^"\\]|\\.)*"/)) {
		u = substr(line, RSTART, RLENGTH)
		sub(/^"url"[ \t]*:[ \t]*/, "", u)
		return u
	}
	return ""
}

FILENAME ~ /\.jsonl$/ {
	if (index($0, "\"kind\":\"deferred\"") && (u = url_of($0)) != "")
		held[u] = 1
	next
}

(u = url_of($0)) != "" && held[u] == 1 {
	held[u] = 2
	print
}
