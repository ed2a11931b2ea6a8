"""The promise checked, closed loop, on this host: a timerfd job of known period and CPU
time is recorded, `irqres analyze` recommends (Q, T) for P{response <= period} >= 0.99,
the job runs again under SCHED_DEADLINE with that (Q, T) while it is recorded again, and
what it achieved (its own clock: timer expiry to job end) must keep the promise within
TOLERANCE; `irqres analyze --under Q,T` must report it from the trace.

The host is not PREEMPT_RT and enforces budgets at the 4 ms tick (HRTICK_DL off): the
recommendation plans for that (docs/model.md, "What the kernel adds"). Only the job this
test spawns gets a reservation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
TRACEFS = "/sys/kernel/tracing"
TARGET = 0.99
#: achieved P{response <= D} may fall short of the promise by at most this much
TOLERANCE = 0.01
#: runs of the reserved job: this host is a virtual machine shared with other work, whose
#: vCPUs stall now and then for up to tens of ms (every expiry of the stall is missed,
#: whatever the reservation); a reservation that does not keep its promise fails every run
ATTEMPTS = 2
US = 1_000


def need_host():
    if os.geteuid() != 0:
        pytest.skip("recording and SCHED_DEADLINE need root")
    if not os.path.isfile(f"{TRACEFS}/events/sched/sched_stat_runtime/format"):
        pytest.skip("no tracefs with sched_stat_runtime at /sys/kernel/tracing")


def irqres(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irqres", *args], capture_output=True,
                          text=True, check=False)


def run_job(tmp: Path, name: str, period_us: int, work_us: int, count: int,
            reservation: tuple[int, int] | None = None) -> tuple[Path, np.ndarray]:
    """Record the job; its trace and its own response times (ns, -1: missed)."""
    trace, resp = tmp / f"{name}.dat", tmp / f"{name}.resp"
    job = [sys.executable, str(DATA / "timer_job.py"), "--period-us", str(period_us),
           "--work-us", str(work_us), "--count", str(count), "--responses-out", str(resp)]
    if reservation is not None:
        job += ["--deadline", f"{reservation[0]},{reservation[1]}"]
    res = irqres("record", "-o", str(trace), "--buffer-kb", "8192", "--", *job)
    assert res.returncode == 0, res.stderr + res.stdout
    return trace, np.loadtxt(resp, dtype=np.int64)


def achieved(resp: np.ndarray, d_ns: int) -> float:
    return float(np.mean((resp >= 0) & (resp <= d_ns)))


@pytest.mark.parametrize(("period_us", "work_us"), [(500, 50), (1000, 200), (5000, 1000)],
                         ids=["50us-jobs", "200us-jobs", "1ms-jobs"])
def test_the_recommended_reservation_keeps_its_promise(tmp_path, period_us, work_us):
    need_host()
    count = max(400, 2_000_000 // period_us)          # about 2 s of jobs
    d = period_us * US
    trace, _ = run_job(tmp_path, "free", period_us, work_us, count)
    res = irqres("analyze", str(trace), "--task", "timer-job", "--deadline", f"{period_us}us",
                 "--target-prob", str(TARGET), "--json")
    assert res.returncode == 0, res.stderr
    (th,) = json.loads(res.stdout)["threads"]
    best = th["recommendation"]["best"]
    assert best is not None, th["recommendation"]["rows"]
    q, t = best["runtime_ns"], best["period_ns"]
    assert th["execution"]["model_uses"] == "kernel"
    runs = []
    for attempt in range(ATTEMPTS):
        trace2, resp = run_job(tmp_path, f"reserved{attempt}", period_us, work_us, count,
                               (q, t))
        got = achieved(resp, d)
        res = irqres("analyze", str(trace2), "--task", "timer-job", "--deadline",
                     f"{period_us}us", "--under", f"{q}ns,{t}ns", "--json")
        assert res.returncode == 0, res.stderr
        (th2,) = json.loads(res.stdout)["threads"]
        p = th2["promise"]
        ok = resp[resp >= 0]
        runs.append(f"achieved {got} ({np.count_nonzero(resp < 0)} expiries missed, response "
                    f"p50/p99/max {np.percentile(ok, [50, 99, 100]).astype(int).tolist()} ns; "
                    f"from the trace {p['achieved']:.4f}, model {p['model_prob']}, replay "
                    f"{p['replay_prob']}; load {os.getloadavg()[0]:.1f})")
        print(f"{work_us} us every {period_us} us: Q {q} ns / T {t} ns, model "
              f"{best['solver_prob']:.4f}: {runs[-1]}")
        if got >= TARGET - TOLERANCE:
            break
    assert got >= TARGET - TOLERANCE, (
        f"Q {q} ns every {t} ns promised P{{response <= {d} ns}} >= {TARGET}: "
        + "; ".join(runs))
    assert p["runtime_ns"] == q and p["period_ns"] == t and p["promised"] == TARGET
    assert p["jobs"] >= 0.9 * count
    # the trace tells the same story as the job's own clock
    assert p["achieved"] >= TARGET - TOLERANCE
    assert abs(p["achieved"] - got) <= 0.02
