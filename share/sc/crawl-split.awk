# crawl-split.awk: the sharding stage of crawl.mk (sc-crawl(7)).
#
# Splits one round's URL records (sc-frontier output, one JSON object per
# line with a "host" member) into chunks, so that
#   - every URL of a host is in one chunk (per-host limits hold under make -j),
#   - a host always goes to shard hash(host) mod SHARDS, whatever else is in
#     the round (the same host lands on the same worker, round after round),
#   - a chunk holds at most CHUNK URLs, unless one host alone has more;
#   - with CAP > 0, a host has at most CAP URLs in the round: the first CAP
#     of it, in the order of the input; the rest go to DIR/deferred.jsonl,
#     for the next round.
# hash() is h = (h * 31 + byte) mod (2^31 - 1) over the host's bytes: plain
# arithmetic (exact in any awk's doubles), so it is the same on every machine.
#
# Usage (crawl.mk runs it once per round; the file is read twice):
#   awk -v SHARDS=W -v CHUNK=N [-v CAP=M] -v DIR=d -f crawl-split.awk urls.jsonl urls.jsonl
# The first pass counts each host's URLs; the hosts of a shard are then
# packed, in the order they first appear, greedily into chunks named
# SHARD-NNNN; the second pass writes each URL to DIR/chunk-ID.urls.  It
# prints a makefile fragment: "CHUNKS := ID ..." (each shard's chunks with
# the largest host first, the shards in turn) and "N.ID := count" per
# chunk.  Memory is one entry per host, not per URL; at most MAX_OPEN
# chunk files are open at a time.
# Run it with LC_ALL=C, so that characters are bytes.

function host_of(line,    h) {
	if (match(line, /"host"[ \t]*:[ \t]*"[^"]*"/)) {
		h = substr(line, RSTART, RLENGTH)
		sub(/^"host"[ \t]*:[ \t]*"/, "", h)
		return substr(h, 1, length(h) - 1)
	}
	# No host member (not sc-frontier output): the URL's authority.
	if (match(line, /"url"[ \t]*:[ \t]*"[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\/"?#]*/)) {
		h = substr(line, RSTART, RLENGTH)
		sub(/^"url"[ \t]*:[ \t]*"[^:]*:\/\//, "", h)
		sub(/^.*@/, "", h)
		return tolower(h)
	}
	return "-"
}

function hash(s,    h, i) {
	h = 0
	for (i = 1; i <= length(s); i++)
		h = (h * 31 + ord[substr(s, i, 1)]) % 2147483647
	return h
}

BEGIN {
	for (i = 1; i < 256; i++)
		ord[sprintf("%c", i)] = i
	if (SHARDS < 1)
		SHARDS = 1
	if (CHUNK < 1)
		CHUNK = 1
	MAX_OPEN = 64
}

# Pass 1: hosts and their counts, in order of first appearance.
FNR == NR {
	if ($0 ~ /^[ \t]*$/)
		next
	h = host_of($0)
	if (!(h in count))
		order[++hosts] = h
	if (CAP < 1 || count[h] < CAP)
		count[h]++
	next
}

!assigned {
	assign()
}

# Pass 2: every URL to its host's chunk file.
{
	if ($0 ~ /^[ \t]*$/)
		next
	h = host_of($0)
	if (CAP > 0 && taken[h]++ >= CAP) {
		print >(DIR "/deferred.jsonl")
		next
	}
	file = DIR "/chunk-" chunk_of[h] ".urls"
	if (!(file in is_open)) {
		if (open_files >= MAX_OPEN) {
			for (f in is_open)
				close(f)
			delete is_open
			open_files = 0
		}
		if (!(file in created)) {
			created[file] = 1
			printf "" >file
			close(file)
		}
		is_open[file] = 1
		open_files++
	}
	print >>file
}

function assign(    i, h, s, id) {
	assigned = 1
	for (i = 1; i <= hosts; i++) {
		h = order[i]
		s = hash(h) % SHARDS
		if (!(s in filled)) {
			filled[s] = 0
			last[s] = 0
		} else if (filled[s] > 0 && filled[s] + count[h] > CHUNK) {
			last[s]++
			filled[s] = 0
		}
		filled[s] += count[h]
		id = sprintf("%d-%04d", s, last[s])
		chunk_of[h] = id
		urls[id] += count[h]
		if (count[h] > longest[id])
			longest[id] = count[h]
	}
}

# The chunks of shard s in the order to start them: the one with the
# largest host first (longest processing time first).  Under politeness a
# chunk lasts about as long as its largest host's URLs times that host's
# spacing, so the long chunks start while the short ones fill the other
# job slots, instead of starting last and holding the round.  Equal ones
# keep their order.  A shell sort: no gawk needed, n^1.3 for thousands.
function by_length(s,    n, i, j, gap, t) {
	n = 0
	for (i = 0; i <= last[s]; i++)
		seq[++n] = i
	for (gap = int(n / 2); gap > 0; gap = int(gap / 2))
		for (i = gap + 1; i <= n; i++) {
			t = seq[i]
			for (j = i; j > gap && later(s, seq[j - gap], t); j -= gap)
				seq[j] = seq[j - gap]
			seq[j] = t
		}
	for (i = 1; i <= n; i++)
		rank[s, i - 1] = seq[i]
}

# Whether chunk a of shard s starts after chunk b.
function later(s, a, b,    la, lb) {
	la = longest[sprintf("%d-%04d", s, a)]
	lb = longest[sprintf("%d-%04d", s, b)]
	return la < lb || (la == lb && a > b)
}

END {
	if (!assigned)
		assign()
	# Shards in turn, each shard's chunks longest first: make -j starts
	# chunks in this order, so every worker gets work before any gets a
	# second, and the long ones start first.
	printf "CHUNKS :="
	most = -1
	for (s in last) {
		by_length(s)
		if (last[s] > most)
			most = last[s]
	}
	for (i = 0; i <= most; i++)
		for (s = 0; s < SHARDS; s++)
			if ((s in last) && i <= last[s])
				printf " %d-%04d", s, rank[s, i]
	printf "\n"
	for (s = 0; s < SHARDS; s++)
		if (s in last)
			for (i = 0; i <= last[s]; i++) {
				id = sprintf("%d-%04d", s, i)
				print "N." id " := " urls[id]
			}
}
