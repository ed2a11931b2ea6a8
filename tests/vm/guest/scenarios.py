"""Scenarios run inside the guest. Each gathers facts and returns them as a dict; the host
test (tests/vm/test_*.py) asserts on them, so a failure shows what the guest really saw."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import time

from vmguest import (
    OUT,
    Sink,
    irq_threads,
    mark,
    partitions,
    read,
    request,
    sh,
    thread,
    wait_for,
)

NIC_THREAD = "irq/11-eth0"
TRACE_EVENTS = ("-e irq:irq_handler_entry -e irq:irq_handler_exit -e sched:sched_switch "
                "-e sched:sched_waking -e sched:sched_wakeup")


def _irqresd() -> dict:
    show = sh("systemctl show irqresd.service -p Type -p ActiveState -p SubState "
              "-p MainPID -p NRestarts -p Result")
    props = dict(line.split("=", 1) for line in show["out"].splitlines() if "=" in line)
    return props


def _snapshot(label: str) -> dict:
    """The NIC thread, the partitions and irqresd as they are now."""
    return {"label": label, "thread": thread(NIC_THREAD), "partitions": partitions(),
            "irqresd": _irqresd(), "t_ns": time.monotonic_ns()}


def _dl_matches(want: dict):
    """A predicate: the NIC thread exists and has exactly the wanted reservation."""
    def pred():
        t = thread(NIC_THREAD)
        s = t and t["sched"]
        if s and s["policy"] == "deadline" and all(s[k] == want[k] for k in want):
            return t
        return None
    return pred


def scenario_boot_basics() -> dict:
    """The RT kernel, its IRQ threads, the guest's Python stack and the project's package."""
    versions = sh("python3 -c 'import numpy, scipy, click, yaml; "
                  "print(numpy.__version__, scipy.__version__, click.__version__)'")
    return {
        "uname": platform.uname()._asdict(),
        "realtime": read("/sys/kernel/realtime"),
        "threads": irq_threads(),
        "versions": versions["out"].split(),
        "import_units": sh("cd / && python3 -c 'import irqres.units, irqres; "
                           "print(irqres.__file__)'"),
        "cli_version": sh("irqres --version"),
        "cgroup_controllers": read("/sys/fs/cgroup/cgroup.controllers"),
        "eth0": sh("ip -br addr show eth0"),
    }


def scenario_daemon_boot() -> dict:
    """irqresd started by the boot transaction with /etc/irqres/profile.yaml."""
    # Type=notify: ActiveState=active only after READY=1.
    _, waited = wait_for(lambda: _irqresd().get("ActiveState") in ("active", "failed"), 60, 0.2)
    return {
        "snapshot": _snapshot("after boot"),
        "profile": read("/etc/irqres/profile.yaml"),
        "status_json": sh("irqres status --json"),
        "status_text": sh("irqres status"),
        "journal": sh("journalctl -b -u irqresd.service --no-pager -o cat"),
        "active_wait_ns": waited,
    }


def scenario_hotplug(runtime_ns: int, period_ns: int, deadline_ns: int, bound_s: float) -> dict:
    """Driver reload and link down/up recreate the NIC thread; the reservation comes back."""
    want = {"runtime_ns": runtime_ns, "period_ns": period_ns, "deadline_ns": deadline_ns}
    wait_for(lambda: _irqresd().get("ActiveState") == "active", 60, 0.2)
    before = _snapshot("before")
    steps = []
    for label, cmd in (("driver reload", "rmmod e1000 && modprobe e1000"),
                       ("link down/up", "ip link set eth0 down && ip link set eth0 up")):
        old = thread(NIC_THREAD)
        mark(f"hotplug: {label}")
        t0 = time.monotonic_ns()
        r = sh(cmd)
        # the old thread must go (a new pid), then the new one must get the reservation
        def fresh_dl(old_pid=old["pid"] if old else None):
            t = _dl_matches(want)()
            return t if t and t["pid"] != old_pid else None
        got, _ = wait_for(fresh_dl, bound_s)
        dt = time.monotonic_ns() - t0
        steps.append({"label": label, "cmd": r, "old": old, "new": got or thread(NIC_THREAD),
                      "restored": got is not None, "reaction_ns": dt})
        mark(f"hotplug: {label}: {'reservation back' if got else 'NOT back'} "
             f"after {dt / 1e6:.1f} ms")
    return {"before": before, "steps": steps,
            "journal": sh("journalctl -b -u irqresd.service --no-pager -o cat")}


def scenario_stop(runtime_ns: int, period_ns: int, deadline_ns: int) -> dict:
    """systemctl stop restores; kill -9 then start ends consistent."""
    want = {"runtime_ns": runtime_ns, "period_ns": period_ns, "deadline_ns": deadline_ns}
    wait_for(lambda: _irqresd().get("ActiveState") == "active", 60, 0.2)
    snaps = [_snapshot("running")]
    sh("systemctl stop irqresd.service")
    snaps.append(_snapshot("after stop"))
    sh("systemctl start irqresd.service")
    wait_for(_dl_matches(want), 10)
    snaps.append(_snapshot("after start"))
    pid = _irqresd().get("MainPID", "0")
    mark(f"stop: kill -9 irqresd (pid {pid})")
    sh(f"kill -9 {pid}")
    # systemd may restart it by itself (Restart=); otherwise start it as an admin would
    wait_for(lambda: _irqresd().get("ActiveState") != "active"
             or _irqresd().get("MainPID") not in ("0", pid), 10, 0.1)
    time.sleep(1)
    snaps.append(_snapshot("after kill -9"))
    if _irqresd().get("ActiveState") != "active":
        sh("systemctl start irqresd.service")
    wait_for(_dl_matches(want), 10)
    snaps.append(_snapshot("after restart"))
    sh("systemctl stop irqresd.service")
    snaps.append(_snapshot("after final stop"))
    return {"snapshots": snaps, "state_dir": sh("ls -la /run/irqres 2>&1"),
            "journal": sh("journalctl -b -u irqresd.service --no-pager -o cat")}


def _record(path: str, load: str, seconds: int) -> tuple[dict, list[str]]:
    """trace-cmd record while the host sends ``load``; returns the command and the reply."""
    rec = subprocess.Popen(
        f"exec trace-cmd record -q -b 4096 {TRACE_EVENTS} -o {path}",
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(2)  # trace-cmd starts its per-CPU readers
    reply = request(load)
    time.sleep(0.5)
    rec.send_signal(2)
    out, _ = rec.communicate(timeout=120)
    return {"rc": rec.returncode, "out": out[-3000:]}, reply


def scenario_analysis(pps: int, seconds: int, size: int, port: int) -> dict:
    """A trace of the NIC thread under fixed-rate UDP, analysed and applied in the guest."""
    wait_for(lambda: _irqresd().get("ActiveState") in ("active", "failed", "inactive"), 60, 0.2)
    sink = Sink("udp", port)
    trace = os.path.join(OUT, "trace.dat")
    mark(f"analysis: recording while the host sends {pps} UDP datagrams/s for {seconds}s")
    rec, reply = _record(trace, f"udp {port} {pps} {seconds} {size}", seconds)
    received = sink.close()
    mark(f"analysis: host sent {reply[0]}, guest received {received['packets']}")
    analyze = sh(f"irqres analyze {trace} --json", timeout=600)
    result = {"record": rec, "sent": int(reply[0]), "period_ns": int(reply[1]),
              "received": received, "analyze_json": analyze,
              "analyze_text": sh(f"irqres analyze {trace}", timeout=600),
              "trace_size": os.path.getsize(trace) if os.path.exists(trace) else 0}
    # The recommendation as a profile that irqresd must accept for the real thread.
    snippet = os.path.join(OUT, "recommended.yaml")
    rec_cmd = sh(f"irqres analyze {trace} --profile-out {snippet}", timeout=600)
    result["recommend_cmd"] = rec_cmd
    if os.path.exists(snippet):
        result["recommended_profile"] = read(snippet)
        result["apply"] = sh(f"irqres apply {snippet}", timeout=60)
        result["after_apply"] = thread(NIC_THREAD)
    return result


def scenario_throughput(points: list[list[int]], seconds: int, port: int,
                        rt_period_us: int) -> dict:
    """TCP throughput into the guest at several (Q,T) of the NIC thread, and cyclictest
    latency under a UDP flood with and without the reservation."""
    wait_for(lambda: _irqresd().get("ActiveState") == "active", 60, 0.2)
    rows = []
    for q, t in points:
        r = sh(f"irqres set-budget nic {q} {t}")
        got = thread(NIC_THREAD)
        sink = Sink("tcp", port)
        reply = request(f"tcp {port} {seconds}")
        recv = sink.close()
        rows.append({"runtime_ns": q, "period_ns": t, "set_budget": r, "thread": got,
                     "host_sent": int(reply[0]), "host_ns": int(reply[1]), "received": recv})
        mark(f"throughput: Q={q / 1e6:g}ms T={t / 1e6:g}ms: "
             f"{recv['bytes'] * 8 / max(recv['span_ns'], 1) * 1e3:.2f} Mbit/s")
    latency = {}
    for label, reserve in (("reserved", True), ("fifo50", False)):
        if reserve:
            q, t = points[len(points) // 2]
            sh("systemctl start irqresd.service")
            wait_for(lambda: _irqresd().get("ActiveState") == "active", 30, 0.2)
            sh(f"irqres set-budget nic {q} {t}")
        else:
            sh("systemctl stop irqresd.service")
        before = thread(NIC_THREAD)
        sink = Sink("udp", port)
        cyc = subprocess.Popen(
            f"exec cyclictest -q -m -p 60 -a 0 -t 1 -i {rt_period_us} -D {seconds + 2}",
            shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(1)
        reply = request(f"udp {port} 20000 {seconds} 1400")
        out, _ = cyc.communicate(timeout=seconds + 60)
        latency[label] = {"thread": before, "cyclictest": out[-2000:], "host_sent": reply,
                          "received": sink.close()}
    return {"rows": rows, "latency": latency}


def scenario_shell() -> dict:
    """Leave a record of the environment; used when debugging the harness by hand."""
    return {"which": {c: shutil.which(c) for c in ("irqres", "irqresd", "trace-cmd",
                                                    "cyclictest")},
            "units": sh("systemctl list-units --no-pager 'irqres*'"),
            "profile": read("/etc/irqres/profile.yaml"), "env": dict(os.environ),
            "meminfo": json.dumps(read("/proc/meminfo"))[:400]}
