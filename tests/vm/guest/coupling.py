"""Process-aware coupling in the guest (docs/process-aware.md): the e1000's IRQ thread
follows the SCHED_FIFO priority of the UDP receiver bound to the port its target serves."""

from __future__ import annotations

import os
import subprocess
import sys

from vmguest import mark, sh, thread, wait_for

NIC_THREAD = r"irq/\d+-eth0"
_RECEIVER = ("import socket, time\n"
             "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
             "s.bind(('0.0.0.0', {port}))\n"
             "time.sleep(100000)\n")


def _nic() -> list | None:
    t = thread(NIC_THREAD)
    return [t["sched"]["policy"], t["sched"]["priority"]] if t and t["sched"] else None


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
