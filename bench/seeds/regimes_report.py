"""Experiment 2's two regimes (player_fifo.py --regimes): the RESULTS.md section, from the
boots' raw data (bench/seeds/data/player-fifo-regimes-*.json) and the VM suite's two boots
that showed the regimes (data/player-fifo-suite-boots-*.json).

Each boot runs experiment 2 before irqres has done anything, after the apply/restore
cycles of the VM suite's seeds boot, after the suite's order of events, and with the
sender's IRQ thread pinned again. A row's regime is read off the NIC thread's CPU share
with the player above it: under STARVED_PCT % it is *starved*, else it *shares* the CPU
the player leaves.
"""

from __future__ import annotations

import shapes
from report import provenance
from stats import spread

STARVED_PCT = 5.0
PHASES = ("before", "after cycles", "suite order", "eth1 thread pinned")
PHASE_WORDS = {
    "before": "before any irqres action",
    "after cycles": "after the seeds boot's apply/restore cycles",
    "suite order": "after the suite's order of events",
    "eth1 thread pinned": "the sender's IRQ thread pinned to the sender's CPU again",
}


def share_pct(row: dict, who: str = "nic_thread") -> float:
    return 100.0 * (row["cpu_ns"].get(who) or 0) / max(row["span_ns"], 1)


def eth1_pct(row: dict) -> float | None:
    """The sender's NIC's IRQ thread's CPU time over the row (% of the flood's span)."""
    a, b = (row.get(k, {}).get("eth1_thread") for k in ("before", "after"))
    if not a or not b:
        return None
    return 100.0 * (b["run_ns"] - a["run_ns"]) / max(row["span_ns"], 1)


def regime(rows: list[dict]) -> str:
    """The regime of a phase, from its rows with the player above the NIC thread."""
    above = [share_pct(r) for r in rows if r["order"] == "above"]
    if not above:
        return "?"
    return "starved" if max(above) < STARVED_PCT else "shares"


def _where(w: dict | None) -> str:
    return f"CPU {w['cpu']} of {w['cpus']}, `{w['cgroup']}`" if w else "n/a"


def _row(boot: int, r: dict) -> str:
    frames, misses = (int(w) for w in r["player"].split()[1:4:2])
    eth1 = (r.get("before") or {}).get("eth1_thread")
    e = eth1_pct(r)
    e_cell = "n/a" if e is None else f"{e:.1f}"
    return (f"| {boot} | {r['phase']} | {r['order']} | {misses} of {frames} | "
            f"{share_pct(r):.1f} | {r['mbit_s']:.1f} | {r['receiver'].split()[1]} | "
            f"{_where((r.get('before') or {}).get('nic_thread'))} | "
            f"{_where(r.get('player_at_start'))} | "
            f"{eth1['cpus'] if eth1 else 'n/a'} | {e_cell} |")


def phases_of(rec: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rec["result"]["rows"]:
        out.setdefault(r["phase"], []).append(r)
    return out


def verdicts(recs: list[dict]) -> dict[str, list[str]]:
    """Per phase, the regime each boot was in."""
    out: dict[str, list[str]] = {}
    for rec in recs:
        for phase, rows in phases_of(rec).items():
            out.setdefault(phase, []).append(regime(rows))
    return out


def _suite_lines(suite: dict) -> list[str]:
    out = ["The two regimes as the VM suite's seeds boot saw them (2 guest-seconds of flood, "
           "player above the NIC thread; data/player-fifo-suite-boots-*.json):", "",
           "| suite boot | player | misses | NIC thread CPU % | NIC thread Mbit/s | "
           "datagrams read | regime |", "|---|---|---:|---:|---:|---:|---|"]
    for b in suite["boots"]:
        for r in b["rows"]:
            out.append(f"| {b['finished']} | {r['order']} | {r['player'].split()[3]} of "
                       f"{r['player'].split()[1]} | {share_pct(r):.1f} | {r['mbit_s']:.1f} | "
                       f"{r['receiver'].split()[1]} | "
                       f"{regime(b['rows']) if r['order'] == 'above' else ''} |")
    a, b = (boot["rows"] for boot in suite["boots"])
    bad = shapes.regimes_agree(a, b)
    out += ["", "The shape `shapes.regimes_agree` (misses within "
            f"{shapes.REGIME_MISS_PTS:g} points of the frames, NIC thread within "
            f"{shapes.REGIME_MBIT_S:g} Mbit/s) rejects this pair: " + "; ".join(bad) + ".", ""]
    return out


def section(recs: list[dict], suite: dict | None) -> list[str]:
    p = recs[0]["params"]
    out = ["## Experiment 2's two regimes: before any irqres action and after its cycles", "",
           f"Experiment 2 ({p['work_ns'] / 1e6:g} ms of work every {p['period_ns'] / 1e6:g} ms, "
           f"{p['size']}-byte datagrams every {p['flood_period_ns'] / 1000:g} µs for "
           f"{p['seconds']} guest-seconds, {p['runs']} run per order and phase) in one boot "
           f"per record, in the phases: "
           + "; ".join(f"*{k}*: {v}" for k, v in PHASE_WORDS.items()) + ". The player's "
           "CPU and cgroup are read as it starts, the NIC thread's and the eth1 thread's "
           "CPUs before the row; *eth1 thread* is the IRQ thread of the sender's NIC "
           "(SCHED_FIFO 90), its CPUs and its CPU time over the row. *Regime*: with the "
           f"player above, the NIC thread *starved* (under {STARVED_PCT:g} % of the CPU) or "
           "*shares* the CPU the player leaves.", ""]
    for i, rec in enumerate(recs, 1):
        out += [f"Boot {i}: " + provenance(rec)[0], provenance(rec)[1], ""]
        diffs = rec["result"]["fingerprint_diffs"]
        out.append("Fingerprint against the one before any apply: "
                   + "; ".join(f"{k}: {'; '.join(v) if v else 'identical'}"
                               for k, v in diffs.items()) + ".")
        for step, what in rec["result"].get("controls", {}).get("suite order", {}).items():
            out.append(f"Suite order, {step}: eth1 thread on {what['eth1_thread']['cpus']}.")
        out.append("")
    out += ["| boot | phase | player | misses | NIC thread CPU % | NIC thread Mbit/s | "
            "datagrams read | NIC thread | player | eth1 thread CPUs | eth1 thread CPU % |",
            "|---:|---|---|---:|---:|---:|---:|---|---|---|---:|"]
    for i, rec in enumerate(recs, 1):
        out += [_row(i, r) for r in rec["result"]["rows"]]
    out += ["", "| phase | regime per boot | player above: misses | NIC thread CPU % | "
            "player below: misses |", "|---|---|---:|---:|---:|"]
    v = verdicts(recs)
    for phase in PHASES:
        rows = [r for rec in recs for r in phases_of(rec).get(phase, [])]
        if not rows:
            continue
        above = [r for r in rows if r["order"] == "above"]
        below = [r for r in rows if r["order"] == "below"]
        out.append(f"| {phase} | {', '.join(v[phase])} | "
                   f"{spread([int(r['player'].split()[3]) for r in above])} | "
                   f"{spread([round(share_pct(r), 1) for r in above])} | "
                   f"{spread([int(r['player'].split()[3]) for r in below])} |")
    out.append("")
    for rec in recs:
        ph = phases_of(rec)
        bad = shapes.regimes_agree(ph["before"], ph["after cycles"])
        out.append(f"- {rec['date']}: before against after cycles: "
                   + ("agree" if not bad else "; ".join(bad)) + ".")
    out.append("")
    if suite:
        out += _suite_lines(suite)
    return out
