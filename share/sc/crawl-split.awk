# crawl-split.awk: the sharding stage of crawl.mk (sc-crawl(7)).
#
# Splits one round's URL records (sc-frontier output, one JSON object per
# line with a "host" member) into chunks, so that
#   - every URL of a host is in one chunk (per-host limits hold under make -j),
#   - a host always goes to shard hash(host) mod SHARDS, whatever else is in
#     the round (the same host lands on the same worker, round after round),
#   - a chunk holds at most CHUNK URLs, unless one host alone has more.
# hash() is h = (h * 31 + byte) mod (2^31 - 1) over the host's bytes: plain
# arithmetic (exact in any awk's doubles), so it is the same on every machine.
#
# It runs in three stages (crawl.mk pipes them through sort(1)):
#   awk -v stage=hosts -v SHARDS=W urls.jsonl | sort -k1,1n -k2,2n -k3,3
#       prints "shard hash host count" per host;
#   awk -v stage=assign -v CHUNK=N hosts urls.jsonl | sort -s -k1,1
#       packs the hosts of each shard, in that order, greedily into chunks
#       named SHARD-NNNN and prints "chunk<TAB>record" per URL;
#   awk -v stage=write -v DIR=d
#       writes each chunk to DIR/chunk-ID.urls (one file open at a time)
#       and prints the chunk names.
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
	if (stage == "hosts" && SHARDS < 1)
		SHARDS = 1
}

stage == "hosts" {
	if ($0 ~ /^[ \t]*$/)
		next
	h = host_of($0)
	if (!(h in count))
		order[++hosts] = h
	count[h]++
	next
}

stage == "assign" && FNR == NR {
	# "shard hash host count", sorted: hosts of a shard in hash order.
	if (!started || $1 != shard) {
		started = 1
		shard = $1
		chunk = 0
		filled = 0
	} else if (filled > 0 && filled + $4 > CHUNK) {
		chunk++
		filled = 0
	}
	filled += $4
	chunk_of[$3] = sprintf("%s-%04d", shard, chunk)
	next
}

stage == "assign" {
	if ($0 ~ /^[ \t]*$/)
		next
	print chunk_of[host_of($0)] "\t" $0
	next
}

stage == "write" {
	tab = index($0, "\t")
	id = substr($0, 1, tab - 1)
	if (id != current) {
		if (current != "")
			close(file)
		current = id
		file = DIR "/chunk-" id ".urls"
		printf "" >file
		print id
	}
	print substr($0, tab + 1) >>file
}

END {
	if (stage == "hosts")
		for (i = 1; i <= hosts; i++)
			print hash(order[i]) % SHARDS, hash(order[i]), order[i], count[order[i]]
}
