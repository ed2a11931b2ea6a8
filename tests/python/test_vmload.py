"""bench/vmload: the load holder's rule, the dealing of tests to groups, the report."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

VMLOAD = Path(__file__).resolve().parents[2] / "bench" / "vmload"
sys.path.insert(0, str(VMLOAD))  # report.py imports hold_load, a name of its own


def _load(name: str):
    """bench/vmload/NAME.py under a name of its own (bench/seeds has a report.py too, and
    other tests put that directory on sys.path)."""
    spec = importlib.util.spec_from_file_location(f"vmload_{name}", VMLOAD / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


hold_load, report, suite = _load("hold_load"), _load("report"), _load("suite")


@pytest.mark.parametrize("load1, others, want", [
    (0.5, 0.0, 9),     # nothing else runs, load still low: target + 1
    (8.5, 0.0, 8),     # held: the target alone
    (9.0, 3.2, 5),     # three groups' guests: ceil(8 - 3.2)
    (12.0, 11.0, 0),   # the machine is over the target by itself: no loop
])
def test_step_makes_up_what_the_rest_leaves(load1, others, want):
    assert hold_load.step(load1, others, 8.0, 16) == want


def test_step_never_runs_more_loops_than_the_cap():
    assert hold_load.step(0.0, 0.0, 8.0, 4) == 4


def test_hold_load_runs_the_command_and_kills_its_loops(tmp_path):
    log = tmp_path / "load.jsonl"
    out = subprocess.run([sys.executable, str(VMLOAD / "hold_load.py"), "--target", "2",
                          "--interval", "1", "--log", str(log), "--", "sh", "-c",
                          "sleep 2.5; exit 3"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3
    samples = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(samples) >= 2 and samples[0]["loops"] >= 1
    assert all(isinstance(s["t_ns"], int) and isinstance(s["unix_ns"], int)
               for s in samples)
    summary = json.loads(out.stderr.split("hold_load: ", 1)[1])
    assert summary["exit"] == 3 and summary["loops_max"] >= 1
    spinning = subprocess.run(["pgrep", "-f", "hold_load.py --target 2"],
                              capture_output=True, text=True)
    assert spinning.stdout == ""


def test_hold_load_refuses_nothing_to_run(tmp_path):
    out = subprocess.run([sys.executable, str(VMLOAD / "hold_load.py"), "--log",
                          str(tmp_path / "l")], capture_output=True, text=True)
    assert out.returncode == 2 and "command: nothing to run" in out.stderr


# suite.py deals with tests/vm/groups.py's deal, tested in tests/vm/test_groups.py


JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite name="pytest" timestamp="2026-11-26T17:00:00.000000">
<testcase classname="tests.vm.test_boot" name="test_boot[6.1]" time="60.0"/>
<testcase classname="tests.vm.test_promise" name="test_promise[6.1]" time="120.0">
<skipped type="pytest.xfail" message="x"/></testcase>
<testcase classname="tests.vm.test_adapt" name="test_adapt[6.12]" time="30.0">
<failure message="boom">boom</failure></testcase>
</testsuite></testsuites>
"""


def test_report_places_each_test_in_its_window(tmp_path):
    (tmp_path / "g1.xml").write_text(JUNIT)
    t0 = 1_795_712_400 * 10**9  # 2026-11-26 17:00:00 UTC
    samples = [{"t_ns": (i * 30) * 10**9, "unix_ns": t0 + i * 30 * 10**9,
                "load1": float(i), "loops": 4, "target": 8.0} for i in range(8)]
    (tmp_path / "load.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    text = report.table(tmp_path)
    assert "3 tests in 1 groups, 1 passed, 1 xfailed, 1 failed" in text
    d = report.DASH
    assert f"| `test_boot::test_boot[6.1]` | g1 | passed | 60 | 0.0{d}2.0 |" in text
    assert f"| `test_promise::test_promise[6.1]` | g1 | xfailed | 120 | 2.0{d}6.0 |" in text
    assert f"| `test_adapt::test_adapt[6.12]` | g1 | failed | 30 | 6.0{d}7.0 |" in text


def test_loops_die_with_a_killed_holder(tmp_path):
    holder = subprocess.Popen([sys.executable, str(VMLOAD / "hold_load.py"), "--target",
                               "64", "--max-loops", "3", "--interval", "30", "--log",
                               str(tmp_path / "l"), "--", "sleep", "60"])
    try:
        for _ in range(100):
            kids = subprocess.run(["pgrep", "-P", str(holder.pid)], capture_output=True,
                                  text=True).stdout.split()
            if len(kids) == 4:  # sleep and three loops
                break
            time.sleep(0.05)
        assert len(kids) == 4, kids
    finally:
        holder.kill()
        holder.wait()
    for _ in range(100):
        alive = [k for k in kids if _spinning(k)]
        if not alive:
            break
        time.sleep(0.05)
    assert alive == []
    for k in kids:  # the command, orphaned with its holder
        subprocess.run(["kill", k], capture_output=True, check=False)


def _spinning(pid: str) -> bool:
    """Whether ``pid`` is still a busy loop (a forked holder, not the sleep command)."""
    try:
        return b"sleep" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.parametrize("script, args, says", [
    ("suite.py", ["--groups", "0", "--out", "OUT"], "--groups: must be at least 1, not 0"),
    ("suite.py", ["--durations", "NONE", "--out", "OUT"], "--durations: NONE: no such file"),
    ("report.py", ["."], "no load.jsonl (was it run under hold_load.py?)"),
])
def test_bad_options_are_refused_naming_them(tmp_path, script, args, says):
    out = subprocess.run([sys.executable, str(VMLOAD / script), *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and says in out.stderr, out.stderr
