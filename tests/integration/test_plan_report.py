"""One plan report: irqresd --dry-run (C) and irqres apply -n (Python, from the JSON)
print the same text, with every warning; a profile that matches nothing is refused as
such, not blamed on the kernel."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqresd_util import IRQRESD, profile_text, run_irqresd, task_target

pytestmark = pytest.mark.root

GHOST = "  - name: ghost\n    interface: nosuch0\n    irq: [99999]\n    runtime: 1ms\n" \
        "    period: 10ms\n"


def cli(*args: str, tmp_path) -> tuple[int, str]:
    env = {"IRQRESD": str(IRQRESD), "IRQRES_SOCKET": None,
           "IRQRES_RUN_DIR": str(tmp_path / "run")}
    r = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    return r.exit_code, r.output


def test_c_and_python_reports_are_one(spawn, profile, tmp_path):
    a = spawn()
    p = profile(profile_text(task_target("app", "2ms", "10ms", pid=a.pid), GHOST))
    r = run_irqresd("--dry-run", "-p", str(p))
    assert r.returncode == 0, r.stderr
    code, out = cli("apply", "-n", str(p), tmp_path=tmp_path)
    assert code == 0, out
    assert out == r.stdout
    lines = out.splitlines()
    assert lines[0] == f"Plan for {p}: the kernel will accept it"
    assert lines[2].split() == ["TARGET", "THREAD", "PID", "IRQ", "CPUS", "NOW", "RUNTIME",
                                "DEADLINE", "PERIOD", "BW", "PARTITION", "BUFFER", "VERDICT"]
    assert lines[3].split()[:3] == ["app", lines[3].split()[1], str(a.pid)]
    assert "2ms  " in lines[3] and "10ms" in lines[3]
    # the selector problems, with the target and file:line, and the unmatched target
    assert (f"warning: {p}:9: target 'ghost': selector problem: interface 'nosuch0' does "
            "not exist (no /sys/class/net/nosuch0)") in out
    assert (f"warning: {p}:10: target 'ghost': selector problem: IRQ 99999 does not "
            "exist") in out
    assert f"warning: {p}:8:5: target 'ghost' matches no thread yet" in out
    # the same warnings in the JSON, from both
    plan = json.loads(run_irqresd("--dry-run", "--json", "-p", str(p)).stdout)
    code, out = cli("apply", "-n", "--json", str(p), tmp_path=tmp_path)
    assert json.loads(out)["warnings"] == plan["warnings"] and len(plan["warnings"]) == 4
    # how the budget is enforced: this host's tick (HZ=250: 4ms > Q/2), in both
    assert [w for w in plan["warnings"] if w.startswith(
        "target 'app': Q = 2ms, T = 10ms: enforced at the tick (")], plan["warnings"]
    assert plan["enforcement"]["mode"] == "tick" and plan["enforcement"]["hz"] in (
        100, 250, 300, 1000)
    assert plan["enforcement"]["text"] in r.stdout
    assert plan["items"][0]["pid"] == a.pid and plan["summary"] == "the kernel will accept it"


def test_matching_nothing_is_not_the_kernels_fault(profile, tmp_path):
    need = os.geteuid() == 0 and IRQRESD.exists()
    if not need:
        pytest.skip("needs root and a built irqresd")
    p = profile(profile_text(GHOST))
    r = run_irqresd("--dry-run", "-p", str(p))
    assert r.returncode == 1
    assert r.stdout.startswith(f"Plan for {p}: REFUSED: the profile matches no thread\n")
    assert f"error: {p}:3:5: target 'ghost' matches no thread" in r.stdout
    assert "kernel" not in r.stdout + r.stderr
    code, out = cli("apply", str(p), tmp_path=tmp_path)
    assert code == 1
    assert out.startswith(r.stdout)
    assert f"Error: {p}: the profile matches no thread: {p}:3:5: target 'ghost'" in out
    assert "kernel" not in out


def _kthread_pid(comm: str) -> int | None:
    """The pid of the kthreadd child named ``comm``, or None."""
    for entry in os.listdir("/proc"):
        try:
            stat = open(f"/proc/{entry}/stat").read() if entry.isdigit() else ""
        except OSError:
            continue
        if stat and stat[stat.index("(") + 1:stat.rindex(")")] == comm and \
                stat[stat.rindex(")") + 2:].split()[1] == "2":
            return int(entry)
    return None


def test_soft_irq_kthreads_are_planned_beside_the_partition_of_their_cpu(spawn, profile,
                                                                        tmp_path):
    """A softirq target on this host (planned only: the host's own kthreads are never
    changed): ksoftirqd/0 found by its name and parent, its kind named, planned to stay in
    its cgroup beside irqres.cpu0 (it cannot be moved); a process that calls itself
    ksoftirqd/1 is not taken; a CPU the machine lacks is a selector problem."""
    pid = _kthread_pid("ksoftirqd/0")
    if pid is None:
        pytest.skip("this kernel has no ksoftirqd/0")
    impostor = spawn("ksoftirqd/1")
    p = profile("version: 1\ntargets:\n  - name: sirq\n    softirq:\n"
                "      kthreads: ksoftirqd\n      cpu: [0, 1, 1023]\n"
                "    runtime: 1ms\n    period: 10ms\n")
    r = run_irqresd("--dry-run", "--json", "-p", str(p))
    assert r.returncode in (0, 1), r.stderr
    plan = json.loads(r.stdout)
    items = {i["comm"]: i for i in plan["items"]}
    assert items["ksoftirqd/0"]["pid"] == pid
    assert items["ksoftirqd/0"]["kind"] == "softirq"
    assert items["ksoftirqd/0"]["partition"] == "irqres.cpu0"
    assert items["ksoftirqd/0"]["moves_into_partition"] is False
    assert impostor.pid not in {i["pid"] for i in plan["items"]}
    assert all(i["comm"].startswith("ksoftirqd/") for i in plan["items"]), items
    assert [w for w in plan["warnings"] if f"{p}:6: target 'sirq': selector problem: CPU 1023 "
            "does not exist" in w], plan["warnings"]
    # the same plan as text, from the Python CLI
    code, out = cli("apply", "-n", str(p), tmp_path=tmp_path)
    assert code == r.returncode, out
    assert out.startswith(run_irqresd("--dry-run", "-p", str(p)).stdout)
