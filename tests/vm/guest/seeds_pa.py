"""Guest side of the process-aware experiments (bench/seeds/process_aware.py).

Lee et al.'s experiment on the NIC's CPU of the guest: a high-priority periodic job
(``high``: SCHED_FIFO below the kernel's IRQ-thread priority 50) and a low-priority one
(``low``) around a UDP server (SCHED_FIFO ``server_prio``, the process the NIC thread
serves), all three pinned to the NIC's CPU, while the sender in namespace ``snd``
sends datagrams to the server's port at rising rates, paced in guest time. Per rate and
mode, each job's execution times (release to completion, as the job measures it: the
paper's quantity) and deadline misses, and the datagrams the server received.

Zhang and West's experiment (``scenario_seeds_zhang_west``), on the same set-up: one
periodic real-time task using nearly all of its period above the same UDP server, the
sender in MMPP-2 bursts (``seedload msend``) at rising mean rates. Per rate and mode, the
task's deadline misses and lateness, the datagrams sent, and the datagrams the server
read while the task ran, with the CPU time the NIC thread and the server spent on them.

``default``: the NIC thread as the kernel makes it (SCHED_FIFO 50, above both jobs).
``coupled``: irqresd applies a profile whose NIC target serves the server's port, so
the thread runs at the server's priority (docs/process-aware.md).
``unaccounted``: coupled as well, with irqresd's live accounting off (``--tracefs``
naming no tracefs): what the accounting's trace events cost the jobs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

from seeds import (
    NIC_THREAD,
    NS,
    RX_ADDR,
    SEEDLOAD,
    SENDER_PRIO,
    _delta,
    _irqresd_state,
    _journal,
    _task_times,
    hub_setup,
    nic_fifo50,
    player,
    run_ns,
    rx_counters,
    sender,
)
from vmguest import OUT, mark, read, sh, thread, wait_for

MODES = ("default", "coupled", "unaccounted")
PROFILE = "/run/seeds-pa.yaml"
DROPIN = "/run/systemd/system/irqresd.service.d/seeds-pa.conf"
NOACCT = "/run/systemd/system/irqresd.service.d/seeds-pa-noacct.conf"


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


def _server(cpu: int, port: int, prio: int, count: int,
            reads: str | None = None) -> subprocess.Popen:
    """The UDP server on the NIC's CPU at SCHED_FIFO ``prio``: reads until ``count``
    datagrams or 1 s without one; ``reads`` gets the time each read returned."""
    out = f" - {reads}" if reads else ""
    return subprocess.Popen(
        f"exec chrt -f {prio} taskset -c {cpu} {SEEDLOAD} recv {port} {count} 1000000000"
        f"{out}", shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _accounting(on: bool) -> dict | None:
    """irqresd restarted with its live accounting on (as shipped) or off (``--tracefs``
    naming no tracefs), when it is not so already; what its journal says of it."""
    if on != os.path.exists(NOACCT):
        return None
    if on:
        os.unlink(NOACCT)
    else:
        with open(NOACCT, "w") as f:
            f.write(f"[Service]\nExecStart=\nExecStart={shutil.which('irqresd')} -p "
                    "/etc/irqres/profile.yaml --tracefs /run/no-tracefs\n")
    sh("systemctl daemon-reload", check=True)
    r = sh("systemctl restart irqresd.service")
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    return {"accounting": on, "restart": r["rc"], "state": _irqresd_state()}


def _mode(mode: str, port: int) -> dict:
    """The NIC thread back at the kernel's default, or irqresd (its live accounting off
    for ``unaccounted``) told to couple it to whoever is bound to ``port``."""
    nic_fifo50()
    restarted = _accounting(mode != "unaccounted")
    if restarted:
        nic_fifo50()
    if mode == "default":
        return {"apply": None, "restarted": restarted}
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
            "apply": (a["err"] or a["out"])[-400:], "restarted": restarted}


def _journal_all() -> str:
    return sh("journalctl -b -u irqresd.service --no-pager -o cat")["out"]


def _watch_nic(seen: set, stop: threading.Event) -> None:
    """The NIC thread's (policy, priority) every 50 ms until ``stop``, into ``seen``."""
    while not stop.is_set():
        seen.add(tuple(_nic_sched() or ()))
        stop.wait(0.05)


def _int_rows(path: str) -> list[list[int]]:
    """A file of whitespace-separated integers, a row per line (``seedload player``
    TIMES: release, start, end per frame; ``msend`` STATES)."""
    return [[int(x) for x in line.split()] for line in (read(path) or "").splitlines()]


def _exec_times(path: str) -> list[int]:
    """Each frame's execution time, release to completion (``seedload player`` TIMES)."""
    return [end - release for release, _, end in _int_rows(path)]


def _job(spec: dict, cpu: int, seconds: int, path: str) -> subprocess.Popen:
    frames = seconds * 1_000_000_000 // spec["period_ns"]
    # first release 0.5 s after the start: the sender, started right after, is running
    return player(cpu, spec["period_ns"], spec["work_ns"], frames,
                  f"chrt -f {spec['prio']}", path, None, 500_000_000)


def _uncoupled() -> None:
    """Wait until the NIC thread is at the kernel's SCHED_FIFO 50 again, with no server
    bound: irqresd notices the last row's server gone only at its next look, and a new
    server bound before that would find the thread still coupled to the old one, then
    see it drop to 50 for a moment (a row saw [10, 50] and 4 misses)."""
    ok, _ = wait_for(lambda: _nic_sched() == ["fifo", 50], 10, 0.02)
    if not ok:
        raise RuntimeError(f"the NIC thread is {_nic_sched()}, not fifo 50 with no server "
                           f"bound\n{_journal()}")


def _coupled_or_default(srv: subprocess.Popen, mode: str, server_prio: int) -> tuple:
    """The NIC thread's scheduling the mode wants, waited for once the server is bound:
    (that scheduling, the ns waited)."""
    want = ["fifo", 50] if mode == "default" else ["fifo", server_prio]
    ok, waited = wait_for(lambda: _nic_sched() == want, 10, 0.02)
    if not ok:
        srv.kill()
        raise RuntimeError(f"{mode}: the NIC thread is {_nic_sched()}, not {want} with the "
                           f"server bound\n{_journal()}")
    return want, waited


def _census(before: dict, after: dict, irq0: str | None, irq1: str | None) -> dict:
    """Who ran during a row: the threads that took the most CPU time (all CPUs; from
    ``_task_times``), and the interrupt counts that changed (/proc/interrupts, per CPU)."""
    ran = sorted(((t[1] - before.get(tid, (None, 0))[1], tid, t) for tid, t in after.items()),
                 reverse=True)[:12]

    def counts(text):
        rows = {}
        for line in (text or "").splitlines()[1:]:
            name, _, rest = line.partition(":")
            nums = [int(x) for x in rest.split()[:2] if x.isdigit()]
            if nums:
                rows[name.strip()] = nums
        return rows
    a, b = counts(irq0), counts(irq1)
    irqs = {k: [y - x for x, y in zip(a.get(k, [0, 0]), v, strict=False)] for k, v in b.items()}
    return {"threads": [[ns, tid, t[0], t[3]] for ns, tid, t in ran],
            "interrupts": {k: v for k, v in irqs.items() if any(v)}}


def _watching() -> tuple[set, threading.Event, threading.Thread]:
    seen: set = set()
    stop = threading.Event()
    watch = threading.Thread(target=_watch_nic, args=(seen, stop), daemon=True)
    watch.start()
    return seen, stop, watch


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
    _uncoupled()
    srv = _server(cpu, port, server_prio, count + 1)
    want, waited = _coupled_or_default(srv, mode, server_prio)
    base = os.path.join(OUT, f"pa-{run}-{mode}-{rate}")
    seen, stop, watch = _watching()
    procs = {name: _job(spec, cpu, seconds, f"{base}-{name}.txt")
             for name, spec in jobs.items()}
    c0 = rx_counters()
    t0, i0 = _task_times(), read("/proc/interrupts")
    snd_out = ""
    if rate:
        snd_out, _ = sender(setup, port, 1_000_000_000 // rate, count, size).communicate(
            timeout=3600)
    c1 = rx_counters()
    outs = {name: p.communicate(timeout=3600)[0].strip() for name, p in procs.items()}
    census = _census(t0, _task_times(), i0, read("/proc/interrupts"))
    stop.set()
    watch.join()
    if not rate:
        srv.kill()
    srv_out, _ = srv.communicate(timeout=3600)
    row = {"run": run, "mode": mode, "rate": rate, "count": count, "nic": want,
           "nic_wait_ns": waited, "nic_seen": sorted(seen), "sender": snd_out.strip(),
           "server": srv_out.strip(), "rx": _delta(c0, c1), "census": census}
    for name in jobs:
        row[name] = {"out": outs[name], "exec_ns": _exec_times(f"{base}-{name}.txt")}
    mark(f"pa run {run} {mode} {rate}/s: high {outs['high']}, low {outs['low']}, "
         f"{snd_out.strip()}, server {srv_out.strip()}")
    return row


def _setup(modes: tuple[str, ...], rates: list[int], what: str) -> tuple[dict, dict]:
    """Both experiments' set-up: the arguments checked, the hub, irqresd's unit roomier."""
    bad = [m for m in modes if m not in MODES]
    if bad or not rates or min(rates) < 0:
        raise ValueError(f"modes {modes} (known: {MODES}) / rates {rates}: not usable")
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    unit = _rttime_roomier()
    mark(f"seeds {what}: NIC on CPU {setup['nic_cpu']}, sender on CPU "
         f"{setup['sender_cpu']}, {setup['ncpu']} vCPUs")
    return setup, unit


def scenario_seeds_process_aware(runs: int, seconds: int, rates: list[int], size: int,
                                 high: dict, low: dict, server_prio: int,
                                 modes: tuple[str, ...] = MODES[:2], port: int = 5001) -> dict:
    """Lee et al.'s experiment: for each run, mode (``modes``: default, coupled) and rate
    (datagrams/s of ``size`` bytes, rising), the jobs ``high`` and ``low`` ({"prio",
    "period_ns", "work_ns"}) for ``seconds`` on the NIC's CPU around the server."""
    setup, unit = _setup(modes, rates, "process-aware")
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


RT_RUNTIME = "/proc/sys/kernel/sched_rt_runtime_us"


def _mmpp_rates(mean: int, mmpp: dict) -> tuple[int, int]:
    """The low and high states' datagrams/s whose time-weighted mean is ``mean``: the
    high rate ``burst`` times the low one, the states held ``hold_lo_ns`` and
    ``hold_hi_ns`` on average."""
    lo_ns, hi_ns = mmpp["hold_lo_ns"], mmpp["hold_hi_ns"]
    low = round(mean * (lo_ns + hi_ns) / (lo_ns + mmpp["burst"] * hi_ns))
    return low, low * mmpp["burst"]


def _msender(setup: dict, port: int, size: int, duration_ns: int, seed: int, rates: tuple,
             mmpp: dict, states: str) -> subprocess.Popen:
    """The MMPP-2 sender in namespace ``snd`` at SCHED_FIFO 90 on the sender's vCPU."""
    return subprocess.Popen(
        f"exec ip netns exec {NS} chrt -f {SENDER_PRIO} taskset -c {setup['sender_cpu']} "
        f"{SEEDLOAD} msend {RX_ADDR} {port} {size} {duration_ns} {seed} {rates[0]} "
        f"{rates[1]} {mmpp['hold_lo_ns']} {mmpp['hold_hi_ns']} {states}",
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _zw_row(setup: dict, mode: str, mean: int, seed: int, run: int, p: dict) -> dict:
    """One mean rate in one mode: the server bound (coupled: the NIC thread at its
    priority), the MMPP-2 sender for ``seconds`` + 1 (mean 0: no sender), and the
    real-time task on the NIC's CPU for ``seconds`` from half a second after."""
    cpu, seconds, task = setup["nic_cpu"], p["seconds"], p["task"]
    rates = _mmpp_rates(mean, p["mmpp"])
    base = os.path.join(OUT, f"zw-{run}-{mode}-{mean}")
    _uncoupled()
    srv = _server(cpu, p["port"], p["server_prio"], 2 * rates[1] * (seconds + 1) + 1000,
                  f"{base}-reads.txt")
    want, waited = _coupled_or_default(srv, mode, p["server_prio"])
    seen, stop, watch = _watching()
    nic_pid = (thread(NIC_THREAD) or {}).get("pid")
    cpu0 = (run_ns(nic_pid) or 0, run_ns(srv.pid) or 0)
    c0 = rx_counters()
    # the sender first: started after the task, its start-up (ip netns exec, slow in the
    # guest) overlapped the task's first jobs and took 5-7 ms from them in a probe, with
    # the NIC thread coupled, whose cause is then not the NIC thread
    snd = (_msender(setup, p["port"], p["size"], (seconds + 1) * 1_000_000_000, seed, rates,
                    p["mmpp"], f"{base}-states.txt") if mean else None)
    job = _job(task, cpu, seconds, f"{base}-task.txt")
    job_out = job.communicate(timeout=3600)[0].strip()
    cpu1 = (run_ns(nic_pid) or 0, run_ns(srv.pid) or 0)
    c1 = rx_counters()
    snd_out = snd.communicate(timeout=3600)[0].strip() if snd else ""
    stop.set()
    watch.join()
    if not mean:
        srv.kill()
    srv_out = srv.communicate(timeout=3600)[0].strip()
    reads = [int(x) for x in (read(f"{base}-reads.txt") or "").split()]
    row = {"run": run, "mode": mode, "rate": mean, "seed": seed, "rates": list(rates),
           "nic": want, "nic_wait_ns": waited, "nic_seen": sorted(seen), "sender": snd_out,
           "server": srv_out, "rx": _delta(c0, c1), "task_out": job_out,
           "frames": _int_rows(f"{base}-task.txt"), "reads_ns": reads,
           "states": _int_rows(f"{base}-states.txt"),
           "nic_cpu_ns": cpu1[0] - cpu0[0], "server_cpu_ns": cpu1[1] - cpu0[1]}
    mark(f"zw run {run} {mode} {mean}/s {rates}: task {job_out}, {snd_out}, "
         f"server {srv_out}")
    return row


def scenario_seeds_zhang_west(runs: int, seconds: int, rates: list[int], size: int,
                              task: dict, server_prio: int, mmpp: dict, seed: int,
                              modes: tuple[str, ...] = MODES[:2], port: int = 5001) -> dict:
    """Zhang and West's experiment: for each run, mode (``modes``) and mean rate (``rates``,
    datagrams/s of ``size`` bytes, rising), the real-time task ``task`` ({"prio",
    "period_ns", "work_ns"}) for ``seconds`` on the NIC's CPU above the server, under the
    sender's MMPP-2 load (``mmpp``: {"burst", "hold_lo_ns", "hold_hi_ns"}; run r's k-th
    rate drawn from ``seed`` + 1000 r + k, the same in every mode). The kernel's RT
    throttling is off while it runs: the task and the server together are real-time
    work on the whole CPU, which the throttle would stop for 50 ms every second
    whatever the coupling."""
    setup, unit = _setup(modes, rates, "Zhang and West")
    throttle = (read(RT_RUNTIME) or "").strip()
    sh(f"echo -1 > {RT_RUNTIME}", check=True)
    rows, applied = [], []
    try:
        for run in range(runs):
            for mode in modes:
                applied.append({"run": run, "mode": mode, **_mode(mode, port)})
                for k, mean in enumerate(rates):
                    rows.append(_zw_row(setup, mode, mean, seed + 1000 * run + k, run,
                                        {"seconds": seconds, "task": task, "size": size,
                                         "server_prio": server_prio, "mmpp": mmpp,
                                         "port": port}))
    finally:
        sh(f"echo {throttle} > {RT_RUNTIME}")
    nic_fifo50()
    return {"setup": setup, "rows": rows, "applied": applied, "unit": unit,
            "rt_runtime_us": throttle, "interrupts": read("/proc/interrupts")}
