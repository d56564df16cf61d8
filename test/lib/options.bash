# Bats helpers for what every program's command line refuses (lib/kit/opt:
# no option's value may hold a CR, LF or NUL; issue 26).  Load after
# bats-support and bats-assert.
#
# options_with_argument PROG   the options of PROG that take an argument,
#                              one a line, as its --help names them
#                              ("--user-agent", or a letter: "-A"), so that
#                              an option added later is tried too
# refuses_line_breaks PROG N [L=LONG...] [-- INPUT]
#                              each of those options, given a value with
#                              CR LF, with LF and with CR, exits 2 with
#                              "PROG: --LONG: a value may not hold a CR, LF
#                              or NUL" and the --help hint on stderr and
#                              nothing on stdout (L=LONG: the long name of
#                              letter L); fails unless at least N options
#                              were tried.  INPUT (default: none) is
#                              standard input.

options_with_argument() {
	"$1" --help | grep -oE '\[(-[A-Za-z]|--[a-z-]+) [^]|]+\]' | sed -E 's/^\[([^ ]+) .*/\1/'
}

refuses_line_breaks() {
	local prog=$1 least=$2 opt long value tried=0 input='' pair
	local -A longs=()
	shift 2
	while (($# > 0)); do
		if [[ $1 == -- ]]; then
			input=$2
			break
		fi
		longs[${1%%=*}]=${1#*=}
		shift
	done
	while read -r opt; do
		long=$opt
		[[ $opt == --* ]] || long=--${longs[${opt#-}]:?"$prog: no long name given for $opt"}
		for value in $'v\r\nX-Evil: 1' $'v\nX-Evil: 1' $'v\rX-Evil: 1'; do
			run -2 --separate-stderr "$prog" "$opt" "$value" <<<"$input"
			pair="$prog $opt"
			# shellcheck disable=SC2154 # bats' run sets stderr
			[[ $stderr == "$prog: $long: a value may not hold a CR, LF or NUL
Try '$prog --help' for more information." ]] || fail "$pair: $stderr"
			[[ -z $output ]] || fail "$pair wrote: $output"
		done
		tried=$((tried + 1))
	done < <(options_with_argument "$prog")
	((tried >= least)) || fail "$prog: only $tried options found in --help"
}
