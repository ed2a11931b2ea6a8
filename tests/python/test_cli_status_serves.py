"""irqres status: whom targets serve, and a coupled target's priority (text)."""

from __future__ import annotations

from irqres.cli.status import format_status
from irqres.cli.verify import format_verify


def test_status_lists_whom_targets_serve_and_the_coupling():
    served = [{"pid": 7, "tgid": 7, "comm": "rx", "policy": "fifo", "priority": 20},
              {"pid": 8, "tgid": 7, "comm": "rx-w", "policy": "other", "priority": 0}]
    coupled = {"name": "nic", "kind": "irq", "mode": "static", "runtime_ns": 0,
               "period_ns": 0, "deadline_ns": 0, "threads": [], "waiting": [],
               "serves": served,
               "coupling": {"priority": 20, "threads": [
                   {"pid": 30, "tgid": 30, "comm": "irq/11-eth0", "policy": "fifo",
                    "priority": 20, "coupled": True}]}}
    reserved = {"name": "disk", "kind": "irq", "mode": "static", "runtime_ns": 1_000_000,
                "period_ns": 10_000_000, "deadline_ns": 10_000_000, "threads": [],
                "waiting": [], "serves": [], "coupling": None}
    reply = {"pid": 1, "profile": "p.yaml", "admission_control": "keep",
             "targets": [coupled, reserved]}
    text = format_status(reply)
    assert "serves: target nic: rx (pid 7) fifo:20, rx-w (pid 8) other" in text
    assert ("coupled: target nic: SCHED_FIFO 20, the highest priority it serves; "
            "irq/11-eth0 (pid 30) fifo:20") in text
    assert "serves: target disk: nobody now" in text
    assert "coupled: target disk" not in text
    row = next(line for line in text.split("\n") if line.startswith("nic "))
    assert row.split()[:3] == ["nic", "irq", "coupled"] and "0ns" not in row
    coupled["coupling"]["priority"] = None
    assert "coupled: target nic: its threads have their own scheduling" in format_status(reply)


def test_verify_lists_whom_targets_serve():
    reply = {"profile": "p.yaml", "checked": 1, "differences": [],
             "serves": [{"target": "nic", "threads": [
                 {"pid": 7, "tgid": 7, "comm": "rx", "policy": "rr", "priority": 5}]},
                 {"target": "disk", "threads": []}]}
    assert format_verify(reply).split("\n") == [
        "Verified p.yaml: 1 thread as the profile says",
        "  target 'nic' serves: rx (pid 7) rr:5",
        "  target 'disk' serves: nobody now"]
    reply["differences"] = ["x (pid 3) of target 'nic': other 0, the processes it serves "
                            "give SCHED_FIFO 5"]
    assert format_verify(reply).split("\n")[1:] == [
        "  x (pid 3) of target 'nic': other 0, the processes it serves give SCHED_FIFO 5",
        "  target 'nic' serves: rx (pid 7) rr:5",
        "  target 'disk' serves: nobody now"]
