"""The promise checked, closed loop, in the PREEMPT_RT guest (docs/model.md).

For a timer job task (tests/data/timer_job.py) at 50 µs, 200 µs and 1 ms jobs and for
the NIC thread irq/11-eth0 under a steady UDP flood made inside the guest: record,
`irqres analyze` recommends (Q, T) for P{response <= D} >= 0.99, irqresd puts it in
force, the thread is recorded again under it (RUNS times) and the achieved probability
must keep the promise within TOLERANCE: the job's own clock (timer expiry to job end)
and `irqres analyze --under Q,T` on the second trace, which must also agree with each
other. For the timer job, `irqres analyze --calibrate` of the free trace with the first
reserved run as the probe must calibrate or refuse for the stated cause. The guest runs
under QEMU's instruction counting (guest time independent of the
host's load, as in test_seeds.py): every number asserted on is guest time.

`make test` checks the NIC thread alone: the timer job misses its promise in this guest
for a cause of the kernel's (the hand-over with ktimers, docs/model.md), so its three
cases could only be an expected failure, and they were 80 % of the guest's time (596 of
740 s of guest time, 2026-11-29). IRQRES_VM_PROMISE_JOBS=all runs them too.
"""

from __future__ import annotations

import json
import os

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

TARGET = 0.99
#: achieved P{response <= D} may fall short of the promise by at most this much
TOLERANCE = 0.01
#: the job's own clock and the trace may disagree by at most this much
AGREE = 0.02
RUNS = 3
#: the least the median job's charge grows under the reservation (the lock hand-over with
#: ktimers: 73-94 µs per job in this guest, docs/model.md)
MIN_HANDOVER_NS = 30_000
#: (period µs, work µs, jobs). In the emulated guest a job of the Python workload costs
#: about 180 µs of CPU besides its work (wake-up, timerfd read, clock reads), and its
#: 0.99 quantile is above 500 µs: the 50 µs job runs every 1 ms, not 500 µs
ALL_JOBS = [[1000, 50, 1000], [1000, 200, 1000], [5000, 1000, 200]]
JOBS_ENV = os.environ.get("IRQRES_VM_PROMISE_JOBS", "").strip()
if JOBS_ENV not in ("", "all"):
    raise pytest.UsageError(f"IRQRES_VM_PROMISE_JOBS={JOBS_ENV!r}: 'all' or nothing")
JOBS = ALL_JOBS if JOBS_ENV == "all" else []
#: the flood: one 256-byte datagram every 2 ms for 4 s of guest time
FLOOD = {"port": 5001, "period_ns": 2_000_000, "count": 2000, "size": 256,
         "thread": "irq/11-eth0"}


def achieved(responses: list[int], d_ns: int) -> float:
    return sum(1 for r in responses if 0 <= r <= d_ns) / len(responses)


def check_task(case: dict) -> tuple[list[str], list[str]]:
    """The assertions on one timer job case; returns its table rows and the runs that
    fell short of the promise by more than TOLERANCE."""
    name = f"{case['work_us']} us jobs every {case['period_us']} us"
    assert case["free"]["record"]["rc"] == 0, case["free"]["record"]
    rec = case["recommended"]
    best = rec.get("best")
    assert best, (name, rec)
    assert rec["execution"]["model_uses"] == "kernel", (name, rec["execution"])
    q, t, d = best["runtime_ns"], best["period_ns"], case["period_us"] * 1000
    # the first run's apply puts the profile in force; later ones may find the job
    # reserved already (the job's exit status below says whether it was)
    assert case["runs"][0]["apply"]["rc"] == 0, (name, case["runs"][0]["apply"])
    rows, short = [], []
    for run in case["runs"]:
        # the job starts only once irqresd has reserved it (else it exits with 1)
        assert run["record"]["rc"] == 0, (name, run["record"])
        own = achieved(run["responses"], d)
        p = run["under"]["promise"]
        ex = run["under"]["execution"]["kernel_charge"]
        rows.append(f"{name}: Q {q} ns / T {t} ns, model {best['solver_prob']:.4f}; achieved "
                    f"{own:.4f} (job's clock), {p['achieved']:.4f} (trace, {p['jobs']} jobs); "
                    f"mean charge {ex['charged_total_ns'] // ex['activations']} ns reserved")
        assert (p["runtime_ns"], p["period_ns"], p["promised"]) == (q, t, TARGET), p
        assert len(run["responses"]) == case["count"], name
        if min(own, p["achieved"]) < TARGET - TOLERANCE:
            short.append(rows[-1])
    assert len(case["runs"]) == RUNS
    rows.append(check_calibration(name, case))
    return rows, short


def check_calibration(name: str, case: dict) -> str:
    """`analyze FREE --calibrate RUN0` in the guest: the probe shows the hand-over with
    ktimers (the median job's charge grows, and the warning is gone), or it is refused
    because the reservation throttled the job in more activations than the target
    leaves."""
    cal = case["calibrated"]
    if "error" in cal:
        assert "preempted or throttled it in" in cal["error"], (name, cal)
        return f"{name}: --calibrate refused: {cal['error'].strip().splitlines()[-1]}"
    c = cal["execution"]["calibration"]
    assert c["probe"] == case["runs"][0]["trace"], (name, c)
    assert c["median_probe_ns"] - c["median_free_ns"] >= MIN_HANDOVER_NS, (name, c)
    assert not any("ktimers" in w for w in cal["warnings"]), (name, cal["warnings"])
    best = cal.get("best") or {}
    return (f"{name}: calibrated from run 0: median charge {c['median_free_ns']} -> "
            f"{c['median_probe_ns']} ns, q{c['quantile']:g} {c['free_ns']} -> {c['probe_ns']} "
            f"ns ({c['probe_activations']} held, {c['preempted']} throttled); Q "
            f"{best.get('runtime_ns')} ns / T {best.get('period_ns')} ns")


def check_nic(case: dict) -> list[str]:
    rec = case["recommended"]
    best = rec.get("best")
    assert case["free"]["record"]["rc"] == 0, case["free"]["record"]
    assert best, rec
    q, t = best["runtime_ns"], best["period_ns"]
    sched = case["thread"]["sched"]
    assert (sched["policy"], sched["runtime_ns"], sched["period_ns"]) == ("deadline", q, t)
    rows = []
    for run in case["runs"]:
        assert run["record"]["rc"] == 0, run["record"]
        p = run["under"]["promise"]
        rows.append(f"NIC: Q {q} ns / T {t} ns, D {p['deadline_ns']} ns, model "
                    f"{best['solver_prob']:.4f}; achieved {p['achieved']:.4f} "
                    f"({p['jobs']} activations)")
        assert p["achieved"] >= TARGET - TOLERANCE, rows[-1]
    assert len(case["runs"]) == RUNS
    return rows


def test_the_recommendation_keeps_its_promise(icount_boot):
    """On the image's first kernel only, as test_seeds: one icount boot, about 150 s of
    guest time for the NIC (7-18 minutes of a loaded host with the timer jobs);
    docs/model.md has both kernels' numbers."""
    res = icount_boot("promise", timeout_s=5400,
                      files={"timer_job.py": vmrunner.REPO / "tests" / "data" / "timer_job.py"},
                      params={"jobs": JOBS, "runs": RUNS, "nic": FLOOD})
    (res.out.parent / "promise.json").write_text(json.dumps(res.data, indent=1))
    assert len(res.data["cases"]) == len(JOBS), res.data["cases"]
    rows, failed, short = [], [], []
    for case in [*res.data["cases"], res.data["nic"]]:
        try:
            if "work_us" in case:
                got, missed = check_task(case)
                rows += got
                short += missed
            else:
                rows += check_nic(case)
        except AssertionError as e:
            failed.append(str(e))
    for r in rows:
        vmrunner.say(f"promise {res.kernel.release}: {r}")
    assert not failed, "\n".join(failed)
    if short:
        # Known: reserved, the job preempts ktimers, which woke it holding the timerfd's
        # wait-queue lock, blocks on that lock once per job and waits 70-81 us for the
        # boosted ktimers; the kernel charges it 73-94 us more per job than free, which
        # the free trace cannot show (docs/model.md, "The promise, closed loop, in the
        # PREEMPT_RT guest"; bench/promise/handover.py), so a budget sized on it overruns.
        pytest.xfail("the timer job misses its promise under the reservation: "
                     + "; ".join(short))
