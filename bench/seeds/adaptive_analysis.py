"""Experiment 5's numbers from the guest's files: the NIC thread's CPU time per 1 ms
window (from the sched_switch trace of its CPU), the player's inter-frame times, the
budgets `irqres tune` sent; and the RESULTS.md section and figure made from them."""

from __future__ import annotations

import itertools
import statistics
import sys
from pathlib import Path

import testbed
from stats import spread

MS = 1_000_000
BIN_US = 25          # histogram bins of the time per 1 ms window
EXCERPT_MS = 1000    # the per-ms series kept in the raw data for the figure
LABELS = {"fifo50": "no reservation (SCHED_FIFO 50)", "fixed": "fixed budget",
          "tune": "`irqres tune`"}


def _np():
    sys.path.insert(0, str(testbed.REPO / "analysis"))
    import numpy as np
    return np


def on_cpu(switch: dict, cpu: int, pid: int):
    """(start, end) ns arrays of the intervals ``pid`` ran on ``cpu``: from a switch to
    it to the next switch on that CPU."""
    np = _np()
    keep = switch["cpu"] == cpu
    ts, nxt = switch["ts"][keep], switch["next_pid"][keep]
    order = np.argsort(ts, kind="stable")
    ts, nxt = ts[order], nxt[order]
    i = np.flatnonzero(nxt[:-1] == pid)
    return ts[i], ts[i + 1]


def busy_per_window(start, end, t0: int, t1: int, width: int = MS):
    """CPU time (ns) the intervals cover in each window [t0 + k*width, +width) up to t1."""
    np = _np()
    edges = np.arange(t0, t1 + 1, width, dtype=np.int64)
    cum = np.concatenate(([0], np.cumsum(end - start)))

    def covered(t):  # time covered before t
        k = np.searchsorted(start, t, side="right")  # intervals that started before t
        last = np.clip(k - 1, 0, None)
        part = np.where(k > 0, np.clip(t - start[last], 0, (end - start)[last]), 0)
        return cum[np.clip(k - 1, 0, None)] * (k > 0) + part
    c = covered(edges)
    return np.diff(c)


def dist(values_ns) -> dict:
    """mean and percentiles (µs) of per-window times."""
    np = _np()
    v = np.asarray(values_ns, dtype=np.int64)
    p = np.percentile(v, [1, 5, 50, 95, 99])
    hist, _ = np.histogram(v / 1000, bins=np.arange(0, 1000 + 2 * BIN_US, BIN_US))
    return {"windows": len(v), "mean_us": round(float(v.mean()) / 1000, 1),
            "min_us": round(int(v.min()) / 1000, 1), "max_us": round(int(v.max()) / 1000, 1),
            **{f"p{q}_us": round(float(x) / 1000, 1) for q, x in zip((1, 5, 50, 95, 99), p,
                                                                     strict=True)},
            "hist": [int(x) for x in hist]}


def frames(path: Path, t0: int, t1: int, period_ns: int) -> dict:
    """The frames released in [t0, t1): inter-frame times (ends), misses."""
    rows = [tuple(map(int, ln.split())) for ln in path.read_text().splitlines() if ln.strip()]
    rows = [r for r in rows if t0 <= r[0] < t1]
    ends = [r[2] for r in rows]
    gaps = [b - a for a, b in itertools.pairwise(ends)]
    misses = sum(1 for rel, _, end in rows if end > rel + period_ns)
    return {"frames": len(rows), "misses": misses,
            "mean_ms": round(statistics.fmean(gaps) / MS, 2) if gaps else None,
            "std_ms": round(statistics.pstdev(gaps) / MS, 2) if gaps else None,
            "max_ms": round(max(gaps) / MS, 2) if gaps else None,
            "gaps_ns": gaps}


def tune_log(path: Path) -> dict | None:
    """The budgets `irqres tune` sent while it ran: count and range."""
    if not path.is_file():
        return None
    rows = [ln.split(",") for ln in path.read_text().splitlines()[1:] if ln.strip()]
    sent = [int(r[6]) for r in rows if len(r) > 6 and r[6]]
    thr = [int(r[5]) for r in rows if len(r) > 5 and r[5]]
    return {"intervals": len(rows), "sent": len(sent),
            "q_min_us": min(sent) / 1000 if sent else None,
            "q_max_us": max(sent) / 1000 if sent else None,
            "q_median_us": statistics.median(sent) / 1000 if sent else None,
            "t_thr_median_us": statistics.median(thr) / 1000 if thr else None}


def analyze(rec: dict) -> None:
    """Adds ``analysis`` to every row of the record (in place)."""
    from irqres.trace.reader import read_trace

    p = rec["params"]
    out = Path(rec["raw_out"])
    cpu = rec["result"]["setup"]["nic_cpu"]
    for r in rec["result"]["rows"]:
        base = out / r["files"]
        phases = [tuple(map(int, ln.split())) for ln in
                  base.with_name(base.name + "-phases.txt").read_text().splitlines() if ln]
        t0 = phases[0][0]
        t1 = t0 + p["seconds"] * 1_000_000_000
        tr = read_trace(base.with_name(base.name + ".dat"), check_events=False)
        sw = tr.table("sched_switch")
        lost = tr.lost
        nlost = int(((lost["cpu"] == cpu) & (lost["ts"] >= t0) & (lost["prev_ts"] < t1)).sum())
        start, end = on_cpu(sw, cpu, r["pids"]["nic_thread"])
        nic = busy_per_window(start, end, t0, t1)
        inside = (start >= t0) & (end <= t1)
        stretch = (end - start)[inside]
        soft = busy_per_window(*on_cpu(sw, cpu, r["pids"]["ksoftirqd"]), t0, t1) \
            if r["pids"].get("ksoftirqd") else nic * 0
        fr = frames(base.with_name(base.name + "-player.txt"), t0, t1, p["period_ns"])
        rx = r["rx"]
        r["analysis"] = {
            "span_ns": t1 - t0, "lost_gaps": nlost, "switches": len(sw["ts"]),
            # the NIC thread's longest stretch on the CPU, and how many stretches were
            # longer than its period: what the budget's enforcement lets through
            "longest_run_us": round(int(stretch.max()) / 1000, 1) if len(stretch) else 0,
            "runs_over_period": int((stretch > p["nic_period_ns"]).sum()),
            "nic_per_ms": dist(nic), "net_per_ms": dist(nic + soft),
            "nic_series_us": [int(x) // 1000 for x in nic[:EXCERPT_MS]],
            "soft_series_us": [int(x) // 1000 for x in soft[:EXCERPT_MS]],
            "frames": fr, "tune": tune_log(base.with_name(base.name + "-tune.csv")),
            "sent": int(r["sender"].split()[1]),
            # eth0's rx_packets over the sender's span: what the NIC thread took off the
            # ring (rx_missed_errors is read from the NIC by the driver's 2 s watchdog:
            # it lags, and belongs partly to the previous measurement)
            "taken": rx["rx_packets"],
            "mbit_s": round(rx["rx_bytes"] * 8 * 1000 / (t1 - t0), 1),
            "phases": phases,
        }
        a = r["analysis"]
        d = a["nic_per_ms"]
        a["summary"] = (f"NIC per ms p1..p99 {d['p1_us']}..{d['p99_us']} us mean "
                        f"{d['mean_us']}; frames {fr['frames']} misses {fr['misses']} inter-frame "
                        f"mean {fr['mean_ms']} max {fr['max_ms']} ms; "
                        f"taken {a['taken']} of {a['sent']}")


def whole(d: dict) -> float:
    """Per cent of the 1 ms windows the thread ran from end to end (the last bin)."""
    return round(100 * d["hist"][-1] / d["windows"], 1)


def _label(row: dict, params: dict) -> str:
    cfg = next(c for c in params["configs"] if c["name"] == row["config"])
    if cfg["kind"] == "fixed":
        return f"fixed budget {cfg['q_ns'] // 1000} µs / 1 ms"
    if cfg["kind"] == "tune":
        t = cfg["tune"]
        return (f"`irqres tune`, G = {t['gain']:g} ({t['min_ns'] // 1000}.."
                f"{t['max_ns'] // 1000} µs / 1 ms)")
    return LABELS["fifo50"]


def _cell(rows: list[dict], get) -> str:
    vals = [v for v in (get(r["analysis"]) for r in rows) if v is not None]
    return spread(vals) if vals else ".."


def section(rec: dict, png: Path, draw: bool = True) -> list[str]:
    """The RESULTS.md section of one record and its figure."""
    from report import provenance  # report imports this module only when it runs
    p = rec["params"]
    rows = rec["result"]["rows"]
    names = [c["name"] for c in p["configs"]]
    by = {n: [r for r in rows if r["config"] == n and "analysis" in r] for n in names}
    t = next((c["tune"] for c in p["configs"] if c["kind"] == "tune"), None)
    periods = ", ".join(f"{x / 1000:g}" for x in p["load_periods_ns"])
    out = ["## Experiment 5: adaptive budget (`irqres tune`) vs fixed, fluctuating load", "",
           f"The player ({p['work_ns'] / MS:g} ms of CPU work every {p['period_ns'] // MS} ms, "
           f"SCHED_FIFO {p['priority']}, absolute releases) on the NIC's CPU; a sender on the "
           f"other vCPU sends {p['size']}-byte datagrams in phases of "
           f"{p['phase_ns'][0] // MS}..{p['phase_ns'][1] // MS} ms, each at a period drawn "
           f"from {periods} µs, for {p['seconds']} guest-seconds (`seedload vsend`; the draws "
           "depend on the run's seed only, so every configuration of a run gets the same "
           f"load). The NIC thread's period is {p['nic_period_ns'] // MS} ms (the reference's "
           "1 ms interval); its CPU time per 1 ms window is measured from a sched_switch "
           "trace of its CPU (`-C mono`, the clock of the player's and sender's logs) over "
           "the sender's span."]
    if t:
        out[-1] += (f" `irqres tune` ran on the other vCPU with sample "
                    f"{t['sample_ns'] // MS} ms, window {t['window']}, clamps "
                    f"{t['min_ns'] // 1000}..{t['max_ns'] // 1000} µs, start "
                    f"{t['start_ns'] // 1000} µs, hysteresis {t['hysteresis_ns'] // 1000} µs, "
                    f"default job {t['default_job_ns'] // 1000} µs.")
    out += ["Each cell: median [min..max] over the runs of the per-run value.", "",
            *provenance(rec), "",
            "| NIC thread | runs | NIC time per 1 ms: mean (µs) | p1..p99 range (µs) | "
            "windows it took whole | NIC + ksoftirqd per 1 ms: mean (µs) | "
            "player inter-frame mean (ms) | std (ms) | max (ms) | "
            "player misses | frames | datagrams taken (of sent) | datagrams the "
            "application read | budgets sent by tune |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        rs = by[n]
        if not rs:
            continue
        out.append(
            f"| {_label(rs[0], p)} | {len(rs)} "
            f"| {_cell(rs, lambda a: a['nic_per_ms']['mean_us'])} "
            f"| {_cell(rs, lambda a: a['nic_per_ms']['p99_us'] - a['nic_per_ms']['p1_us'])} "
            f"| {_cell(rs, lambda a: whole(a['nic_per_ms']))} % "
            f"| {_cell(rs, lambda a: a['net_per_ms']['mean_us'])} "
            f"| {_cell(rs, lambda a: a['frames']['mean_ms'])} "
            f"| {_cell(rs, lambda a: a['frames']['std_ms'])} "
            f"| {_cell(rs, lambda a: a['frames']['max_ms'])} "
            f"| {_cell(rs, lambda a: a['frames']['misses'])} "
            f"| {_cell(rs, lambda a: a['frames']['frames'])} "
            f"| {_cell(rs, lambda a: a['taken'])} ({_cell(rs, lambda a: a['sent'])}) "
            f"| {spread([int(r['receiver'].split()[1]) for r in rs])} "
            f"| {_cell(rs, lambda a: (a['tune'] or {}).get('sent'))} |")
    out += ["", "Every run, NIC time per 1 ms p1 / p50 / p99 (µs), player inter-frame mean / max "
            "(ms), datagrams taken of sent:", ""]
    for r in rows:
        a = r.get("analysis")
        if not a:
            continue
        d, f = a["nic_per_ms"], a["frames"]
        tq = a["tune"]
        extra = (f"; tune's budgets {tq['q_min_us']:g}..{tq['q_max_us']:g} µs, median "
                 f"{tq['q_median_us']:g}" if tq and tq["sent"] else "")
        out.append(f"- run {r['run']} {r['config']}: {d['p1_us']:g} / {d['p50_us']:g} / "
                   f"{d['p99_us']:g}; {f['mean_ms']} / {f['max_ms']}; {a['taken']} of "
                   f"{a['sent']}; longest NIC thread stretch {a['longest_run_us']:g} µs, "
                   f"{a['runs_over_period']} longer than its period; trace gaps "
                   f"{a['lost_gaps']}{extra}")
    if draw:
        plot(rec, by, names, png)
    out += ["", f"![adaptive vs fixed]({png.name})", ""]
    return out


def plot(rec: dict, by: dict, names: list[str], png: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    np = _np()

    p = rec["params"]
    names = [n for n in names if by[n]]
    fig = plt.figure(figsize=(12, 2.2 * len(names) + 1))
    gs = fig.add_gridspec(len(names), 2, width_ratios=[2.2, 1])
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, n in enumerate(names):
        ax = fig.add_subplot(gs[i, 0])
        a = by[n][0]["analysis"]
        s = a["nic_series_us"]
        ax.plot(range(len(s)), s, lw=0.6, color=colors[i % len(colors)], label="NIC thread")
        if a.get("soft_series_us"):
            k = a["soft_series_us"]
            ax.plot(range(len(k)), [-x for x in k], lw=0.6, color="0.5",
                    label="ksoftirqd (drawn downwards)")
            ax.legend(fontsize=7, loc="lower right")
        ax.set_ylim(-1050, 1050)
        ax.axhline(0, color="k", lw=0.4)
        ax.set_ylabel("µs per ms")
        ax.set_title(f"{_label(by[n][0], p).replace('`', '')}: run 0, first second",
                     fontsize=9)
        if i == len(names) - 1:
            ax.set_xlabel("guest time (ms) since the load started")
    ax = fig.add_subplot(gs[: max(1, len(names) // 2), 1])
    edges = np.arange(0, 1000 + 2 * BIN_US, BIN_US)
    for i, n in enumerate(names):
        h = np.sum([r["analysis"]["nic_per_ms"]["hist"] for r in by[n]], axis=0)
        ax.step(edges[:-1], h / h.sum(), where="post", color=colors[i % len(colors)],
                label=n)
    ax.set_xlabel("NIC thread time per 1 ms window (µs)")
    ax.set_ylabel("fraction of windows")
    ax.legend(fontsize=8)
    ax = fig.add_subplot(gs[max(1, len(names) // 2):, 1])
    for i, n in enumerate(names):
        g = np.concatenate([np.asarray(r["analysis"]["frames"]["gaps_ns"]) / MS
                            for r in by[n]])
        ax.hist(g, bins=np.arange(0, max(200, g.max() + 5), 4), histtype="step",
                color=colors[i % len(colors)], label=n)
    ax.set_yscale("log")
    ax.set_xlabel("player inter-frame time (ms)")
    ax.set_ylabel("frames")
    ax.legend(fontsize=8)
    fig.suptitle(f"Experiment 5, {rec['date']}, commit {rec['commit']}, "
                 f"{rec['kernel']}, {rec['testbed'].split(',')[0]} icount", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


def start_section(rec: dict) -> list[str]:
    """The tuner against a budget fixed at its start value (a tuner that never moves),
    one boot of its own: the same table's player and network columns, and whether tune
    made the player's longest inter-frame time shorter in every run."""
    from report import provenance

    p = rec["params"]
    rows = rec["result"]["rows"]
    names = [c["name"] for c in p["configs"]]
    by = {n: [r for r in rows if r["config"] == n and "analysis" in r] for n in names}
    out = ["### The tuner against its own start value", "",
           "The same experiment in a boot of its own, with a budget fixed at the tuner's "
           "start value (what a tuner that never moves gives) beside `irqres tune`.", "",
           *provenance(rec), "",
           "| NIC thread | runs | NIC time per 1 ms: mean (µs) | player inter-frame std (ms) "
           "| max (ms) | player misses | datagrams taken (of sent) | datagrams the application "
           "read | budgets sent by tune |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        rs = by[n]
        if rs:
            out.append(f"| {_label(rs[0], p)} | {len(rs)} "
                       f"| {_cell(rs, lambda a: a['nic_per_ms']['mean_us'])} "
                       f"| {_cell(rs, lambda a: a['frames']['std_ms'])} "
                       f"| {_cell(rs, lambda a: a['frames']['max_ms'])} "
                       f"| {_cell(rs, lambda a: a['frames']['misses'])} "
                       f"| {_cell(rs, lambda a: a['taken'])} ({_cell(rs, lambda a: a['sent'])}) "
                       f"| {spread([int(r['receiver'].split()[1]) for r in rs])} "
                       f"| {_cell(rs, lambda a: (a['tune'] or {}).get('sent'))} |")
    fixed = [c["name"] for c in p["configs"] if c["kind"] == "fixed"]
    tuned = [c["name"] for c in p["configs"] if c["kind"] == "tune"]
    for f, t in itertools.product(fixed, tuned):
        pairs = [(a["analysis"], b["analysis"]) for a in by[f] for b in by[t]
                 if a["run"] == b["run"]]
        shorter = sum(b["frames"]["max_ms"] < a["frames"]["max_ms"] for a, b in pairs)
        fewer = sum(b["frames"]["misses"] <= a["frames"]["misses"] for a, b in pairs)
        out += ["", f"{t} against {f}: the player's longest inter-frame time shorter under "
                f"tune in {shorter} of {len(pairs)} runs, no more misses in {fewer} of "
                f"{len(pairs)}."]
    return [*out, ""]
