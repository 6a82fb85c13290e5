#!/bin/sh
# SPDX-License-Identifier: MIT
# A/B of two bench-engine binaries (say, a base commit's and HEAD's) on a
# busy machine: runs them alternately, A B A B ..., N pairs, each with
# --model-only (plus the options given after the binaries), and prints
# each run's packet-hops per CPU second, each pair's ratio B/A and the
# median ratio. CPU seconds (getrusage, not wall) and alternation keep
# other jobs' load out of the ratio. Also prints both binaries' packet
# latency sums: equal sums, same simulation; the script exits 1 if any
# run's sum differs from the first run's, 2 on a usage or run error.
#
#   bench/engine-ab.sh [-n PAIRS] A/bench-engine B/bench-engine [OPTS...]
#   bench/engine-ab.sh -n 7 ../base/build/bench/bench-engine \
#       build/bench/bench-engine
set -eu

PAIRS=5
if [ "${1:-}" = "-n" ]; then
	PAIRS=$2
	shift 2
fi
if [ $# -lt 2 ]; then
	sed -n '3,14s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
A=$1
B=$2
shift 2
for f in "$A" "$B"; do
	[ -x "$f" ] || { echo "engine-ab.sh: $f: not executable" >&2; exit 2; }
done

OUT=$(mktemp /tmp/engine-ab.XXXXXX)
trap 'rm -f "$OUT"' EXIT

# One run of binary $2 (label $1): "label hops_per_cpu_s latency_sum".
run() {
	who=$1
	bin=$2
	shift 2
	"$bin" --model-only "$@" >"$OUT" 2>&1 || {
		cat "$OUT" >&2
		echo "engine-ab.sh: $bin failed" >&2
		exit 2
	}
	awk -v who="$who" '
		/packet latency:/ { s = $0; sub(/.*\(sum /, "", s);
				    sub(/ ps.*/, "", s); sum = s }
		/packet-hops per second:/ { cpu = $(NF - 2) }
		END { if (sum == "" || cpu == "") exit 1;
		      print who, cpu, sum }' "$OUT"
}

printf '%-5s %14s %14s %8s  %s\n' pair "A M hops/CPU s" "B M hops/CPU s" \
	"B/A" "latency sums A, B (ps)"
i=1
RATIOS=
SUMS=
while [ "$i" -le "$PAIRS" ]; do
	ra=$(run A "$A" "$@") || exit 2
	rb=$(run B "$B" "$@") || exit 2
	line=$(printf '%s\n%s\n' "$ra" "$rb" | awk -v i="$i" '
		$1 == "A" { a = $2; sa = $3 }
		$1 == "B" { b = $2; sb = $3 }
		END { printf "%-5s %14.3f %14.3f %8.4f  %s %s\n",
			     i, a, b, b / a, sa, sb }')
	echo "$line"
	RATIOS="$RATIOS $(echo "$line" | awk '{ print $4 }')"
	SUMS="$SUMS $(echo "$line" | awk '{ print $5, $6 }')"
	i=$((i + 1))
done

echo "$RATIOS" | tr ' ' '\n' | sed '/^$/d' | sort -g | awk '
	{ r[NR] = $1 }
	END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2;
	      printf "median B/A %.4f (min %.4f, max %.4f, %d pairs)\n",
		     m, r[1], r[NR], NR }'
first=$(echo "$SUMS" | awk '{ print $1 }')
echo "$SUMS" | awk -v first="$first" '
	{ for (i = 1; i <= NF; i++) if ($i != first) bad = $i }
	END { if (bad != "") {
		printf "latency sums DIFFER: %s and %s ps\n", first, bad;
		exit 1 }
	      printf "latency sums: every run of A and B %s ps: identical\n",
		     first }'
