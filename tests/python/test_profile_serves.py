"""The recommended profile lists whom a device thread served (``serves: comm``), so that
irqresd accounts its time to them live (docs/process-aware.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from irqres.cli import main
from irqres.report import Options, analyze
from irqres.report.types import SERVES_MAX, literal_glob
from irqres.trace.synthetic import irq_thread_trace

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
IRQRESD = ROOT / "build" / "daemon" / "irqresd"
MS = 1_000_000


def _nic(served: dict[int, int], comms: dict[int, str]):
    """A NIC thread of 400 activations, 1 ms apart, 50-149 us each, waking ``served``."""
    n = 400
    b, _ = irq_thread_trace([MS * (k + 1) for k in range(n)],
                            [50_000 + 1_000 * (k % 100) for k in range(n)], served=served)
    for pid, comm in comms.items():
        b.comm(pid, comm)
    return b.build()


def _serves(trace) -> list[str] | None:
    (tr,) = analyze(trace, Options(mc_jobs=0, pattern="eth0")).threads
    target = tr.profile_target()
    assert target is not None, tr.problem
    return target[1].get("serves", {}).get("comm")


def test_by_wakeups_the_processes_with_a_share_most_served_first_glob_safe():
    # 300 activations wake 'rx[1]*', 99 'ctl', 1 'rare' (0.25 %: under the 1 % cut)
    served = {k: 500 for k in range(300)} | {k: 600 for k in range(300, 399)} | {399: 700}
    got = _serves(_nic(served, {500: "rx[1]*", 600: "ctl", 700: "rare"}))
    assert got == ["rx[[]1][*]", "ctl"]
    assert literal_glob("a?b") == "a[?]b"


def test_one_comm_for_many_processes_and_at_most_the_cap():
    served = {k: 1000 + k % 40 for k in range(400)}
    comms = {1000 + i: ("worker" if i < 20 else f"rx-{i:02d}") for i in range(40)}
    got = _serves(_nic(served, comms))
    assert len(got) == SERVES_MAX and got.count("worker") == 1


def test_a_thread_that_woke_nobody_serves_nobody():
    assert _serves(_nic({}, {})) is None


@pytest.mark.skipif(not IRQRESD.is_file(), reason="irqresd is not built (make daemon)")
def test_guest_trace_readers_go_into_a_profile_irqresd_reads(tmp_path):
    # tests/data/vm-e1000-two-readers.dat: two 'seedload' processes read the datagrams
    prof = tmp_path / "p.yaml"
    r = CliRunner().invoke(main, ["analyze", str(DATA / "vm-e1000-two-readers.dat"),
                                  "--thread", "irq/*-eth0", "--profile-out", str(prof)])
    assert r.exit_code == 0, r.output
    (t,) = yaml.safe_load(prof.read_text())["targets"]
    assert t["serves"] == {"comm": ["seedload"]} and t["runtime"] and t["period"]
    # 1 = the kernel would not accept it (no IRQ 11 here); 2 would be a bad profile
    p = subprocess.run([str(IRQRESD), "--dry-run", "-p", str(prof), "--run-dir",
                        str(tmp_path / "run")], capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert "matches no thread" in p.stderr or p.returncode == 0, p.stderr


@pytest.mark.skipif(not IRQRESD.is_file(), reason="irqresd is not built (make daemon)")
def test_a_soft_irq_kthread_recommended_from_a_guest_trace_is_a_target_irqresd_reads(tmp_path):
    """analyze --task ktimers/1: its recommendation is a softirq target (every kind's
    selector keys are allowed in a recommended target), and irqresd parses it."""
    prof = tmp_path / "p.yaml"
    r = CliRunner().invoke(main, ["analyze", str(DATA / "vm-e1000-udp.dat"),
                                  "--task", "ktimers/1", "--profile-out", str(prof)])
    assert r.exit_code == 0, r.output
    (t,) = yaml.safe_load(prof.read_text())["targets"]
    assert t["softirq"] == {"kthreads": ["ktimers"], "cpu": [1]} and t["runtime"], t
    p = subprocess.run([str(IRQRESD), "--dry-run", "-p", str(prof), "--run-dir",
                        str(tmp_path / "run")], capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert "matches no thread" in p.stderr or p.returncode == 0, p.stderr
