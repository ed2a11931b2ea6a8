#!/usr/bin/env bash
# Builds and runs the kernel-side benchmark (root: it gives SCHED_DEADLINE to a process
# it spawns). bench/apply/RESULTS.md records the results.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C daemon ../build/daemon/libirqresd.a
mkdir -p build/bench
${CC:-cc} -O2 -g -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -Idaemon/src \
	-o build/bench/bench_apply bench/apply/bench_apply.c \
	build/daemon/libirqresd.a $(pkg-config --libs yaml-0.1 libsystemd)
for dir in /run /dev/shm; do
	build/bench/bench_apply -n "${TASKS:-10000}" -d "$dir" "$@"
	echo
done
