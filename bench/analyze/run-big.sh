#!/usr/bin/env bash
# irqres analyze against the bare libtracecmd loop on a trace of more than 50 million
# records, built from the recorded big-v6.dat by bench/analyze/make_big.py (9 copies of
# its ring-buffer pages, on 4 CPUs). Wall time, CPU time, peak RSS, peak anonymous RSS
# and peak file-backed RSS (bench/analyze/peakmem.py) of each, run side by side (the
# tools alternate), medians over RUNS runs, as a Markdown table; then each tool's wall
# and CPU time over the bare loop's of the same round, median over the rounds. BASE=DIR adds the analyze of another
# checkout (its analysis/ with the extension built in place), e.g. the previous commit.
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

one() {
	case $1 in
	analyze) PYTHONPATH="$ROOT/analysis" "$PY" "$ROOT/bench/analyze/peakmem.py" "$PY" -m irqres \
		analyze "$BIG" --json ;;
	base) PYTHONPATH="$BASE/analysis" "$PY" "$ROOT/bench/analyze/peakmem.py" "$PY" -m irqres \
		analyze "$BIG" --json ;;
	bareloop) "$PY" "$ROOT/bench/analyze/peakmem.py" "$BUILD/bareloop" "$BIG" ;;
	esac
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
col() { tr ' ' '\n' <<<"$1" | grep .; }

TOOLS="bareloop analyze${BASE:+ base}"
declare -A W C R A F WR CR
echo "$(date -u '+%F %H:%M') UTC, commit $(git -C "$ROOT" rev-parse --short HEAD)," \
	"load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$RUNS"); do
	for tool in $TOOLS; do
		read -r w c r a f < <(one "$tool")
		W[$tool]+="$w "; C[$tool]+="$c "; R[$tool]+="$((r / 1024)) "; A[$tool]+="$((a / 1024)) "
		F[$tool]+="$((f / 1024)) "
		[ "$tool" = bareloop ] && { bw=$w; bc=$c; }
		WR[$tool]+="$(awk -v a="$w" -v b="$bw" 'BEGIN { printf "%.2f", a / b }') "
		CR[$tool]+="$(awk -v a="$c" -v b="$bc" 'BEGIN { printf "%.2f", a / b }') "
	done
done
echo "$(date -u '+%H:%M') UTC, load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
records=$("$BUILD/bareloop" "$BIG" | awk '{ print $1 }')
echo "| tool | records | wall s | CPU s (user+sys) | peak RSS MB | peak anon RSS MB | peak file RSS MB | wall / bare loop | CPU / bare loop |"
echo "|---|---|---|---|---|---|---|---|---|"
for tool in $TOOLS; do
	printf '| %s | %s |' "$tool" "$records"
	for v in "${W[$tool]}" "${C[$tool]}" "${R[$tool]}" "${A[$tool]}" "${F[$tool]}" \
		"${WR[$tool]}" "${CR[$tool]}"; do
		printf ' %s (%s) |' "$(col "$v" | median)" "${v% }"
	done
	echo
done
