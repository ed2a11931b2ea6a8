"""threaded_napi with a real irqresd on this host, the interface a fixture: ``--sys`` points
at a copy of /sys whose class/net is ours (interface fx0), so the host's own interfaces
are never written. The switch is made with the reservations and recorded first, given back
on stop, after kill -9 by ``irqresd --restore``, and on a failed apply; an interface that
cannot be switched is refused before anything changes. A napi target is listed with its
kind."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from irqres import schedattr
from irqresd_util import profile_text, run_irqresd, task_target, wait_for
from json_doc import check, load

pytestmark = pytest.mark.root

IFACE = "fx0"


def fake_sys(tmp_path: Path) -> Path:
    """/sys as links to the real one, but class/net: one interface fx0 of ours, polling
    NAPI in soft IRQs (threaded 0)."""
    root = tmp_path / "sys"
    root.mkdir()
    for e in os.listdir("/sys"):
        if e != "class":
            (root / e).symlink_to(f"/sys/{e}")
    (root / "class").mkdir()
    for e in os.listdir("/sys/class"):
        if e != "net":
            (root / "class" / e).symlink_to(f"/sys/class/{e}")
    dev = root / "class" / "net" / IFACE
    dev.mkdir(parents=True)
    (dev / "ifindex").write_text("4000\n")
    (dev / "threaded").write_text("0\n")
    return root


def threaded(sysroot: Path) -> str:
    return (sysroot / "class" / "net" / IFACE / "threaded").read_text().strip()


def napi_profile(profile, pid: int) -> Path:
    napi = (f"  - name: poll\n    napi: {IFACE}\n    threaded_napi: true\n"
            f"    runtime: 1ms\n    period: 10ms\n")
    return profile(profile_text(task_target("a", "2ms", "10ms", pid=pid), napi))


def policy(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[38]


def test_switched_with_the_profile_and_back_on_stop(spawn, daemon, profile, tmp_path):
    sysroot = fake_sys(tmp_path)
    a = spawn()
    p = napi_profile(profile, a.pid)
    r = run_irqresd("--dry-run", "--json", "-p", str(p), "--sys", str(sysroot))
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    check(plan, "PLAN", load())
    assert [it["kind"] for it in plan["items"]] == ["task"]
    assert any(f"interface '{IFACE}': threaded NAPI is off (threaded 0): applying switches "
               f"it on (target 'poll')" in w for w in plan["warnings"]), plan["warnings"]
    assert threaded(sysroot) == "0"     # a dry run changes nothing
    d = daemon().start(p, "--sys", str(sysroot))
    try:
        assert threaded(sysroot) == "1"
        state = (d.run_dir / "state").read_text()
        assert f"napi_threaded ifname={IFACE} was=0 set=1 crc32=" in state
        kinds = {t["name"]: t["kind"] for t in d.request("status")["targets"]}
        assert kinds == {"a": "task", "poll": "napi"}, kinds
        # someone switches it off behind irqresd's back: verify says so
        (sysroot / "class" / "net" / IFACE / "threaded").write_text("0\n")
        v = d.request("verify")
        assert not v["consistent"], v
        assert any(f"interface '{IFACE}': threaded NAPI is off" in x
                   for x in v["differences"]), v
        (sysroot / "class" / "net" / IFACE / "threaded").write_text("1\n")
        # a profile without the switch replaces it: given back; with it again: on
        reply = d.send_profile("apply", profile(profile_text(
            task_target("a", "2ms", "10ms", pid=a.pid))))
        assert reply["ok"], reply
        assert threaded(sysroot) == "0"
        assert "napi_threaded" not in (d.run_dir / "state").read_text()
        assert d.send_profile("apply", p)["ok"]
        assert threaded(sysroot) == "1"
    finally:
        assert d.stop() == 0
    assert threaded(sysroot) == "0"
    assert not (d.run_dir / "state").exists()


def test_kill_then_restore_gives_it_back(spawn, daemon, profile, tmp_path):
    sysroot = fake_sys(tmp_path)
    a = spawn()
    d = daemon().start(napi_profile(profile, a.pid), "--sys", str(sysroot))
    assert threaded(sysroot) == "1"
    d.stop(signal.SIGKILL)
    assert threaded(sysroot) == "1"  # a crash leaves it, recorded
    st = run_irqresd("--status", "--json", "--run-dir", str(d.run_dir))
    out = json.loads(st.stdout)
    check(out, "STATE", load())
    assert out["napi_threaded"] == [{"interface": IFACE, "was": 0, "set": 1}]
    r = run_irqresd("--restore", "--run-dir", str(d.run_dir), "--sys", str(sysroot))
    assert r.returncode == 0, r.stderr
    assert threaded(sysroot) == "0"
    assert not (d.run_dir / "state").exists()
    assert wait_for(lambda: policy(a.pid) == "0")


def test_failed_apply_gives_it_back(spawn, profile, tmp_path):
    """The switch is made before the plan (its kthreads are to be found by it); a plan
    the kernel refuses puts it back with everything else."""
    sysroot = fake_sys(tmp_path)
    # a whole CPU for each task, one task per CPU: more than admission control (at most
    # sched_rt_runtime_us / sched_rt_period_us of each CPU) lets the plan take
    tasks = [spawn() for _ in range(os.cpu_count() or 1)]
    napi = (f"  - name: poll\n    napi: {IFACE}\n    threaded_napi: true\n"
            f"    runtime: 1ms\n    period: 10ms\n")
    p = profile(profile_text(*(task_target(f"t{i}", "10ms", "10ms", pid=t.pid)
                               for i, t in enumerate(tasks)), napi))
    run_dir = tmp_path / "once"
    r = run_irqresd("--once", "-p", str(p), "--run-dir", str(run_dir), "--sys", str(sysroot))
    assert r.returncode != 0
    assert "admission" in r.stderr, r.stderr
    assert f"interface {IFACE}: threaded NAPI back to 0" in r.stderr, r.stderr
    assert threaded(sysroot) == "0"
    assert not (run_dir / "state").exists()
    assert all(policy(t.pid) == "0" for t in tasks)


@pytest.mark.parametrize("damage, cause", [
    ("read-only", "the threaded file is not writable"),
    ("no threaded", "no threaded file: the kernel has no threaded NAPI"),
    ("gone", "no such interface"),
])
def test_refused_before_anything_changes(spawn, profile, tmp_path, damage, cause):
    sysroot = fake_sys(tmp_path)
    dev = sysroot / "class" / "net" / IFACE
    if damage == "read-only":
        (dev / "threaded").chmod(0o444)
    elif damage == "no threaded":
        (dev / "threaded").unlink()
    else:
        (dev / "threaded").unlink()
        (dev / "ifindex").unlink()
        dev.rmdir()
    a = spawn()
    p = napi_profile(profile, a.pid)
    want = (f"interface '{IFACE}' (target 'poll', threaded_napi: true): cannot switch to "
            f"threaded NAPI: {cause}")
    r = run_irqresd("--dry-run", "--json", "-p", str(p), "--sys", str(sysroot))
    plan = json.loads(r.stdout)
    assert not plan["feasible"] and any(want in e for e in plan["errors"]), plan["errors"]
    run_dir = tmp_path / "once"
    r = run_irqresd("--once", "-p", str(p), "--run-dir", str(run_dir), "--sys", str(sysroot))
    assert r.returncode != 0
    assert want in r.stderr, r.stderr
    assert not (run_dir / "state").exists()
    assert policy(a.pid) == "0"  # SCHED_OTHER: the task target was not applied either
    if damage == "read-only":
        assert threaded(sysroot) == "0"


def test_restore_from_a_damaged_state_file(spawn, profile, tmp_path):
    """A damaged file is kept and its good records restored: the interface's among them."""
    sysroot = fake_sys(tmp_path)
    a, b = spawn(), spawn()
    napi = (f"  - name: poll\n    napi: {IFACE}\n    threaded_napi: true\n"
            f"    runtime: 1ms\n    period: 10ms\n")
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid),
                             task_target("b", "2ms", "10ms", pid=b.pid), napi))
    run_dir = tmp_path / "once"
    r = run_irqresd("--once", "-p", str(p), "--run-dir", str(run_dir), "--sys", str(sysroot))
    assert r.returncode == 0, r.stderr
    assert threaded(sysroot) == "1"
    state = run_dir / "state"
    lines = state.read_text().splitlines(keepends=True)
    victim = next(i for i, ln in enumerate(lines) if f"pid={b.pid} " in ln)
    lines[victim] = lines[victim].replace("policy=other", "policy=otherx")  # checksum fails
    state.write_text("".join(lines))
    damaged = state.read_text()
    r = run_irqresd("--restore", "--run-dir", str(run_dir), "--sys", str(sysroot))
    assert r.returncode == 1, r.stderr        # not everything could be restored
    assert threaded(sysroot) == "0", r.stderr
    assert f"interface {IFACE}: threaded NAPI back to 0" in r.stderr, r.stderr
    assert state.read_text() == damaged       # kept as it is
    assert wait_for(lambda: policy(a.pid) == "0")
    assert schedattr.set_attr(b.pid, 0) == 0  # b's record was lost: the test puts it back


def test_a_napi_target_is_no_problem_when_another_target_switches_its_interface(
        spawn, profile, tmp_path):
    """The plan names an interface polling in soft IRQs under a napi target, unless some
    target of the profile switches that interface (not necessarily the napi target)."""
    sysroot = fake_sys(tmp_path)
    a = spawn()
    poll = f"  - name: poll\n    napi: {IFACE}\n    runtime: 1ms\n    period: 10ms\n"
    switch = (f"  - name: nic\n    interface: {IFACE}\n    threaded_napi: true\n"
              f"    runtime: 1ms\n    period: 10ms\n")
    polls = f"target 'poll': selector problem: interface '{IFACE}' polls NAPI in soft IRQs"
    for targets, named in ((poll, True), (switch + poll, False)):
        p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid), targets))
        r = run_irqresd("--dry-run", "--json", "-p", str(p), "--sys", str(sysroot))
        warnings = json.loads(r.stdout)["warnings"]
        assert any(polls in w for w in warnings) is named, (targets, warnings)
    assert any("applying switches it on (target 'nic')" in w for w in warnings), warnings
    assert threaded(sysroot) == "0"


def test_a_napi_selector_problem_says_what_the_switch_would(spawn, profile, tmp_path):
    """A threaded file the plan cannot use is named with the words the switch uses."""
    sysroot = fake_sys(tmp_path)
    (sysroot / "class" / "net" / IFACE / "threaded").write_text("x\n")
    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid),
                             f"  - name: poll\n    napi: {IFACE}\n    runtime: 1ms\n"
                             "    period: 10ms\n"))
    r = run_irqresd("--dry-run", "--json", "-p", str(p), "--sys", str(sysroot))
    warnings = json.loads(r.stdout)["warnings"]
    assert any(f"target 'poll': selector problem: interface '{IFACE}': " in w
               and w.endswith("/threaded: the threaded file holds no value 0, 1 or 2")
               for w in warnings), warnings
