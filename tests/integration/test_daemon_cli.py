"""irqresd's command line: --dry-run exit codes and JSON, bad options."""

from __future__ import annotations

import json

import pytest
from irqresd_util import SCHED_OTHER, profile_text, run_irqresd, sched_getattr, task_target

pytestmark = pytest.mark.root


def test_dry_run_feasible_text_and_json(spawn, profile, tmp_path):
    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    r = run_irqresd("--dry-run", "-p", str(p), "--run-dir", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    assert str(a.pid) in r.stdout
    r = run_irqresd("-n", "--json", "-p", str(p), "--run-dir", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["feasible"] is True
    (item,) = plan["items"]
    assert item["pid"] == a.pid and item["target"] == "a"
    assert (item["runtime_ns"], item["period_ns"], item["deadline_ns"]) == (
        2_000_000, 10_000_000, 10_000_000)
    assert item["new_policy"] == "deadline" and item["verdict"] == "ok"
    assert sched_getattr(a.pid).policy == SCHED_OTHER  # nothing changed
    assert not (tmp_path / "run" / "state").exists()


def test_dry_run_infeasible_exits_1(spawn, profile):
    a, b, c = spawn(), spawn(), spawn()
    p = profile(profile_text(*(task_target(n, "9900us", "10ms", pid=x.pid)
                               for n, x in (("a", a), ("b", b), ("c", c)))))
    r = run_irqresd("--dry-run", "--json", "-p", str(p))
    assert r.returncode == 1, r.stderr
    plan = json.loads(r.stdout)
    assert plan["feasible"] is False
    assert any(it["verdict"] != "ok" for it in plan["items"])


def test_dry_run_matches_nothing_exits_1(profile):
    p = profile(profile_text(task_target("ghost", "1ms", "10ms", comm="no-such-comm-x")))
    r = run_irqresd("--dry-run", "-p", str(p))
    assert r.returncode == 1
    assert "matches no thread" in r.stderr and "ghost" in r.stderr


@pytest.mark.parametrize("args, words", [
    (["--dry-run"], "needs a profile"),
    (["--bogus"], "unknown option '--bogus'"),
    (["--rescan", "soon"], "--rescan 'soon': not a duration"),
    (["--rescan", "100"], "--rescan '100': a number needs a unit"),
    (["--rescan", "-1s"], "--rescan '-1s': a duration must not be negative"),
    (["--rescan", "2h"], "--rescan '2h': not a duration"),
    (["--rescan", "3601s"], "--rescan '3601s': longer than 1h"),
    (["--json"], "--json goes with --dry-run"),
    (["--once", "--restore"], "exclude each other"),
    (["-p"], "needs an argument"),
    (["stray"], "unexpected argument 'stray'"),
])
def test_bad_options_exit_2(args, words):
    r = run_irqresd(*args)
    assert r.returncode == 2 and words in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_bad_profile_exits_2(profile):
    p = profile("version: 1\ntargets:\n  - name: a\n    task: {pid: 4242}\n    runtime: 2 parsecs\n"
                "    period: 10ms\n")
    r = run_irqresd("--dry-run", "-p", str(p))
    assert r.returncode == 2
    assert f"{p}:5:" in r.stderr
    r = run_irqresd("--dry-run", "-p", "/nonexistent.yaml")
    assert r.returncode == 2 and "/nonexistent.yaml" in r.stderr


def test_help_and_version():
    r = run_irqresd("--help")
    assert r.returncode == 0 and "--dry-run" in r.stdout and "--no-netlink" in r.stdout
    r = run_irqresd("--version")
    assert r.returncode == 0 and r.stdout.strip() == "irqresd 0.1.0"
