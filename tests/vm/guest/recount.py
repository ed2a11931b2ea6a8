"""What the recount costs (bench/recount): irqresd has the kernel count its root domains
again after each change of a thread beside its partition, from 6.19 (docs/vm.md, "What
7.3 changes"). Measured where a user feels it: a periodic SCHED_FIFO task's latency
(cyclictest on the root cgroup's CPU 1, whose tasks' affinity each recount rewrites)
while the NIC thread's budget is changed through irqresd at a fixed rate, beside the same
without changes; and how long each ``set-budget`` request takes (its round trip on the
control socket)."""

from __future__ import annotations

import time

from scenarios import NIC_THREAD, _cyclic_summary, _cyclictest
from vmguest import mark, sh, thread, wait_for


def _phase(nic_target: dict, seconds: int, every_ms: int | None, runtimes: list[int],
           period_ns: int, interval_us: int, priority: int) -> dict:
    """cyclictest on CPU 1 for ``seconds``; with ``every_ms`` the NIC's budget is set to
    the next of ``runtimes`` every that many ms meanwhile (each call timed)."""
    from irqres.client import Client
    from irqres.errors import DaemonError

    cyc = _cyclictest(seconds, interval_us, priority, None, cpu=1)
    calls: list[dict] = []
    end = time.monotonic_ns() + (seconds - 1) * 10**9
    i = 0
    with Client() as client:        # the request's round trip alone, no CLI start-up
        while every_ms is not None and time.monotonic_ns() < end:
            q = runtimes[i % len(runtimes)]
            t0 = time.monotonic_ns()
            try:
                client.set_budget(nic_target["name"], q, period_ns)
                rc = 0
            except DaemonError:
                rc = 1
            calls.append({"runtime_ns": q, "rc": rc, "ns": time.monotonic_ns() - t0})
            i += 1
            time.sleep(max(0.0, every_ms / 1000 - (time.monotonic_ns() - t0) / 1e9))
    out, _ = cyc.communicate(timeout=seconds + 60)
    return {"cyclictest": _cyclic_summary(out), "calls": calls}


def scenario_recount_cost(nic_target: dict, seconds: int, every_ms: int, runtimes: list[int],
                          runs: int, interval_us: int = 1000, priority: int = 80) -> dict:
    wait_for(lambda: ((thread(NIC_THREAD) or {}).get("sched") or {}).get("policy")
             == "deadline", 60, 0.2)
    period = thread(NIC_THREAD)["sched"]["period_ns"]
    rows = []
    for run in range(runs):
        for label, every in (("quiet", None), ("changes", every_ms)):
            row = {"run": run, "label": label,
                   **_phase(nic_target, seconds, every, runtimes, period, interval_us,
                            priority)}
            rows.append(row)
            mark(f"recount run {run} {label}: {row['cyclictest']}, {len(row['calls'])} "
                 "set-budget calls")
    journal = sh("journalctl -b -u irqresd.service --no-pager -o cat | grep -c 'counted the "
                 "deadline bandwidth'")
    return {"rows": rows, "recounts_logged": journal["out"].strip(), "nic": thread(NIC_THREAD)}
