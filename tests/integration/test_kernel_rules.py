"""The plan refuses the SCHED_DEADLINE parameters the kernel refuses, naming the target
and the limit, and so does set-budget (not a bare EINVAL from sched_setattr)."""

from __future__ import annotations

from pathlib import Path

import pytest
from irqresd_util import profile_text, run_irqresd, sched_getattr, task_target

pytestmark = pytest.mark.root

PERIOD_MAX_US = int(Path("/proc/sys/kernel/sched_deadline_period_max_us").read_text()) \
    if Path("/proc/sys/kernel/sched_deadline_period_max_us").exists() else 4194304


@pytest.mark.parametrize("runtime, period, words", [
    ("1ms", f"{PERIOD_MAX_US + 1}us", "is above the kernel's maximum"),
    ("10us", "50us", "period 50us is below the kernel's minimum 100us"),
    ("1ms", "9223372036854775807ns", "is above the kernel's maximum"),
])
def test_dry_run_refuses_what_the_kernel_refuses(spawn, profile, tmp_path, runtime, period,
                                                 words):
    a = spawn()
    p = profile(profile_text(task_target("a", runtime, period, pid=a.pid)))
    r = run_irqresd("--dry-run", "-p", str(p), "--run-dir", str(tmp_path / "run"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "EINVAL: target 'a': period" in r.stdout + r.stderr and words in r.stdout + \
        r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("args, words", [
    ("1ms 5s", "period 5s is above the kernel's maximum"),
    ("10us 50us", "period 50us is below the kernel's minimum 100us"),
    ("1ms 9223372036854775807ns", "is above the kernel's maximum"),
])
def test_set_budget_says_why(running, args, words):
    d, a = running
    r = d.request(f"set-budget a {args}")
    assert not r["ok"] and words in r["error"] and "sched_deadline_period_" in r["error"], r
    assert r["errno"] == "EINVAL", r        # not a refusal for bandwidth
    assert sched_getattr(a.pid).runtime_ns == 2_000_000
