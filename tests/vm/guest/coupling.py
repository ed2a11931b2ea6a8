"""Process-aware coupling in the guest (docs/process-aware.md): the e1000's IRQ thread
follows the SCHED_FIFO priority of the UDP receiver bound to the port its target serves."""

from __future__ import annotations

import os
import subprocess
import sys

from vmguest import mark, sh, thread, wait_for

_RECEIVER = ("import socket, time\n"
             "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
             "s.bind(('0.0.0.0', {port}))\n"
             "time.sleep(100000)\n")




def _follows(want: list, bound_s: float) -> dict:
    """Waits until the NIC thread has ``want``: what it has then, and the guest ns it took."""
    ok, waited = wait_for(lambda: _nic() == want, bound_s, 0.01)
    return {"want": want, "got": _nic(), "ns": waited if ok else None}


def _receiver(port: int, prio: int) -> subprocess.Popen:
    return subprocess.Popen(["chrt", "-f", str(prio), sys.executable, "-c",
                             _RECEIVER.format(port=port)])


def scenario_coupling(port: int, bound_s: float) -> dict:
    """irqresd.service with a coupled target for eth0 serving ``port``: the NIC thread
    at its default while nobody is bound, at the receiver's priority when one is, after
    its change of priority, back to its default when it exits, and at stop."""
    wait_for(lambda: sh("systemctl is-active irqresd.service")["out"].strip()
                         in ("active", "failed"), 60, 0.2)
    out: dict = {"active": sh("systemctl is-active irqresd.service")["out"].strip(),
                 "before": _nic()}
    mark("coupling: a UDP receiver at SCHED_FIFO 20")
    rx = _receiver(port, 20)
    out["bound"] = _follows(["fifo", 20], bound_s)
    out["status"] = sh("irqres status --json")
    out["status_text"] = sh("irqres status")
    out["verify"] = sh("irqres verify --json")
    mark("coupling: the receiver raises itself to SCHED_FIFO 35")
    os.sched_setscheduler(rx.pid, os.SCHED_FIFO, os.sched_param(35))
    out["raised"] = _follows(["fifo", 35], bound_s)
    mark("coupling: the receiver exits")
    rx.kill()
    rx.wait()
    out["exited"] = _follows(["fifo", 50], bound_s)
    rx = _receiver(port, 10)
    out["again"] = _follows(["fifo", 10], bound_s)
    out["stop"] = sh("systemctl stop irqresd.service")
    out["stopped"] = _nic()
    rx.kill()
    rx.wait()
    out["journal"] = sh("journalctl -b -u irqresd.service --no-pager -o cat")
    return out


def _nics(ifaces: list[str]) -> dict:
    out = {}
    for ifc in ifaces:
        t = thread(rf"irq/\d+-{ifc}")
        out[ifc] = [t["sched"]["policy"], t["sched"]["priority"]] if t and t["sched"] else None
    return out


def _nic() -> list | None:
    """[policy, priority] of eth0's IRQ thread, None while it has none."""
    return _nics(["eth0"])["eth0"]


def _all_follow(want: dict, bound_s: float) -> dict:
    """Waits until each NIC's thread has what ``want`` gives it: what they have then, and
    the guest ns it took."""
    ok, waited = wait_for(lambda: _nics(list(want)) == want, bound_s, 0.01)
    return {"want": want, "got": _nics(list(want)), "ns": waited if ok else None}


def scenario_coupling_per_nic(ports: list[int], prios: list[int], bound_s: float) -> dict:
    """One NIC per served process, the steering of docs/process-aware.md done by wiring:
    irqresd.service with a coupled target for eth0 serving ``ports[0]`` and one for eth1
    serving ``ports[1]``; a receiver on each port at ``prios``. Each NIC's thread takes
    its own receiver's priority, not the highest of both; raising the second receiver
    moves eth1's thread alone; the first receiver's exit puts eth0's alone back at the
    kernel's 50; irqresd's stop puts both back."""
    wait_for(lambda: sh("systemctl is-active irqresd.service")["out"].strip()
                     in ("active", "failed"), 60, 0.2)
    ifaces = ["eth0", "eth1"]
    for ifc in ifaces:      # an e1000 requests its IRQ (and gets its thread) when up
        sh(f"ip link set {ifc} up")
    wait_for(lambda: all(_nics(ifaces).values()), 30, 0.05)
    out: dict = {"active": sh("systemctl is-active irqresd.service")["out"].strip(),
                 "irqs": {ifc: (thread(rf"irq/\d+-{ifc}") or {}).get("comm") for ifc in ifaces},
                 "before": _all_follow({ifc: ["fifo", 50] for ifc in ifaces}, bound_s)}
    mark(f"coupling per NIC: receivers on ports {ports} at SCHED_FIFO {prios}")
    rx = [_receiver(p, prio) for p, prio in zip(ports, prios, strict=True)]
    out["bound"] = _all_follow({"eth0": ["fifo", prios[0]], "eth1": ["fifo", prios[1]]},
                               bound_s)
    out["status"] = sh("irqres status --json")
    raised = max(prios) + 5
    mark(f"coupling per NIC: the receiver on port {ports[1]} raises itself to {raised}")
    os.sched_setscheduler(rx[1].pid, os.SCHED_FIFO, os.sched_param(raised))
    out["raised"] = _all_follow({"eth0": ["fifo", prios[0]], "eth1": ["fifo", raised]},
                                bound_s)
    mark(f"coupling per NIC: the receiver on port {ports[0]} exits")
    rx[0].kill()
    rx[0].wait()
    out["exited"] = _all_follow({"eth0": ["fifo", 50], "eth1": ["fifo", raised]}, bound_s)
    out["stop"] = sh("systemctl stop irqresd.service")
    out["stopped"] = _nics(ifaces)
    rx[1].kill()
    rx[1].wait()
    out["journal"] = sh("journalctl -b -u irqresd.service --no-pager -o cat")
    return out
