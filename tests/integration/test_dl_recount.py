"""irqresd and a kernel that loses count of SCHED_DEADLINE bandwidth.

Some kernels (6.18 here) keep, in the root domain's total, the bandwidth of a task that
was asleep when it left SCHED_DEADLINE, until something makes them rebuild their
accounting; they then refuse reservations that fit, even a smaller budget for a thread
that has one. irqresd asks the kernel to recount (rt_runtime.h): after it restores
threads, and once before giving up on a refusal its plan did not expect. These tests make
the kernel leak with processes they spawn, read its totals from debugfs, and skip where
the kernel does not leak (nothing to recount there).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from irqres import schedattr
from irqresd_util import (
    SCHED_DEADLINE,
    SCHED_DEBUG,
    SCHED_OTHER,
    profile_text,
    recount_kernel_dl_bandwidth,
    sched_getattr,
    task_target,
    unique_comm,
    wait_for,
)

MS = 1_000_000
BW_UNIT = 1 << 20  # the kernel's fixed point for bandwidth (BW_SHIFT 20)


def kernel_totals() -> tuple[float, float]:
    """(total_bw, bw) of the root domain of CPU 0, in CPUs' worth: what the kernel counts
    as reserved and its limit (per CPU times the CPUs of the domain)."""
    total = per_cpu = None
    cpus = 0
    for line in SCHED_DEBUG.read_text().splitlines():
        key, _, value = line.partition(":")
        if key.startswith("cpu#"):
            cpus += 1
        elif key.strip() == ".dl_bw->total_bw" and total is None:
            total = int(value) / BW_UNIT
        elif key.strip() == ".dl_bw->bw" and per_cpu is None:
            per_cpu = int(value) / BW_UNIT
    assert total is not None and per_cpu is not None, "no dl_bw lines in sched/debug"
    return total, per_cpu * cpus


def recount() -> None:
    recount_kernel_dl_bandwidth()


def asleep(spawn) -> int:
    """A process spawned for the test, once it sleeps (its leak needs it asleep)."""
    p = spawn(unique_comm("irqleak"))
    wait_for(lambda: Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
             == "S")
    return p.pid


def leave_less_than(pid: int, room: float) -> None:
    """Leaks the bandwidth of pid until the kernel counts less than room CPUs free."""
    while (free := kernel_totals()[1] - kernel_totals()[0]) >= room:
        share = min(0.9, free - room + 0.05)
        assert leak(pid, int(share * 10 * MS), 10 * MS) == 0


def leak(pid: int, runtime_ns: int, period_ns: int) -> int:
    """Gives the sleeping process pid a reservation and takes it back at once; returns 0
    or the kernel's errno for the reservation."""
    rc = schedattr.set_attr(pid, SCHED_DEADLINE, runtime_ns=runtime_ns,
                            deadline_ns=period_ns, period_ns=period_ns)
    if rc == 0:
        assert schedattr.set_attr(pid, SCHED_OTHER) == 0
    return rc


@pytest.fixture
def leaky(spawn):
    """Skips unless this kernel keeps a sleeping task's bandwidth when it leaves
    SCHED_DEADLINE; puts the kernel's count right again afterwards, whatever happens."""
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    if (major, minor) < (6, 15):
        pytest.skip(f"irqresd asks kernels from 6.15 to recount, this is {os.uname().release}")
    if not SCHED_DEBUG.exists():
        pytest.skip(f"{SCHED_DEBUG} is absent (debugfs not mounted): the kernel's "
                    "SCHED_DEADLINE totals cannot be read")
    recount()
    probe = asleep(spawn)
    base, _ = kernel_totals()
    wait_for(lambda: leak(probe, 1 * MS, 10 * MS) == 0, timeout=30, interval=0.5)
    after, _ = kernel_totals()
    if after - base < 0.09:
        pytest.skip(f"this kernel ({os.uname().release}) released the bandwidth of a "
                    f"sleeping task that left SCHED_DEADLINE ({base:.3f} -> {after:.3f} "
                    "CPUs): nothing to recount")
    recount()
    yield spawn
    recount()


def test_restore_gives_back_the_bandwidth_the_kernel_kept(leaky, daemon, profile):
    """Other activity on the host can make the kernel rebuild its accounting at any
    moment, which also takes the leak back: a round where that happened before irqresd
    stopped proves nothing and is run again."""
    for _ in range(3):
        a = leaky()
        recount()
        base, _ = kernel_totals()
        d = daemon().start(profile(profile_text(task_target("a", "3ms", "10ms",
                                                            pid=a.pid))))
        assert sched_getattr(a.pid).policy == SCHED_DEADLINE
        assert leak(asleep(leaky), 2 * MS, 10 * MS) == 0     # the kernel keeps 0.2 CPUs
        before = kernel_totals()[0]
        assert d.stop() == 0
        after = kernel_totals()[0]
        assert sched_getattr(a.pid).policy == SCHED_OTHER
        # a was asleep when it went back: without a recount the kernel keeps 0.5 CPUs more
        assert after == pytest.approx(base, abs=0.01), (base, before, after)
        if before >= base + 0.49:
            return
    pytest.fail("the kernel rebuilt its accounting on its own in every round")


def test_budget_refused_only_because_the_kernel_lost_count(leaky, daemon, profile):
    a, b = leaky(), asleep(leaky)
    d = daemon().start(profile(profile_text(task_target("a", "1ms", "10ms", pid=a.pid))))
    leave_less_than(b, 0.2)      # the kernel's count has no room left for 1 ms more of a
    assert schedattr.set_attr(a.pid, SCHED_DEADLINE, runtime_ns=3 * MS,
                              deadline_ns=10 * MS, period_ns=10 * MS) != 0
    r = d.request("set-budget a 3ms")
    assert r["ok"], r
    s = sched_getattr(a.pid)
    assert (s.policy, s.runtime_ns) == (SCHED_DEADLINE, 3 * MS)
    assert "once the kernel recounted" in d.log_text()
