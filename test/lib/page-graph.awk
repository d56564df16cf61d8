# The fixture server's /page/N link graph, crawled breadth-first by hand:
#     awk -v START=1 -v D=3 -f page-graph.awk
# prints "DEPTH PATH" for every page within D links of /page/START.  It
# follows sc-testserver.c's build_page(): page N links to /page/N+1,
# /page/N+2, /page/N+3?x=1, /page/N+4 and /page/(N/2), whatever its query.
function add(p, d) {
	if (!(p in depth)) {
		depth[p] = d
		queue[++tail] = p
	}
}
function number(p,    s) {
	s = p
	sub(/^\/page\//, "", s)
	sub(/\?.*/, "", s)
	return s + 0
}
BEGIN {
	add("/page/" START, 0)
	for (head = 1; head <= tail; head++) {
		p = queue[head]
		if (depth[p] >= D)
			continue
		n = number(p)
		add("/page/" (n + 1), depth[p] + 1)
		add("/page/" (n + 2), depth[p] + 1)
		add("/page/" (n + 3) "?x=1", depth[p] + 1)
		add("/page/" (n + 4), depth[p] + 1)
		add("/page/" int(n / 2), depth[p] + 1)
	}
	for (i = 1; i <= tail; i++)
		print depth[queue[i]], queue[i]
}
