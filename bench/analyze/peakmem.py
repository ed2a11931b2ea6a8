#!/usr/bin/env python3
"""Run a command and print "wall_s cpu_s peak_rss_kb peak_anon_kb peak_file_kb" for it.

peak_rss is getrusage's maximum resident set of the command or of any of its children
(what /usr/bin/time %M shows); peak_anon samples RssAnon + RssShmem of /proc/PID/status
over the command and its children every 20 ms: the memory they allocated (the reader's
child hands its columns over in a memfd, which is shmem), without the pages of files
they map (libtracecmd maps the trace file: those pages are the page cache's, shared and
dropped under pressure, but they count in the resident set); peak_file samples RssFile,
the pages of mapped files (the trace's among them), likewise.

Usage: peakmem.py COMMAND [ARGS...]   (its stdout goes to /dev/null)
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time


def _own_kb(pid: int) -> tuple[int, int]:
    """(RssAnon + RssShmem, RssFile) of ``pid``, in kB."""
    anon = file = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(("RssAnon:", "RssShmem:")):
                    anon += int(line.split()[1])
                elif line.startswith("RssFile:"):
                    file += int(line.split()[1])
    except OSError:
        pass
    return anon, file


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return out


def resident_kb(pid: int) -> tuple[int, int]:
    """(RssAnon + RssShmem, RssFile) of ``pid`` and its descendants, in kB."""
    anon = file = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        a, f = _own_kb(p)
        anon, file = anon + a, file + f
        stack += _children(p)
    return anon, file


def main() -> int:
    t0 = time.monotonic()
    p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
    peak = peak_file = 0
    while p.poll() is None:
        anon, file = resident_kb(p.pid)
        peak, peak_file = max(peak, anon), max(peak_file, file)
        time.sleep(0.02)
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{wall:.2f} {ru.ru_utime + ru.ru_stime:.2f} {ru.ru_maxrss} {peak} {peak_file}")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
