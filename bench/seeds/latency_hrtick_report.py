"""Experiment 6 with HRTICK_DL (latency_hrtick.py): the section of RESULTS.md and the
numbers its prose quotes, from the records of bench/seeds/data/latency-hrtick-*.json.

Worst case: cyclictest's maximum lateness over a measurement (the intended cycle grid's
maximum is the same number: a missed cycle is never later than the wake-up after it).
The goal: with the budget enforced by HRTICK_DL the reserved worst case is at most
``shapes.HRTICK_FACTOR`` Q + the task's own worst case without a flood in the same boot,
and with the NIC thread at SCHED_FIFO 50 the worst case is still ``shapes.FIFO_FACTOR``
times that or more.
"""

from __future__ import annotations

import shapes
from stats import grid_summary, spread, spread_bounded

ENF = {"keep": "at the tick (`enforcement: keep`)", "hrtick": "HRTICK_DL (`enforcement: hrtick`)"}


def rows(rec: dict, label: str) -> list[dict]:
    return [r for r in rec["result"]["results"] if r["label"] == label]


def reservations(rec: dict) -> list[tuple[int, int]]:
    return [(q, t) for q, t in rec["params"]["reserved"]]


def label_of(enforcement: str, q: int, t: int) -> str:
    return f"{enforcement}-{q}-{t}"


def _hrtick_on(r: dict) -> str:
    words = (r.get("features") or "").split()
    return "on" if "HRTICK_DL" in words else "off" if "NO_HRTICK_DL" in words else "?"


def _is_path(rec: dict) -> bool:
    """A record over the whole receive path (latency_hrtick.py --napi)."""
    return "napi_split" in rec["params"]


def _cpu_ms(rs: list[dict], who: str) -> str:
    return spread([round(r["cpu_ns"][who] / 1e6) for r in rs if "cpu_ns" in r])


def _tail(rs: list[dict], grid: tuple[int, int]) -> str:
    """shapes.tail_means, per run and pooled (the VM suite's HRTICK_DL shape)."""
    runs, pooled = shapes.tail_means(rs, *grid)
    return (f"{spread_bounded(runs, grid[1])}; "
            f"{'> ' + str(grid[1]) if pooled is None else pooled}")


def _table(rec: dict) -> list[str]:
    p = rec["params"]
    grid = p["interval_us"], p["hist_us"]
    path = _is_path(rec)
    out = [("| NIC path" if path else "| NIC thread") + " | HRTICK_DL | runs | cycles of the "
           "grid | p99 | p99.9 | max (worst case) | datagrams the NIC "
           + ("path took |" if path else "thread took |")
           + (f" mean of the latest {shapes.TAIL_PCT:g} %: per run; runs pooled | CPU ms: "
              "IRQ thread | NAPI kthread | ksoftirqd |" if path else ""),
           "|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|---:|" if path else "")]
    cases = [("baseline", "no flood (the task's own worst case)"),
             ("fifo50", "SCHED_FIFO 50 (default)")]
    cases += [(label_of(e, q, t), f"reserved {q / 1e6:g} ms / {t / 1e6:g} ms, enforced "
               f"{ENF[e]}") for q, t in reservations(rec) for e in ("keep", "hrtick")]
    for label, name in cases:
        rs = rows(rec, label)
        if not rs:
            continue
        g = [grid_summary(r["hist"], *grid) for r in rs]
        pk = [x for r in rs if (x := (r.get("rx") or {}).get("rx_packets")) is not None]
        took = spread(pk) if pk and label != "baseline" else "-"
        out.append(f"| {name} | {', '.join(sorted({_hrtick_on(r) for r in rs}))} | {len(rs)} "
                   f"| {spread([x['cycles'] for x in g])} | "
                   + " | ".join(spread_bounded([x[k] for x in g], p["hist_us"])
                                for k in ("p99", "p99.9", "max"))
                   + f" | {took} |"
                   + (f" {_tail(rs, grid)} |" + "".join(
                       f" {_cpu_ms(rs, w)} |" for w in ("irq_thread", "napi", "ksoftirqd"))
                      if path else ""))
    return [*out, ""]


def goal(rec: dict) -> list[str]:
    """One line per reservation and enforcement: the worst case against the goal (1.2 Q
    + baseline, FIFO 50 20x worse), against the shape (Q + half a tick + baseline) and
    against two budgets back to back (2Q + baseline: a reservation may run Q at the end of
    one period and Q again at the start of the next, so a task it preempts can wait 2Q
    however exactly the budget is enforced)."""
    base = shapes.worst(rows(rec, "baseline"))
    fifo = min(r["hist"]["max_us"] for r in rows(rec, "fifo50"))
    out = []
    for q, t in reservations(rec):
        for e in ("keep", "hrtick"):
            rs = rows(rec, label_of(e, q, t))
            args = rows(rec, "baseline"), rows(rec, "fifo50"), rs, q
            goal_ok = not shapes.latency_enforced(*args)
            shape_ok = not shapes.latency_overrun(*args)
            two = 2 * q / 1000 + base
            out.append(f"- {q / 1e6:g} ms / {t / 1e6:g} ms enforced {ENF[e]}: worst case "
                       f"{shapes.worst(rs)} us; goal {shapes.HRTICK_FACTOR:g} Q + baseline = "
                       f"{shapes.HRTICK_FACTOR * q / 1000 + base:g} us "
                       f"{'met' if goal_ok else 'not met'}; shape Q + "
                       f"{shapes.OVERRUN_SLACK_US} us + baseline = "
                       f"{q / 1000 + shapes.OVERRUN_SLACK_US + base:g} us "
                       f"{'holds' if shape_ok else 'fails'}; two budgets back to back, 2Q + "
                       f"baseline = {two:g} us, "
                       f"{'not exceeded' if shapes.worst(rs) <= two else 'exceeded'}"
                       f"; FIFO 50's smallest worst case "
                       f"{fifo} us is {fifo / max(shapes.worst(rs), 1):.0f}x it")
    return out


def _path_intro(p: dict) -> list[str]:
    num, den = p["napi_split"]
    return ["## Experiment 6 with HRTICK_DL over the NIC's whole receive path", "",
            "As the section above, with eth0 polled by its NAPI kthread (threaded NAPI, "
            "where all of its receive work runs: the CPU columns show ksoftirqd's share) and "
            "the two threads compared together: IRQ thread and NAPI kthread at SCHED_FIFO 50 "
            "on the NIC's CPU, or both reserved through one profile at period T, "
            f"{num}/{den} of Q to the kthread and the rest to the IRQ thread. Command: "
            "`latency_hrtick.py --napi N/D`.", ""]


def section(recs: list[dict]) -> list[str]:
    rec = recs[-1]
    p = rec["params"]
    if _is_path(rec):
        return _path_intro(p) + _boots(recs)
    out = ["## Experiment 6 with HRTICK_DL: the budget enforced at its end, not at the tick",
           "",
           f"As experiment 6 (cyclictest at SCHED_FIFO {p['priority']}, "
           f"{p['interval_us'] // 1000} ms interval, on the CPU of irq/11-eth0, "
           f"{p['seconds']} guest-second(s) per measurement, {p['size']}-byte datagrams every "
           f"{p['flood_period_ns'] / 1000:g} µs), in one boot, {p['runs']} runs of: the task "
           "without a flood (its own worst case), the NIC thread at SCHED_FIFO 50, and for "
           "each reservation the NIC thread reserved by a profile with `enforcement: keep` "
           "(HZ=250: the budget is enforced at the next 4 ms tick) and with `enforcement: "
           "hrtick` (irqresd switches HRTICK_DL on; the HRTICK_DL column is what "
           "/sys/kernel/debug/sched/features said after each measurement). Latencies in µs of "
           "guest time over the intended cycle grid; each cell: median [min..max] over the "
           "runs.", ""]
    return out + _boots(recs)


def cost(rec: dict) -> list[str]:
    """What HRTICK_DL cost the path, per reservation: datagrams it took per ms of CPU its
    two threads had, at the tick against HRTICK_DL (medians over the runs)."""
    out = []
    for q, t in reservations(rec):
        per = {}
        for e in ("keep", "hrtick"):
            rs = [r for r in rows(rec, label_of(e, q, t)) if "cpu_ns" in r]
            vals = sorted(r["rx"]["rx_packets"] * 1e6
                          / max(r["cpu_ns"]["irq_thread"] + r["cpu_ns"]["napi"], 1) for r in rs)
            per[e] = vals[len(vals) // 2] if vals else None
        if per["keep"] and per["hrtick"]:
            out.append(f"- {q / 1e6:g} ms / {t / 1e6:g} ms: {per['keep']:.1f} datagrams per "
                       f"ms of the path's CPU at the tick, {per['hrtick']:.1f} with HRTICK_DL "
                       f"({per['hrtick'] / per['keep']:.2f}x)")
    return ["What HRTICK_DL cost the path (median over the runs):", "", *out, ""] if out else []


def _boots(recs: list[dict]) -> list[str]:
    out = []
    for r in recs:
        out += [f"Date {r['date']}, commit `{r['commit']}`, guest kernel {r['kernel']}, "
                f"testbed: {r['testbed']}; {r['wall_s']:.0f} s wall, host load average "
                f"{r['loadavg_before'][0]:.1f} → {r['loadavg_after'][0]:.1f}.",
                f"Command (root, top of the checkout): `{r['command']}`", "",
                *_table(r), f"Goal: reserved worst case ≤ {shapes.HRTICK_FACTOR:g} Q + the "
                f"baseline under HRTICK_DL, FIFO 50 ≥ {shapes.FIFO_FACTOR}x worse:", "",
                *goal(r), "", *(cost(r) if _is_path(r) else [])]
    return out


def kernel_key(rec: dict) -> str:
    """"6.1.0-50-rt-amd64" -> "6_1" (a field name's part)."""
    return "_".join(rec["kernel"].split(".")[:2]).split("-")[0]


def values(recs: list[dict]) -> dict[str, str]:
    """The prose's numbers (RESULTS.md.tail), per kernel from its newest record: the
    baseline's and FIFO 50's worst cases, each reservation's per enforcement, whether
    the goal was met with HRTICK_DL, the boot's commit."""
    newest = {kernel_key(r): r for r in recs}
    out = {}
    for k, rec in newest.items():
        base, fifo = rows(rec, "baseline"), rows(rec, "fifo50")
        out |= {f"exp6h_{k}_base": spread([r["hist"]["max_us"] for r in base]),
                f"exp6h_{k}_fifo": spread([r["hist"]["max_us"] for r in fifo]),
                f"exp6h_{k}_commit": rec["commit"], f"exp6h_{k}_kernel": rec["kernel"]}
        met = []
        for q, t in reservations(rec):
            for e in ("keep", "hrtick"):
                rs = rows(rec, label_of(e, q, t))
                out[f"exp6h_{k}_q{q // 1_000_000}_{e}"] = spread(
                    [r["hist"]["max_us"] for r in rs])
            ok = not shapes.latency_enforced(base, fifo, rows(rec, label_of("hrtick", q, t)), q)
            met.append(f"{q / 1e6:g} ms {'met' if ok else 'not met'}")
        out[f"exp6h_{k}_goal"] = ", ".join(met)
    return out
