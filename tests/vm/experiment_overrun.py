"""Experiment (not collected by the VM suite; bench/enforcement/run.sh runs it): the
overrun of a reserved task's budget with HRTICK_DL off and on, in the PREEMPT_RT guest,
on both testbeds, each run recorded in bench/enforcement/data/ (bench/enforcement/report.py
tabulates them).

A busy task reserved Q = 1 ms every T = 5 ms by ``irqresd --once``, HRTICK_DL off
(enforcement: keep) and on (enforcement: hrtick), alternating in one boot: how long it
runs in one go. Under plain TCG guest time is host time, so a vCPU the host stalls
lengthens the burst it was running: only the mean's shape is asserted there. On the seeds'
testbed (-icount) the VM suite asserts the bursts themselves
(tests/vm/test_enforcement.py, ``shapes.bursts_cut_at_budget``); here the same boot is
recorded.
"""

import datetime
import importlib.util
import json
import os
import sys

import pytest
import vmrunner
from test_enforcement import OVERRUN, Q, bursts_by_enforcement

sys.path.insert(0, str(vmrunner.REPO / "bench" / "seeds"))
import shapes
import testbed

# bench/enforcement/report.py, under a name of its own (bench/seeds has a report.py too)
_spec = importlib.util.spec_from_file_location(
    "enforcement_report", vmrunner.REPO / "bench" / "enforcement" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

pytestmark = [pytest.mark.vm, pytest.mark.slow]

DATA = report.DATA


def _record(res: vmrunner.Result, bed: str, runs: dict[str, list[list[int]]]) -> None:
    """Writes the boot's record and says its table (bench/enforcement/report.py)."""
    now = datetime.datetime.now(datetime.UTC)
    rec = {"date": now.strftime("%Y-%m-%d %H:%M UTC"), "commit": testbed.commit(),
           "kernel": res.kernel.release, "testbed": bed, "params": OVERRUN,
           "host_load": os.getloadavg()[0], "config": res.data.get("config_hz", ""),
           "runs": runs}
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"overrun-{bed}-{res.kernel.label}-{now:%Y%m%dT%H%M%S}.json"
    path.write_text(json.dumps(rec) + "\n")
    vmrunner.say(f"recorded {path.relative_to(vmrunner.REPO)}:\n{report.table(rec)}")


def test_overrun_tick_versus_hrtick(boot):
    """Plain TCG. The long-run bandwidth is Q/T either way (the kernel charges an overrun
    to the next periods), so what differs is how the run time is cut: at the tick the task
    runs on past Q, in fewer and longer bursts; with the hrtick it stops at Q. The mean
    burst is robust to the host stealing the guest's CPU now and then."""
    res = boot("enforcement_overrun", params=OVERRUN)
    runs = bursts_by_enforcement(res)
    _record(res, "tcg", runs)
    mean = {k: [sum(b) / len(b) for b in v] for k, v in runs.items()}
    pooled = {k: sum(map(sum, v)) / sum(map(len, v)) for k, v in runs.items()}
    assert all(k > h for k, h in zip(mean["keep"], mean["hrtick"], strict=True)), mean
    assert pooled["hrtick"] <= 1.5 * Q, pooled
    assert pooled["keep"] >= 1.5 * pooled["hrtick"], pooled


def test_overrun_tick_versus_hrtick_icount(icount_boot, kernel):
    """The seeds' testbed: the shape the VM suite asserts, recorded."""
    res = icount_boot("enforcement_overrun", params=OVERRUN, kernel=kernel)
    runs = bursts_by_enforcement(res)
    _record(res, "icount", runs)
    assert shapes.bursts_cut_at_budget(runs["hrtick"], runs["keep"], Q) == []


def test_overrun_tick_versus_hrtick_tcg_on_the_icount_qemu(icount_boot, kernel):
    """The seeds' QEMU and devices without -icount: which of the two differences between
    the testbeds (QEMU 7.2 or 10, plain TCG or icount) lengthens the bursts."""
    res = icount_boot("enforcement_overrun", params=OVERRUN, kernel=kernel, icount=None)
    _record(res, "tcg-qemu10", bursts_by_enforcement(res))
