"""The accounting-accuracy experiment (accounting_accuracy.py): the section of
RESULTS.md from a record of bench/seeds/data/accounting-accuracy-*.json. Every number is
computed here from the record (accounting_attribution.attribution); the goal is
shapes.accounting_accurate.
"""

from __future__ import annotations

import shapes
from accounting_attribution import attribution
from report import provenance

#: the last record made with the rule that split by wake-ups alone, shown beside the new
WAKEUP_RULE_RECORD = "accounting-accuracy-icount-nice0-20261126T060249.json"


def _rate(period_ns: int) -> str:
    return f"{1e9 / period_ns:.0f}/s"


def _read(r: dict) -> str:
    """Datagrams read, and of them those the NIC thread delivered where recorded."""
    return f"{r['reads']}" + (f" ({r['delivered']})" if r["delivered"] is not None else "")


def _sizes(row: dict) -> str:
    """The datagram sizes of a record's windows, in words."""
    sizes = row.get("sizes") or [row["size"]]
    return (f"{sizes[0]}-byte" if len(set(sizes)) == 1
            else f"{'- and '.join(str(s) for s in sizes)}-byte")


def _row(w: dict) -> str:
    a, b = w["receivers"]
    cells = " | ".join(f"{_read(r)} | {r['truth_ns'] / 1e6:.2f} | "
                       f"{r['accounted_ns'] / 1e6:.2f} | {100 * r['error']:+.2f} %"
                       if r["error"] is not None else f"{_read(r)} | - | - | -"
                       for r in (a, b))
    return (f"| {w['run']} | {_rate(a['period_ns'])} : {_rate(b['period_ns'])} | "
            f"{w['cpu_ns'] / 1e6:.2f} | {w['activations']} | {w['shared']} | "
            f"{w['none_ns'] / 1e6:.2f} ({w['none_activations']}) | {cells} |")


def _where_row(w: dict) -> str:
    a, b = w["receivers"]
    charged = sum(r["accounted_ns"] for r in w["receivers"]) + w["none_ns"] + w["others_ns"]
    cells = " | ".join(f"{r['activations']} | {r['reads'] / max(r['activations'], 1):.2f} | "
                       f"{r['accounted_ns'] / max(r['activations'], 1) / 1000:.0f}"
                       for r in (a, b))
    return (f"| {w['run']} | {_rate(a['period_ns'])} : {_rate(b['period_ns'])} | {cells} | "
            f"{w['others_ns'] / 1e6:.2f} | {(w['cpu_ns'] - charged) / 1e6:.2f} |")


def offline_words(rec: dict) -> str:
    """Live against offline (``irqres analyze`` of the window's trace-cmd recording) for a
    boot with recordings (tag ``trace``), one sentence."""
    parts = []
    for row in rec["result"]["rows"]:
        off = {s["pid"]: s["irq_time_ns"] for s in row.get("offline") or []}
        w = attribution(row)
        for r in w["receivers"]:
            if r["pid"] in off:
                parts.append(f"port {r['port']} live {r['accounted_ns'] / 1e6:.2f} ms, offline "
                             f"{off[r['pid']] / 1e6:.2f} ms "
                             f"({100 * (r['accounted_ns'] / off[r['pid']] - 1):+.2f} %), error "
                             f"against the truth {100 * r['error']:+.2f} %")
    return (f"Live and offline on the same window (a boot with trace-cmd recording each "
            f"window, tag `trace`, {rec['date']}, commit `{rec['commit']}`, {rec['kernel']}, "
            f"`{rec['command']}`; `irqres analyze --thread` of the recording): "
            + "; ".join(parts) + ".")


def section(rec: dict, traced: list[dict] = (), before: dict | None = None) -> list[str]:
    p, rows = rec["params"], rec["result"]["rows"]
    ws = [attribution(r) for r in rows]
    errs = [abs(r["error"]) for w in ws for r in w["receivers"] if r["error"] is not None]
    bad = shapes.accounting_accurate(rows)
    pairs = sorted({tuple(w["periods_ns"]) for w in ws})
    out = ["## Accounting accuracy: the NIC thread's time per served process", "",
           "Two UDP receivers (`seedload recv`, two processes on ports "
           f"{p['ports'][0]} and {p['ports'][1]}, SCHED_OTHER on the sender's vCPU) read "
           f"{_sizes(rows[0])} datagrams that two paced senders in namespace `snd` send "
           f"them for {p['seconds']} guest-seconds per window, at the rates of each pair "
           "(periods chosen not to be exact multiples, so the two flows' arrivals drift "
           "through every phase against each other). irqresd boots with a coupled target "
           "for eth0's IRQ thread that `serves:` both ports, and accounts each of the "
           "thread's activations, at the kernel's charge, to the receivers that read the "
           "packets it delivered (matched by skb address; else to the processes it woke: "
           "docs/process-aware.md). *True* is the "
           "NIC thread's CPU time over the window (/proc/PID/schedstat as `irqres stats` "
           "reports it, one reply before and one after) split by the datagrams it "
           "delivered to each receiver (in brackets after those read: a pending NET_RX "
           "also runs in whichever task re-enables bottom halves on the NIC's CPU, "
           "ktimers or rcuc, and those datagrams cost the thread nothing), counted by the "
           "kernel's histogram of `net:netif_receive_skb` by task and length (port 2's "
           "datagrams are a byte longer); a record without the histogram splits by the "
           "datagrams read; *accounted* is the growth of irqresd's live total for the "
           "receiver's pid over the same window; *error* = accounted / true - 1. "
           "*Activations* are the thread's voluntary switches over the window (each "
           "activation ends in a sleep); *shared* are the activations the accounting "
           "counted for more than one process (the receivers' and nobody's activations "
           "minus the thread's), whose time the rule splits by the packets each read; "
           "*to nobody* is the time of activations that served neither. The goal: "
           "|error| < "
           f"{100 * shapes.ACCT_ERROR:g} % for every receiver in every window "
           "(shapes.accounting_accurate).", "", *provenance(rec), "",
           "| run | rates (port 1 : port 2) | NIC thread (ms) | activations | shared | "
           "to nobody, ms (activations) | 1: read (by the thread) | 1: true (ms) | "
           "1: accounted (ms) | 1: error | 2: read (by the thread) | 2: true (ms) | "
           "2: accounted (ms) | 2: error |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for pair in pairs:
        out += [_row(w) for w in ws if tuple(w["periods_ns"]) == pair]
    out += ["", "Where the time went: per receiver, the activations that gave it time, the "
            "datagrams it read per such activation and its accounted time per activation "
            "(µs); the time the rule gave to other processes the thread woke (ksoftirqd, "
            "ktimers), and the thread's CPU time no activation was charged with.",
            "", "| run | rates | 1: activations | 1: read per activation | 1: µs per activation "
            "| 2: activations | 2: read per activation | 2: µs per activation | to others (ms) "
            "| not charged (ms) |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for pair in pairs:
        out += [_where_row(w) for w in ws if tuple(w["periods_ns"]) == pair]
    lost = sum(w["lost"] for w in ws)
    dropped = sum(w["dropped"] for w in ws)
    out += ["", f"Largest |error| {100 * max(errs):.2f} % over {len(ws)} windows; events "
            f"lost {lost}, activations dropped {dropped}. Goal "
            + ("met." if not bad else "not met: " + "; ".join(bad) + "."), ""]
    out += before_words(before) if before else []
    return out + [x for t in traced for x in (offline_words(t), "")]


def before_words(rec: dict) -> list[str]:
    """The same experiment with the rule that split by wake-ups alone, one paragraph."""
    ws = [attribution(r) for r in rec["result"]["rows"]]
    per = ", ".join(f"{_rate(r['period_ns'])} {100 * r['error']:+.1f} %"
                    for w in ws for r in w["receivers"] if r["error"] is not None)
    worst = max(abs(r["error"]) for w in ws for r in w["receivers"] if r["error"] is not None)
    return [f"Before, with the rule that split each activation's switch-to-switch time by "
            f"wake-ups alone ({rec['date']}, commit `{rec['commit']}`, {rec['kernel']}, "
            f"`{rec['command']}`): errors {per}; largest {100 * worst:.2f} %. A receiver "
            "still reading when the next datagrams came was not woken for them, so their "
            "time went to whoever else the activation woke: the low-rate receiver got too "
            "much, the high-rate one too little.", ""]
