"""enforcement: hrtick with a real irqresd on this host, its sched features file a fixture
(``--sys`` points at a copy of /sys whose kernel/debug is ours): the host's own
/sys/kernel/debug/sched/features is never written. HRTICK_DL is switched on with the
reservation, given back when a profile without it replaces the one in force, switched on
again, given back on stop, and after kill -9 by ``irqresd --restore``."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from irqresd_util import profile_text, run_irqresd, task_target, wait_for

pytestmark = pytest.mark.root

OFF = "START_DEBIT NO_HRTICK_DL\n"


def fake_sys(tmp_path: Path) -> Path:
    """/sys as links to the real one, but kernel/debug: an empty debugfs of ours with a
    sched features file saying NO_HRTICK_DL."""
    root = tmp_path / "sys"
    root.mkdir()
    for e in os.listdir("/sys"):
        if e != "kernel":
            (root / e).symlink_to(f"/sys/{e}")
    (root / "kernel").mkdir()
    for e in os.listdir("/sys/kernel"):
        if e != "debug":
            (root / "kernel" / e).symlink_to(f"/sys/kernel/{e}")
    (root / "kernel" / "debug" / "sched").mkdir(parents=True)
    (root / "kernel" / "debug" / "sched" / "features").write_text(OFF)
    return root


def features(sysroot: Path) -> str:
    return (sysroot / "kernel" / "debug" / "sched" / "features").read_text().strip()


def hrtick_profile(profile, pid: int, enforcement: str) -> Path:
    text = profile_text(task_target("a", "2ms", "10ms", pid=pid))
    return profile(text.replace("version: 1\n", f"version: 1\nenforcement: {enforcement}\n"))


def test_switch_follows_the_profile_in_force(spawn, daemon, profile, tmp_path):
    sysroot = fake_sys(tmp_path)
    a = spawn()
    d = daemon().start(hrtick_profile(profile, a.pid, "hrtick"), "--sys", str(sysroot))
    try:
        assert features(sysroot) == "HRTICK_DL"
        state = (d.run_dir / "state").read_text()
        assert "sched_feature name=HRTICK_DL was=0 set=1 crc32=" in state
        enf = d.request("status")["enforcement"]
        assert (enf["requested"], enf["held"], enf["hrtick_dl"]) == (True, True, True), enf
        assert enf["features_path"] == str(sysroot / "kernel/debug/sched/features")
        # a profile that keeps the feature as it is: irqresd gives back what it took
        reply = d.send_profile("apply", hrtick_profile(profile, a.pid, "keep"))
        assert reply["ok"], reply
        assert reply["plan"]["enforcement"]["action"] == "give-back", reply["plan"]
        assert features(sysroot) == "NO_HRTICK_DL"
        assert d.request("status")["enforcement"]["held"] is False
        # and the hrtick profile again
        reply = d.send_profile("apply", hrtick_profile(profile, a.pid, "hrtick"))
        assert reply["ok"] and reply["plan"]["enforcement"]["action"] == "switch-on", reply
        assert features(sysroot) == "HRTICK_DL"
    finally:
        assert d.stop() == 0
    assert features(sysroot) == "NO_HRTICK_DL"
    assert not (d.run_dir / "state").exists()


def test_kill_then_restore_gives_it_back(spawn, daemon, profile, tmp_path):
    sysroot = fake_sys(tmp_path)
    a = spawn()
    d = daemon().start(hrtick_profile(profile, a.pid, "hrtick"), "--sys", str(sysroot))
    assert features(sysroot) == "HRTICK_DL"
    d.stop(signal.SIGKILL)
    assert features(sysroot) == "HRTICK_DL"  # a crash leaves it, recorded
    st = run_irqresd("--status", "--json", "--run-dir", str(d.run_dir))
    assert '"sched_feature":{"name":"HRTICK_DL","was":false,"set":true}' in st.stdout
    r = run_irqresd("--restore", "--run-dir", str(d.run_dir), "--sys", str(sysroot))
    assert r.returncode == 0, r.stderr
    assert features(sysroot) == "NO_HRTICK_DL"
    assert not (d.run_dir / "state").exists()
    assert wait_for(lambda: Path(f"/proc/{a.pid}/stat").read_text().split()[40] == "0")


def test_refused_without_debugfs(spawn, daemon, profile, tmp_path):
    """debugfs not mounted (an empty kernel/debug): the profile is refused before anything
    changes, with the reason."""
    sysroot = fake_sys(tmp_path)
    (sysroot / "kernel/debug/sched/features").unlink()
    (sysroot / "kernel/debug/sched").rmdir()
    a = spawn()
    p = hrtick_profile(profile, a.pid, "hrtick")
    r = run_irqresd("--dry-run", "--json", "-p", str(p), "--sys", str(sysroot))
    assert '"action":"impossible"' in r.stdout and "debugfs is not mounted at" in r.stdout
    run_dir = tmp_path / "once"
    r = run_irqresd("--once", "-p", str(p), "--run-dir", str(run_dir), "--sys", str(sysroot))
    assert r.returncode != 0
    assert "enforcement: hrtick: debugfs is not mounted at" in r.stderr, r.stderr
    assert not (run_dir / "state").exists()
    assert Path(f"/proc/{a.pid}/stat").read_text().split()[40] == "0"  # SCHED_OTHER
