#!/usr/bin/env bash
# irqres analyze against the bare libtracecmd loop on a trace of more than 50 million
# records, built from the recorded big-v6.dat by bench/analyze/make_big.py (9 copies of
# its ring-buffer pages, on 4 CPUs). Wall time, CPU time and peak RSS of each, run side
# by side (the two tools alternate), medians over RUNS runs, as a Markdown table.
#
#   RUNS=3 bash bench/analyze/run-big.sh       # bench/analyze/run.sh records big-v6 first
#
# Needs about 2.8 GB in $DIR50 (default /var/tmp/irqres-bench50).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${DIR:-/var/tmp/irqres-bench}
DIR50=${DIR50:-/var/tmp/irqres-bench50}
RUNS=${RUNS:-3}
BUILD=$ROOT/build/bench
mkdir -p "$DIR50" "$BUILD"
[ -s "$DIR/big-v6.dat" ] || { echo "$DIR/big-v6.dat missing: run bench/analyze/run.sh" >&2; exit 1; }

# shellcheck disable=SC2046
cc -O2 -Wall -Wextra -Wno-unused-parameter -o "$BUILD/bareloop" "$ROOT/bench/analyze/bareloop.c" \
	$(pkg-config --cflags --libs libtracecmd)
PY=$(python3 -c 'import sys; print(sys.executable)')
BIG=$DIR50/big50-v6.dat
[ -s "$BIG" ] || "$PY" "$ROOT/bench/analyze/make_big.py" "$DIR/big-v6.dat" 9 "$BIG"
cat "$BIG" > /dev/null   # in the page cache for both tools

FMT="%e %U %S %M"
one() {
	local out
	case $1 in
	analyze) out=$( { PYTHONPATH="$ROOT/analysis" /usr/bin/time -f "$FMT" "$PY" -m irqres \
		analyze "$BIG" --json >/dev/null; } 2>&1 | tail -1) ;;
	bareloop) out=$( { /usr/bin/time -f "$FMT" "$BUILD/bareloop" "$BIG" >/dev/null; } 2>&1 | tail -1) ;;
	esac
	echo "$out" | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A W C R
for _ in $(seq "$RUNS"); do
	for tool in bareloop analyze; do
		read -r w c r < <(one $tool)
		W[$tool]+="$w "; C[$tool]+="$c "; R[$tool]+="$r "
	done
done
records=$("$BUILD/bareloop" "$BIG" | awk '{ print $1 }')
echo "| tool | records | wall s | CPU s (user+sys) | peak RSS MB |"
echo "|---|---|---|---|---|"
for tool in bareloop analyze; do
	w=$(tr ' ' '\n' <<<"${W[$tool]}" | grep . | median)
	c=$(tr ' ' '\n' <<<"${C[$tool]}" | grep . | median)
	r=$(tr ' ' '\n' <<<"${R[$tool]}" | grep . | median)
	echo "| $tool | $records | $w (${W[$tool]% }) | $c (${C[$tool]% }) | $((r / 1024)) ($(for x in ${R[$tool]}; do printf '%s ' $((x / 1024)); done | sed 's/ $//')) |"
done
