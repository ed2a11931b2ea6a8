"""Guest side of the process-aware experiments (bench/seeds/process_aware.py).

Lee et al.'s experiment on the NIC's CPU of the guest: a high-priority periodic job
(``high``: SCHED_FIFO below the kernel's IRQ-thread priority 50) and a low-priority one
(``low``) around a UDP server (SCHED_FIFO ``server_prio``, the process the NIC thread
serves), all three pinned to the NIC's CPU, while the sender in namespace ``snd``
sends datagrams to the server's port at rising rates, paced in guest time. Per rate and
mode, each job's execution times (release to completion, as the job measures it: the
paper's quantity) and deadline misses, and the datagrams the server received.

``default``: the NIC thread as the kernel makes it (SCHED_FIFO 50, above both jobs).
``coupled``: irqresd applies a profile whose NIC target serves the server's port, so
the thread runs at the server's priority (docs/process-aware.md).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

from seeds import (
    NIC_THREAD,
    SEEDLOAD,
    _delta,
    _irqresd_state,
    _journal,
    hub_setup,
    nic_fifo50,
    player,
    rx_counters,
    sender,
)
from vmguest import OUT, mark, read, sh, thread, wait_for

MODES = ("default", "coupled")
PROFILE = "/run/seeds-pa.yaml"
DROPIN = "/run/systemd/system/irqresd.service.d/seeds-pa.conf"


def _rttime_roomier() -> dict:
    """irqresd's unit stops it after 2 s of real-time CPU without blocking (LimitRTTIME).
    Under instruction counting an apply of a coupled target took longer than that in
    the guest (its journal then says the accounting's tracefs instance was set up: the
    likely cost) and the kernel killed irqresd (SIGXCPU); the experiment gives it 30 s
    (a drop-in in /run, gone at the next boot)."""
    os.makedirs(os.path.dirname(DROPIN), exist_ok=True)
    with open(DROPIN, "w") as f:
        f.write("[Service]\nLimitRTTIME=30s:31s\n")
    sh("systemctl daemon-reload", check=True)
    r = sh("systemctl restart irqresd.service")
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    return {"restart": r["rc"], "state": _irqresd_state(),
            "limit": sh("systemctl show -p LimitRTTIME irqresd.service")["out"].strip()}


def _nic_sched() -> list | None:
    t = thread(NIC_THREAD)
    return [t["sched"]["policy"], t["sched"]["priority"]] if t and t["sched"] else None


def _server(cpu: int, port: int, prio: int, count: int) -> subprocess.Popen:
    """The UDP server on the NIC's CPU at SCHED_FIFO ``prio``: reads until ``count``
    datagrams or 1 s without one."""
    return subprocess.Popen(
        f"exec chrt -f {prio} taskset -c {cpu} {SEEDLOAD} recv {port} {count} 1000000000",
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _mode(mode: str, port: int) -> dict:
    """The NIC thread back at the kernel's default, or irqresd told to couple it to
    whoever is bound to ``port``."""
    nic_fifo50()
    if mode == "default":
        return {"apply": None}
    with open(PROFILE, "w") as f:
        f.write(f"version: 1\ntargets:\n  - name: nic\n    interface: eth0\n"
                f"    serves:\n      port: {port}\n")
    # one apply, waited for in the journal: under instruction counting the daemon sets
    # the accounting's tracefs instance up for seconds, past the client's 5 s for a reply
    done = f"{PROFILE}: applied"
    before = _journal_all().count(done)
    t0 = time.monotonic_ns()
    a = sh(f"irqres apply {PROFILE}", timeout=300)
    ok, _ = wait_for(lambda: _journal_all().count(done) > before, 300, 0.5)
    if not ok:
        raise RuntimeError(f"irqres apply {PROFILE}: {a['err'] or a['out']}\n{_journal()}")
    return {"apply_rc": a["rc"], "apply_ns": time.monotonic_ns() - t0,
            "apply": (a["err"] or a["out"])[-400:]}


def _journal_all() -> str:
    return sh("journalctl -b -u irqresd.service --no-pager -o cat")["out"]


def _watch_nic(seen: set, stop: threading.Event) -> None:
    """The NIC thread's (policy, priority) every 50 ms until ``stop``, into ``seen``."""
    while not stop.is_set():
        seen.add(tuple(_nic_sched() or ()))
        stop.wait(0.05)


def _exec_times(path: str) -> list[int]:
    """Each frame's execution time, release to completion (``seedload player`` TIMES)."""
    out = []
    for line in (read(path) or "").splitlines():
        release, _, end = (int(x) for x in line.split())
        out.append(end - release)
    return out


def _job(spec: dict, cpu: int, seconds: int, path: str) -> subprocess.Popen:
    frames = seconds * 1_000_000_000 // spec["period_ns"]
    # first release 0.5 s after the start: the sender, started right after, is running
    return player(cpu, spec["period_ns"], spec["work_ns"], frames,
                  f"chrt -f {spec['prio']}", path, None, 500_000_000)


def _row(setup: dict, mode: str, rate: int, run: int, seconds: int, size: int, port: int,
         jobs: dict, server_prio: int) -> dict:
    """One rate in one mode: the server bound (and, coupled, the NIC thread at its
    priority), both jobs on the NIC's CPU, the sender at ``rate`` datagrams/s for one
    second more than the jobs run (rate 0: no sender, the jobs alone beside the bound
    server)."""
    cpu = setup["nic_cpu"]
    count = (seconds + 1) * rate
    # one more than is sent: the server stays bound until 1 s after the last datagram,
    # past the end of the jobs and of the watch on the NIC thread
    srv = _server(cpu, port, server_prio, count + 1)
    want = ["fifo", server_prio] if mode == "coupled" else ["fifo", 50]
    ok, waited = wait_for(lambda: _nic_sched() == want, 10, 0.02)
    if not ok:
        srv.kill()
        raise RuntimeError(f"{mode}: the NIC thread is {_nic_sched()}, not {want} with the "
                           f"server bound\n{_journal()}")
    base = os.path.join(OUT, f"pa-{run}-{mode}-{rate}")
    seen: set = set()
    stop = threading.Event()
    watch = threading.Thread(target=_watch_nic, args=(seen, stop), daemon=True)
    watch.start()
    procs = {name: _job(spec, cpu, seconds, f"{base}-{name}.txt")
             for name, spec in jobs.items()}
    c0 = rx_counters()
    snd_out = ""
    if rate:
        snd_out, _ = sender(setup, port, 1_000_000_000 // rate, count, size).communicate(
            timeout=3600)
    c1 = rx_counters()
    outs = {name: p.communicate(timeout=3600)[0].strip() for name, p in procs.items()}
    stop.set()
    watch.join()
    if not rate:
        srv.kill()
    srv_out, _ = srv.communicate(timeout=3600)
    row = {"run": run, "mode": mode, "rate": rate, "count": count, "nic": want,
           "nic_wait_ns": waited, "nic_seen": sorted(seen), "sender": snd_out.strip(),
           "server": srv_out.strip(), "rx": _delta(c0, c1)}
    for name in jobs:
        row[name] = {"out": outs[name], "exec_ns": _exec_times(f"{base}-{name}.txt")}
    mark(f"pa run {run} {mode} {rate}/s: high {outs['high']}, low {outs['low']}, "
         f"{snd_out.strip()}, server {srv_out.strip()}")
    return row


def scenario_seeds_process_aware(runs: int, seconds: int, rates: list[int], size: int,
                                 high: dict, low: dict, server_prio: int,
                                 modes: tuple[str, ...] = MODES, port: int = 5001) -> dict:
    """Lee et al.'s experiment: for each run, mode (``modes``: default, coupled) and rate
    (datagrams/s of ``size`` bytes, rising), the jobs ``high`` and ``low`` ({"prio",
    "period_ns", "work_ns"}) for ``seconds`` on the NIC's CPU around the server."""
    bad = [m for m in modes if m not in MODES]
    if bad or not rates or min(rates) < 0:
        raise ValueError(f"modes {modes} (known: {MODES}) / rates {rates}: not usable")
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    unit = _rttime_roomier()
    mark(f"seeds process-aware: NIC on CPU {setup['nic_cpu']}, sender on CPU "
         f"{setup['sender_cpu']}, {setup['ncpu']} vCPUs")
    rows, applied = [], []
    for run in range(runs):
        for mode in modes:
            applied.append({"run": run, "mode": mode, **_mode(mode, port)})
            for rate in rates:
                rows.append(_row(setup, mode, rate, run, seconds, size, port,
                                 {"high": high, "low": low}, server_prio))
    nic_fifo50()
    return {"setup": setup, "rows": rows, "applied": applied, "unit": unit,
            "interrupts": read("/proc/interrupts")}
