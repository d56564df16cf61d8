#!/bin/sh
# Hadoop Streaming reducer for a crawl round (sc-crawl(7), "Hadoop
# Streaming"): the "HOST<TAB>RECORD" lines of this partition's hosts, key
# removed, through sc-fetch and sc-parse; records on standard output.
# sc-fetch's metrics lines (a summary every --stats-every seconds) become
# "reporter:status:" lines on standard error, so that a long fetch is not
# killed as idle.  Arguments are sc-fetch options; SC_PARSE_ARGS holds
# sc-parse's.  Exits 0 when sc-parse finished (3, some records not ok, is
# data), else with sc-parse's status, so that Hadoop runs the task again.
# shellcheck disable=SC2086 # SC_PARSE_ARGS is a list of words
cut -f2- |
	{ sc-fetch -q --stats-every 10 "$@" 2>&1 >&3 | sed -u 's/^/reporter:status:/' >&2; } 3>&1 |
	sc-parse ${SC_PARSE_ARGS:-}
s=$?
[ "$s" -eq 3 ] && s=0
exit "$s"
