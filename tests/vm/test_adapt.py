"""Scenario 5: `irqres tune` moves the NIC thread's budget when the load changes.

profiles/adaptive.yaml makes the e1000's thread an adaptive target (2 ms / 10 ms to
start, clamped to 500 us .. 5 ms). The guest runs `irqres tune` through a quiet phase, a
UDP flood from the host and a quiet phase again, sampling the thread's real budget with
sched_getattr; the budget must rise under load and stay within the clamps.
"""

import statistics

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MIN_RUNTIME, MAX_RUNTIME = 500_000, 5_000_000


def test_tune_follows_the_load(boot):
    profile = vmrunner.REPO / "profiles" / "adaptive.yaml"
    res = boot("adapt", profile=profile, enable_irqresd=True,
               params={"quiet_s": 8, "load_s": 10, "pps": 3000,
                       "udp_port": vmrunner.VM.UDP_PORT})
    d = res.data
    assert d["tune_csv"], f"irqres tune wrote no log:\n{d['tune_out']}"
    by_phase: dict[str, list[int]] = {}
    for _, phase, q in d["samples"]:
        by_phase.setdefault(phase, []).append(q)
    assert all(q > 0 for qs in by_phase.values() for q in qs), (
        f"the thread lost its reservation while tuned: {by_phase}")
    assert all(MIN_RUNTIME <= q <= MAX_RUNTIME for qs in by_phase.values() for q in qs), by_phase
    quiet = statistics.median(by_phase["quiet"])
    load = max(by_phase["load"])
    after = statistics.median(by_phase["quiet again"])
    vmrunner.say(f"adapt: median budget quiet {quiet / 1e3:.0f} us, highest under load "
                 f"{load / 1e3:.0f} us, quiet again {after / 1e3:.0f} us")
    assert load > quiet, (f"the budget did not rise under load: {by_phase}\n"
                          f"{d['tune_out']}\n{d['journal']['out']}")
    assert after < load, (f"the budget did not fall when the load stopped: {by_phase}\n"
                          f"{d['tune_out']}\n{d['journal']['out']}")
    rows = [ln.split(",") for ln in d["tune_csv"].splitlines()[1:] if ln]
    assert len({r[-1] for r in rows}) > 1, "tune never sent a different budget"
