"""Experiment 6 since the restore fix (latency.py records with CPU times): its tables, who
did the NIC's work, and the control that allows eth1's IRQ thread on the NIC's CPU again
(``--eth1-cpus``), as the restore defect did.

A record is of this kind when its parameters name ``eth1_cpus`` (None: plain). Each
measurement carries ``work_ns``: the CPU time (ns, /proc/PID/schedstat) eth0's IRQ
thread, eth1's IRQ thread and ksoftirqd of the NIC's CPU had over the flood.
"""

from __future__ import annotations

import statistics

from stats import grid_summary, spread, spread_bounded

LABELS = {"fifo50": "SCHED_FIFO 50 (default)", "reserved": "reserved"}
MS = 1_000_000


def is_work_record(rec: dict) -> bool:
    return "eth1_cpus" in rec["params"]


def control_of(rec: dict) -> str | None:
    return rec["params"]["eth1_cpus"]


def _rows(rec: dict, label: str) -> list[dict]:
    return [r for r in rec["result"]["results"] if r["label"] == label]


def _ms(values: list[int | None]) -> str:
    got = [v / MS for v in values if v is not None]
    if not got:
        return "not recorded"
    return (f"{statistics.median(got):.0f} [{min(got):.0f}..{max(got):.0f}]"
            if len(got) > 1 else f"{got[0]:.0f}")


def _names(rec: dict) -> tuple[str, str, str]:
    s = rec["result"]["setup"]
    return (s["nic"]["comm"], f"irq/{s['eth1_irq']}-eth1", f"ksoftirqd/{s['nic_cpu']}")


def _eth1_cpus_seen(rec: dict) -> str:
    """The CPUs eth1's IRQ thread was allowed on after each flood, and the CPUs it had last
    run on, over the record's measurements."""
    allowed = sorted({r["eth1_after"]["cpus"] for r in rec["result"]["results"]
                      if r.get("eth1_after")})
    last = sorted({r["eth1_after"]["cpu"] for r in rec["result"]["results"]
                   if r.get("eth1_after")})
    return (f"allowed on {' / '.join(allowed)} after the floods, last ran on CPU "
            f"{', '.join(map(str, last))}")


def _table(rec: dict) -> list[str]:
    p = rec["params"]
    eth0, eth1, ksoft = _names(rec)
    sent = p["seconds"] * 1_000_000_000 // p["flood_period_ns"]
    out = [f"| NIC thread | runs | cycles of the grid | cycles run | p99 | p99.9 | max | "
           f"datagrams the NIC thread took (of {sent}) | CPU ms: {eth0} | {eth1} | {ksoft} | "
           f"{eth1} migrations | eth0 interrupts |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, name in LABELS.items():
        rs = _rows(rec, label)
        if not rs:
            continue
        g = [grid_summary(r["hist"], p["interval_us"], p["hist_us"]) for r in rs]
        pk = [x for r in rs if (x := (r.get("rx") or {}).get("rx_packets")) is not None]
        w = [r["work_ns"] for r in rs]
        mig = [x["eth1_migrations"] for x in w if x["eth1_migrations"] is not None]
        irqs = [x["eth0_irqs"] for x in w if x.get("eth0_irqs") is not None]
        out.append(f"| {name} | {len(rs)} | {spread([x['cycles'] for x in g])} | "
                   f"{spread([x['ran'] for x in g])} | "
                   + " | ".join(spread_bounded([x[k] for x in g], p["hist_us"])
                                for k in ("p99", "p99.9", "max"))
                   + f" | {spread(pk) if pk else 'not recorded'} | "
                   + " | ".join(_ms([x[k] for x in w])
                                for k in ("nic_thread", "eth1_thread", "ksoftirqd"))
                   + f" | {spread(mig) if mig else 'not recorded'} | "
                   f"{spread(irqs) if irqs else 'not recorded'} |")
    return [*out, ""]


def _every_run(rec: dict) -> str:
    return "Every run (max µs; CPU ms eth0 / eth1 / ksoftirqd): " + "; ".join(
        f"{r['label']} run {r['run']}: {r['hist']['max_us']}; "
        + " / ".join(_ms([r["work_ns"][k]]) for k in ("nic_thread", "eth1_thread", "ksoftirqd"))
        for r in rec["result"]["results"])


def _who(task: dict) -> str:
    """A task's comm, and its policy where recorded (by the latest boots)."""
    return f"{task['comm']} ({task['sched']})" if task.get("sched") else task["comm"]


def _ran_most(rec: dict, top: int = 4) -> list[str]:
    """The tasks that ran most over each flood (recorded by the later boots)."""
    rows = [r for r in rec["result"]["results"] if r["work_ns"].get("top")]
    if not rows:
        return []
    return ["Ran most over each flood (ms, the CPU it last ran on): " + "; ".join(
        f"{r['label']} run {r['run']}: " + ", ".join(
            f"{_who(t)} {t['ns'] / MS:.0f} (CPU {t['cpu']})" for t in r["work_ns"]["top"][:top])
        for r in rows), ""]


def _maxes(recs: list[dict], label: str) -> list[int]:
    return [r["hist"]["max_us"] for rec in recs for r in _rows(rec, label)]


def _work(recs: list[dict], label: str, key: str) -> list[int | None]:
    return [r["work_ns"].get(key) for rec in recs for r in _rows(rec, label)]


def _ms_range(values: list[int]) -> str:
    lo, hi = min(values) / 1000, max(values) / 1000
    return f"{lo:.1f}" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}"


def _busiest(recs: list[dict], label: str, floor_ms: int = 100) -> str:
    """The tasks that ran at least ``floor_ms`` over a flood on the NIC's CPU (last ran
    there), over the measurements that record every task: the CPU time each had, in how
    many of those floods."""
    rows = [(rec["result"]["setup"]["nic_cpu"], r) for rec in recs for r in _rows(rec, label)
            if r["work_ns"].get("top")]
    seen: dict[str, list[int]] = {}
    sched: dict[str, str] = {}
    for cpu, r in rows:
        for t in r["work_ns"]["top"]:
            if t["cpu"] == cpu and t["ns"] >= floor_ms * MS:
                seen.setdefault(t["comm"], []).append(t["ns"])
                if t.get("sched"):
                    sched[t["comm"]] = t["sched"]
    if not rows:
        return "not recorded"
    return ", ".join(f"{_who({'comm': comm, 'sched': sched.get(comm)})} {_ms(list(ns))} ms "
                     f"in {len(ns)} of {len(rows)}"
                     for comm, ns in sorted(seen.items(), key=lambda x: -sum(x[1])))


SELF_NS = 500 * MS  # eth0's thread "did much of the work" of a flood above this
HOG_FACTOR = 5  # a control FIFO 50 max this many times the plain boots' largest


def values(plain: list[dict], control: list[dict]) -> dict[str, str]:
    """The numbers the findings quote (and RESULTS.md.tail, through ``reading``)."""
    out = {}
    for key, recs in (("plain", plain), ("ctl", control)):
        if not recs:
            continue
        f, r = _maxes(recs, "fifo50"), _maxes(recs, "reserved")
        out |= {f"exp6w_{key}_boots": str(len(recs)), f"exp6w_{key}_runs": str(len(f)),
                f"exp6w_{key}_fifo_max": _ms_range(f) + " ms",
                f"exp6w_{key}_rsv_max": _ms_range(r) + " ms",
                f"exp6w_{key}_ratio": f"{min(f) / max(r):.1f}-{max(f) / min(r):.1f}"}
        for who, k in (("eth0", "nic_thread"), ("eth1", "eth1_thread"),
                       ("ksoft", "ksoftirqd")):
            out[f"exp6w_{key}_fifo_{who}"] = _ms(_work(recs, "fifo50", k)) + " ms"
        for label in LABELS:
            out[f"exp6w_{key}_{label}_busiest"] = _busiest(recs, label)
            irqs = [x for x in _work(recs, label, "eth0_irqs") if x is not None]
            out[f"exp6w_{key}_{label}_irqs"] = spread(irqs) if irqs else "not recorded"
        out[f"exp6w_{key}_rsv_eth0"] = _ms(_work(recs, "reserved", "nic_thread")) + " ms"
        # the boots where eth1's thread moved between the CPUs within a FIFO 50 flood
        out[f"exp6w_{key}_moving_boots"] = ", ".join(
            rec["date"] for rec in recs
            if any((r["work_ns"]["eth1_migrations"] or 0) > 1 for r in _rows(rec, "fifo50")))
        # the boots where eth0's own thread did much of the work in a FIFO 50 flood
        out[f"exp6w_{key}_self_boots"] = ", ".join(
            rec["date"] for rec in recs
            if any((r["work_ns"]["nic_thread"] or 0) > SELF_NS for r in _rows(rec, "fifo50")))
    if plain and control:
        worst = max(_maxes(plain, "fifo50"))
        above = [m for m in _maxes(control, "fifo50") if m > HOG_FACTOR * worst]
        out["exp6w_ctl_above"] = (f"{len(above)} of {len(_maxes(control, 'fifo50'))} runs "
                                  f"had a max over {HOG_FACTOR} times the largest without it "
                                  f"({worst / 1000:.1f} ms)")
    return out


# the numbers RESULTS.md.tail quotes (the rest are the findings')
PROSE = ("exp6w_plain_boots", "exp6w_plain_fifo_max", "exp6w_plain_rsv_max",
         "exp6w_ctl_fifo_max", "exp6w_ctl_fifo_eth1", "exp6w_plain_fifo_eth1")


def prose_values(plain: list[dict], control: list[dict]) -> dict[str, str]:
    v = values(plain, control)
    return {k: v[k] for k in PROSE if k in v}


FINDINGS = """\
Over all runs of these boots (CPU time and interrupts per flood of {seconds} s: median \
[min..max] over the runs):

- Plain ({exp6w_plain_boots} boots, {exp6w_plain_runs} runs each way): FIFO 50 max \
{exp6w_plain_fifo_max}, reserved max {exp6w_plain_rsv_max} (FIFO 50 / reserved \
{exp6w_plain_ratio}x, from the smallest to the largest pair). Over the FIFO 50 floods \
{eth0} had {exp6w_plain_fifo_eth0}, {eth1} {exp6w_plain_fifo_eth1}, {ksoft} \
{exp6w_plain_fifo_ksoft}; eth0 raised {exp6w_plain_fifo50_irqs} interrupts.
- Control, {eth1} allowed on {cpus} ({exp6w_ctl_boots} boots, {exp6w_ctl_runs} runs each \
way): FIFO 50 max {exp6w_ctl_fifo_max}, reserved max {exp6w_ctl_rsv_max} \
({exp6w_ctl_ratio}x). Over the FIFO 50 floods {eth0} had {exp6w_ctl_fifo_eth0}, {eth1} \
{exp6w_ctl_fifo_eth1}, {ksoft} {exp6w_ctl_fifo_ksoft}; eth0 raised \
{exp6w_ctl_fifo50_irqs} interrupts.
- Reserved, {eth0} had {exp6w_plain_rsv_eth0} (plain) and {exp6w_ctl_rsv_eth0} (control) \
per flood; eth0 raised {exp6w_plain_reserved_irqs} and {exp6w_ctl_reserved_irqs} \
interrupts.
- The tasks that ran 100 ms or more on the NIC's CPU over a flood, in the boots that \
record every task (CPU time, in how many of their floods): plain, FIFO 50: \
{exp6w_plain_fifo50_busiest}; plain, reserved: {exp6w_plain_reserved_busiest}; control, \
FIFO 50: {exp6w_ctl_fifo50_busiest}; control, reserved: {exp6w_ctl_reserved_busiest}.
"""

DEFECT_WORDS = (
    "These boots ({dates}, commits {commits}; {seconds} guest-seconds per measurement) ran "
    "before irqresd's restore gave an IRQ thread back the CPUs of its IRQ: irqresd's apply "
    "at boot, then the move of eth1's interrupt to the sender's CPU while the NIC's "
    "partition existed, left eth1's IRQ thread (SCHED_FIFO 90) allowed on both CPUs, the "
    "NIC's included, from the first restore on. Their records do not say where it ran; "
    "the control above puts it back there by hand. The section *Experiment 6 with "
    "HRTICK_DL: the budget enforced at its end* below was recorded before the fix as "
    "well.")

# what the findings mean: written for the boots recorded (2026-11-26), read with them
READING = """\
**What this shows.** The hog returns with the control, and the hypothesis holds. In \
every FIFO 50 flood of the control {eth1} ran on the NIC's CPU (it last ran there), \
{exp6w_ctl_fifo_eth1} per flood against {exp6w_plain_fifo_eth1} without the control, \
where it stays on CPU 0 and serves its own traffic alone: at SCHED_FIFO 90, above the \
task, its bottom half ran eth0's receive polls pending on that CPU. {eth0} at \
SCHED_FIFO 50 ran {exp6w_ctl_fifo_eth0} beside it. Between the two threads above it the \
task missed most of its cycles: {exp6w_ctl_above}. How the two shared the CPU varied. \
In most control boots {eth1} moved to the NIC's CPU once and stayed, {ksoft} ran almost \
nothing, eth0's ring emptied at priority 90, its NAPI completed and its interrupt came \
back thousands of times per flood, and {eth0} ran most of the rest of the flood. In the \
boot of {exp6w_ctl_moving_boots}, {eth1} moved between the CPUs within a flood (over \
a dozen migrations) and ran up to two seconds, eth0 raised hundreds of interrupts, \
{ksoft} and rcuc/1 still got some of the work, and the receiver got far more of the \
datagrams; the task's max was lower there, down to tens of milliseconds in one run. \
Without the control the floods went two ways, both with FIFO 50's max at tens of \
milliseconds. In most, eth0's NAPI stayed scheduled (tens to hundreds of interrupts per \
flood) and its polls ran in threads below the task: {ksoft} (SCHED_OTHER), the timer \
softirq thread ktimers/1 and, in some floods, the RCU callback thread rcuc/1 (both \
SCHED_FIFO 1; a thread's bottom half runs whatever softirq is pending on its CPU). In \
the others (in the boots of {exp6w_plain_self_boots}: {eth0} ran over half a second in \
a flood) {eth0} did much of the work itself, above the task, and eth0's interrupts came \
back where they were counted (a thousand or more per flood); but alone, it leaves the \
task the CPU between its polls. The earlier tables' seconds were the restore defect's. \
Reserved, {eth0} ran far below the 2 ms every 10 ms it may, and {ksoft} and ktimers/1 \
did eth0's work; with the control as well, since the NIC's partition keeps {eth1} off \
the NIC's CPU (taskset gave it CPU 0 alone: the partition's CPU is not the root's to \
give)."""


def section(plain: list[dict], control: list[dict]) -> list[str]:
    """Experiment 6's newer boots: the plain ones, then the control's; then the findings
    (numbers from ``values``) and what they mean (READING)."""
    recs = plain + control
    p = recs[0]["params"]
    eth0, eth1, ksoft = _names(recs[0])
    out = ["### Since the restore fix, and with the defect's placement brought back by hand",
           "",
           f"The same experiment at {p['seconds']} guest-seconds per measurement, "
           f"{p['runs']} runs per boot, each measurement also recording who did the NIC's "
           f"work: the CPU time {eth0}, {eth1} (the sender's NIC, SCHED_FIFO 90) and "
           f"{ksoft} had over the flood (/proc/PID/schedstat, before and after), how "
           f"often {eth1} moved between CPUs and how many interrupts eth0 raised (over "
           "all CPUs; not recorded in the first boots). eth0's receive polls (NAPI) run "
           "in the bottom half of whichever thread runs softirqs on its CPU, and the guest "
           "kernels have no IRQ_TIME_ACCOUNTING: a thread's CPU time includes the softirq "
           "work it ran, so the three say who did eth0's work. *Control*: before each "
           f"measurement {eth1} allowed on the CPUs named (`latency.py --eth1-cpus`), "
           "the placement the restore defect left it in. Latencies in µs of guest time "
           "over the intended cycle grid, CPU times in ms; each cell: median [min..max] "
           "over the runs.", ""]
    for rec in recs:
        ctl = control_of(rec)
        what = f"control: {eth1} allowed on {ctl}" if ctl else "plain"
        out += [f"**{what[0].upper()}{what[1:]}.** Date {rec['date']}, commit `{rec['commit']}`, "
                f"guest kernel {rec['kernel']}, testbed: {rec['testbed']}; "
                f"{rec['wall_s']:.0f} s wall, host load average "
                f"{rec['loadavg_before'][0]:.1f} → {rec['loadavg_after'][0]:.1f}.",
                f"Command (root, top of the checkout): `{rec['command']}`",
                f"{eth1}: {_eth1_cpus_seen(rec)}.", "", *_table(rec), _every_run(rec), "",
                *_ran_most(rec)]
    v = values(plain, control)
    if plain and control:
        words = {"seconds": p["seconds"], "eth0": eth0, "eth1": eth1, "ksoft": ksoft,
                 "cpus": control_of(control[0]), **v}
        out += [FINDINGS.format(**words), READING.format(**words), ""]
    return out
