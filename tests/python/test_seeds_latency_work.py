"""Experiment 6 since the restore fix: who did the NIC's work (tests/vm/guest/seeds.py
nic_work()), the control of latency.py (--eth1-cpus), and what RESULTS.md says of the
recorded boots (bench/seeds/latency_work_report.py): each claim of its reading checked
against the committed records."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "bench" / "seeds"
sys.path.insert(0, str(SEEDS))
GUEST = str(ROOT / "tests" / "vm" / "guest")
sys.path.insert(0, GUEST)

import latency_work_report as work  # noqa: E402
import report  # noqa: E402
import seeds  # noqa: E402
import stats  # noqa: E402

sys.path.remove(GUEST)  # the guest's module names stay out of the other tests' way

MS = 1_000_000


def _work(eth0: int, tasks: dict) -> dict:
    return {"nic_thread": eth0, "eth1_thread": None, "ksoftirqd": 5, "eth0_irqs": 3,
            "eth1_where": {"cpu": 0}, "tasks": tasks}


def test_work_delta_ranks_the_tasks_that_ran_and_counts_a_new_one_from_zero():
    a = _work(100, {1: ("ksoftirqd/1", 500, 1, "other"), 2: ("irq/10-eth1", 900, 0, "fifo 90")})
    b = _work(160, {1: ("ksoftirqd/1", 530, 1, "other"), 2: ("irq/10-eth1", 1900, 1, "fifo 90"),
                    3: ("rcuc/1", 200, 1, "fifo 1")})
    d = seeds._work_delta(a, b, top=2)
    assert d["nic_thread"] == 60 and d["ksoftirqd"] == 0 and d["eth0_irqs"] == 0
    assert d["eth1_thread"] is None  # not known at both ends: no number
    assert "eth1_where" not in d and "tasks" not in d
    # irq/10-eth1 ran 1000, the new rcuc/1 200 (from zero), ksoftirqd/1 30: the top two
    assert d["top"] == [
        {"tid": 2, "comm": "irq/10-eth1", "ns": 1000, "cpu": 1, "sched": "fifo 90"},
        {"tid": 3, "comm": "rcuc/1", "ns": 200, "cpu": 1, "sched": "fifo 1"}]


def test_task_times_reads_this_process_with_its_policy():
    times = seeds._task_times()
    comm, run_ns, cpu, sched = times[os.getpid()]
    assert run_ns > 0 and cpu >= 0 and sched == "other"
    assert comm == Path(f"/proc/{os.getpid()}/comm").read_text().strip()


@pytest.mark.parametrize("bad", ["x", "0-", "1,,2", "-1"])
def test_latency_refuses_an_eth1_cpus_that_is_no_cpu_list(bad):
    r = subprocess.run([sys.executable, str(SEEDS / "latency.py"), "--eth1-cpus", bad],
                       capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 2, r.stderr
    assert f"--eth1-cpus {bad!r}: not a CPU list such as 0-1 or 0,1" in r.stderr


def _records() -> tuple[list[dict], list[dict]]:
    recs = [report.json.loads(p.read_text()) for p in report.newest("latency-icount-*.json")]
    recs = [r for r in recs if work.is_work_record(r)]
    return ([r for r in recs if work.control_of(r) is None],
            [r for r in recs if work.control_of(r) is not None])


def _rows(recs: list[dict], label: str) -> list[dict]:
    return [r for rec in recs for r in rec["result"]["results"] if r["label"] == label]


def test_results_show_the_newer_boots_first_and_label_the_old_ones(tmp_path):
    text = report.write_results(tmp_path, figures=False).read_text()
    exp6 = text[text.index("## Experiment 6:"):text.index("## Experiment 6 with HRTICK_DL")]
    new = exp6.index("### Since the restore fix")
    old = exp6.index("### The earlier boots, recorded with the restore defect")
    assert new < exp6.index("**Control: irq/10-eth1 allowed on 0-1.**") < old
    assert old < exp6.index("Date 2026-11-23 05:10 UTC")
    plain, control = _records()
    assert exp6.count("| CPU ms: irq/11-eth0 | irq/10-eth1 | ksoftirqd/1 |") == len(
        plain) + len(control)
    assert "**What this shows.**" in exp6[new:old]


def test_the_reading_holds_in_the_recorded_boots():
    plain, control = _records()
    assert len(plain) >= 2 and len(control) >= 1
    assert {r["params"]["eth1_cpus"] for r in control} == {"0-1"}
    pf, cf = _rows(plain, "fifo50"), _rows(control, "fifo50")
    # plain FIFO 50: tens of milliseconds; eth1's thread stays on CPU 0 and never moves
    assert all(10_000 <= r["hist"]["max_us"] < 100_000 for r in pf)
    assert all(r["work_ns"]["eth1_migrations"] == 0 and r["eth1_after"]["cpus"] == "0"
               for r in pf)
    # the hog returns with the control: every control boot has a FIFO 50 max over 5x
    # every plain one, and most runs do
    worst = max(r["hist"]["max_us"] for r in pf)
    for rec in control:
        assert max(r["hist"]["max_us"] for r in _rows([rec], "fifo50")) > 5 * worst
    assert sum(r["hist"]["max_us"] > 5 * worst for r in cf) * 2 > len(cf)
    # in every control FIFO 50 flood eth1's thread ran on the NIC's CPU (it last ran
    # there), 0.8 s or more above every plain flood's, and the task missed most cycles
    eth1_plain = max(r["work_ns"]["eth1_thread"] for r in pf)
    for r in cf:
        assert r["eth1_after"]["cpu"] == 1 and r["eth1_after"]["cpus"] == "0-1"
        assert r["work_ns"]["eth1_thread"] - eth1_plain > 800 * MS
        grid = stats.grid_summary(r["hist"], 1000, 100_000)
        assert grid["ran"] * 2 < grid["cycles"]
    # the boots where it moved once and stayed: ksoftirqd almost nothing, eth0's
    # interrupts back (thousands, where counted), eth0's thread most of the rest
    staying = [rec for rec in control
               if all(r["work_ns"]["eth1_migrations"] == 1 for r in _rows([rec], "fifo50"))]
    assert len(staying) * 2 > len(control)
    for r in _rows(staying, "fifo50"):
        w = r["work_ns"]
        assert w["ksoftirqd"] < 20 * MS and w["nic_thread"] > r["send_ns"] / 2
        assert w.get("eth0_irqs", 1000) >= 1000
    # reserved: eth0's thread far below its 2 ms / 10 ms (a fifth of the flood's span)
    for r in _rows(plain + control, "reserved"):
        assert r["work_ns"]["nic_thread"] < r["send_ns"] / 5 / 2
    # without the control, where eth0's NAPI stays scheduled (tens to hundreds of
    # interrupts), and reserved, the polls run below the task: a thread below it ran
    # most on the NIC's CPU in every flood that records every task
    low = {"ksoftirqd/1", "ktimers/1", "rcuc/1"}
    rows = [r for r in pf if r["work_ns"].get("eth0_irqs", 1000) < 1000]
    assert rows
    for r in rows + _rows(plain + control, "reserved"):
        top = [t for t in r["work_ns"].get("top", []) if t["cpu"] == 1]
        if top:
            assert top[0]["comm"] in low, top
    # the others: eth0's own thread did much of the work, with its interrupts back
    for r in pf:
        w = r["work_ns"]
        if w.get("eth0_irqs", 0) >= 1000:
            assert w["nic_thread"] > work.SELF_NS
        if w["nic_thread"] > work.SELF_NS and "eth0_irqs" in w:
            assert w["eth0_irqs"] >= 1000
