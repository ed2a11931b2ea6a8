#!/usr/bin/env bash
# Runs every benchmark in turn (root; `make` first). Each prints its own table; the
# recorded results and the exact command of each are in bench/<name>/RESULTS.md.
# BENCH="discover solver" bash bench/run-all.sh runs a subset.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD/analysis

declare -A CMD=(
	[discover]="bash bench/discover/run.sh"
	[apply]="bash bench/apply/run.sh"
	[daemon]="python3 bench/daemon/bench_daemon.py -n 200 --rescan-ms 100 --idle-seconds 60"
	[solver]="python3 bench/solver/bench_solver.py --runs 5"
	[controller]="python3 bench/controller/bench_controller.py --runs 5"
	[analyze]="bash bench/analyze/run.sh"
	[vm]="python3 bench/vm/reference.py --runs 3"
	[completion]="python3 bench/completion/bench_completion.py --runs 11"
	[requests]="python3 bench/requests/bench_requests.py --runs 7 --slow-seconds 20"
	[stop]="python3 bench/stop/bench_stop.py --tasks 2000 --runs 3"
	[promise]="python3 bench/promise/idle_switches.py --rounds 3"
	[enforcement]="bash bench/enforcement/run.sh"
	[accounting]="python3 bench/accounting/bench_accounting.py --runs 5 --seconds 5"
	[recount]="python3 bench/recount/run.py --runs 3 --seconds 10"
	[couple]="python3 bench/couple/bench_couple.py --bin build/daemon/irqresd --rounds 5 --seconds 3"
)
ORDER=(discover apply daemon solver controller analyze vm completion requests stop promise enforcement accounting recount couple)
fail=0
for name in ${BENCH:-${ORDER[*]}}; do
	[ -n "${CMD[$name]:-}" ] || { echo "bench: no benchmark named $name (have: ${ORDER[*]})" >&2; exit 2; }
	echo "== bench $name: ${CMD[$name]}"
	start=$(date +%s)
	${CMD[$name]} || { echo "bench $name failed" >&2; fail=1; }
	echo "== bench $name: $(( $(date +%s) - start )) s"
done
exit $fail
