"""The restore-fidelity comparison (vmguest.fingerprint_diff), checked without booting a
guest on fingerprints a 6.1 guest recorded in the crash campaign: before irqresd first
ran, after irqresd applied demo.yaml and was SIGKILLed with no recovery, and after
``irqresd --restore``. The comparison must find nothing after the restore, and name what
the kill left without it; each part of the scheduler state it covers is changed in turn
to show that it is compared."""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "guest"))

from vmguest import fingerprint_diff

DATA = Path(__file__).parent / "data" / "fingerprints-6.1.json.gz"
NIC = "irq/11-eth0"


@pytest.fixture(scope="module")
def prints() -> dict:
    return json.loads(gzip.decompress(DATA.read_bytes()))


def _tid(fp: dict, comm: str) -> str:
    return next(tid for tid, t in fp["threads"].items() if t["comm"] == comm)


def test_the_restore_left_nothing(prints):
    assert fingerprint_diff(prints["before"], prints["restored"]) == []


def test_a_kill_without_restore_is_named(prints):
    diff = fingerprint_diff(prints["before"], prints["unrestored"])
    thread = [d for d in diff if d.startswith(f"thread {NIC} ")]
    assert thread and "policy 'fifo' -> 'deadline'" in thread[0], diff
    assert any(d.startswith("cgroup /irqres") and d.endswith(" left") for d in diff), diff
    # the partition is a root domain of its own: the scheduling domains show it
    assert any(d.startswith("domain ") for d in diff), diff


@pytest.mark.parametrize("change, named", [
    (lambda fp: fp["sysctl"].update(sched_rt_runtime_us="-1"), "sysctl sched_rt_runtime_us"),
    (lambda fp: fp["features"].append("HRTICK"), "sched features"),
    (lambda fp: fp["dl_bw"]["rd"]["1"].update(total_bw=fp["dl_bw"]["rd"]["1"]["total_bw"] + 1),
     "root domain of CPU 1"),
    (lambda fp: fp["cgroups"]["/"].update({"cgroup.subtree_control": "cpuset"}),
     "cgroup / cgroup.subtree_control"),
    (lambda fp: fp["cgroups"]["/init.scope"].update({"cpuset.cpus.partition": "root"}),
     "cgroup /init.scope cpuset.cpus.partition"),
    (lambda fp: fp["domains"].update({"cpu0/domain0/span": "01"}), "domain cpu0/domain0/span"),
])
def test_each_part_is_compared(prints, change, named):
    after = copy.deepcopy(prints["restored"])
    change(after)
    diff = fingerprint_diff(prints["before"], after)
    assert len(diff) == 1 and diff[0].startswith(named), diff


def test_a_thread_keeps_its_cpus_and_cgroup(prints):
    after = copy.deepcopy(prints["restored"])
    t = next(t for t in after["threads"].values() if t["kthread"] and t["comm"] == "kthreadd")
    t["cpus"] = "0"
    t["cgroup"] = "/irqres-cpu1"
    diff = fingerprint_diff(prints["before"], after)
    assert diff == ["thread kthreadd (tid 2): cgroup '/' -> '/irqres-cpu1', cpus '0-1' -> '0'"]


def test_a_workqueue_worker_s_cpus_are_the_kernel_s(prints):
    before, after = copy.deepcopy(prints["before"]), copy.deepcopy(prints["restored"])
    tid = next(tid for tid, t in before["threads"].items() if t["comm"] == "kthreadd")
    before["threads"][tid]["wq_worker"] = True
    after["threads"][tid]["cpus"] = "0"
    assert fingerprint_diff(before, after) == []
    after["threads"][tid]["policy"] = "fifo"
    assert fingerprint_diff(before, after) == ["thread kthreadd (tid 2): policy 'other' -> 'fifo'"]


def test_an_irq_thread_s_cpus_that_follow_its_irq_are_the_kernel_s(prints):
    """The kernel gives an IRQ thread its IRQ's CPUs at its next wake-up; irqres never
    writes an IRQ's affinity. Seen on 7.3 with CPU 1 isolated: the serial console's
    irq/4-ttyS0 from CPU 1 to 0-1 while the scenario took CPU 1 offline."""
    before, after = prints["before"], copy.deepcopy(prints["restored"])
    tid, comm = next((tid, t["comm"]) for tid, t in before["threads"].items()
                     if t["comm"].startswith("irq/") and tid in after["threads"])
    irq = comm[len("irq/"):].partition("-")[0]
    was = before["threads"][tid]["cpus"]
    now = after["threads"][tid]["cpus"] = "0-1" if was != "0-1" else "1"
    named = f"thread {comm} (tid {tid}): cpus {was!r} -> {now!r}"
    assert fingerprint_diff(before, after) == [named]   # no affinity recorded: compared
    after["irq_affinity"] = {irq: ["7", "7"]}
    assert fingerprint_diff(before, after) == [named]   # not its IRQ's CPUs
    after["irq_affinity"] = {irq: [now, "1"]}
    assert fingerprint_diff(before, after) == []
    policy = before["threads"][tid]["policy"]
    after["threads"][tid]["policy"] = "deadline"        # the rest is still compared
    assert fingerprint_diff(before, after) == [
        f"thread {comm} (tid {tid}): policy {policy!r} -> 'deadline'"]


def test_an_irq_thread_made_anew_is_compared_by_name(prints):
    before, after = prints["before"], copy.deepcopy(prints["restored"])
    tid = _tid(before, NIC)                     # a link down/up made it anew already
    fresh = after["threads"].pop(_tid(after, NIC))
    fresh["cpus"] = "1"                         # the kernel's choice for a new thread
    after["threads"]["999999"] = {**fresh, "start": fresh["start"] + 1}
    assert fingerprint_diff(before, after) == []
    after["threads"]["999999"]["policy"] = "deadline"
    assert fingerprint_diff(before, after)[0].startswith(f"thread {NIC} (tid {tid}): policy")
    del after["threads"]["999999"]
    assert fingerprint_diff(before, after) == [f"thread {NIC} (tid {tid}) gone"]


def test_processes_and_units_come_and_go(prints):
    before, after = prints["before"], copy.deepcopy(prints["restored"])
    user = next(tid for tid, t in after["threads"].items() if not t["kthread"])
    del after["threads"][user]                  # a process that ended
    after["threads"]["999998"] = {**before["threads"][user], "policy": "fifo"}  # one born
    after["cgroups"]["/system.slice/irqres-tune.service"] = {}   # a unit started
    assert fingerprint_diff(before, after) == []
    after["cgroups"]["/irqres-cpu1"] = {}
    assert fingerprint_diff(before, after) == ["cgroup /irqres-cpu1 left"]


def test_an_irq_thread_whose_device_freed_its_irq_is_not_a_difference(prints):
    # 6.12, CI: the 8250 driver frees ttyS0's IRQ when the port's last user closes it,
    # and the kernel ends irq/4-ttyS0; nothing irqres did or could restore
    before = copy.deepcopy(prints["before"])
    after = copy.deepcopy(prints["restored"])
    tid = _tid(before, NIC)
    after["threads"] = {k: t for k, t in after["threads"].items() if t["comm"] != NIC}
    after["irq_actions"] = {"11": []}
    assert fingerprint_diff(before, after) == []
    # while the IRQ still has its handler, the thread's end is named
    after["irq_actions"] = {"11": ["eth0"]}
    assert fingerprint_diff(before, after) == [f"thread {NIC} (tid {tid}) gone"]
    # a fingerprint that did not record the handlers cannot tell: named
    del after["irq_actions"]
    assert fingerprint_diff(before, after) == [f"thread {NIC} (tid {tid}) gone"]


def test_threads_and_handlers_are_read_as_one_view(monkeypatch):
    # 6.1, CI: between the read of the threads and that of the handlers, a console open
    # after a unit's stop requested ttyS0's IRQ again: irq/4-ttyS0 was gone from the one
    # and its handler back in the other, and the comparison called the thread gone
    import vmguest

    closed = {"1": {"comm": "init"}}
    reopened = {**closed, "344": {"comm": "irq/4-ttyS0"}}
    reads = iter([closed, reopened, reopened])
    monkeypatch.setattr(vmguest, "_threads_now", lambda: next(reads))
    monkeypatch.setattr(vmguest, "_irq_actions_now", lambda: {"4": ["ttyS0"]})
    threads, actions = vmguest._irq_view()
    assert threads == reopened and actions == {"4": ["ttyS0"]}
    # a view that never settles is returned as last read, after the tries
    flip = iter([closed, reopened] * 10)
    monkeypatch.setattr(vmguest, "_threads_now", lambda: next(flip))
    threads, _ = vmguest._irq_view(tries=3)
    assert threads in (closed, reopened)


def test_a_thread_that_ends_while_it_is_read_is_not_recorded(monkeypatch):
    # 6.12, CI: two udev workers exited between the read of their stat and sched_getattr;
    # recorded with no policy, the comparison called their scheduling changed
    import vmguest

    stat = "345 (udev-worker) S " + " ".join(["0"] * 49)
    monkeypatch.setattr(vmguest, "read", lambda path: stat if path.endswith("/stat") else None)
    monkeypatch.setattr(vmguest, "sched_attr", lambda tid: None)
    assert vmguest._task_entry("345", "345") is None
    attr = {"policy": "other", "priority": 0, "runtime_ns": 0, "deadline_ns": 0,
            "period_ns": 0}
    monkeypatch.setattr(vmguest, "sched_attr", lambda tid: attr)
    entry = vmguest._task_entry("345", "345")
    assert entry["comm"] == "udev-worker" and entry["policy"] == "other", entry
