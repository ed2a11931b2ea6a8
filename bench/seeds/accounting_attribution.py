"""The accounting-accuracy experiment's arithmetic (bench/seeds/accounting_accuracy.py):
one window of the guest's data -> each receiver's true and accounted NIC-thread time.

Truth: every datagram costs the NIC thread the same (one path, sizes a byte apart), so the
NIC thread's CPU time over the window (/proc/PID/schedstat, as ``irqres stats`` reports it)
belongs to the receivers in proportion to the datagrams *the NIC thread delivered* to each:
the kernel's histogram of ``net:netif_receive_skb`` by task and length over the window
(the guest's ``deliveries``; flow i's datagrams are ``sizes[i]`` bytes, IP length
``sizes[i] + 28``). On PREEMPT_RT a pending NET_RX also runs in whichever task re-enables
bottom halves on the NIC's CPU (ktimers, rcuc): those datagrams were read but cost the NIC
thread nothing. Records from before the histogram split by the datagrams each receiver
*read* (``truth_by``). Accounted: the growth of irqresd's live accounting (``irqres stats
--json`` ``accounting``) for each receiver's pid over the same window. Pure functions of
the recorded data, integer nanoseconds.
"""

from __future__ import annotations

NONE = -1  # the accounting's pid for activations that woke nobody
IP_UDP_HEADERS = 28  # a datagram's length at netif_receive_skb: IPv4 and UDP headers on


def _served(snap: dict) -> dict[int, dict]:
    return {a["pid"]: a for a in snap["served"]}


def _grew(before: dict, after: dict, pid: int, key: str) -> int:
    return after.get(pid, {}).get(key, 0) - before.get(pid, {}).get(key, 0)


def deliveries(row: dict) -> dict | None:
    """Per receiver (the row's order): ``thread``, the datagrams the NIC thread delivered;
    ``elsewhere``, those other tasks delivered; and ``by``, {comm: count} of the latter
    over both flows. None for a record without the histogram."""
    if row.get("deliveries") is None:
        return None
    pid = row["after"]["thread"]["pid"]
    out: dict = {"thread": [], "elsewhere": [], "by": {}}
    for size in row["sizes"]:
        mine = [d for d in row["deliveries"] if d["len"] == size + IP_UDP_HEADERS]
        out["thread"].append(sum(d["count"] for d in mine if d["pid"] == pid))
        out["elsewhere"].append(sum(d["count"] for d in mine if d["pid"] != pid))
        for d in mine:
            if d["pid"] != pid:
                out["by"][d["comm"]] = out["by"].get(d["comm"], 0) + d["count"]
    return out


def _share(cpu: int, part: int, whole: int) -> int:
    return cpu * part // whole if whole else 0


def attribution(row: dict) -> dict:
    """One window's attribution: ``cpu_ns`` (the NIC thread's), ``activations`` (its
    voluntary switches: one per activation, which ends in a sleep), per receiver
    (``receivers``: pid, port, period_ns, reads, delivered and elsewhere (None in a record
    without the histogram), truth_ns, accounted_ns, error = accounted / truth - 1,
    truth_read_ns and error_read (the truth split by the datagrams read), activations,
    wakeups), what went to nobody (``none_ns``, ``none_activations``) and to other
    processes (``others_ns``), ``shared`` (activations counted for more than one: the
    receivers' and nobody's activations minus the thread's), the accounting's
    ``dropped``/``lost`` events over the window, what the truth split by (``truth_by``:
    "delivered", or "read" for an older record) and who else delivered (``elsewhere_by``,
    {comm: datagrams})."""
    b, a = row["before"], row["after"]
    if b["thread"]["pid"] != a["thread"]["pid"]:
        raise ValueError(f"run {row['run']}: the NIC thread changed over the window: "
                         f"{b['thread']} -> {a['thread']}")
    cpu = a["thread"]["cpu_time_ns"] - b["thread"]["cpu_time_ns"]
    acts = a["thread"]["voluntary_switches"] - b["thread"]["voluntary_switches"]
    sb, sa = _served(b), _served(a)
    dv = deliveries(row)
    shares = dv["thread"] if dv else row["reads"]
    recv = []
    for i, (pid, port, period, reads) in enumerate(zip(row["pids"], row["ports"],
                                                       row["periods_ns"], row["reads"],
                                                       strict=True)):
        truth = _share(cpu, shares[i], sum(shares))
        by_read = _share(cpu, reads, sum(row["reads"]))
        got = _grew(sb, sa, pid, "irq_time_ns")
        recv.append({"pid": pid, "port": port, "period_ns": period, "reads": reads,
                     "delivered": dv["thread"][i] if dv else None,
                     "elsewhere": dv["elsewhere"][i] if dv else None,
                     "truth_ns": truth, "accounted_ns": got,
                     "error": got / truth - 1 if truth else None,
                     "truth_read_ns": by_read,
                     "error_read": got / by_read - 1 if by_read else None,
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
            "truth_by": "delivered" if dv else "read",
            "elsewhere_by": dv["by"] if dv else {},
            "enabled": bool(a["enabled"]), "error_text": a["error"],
            "dropped": (a["dropped_activations"] or 0) - (b["dropped_activations"] or 0),
            "lost": (a["lost_events"] or 0) - (b["lost_events"] or 0)}
