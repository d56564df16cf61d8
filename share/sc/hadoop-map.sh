#!/bin/sh
# Hadoop Streaming mapper for a crawl round (sc-crawl(7), "Hadoop
# Streaming"): reads URL records (sc-frontier output) and writes
# "HOST<TAB>RECORD", so that KeyFieldBasedPartitioner on field 1 sends every
# URL of a host to the same reducer.  A record without a host member gets
# the key "-".
exec awk '{
	h = "-"
	if (match($0, /"host"[ \t]*:[ \t]*"[^"]*"/)) {
		h = substr($0, RSTART, RLENGTH)
		sub(/^"host"[ \t]*:[ \t]*"/, "", h)
		sub(/"$/, "", h)
	}
	print h "\t" $0
}'
