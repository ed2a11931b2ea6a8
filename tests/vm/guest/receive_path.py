"""The receive path outside the IRQ thread, in the guest.

``device_leak``: UDP floods into the e1000 while irqresd keeps the NIC thread at several
reservations (and once at its default SCHED_FIFO 50); each phase is recorded with
``irqres record`` (soft IRQ events included) for the host to analyse.

``receive_path_facts``: which of the threads that carry receive work take
SCHED_DEADLINE, in which cgroup, and what the kernel answers when they do not: threaded
NAPI (``napi/eth0-N``), ``ksoftirqd/N``, ``backlog_napi/N`` (6.10+), ``ktimers/N``.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import time

from vmguest import (
    CGROUP,
    OUT,
    Sink,
    cgroup_of,
    cpus_allowed,
    last_cpu,
    mark,
    read,
    request,
    sched_attr,
    sh,
    thread,
    wait_for,
)

NIC_THREAD = r"irq/\d+-eth0"
PF_NO_SETAFFINITY = 0x04000000
MS = 1_000_000


def _active() -> bool:
    return "ActiveState=active" in sh("systemctl show irqresd.service -p ActiveState")["out"]


def _record_phase(label: str, port: int, pps: int, seconds: int, size: int) -> dict:
    path = os.path.join(OUT, f"leak-{label}.dat")
    rec = subprocess.Popen(["irqres", "record", "-o", path, "--buffer-kb", "8192",
                            "--duration", f"{seconds + 3}s"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # flood only once the recorder's instance traces (starting it takes seconds here)
    on = f"/sys/kernel/tracing/instances/irqres-{rec.pid}/tracing_on"
    wait_for(lambda: read(on) == "1" or rec.poll() is not None, 300, 0.05)
    time.sleep(0.3)
    sink = Sink("udp", port)
    reply = request(f"udp {port} {pps} {seconds} {size}")
    received = sink.close()
    out, _ = rec.communicate(timeout=600)
    return {"label": label, "record": {"rc": rec.returncode, "out": out[-2000:]},
            "trace": os.path.basename(path), "sent": int(reply[0]), "received": received,
            "thread": thread(NIC_THREAD)}


def scenario_device_leak(port: int, pps: int, seconds: int, size: int,
                         phases: list[list], facts: bool = False) -> dict:
    """``phases``: [label, Q ns, T ns] under irqresd's ``nic`` target, or [label, None,
    None] with irqresd stopped (the thread at SCHED_FIFO 50); with ``facts``, the kernel
    facts of :func:`scenario_receive_path_facts` afterwards, in the same boot."""
    wait_for(_active, 60, 0.2)
    out = []
    for label, q, t in phases:
        if q is None:
            sh("systemctl stop irqresd.service")
            wait_for(lambda: not _active(), 30, 0.2)
        else:
            if not _active():
                sh("systemctl start irqresd.service")
                wait_for(_active, 60, 0.2)
            set_budget = sh(f"irqres set-budget nic {q}ns {t}ns")
            if set_budget["rc"] != 0:
                raise RuntimeError(f"set-budget {q}/{t}: {set_budget}")
        mark(f"device_leak: phase {label}: flood of {pps}/s x {size} B for {seconds}s")
        out.append(_record_phase(label, port, pps, seconds, size))
        mark(f"device_leak: {label}: received {out[-1]['received']['packets']} of "
             f"{out[-1]['sent']}")
    result: dict = {"phases": out}
    if facts:
        result["receive_path"] = scenario_receive_path_facts(port)
    return result


# ---- kernel facts ----------------------------------------------------------------------

def _pids(pattern: str) -> list[tuple[int, str]]:
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            comm = (read(f"/proc/{d}/comm") or "").strip()
            if re.fullmatch(pattern, comm):
                found.append((int(d), comm))
    return sorted(found)


def _flags(pid: int) -> int | None:
    stat = read(f"/proc/{pid}/stat")
    if not stat:
        return None
    return int(stat.rsplit(")", 1)[1].split()[6])


def _try_deadline(pid: int) -> str:
    """chrt's answer to SCHED_DEADLINE 1 ms / 10 ms (the kernel's errno by name)."""
    from irqres import schedattr

    rc = schedattr.set_attr(pid, schedattr.SCHED_DEADLINE, runtime_ns=1 * MS,
                            deadline_ns=10 * MS, period_ns=10 * MS)
    return "ok" if rc == 0 else errno.errorcode.get(rc, str(rc))


def _restore(pid: int, was: dict | None) -> str:
    from irqres import schedattr

    if not was:
        return "unknown"
    pol = {"other": schedattr.SCHED_OTHER, "fifo": schedattr.SCHED_FIFO,
           "rr": schedattr.SCHED_RR}.get(was["policy"])
    if pol is None:
        return f"left ({was['policy']})"
    rc = schedattr.set_attr(pid, pol, priority=was["priority"] if pol != schedattr.SCHED_OTHER
                            else 0)
    return "ok" if rc == 0 else errno.errorcode.get(rc, str(rc))


def _move(pid: int, group: str) -> str:
    try:
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write(str(pid))
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno or 0, str(e.errno))


def _partition(cpu: int) -> tuple[str, dict]:
    """A cpuset partition of ``cpu`` alone (as irqresd makes them)."""
    sh(f"echo +cpuset > {CGROUP}/cgroup.subtree_control")
    group = os.path.join(CGROUP, f"facts-cpu{cpu}")
    os.makedirs(group, exist_ok=True)
    for name, value in (("cpuset.cpus", str(cpu)), ("cpuset.mems", "0"),
                        ("cpuset.cpus.partition", "root")):
        with open(os.path.join(group, name), "w") as f:
            f.write(value)
    return group, {"cpus": read(os.path.join(group, "cpuset.cpus.effective")),
                   "partition": read(os.path.join(group, "cpuset.cpus.partition"))}


def _drop_partition(group: str) -> None:
    """Undo :func:`_partition`."""
    with open(os.path.join(group, "cpuset.cpus.partition"), "w") as f:
        f.write("member")
    os.rmdir(group)


def _with_partition(pid: int, was: dict | None, port: int) -> dict:
    """A thread allowed on every CPU once CPU 0 is a partition (as irqresd makes one for
    the IRQ thread pinned there): SCHED_DEADLINE where it is, then the move into the
    partition and, once it has run there, SCHED_DEADLINE again."""
    group, part = _partition(0)
    got = {"partition": part, "cpus": cpus_allowed(pid), "on_cpu": last_cpu(pid),
           "deadline_beside": _try_deadline(pid)}
    if got["deadline_beside"] == "ok":
        got["restored"] = _restore(pid, was)
    got["move"] = _move(pid, group)
    if got["move"] == "ok":
        # a sleeping thread moves to the partition's CPU when it next wakes: until then
        # its run queue, and so its root domain, is the other CPU's; a trickle wakes it
        got["cpus_in_partition"] = cpus_allowed(pid)
        got["on_cpu_moved"] = last_cpu(pid)
        sink = Sink("udp", port)
        request(f"udp {port} 200 1 100")
        sink.close()
        wait_for(lambda: last_cpu(pid) == 0, 10, 0.05)
        got["on_cpu_woken"] = last_cpu(pid)
        got["deadline_in_partition"] = _try_deadline(pid)
        if got["deadline_in_partition"] == "ok":
            got["restored"] = _restore(pid, was)
        got["move_back"] = _move(pid, CGROUP)
    _drop_partition(group)
    got["cpus_after"] = cpus_allowed(pid)
    return got


def _fact(pid: int, comm: str, port: int) -> dict:
    was = sched_attr(pid)
    flags = _flags(pid) or 0
    fact = {"pid": pid, "comm": comm, "policy": was, "cpus": cpus_allowed(pid),
            "cgroup": cgroup_of(pid), "no_setaffinity": bool(flags & PF_NO_SETAFFINITY)}
    fact["deadline_in_root"] = _try_deadline(pid)
    if fact["deadline_in_root"] == "ok":
        fact["restored"] = _restore(pid, was)
        if not (fact["cpus"] or "").isdigit():     # not per-CPU: a NAPI kthread
            fact["with_partition"] = _with_partition(pid, was, port)
        return fact
    cpus = fact["cpus"] or ""
    cpu = int(cpus) if cpus.isdigit() else 1
    group, part = _partition(cpu)
    fact["partition"] = part
    fact["move"] = _move(pid, group)
    if fact["move"] == "ok":
        fact["deadline_in_partition"] = _try_deadline(pid)
        if fact["deadline_in_partition"] == "ok":
            fact["restored"] = _restore(pid, was)
        fact["move_back"] = _move(pid, CGROUP)
    else:  # it stays where it is: its CPU's partition is its root domain all the same
        fact["deadline_beside_partition"] = _try_deadline(pid)
        if fact["deadline_beside_partition"] == "ok":
            fact["restored"] = _restore(pid, was)
    _drop_partition(group)
    return fact


def scenario_receive_path_facts(port: int) -> dict:
    sh("systemctl stop irqresd.service")
    threaded = "/sys/class/net/eth0/threaded"
    before = read(threaded)
    probe = "/payload/extra/napi_probe"
    found = {}
    if os.path.exists(probe):  # irqresd's NAPI discovery (daemon/src/napi.c)
        found["unthreaded"] = sh(f"{probe} eth0")
    sh(f"echo 1 > {threaded}")
    wait_for(lambda: _pids(r"napi/eth0-\d+"), 10, 0.1)
    if os.path.exists(probe):
        found["threaded"] = sh(f"{probe} eth0")
        found["names"] = [{"pid": p, "comm": c} for p, c in _pids(r"napi/eth0-\d+")]
    facts = []
    for pattern in (r"napi/eth0-\d+", r"ksoftirqd/\d+", r"backlog_napi/\d+", r"ktimers/\d+",
                    NIC_THREAD):
        for pid, comm in _pids(pattern):
            facts.append(_fact(pid, comm, port))
            mark(f"facts: {facts[-1]}")
    napi_sysfs = sh("grep -H . /sys/class/net/eth0/threaded; ls /sys/class/net/eth0/queues")
    sh(f"echo {before or 0} > {threaded}")
    return {"threaded_before": before, "facts": facts, "napi_sysfs": napi_sysfs,
            "napi_probe": found,
            "ps": sh("ps -eLo pid,cls,rtprio,comm | grep -E 'napi|ksoftirqd|ktimers|irq/'")}


# ---- threaded NAPI under a reservation --------------------------------------------------

def _napi_threads() -> list[dict]:
    return [{"pid": p, "comm": c, "sched": sched_attr(p), "cpus": cpus_allowed(p),
             "cgroup": cgroup_of(p)} for p, c in _pids(r"napi/eth0-\d+")]


def scenario_threaded_napi(port: int, pps: int, seconds: int, size: int, nic_ns: list[int],
                           napi_ns: list[int]) -> dict:
    """The same flood twice, the NIC thread at ``nic_ns`` (Q, T) both times: first as the
    kernel polls by default (NET_RX soft IRQs, their leftovers in ksoftirqd), then with a
    profile that switches eth0 to threaded NAPI (``threaded_napi: true``) and reserves
    its NAPI kthread at ``napi_ns`` beside the IRQ thread. Then irqresd stops: threaded
    goes back as it was."""
    threaded = "/sys/class/net/eth0/threaded"
    wait_for(_active, 60, 0.2)
    q, t = nic_ns
    before = read(threaded)
    set_budget = sh(f"irqres set-budget nic {q}ns {t}ns")
    if set_budget["rc"] != 0:
        raise RuntimeError(f"set-budget {q}/{t}: {set_budget}")
    mark(f"threaded_napi: softirq phase: flood of {pps}/s x {size} B for {seconds}s")
    phases = [_record_phase("softirq", port, pps, seconds, size)]
    profile = "/tmp/threaded-napi.yaml"
    with open(profile, "w") as f:
        f.write(f"version: 1\ntargets:\n"
                f"  - name: nic\n    interface: eth0\n    runtime: {q}ns\n    period: {t}ns\n"
                f"  - name: poll\n    napi: eth0\n    threaded_napi: true\n"
                f"    runtime: {napi_ns[0]}ns\n    period: {napi_ns[1]}ns\n")
    apply = sh(f"irqres apply {profile} --json")
    threaded_applied = read(threaded)
    napi_at_apply = _napi_threads()
    # a kthread irqresd moved into the IRQ thread's partition is reserved once it has run
    # there (its next poll): a short trickle makes it poll
    sink = Sink("udp", port)
    request(f"udp {port} 200 1 100")
    sink.close()
    wait_for(lambda: all((t["sched"] or {}).get("policy") == "deadline"
                         for t in _napi_threads()), 60, 0.2)
    status = sh("irqres status --json")
    napi_applied = _napi_threads()
    mark(f"threaded_napi: applied rc={apply['rc']}, threaded={read(threaded)}, "
         f"{napi_applied}")
    phases.append(_record_phase("threaded", port, pps, seconds, size))
    napi_after = _napi_threads()
    sh("systemctl stop irqresd.service")
    wait_for(lambda: not _active(), 30, 0.2)
    return {"threaded_before": before, "apply": apply, "status": status,
            "threaded_applied": threaded_applied, "napi_at_apply": napi_at_apply,
            "napi_applied": napi_applied,
            "napi_after_flood": napi_after, "phases": phases,
            "threaded_after_stop": read(threaded), "napi_after_stop": _napi_threads(),
            "journal": sh("journalctl -u irqresd.service -o cat --no-pager | tail -40")}


TUNE_MIN_ROWS = 100     # tune's intervals of 10 ms before it is stopped
TUNE_MAX_S = 120        # guest seconds at most


def _tune_device_path(nic_ns: list[int], nic, reserved) -> dict:
    """The with_napi target made adaptive and ``irqres tune`` run on it while eth0 is
    quiet (the controller lowers the budget towards ``min_runtime``): both threads are
    sampled every 100 ms until tune has logged :data:`TUNE_MIN_ROWS` intervals and the
    NAPI kthread's budget has moved, then tune is stopped (SIGINT) and both are read
    again."""
    profile, log = "/tmp/device-tuned.yaml", os.path.join(OUT, "device-tune.csv")
    with open(profile, "w") as f:
        f.write("version: 1\ntargets:\n  - name: nic\n    interface: eth0\n"
                "    with_napi: true\n    threaded_napi: true\n"
                f"    runtime: {nic_ns[0]}ns\n    period: {nic_ns[1]}ns\n"
                "    min_interarrival: 50us\n    buffer: 256\n    mode: adaptive\n"
                "    adaptive:\n      sample: 10ms\n      gain: 0.25\n      window: 100\n"
                "      default_job: 20us\n      min_runtime: 200us\n"
                "      max_runtime: 5ms\n      hysteresis: 50us\n")
    apply = sh(f"irqres apply {profile} --json")
    wait_for(lambda: reserved(True), 30, 0.2)
    tune = subprocess.Popen(f"exec irqres tune --log {log}", shell=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    samples: list[dict] = []

    def runtime(t: dict) -> int:
        s = t["sched"] or {}
        return s["runtime_ns"] if s.get("policy") == "deadline" else 0

    def moved() -> bool:
        samples.append({"nic": [runtime(t) for t in nic()],
                        "napi": [runtime(t) for t in _napi_threads()]})
        rows = (read(log) or "").count("\n") - 1
        return tune.poll() is not None or (
            rows >= TUNE_MIN_ROWS and any(r != nic_ns[0] for s in samples for r in s["napi"]))

    wait_for(moved, TUNE_MAX_S, 0.1)
    tune.send_signal(2)
    tune_out, _ = tune.communicate(timeout=60)
    after = {"nic": nic(), "napi": _napi_threads()}
    mark(f"device path tuned: tune rc={tune.returncode}, {len(samples)} samples, "
         f"after {after}")
    return {"apply": apply, "samples": samples, "tune_rc": tune.returncode,
            "tune_out": tune_out[-3000:], "tune_csv": read(log), "after": after}


def scenario_device_path(port: int, nic_ns: list[int]) -> dict:
    """One target for the device's whole receive path: eth0's IRQ thread and its NAPI
    kthread (``with_napi: true``, the interface switched by ``threaded_napi: true``), both
    at ``nic_ns`` (Q, T); the same made adaptive under ``irqres tune``, both threads
    following its budgets and put back when it stops; then the same target without
    ``with_napi`` (the NAPI kthread left as the kernel made it); then irqresd stops:
    everything back as it was."""
    threaded = "/sys/class/net/eth0/threaded"
    wait_for(_active, 60, 0.2)
    def nic():
        return [{"pid": p, "comm": c, "sched": sched_attr(p)}
                for p, c in _pids(r"irq/\d+-eth0")]

    def reserved(napi_too: bool) -> bool:
        return all((t["sched"] or {}).get("policy") == "deadline"
                   for t in nic() + (_napi_threads() if napi_too else []))

    before = {"threaded": read(threaded), "nic": nic(), "napi": _napi_threads()}
    out: dict = {"before": before}
    for label, with_napi in (("with_napi", True), ("without", False)):
        profile = f"/tmp/device-{label}.yaml"
        with open(profile, "w") as f:
            f.write(f"version: 1\ntargets:\n  - name: nic\n    interface: eth0\n"
                    f"    with_napi: {'true' if with_napi else 'false'}\n"
                    f"    threaded_napi: true\n"
                    f"    runtime: {nic_ns[0]}ns\n    period: {nic_ns[1]}ns\n")
        plan = sh(f"irqres apply -n {profile} --json")
        apply = sh(f"irqres apply {profile} --json")
        # a thread moved into a partition is reserved once it has run there: a trickle
        sink = Sink("udp", port)
        request(f"udp {port} 200 1 100")
        sink.close()
        wait_for(lambda napi_too=with_napi: reserved(napi_too), 30, 0.2)
        out[label] = {"plan": plan, "apply": apply, "threaded": read(threaded),
                      "nic": nic(), "napi": _napi_threads(),
                      "status": sh("irqres status --json")}
        mark(f"device path {label}: apply rc={apply['rc']}, nic {out[label]['nic']}, "
             f"napi {out[label]['napi']}")
        if with_napi:
            out["tuned"] = _tune_device_path(nic_ns, nic, reserved)
    sh("systemctl stop irqresd.service")
    wait_for(lambda: not _active(), 30, 0.2)
    out["after_stop"] = {"threaded": read(threaded), "nic": nic(), "napi": _napi_threads()}
    out["journal"] = sh("journalctl -u irqresd.service -o cat --no-pager | tail -40")
    return out
