"""Experiment 3 with threaded NAPI (player_dl_napi.py): the section of RESULTS.md from the
records of bench/seeds/data/player-dl-napi-*.json, the NAPI kthread reserved (untagged,
or tag ``hrtick``: the budgets enforced by HRTICK_DL) and left at its default (tag
``default``). The reserved variant's newest record of each kernel and enforcement makes a
table of its own. Every number is computed here from the records; the goal is
shapes.napi_goal, judged per run.
"""

from __future__ import annotations

import statistics

import shapes
from report import _count, _misses, app_mbit_s, offered_mbit_s, provenance
from stats import spread

VARIANT = {"reserved": "NAPI kthread reserved beside the IRQ thread",
           "default": "NAPI kthread left at its default (unreserved)"}
ENFORCED = {"keep": "budgets enforced at the tick", "hrtick": "budgets enforced by HRTICK_DL"}


def enforcement(rec: dict) -> str:
    """The profile's enforcement (``keep`` in records made before the option existed)."""
    return rec["params"].get("enforcement", "keep")


def kernel_key(rec: dict) -> tuple[int, ...]:
    """The guest kernel's version as numbers, for ordering (6.1 before 6.12)."""
    return tuple(int(x) for x in rec["kernel"].split("-")[0].split("+")[0].split("."))


def newest_each(recs: list[dict]) -> list[dict]:
    """The newest of ``recs`` (oldest first) per kernel and enforcement, by kernel, the
    tick's before HRTICK_DL's."""
    last = {(kernel_key(r), enforcement(r) != "keep"): r for r in recs}
    return [last[k] for k in sorted(last)]


def _pcts(rs: list[dict], who: str) -> list[float]:
    return [round(v, 2) for r in rs if (v := shapes._pct(r, who)) is not None]


def _cell(values: list[float], unit: str = "") -> str:
    return f"{spread(values)}{unit}" if values else "not recorded"


def _policies(rs: list[dict]) -> str:
    seen = {(t.get("sched") or {}).get("policy") or "?" for r in rs
            for t in r.get("napi_after") or []}
    return ", ".join(sorted(seen)) or "no kthread"


def _row(rs: list[dict], p: dict) -> str:
    r0, period, size = rs[0], p["nic_period_ns"], p["size"]
    qt = 100 * r0["nic_q"] / period
    napi_q = r0["napi_q"]
    split = (f"{r0['irq_q'] / 1e6:g} + {napi_q / 1e6:g}" if napi_q is not None
             else f"{r0['irq_q'] / 1e6:g} + none")
    over = [round(v, 1) for r in rs if (v := shapes.pair_over(r, period)) is not None]
    return (f"| Test{r0['test']} | ({r0['player_q'] / 1e6:g}, {p['period_ns'] / 1e6:g}) | "
            f"({r0['nic_q'] / 1e6:g}, {period / 1e6:g}) = {split} | {qt:g}% | {len(rs)} | "
            f"{spread([round(offered_mbit_s(r, size), 1) for r in rs])} | "
            f"{spread([round(app_mbit_s(r, size), 1) for r in rs])} | "
            f"{spread([_count(r['receiver']) for r in rs])} of "
            f"{spread([_count(r['sender']) for r in rs])} | "
            f"{spread([round(app_mbit_s(r, size) / qt, 2) for r in rs])} | "
            f"{_cell(_pcts(rs, 'nic_thread'), ' %')} | {_cell(_pcts(rs, 'napi_thread'), ' %')} | "
            f"{_cell(over)} | {_cell(_pcts(rs, 'ksoftirqd'), ' %')} | "
            f"{spread([_misses(r)[1] for r in rs])} | {_policies(rs)} |")


def _features(rows: list[dict]) -> str:
    """What /sys/kernel/debug/sched/features said of HRTICK_DL at each row's apply."""
    seen = {("not recorded" if "features" not in r else
             "HRTICK_DL on" if "HRTICK_DL" in r["features"].split() else "HRTICK_DL off")
            for r in rows}
    return ", ".join(sorted(seen))


def _verdicts(rec: dict) -> list[str]:
    p, rows = rec["params"], rec["result"]["rows"]
    out = []
    for run in sorted({r["run"] for r in rows}):
        rs = sorted((r for r in rows if r["run"] == run), key=lambda r: r["test"])
        v = shapes.napi_run(rs, p["size"], p["nic_period_ns"])
        bad = shapes.napi_goal(rs, p["size"], p["nic_period_ns"])
        soft = "not recorded" if v["softirq_max"] is None else f"{v['softirq_max']:.2f} %"
        out.append(f"- run {run}: application Mbit/s = {v['fit']['slope']:.3f} · (Q/T in %),"
                   f" R² = {v['fit']['r2']:.4f}; ksoftirqd at most {soft}; player misses "
                   f"{v['misses']}; offered load's largest/smallest {v['offered_spread']:.3f}"
                   f": goal {'met' if not bad else 'not met (' + '; '.join(bad) + ')'}.")
    return out


def table(rec: dict) -> list[str]:
    p, rows = rec["params"], rec["result"]["rows"]
    out = [f"### {VARIANT[rec['result']['napi']]}: {rec['kernel']}, "
           f"{ENFORCED[enforcement(rec)]}", "", *provenance(rec), "",
           f"Sched features per row: {_features(rows)}.", "",
           "| test | player (Q,T) ms | NIC (Q,T) ms = IRQ thread + NAPI kthread Q | NIC Q/T "
           "| runs | offered (Mbit/s) | application (Mbit/s) | datagrams read (of sent) | "
           "application per 1 % of Q/T | CPU share: IRQ thread | CPU share: NAPI kthread | "
           "pair's share minus Q/T (points) | CPU share: ksoftirqd | player deadline misses | "
           "NAPI kthread policy seen |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for t in sorted({r["test"] for r in rows}):
        out.append(_row([r for r in rows if r["test"] == t], p))
    return [*out, "", "The goal per run:", "", *_verdicts(rec), ""]


def probe_words(rec: dict) -> str:
    """What a probe boot (tag ``probe``) showed: the applies refused after ``irqres
    restore`` between rows, and what a receiver at SCHED_OTHER read."""
    rows = rec["result"]["rows"]
    bad = [r for r in rows if r["apply"]["rc"]]
    why = sorted({(r["apply"]["err"] or r["apply"]["out"]).strip().splitlines()[0]
                  for r in bad})
    prio = rec["params"].get("receiver_prio", 0)
    return (f"A probe boot ({rec['date']}, commit `{rec['commit']}`, {rec['kernel']}, "
            f"{rec['params']['runs']} runs, tag `probe`) gave every thread back between rows "
            f"(`irqres restore`, the NIC's budget set again through the default profile, then "
            f"the row's profile): {len(bad)} of {len(rows)} applies "
            "were refused" + (f", with: {'; '.join(f'`{w}`' for w in why)}" if why else "")
            + " (each refused apply left the player unreserved, all or nothing). The NAPI "
            "kthread outlives `threaded` going back to 0 on 6.1; given back to the root "
            "cgroup while the NIC's partition existed, its CPUs were the root's (the "
            "refusal names them). The rows "
            "therefore replace each other's profile, the threads given back once at the "
            "end of the runs. Its receiver ran at "
            + (f"SCHED_FIFO {prio}" if prio else "SCHED_OTHER below the sender")
            + f" and read {spread([_count(r['receiver']) for r in rows])} datagrams of "
            f"{spread([_count(r['sender']) for r in rows])}.")


def longer_words(rec: dict) -> str:
    """A boot of the reserved variant with longer measurements (tag ``long``): the goal
    per run, in one sentence."""
    p, rows = rec["params"], rec["result"]["rows"]
    runs = [sorted((r for r in rows if r["run"] == n), key=lambda r: r["test"])
            for n in sorted({r["run"] for r in rows})]
    fits = [shapes.napi_run(rs, p["size"], p["nic_period_ns"])["fit"] for rs in runs]
    met = [not shapes.napi_goal(rs, p["size"], p["nic_period_ns"]) for rs in runs]
    parts = sorted({b.split(":")[0] for rs in runs
                    for b in shapes.napi_goal(rs, p["size"], p["nic_period_ns"])})
    return (f"With {p['seconds']} guest-seconds per measurement (a boot of the reserved "
            f"variant, tag `long`, {rec['date']}, commit `{rec['commit']}`, {rec['kernel']}, "
            f"{len(runs)} runs): application Mbit/s per 1 % of Q/T "
            + ", ".join(f"{f['slope']:.3f}" for f in fits) + "; R² through the origin "
            + ", ".join(f"{f['r2']:.4f}" for f in fits)
            + f"; the goal met in {sum(met)} of {len(runs)} runs"
            + (f" (not met: {', '.join(parts)})" if parts else "") + ".")


def section(reserved: list[dict], default: list[dict], probes: list[dict] = (),
            longer: list[dict] = ()) -> list[str]:
    """The newest record of the reserved variant per kernel and enforcement, the newest of
    the default variant, the enforcements compared, then the boots with longer
    measurements and the probes."""
    rec = (reserved or default)[-1]
    p = rec["params"]
    num, den = p["napi_split"]
    out = ["## Experiment 3 with threaded NAPI: the NIC's budget for its IRQ thread and its "
           "NAPI kthread together", "",
           f"As experiment 3 (the player, {p['work_ns'] / 1e6:g} ms of work every "
           f"{p['period_ns'] / 1e6:g} ms, and the NIC reserved by one profile; "
           f"{p['size']}-byte datagrams every {p['flood_period_ns'] / 1000:g} µs for "
           f"{p['seconds']} guest-seconds), but the profile's `interface: eth0` target has "
           "`threaded_napi: true`: the e1000's receive polls run in the kthread "
           "`napi/eth0-<id>` instead of the NET_RX soft IRQ, whose leftovers went to "
           "ksoftirqd outside every budget. Each row's NIC budget Q (period "
           f"{p['nic_period_ns'] / 1e6:g} ms) is shared by the pair: {num}/{den} of Q to the "
           "NAPI kthread (a `napi: eth0` target; it does the polls and delivers to the "
           "socket), the rest to the IRQ thread (it only masks the interrupt and wakes the "
           "kthread), both at the same period in the NIC's partition, so the pair's total "
           "is the row's Q/T and the player's budget and the partition's admission are "
           "experiment 3's. In the unreserved variant the profile has no `napi:` target: "
           "the kthread stays as the kernel makes it, the IRQ thread's part unchanged. "
           + (f"The receiver runs at SCHED_FIFO {p['receiver_prio']} on the sender's vCPU, "
              "above the sender (SCHED_FIFO 90); in experiment 3 it ran at SCHED_OTHER "
              "below it and read what that CPU left it, not what the NIC delivered."
              if p.get("receiver_prio") else ""), "",
           "*Offered* is the load the sender achieved (its datagrams' payload over the "
           "flood's span, guest time); it is not normalised away but held: the goal counts "
           f"only where a run's largest offered load is at most {shapes.OFFERED_SPREAD:g} "
           "times its smallest. *Application* is what the receiver read over the same span. "
           "The CPU shares are each thread's CPU time (/proc/PID/schedstat) over the span; "
           "ksoftirqd is ksoftirqd/N of the NIC's CPU. Median [min..max] over the runs. "
           f"The goal (shapes.napi_goal): application Mbit/s ∝ Q/T with R² ≥ "
           f"{shapes.NAPI_R2} through the origin, ksoftirqd < {shapes.NAPI_SOFTIRQ_PCT:g} %, "
           f"the player 0 misses, the pair's share at most Q/T + {shapes.SHARE_SLACK:g} "
           "point.", "",
           "Each table names its guest kernel and how the budgets were enforced: at the "
           "scheduler tick (4 ms, HZ=250; the profile's `enforcement: keep`, the default) or "
           "by HRTICK_DL (`enforcement: hrtick`, `player_dl_napi.py --enforcement hrtick`: "
           "irqresd switches the sched feature on; each row records "
           "/sys/kernel/debug/sched/features).", ""]
    for one in [*newest_each(reserved), *default[-1:]]:
        out += table(one)
    out += enforcement_section(reserved)
    return [*out, *(x for rec in longer for x in (longer_words(rec), "")),
            *(x for rec in probes for x in (probe_words(rec), ""))]


def kbit_per_cpu_ms(r: dict, size: int) -> float | None:
    """What the application read per ms of the NIC pair's (IRQ thread + NAPI kthread) CPU
    time over the flood, in kbit (None when either thread's time was not recorded)."""
    cpu = r.get("cpu_ns") or {}
    if cpu.get("nic_thread") is None or cpu.get("napi_thread") is None:
        return None
    pair = cpu["nic_thread"] + cpu["napi_thread"]
    return _count(r["receiver"]) * size * 8 * 1000 / pair if pair else None


def _runs(rec: dict) -> list[list[dict]]:
    rows = rec["result"]["rows"]
    return [sorted((r for r in rows if r["run"] == n), key=lambda r: r["test"])
            for n in sorted({r["run"] for r in rows})]


def _efficiency(rec: dict) -> list[float]:
    size = rec["params"]["size"]
    return [round(v, 1) for r in rec["result"]["rows"]
            if (v := kbit_per_cpu_ms(r, size)) is not None]


def _compare_row(rec: dict) -> str:
    p = rec["params"]
    size, period = p["size"], p["nic_period_ns"]
    runs = _runs(rec)
    fits = [shapes.napi_run(rs, size, period)["fit"] for rs in runs]
    met = [not shapes.napi_goal(rs, size, period) for rs in runs]
    over = [round(v, 1) for r in rec["result"]["rows"] if (v := shapes.pair_over(r, period))
            is not None]
    return (f"| {rec['kernel']} | {ENFORCED[enforcement(rec)]} | {rec['date']} | "
            f"{len(runs)} | "
            + ", ".join(f"{f['slope']:.3f}" for f in fits) + " | "
            + ", ".join(f"{f['r2']:.4f}" for f in fits) + f" | {sum(met)} of {len(runs)} | "
            f"{_cell(_efficiency(rec))} | {_cell(over)} |")


def _order(hr: list[float], tick: list[float], what: str) -> str:
    """How two sets of per-run values lie: HRTICK_DL's all above, all below, or mixed."""
    if min(hr) > max(tick):
        return f"every {what} with HRTICK_DL above every one with the tick"
    if max(hr) < min(tick):
        return f"every {what} with HRTICK_DL below every one with the tick"
    return "the two ranges overlap"


def _median_efficiency(rec: dict) -> float:
    return statistics.median(_efficiency(rec))


def _per_boot(by: dict[str, list[dict]], ratio: float) -> str:
    """Each boot's median kbit per ms of the pair's CPU against the enforcements' ratio:
    whether boots of one enforcement differ by more than the two enforcements do."""
    med = {k: [_median_efficiency(v) for v in vs] for k, vs in by.items()}
    boots = max(max(m) / min(m) for m in med.values())
    if boots == 1:
        return ""
    words = ("; each boot's median: " + ", ".join(f"{m:.1f}" for m in med["hrtick"])
             + " with HRTICK_DL, " + ", ".join(f"{m:.1f}" for m in med["keep"])
             + f" with the tick: boots of one enforcement differ by up to {boots:.2f}x")
    return words + (", more than the two enforcements do: over this spread no effect of "
                    "HRTICK_DL on it is visible" if boots > max(ratio, 1 / ratio) else "")


def _by_enforcement(recs: list[dict], kernel: tuple[int, ...]) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {}
    for r in recs:
        if kernel_key(r) == kernel:
            by.setdefault(enforcement(r), []).append(r)
    return by


def _per_run(by: dict[str, list[dict]], what) -> dict[str, list]:
    """``what(run's rows, size, NIC period)`` for every run of every boot, per enforcement."""
    return {k: [what(rs, v["params"]["size"], v["params"]["nic_period_ns"])
                for v in vs for rs in _runs(v)] for k, vs in by.items()}


def _plainly(recs: list[dict]) -> list[str]:
    """Per kernel measured both ways: HRTICK_DL's fit and throughput per CPU ms against
    the tick's over all of their boots, in words."""
    out = []
    for kernel in sorted({kernel_key(r) for r in recs}):
        by = _by_enforcement(recs, kernel)
        if set(by) != {"keep", "hrtick"}:
            continue
        r2 = _per_run(by, lambda rs, size, t: shapes.napi_run(rs, size, t)["fit"]["r2"])
        met = _per_run(by, lambda rs, size, t: not shapes.napi_goal(rs, size, t))
        fit = {k: sum(v >= shapes.NAPI_R2 for v in vs) for k, vs in r2.items()}
        words = (f"- {by['hrtick'][0]['kernel']} ({len(by['hrtick'])} boot(s) with HRTICK_DL, "
                 f"{len(by['keep'])} with the tick): the goal met in {sum(met['hrtick'])} of "
                 f"{len(met['hrtick'])} runs with HRTICK_DL, {sum(met['keep'])} of "
                 f"{len(met['keep'])} with the tick; R² ≥ {shapes.NAPI_R2} in "
                 f"{fit['hrtick']} of {len(r2['hrtick'])} runs with HRTICK_DL ("
                 + ", ".join(f"{v:.4f}" for v in r2["hrtick"]) + f"), {fit['keep']} of "
                 f"{len(r2['keep'])} with the tick ("
                 + ", ".join(f"{v:.4f}" for v in r2["keep"]) + "): "
                 + _order(r2["hrtick"], r2["keep"], "run's R²") + ".")
        eff = {k: [x for v in vs for x in _efficiency(v)] for k, vs in by.items()}
        if eff["keep"] and eff["hrtick"]:
            ratio = statistics.median(eff["hrtick"]) / statistics.median(eff["keep"])
            words += (f" The application read {ratio:.2f}x the kbit per ms of the pair's "
                      f"CPU it read with the tick ({spread(eff['hrtick'])} against "
                      f"{spread(eff['keep'])}: "
                      + _order(eff["hrtick"], eff["keep"], "row's") + ")"
                      + _per_boot(by, ratio) + ".")
        out.append(words)
    return out


def enforcement_section(recs: list[dict]) -> list[str]:
    """Every boot of the reserved variant, by kernel and enforcement: the fit per run, the
    goal, what the application read per ms of the pair's CPU."""
    if not any(enforcement(r) == "hrtick" for r in recs):
        return []
    recs = sorted(recs, key=lambda r: (kernel_key(r), enforcement(r) != "keep"))
    out = ["### The tick against HRTICK_DL", "",
           "Every boot of the reserved variant (the tables above show the newest of each "
           "kernel and enforcement), one line each. *kbit per ms of the pair's "
           "CPU* is what the application read over the flood divided by the IRQ thread's "
           "and the NAPI kthread's CPU time over it (median [min..max] over every row of "
           "every run of the boot): the path's throughput per unit of its budget actually "
           "used. With HRTICK_DL the scheduler arms a timer for the end of each budget "
           "instead of catching the overrun at the next 4 ms tick.", "",
           "| guest kernel | enforcement | boot | runs | application Mbit/s per 1 % of Q/T, "
           "per run | R² through the origin, per run | goal met | application kbit per ms "
           "of the pair's CPU | pair's share minus Q/T (points) |",
           "|---|---|---|---:|---|---|---|---:|---:|"]
    out += [_compare_row(r) for r in recs]
    plain = _plainly(recs)
    return [*out, "", *([*plain, ""] if plain else [])]
