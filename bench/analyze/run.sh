#!/usr/bin/env bash
# Benchmark `irqres analyze` against `trace-cmd report > /dev/null` and a bare C loop over
# tracecmd_iterate_events on the same multi-million-event traces. Wall time and peak RSS
# and CPU time (user + sys) and peak RSS (/usr/bin/time), medians over RUNS runs (each
# run's value in brackets), printed as a Markdown table.
#
#   bash bench/analyze/run.sh            # records the traces first if they are missing
#   RUNS=5 DIR=/var/tmp/irqres-bench bash bench/analyze/run.sh
#   TOOLS="analyze analyze-seq" bash bench/analyze/run.sh   # some of the tools only
#   BEFORE=/tmp/old TOOLS="analyze-before analyze" bash bench/analyze/run.sh
#
# analyze-before is analyze from another checkout (BEFORE: its root, with the extension
# built in place: `python3 setup.py build_ext --inplace`), for before/after in one run.
#
# analyze-seq is analyze with IRQRES_READ_THREADS=1 (the trace decoded by one thread),
# analyze-par with IRQRES_READ_THREADS=2 (two workers, however busy the machine is);
# plain analyze starts a worker per idle core.
#
# The traces are recorded on this host with `irqres record` (root): a pipe ping-pong
# (bench/analyze/pingpong.c, about 4.3 events per round trip) plus the fake IRQ thread of
# tests/data/fake_irq.py. They stay out of git, under $DIR.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${DIR:-/var/tmp/irqres-bench}
RUNS=${RUNS:-3}
BUILD=$ROOT/build/bench
mkdir -p "$DIR" "$BUILD"

CFLAGS="-O2 -Wall -Wextra -Wno-unused-parameter"
# shellcheck disable=SC2046
cc $CFLAGS -o "$BUILD/bareloop" "$ROOT/bench/analyze/bareloop.c" $(pkg-config --cflags --libs libtracecmd)
cc $CFLAGS -o "$BUILD/pingpong" "$ROOT/bench/analyze/pingpong.c"
# irqres from this checkout (its extension is built in place by `make python`), whatever
# the state of the pip installation. The interpreter is resolved once, as the shebang of
# an installed console script is: a version-manager shim (pyenv) in front of python3
# would add its own start-up (~0.1 s) to every run.
PY=$(python3 -c 'import sys; print(sys.executable)')
cat > "$BUILD/irqres" <<SH
#!/bin/sh
PYTHONPATH="$ROOT/analysis\${PYTHONPATH:+:\$PYTHONPATH}" exec "$PY" -c \\
	'import sys; from irqres.cli import main; sys.argv[0] = "irqres"; main()' "\$@"
SH
chmod +x "$BUILD/irqres"
IRQRES=$BUILD/irqres
if [ -n "${BEFORE:-}" ]; then
	sed "s|$ROOT/analysis|$BEFORE/analysis|" "$IRQRES" > "$BUILD/irqres-before"
	chmod +x "$BUILD/irqres-before"
fi

# record NAME ROUNDS FAKE_IRQ_COUNT: a compressed trace as trace-cmd extract writes it
# (file version 7), then the same events uncompressed (version 6, as trace-cmd record
# writes by default)
record() {
	local name=$1 rounds=$2 count=$3
	if [ ! -s "$DIR/$name.dat" ]; then
		"$IRQRES" record -o "$DIR/$name.dat" --buffer-kb 300000 -- sh -c \
			"python3 '$ROOT/tests/data/fake_irq.py' --count $count --period-us 1000 & \
			 '$BUILD/pingpong' $rounds; wait"
	fi
	if [ ! -s "$DIR/$name-v6.dat" ]; then
		trace-cmd convert -i "$DIR/$name.dat" -o "$DIR/$name-v6.dat" --file-version 6 \
			--compression none >/dev/null
	fi
}
record big 1300000 6000
record quarter 325000 1500

# one TOOL FILE: "wall_s cpu_s maxrss_kb" of one run (cpu = user + sys)
FMT="%e %U %S %M"
one() {
	local tool=$1 file=$2 out
	case $tool in
	analyze) out=$( { /usr/bin/time -f "$FMT" "$IRQRES" analyze "$file" --period 2ms \
		--target-prob 0.9 --json >/dev/null; } 2>&1 | tail -1) ;;
	analyze-before) out=$( { /usr/bin/time -f "$FMT" "$BUILD/irqres-before" analyze "$file" \
		--period 2ms --target-prob 0.9 --json >/dev/null; } 2>&1 | tail -1) ;;
	analyze-seq) out=$( { IRQRES_READ_THREADS=1 /usr/bin/time -f "$FMT" "$IRQRES" analyze \
		"$file" --period 2ms --target-prob 0.9 --json >/dev/null; } 2>&1 | tail -1) ;;
	analyze-par) out=$( { IRQRES_READ_THREADS=2 /usr/bin/time -f "$FMT" "$IRQRES" analyze \
		"$file" --period 2ms --target-prob 0.9 --json >/dev/null; } 2>&1 | tail -1) ;;
	report) out=$( { /usr/bin/time -f "$FMT" trace-cmd report "$file" >/dev/null; } 2>&1 | tail -1) ;;
	bareloop) out=$( { /usr/bin/time -f "$FMT" "$BUILD/bareloop" "$file" >/dev/null; } 2>&1 | tail -1) ;;
	esac
	echo "$out" | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}

echo "| trace | records | tool | wall s | CPU s (user+sys) | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for f in big-v6 quarter-v6 big; do
	file=$DIR/$f.dat
	records=$("$BUILD/bareloop" "$file" | cut -d' ' -f1)
	tools=${TOOLS:-analyze analyze-seq analyze-par bareloop report}
	# the tools take turns within each run, so that a change in the host's load hits all
	declare -A walls=() cpus=() rss=()
	for _ in $(seq "$RUNS"); do
		for tool in $tools; do
			read -r w c m < <(one "$tool" "$file")
			walls[$tool]+="$w " cpus[$tool]+="$c " rss[$tool]+="$m "
		done
	done
	for tool in $tools; do
		python3 - "$f" "$records" "$tool" "${walls[$tool]% }" "${cpus[$tool]% }" \
			"${rss[$tool]% }" <<'PY'
import statistics, sys
name, records, tool, walls, cpus, rss = sys.argv[1:]
med = lambda s: statistics.median(float(x) for x in s.split())
print(f"| {name} | {int(records):,} | {tool} | {med(walls):.2f} ({walls}) | "
      f"{med(cpus):.2f} ({cpus}) | {med(rss) / 1024:.0f} |")
PY
	done
done
