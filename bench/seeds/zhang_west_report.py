"""Zhang and West's experiment (zhang_west.py): the section of RESULTS.md from the records
of bench/seeds/data/zhang-west-*.json. Every number is computed here from the records;
the goal is shapes.zhang_west, judged per run and mode.
"""

from __future__ import annotations

import shapes
from process_aware_report import MODE, by_rate
from report import provenance
from stats import spread


def _verdicts(rows: list[dict], mode: str, task: dict) -> str:
    runs = sorted({r["run"] for r in rows if r["mode"] == mode})
    bad = {run: shapes.zhang_west([r for r in rows if r["run"] == run and r["mode"] == mode],
                                  task) for run in runs}
    misses = [sum(shapes.zw_row(r, task)["misses"] for r in rows
                  if r["run"] == run and r["mode"] == mode) for run in runs]
    shape = [run for run in runs if not bad[run]]
    goal = [run for run in runs
            if not shapes.zhang_west([r for r in rows if r["run"] == run and r["mode"] == mode],
                                     task, shapes.ZW_RX_GOAL)]
    return (f"the task missed {', '.join(map(str, misses))} deadlines over all rates in runs "
            f"{', '.join(map(str, runs))}; goal (0 misses, the server at least "
            f"{100 * shapes.ZW_RX_GOAL:g} % of what the CPU left to it allows) met in "
            f"{len(goal)} of {len(runs)} runs, shape (the same with "
            f"{100 * shapes.ZW_RX_BOUND:g} %) in {len(shape)} of {len(runs)}")


def _against_default(rows: list[dict], task: dict) -> str:
    """How the server's reads compare, coupled against the kernel default, per run and
    rate with a sender."""
    rx = {(r["run"], r["rate"], r["mode"]): shapes.zw_row(r, task)["rx_per_s"]
          for r in rows if r["rate"]}
    pairs = [(rx[(run, rate, "coupled")], rx[(run, rate, "default")])
             for run, rate, mode in rx if mode == "coupled" and (run, rate, "default") in rx]
    ratios = [c / d for c, d in pairs if d]
    return (f"Coupled against the kernel default, the server read at least as many "
            f"datagrams a second in {sum(c >= d for c, d in pairs)} of {len(pairs)} "
            f"(run, rate) pairs" + (f"; {min(ratios):.2g} to {max(ratios):.3g} times as "
                                     f"many where the default read any" if ratios else "")
            + f", and {sum(not d for _, d in pairs)} where the default read none.")


def _cell(values: list[float | None], digits: int = 0) -> str:
    known = [round(v, digits) if digits else round(v) for v in values if v is not None]
    return spread(known) if known else "-"


def table(rows: list[dict], mode: str, port: int, task: dict) -> list[str]:
    out = [f"**{MODE[mode].format(port=port)}**: {_verdicts(rows, mode, task)}.", "",
           "| mean rate (datagrams/s) | low / high state (datagrams/s) | runs | sent "
           "(datagrams/s) | task: misses | task: worst lateness (ms) | server read "
           "(datagrams/s) | CPU left allows (datagrams/s) | NIC thread + server CPU per "
           "datagram (µs) |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for rate, rs in by_rate(rows, mode):
        ms = [shapes.zw_row(r, task) for r in rs]
        lo, hi = rs[0]["rates"]
        load = (f"{lo} / {hi} | {len(rs)} | {_cell([m['sent_per_s'] for m in ms])} | "
                if rate else f"no sender | {len(rs)} | - | ")
        out.append(f"| {rate} | {load}{spread([m['misses'] for m in ms])} of "
                   f"{ms[0]['periods']} | {_cell([m['max_late_ns'] / 1e6 for m in ms], 2)} | "
                   + (f"{_cell([m['rx_per_s'] for m in ms])} | "
                      f"{_cell([m['allowed_per_s'] for m in ms])} | "
                      f"{_cell([m['cost_ns'] / 1e3 if m['cost_ns'] else None for m in ms])} |"
                      if rate else "- | - | - |"))
    return [*out, ""]


def section(rec: dict) -> list[str]:
    p, rows = rec["params"], rec["result"]["rows"]
    t, mm = p["task"], p["mmpp"]
    left = 100 * (1 - t["work_ns"] / t["period_ns"])
    out = ["## Process-aware scheduling: Zhang and West's experiment", "",
           f"On the NIC's CPU of the guest: a periodic real-time task (SCHED_FIFO "
           f"{t['prio']}, {t['work_ns'] / 1e6:g} ms of CPU work every "
           f"{t['period_ns'] / 1e6:g} ms) above the UDP server (SCHED_FIFO "
           f"{p['server_prio']}): the paper's 95 % of the period, at a tenth of its 1 s "
           "period. Not at 10 ms: the guest under instruction counting wakes a timer "
           "sleeper up to about 2 ms late, more than the 0.5 ms a 10 ms period leaves (a "
           "probe at 9.5 ms every 10 ms, no datagram sent, missed 185 of 200 deadlines). "
           f"The sender on the other vCPU sends {p['size']}-byte "
           f"datagrams to the server's port in MMPP-2 bursts (`seedload msend`: a low and a "
           f"high state, the high rate {mm['burst']} times the low, held "
           f"{mm['hold_lo_ns'] / 1e6:g} ms and {mm['hold_hi_ns'] / 1e6:g} ms on average, "
           "exponential gaps within a state, seeded, paced in guest time) at each mean "
           f"rate for {p['seconds'] + 1} guest-seconds, started first; the task runs "
           f"{p['seconds']} of them from half a second after its own start. "
           "The kernel's RT throttling is off during the runs (the task and the server are "
           "real-time work on the whole CPU, which the throttle would stop for 50 ms of "
           "every second whatever the coupling; the paper's kernel had none). A miss is a "
           "job that ends after its next release (the task runs every release, late or "
           "not: none is skipped); lateness is its end after that release. The server's "
           "reads are counted from the task's first release to its last period's end. "
           f"*CPU left allows*: the {left:g} % of the CPU the task leaves, divided by the "
           "NIC thread's CPU time per packet it took from the ring plus the server's per "
           "datagram it read (both measured over the row, /proc/PID/schedstat), at most "
           "what was sent in the same span (from the sender's sojourns): coupled, the NIC "
           "thread and the server live in that share. "
           "Median [min..max] over the runs. The goal: coupled, 0 misses at every rate "
           f"and the server reading at least {100 * shapes.ZW_RX_GOAL:g} % of what the "
           "CPU left allows; the shape the VM suite asserts (shapes.zhang_west): the same "
           f"with {100 * shapes.ZW_RX_BOUND:g} %.", "",
           *provenance(rec), ""]
    for mode in p["modes"]:
        out += table(rows, mode, p["port"], t)
    if set(p["modes"]) == {"default", "coupled"}:
        out += [_against_default(rows, t), ""]
    out += ["The paper (Zhang and West, RTSS 2006, Linux with process-aware interrupt "
            "scheduling): a periodic real-time task using 0.95 s of every 1 s misses no "
            "deadline under MMPP-2 bursts, and the UDP server's reception rate stays steady.",
            ""]
    return out
