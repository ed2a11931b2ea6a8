"""SCHED_IDLE spinners that keep CPUs out of the idle task while a trace is recorded.

Some kernels leave switches out of the idle task out of the trace (a 6.18 virtual machine
wrote 11-415 switches into idle on its CPU 1 per recording and none out of it): an
activation that starts on an idle CPU then has no switch-in, and ``irqres analyze`` drops
it as inconsistent (measure/idle.py warns). With a SCHED_IDLE task spinning on each CPU
the CPU never runs the idle task; a task of any other policy preempts the spinner at
once, so the traced threads are woken and run as from idle, less the idle exit.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator

from ..errors import TraceError

COMM = "irqres-idle"

# Pins itself, names itself, takes SCHED_IDLE, says so, spins.
_SPIN = ("import os, sys\n"
         "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
         f"open('/proc/self/comm', 'w').write({COMM!r})\n"
         "os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
         "print('ready', flush=True)\n"
         "while True:\n"
         "    pass\n")


@contextlib.contextmanager
def idle_spinners(cpus: Iterable[int] | None = None) -> Iterator[list[int]]:
    """A spinner (comm ``irqres-idle``, SCHED_IDLE) on each of ``cpus`` (default: every
    CPU this process may run on), each running before the block starts; all are killed
    when it ends. Yields the CPUs. Raises TraceError naming the CPU whose spinner could
    not start, and the cause."""
    want = sorted(os.sched_getaffinity(0) if cpus is None else set(cpus))
    procs: list[subprocess.Popen] = []
    try:
        for cpu in want:
            procs.append(subprocess.Popen([sys.executable, "-c", _SPIN, str(cpu)],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        for cpu, p in zip(want, procs, strict=True):
            assert p.stdout is not None and p.stderr is not None
            if p.stdout.readline().strip() != "ready":
                p.wait()
                err = p.stderr.read().strip().splitlines()
                raise TraceError(f"record: the idle spinner for CPU {cpu} did not start: "
                                 + (err[-1] if err else f"exit status {p.returncode}"))
        yield want
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
            for f in (p.stdout, p.stderr):
                if f is not None:
                    f.close()
