"""The numbers quoted in the prose of RESULTS.md (RESULTS.md.head and .tail), computed from
the same records as the tables.

The prose names each number by a ``{{key}}`` field; ``fill`` replaces every field and
refuses a field it has no value for, and a value no field asks for, so that a number in
the prose is either computed here or written out by hand, never stale from an older run.
"""

from __future__ import annotations

import re

FIELD = re.compile(r"\{\{([a-z0-9_]+)\}\}")


class ReadingError(ValueError):
    """A prose field without a value, or a value no field asks for."""


def fill(text: str, values: dict[str, str], name: str) -> str:
    """``text`` with every ``{{key}}`` replaced by ``values[key]``."""
    asked = set(FIELD.findall(text))
    missing = sorted(asked - values.keys())
    if missing:
        raise ReadingError(f"{name}: no value for the field(s) {', '.join(missing)}")
    return FIELD.sub(lambda m: values[m.group(1)], text)


def unused(texts: list[str], values: dict[str, str]) -> list[str]:
    """The values none of ``texts`` asks for."""
    asked = {k for t in texts for k in FIELD.findall(t)}
    return sorted(values.keys() - asked)


def _arrow(values: list[float]) -> str:
    return " → ".join(f"{v:g}" for v in values)


def _range(values: list[float], fmt: str = "{:g}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}\u2013{fmt.format(hi)}"


def load_range(recs: list[dict]) -> dict[str, str]:
    """The host's one-minute load average over the boots the tables show."""
    loads = [x for r in recs for x in (r["loadavg_before"][0], r["loadavg_after"][0])]
    return {"load_range": _range([round(x) for x in loads])}


def player_dl(recs: list[dict], size_of, app, offered, misses) -> dict[str, str]:
    """Experiment 3, every boot (oldest first; the newest is the table's): per-test medians
    of the NIC thread's, the application's and the offered throughput, the datagrams
    read, the share against Q/T, and the player's misses over all boots."""
    import statistics

    def medians(rec: dict, get) -> list[float]:
        rows = rec["result"]["rows"]
        return [round(statistics.median(get(r) for r in rows if r["test"] == t), 1)
                for t in sorted({r["test"] for r in rows})]

    new, old = recs[-1], recs[:-1]
    size = size_of(new)
    rows = new["result"]["rows"]
    period = new["params"]["nic_period_ns"]
    gaps = [100 * r["cpu_ns"]["nic_thread"] / r["span_ns"] - 100 * r["nic_q"] / period
            for r in rows if (r.get("cpu_ns") or {}).get("nic_thread") is not None]
    qts = sorted({100 * r["nic_q"] / period for r in rows})
    all_rows = [r for rec in recs for r in rec["result"]["rows"]]
    missed = [r for r in all_rows if misses(r) > 0]
    return {
        "exp3_qt": f"{qts[0]:g} → {qts[-1]:g} %",
        "exp3_nic_mbit": _arrow(medians(new, lambda r: r["mbit_s"])),
        "exp3_nic_mbit_older": "; ".join(_arrow(medians(o, lambda r: r["mbit_s"]))
                                         for o in old) or "none",
        "exp3_app_mbit": _arrow(medians(new, lambda r: app(r, size))),
        "exp3_offered": _range([round(offered(r, size), 1) for r in rows]),
        "exp3_read": _range([int(r["receiver"].split()[1]) for r in rows], "{:,}"),
        "exp3_sent": _range([int(r["sender"].split()[1]) for r in rows], "{:,}"),
        "exp3_share_gap": _share_gap(gaps),
        "exp3_soft": _range([round(100 * r["cpu_ns"]["ksoftirqd"] / r["span_ns"])
                             for r in rows if (r.get("cpu_ns") or {}).get("ksoftirqd")]),
        "exp3_player_misses": (f"missed no frame in any of the {len(all_rows)} measurements "
                               f"of the {len(recs)} boot(s)"
                               if not missed else
                               f"missed frames in {len(missed)} of {len(all_rows)} "
                               "measurements"),
    }


def _share_gap(gaps: list[float]) -> str:
    if not gaps:
        return "not recorded"
    lo, hi = round(min(gaps), 1), round(max(gaps), 1)
    side = (" (below it in every run)" if hi < 0 else " (above it in every run)" if lo > 0
            else "")
    return f"between {lo:+.1f} and {hi:+.1f} percentage points of its reservation's Q/T{side}"


def latency(recs: list[dict]) -> dict[str, str]:
    """Experiment 6 over the intended cycle grid, every run of every boot."""
    from stats import grid_summary

    def runs(label: str) -> list[dict]:
        return [grid_summary(r["hist"], rec["params"]["interval_us"], rec["params"]["hist_us"])
                for rec in recs for r in rec["result"]["results"] if r["label"] == label]

    fifo, rsv = runs("fifo50"), runs("reserved")
    hist = {rec["params"]["hist_us"] for rec in recs}
    if len(hist) != 1:
        raise ReadingError(f"latency: the boots' histograms differ in size ({sorted(hist)})")
    bound = hist.pop()
    beyond = all(g[k] is None for g in fifo for k in ("p99", "p99.9"))
    p50 = [g["p50"] for g in fifo]
    from stats import summary

    def woke(label: str) -> list[dict]:
        return [summary(r["hist"]) | {"pk": (r.get("rx") or {}).get("rx_packets")}
                for rec in recs for r in rec["result"]["results"] if r["label"] == label]

    fw, rw = woke("fifo50"), woke("reserved")
    pairs = list(zip(fw, rw, strict=True))
    sec = "{:.2f}"
    p0 = recs[0]["params"]
    sent = p0["seconds"] * 1_000_000_000 // p0["flood_period_ns"]
    return {
        "exp6_expect": f"{(p0['seconds'] + 1) * 1_000_000 // p0['interval_us']:,}",
        "exp6_fifo_woke": _range([r["samples"] for r in fw], "{:,}"),
        "exp6_fifo_p999": _range([r["p99.9"] / 1e6 for r in fw], sec) + " s",
        "exp6_fifo_max": _range([r["max"] / 1e6 for r in fw], sec) + " s",
        "exp6_rsv_woke": _range([r["samples"] for r in rw], "{:,}"),
        "exp6_rsv_p99": _range([r["p99"] / 1e3 for r in rw], "{:.1f}") + " ms",
        "exp6_rsv_p999": _range([r["p99.9"] / 1e3 for r in rw], "{:.1f}") + " ms",
        "exp6_rsv_max": _range([r["max"] / 1e3 for r in rw], "{:.1f}") + " ms",
        "exp6_rsv_packets": (_range([r["pk"] for r in rw if r["pk"] is not None], "{:,}")
                             + f" of {sent:,}"),
        "exp6_ratio_tail": f"{min(f[k] / r[k] for f, r in pairs for k in ('p99.9', 'max')):.0f}",
        "exp6_ratio_p99": f"{min(f['p99'] / r['p99'] for f, r in pairs):.1f}",
        "exp6_fifo_grid": (f"beyond the {bound // 1000} ms histogram" if beyond else
                           "not all beyond the histogram"),
        "exp6_fifo_grid_p50": ", ".join(f"> {bound}" if v is None else str(v) for v in p50),
        "exp6_rsv_grid_p50": _range([g["p50"] for g in rsv]),
        "exp6_rsv_grid_p99": _range([g["p99"] for g in rsv]),
        "exp6_rsv_grid_p999": _range([g["p99.9"] for g in rsv]),
        "exp6_rsv_runs": str(len(rsv)),
    }


def adaptive(rec: dict) -> dict[str, str]:
    """Experiment 5: the player's misses under `irqres tune`, over every tune run."""
    rows = [r for r in rec["result"]["rows"] if r["config"].startswith("tune")
            and "analysis" in r]
    clean = [r for r in rows if r["analysis"]["frames"]["misses"] == 0]
    rest = [f"{r['analysis']['frames']['misses']} in run {r['run']} of {r['config']}"
            for r in rows if r not in clean]
    import statistics

    read = []
    for c in [c["name"] for c in rec["params"]["configs"]]:
        rs = [r for r in rec["result"]["rows"] if r["config"] == c]
        if rs:
            read.append(f"{c} {statistics.median(int(r['receiver'].split()[1]) for r in rs):g} "
                        f"of {statistics.median(int(r['sender'].split()[1]) for r in rs):g}")
    return {"exp5_tune_misses": f"missed none in {len(clean)} of {len(rows)} runs"
            + (f" ({', '.join(rest)})" if rest else ""),
            "exp5_app_read": "; ".join(read)}


def adaptive_start(rec: dict) -> dict[str, str]:
    """Experiment 5's boot with a budget fixed at the tuner's start value beside tune."""
    import statistics

    rows = [r for r in rec["result"]["rows"] if "analysis" in r]
    fixed = [r for r in rows if r["kind"] == "fixed"]
    tune = [r for r in rows if r["kind"] == "tune"]
    if not fixed or not tune:
        raise ReadingError(f"{rec.get('path', 'adaptive start record')}: needs a fixed and "
                           "a tune configuration")

    def med(rs: list[dict], get) -> float:
        return statistics.median(get(r) for r in rs)

    misses = {id(r): r["analysis"]["frames"]["misses"] for r in rows}
    longest = {id(r): r["analysis"]["frames"]["max_ms"] for r in rows}
    worse = sum(longest[id(t)] >= longest[id(f)] for f in fixed for t in tune
                if f["run"] == t["run"])
    return {"exp5_start": (
        f"the player missed {_range([misses[id(r)] for r in fixed])} frames per run at the "
        f"fixed {fixed[0]['config'].removeprefix('fixed')} µs and "
        f"{_range([misses[id(r)] for r in tune])} under tune, and its longest inter-frame "
        f"time was no shorter under tune in {worse} of {len(tune)} runs (medians "
        f"{med(fixed, lambda r: r['analysis']['frames']['max_ms']):g} against "
        f"{med(tune, lambda r: r['analysis']['frames']['max_ms']):g} ms); the NIC thread "
        f"took {med(fixed, lambda r: r['analysis']['taken']):g} against "
        f"{med(tune, lambda r: r['analysis']['taken']):g} datagrams and the application "
        f"read {med(fixed, lambda r: int(r['receiver'].split()[1])):g} against "
        f"{med(tune, lambda r: int(r['receiver'].split()[1])):g} (medians)")}
