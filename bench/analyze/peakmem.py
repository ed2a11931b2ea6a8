#!/usr/bin/env python3
"""Run a command and print "wall_s cpu_s peak_rss_kb peak_anon_kb" for it.

peak_rss is getrusage's maximum resident set (what /usr/bin/time %M shows); peak_anon
samples /proc/PID/status RssAnon every 20 ms: the memory the process allocated, without
the pages of files it maps (libtracecmd maps the trace file: those pages are the page
cache's, shared and dropped under pressure, but they count in the resident set).

Usage: peakmem.py COMMAND [ARGS...]   (its stdout goes to /dev/null)
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time


def anon_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main() -> int:
    t0 = time.monotonic()
    p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        peak = max(peak, anon_kb(p.pid))
        time.sleep(0.02)
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{wall:.2f} {ru.ru_utime + ru.ru_stime:.2f} {ru.ru_maxrss} {peak}")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
