"""The promise checked, closed loop, on this host (issue: a recommendation that keeps its
promise when it is applied). A timerfd job of known period and CPU time
(tests/data/timer_job.py) is recorded free; `irqres analyze` recommends (Q, T) for
P{response <= period} >= 0.99; irqresd puts that reservation on the job (a `task:`
target by its comm) while it is recorded again; what the job achieved by its own clock
(timer expiry to job end) and what `irqres analyze --under Q,T` reports from the second
trace must keep the promise within TOLERANCE and agree. The same job under a budget
below its own work must miss it: the check fails when the reservation is too small.

While a job is recorded, every CPU it may run on has a SCHED_IDLE spinner
(`irqres.trace.spinners.idle_spinners`, what `irqres record --busy-idle` runs): this
host's kernel writes no sched_switch for a switch out of the idle task on some CPUs, so
an activation that started on an idle CPU had no switch-in in the trace and was dropped
(1 of 400 1 ms jobs kept in one recording; with the spinners 399 of 400:
bench/promise/RESULTS.md, bench/promise/idle_switches.py). A SCHED_IDLE task is
preempted at once by any other policy, so the job is woken and run as from idle, minus
the idle exit.

Only the job this test spawns is reserved, by a comm no other process has; the host
enforces budgets at the tick (HRTICK_DL off), which the recommendation plans for.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from irqres.trace.spinners import idle_spinners
from irqresd_util import ROOT, profile_text, task_target, unique_comm, wait_for

pytestmark = [pytest.mark.root, pytest.mark.slow]

JOB = ROOT / "tests" / "data" / "timer_job.py"
TRACEFS = "/sys/kernel/tracing"
TARGET = 0.99
#: achieved P{response <= D} may fall short of the promise by at most this much
TOLERANCE = 0.01
#: the job's clock and the trace may disagree by at most this much
AGREE = 0.02
#: reserved runs: this host is a virtual machine shared with other work whose vCPUs stall
#: now and then for tens of ms (every expiry in a stall is missed, whatever the
#: reservation); a reservation that does not keep its promise fails every attempt
ATTEMPTS = 2
US = 1_000


def need_tracefs() -> None:
    if not os.path.isfile(f"{TRACEFS}/events/sched/sched_stat_runtime/format"):
        pytest.skip(f"no tracefs with sched:sched_stat_runtime at {TRACEFS}")


def irqres(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irqres", *args], capture_output=True,
                          text=True, check=False, timeout=600)


def comm_running(comm: str) -> bool:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == comm:
                return True
    return False


def record_job(out: Path, comm: str, period_us: int, work_us: int, count: int,
               reserve=None, busy: bool = True) -> tuple[Path, np.ndarray]:
    """Records the job; its trace and its own response times (ns, -1: missed).
    ``reserve(comm)``: a context that puts the job under SCHED_DEADLINE once it runs (the
    job waits for it before its first expiry); ``busy``: with `idle_spinners`."""
    trace, resp = out.with_suffix(".dat"), out.with_suffix(".resp")
    job = [sys.executable, str(JOB), "--period-us", str(period_us), "--work-us",
           str(work_us), "--count", str(count), "--comm", comm, "--responses-out", str(resp)]
    if reserve is not None:
        job += ["--wait-deadline", "30"]
    with idle_spinners() if busy else contextlib.nullcontext():
        rec = subprocess.Popen([sys.executable, "-m", "irqres", "record", "-q", "-o",
                                str(trace), "--buffer-kb", "8192", "--", *job],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with reserve(comm) if reserve else contextlib.nullcontext():
            text, _ = rec.communicate(timeout=300)
    assert rec.returncode == 0, f"irqres record of {comm}: {text}"
    return trace, np.loadtxt(resp, dtype=np.int64)


def achieved(resp: np.ndarray, d_ns: int) -> float:
    return float(np.mean((resp >= 0) & (resp <= d_ns)))


def analyze(trace: Path, comm: str, period_us: int, *extra: str) -> dict:
    res = irqres("analyze", str(trace), "--task", comm, "--deadline", f"{period_us}us",
                 "--target-prob", str(TARGET), "--json", *extra)
    assert res.returncode == 0, f"irqres analyze {trace}: {res.stderr}"
    (th,) = json.loads(res.stdout)["threads"]
    return th


# spawn: waits until other tests' SCHED_DEADLINE bandwidth is free and the kernel's count
# is right (conftest.py); this test spawns its job through `irqres record`
@pytest.mark.usefixtures("spawn")
@pytest.mark.parametrize(("period_us", "work_us"), [(500, 50), (1000, 200), (5000, 1000)],
                         ids=["50us-jobs", "200us-jobs", "1ms-jobs"])
def test_the_recommended_reservation_keeps_its_promise(tmp_path, daemon, profile,
                                                       period_us, work_us):
    need_tracefs()
    count = max(400, 2_000_000 // period_us)          # about 2 s of jobs
    d = period_us * US
    comm = unique_comm("tjob")
    free, _ = record_job(tmp_path / "free", comm, period_us, work_us, count)
    th = analyze(free, comm, period_us)
    assert th["execution"]["model_uses"] == "kernel", th["execution"]
    best = th["recommendation"]["best"]
    assert best is not None, th["recommendation"]
    q, t = best["runtime_ns"], best["period_ns"]

    def irqresd_reserves(runtime_ns: int):
        @contextlib.contextmanager
        def reserve(job_comm: str) -> Iterator[None]:
            wait_for(lambda: comm_running(job_comm), 30, 0.02)
            prof = profile(profile_text(task_target(
                "timer-job", f"{runtime_ns}ns", f"{t}ns", comm=job_comm)))
            dmn = daemon().start(prof)
            try:
                yield
            finally:
                assert dmn.stop() == 0, dmn.log_text()
        return reserve

    runs, got, p = [], 0.0, {}
    for attempt in range(ATTEMPTS):
        trace, resp = record_job(tmp_path / f"reserved{attempt}", comm, period_us, work_us,
                                 count, irqresd_reserves(q))
        got = achieved(resp, d)
        p = analyze(trace, comm, period_us, "--under", f"{q}ns,{t}ns")["promise"]
        ok = resp[resp >= 0]
        runs.append(f"achieved {got:.4f} ({np.count_nonzero(resp < 0)} expiries missed, "
                    f"response p50/p99/max {np.percentile(ok, [50, 99, 100]).astype(int)} "
                    f"ns; the trace {p['achieved']:.4f} of {p['jobs']} jobs; load "
                    f"{os.getloadavg()[0]:.1f})")
        print(f"{work_us} us every {period_us} us: Q {q} ns / T {t} ns, model "
              f"{best['solver_prob']:.4f}: {runs[-1]}")
        if got >= TARGET - TOLERANCE:
            break
    assert got >= TARGET - TOLERANCE, (
        f"Q {q} ns every {t} ns promised P{{response <= {d} ns}} >= {TARGET}: "
        + "; ".join(runs))
    assert (p["runtime_ns"], p["period_ns"], p["promised"]) == (q, t, TARGET), p
    assert p["jobs"] >= 0.9 * count, f"the trace saw {p['jobs']} of {count} jobs"
    assert p["achieved"] >= TARGET - TOLERANCE, runs[-1]
    assert abs(p["achieved"] - got) <= AGREE, runs[-1]

    # the control: a budget whose bandwidth is below the job's own work (half of it, or
    # of Q when that is smaller, every T <= the job's period) cannot keep the promise,
    # so the check above can fail. Not simply Q/2: recorded free beside a heavy load,
    # late jobs merge into long activations and Q can be several times the work
    assert t <= d, (q, t)
    low = min(q, work_us * US) // 2
    _, resp = record_job(tmp_path / "starved", comm, period_us, work_us, count,
                         irqresd_reserves(low))
    starved = achieved(resp, d)
    print(f"  under {low} ns every {t} ns: achieved {starved:.4f}")
    assert starved < TARGET - TOLERANCE, f"{low} ns every {t} ns achieved {starved}"
