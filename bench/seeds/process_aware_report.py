"""Lee et al.'s experiment (process_aware.py): the section of RESULTS.md from the records
of bench/seeds/data/process-aware-*.json. Every number is computed here from the records;
the goal is shapes.process_aware, judged per run and mode.
"""

from __future__ import annotations

from collections.abc import Iterator

import shapes
from report import provenance
from stats import spread

MODE = {"default": "kernel default (NIC thread SCHED_FIFO 50)",
        "coupled": "coupled (`serves: {{port: {port}}}`: NIC thread at the server's priority)"}


def _ms(values: list[float]) -> str:
    return spread([round(v / 1e6, 2) for v in values])


def _received_per_s(r: dict) -> float:
    """The server's datagrams per second: its share of what was sent, times the rate."""
    if not r["sender"]:
        return 0.0  # rate 0: no sender, the server was stopped after the jobs
    sent, got = int(r["sender"].split()[1]), int(r["server"].split()[1])
    return r["rate"] * got / sent if sent else 0.0


def _growth(rows: list[dict]) -> str:
    rows = sorted(rows, key=lambda r: r["rate"])
    lo, hi = shapes.pa_mean_ns(rows[0]["high"]), shapes.pa_mean_ns(rows[-1]["high"])
    return f"{100 * (hi / lo - 1):+.1f} %"


def _verdicts(rows: list[dict], mode: str) -> str:
    runs = sorted({r["run"] for r in rows})
    per = {run: [r for r in rows if r["run"] == run and r["mode"] == mode] for run in runs}
    goal = [run for run in runs
            if not shapes.process_aware(per[run], shapes.PA_GOAL, off_ns=None)]
    shape = [run for run in runs if not shapes.process_aware(per[run])]
    return (f"the high job's mean execution time from the lowest to the highest rate "
            f"{', '.join(_growth(per[run]) for run in runs)} in runs {', '.join(map(str, runs))}; "
            f"goal (≤ {100 * shapes.PA_GOAL:g} %, 0 misses) met in {len(goal)} of {len(runs)} "
            f"runs, shape (≤ {100 * shapes.PA_GROWTH:g} %, 0 misses, at most "
            f"{shapes.PA_OFF_NS / 1e3:g} µs a frame off its work at the highest rate) in "
            f"{len(shape)} of {len(runs)}")


def _off_us(rs: list[dict]) -> str:
    offs = [shapes.pa_off_mean_ns(r["high"]) for r in rs]
    return "-" if None in offs else spread([round(v / 1e3) for v in offs])


def by_rate(rows: list[dict], mode: str) -> Iterator[tuple[int, list[dict]]]:
    """(rate, the mode's rows at it) for every rate the mode has, rising."""
    for rate in sorted({r["rate"] for r in rows}):
        rs = [r for r in rows if r["rate"] == rate and r["mode"] == mode]
        if rs:
            yield rate, rs


def table(rows: list[dict], mode: str, port: int) -> list[str]:
    out = [f"**{MODE[mode].format(port=port)}**: {_verdicts(rows, mode)}.",
           "", "| rate (datagrams/s) | runs | high job: mean execution (ms) | high: max (ms) "
           "| high: off its work (µs a frame) | high: misses | low job: mean execution (ms) "
           "| low: misses | server received (datagrams/s) |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for rate, rs in by_rate(rows, mode):
        out.append(f"| {rate} | {len(rs)} | {_ms([shapes.pa_mean_ns(r['high']) for r in rs])} "
                   f"| {_ms([max(r['high']['exec_ns']) for r in rs])} | {_off_us(rs)} | "
                   f"{spread([shapes.pa_misses(r['high']) for r in rs])} of "
                   f"{len(rs[0]['high']['exec_ns'])} | "
                   f"{_ms([shapes.pa_mean_ns(r['low']) for r in rs])} | "
                   f"{spread([shapes.pa_misses(r['low']) for r in rs])} of "
                   f"{len(rs[0]['low']['exec_ns'])} | "
                   + (f"{spread([round(_received_per_s(r)) for r in rs])} |" if rate
                      else "no sender |"))
    return [*out, ""]


def section(rec: dict) -> list[str]:
    p, rows = rec["params"], rec["result"]["rows"]
    hi, lo = p["high"], p["low"]
    out = ["## Process-aware scheduling: Lee et al.'s experiment", "",
           f"On the NIC's CPU of the guest: a high-priority job (SCHED_FIFO {hi['prio']}, "
           f"{hi['work_ns'] / 1e6:g} ms of CPU work every {hi['period_ns'] / 1e6:g} ms), a "
           f"low-priority job (SCHED_FIFO {lo['prio']}, {lo['work_ns'] / 1e6:g} ms every "
           f"{lo['period_ns'] / 1e6:g} ms) and the UDP server they surround (SCHED_FIFO "
           f"{p['server_prio']}); the sender on the other vCPU sends {p['size']}-byte "
           f"datagrams to the server's port at each rate, paced in guest time, for "
           f"{p['seconds'] + 1} guest-seconds around the jobs' {p['seconds']}. Execution "
           "time is release to completion as the job measures it (the paper's quantity); "
           "a miss is a job that ends after its next release. *Off its work*: the mean over "
           "the frames of start to end less the CPU time the frame got (preempted, or in "
           "interrupts; `seedload player`), the mechanism itself. Rate 0: the jobs alone "
           "beside the bound server. Median [min..max] over the runs. The goal: coupled, "
           f"the high job's mean execution time at most {100 * shapes.PA_GOAL:g} % above "
           "its lowest rate's, and 0 misses; the shape the VM suite asserts "
           f"(shapes.process_aware): the same within {100 * shapes.PA_GROWTH:g} %, and at "
           f"most {shapes.PA_OFF_NS / 1e3:g} µs a frame off its work at the highest rate.",
           "",
           *provenance(rec), ""]
    for mode in p["modes"]:
        out += table(rows, mode, p["port"])
    out += ["The paper (Lee et al., Linux with its process-priority bottom half): the "
            "high-priority job's execution time +6 % at 900 packets/s and no deadline "
            "missed, where stock Linux missed many.", ""]
    return out
