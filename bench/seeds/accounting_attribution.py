"""The accounting-accuracy experiment's arithmetic (bench/seeds/accounting_accuracy.py):
one window of the guest's data -> each receiver's true and accounted NIC-thread time.

Truth: every datagram costs the NIC thread the same (one size, one path), so the NIC
thread's CPU time over the window (/proc/PID/schedstat, as ``irqres stats`` reports it)
belongs to the receivers in proportion to the datagrams each *read*. Accounted: the growth
of irqresd's live accounting (``irqres stats --json`` ``accounting``) for each receiver's
pid over the same window. Pure functions of the recorded data, integer nanoseconds.
"""

from __future__ import annotations

NONE = -1  # the accounting's pid for activations that woke nobody


def _served(snap: dict) -> dict[int, dict]:
    return {a["pid"]: a for a in snap["served"]}


def _grew(before: dict, after: dict, pid: int, key: str) -> int:
    return after.get(pid, {}).get(key, 0) - before.get(pid, {}).get(key, 0)


def attribution(row: dict) -> dict:
    """One window's attribution: ``cpu_ns`` (the NIC thread's), ``activations`` (its
    voluntary switches: one per activation, which ends in a sleep), per receiver
    (``receivers``: pid, port, period_ns, reads, truth_ns, accounted_ns, error = accounted
    / truth - 1, activations, wakeups), what went to nobody (``none_ns``,
    ``none_activations``) and to other processes (``others_ns``), ``shared`` (activations
    counted for more than one: the receivers' and nobody's activations minus the
    thread's), and the accounting's ``dropped``/``lost`` events over the window."""
    b, a = row["before"], row["after"]
    if b["thread"]["pid"] != a["thread"]["pid"]:
        raise ValueError(f"run {row['run']}: the NIC thread changed over the window: "
                         f"{b['thread']} -> {a['thread']}")
    cpu = a["thread"]["cpu_time_ns"] - b["thread"]["cpu_time_ns"]
    acts = a["thread"]["voluntary_switches"] - b["thread"]["voluntary_switches"]
    sb, sa = _served(b), _served(a)
    total_reads = sum(row["reads"])
    recv = []
    for pid, port, period, reads in zip(row["pids"], row["ports"], row["periods_ns"],
                                        row["reads"], strict=True):
        truth = cpu * reads // total_reads if total_reads else 0
        got = _grew(sb, sa, pid, "irq_time_ns")
        recv.append({"pid": pid, "port": port, "period_ns": period, "reads": reads,
                     "truth_ns": truth, "accounted_ns": got,
                     "error": got / truth - 1 if truth else None,
                     "activations": _grew(sb, sa, pid, "activations"),
                     "wakeups": _grew(sb, sa, pid, "wakeups")})
    others = sum(_grew(sb, sa, p, "irq_time_ns") for p in set(sa) | set(sb)
                 if p not in row["pids"] and p != NONE)
    none_acts = _grew(sb, sa, NONE, "activations")
    return {"run": row["run"], "periods_ns": row["periods_ns"], "cpu_ns": cpu,
            "activations": acts, "receivers": recv,
            "none_ns": _grew(sb, sa, NONE, "irq_time_ns"), "none_activations": none_acts,
            "others_ns": others,
            "shared": sum(r["activations"] for r in recv) + none_acts - acts,
            "enabled": bool(a["enabled"]), "error_text": a["error"],
            "dropped": (a["dropped_activations"] or 0) - (b["dropped_activations"] or 0),
            "lost": (a["lost_events"] or 0) - (b["lost_events"] or 0)}
