"""irqres.trace.spinners: the SCHED_IDLE spinners `irqres record --busy-idle` runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from irqres.errors import TraceError
from irqres.trace.spinners import COMM, idle_spinners


def _spinners() -> dict[int, tuple[int, set[int]]]:
    """pid -> (policy, CPUs allowed) of every process named like a spinner."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() != COMM:
                continue
            out[int(pid)] = (os.sched_getscheduler(int(pid)),
                             os.sched_getaffinity(int(pid)))
        except (OSError, ProcessLookupError):
            continue
    return out


def test_one_sched_idle_spinner_per_cpu_while_the_block_runs_none_after():
    before = set(_spinners())
    with idle_spinners() as cpus:
        now = {p: v for p, v in _spinners().items() if p not in before}
        assert cpus == sorted(os.sched_getaffinity(0))
        assert sorted(next(iter(aff)) for _, aff in now.values()) == cpus
        assert all(pol == os.SCHED_IDLE and len(aff) == 1 for pol, aff in now.values())
    assert not set(_spinners()) - before


def test_a_spinner_that_cannot_start_names_its_cpu_and_leaves_none():
    before = set(_spinners())
    bad = max(os.sched_getaffinity(0)) + 4096
    with pytest.raises(TraceError, match=f"idle spinner for CPU {bad} did not start: "
                                         "OSError: .*Invalid argument"):
        with idle_spinners([min(os.sched_getaffinity(0)), bad]):
            pass
    assert not set(_spinners()) - before
