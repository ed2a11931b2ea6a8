"""irqres.schedattr against this host's kernel: a reservation set on a process the test
spawns reads back exactly, the kernel's refusals come back as errno, and the process
goes back to SCHED_OTHER."""

from __future__ import annotations

import errno
import os
import subprocess

import pytest
from irqres import schedattr

MS = 1_000_000


@pytest.fixture
def child():
    if os.geteuid() != 0:
        pytest.skip("SCHED_DEADLINE needs root")
    if not schedattr.supported():
        pytest.skip("no sched_setattr syscall numbers known for this machine")
    p = subprocess.Popen(["sleep", "60"])
    yield p.pid
    p.kill()
    p.wait()


def test_deadline_set_read_back_and_reset(child):
    # (a SCHED_OTHER task's runtime field is its EEVDF slice on kernels from 6.6 on)
    before = schedattr.get(child)
    assert (before.policy, before.policy_name) == (schedattr.SCHED_OTHER, "other")
    assert schedattr.set_attr(child, schedattr.SCHED_DEADLINE, runtime_ns=1 * MS,
                              deadline_ns=10 * MS, period_ns=100 * MS) == 0
    s = schedattr.get(child)
    assert (s.policy_name, s.runtime_ns, s.deadline_ns, s.period_ns) == (
        "deadline", 1 * MS, 10 * MS, 100 * MS)
    # runtime beyond the deadline: the kernel's EINVAL, as a number, nothing changed
    assert schedattr.set_attr(child, schedattr.SCHED_DEADLINE, runtime_ns=20 * MS,
                              deadline_ns=10 * MS, period_ns=100 * MS) == errno.EINVAL
    assert schedattr.get(child).runtime_ns == 1 * MS
    assert schedattr.set_attr(child, schedattr.SCHED_OTHER) == 0
    assert schedattr.get(child).policy == schedattr.SCHED_OTHER


def test_no_such_thread(child):
    gone = subprocess.Popen(["true"])
    gone.wait()
    with pytest.raises(OSError, match=r"sched_getattr\(pid \d+\): No such process") as e:
        schedattr.get(gone.pid)
    assert e.value.errno == errno.ESRCH
    assert schedattr.set_attr(gone.pid, schedattr.SCHED_OTHER) == errno.ESRCH
