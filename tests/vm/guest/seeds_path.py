"""Guest side of experiments 6 and 2 over the NIC's whole receive path (threaded NAPI),
and the VM suite's seeds boot (scenario_seeds_shapes).

Experiment 6 (seeds.scenario_seeds_latency) reserves eth0's IRQ thread alone. Whether the
receive work the flood brings runs in that thread is the kernel's choice: on 6.1 the
NET_RX soft IRQ leaves what one pass could not finish to ``ksoftirqd/N`` (SCHED_OTHER)
and eth0's interrupt stays masked while its NAPI instance is scheduled, so at SCHED_FIFO
50 the thread itself does little, and whether the work ends up above the measured task
depends on which task runs bottom halves on the NIC's CPU. Here eth0 is polled by its
NAPI kthread (``/sys/class/net/eth0/threaded`` = 1), where all of that work runs, and the
two cases compare the same path: IRQ thread and NAPI kthread at SCHED_FIFO 50 on the NIC's
CPU (the fixed-priority set-up a user would make), against both reserved through one
irqres profile (``interface`` and ``napi`` targets), the row's budget split between them.
Per measurement the CPU time of the IRQ thread, the NAPI kthread and ``ksoftirqd`` of the
NIC's CPU over the flood says who did the work. Experiment 2 (the player above and below
the NIC at fixed priorities) is run the same way: the path at SCHED_FIFO 50, and
experiment 3's counterpart is seeds_napi.scenario_seeds_player_dl_napi.
"""

from __future__ import annotations

import functools
import os

from seeds import (
    NIC_THREAD,
    REFUSALS,
    SCHED_FEATURES,
    _flooded_hist,
    _irqresd_state,
    _journal,
    apply_retrying,
    cpu_times,
    enforcement_plan,
    hub_setup,
    nic_fifo50,
    scenario_seeds_adaptive,
    scenario_seeds_latency,
    scenario_seeds_player_dl,
    scenario_seeds_player_fifo,
    scenario_seeds_tools,
    traced_row,
    wait_deadline,
)
from seeds_napi import (
    THREADED,
    _napi_polled,
    napi_threads,
    scenario_seeds_player_dl_napi,
    split,
)
from vmguest import mark, read, sh, thread, wait_for

FIFO_PRIO = 50  # the kernel's priority for IRQ threads, given to the NAPI kthread too
PROFILE = "/run/seeds-latency-napi.yaml"


def _cpu_times(setup: dict) -> dict:
    """The path's threads' and ksoftirqd's CPU time so far (seeds.cpu_times), under the
    names this experiment's rows use."""
    c = cpu_times(setup)
    return {"irq_thread": c["nic_thread"], "napi": c["napi_thread"], "ksoftirqd": c["ksoftirqd"]}


def path_fifo50(setup: dict) -> dict:
    """``irqres restore``, threaded NAPI on, the NAPI kthreads at SCHED_FIFO 50 on the NIC's
    CPU beside the IRQ thread (which the kernel runs there, at SCHED_FIFO 50)."""
    nic = nic_fifo50()
    with open(THREADED, "w") as f:
        f.write("1")
    ts, _ = wait_for(napi_threads, 10, 0.05)
    if not ts:
        raise RuntimeError(f"no NAPI kthread of eth0 with {THREADED} = {read(THREADED)}")
    for t in ts:
        r = sh(f"chrt -f -p {FIFO_PRIO} {t['pid']} && taskset -p -c {setup['nic_cpu']} "
               f"{t['pid']}")
        if r["rc"] != 0:
            raise RuntimeError(f"{t['comm']} (pid {t['pid']}) to SCHED_FIFO {FIFO_PRIO} on "
                               f"CPU {setup['nic_cpu']}: {r['err'] or r['out']}")
    return nic


def _path_reserved(setup: dict, runtime_ns: int, period_ns: int, napi_split: list[int],
                   port: int, enforcement: str = "keep") -> dict:
    """IRQ thread and NAPI kthread reserved at period ``period_ns`` through one profile,
    ``runtime_ns`` split between them by ``napi_split`` (seeds_napi.split); the budget
    enforced at the tick (``keep``) or by HRTICK_DL (``hrtick``)."""
    irq_q, napi_q = split(runtime_ns, *napi_split)
    with open(PROFILE, "w") as f:
        f.write(f"version: 1\nenforcement: {enforcement}\ntargets:\n"
                f"  - name: nic\n    interface: eth0\n    threaded_napi: true\n"
                f"    runtime: {irq_q}ns\n    period: {period_ns}ns\n"
                f"  - name: poll\n    napi: eth0\n    threaded_napi: true\n"
                f"    runtime: {napi_q}ns\n    period: {period_ns}ns\n")
    a, refusals = apply_retrying(PROFILE)
    REFUSALS.extend(refusals)
    nic = wait_deadline(NIC_THREAD, irq_q, period_ns)
    waited = _napi_polled(setup, port + 1, True)
    if not nic or waited is None:
        raise RuntimeError(f"irqres apply {PROFILE} did not take: {a['err'] or a['out']}; "
                           f"thread {thread(NIC_THREAD)}, NAPI {napi_threads()}\n"
                           f"{_journal()}")
    return nic


def _measured(setup: dict, nic: dict, run: int, label: str, seconds: int,
              flood_period_ns: int, size: int, interval_us: int, priority: int,
              hist_us: int, port: int) -> dict:
    """One measurement (seeds._flooded_hist) with the NAPI kthreads as they were and the
    CPU time of the path's threads and ksoftirqd over it."""
    napi = napi_threads()
    t0 = _cpu_times(setup)
    row = _flooded_hist(setup, nic, run, label, seconds, flood_period_ns, size,
                        interval_us, priority, hist_us, port)
    t1 = _cpu_times(setup)
    row.update({"napi": napi, "threaded": read(THREADED),
                "cpu_ns": {k: (t1[k] or 0) - (t0[k] or 0) for k in t0}})
    mark(f"latency napi run {run} {label}: CPU ns {row['cpu_ns']}, NAPI "
         f"{[(t['comm'], t['sched'], t['cpus']) for t in napi]}")
    return row


def scenario_seeds_latency_enforcement_napi(runs: int, seconds: int, flood_period_ns: int,
                                            size: int, reserved: list[list[int]],
                                            napi_split: list[int], interval_us: int,
                                            priority: int, hist_us: int,
                                            port: int = 5001, trace_kb: int = 0) -> dict:
    """Experiment 6 with HRTICK_DL over the whole receive path (threaded NAPI): per run,
    the task's own worst case without a flood (``baseline``, the path at SCHED_FIFO 50
    and idle), the path at SCHED_FIFO 50 under the flood, then for each (Q, T) of
    ``reserved`` the pair reserved (Q split by ``napi_split``) with ``enforcement: keep``
    and ``enforcement: hrtick``. Each row records the sched features it ran under and the
    CPU time of the IRQ thread, the NAPI kthread and ksoftirqd. ``trace_kb``: every row
    but FIFO 50's also traces the NIC's CPU (seeds.traced_row())."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    if not os.path.exists(SCHED_FEATURES):
        sh("mount -t debugfs none /sys/kernel/debug")
    setup = hub_setup()
    was = read(THREADED)
    mark(f"seeds latency enforcement napi: NIC on CPU {setup['nic_cpu']}, sender on CPU "
         f"{setup['sender_cpu']}, threaded {was}")
    results = []
    try:
        for run in range(runs):
            for label, qt, enf in enforcement_plan(reserved):
                nic = (path_fifo50(setup) if qt is None else
                       _path_reserved(setup, *qt, napi_split, port, enf))
                flood = 0 if label == "baseline" else flood_period_ns
                row = traced_row(setup, label, run, trace_kb, functools.partial(
                    _measured, setup, nic, run, label, seconds, flood, size, interval_us,
                    priority, hist_us, port))
                row.update({"enforcement": enf, "reserved": list(qt) if qt else None,
                            "features": read(SCHED_FEATURES) or ""})
                results.append(row)
    finally:
        nic_fifo50()
        with open(THREADED, "w") as f:
            f.write(was or "0")
    return {"setup": setup, "results": results, "apply_refusals": REFUSALS,
            "napi_split": napi_split, "features_after": read(SCHED_FEATURES) or "",
            "interrupts": read("/proc/interrupts"), "uptime": read("/proc/uptime")}


def scenario_seeds_player_fifo_napi(**exp) -> dict:
    """Experiment 2 with threaded NAPI: the player above and below the NIC's path (IRQ
    thread and NAPI kthread at SCHED_FIFO 50 on the NIC's CPU). Leaves threaded NAPI off
    as it found it."""
    was = read(THREADED)
    try:
        return {**scenario_seeds_player_fifo(**exp, fifo50=path_fifo50),
                "threaded": "1"}
    finally:
        nic_fifo50()
        with open(THREADED, "w") as f:
            f.write(was or "0")


PARTS = {"latency": scenario_seeds_latency,
         "latency_enforcement_napi": scenario_seeds_latency_enforcement_napi,
         "tools": scenario_seeds_tools, "player": scenario_seeds_player_fifo,
         "player_napi": scenario_seeds_player_fifo_napi, "player_dl": scenario_seeds_player_dl,
         "player_dl_napi": scenario_seeds_player_dl_napi, "adaptive": scenario_seeds_adaptive}


def scenario_seeds_shapes(**parts: dict) -> dict:
    """The VM suite's short version of the seeds' experiments in one boot: each keyword
    one of PARTS (experiment 6: ``latency``, the IRQ thread alone,
    ``latency_enforcement_napi``, the whole receive path at SCHED_FIFO 50, reserved at the
    tick and with HRTICK_DL; 1: ``tools``; 2: ``player``, ``player_napi``; 3: ``player_dl``,
    ``player_dl_napi``; 5: ``adaptive``) with its scenario's parameters, run in PARTS'
    order."""
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise ValueError(f"seeds_shapes: unknown parts {unknown}; known: {sorted(PARTS)}")
    return {name: fn(**parts[name]) for name, fn in PARTS.items() if name in parts}
