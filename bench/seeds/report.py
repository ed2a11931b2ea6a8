"""Tables and figures of the seeds' experiments from their raw data (bench/seeds/data/).

    python3 bench/seeds/report.py all                 # RESULTS.md and the PNGs
    python3 bench/seeds/report.py latency FILE...     # one section, printed

Each experiment script saves one JSON record per boot; ``all`` takes the newest record
of each experiment (every latency record, for the testbed comparison), the other forms
the records named. Every section carries its date, commit, kernel, testbed, command.
The prose around the tables (RESULTS.md.head, RESULTS.md.tail) takes its numbers from the
same records through ``{{field}}``s (reading.py); tests/python/test_seeds_report.py checks
that the committed RESULTS.md is what ``all`` makes. What was seen without kept data is in
OBSERVATIONS.md, which nothing here rebuilds.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import re
import statistics
import sys
from pathlib import Path

import latency_work_report
import reading
import tools_spread
from stats import grid_summary, spread, spread_bounded, summary

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
LABELS = {"fifo50": "SCHED_FIFO 50 (default)", "reserved": "reserved"}

def provenance(rec: dict) -> list[str]:
    return [f"Date {rec['date']}, commit `{rec['commit']}`, guest kernel {rec['kernel']}, "
            f"testbed: {rec['testbed']}; {rec['wall_s']:.0f} s wall, host load average "
            f"{rec['loadavg_before'][0]:.1f} → {rec['loadavg_after'][0]:.1f}.",
            f"Command (root, top of the checkout): `{rec['command']}`"]

def latency_rows(rec: dict) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {k: [] for k in LABELS}
    for r in rec["result"]["results"]:
        s = summary(r["hist"])
        s["run"] = r["run"]
        s["received"] = r["receiver"]
        s["sent"] = r["sender"]
        s["nic_packets"] = (r.get("rx") or {}).get("rx_packets")
        rows[r["label"]].append(s)
    return rows

GRID_WORDS = (
    "Each table first over the intended cycle grid: every cycle cyclictest should have run, "
    "from its start to its last wake-up, one per interval. cyclictest skips the cycles it "
    "missed, so a wake-up L µs late stands for itself and for the cycles due before it, each "
    "late until that wake-up (L minus one interval, minus two, ...). Wake-ups later than the "
    "histogram's {hist} µs are known only by their number, the maximum and (through "
    "cyclictest's average) their sum: their cycles below {hist} µs are counted to within "
    "one interval, the rest only as later than {hist} µs (a percentile among them shows as "
    "\"> {hist}\"). Then over the wake-ups cyclictest made (its own histogram), which "
    "leaves the missed cycles, the worst ones, out.")


def grid_rows(rec: dict) -> dict[str, list[dict]]:
    """Per label, each run's percentiles over the intended cycle grid."""
    p = rec["params"]
    rows: dict[str, list[dict]] = {k: [] for k in LABELS}
    for r in rec["result"]["results"]:
        rows[r["label"]].append(grid_summary(r["hist"], p["interval_us"], p["hist_us"]))
    return rows


def _grid_table(rec: dict) -> list[str]:
    p = rec["params"]
    out = ["| NIC thread (over the cycle grid) | runs | cycles of the grid | cycles run | "
           "p50 | p99 | p99.9 | max |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, rs in grid_rows(rec).items():
        if rs:
            out.append(f"| {LABELS[label]} | {len(rs)} | {spread([r['cycles'] for r in rs])} | "
                       f"{spread([r['ran'] for r in rs])} | "
                       + " | ".join(spread_bounded([r[k] for r in rs], p["hist_us"])
                                    for k in ("p50", "p99", "p99.9", "max")) + " |")
    return [*out, ""]


def latency_section(recs: list[dict], png: Path, draw: bool = True,
                    newer: list[str] | None = None) -> list[str]:
    """Experiment 6's tables of ``recs``; with ``newer`` (the boots since the restore fix,
    latency_work_report), those first and ``recs`` below them, labelled as recorded with
    the restore defect."""
    rec = recs[0]
    p = rec["params"]
    q, t = (x / 1e6 for x in p["reserved"])
    seconds = "" if newer else f"{p['seconds']} guest-seconds per measurement, "
    out = ["## Experiment 6: latency of a real-time task on the NIC's CPU under a flood", "",
           f"cyclictest at SCHED_FIFO {p['priority']}, {p['interval_us'] // 1000} ms interval, "
           f"on the CPU of irq/11-eth0, {seconds}while "
           f"a sender on the other vCPU sends {p['size']}-byte datagrams every "
           f"{p['flood_period_ns'] / 1000:g} µs (guest time) to eth0. NIC thread at the "
           f"kernel's SCHED_FIFO 50 vs reserved by irqresd ({q:g} ms / {t:g} ms). "
           "Latencies in µs of guest time; each cell: median [min..max] over the runs. "
           + GRID_WORDS.format(hist=p["hist_us"]), ""]
    if newer:
        out += [*newer, "### The earlier boots, recorded with the restore defect", "",
                latency_work_report.DEFECT_WORDS.format(seconds=p["seconds"], dates=", ".join(
                    sorted({r["date"][:10] for r in recs})), commits=", ".join(
                        f"`{r['commit']}`" for r in recs)), ""]
    for rec in recs:
        rows = latency_rows(rec)
        out += [*provenance(rec), "", *_grid_table(rec)]
        expect = (p["seconds"] + 1) * 1_000_000 // p["interval_us"]
        sent = p["seconds"] * 1_000_000_000 // p["flood_period_ns"]
        out += [f"| NIC thread (over the wake-ups) | runs | cyclictest samples (of ~{expect}) "
                "| p50 | p99 | p99.9 | "
                f"max | datagrams the NIC thread took (of {sent}) |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for label, rs in rows.items():
            if not rs:
                continue
            cells = [spread([r[k] for r in rs])
                     for k in ("samples", "p50", "p99", "p99.9", "max")]
            pk = [r["nic_packets"] for r in rs if r["nic_packets"] is not None]
            out.append(f"| {LABELS[label]} | {len(rs)} | " + " | ".join(cells)
                       + f" | {spread(pk) if pk else 'not recorded'} |")
        out += ["", "Every run (µs): " + "; ".join(
            f"{label} run {r['run']}: p99 {r['p99']}, max {r['max']}"
            for label, rs in rows.items() for r in rs), ""]
    if draw:
        plot_latency(recs, png)
    out += [f"![latency histograms]({png.name})", ""]
    return out

def plot_latency(recs: list[dict], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(recs), figsize=(6 * len(recs), 4), squeeze=False)
    for ax, rec in zip(axes[0], recs, strict=True):
        for r in rec["result"]["results"]:
            b = {int(k): v for k, v in r["hist"]["buckets"].items()}
            xs = sorted(b)
            total = sum(b.values()) + (r["hist"].get("overflows") or 0)
            # survival function: the share of samples above each latency
            above, left = [], total
            for x in xs:
                left -= b[x]
                above.append(max(left, 0.5) / total)
            color = "tab:red" if r["label"] == "fifo50" else "tab:blue"
            ax.step(xs, above, where="post", color=color, alpha=0.7,
                    label=f"{LABELS[r['label']]} (run {r['run']})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("cyclictest latency (µs, guest time)")
        ax.set_ylabel("share of samples above")
        ax.set_title(f"{rec['testbed_key']}, nice {rec['nice']}: {rec['date']}", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)

TOOLS_QUANTITIES = [
    ("send", "Sender: inter-packet time (its CLOCK_MONOTONIC after each sendto)"),
    ("recv", "Receiver: inter-packet time (kernel receive timestamps, SO_TIMESTAMPNS)"),
    ("irq_ia", "NIC IRQ thread: inter-arrival time of all its activations (`irqres analyze`)"),
    ("irq_exec", "NIC IRQ thread: execution time of all its activations (`irqres analyze`)"),
    ("rx_ia", "NIC IRQ thread: inter-arrival time of the activations that woke the receiver"),
    ("rx_exec", "NIC IRQ thread: execution time of the activations that woke the receiver"),
]


def _tools_stat(row: dict, q: str) -> dict:
    if q in ("send", "recv"):
        return row[q]
    src = row.get("irq_rx", {}) if q.startswith("rx_") else row["irq"]
    return src.get("interarrival" if q.endswith("_ia") else "exec", {})


def tools_section(rec: dict, png: Path, draw: bool = True) -> list[str]:
    rows = rec["result"]["rows"]
    periods = sorted({r["period_ns"] for r in rows})
    out = ["## Experiment 1: the statistical tools (rows T1..T100)", "",
           "A sender in the guest's second network namespace at a fixed period (SCHED_FIFO "
           f"90, absolute clock_nanosleep releases) sends {rec['params']['size']}-byte "
           "datagrams to eth0; the "
           "receiver's kernel timestamps and a trace-cmd trace of the NIC thread cover the "
           "same datagrams. Each cell is the median over the runs of the per-run value, in "
           "µs of guest time; *mean spread* is the range of the per-run means.", "",
           *provenance(rec), ""]
    for q, title in TOOLS_QUANTITIES:
        out += [f"### {title}", "", "| row | Average | Std Dev | Max | Min | mean spread "
                "over runs | mean vs period |", "|---|---:|---:|---:|---:|---:|---:|"]
        for per in periods:
            rs = [_tools_stat(r, q) for r in rows if r["period_ns"] == per]
            rs = [x for x in rs if x.get("count")]
            if not rs:
                out.append(f"| T{per // 1_000_000} | no data | | | | | |")
                continue
            med = {k: statistics.median(x[k] for x in rs) / 1000
                   for k in ("mean_ns", "std_ns", "max_ns", "min_ns")}
            means = [x["mean_ns"] / 1000 for x in rs]
            dev = max(abs(m * 1000 - per) / per for m in means)
            vs = "" if q.endswith("exec") else f"{dev:.2%} worst"
            out.append(f"| T{per // 1_000_000} | {med['mean_ns']:.1f} | {med['std_ns']:.1f} | "
                       f"{med['max_ns']:.1f} | {med['min_ns']:.1f} | "
                       f"{min(means):.1f}..{max(means):.1f} | {vs} |")
        out.append("")
    extra = {per: [_watchdog_extra(r) for r in rows if r["period_ns"] == per
                   and "of" in r.get("irq_rx", {})] for per in periods}
    more = [f"T{per // 1_000_000}" for per in periods for r in rows if r["period_ns"] == per
            and "of" in r.get("irq_rx", {}) and _watchdog_extra(r) > _watchdog_budget(r)]
    out += [*spread_tables(rows),
            "All activations of the thread include some that woke no receiver (per row and "
            "run: " + "; ".join(f"T{per // 1_000_000}: {', '.join(map(str, v))}"
                                for per, v in extra.items() if v)
            + "): the e1000 driver's watchdog writes the NIC's interrupt-cause-set register "
            "every 2 s (so that the ring is refilled even without traffic), which raises an "
            "interrupt of its own; "
            + (f"more than that in {', '.join(sorted(set(more), key=more.index))}, for a "
               "cause not examined here. " if more else "no row has more than that. ")
            + _watchdog_pull(rows, periods)
            + "; the activations that woke the receiver are the datagrams' own.", ""]
    if draw:
        plot_tools(rows, periods, png)
    out += [f"![inter-arrival means vs period]({png.name})", ""]
    return out


def _us(ns: int | None) -> str:
    return "" if ns is None else f"{ns / 1000:.1f}"


def _spread_cell(s: dict) -> str:
    return f"{_us(s['std_ns'])} [{_us(s['min_ns'])}..{_us(s['max_ns'])}]" if s.get("count") \
        else "no data"


def spread_tables(rows: list[dict]) -> list[str]:
    """Experiment 1 judged per row and run on the spread and distribution of the
    per-datagram series (tools_spread.py), and the goal's verdict over the runs."""
    js = [(r, tools_spread.judge(r)) for r in rows if "series" in r]
    if not js:
        return ["The per-datagram series were not kept in this run: no spread judgement.", ""]
    out = ["### Spread per row and run: std [min..max] of the inter-arrival, µs", "",
           "| row | run | sender | receiver | NIC thread, activations that woke the receiver "
           "| NIC thread, all activations |", "|---|---:|---:|---:|---:|---:|"]
    for r, j in js:
        out.append(f"| T{r['period_ns'] // 1_000_000} | {r['run']} | "
                   + " | ".join(_spread_cell(j["stats"][k]) for k in
                                ("send", "recv", "irq_rx", "irq")) + " |")
    out += ["", "### Distribution and datagrams per row and run", "",
            "W1 is the Wasserstein-1 distance (µs) and KS the Kolmogorov-Smirnov statistic "
            "between the NIC thread's inter-arrivals (its activations that woke the receiver; "
            "*all*: every activation) and the sender's or the receiver's. *Merged*: "
            "datagrams inside the span of those activations that had no activation of their "
            "own; *untraced*: received datagrams at the trace's edges, outside that span.", "",
            "| row | run | sent | received | woke | lost | merged | untraced | std thread / "
            "receiver | W1 vs sender | W1 vs receiver | W1 all vs sender | KS vs sender | "
            "KS vs receiver | goal |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r, j in js:
        c, s = j["counts"], j["stats"]
        ratio = (f"{s['irq_rx']['std_ns'] / s['recv']['std_ns']:.2f}"
                 if s["irq_rx"].get("count") and s["recv"].get("std_ns") else "")
        out.append(f"| T{r['period_ns'] // 1_000_000} | {r['run']} | {c['sent']} | "
                   f"{c['received']} | {c['woke']} | {c['lost']} | {c['merged']} | "
                   f"{c['untraced']} | {ratio} | {_us(j['vs_send']['w1_ns'])} | "
                   f"{_us(j['vs_recv']['w1_ns'])} | {_us(j['all_vs_send']['w1_ns'])} | "
                   f"{j['vs_send']['ks']:.2f} | {j['vs_recv']['ks']:.2f} | "
                   + ("met" if not j["missed"] else "missed: " + "; ".join(j["missed"]))
                   + " |")
    runs = sorted({r["run"] for r, _ in js})
    periods = sorted({r["period_ns"] for r, _ in js})
    met = [p for p in periods if all(not j["missed"] for r, j in js if r["period_ns"] == p)]
    out += ["", f"Goal, judged per run ({len(runs)} runs): no datagram lost or merged, the "
            f"NIC thread's inter-arrival std at most {tools_spread.STD_RATIO:g}x the receiver's, "
            f"and its inter-arrival distribution within {tools_spread.W1_FRACTION:.0%} of the "
            "period (Wasserstein-1) of the sender's; the distance to the receiver's is reported, "
            "not judged (tools_spread.py says why). Met in every run in "
            + (", ".join(f"T{p // 1_000_000}" for p in met) or "no row")
            + "; missed in at least one run in "
            + (", ".join(f"T{p // 1_000_000}" for p in periods if p not in met) or "no row")
            + f" ({sum(1 for _, j in js if not j['missed'])} of {len(js)} row-runs met). "
            "The mean within 1 % of the period is no criterion: the mean of successive gaps "
            "is (last - first)/(n - 1), the period whenever nothing is lost or merged.", ""]
    return out


def tools_values(rec: dict) -> dict[str, str]:
    """The numbers RESULTS.md.tail's prose quotes on experiment 1."""
    rows = [r for r in rec["result"]["rows"] if "series" in r]
    js = [(r, tools_spread.judge(r)) for r in rows]
    periods = sorted({r["period_ns"] for r in rows})
    met = [p for p in periods if all(not j["missed"] for r, j in js if r["period_ns"] == p)]
    t1 = [(r, j) for r, j in js if r["period_ns"] == periods[0]]
    execs = [statistics.median(r["irq_rx"]["exec"]["mean_ns"] for r in rows
                               if r["period_ns"] == p) / 1000 for p in periods]
    lo, hi = min(execs), max(execs)
    ns = 2 ** rec["shift"]

    def rng(a: float, b: float, fmt: str = "{:,.0f}") -> str:
        return fmt.format(a) if fmt.format(a) == fmt.format(b) else \
            f"{fmt.format(a)}\N{EN DASH}{fmt.format(b)}"

    return {
        "tools_lost": str(sum(j["counts"]["lost"] for _, j in js)),
        "tools_met": ", ".join(f"T{p // 1_000_000}" for p in met) or "no row",
        "tools_missed": ", ".join(f"T{p // 1_000_000}" for p in periods if p not in met)
        or "no row",
        "tools_met_count": str(sum(1 for _, j in js if not j["missed"])),
        "tools_row_runs": str(len(js)),
        "tools_merged_t1": ", ".join(str(j["counts"]["merged"]) for _, j in t1),
        "tools_w1_send_pct": f"{max(j['vs_send']['w1_ns'] / r['period_ns'] for r, j in js):.2%}",
        "tools_miss_kinds": "; ".join(sorted({m.split(" ")[0] if m.startswith(("lost", "merged"))
                                              else m.split(" ns")[0].rsplit(" ", 1)[0]
                                              for _, j in js for m in j["missed"]})) or "none",
        "tools_exec_us": rng(lo, hi),
        "tools_instructions": rng(round(lo * 1000 / ns, -3), round(hi * 1000 / ns, -3)),
        "tools_ns_per_insn": str(ns),
        "tools_hw_us": rng(lo * 1000 / ns / 2000, hi * 1000 / ns / 1500),
        "tools_recv_std_t1": ", ".join(f"{j['stats']['recv']['std_ns'] / 1000:.0f}"
                                       for _, j in t1),
    }


def _watchdog_budget(row: dict) -> int:
    """The watchdog's interrupts in a row's span (one per 2 s, one more at an edge)."""
    return row["count"] * row["period_ns"] // 2_000_000_000 + 1


def _watchdog_extra(row: dict) -> int:
    """Activations of the NIC thread in a row that did not wake the receiver."""
    return row["irq_rx"]["of"] - row["irq_rx"]["activations"]


def _watchdog_pull(rows: list[dict], periods: list[int]) -> str:
    """How far the extra activations pull the mean of all activations below the period,
    per row where it is more than 1 % (medians over the runs)."""
    parts = []
    for per in periods:
        rs = [r for r in rows if r["period_ns"] == per and r["irq"].get("interarrival")
              and "of" in r.get("irq_rx", {})]
        if not rs:
            continue
        pull = statistics.median((per - r["irq"]["interarrival"]["mean_ns"]) / per for r in rs)
        if pull < 0.01:
            continue
        span = rs[0]["count"] * per / 1e9
        parts.append(f"T{per // 1_000_000}: {statistics.median(map(_watchdog_extra, rs)):g} "
                     f"activations more than datagrams over its {span:g} s, the mean of all "
                     f"activations {100 * pull:.1f} % below the period")
    return ("In the rows where that moves the mean of all activations by more than 1 % — "
            + "; ".join(parts) if parts else
            "In no row does that move the mean of all activations by more than 1 %")


def plot_tools(rows: list[dict], periods: list[int], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for i, (q, title) in enumerate(TOOLS_QUANTITIES[:3] + TOOLS_QUANTITIES[4:5]):
        for per in periods:
            ms = [_tools_stat(r, q).get("mean_ns") for r in rows if r["period_ns"] == per]
            ms = [m for m in ms if m]
            a.plot([per / 1e6 * (0.94 + 0.06 * i)] * len(ms),
                   [100 * (m - per) / per for m in ms], "o", color=f"C{i}",
                   label=title.split("(")[0][:60] if per == periods[0] else None)
        sd = [statistics.median(_tools_stat(r, q).get("std_ns", 0) for r in rows
                                if r["period_ns"] == per) / 1000 for per in periods]
        b.plot([p / 1e6 for p in periods], sd, "o-", color=f"C{i}",
               label=title.split("(")[0][:60])
    a.axhspan(-1, 1, color="green", alpha=0.1, label="±1 %")
    a.set_xscale("log")
    a.set_xlabel("sender period (ms)")
    a.set_ylabel("mean inter-arrival minus period (% of period)")
    a.legend(fontsize=7)
    a.grid(True, alpha=0.3)
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("sender period (ms)")
    b.set_ylabel("std dev of inter-arrival (µs)")
    b.legend(fontsize=7)
    b.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def _misses(r: dict) -> tuple[int, int]:
    w = r["player"].split()  # "frames N misses M"
    return int(w[1]), int(w[3])


def _count(text: str) -> int:
    """The number in a seedload line: "sent N failed M" -> N, "received N" -> N."""
    return int(text.split()[1])


def app_mbit_s(r: dict, size: int) -> float:
    """What the receiving application read: its datagrams' payload over the flood's span
    (guest time), in Mbit/s."""
    return _count(r["receiver"]) * size * 8 * 1000 / r["span_ns"]


def offered_mbit_s(r: dict, size: int) -> float:
    """The load the sender achieved: its datagrams' payload over the same span."""
    return _count(r["sender"]) * size * 8 * 1000 / r["span_ns"]


def _load_cells(rs: list[dict], size: int) -> str:
    """Offered load achieved, the application's throughput and its share of the offered,
    the NIC thread's throughput, and the datagrams the receiver read of those sent: table
    cells, median [min..max]."""
    share = [round(100 * app_mbit_s(r, size) / offered_mbit_s(r, size), 1) for r in rs]
    return (f"{spread([round(offered_mbit_s(r, size), 1) for r in rs])} | "
            f"{spread([round(app_mbit_s(r, size), 1) for r in rs])} | "
            f"{spread(share)} % | "
            f"{spread([round(r['mbit_s'], 1) for r in rs])} | "
            f"{spread([_count(r['receiver']) for r in rs])} of "
            f"{spread([_count(r['sender']) for r in rs])}")


THROUGHPUT_WORDS = (
    "*Offered* is the load the sender achieved: its datagrams' payload over the flood's "
    "span in guest time (the sender's releases are absolute, but a flood of {seconds} "
    "guest-seconds lasts longer when the sender's vCPU is held up, so the rows did not "
    "see the same load). *Application* is what the receiver read (its datagrams' payload "
    "over the same span; it reads until 2 s after the last datagram); *of offered* is the "
    "application's over the offered, per run, which compares rows whose offered load "
    "differs; *NIC thread* is what "
    "the NIC thread took off the ring (eth0 rx_bytes over the span, headers included).")


def player_fifo_section(rec: dict, png: Path, draw: bool = True) -> list[str]:
    p = rec["params"]
    rows = rec["result"]["rows"]
    out = ["## Experiment 2: throughput vs latency with fixed priorities", "",
           f"The player ({p['work_ns'] / 1e6:g} ms of CPU work every {p['period_ns'] / 1e6:g} "
           f"ms, absolute releases) on the NIC's CPU; a sender on the other vCPU sends "
           f"{p['size']}-byte datagrams every {p['flood_period_ns'] / 1000:g} µs to eth0 for "
           f"{p['seconds']} guest-seconds. Median [min..max] over the runs. "
           + THROUGHPUT_WORDS.format(seconds=p["seconds"]), "",
           *provenance(rec), "",
           "| player vs NIC thread (SCHED_FIFO 50) | runs | offered (Mbit/s) | "
           "application (Mbit/s) | of offered | NIC thread (Mbit/s) | datagrams read (of sent) | "
           "player deadline misses | frames |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for order, title in (("above", "player above (FIFO 60)"), ("below", "player below (FIFO 40)")):
        rs = [r for r in rows if r["order"] == order]
        if not rs:
            continue
        out.append(f"| {title} | {len(rs)} | {_load_cells(rs, p['size'])} | "
                   f"{spread([_misses(r)[1] for r in rs])} | {_misses(rs[0])[0]} |")
    out.append("")
    if draw:
        _plot_player(rows, "order", p["size"], png)
    out += [f"![player and throughput]({png.name})", ""]
    return out


def player_dl_section(rec: dict, png: Path, draw: bool = True) -> list[str]:
    p = rec["params"]
    rows = rec["result"]["rows"]
    out = ["## Experiment 3: player and NIC thread both reserved through irqres", "",
           f"As experiment 2 ({p['work_ns'] / 1e6:g} ms of work every "
           f"{p['period_ns'] / 1e6:g} ms), with SCHED_DEADLINE reservations for both, given "
           "by irqresd from one profile (an `interface: eth0` target, a `task: comm: "
           "seedplayer` target). Median [min..max] over the runs. "
           + THROUGHPUT_WORDS.format(seconds=p["seconds"]), "",
           *provenance(rec), "",
           "| test | player (Q,T) ms | NIC (Q,T) ms | NIC Q/T | runs | offered (Mbit/s) | "
           "application (Mbit/s) | of offered | NIC thread (Mbit/s) | datagrams read (of sent) | "
           "player deadline misses | player policy seen | CPU share: NIC thread | "
           "CPU share: ksoftirqd |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for t in sorted({r["test"] for r in rows}):
        rs = [r for r in rows if r["test"] == t]
        r0 = rs[0]
        pol = {f"{(r.get('player_sched') or {}).get('policy')}" for r in rs}
        out.append(f"| Test{t} | ({r0['player_q'] / 1e6:g}, {p['period_ns'] / 1e6:g}) | "
                   f"({r0['nic_q'] / 1e6:g}, {p['nic_period_ns'] / 1e6:g}) | "
                   f"{r0['nic_q'] / p['nic_period_ns']:.0%} | {len(rs)} | "
                   f"{_load_cells(rs, p['size'])} | "
                   f"{spread([_misses(r)[1] for r in rs])} | {', '.join(sorted(pol))} | "
                   f"{_share(rs, 'nic_thread')} | {_share(rs, 'ksoftirqd')} |")
    out += ["", _share_vs_reservation(rows, p["nic_period_ns"]), ""]
    if draw:
        _plot_player(rows, "test", p["size"], png)
    out += [f"![player and throughput]({png.name})", ""]
    return out


def _share(rs: list[dict], who: str) -> str:
    """Median [min..max] of a thread's CPU time over the flood, in % (when recorded)."""
    v = [round(100 * r["cpu_ns"][who] / r["span_ns"], 1) for r in rs
         if (r.get("cpu_ns") or {}).get(who) is not None]
    return f"{spread(v)} %" if v else "not recorded"


def _share_vs_reservation(rows: list[dict], period_ns: int) -> str:
    """The NIC thread's measured CPU share against its Q/T, in percentage points."""
    gaps: dict[float, list[float]] = {}
    for r in rows:
        used = (r.get("cpu_ns") or {}).get("nic_thread")
        if used is not None:
            q = 100 * r["nic_q"] / period_ns
            gaps.setdefault(q, []).append(100 * used / r["span_ns"] - q)
    if not gaps:
        return "The NIC thread's CPU time was not recorded in this boot."
    lo = min(min(v) for v in gaps.values())
    hi = max(max(v) for v in gaps.values())
    return ("The NIC thread's measured CPU share minus its reservation's Q/T, in "
            "percentage points: "
            + "; ".join(f"{min(v):+.1f}..{max(v):+.1f} at {q:g} %"
                        for q, v in sorted(gaps.items()))
            + f" (every run: {lo:+.1f}..{hi:+.1f}).")


def _plot_player(rows: list[dict], key: str, size: int, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({r[key] for r in rows}, key=str)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    series = (("offered", lambda r: offered_mbit_s(r, size), "C7", -0.15),
              ("NIC thread", lambda r: r["mbit_s"], "C0", 0.0),
              ("application", lambda r: app_mbit_s(r, size), "C1", 0.15))
    for i, k in enumerate(keys):
        rs = [r for r in rows if r[key] == k]
        for name, get, color, dx in series:
            a.plot([i + dx] * len(rs), [get(r) for r in rs], "o", color=color,
                   label=name if i == 0 else None)
        b.plot([i] * len(rs), [_misses(r)[1] for r in rs], "o", color="C3")
    labels = [str(k) if key == "order" else f"Test{k}" for k in keys]
    a.set_xticks(range(len(keys)), labels)
    a.set_ylabel("Mbit/s (guest time)")
    a.legend(fontsize=7)
    a.grid(True, alpha=0.3)
    b.set_xticks(range(len(keys)), labels)
    b.set_ylabel("player deadline misses per run")
    b.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def disk_points(rec: dict) -> tuple[list[tuple[float, float]], list[dict]]:
    """(Q/T in %, reads per guest second) of every reserved measurement, and the rows of
    the unreserved baseline."""
    rows = rec["result"]["rows"]
    pts = [(100 * r["runtime_ns"] / r["period_ns"], r["iops"]) for r in rows
           if r["runtime_ns"] is not None]
    return pts, [r for r in rows if r["runtime_ns"] is None]


def _window(r: dict) -> int:
    """The interval (ns) a disk measurement's counters cover (older records: the span)."""
    return r.get("window_ns") or r["span_ns"]


def linear_fit(pts: list[tuple[float, float]], proportional: bool = False) -> dict:
    """Least squares y = a + b x (or y = b x): slope, intercept and R² (of that model)."""
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    lr = statistics.linear_regression(xs, ys, proportional=proportional)
    my = statistics.fmean(ys)
    ss_res = sum((y - lr.intercept - lr.slope * x) ** 2 for x, y in pts)
    ss_tot = sum((y - my) ** 2 for y in ys)
    return {"slope": lr.slope, "intercept": lr.intercept,
            "r2": 1 - ss_res / ss_tot if ss_tot else float("nan")}


def disk_monotone(rec: dict) -> dict:
    """Whether reads/s rise with Q/T: over the per-point medians, and within each run."""
    pts, _ = disk_points(rec)
    qts = sorted({q for q, _ in pts})
    med = [statistics.median(y for q, y in pts if q == x) for x in qts]
    runs = sorted({r["run"] for r in rec["result"]["rows"]})
    per_run = {}
    for run in runs:
        ys = [r["iops"] for r in sorted(rec["result"]["rows"], key=lambda r: r["runtime_ns"] or 0)
              if r["run"] == run and r["runtime_ns"] is not None]
        per_run[run] = all(b > a for a, b in itertools.pairwise(ys))
    return {"medians": all(b > a for a, b in itertools.pairwise(med)), "runs": per_run}


STARVED = 0.7  # a thread that used less of its reservation than this was not the bottleneck


def disk_starved(rec: dict) -> list[dict]:
    """Reserved measurements in which the IRQ thread used less than STARVED of its Q/T:
    the disk (QEMU, host time) did not keep completions waiting for it."""
    return [r for r in rec["result"]["rows"] if r["runtime_ns"] is not None
            and r["thread_cpu_ns"] / _window(r) < STARVED * r["runtime_ns"] / r["period_ns"]]


def disk_section(recs: list[dict], png: Path, others: list[dict] = (),
                 draw: bool = True) -> list[str]:
    """Experiment 4, one table per boot (``recs``, oldest first); the figure of the newest;
    ``others``: the same on plain TCG, for comparison."""
    rec = recs[-1]
    p = rec["params"]
    res = rec["result"]
    setup = res["setup"]
    period = p["period_ns"]
    hog = _hog_words(rec)
    readers = setup.get("reader_cpus", [setup["reader_cpu"]])
    queue = setup.get("queue")
    out = ["## Experiment 4: a disk's IRQ thread, throughput vs Q/T", "",
           f"A virtio-blk disk with one request queue ({setup['dev']}, IRQ {setup['irq']} "
           f"`{setup['action']}`, thread `{setup['thread']['comm']}` on CPU "
           f"{setup['irq_cpu']}"
           + (f"; block queue: scheduler {queue['scheduler']}, nomerges {queue['nomerges']}, "
              f"iostats {queue['iostats']}" if queue else "")
           + f"); a reader on each of CPUs {', '.join(map(str, readers))} (SCHED_FIFO 60) "
           f"keeps {p['depth']} O_DIRECT reads of {p['size']} bytes in flight (Linux AIO) for "
           f"{p['seconds']} guest-second(s) per measurement, {hog} (in the newest boot; "
           "each boot names its own). Every completion is "
           "made in the IRQ thread. The thread at the kernel's SCHED_FIFO 50, then reserved "
           f"by irqresd (an `irq: {setup['irq']}` target) at each Q/T with T = "
           f"{period / 1e6:g} ms. Reads per second of guest time, median [min..max] over "
           "the runs; *per 1 %* is reads/s divided by Q/T in percent (constant if "
           "proportional); the CPU shares are of the measurement's guest time.", ""]
    for r in recs:
        out += disk_table(r)
    if others:
        out += ["### The same experiment on plain TCG (guest time = host time)", ""]
        for r in others:
            out += disk_table(r)
    if draw:
        plot_disk(rec, png)
    out += [f"![disk throughput vs Q/T]({png.name})", ""]
    return out


def _hog_words(rec: dict) -> str:
    return {"reader": "a SCHED_IDLE busy loop on the first reader's vCPU",
            "readers": "a SCHED_IDLE busy loop on every reader's vCPU",
            "irq": "a SCHED_IDLE busy loop on the IRQ thread's vCPU",
            "none": "no busy loop"}[rec["result"].get("hog_cpu", "reader")]


def disk_table(rec: dict) -> list[str]:
    """One boot's table, its fits and its diagnosis."""
    rows = rec["result"]["rows"]
    period = rec["params"]["period_ns"]
    setup = rec["result"]["setup"]
    nread = len(setup.get("reader_cpus", [setup["reader_cpu"]]))
    pts, base = disk_points(rec)
    fit, prop = linear_fit(pts), linear_fit(pts, proportional=True)
    used = linear_fit([(100 * r["thread_cpu_ns"] / _window(r), r["iops"]) for r in rows
                       if r["runtime_ns"] is not None])
    mono = disk_monotone(rec)
    starved = disk_starved(rec)
    out = [*provenance(rec), "", f"This boot: {_hog_words(rec)}.", "",
           "| disk thread | Q/T | runs | reads/s | MiB/s | reads/s per 1 % of Q/T | "
           "IRQ thread's CPU share | readers' CPU (% of one CPU each) | interrupts/s |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def cells(rs: list[dict], qt: float | None) -> str:
        per = (spread([round(r["iops"] / qt) for r in rs]) if qt else "")
        cpu = spread([round(100 * r["thread_cpu_ns"] / _window(r), 1) for r in rs]) + " %"
        rd = [round(100 * r["reader_cpu_ns"] / _window(r) / nread, 1) for r in rs
              if r.get("reader_cpu_ns") is not None]
        return (f"{len(rs)} | {spread([round(r['iops']) for r in rs])} | "
                f"{spread([round(r['mib_s'], 2) for r in rs])} | {per} | {cpu} | "
                f"{spread(rd) + ' %' if rd else 'not recorded'} | "
                f"{spread([round(r['irqs'] * 1e9 / _window(r)) for r in rs])} |")

    if base:
        out.append(f"| SCHED_FIFO 50 (default) | | {cells(base, None)}")
    for q in sorted({r["runtime_ns"] for r in rows if r["runtime_ns"] is not None}):
        rs = [r for r in rows if r["runtime_ns"] == q]
        out.append(f"| reserved ({q / 1e6:g} ms, {period / 1e6:g} ms) | {100 * q / period:g} % "
                   f"| {cells(rs, 100 * q / period)}")
    window = ("" if any("window_ns" in r for r in rows) else
              " (This boot's records predate the counters' own window: shares are of the "
              "readers' span, so the readers' start and drain push theirs above 100 %.)")
    out += ["", f"Linear fit over all {len(pts)} reserved measurements: reads/s = "
            f"{fit['intercept']:.0f} + {fit['slope']:.1f} · (Q/T in %), R² = {fit['r2']:.4f}; "
            f"through the origin: reads/s = {prop['slope']:.1f} · (Q/T in %), R² = "
            f"{prop['r2']:.4f}; against the CPU time the thread actually used: reads/s = "
            f"{used['intercept']:.0f} + {used['slope']:.1f} · (share in %), R² = "
            f"{used['r2']:.4f}. Reads/s rise with Q/T: over the medians "
            f"{'yes' if mono['medians'] else 'no'}; within each run "
            + ", ".join(f"run {k}: {'yes' if v else 'no'}" for k, v in mono["runs"].items())
            + f". Measurements in which the thread used less than {STARVED:.0%} of its "
            "reservation (the disk, in host time, left it waiting): "
            + (", ".join(f"run {r['run']} at {100 * r['runtime_ns'] / r['period_ns']:g} % "
                         f"({100 * r['thread_cpu_ns'] / _window(r):.1f} % used)"
                         for r in starved) or "none") + "." + window, ""]
    return out


def plot_disk(rec: dict, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts, base = disk_points(rec)
    fit = linear_fit(pts)
    rows = [r for r in rec["result"]["rows"] if r["runtime_ns"] is not None]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.plot([x for x, _ in pts], [y for _, y in pts], "o", color="C0", alpha=0.7,
           label="reserved, each run")
    xs = [0, max(x for x, _ in pts)]
    a.plot(xs, [fit["intercept"] + fit["slope"] * x for x in xs], "-", color="C1",
           label=f"fit: {fit['intercept']:.0f} + {fit['slope']:.1f}·x, R² {fit['r2']:.3f}")
    for i, r in enumerate(base):
        a.axhline(r["iops"], color="tab:red", ls="--", lw=1,
                  label="SCHED_FIFO 50 (unreserved)" if i == 0 else None)
    a.set_xlabel("disk IRQ thread's Q/T (%)")
    a.set_ylabel("reads per guest second")
    a.legend(fontsize=7)
    a.grid(True, alpha=0.3)
    b.plot([100 * r["runtime_ns"] / r["period_ns"] for r in rows],
           [100 * r["thread_cpu_ns"] / _window(r) for r in rows], "o", color="C0")
    b.plot(xs, xs, "--", color="gray", lw=1, label="share = Q/T")
    for i, r in enumerate(base):
        b.axhline(100 * r["thread_cpu_ns"] / _window(r), color="tab:red", ls="--", lw=1,
                  label="SCHED_FIFO 50" if i == 0 else None)
    b.set_xlabel("disk IRQ thread's Q/T (%)")
    b.set_ylabel("IRQ thread's CPU time (% of the measurement)")
    b.legend(fontsize=7)
    b.grid(True, alpha=0.3)
    fig.suptitle(f"{rec['testbed_key']}: {rec['date']}, commit {rec['commit']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def testbed_section(lat_recs: list[dict]) -> list[str]:
    """The same latency experiment on the two testbeds and in separate boots: how much
    the distributions move between repeats, and with the host's load."""
    out = ["### Evidence: the same experiment on both testbeds, repeated", "",
           "Experiment 6 below, as run by `latency.py` on each testbed (`--testbed icount` "
           "and `--testbed tcg`), each boot repeating FIFO 50 / reserved three times. "
           "*p99 spread* is max/min of the per-run p99 within a boot: how repeatable one "
           "number is. The host's load average is the one-minute value at boot and at "
           "power-off.", "",
           "| testbed | boot (load avg) | NIC thread | p99 of the wake-ups per run (µs) | "
           "p99 spread | max per run (µs) |", "|---|---|---|---|---:|---|"]
    for rec in lat_recs:
        if "error" in rec["result"]:
            out.append(f"| {rec['testbed_key']} | {rec['date']} | the guest scenario failed: "
                       f"{rec['result']['error'][:120]} | | | |")
            continue
        for label, rs in latency_rows(rec).items():
            if not rs:
                continue
            p99 = [r["p99"] for r in rs]
            out.append(f"| {rec['testbed_key']} | {rec['date']}, {rec['params']['runs']} x "
                       f"{rec['params']['seconds']} s "
                       f"({rec['loadavg_before'][0]:.0f} → {rec['loadavg_after'][0]:.0f}) | "
                       f"{LABELS[label]} | {', '.join(map(str, p99))} | "
                       f"{max(p99) / max(min(p99), 1):.2f}x | "
                       f"{', '.join(str(r['max']) for r in rs)} |")
    return [*out, ""]


def newest(pattern: str) -> list[Path]:
    return sorted(DATA.glob(pattern), key=lambda p: p.name.rsplit("-", 1)[-1])


def write_results(dest: Path = HERE, figures: bool = True) -> Path:
    """RESULTS.md and (``figures``) its figures, into ``dest``, from RESULTS.md.head, the
    newest raw data of each experiment and RESULTS.md.tail (its numbers filled in by
    ``reading``)."""
    head = (HERE / "RESULTS.md.head").read_text()
    tail = (HERE / "RESULTS.md.tail").read_text()
    used: list[dict] = []
    values: dict[str, str] = {}
    lat_all = [json.loads(p.read_text()) for p in newest("latency-icount-*.json")]
    # the boots since the restore fix (with CPU times), plain and with the eth1 control
    lat_work = [r for r in lat_all if latency_work_report.is_work_record(r)]
    lat_icount = [r for r in lat_all if not latency_work_report.is_work_record(r)]
    lat_tcg = [json.loads(p.read_text()) for p in newest("latency-tcg-*.json")]
    parts, status = [], []
    if lat_icount:
        plain = [r for r in lat_work if latency_work_report.control_of(r) is None]
        control = [r for r in lat_work if latency_work_report.control_of(r) is not None]
        newer = latency_work_report.section(plain, control) if lat_work else []
        parts += latency_section(lat_icount, dest / "latency.png", figures, newer)
        used += lat_icount + lat_work
        values |= (reading.latency(lat_icount)
                   | latency_work_report.prose_values(plain, control))
        status.append("| 6. latency under a flood, FIFO 50 vs reserved | latency.py | done |")
    else:
        status.append("| 6. latency under a flood, FIFO 50 vs reserved | latency.py | "
                      "not measured yet |")
    # untagged boots (one per kernel); tagged ones are probes
    lat_hrtick = [json.loads(p.read_text()) for p in newest("latency-hrtick-icount-*.json")
                  if re.fullmatch(r"latency-hrtick-icount-nice\d+-\d{8}T\d{6}\.json", p.name)]
    if lat_hrtick:
        import latency_hrtick_report
        parts += latency_hrtick_report.section(lat_hrtick)
        used += lat_hrtick
        values |= latency_hrtick_report.values(lat_hrtick)
    status.append("| 6. latency under a flood, budget enforced at the tick vs HRTICK_DL | "
                  "latency_hrtick.py | " + ("done |" if lat_hrtick else "not measured yet |"))
    # the same over the whole receive path: untagged boots; tagged ones are probes
    lat_path = [json.loads(p.read_text()) for p in newest("latency-hrtick-napi-icount-*.json")
                if re.fullmatch(r"latency-hrtick-napi-icount-nice\d+-\d{8}T\d{6}\.json",
                                p.name)]
    if lat_path:
        import latency_hrtick_report
        parts += latency_hrtick_report.section(lat_path)
        used += lat_path
    status.append("| 6. the same over the whole receive path (threaded NAPI) | "
                  "latency_hrtick.py --napi | "
                  + ("done |" if lat_path else "not measured yet |"))
    for name, pattern, title, fn in (
            ("tools", "tools-icount-*.json", "1. statistical tools, T1..T100", tools_section),
            # the 3-run table; a later 1-run diagnostic boot (tag "diag") is read in prose
            ("player-fifo", "player-fifo-icount-nice0-2*.json", "2. throughput vs latency, FIFO",
             player_fifo_section),
            ("player-dl", "player-dl-icount-*.json",
             "3. throughput vs latency, both reserved", player_dl_section)):
        files = newest(pattern)
        if files:
            rec = json.loads(files[-1].read_text())
            parts += fn(rec, dest / f"{name}.png", figures)
            used.append(rec)
            if name == "tools":
                values |= tools_values(rec)
            if name == "player-dl":
                values |= reading.player_dl([json.loads(f.read_text()) for f in files],
                                            lambda r: r["params"]["size"], app_mbit_s,
                                            offered_mbit_s, lambda r: _misses(r)[1])
            status.append(f"| {title} | {name.replace('-', '_')}.py | done |")
        else:
            status.append(f"| {title} | {name.replace('-', '_')}.py | not measured yet |")
    # untagged: the NAPI kthread reserved; tag "default": left at its default; "hrtick":
    # budgets enforced by HRTICK_DL; other tags are probes
    napi = [json.loads(f.read_text()) for f in newest("player-dl-napi-icount-*.json")
            if re.fullmatch(r"player-dl-napi-icount-nice\d+(-default)?(-hrtick)?-\d{8}T\d{6}"
                            r"\.json", f.name)]
    if napi:
        import napi_report
        rsv, dft = ([r for r in napi if r["result"]["napi"] == v] for v in ("reserved",
                                                                             "default"))
        probes = [json.loads(f.read_text()) for f in newest("player-dl-napi-icount-*-probe-*")]
        longer = [json.loads(f.read_text()) for f in newest("player-dl-napi-icount-*-long-*")]
        parts += napi_report.section(rsv, dft, probes, longer)
        used += longer
        used += rsv + dft[-1:]
    status.append("| 3. with threaded NAPI reserved beside the IRQ thread | player_dl_napi.py | "
                  + ("done |" if napi else "not measured yet |"))
    # the untagged icount runs and those with busy loops on every reader's vCPU (tag
    # "hogs") make the tables; other tags are the probes that chose the method
    disk = [f for f in newest("disk-icount-nice*.json")
            if re.fullmatch(r"disk-icount-nice\d+(-hogs)?-\d{8}T\d{6}\.json", f.name)]
    if disk:
        tcg = [json.loads(f.read_text()) for f in newest("disk-tcg-*.json")]
        disk_recs = [json.loads(f.read_text()) for f in disk]
        parts += disk_section(disk_recs, dest / "disk.png", tcg, figures)
        used += disk_recs
    status.append("| 4. disk IRQ thread, Q/T 2 %..60 % | disk.py | "
                  + ("done |" if disk else "not measured yet |"))
    # untagged: tagged boots are trials, or the start-value comparison below
    files = [f for f in newest("adaptive-icount-nice*.json")
             if re.fullmatch(r"adaptive-icount-nice\d+-\d{8}T\d{6}\.json", f.name)]
    if files:
        import adaptive_analysis
        rec = json.loads(files[-1].read_text())
        parts += adaptive_analysis.section(rec, dest / "adaptive.png", figures)
        used.append(rec)
        values |= reading.adaptive(rec)
        start = newest("adaptive-icount-nice*-start-*.json")  # fixed at tune's start value
        if start:
            rec = json.loads(start[-1].read_text())
            parts += adaptive_analysis.start_section(rec)
            used.append(rec)
            values |= reading.adaptive_start(rec)
        status.append("| 5. adaptive budget vs fixed (`irqres tune`) | adaptive.py | done |")
    else:
        status.append("| 5. adaptive budget vs fixed (`irqres tune`) | adaptive.py | "
                      "not measured yet |")
    # the process-aware experiments: untagged boots; tagged ones are probes
    for name, module, label in (
            ("process-aware", "process_aware_report", "Lee et al."),
            ("zhang-west", "zhang_west_report", "Zhang and West")):
        pa = [f for f in newest(f"{name}-icount-*.json")
              if re.fullmatch(rf"{name}-icount-nice\d+-\d{{8}}T\d{{6}}\.json", f.name)]
        if pa:
            rec = json.loads(pa[-1].read_text())
            parts += importlib.import_module(module).section(rec)
            used.append(rec)
        status.append(f"| process-aware: {label}, default vs coupled | "
                      f"{module.removesuffix('_report')}.py | "
                      + ("done |" if pa else "not measured yet |"))
    # untagged: tagged boots are probes
    acct = [f for f in newest("accounting-accuracy-icount-*.json")
            if re.fullmatch(r"accounting-accuracy-icount-nice\d+-\d{8}T\d{6}\.json", f.name)]
    if acct:
        import accounting_report
        traced = [json.loads(f.read_text())
                  for f in newest("accounting-accuracy-icount-*-trace-*.json")]
        before = DATA / accounting_report.WAKEUP_RULE_RECORD
        parts += accounting_report.section(
            json.loads(acct[-1].read_text()), traced[-1:],
            json.loads(before.read_text()) if before.exists() and before != acct[-1] else None)
    status.append("| accounting accuracy, two receivers (Zhang and West) | "
                  "accounting_accuracy.py | " + ("done |" if acct else "not measured yet |"))
    # experiment 2 before any irqres action and after its cycles (player_fifo.py --regimes)
    regimes = [json.loads(f.read_text()) for f in newest("player-fifo-regimes-icount-*.json")]
    if regimes:
        import regimes_report
        suite = newest("player-fifo-suite-boots-*.json")
        parts += regimes_report.section(regimes, json.loads(suite[-1].read_text())
                                        if suite else None)
        used += regimes
    values |= reading.load_range(used)
    extra = reading.unused([head, tail], values)
    if extra:
        raise reading.ReadingError(f"RESULTS.md.head/.tail: no field for {', '.join(extra)}")
    text = head.replace("__STATUS__", "\n".join(status))
    text = text.replace("__TESTBED_EVIDENCE__", "\n".join(testbed_section(lat_icount + lat_tcg)))
    out = dest / "RESULTS.md"
    out.write_text(reading.fill(text, values, "RESULTS.md.head") + "\n" + "\n".join(parts)
                   + "\n" + reading.fill(tail, values, "RESULTS.md.tail"))
    return out


def load(paths: list[str]) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in paths]

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiment", choices=("all", "latency", "tools", "player-fifo",
                                            "player-dl", "adaptive", "disk"),
                    help="all: write RESULTS.md from the newest raw data of each")
    ap.add_argument("records", nargs="*", help="raw data files (bench/seeds/data/*.json)")
    args = ap.parse_args()
    if args.experiment == "all":
        print(write_results())
        return 0
    if not args.records:
        ap.error("name the raw data files")
    recs = load(args.records)
    if args.experiment == "latency":
        lines = latency_section(recs, HERE / "latency.png")
    elif args.experiment == "tools":
        lines = tools_section(recs[0], HERE / "tools.png")
    elif args.experiment == "disk":
        lines = disk_section(recs, HERE / "disk.png")
    elif args.experiment == "player-fifo":
        lines = player_fifo_section(recs[0], HERE / "player-fifo.png")
    elif args.experiment == "adaptive":
        import adaptive_analysis
        lines = adaptive_analysis.section(recs[0], HERE / "adaptive.png")
    else:
        lines = player_dl_section(recs[0], HERE / "player-dl.png")
    print("\n".join(lines))
    return 0

if __name__ == "__main__":
    sys.exit(main())
