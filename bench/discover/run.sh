#!/usr/bin/env bash
# Builds and runs the discovery benchmark: 10,000 sleeping processes, then 10,000
# threads.  Results go to stdout; bench/discover/RESULTS.md records them.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C daemon ../build/daemon/libirqresd.a
mkdir -p build/bench
${CC:-cc} -O2 -g -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -Idaemon/src \
	-o build/bench/bench_discover bench/discover/bench_discover.c \
	build/daemon/libirqresd.a $(pkg-config --libs yaml-0.1 libsystemd) -lpthread
build/bench/bench_discover -n "${TASKS:-10000}" "$@"
build/bench/bench_discover -n "${TASKS:-10000}" -t "$@"
