"""Experiment 2's two regimes (player_fifo.py --regimes): the RESULTS.md section, from the
boots' raw data (bench/seeds/data/player-fifo-regimes-*.json) and the VM suite's two boots
that showed the regimes (data/player-fifo-suite-boots-*.json).

Each boot runs experiment 2 before irqres has done anything, after the apply/restore
cycles of the VM suite's seeds boot, after the suite's order of events, and with the
sender's IRQ thread pinned again (or, with --at-boot, in the VM suite's own order). A
phase's regime is read off its row with the player above the NIC thread (see LATE_PCT).
"""

from __future__ import annotations

import shapes
from report import provenance
from stats import spread

# A phase's regime, read off the row with the player above the NIC thread: *starved*
# when the player misses more than LATE_PCT % of its frames and the NIC thread takes
# less than STARVED_MBIT_S; *on time* when the player misses at most ON_TIME_PCT %.
LATE_PCT = 50.0
STARVED_MBIT_S = 10.0
ON_TIME_PCT = 10.0
PHASES = ("before", "after cycles", "suite order", "eth1 thread pinned",
          "after the experiments", "tracing reset", "boot apply restored",
          "after the experiments, restore fixed", "boot apply restored, restore fixed")
PHASE_WORDS = {
    "before": "before any irqres action",
    "after cycles": "after the seeds boot's apply/restore cycles",
    "suite order": "after the suite's order of events",
    "eth1 thread pinned": "the sender's IRQ thread pinned to the sender's CPU again",
    "after the experiments": "after the VM suite's latency and tools experiments themselves",
    "tracing reset": "then with the tracing they leave (tracing_on 1) reset",
    "boot apply restored": "irqresd enabled at boot, as in the VM suite, its apply restored",
    "restore fixed": "(suffix) boots whose irqresd gives an IRQ thread back the CPUs of its "
                     "IRQ that were all the root had",
}
FIXED = " restore fixed"


def phase(rec: dict, row: dict) -> str:
    """The row's phase, marked for the boots (tag at-boot-fixed) whose restore has the fix."""
    return row["phase"] + ("," + FIXED if "-at-boot-fixed-" in rec.get("path", "") else "")


def share_pct(row: dict, who: str = "nic_thread") -> float:
    return 100.0 * (row["cpu_ns"].get(who) or 0) / max(row["span_ns"], 1)


def eth1_pct(row: dict) -> float | None:
    """The sender's NIC's IRQ thread's CPU time over the row (% of the flood's span)."""
    a, b = (row.get(k, {}).get("eth1_thread") for k in ("before", "after"))
    if not a or not b:
        return None
    return 100.0 * (b["run_ns"] - a["run_ns"]) / max(row["span_ns"], 1)


def miss_pct(row: dict) -> float:
    frames, misses = (int(w) for w in row["player"].split()[1:4:2])
    return 100.0 * misses / max(frames, 1)


def regime(rows: list[dict]) -> str:
    """The regime of a phase, from its rows with the player above the NIC thread."""
    above = [r for r in rows if r["order"] == "above"]
    if not above:
        return "?"
    if all(miss_pct(r) > LATE_PCT and r["mbit_s"] < STARVED_MBIT_S for r in above):
        return "starved"
    if all(miss_pct(r) <= ON_TIME_PCT for r in above):
        return "on time"
    return "between"


def _eth1_cpus(row: dict) -> str:
    return ((row.get("before") or {}).get("eth1_thread") or {}).get("cpus") or "n/a"


def _where(w: dict | None) -> str:
    return f"CPU {w['cpu']} of {w['cpus']}, `{w['cgroup']}`" if w else "n/a"


def _row(boot: int, rec: dict, r: dict) -> str:
    frames, misses = (int(w) for w in r["player"].split()[1:4:2])
    eth1 = (r.get("before") or {}).get("eth1_thread")
    e = eth1_pct(r)
    e_cell = "n/a" if e is None else f"{e:.1f}"
    return (f"| {boot} | {phase(rec, r)} | {r['order']} | {misses} of {frames} | "
            f"{share_pct(r):.1f} | {r['mbit_s']:.1f} | {r['receiver'].split()[1]} | "
            f"{_where((r.get('before') or {}).get('nic_thread'))} | "
            f"{_where(r.get('player_at_start'))} | "
            f"{eth1['cpus'] if eth1 else 'n/a'} | {e_cell} | {sum(r.get('irq_delta', []))} |")


def phases_of(rec: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rec["result"]["rows"]:
        out.setdefault(phase(rec, r), []).append(r)
    return out


def verdicts(recs: list[dict]) -> dict[str, list[str]]:
    """Per phase, the regime each boot was in."""
    out: dict[str, list[str]] = {}
    for rec in recs:
        for name, rows in phases_of(rec).items():
            out.setdefault(name, []).append(regime(rows))
    return out


def below_lines(recs: list[dict]) -> list[str]:
    """With the player below the NIC thread, its misses against the NIC thread's CPU share
    over every row: where the receive path ran."""
    rows = [r for rec in recs for r in rec["result"]["rows"] if r["order"] == "below"]
    hi = [r for r in rows if miss_pct(r) > LATE_PCT]
    lo = [r for r in rows if miss_pct(r) <= LATE_PCT]
    if not hi or not lo:
        return []
    return [f"With the player below the NIC thread, the rows split in two whatever the phase: "
            f"{len(hi)} rows where the player missed {spread([round(miss_pct(r)) for r in hi])} "
            f"% of its frames had the NIC thread at {spread([round(share_pct(r), 1) for r in hi])} "
            f"% of the CPU and {spread([sum(r.get('irq_delta', [])) for r in hi])} eth0 "
            f"interrupts; {len(lo)} rows where it missed "
            f"{spread([round(miss_pct(r)) for r in lo])} % had the NIC thread at "
            f"{spread([round(share_pct(r), 1) for r in lo])} % and "
            f"{spread([sum(r.get('irq_delta', [])) for r in lo])} interrupts, ksoftirqd at "
            f"{spread([round(share_pct(r, 'ksoftirqd'), 1) for r in lo])} % (against "
            f"{spread([round(share_pct(r, 'ksoftirqd'), 1) for r in hi])} %).", ""]


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
           "(SCHED_FIFO 90), its CPUs and its CPU time over the row; *eth0 IRQs* the NIC's "
           "interrupts on its CPU over the row. *Regime*, from the row with the player "
           f"above the NIC thread: *starved* (the player misses more than {LATE_PCT:g} % of "
           f"its frames and the NIC thread takes under {STARVED_MBIT_S:g} Mbit/s: the VM "
           f"suite's unexplained regime), *on time* (the player misses at most "
           f"{ON_TIME_PCT:g} %), else *between*.", ""]
    for i, rec in enumerate(recs, 1):
        out += [f"Boot {i}: " + provenance(rec)[0], provenance(rec)[1], ""]
        diffs = rec["result"]["fingerprint_diffs"]
        setup_eth1 = rec["result"]["setup"]["eth1_thread"]["cpus"]
        out.append("Fingerprint against the one before any apply: "
                   + ("; ".join(f"{k}: {'; '.join(v) if v else 'identical'}"
                                for k, v in diffs.items()) if diffs else
                      "none taken (irqresd applied the profile at boot)")
                   + f". The sender's IRQ thread on {setup_eth1} after hub setup.")
        for step, what in rec["result"].get("controls", {}).get("suite order", {}).items():
            out.append(f"Suite order, {step}: eth1 thread on {what['eth1_thread']['cpus']}.")
        out.append("")
    out += ["| boot | phase | player | misses | NIC thread CPU % | NIC thread Mbit/s | "
            "datagrams read | NIC thread | player | eth1 thread CPUs | eth1 thread CPU % | "
            "eth0 IRQs |", "|---:|---|---|---:|---:|---:|---:|---|---|---|---:|---:|"]
    for i, rec in enumerate(recs, 1):
        out += [_row(i, rec, r) for r in rec["result"]["rows"]]
    out += ["", "| phase | regime per boot | player above: misses | NIC thread CPU % | "
            "player below: misses | eth1 thread CPUs | eth1 thread CPU % |",
            "|---|---|---:|---:|---:|---|---:|"]
    v = verdicts(recs)
    for name in PHASES:
        rows = [r for rec in recs for r in phases_of(rec).get(name, [])]
        if not rows:
            continue
        above = [r for r in rows if r["order"] == "above"]
        below = [r for r in rows if r["order"] == "below"]
        out.append(f"| {name} | {', '.join(v[name])} | "
                   f"{spread([int(r['player'].split()[3]) for r in above])} | "
                   f"{spread([round(share_pct(r), 1) for r in above])} | "
                   f"{spread([int(r['player'].split()[3]) for r in below])} | "
                   f"{', '.join(sorted({_eth1_cpus(r) for r in rows}))} | "
                   f"{spread([round(eth1_pct(r) or 0, 1) for r in rows])} |")
    out.append("")
    for i, rec in enumerate(recs, 1):
        ph = phases_of(rec)
        if "before" in ph and "after cycles" in ph:
            bad = shapes.regimes_agree(ph["before"], ph["after cycles"])
            out.append(f"- Boot {i}: before against after cycles "
                       f"(`shapes.regimes_agree`): " + ("agree" if not bad else "; ".join(bad))
                       + ".")
    out += ["", *below_lines(recs)]
    if suite:
        out += _suite_lines(suite)
    return out
