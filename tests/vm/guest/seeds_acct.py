"""Guest side of the accounting-accuracy experiment (bench/seeds/accounting_accuracy.py).

Two UDP receivers (``seedload recv``, two processes, two ports) read datagrams that two
paced senders in namespace ``snd`` send at known, different rates: ``size`` bytes to the
first port, one more to the second, so that the kernel's own histogram of
``net:netif_receive_skb`` by task and length tells, per flow, how many datagrams the NIC
thread delivered and how many another task took from the ring (:func:`_deliveries_stop`).
irqresd runs a profile whose coupled target ``nic`` (eth0's IRQ thread) ``serves:`` both
ports, so its live accounting (docs/process-aware.md) charges the NIC thread's activations
to the receivers that read the packets they delivered. Over each window (both senders,
start to end) the result holds, from one ``irqres stats --json`` before and one after: the
NIC thread's CPU time (/proc/PID/schedstat) and voluntary switches, and each served
process's accounted time, activations and wake-ups; what each receiver read; and who
delivered the datagrams. A trace-cmd recording of the same window (the events ``irqres
analyze`` reads) is left in /payload/out for the offline attribution.
"""

from __future__ import annotations

import json
import os
import re
import time

from seeds import (
    NIC_THREAD,
    _irqresd_state,
    _journal,
    _record_start,
    _record_stop,
    acct_trace_events,
    hub_setup,
    nic_fifo50,
    receiver,
    sender,
)
from vmguest import OUT, mark, read, sh, thread, wait_for


def _nic_counters() -> dict:
    """The NIC thread's CPU time (/proc/PID/schedstat) and context switches: a coupled
    target's threads are not in ``irqres stats``' thread table (it lists reservations)."""
    t = thread(NIC_THREAD)
    if not t:
        raise RuntimeError("no NIC thread irq/N-eth0")
    pid = t["pid"]
    status = read(f"/proc/{pid}/status") or ""

    def field(key: str) -> int:
        m = re.search(rf"^{key}:\s*(\d+)", status, re.M)
        return int(m.group(1)) if m else -1

    st = (read(f"/proc/{pid}/schedstat") or "0 0 0").split()
    return {"pid": pid, "comm": t["comm"], "cpu_time_ns": int(st[0]), "timeslices": int(st[2]),
            "voluntary_switches": field("voluntary_ctxt_switches"),
            "involuntary_switches": field("nonvoluntary_ctxt_switches"),
            "policy": (t["sched"] or {}).get("policy")}


def _stats() -> dict:
    """The accounting from one ``irqres stats --json``, and the NIC thread's counters
    read right after it (the thread is idle then: the senders have not begun, or are
    done)."""
    r = sh("irqres stats --json")
    if r["rc"] != 0:
        raise RuntimeError(f"irqres stats: {r['err'] or r['out']}")
    acc = json.loads(r["out"]).get("accounting") or {}
    return {"thread": _nic_counters(),
            "enabled": acc.get("enabled"), "error": acc.get("error"),
            "lost_events": acc.get("lost_events"),
            "dropped_activations": acc.get("dropped_activations"),
            "served": [a for a in acc.get("served", []) if a["target"] == "nic"]}


def _served(setup_pids: list[int]) -> bool:
    """Whether the last scan of target ``nic`` lists every receiver."""
    r = sh("irqres status --json")
    if r["rc"] != 0:
        return False
    nic = next((t for t in json.loads(r["out"])["targets"] if t["name"] == "nic"), {})
    have = {s["pid"] for s in nic.get("serves") or []}
    return set(setup_pids) <= have


# a tracefs instance of the experiment's own, apart from irqresd's: its hist trigger on
# net:netif_receive_skb counts every packet by the task that delivered it (on PREEMPT_RT
# the NIC thread, or whoever ran a pending NET_RX: ktimers, rcuc, ksoftirqd) and by its
# length at that point (IP header on: a datagram's size + 28)
TRUTH_INSTANCE = "/sys/kernel/tracing/instances/irqres-acct-truth"
TRUTH_EVENT = TRUTH_INSTANCE + "/events/net/netif_receive_skb"
TRUTH_HIST = "hist:keys=common_pid,len:size=4096"
HIST_ROW = re.compile(r"\{\s*common_pid:\s*(\d+),\s*len:\s*(\d+)\s*\}\s*hitcount:\s*(\d+)")


def _deliveries_start() -> None:
    """A fresh histogram, in an instance made for the window (each boot starts without
    it; a window that failed ends the scenario)."""
    os.mkdir(TRUTH_INSTANCE)
    with open(TRUTH_EVENT + "/trigger", "w") as f:
        f.write(TRUTH_HIST)


def _deliveries_stop() -> list[dict]:
    """The histogram's rows (pid, comm, len, count), then the trigger and instance gone."""
    text = read(TRUTH_EVENT + "/hist") or ""
    with open(TRUTH_EVENT + "/trigger", "a") as f:
        f.write("!" + TRUTH_HIST)
    os.rmdir(TRUTH_INSTANCE)
    rows = [{"pid": int(pid), "len": int(ln), "count": int(n)}
            for pid, ln, n in HIST_ROW.findall(text)]
    for r in rows:
        r["comm"] = (read(f"/proc/{r['pid']}/comm") or "?").strip()
    return rows


def _received(out: str) -> int:
    m = re.search(r"received (\d+)", out)
    if not m:
        raise RuntimeError(f"seedload recv: no count in {out!r}")
    return int(m.group(1))


def _window(setup: dict, run: int, periods: list[int], ports: list[int], seconds: int,
            size: int, trace: bool) -> dict:
    """One window: both receivers up and served, then both senders for ``seconds``; flow
    i's datagrams are ``size + i`` bytes."""
    counts = [seconds * 1_000_000_000 // p for p in periods]
    rxs = [receiver(setup, port, n, 1_000_000_000) for port, n in zip(ports, counts,
                                                                      strict=True)]
    pids = [rx.pid for rx in rxs]
    ok, _ = wait_for(lambda: _served(pids), 20, 0.1)
    if not ok:
        raise RuntimeError(f"receivers {pids} not served by target nic: "
                           f"{sh('irqres status')['out']}")
    name = f"acct-{run}-{periods[0]}-{periods[1]}"
    rec = _record_start(os.path.join(OUT, name + ".dat"), acct_trace_events()) if trace else None
    time.sleep(0.3)
    sizes = [size + i for i in range(len(ports))]
    before = _stats()
    _deliveries_start()
    snds = [sender(setup, port, p, n, sz) for port, p, n, sz in zip(ports, periods, counts,
                                                                     sizes, strict=True)]
    snd_out = [s.communicate(timeout=3600)[0].strip() for s in snds]
    rx_out = [rx.communicate(timeout=3600)[0].strip() for rx in rxs]
    time.sleep(0.3)
    deliveries = _deliveries_stop()
    after = _stats()
    recorded = _record_stop(rec) if rec else None
    row = {"run": run, "periods_ns": periods, "ports": ports, "counts": counts,
           "size": size, "sizes": sizes, "deliveries": deliveries, "pids": pids,
           "reads": [_received(o) for o in rx_out],
           "sender": snd_out, "receiver": rx_out, "before": before, "after": after,
           "trace": name + ".dat" if rec else None, "record": recorded}
    mark(f"acct run {run} periods {periods}: reads {row['reads']}, NIC "
         f"{(after['thread']['cpu_time_ns'] - before['thread']['cpu_time_ns']) / 1e6:.1f}"
         f" ms, served {[(a['pid'], a['irq_time_ns']) for a in after['served']]}")
    return row


def _rt_limit(limit: str | None) -> dict:
    """irqresd.service active, with ``LimitRTTIME=limit`` (a drop-in, then a restart)
    when ``limit`` is given: under emulation irqresd's start with accounting takes more
    real-time CPU in one burst than the unit's 2 s (the SIGXCPU it dies of is kept in
    ``before``). Returns the unit's state before, and its CPU time once active."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    out = {"before": _irqresd_state(), "limit": limit,
           "journal_before": _journal() if _irqresd_state() != "active" else "",
           "where_before": _where_irqresd() if _irqresd_state() != "active" else ""}
    if limit:
        d = "/run/systemd/system/irqresd.service.d"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/rttime.conf", "w") as f:
            f.write(f"[Service]\nLimitRTTIME={limit}\n")
        sh("systemctl daemon-reload; systemctl reset-failed irqresd.service; "
           "systemctl restart --no-block irqresd.service", timeout=300)
        wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    if _irqresd_state() != "active":
        raise RuntimeError(f"irqresd is not active: {sh('systemctl status irqresd')['out']}"
                           f"\n{_journal()}\n{_where_irqresd()}")
    cpu = sh("systemctl show irqresd.service -p CPUUsageNSec")["out"].strip()
    out["cpu_ns_at_start"] = int(cpu.partition("=")[2] or -1)
    return out


def _where_irqresd() -> str:
    """Where irqresd is: its system call (number and arguments), kernel stack and CPU
    time, sampled five times."""
    pid = sh("systemctl show irqresd.service -p MainPID")["out"].strip().partition("=")[2]
    out = []
    for _ in range(5):
        out.append(sh(f"cat /proc/{pid}/syscall /proc/{pid}/stack /proc/{pid}/schedstat; "
                      f"grep -E 'ctxt|State' /proc/{pid}/status")["out"])
        time.sleep(0.5)
    return f"irqresd pid {pid}:\n" + "\n--\n".join(out)


def scenario_seeds_acct(runs: int, pairs: list[list[int]], seconds: int, size: int,
                        ports: list[int], trace: bool = True,
                        rt_limit: str | None = None) -> dict:
    """For each run and each pair of sender periods (ns) in ``pairs``, one window
    (:func:`_window`) with the receivers on ``ports``; the coupled profile stays in
    force throughout (the accounting's totals are cumulative, windows are differences).
    ``rt_limit``: irqresd.service's LimitRTTIME for the run (:func:`_rt_limit`)."""
    started = _rt_limit(rt_limit)
    setup = hub_setup()
    # the profile irqresd was started with (the host's, serving ``ports``): applying it
    # later would first give back the boot profile's cpuset partition, seconds of work for
    # an emulated guest's irqresd on top of making its tracefs instance
    status = sh("irqres status --json")
    targets = json.loads(status["out"]).get("targets") if status["rc"] == 0 else None
    if not targets or targets[0].get("name") != "nic" or targets[0].get("serves") is None:
        raise RuntimeError(f"irqresd does not run the coupled profile: {status}\n"
                           f"{_journal()}")
    mark(f"seeds acct: NIC on CPU {setup['nic_cpu']}, sender on CPU "
         f"{setup['sender_cpu']}, trace events {acct_trace_events() if trace else 'none'}")
    rows = [_window(setup, run, list(p), ports, seconds, size, trace)
            for run in range(runs) for p in pairs]
    nic_fifo50()
    return {"setup": setup, "rows": rows, "irqresd_start": started, "status": targets,
            "nic_at_end": thread(NIC_THREAD),
            "journal": _journal()}
