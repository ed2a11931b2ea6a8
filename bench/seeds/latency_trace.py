"""What delayed the real-time task of experiment 6, cycle by cycle, from the traces of
``latency_hrtick.py --trace KB``.

Each traced row left a trace of the NIC's CPU (tests/vm/guest/seeds.py,
LATENCY_TRACE_EVENTS). For every cycle of cyclictest's measuring thread: the time its
timer was due (``hrtimer_start``'s expires, CLOCK_MONOTONIC, the trace's clock), when it
fired (``hrtimer_expire_entry``) and when the thread was switched in (``sched_switch``).
The cycle's lateness is switch-in minus due (cyclictest adds its own clock read); the time
in between is laid out by what had the CPU: a hard interrupt handler or the local timer
interrupt (``hardirq <name>``), a soft IRQ (``softirq <vector> in <task>``, the task
that ran it), or a task (its comm; ``swapper`` is idle); and the same from the timer's
firing on, while the task was runnable. A cycle whose due time has passed when
cyclictest sleeps again arms no timer and is not found. The report gives, per trace, the
lateness quantiles and, for the cycles late by more than ``--late`` µs (default: the
trace's p99), the mean time each of these took in them, the silent stretches (over
``--silent`` µs without any event on the CPU) and the worst cycles one by one.

    python3 bench/seeds/latency_trace.py bench/seeds/data/latency-hrtick-...-trace-*.json
        [--late US] [--silent US] [--worst N] [--json]
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?"
                  r"(?P<ts>\d+\.\d+):\s+(?P<event>\w+):\s*(?P<rest>.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


class TraceError(Exception):
    """A trace or record this script cannot read; the message names it and the cause."""


def report_lines(dat: Path) -> list[str]:
    try:
        out = subprocess.run(["trace-cmd", "report", "-t", "-i", str(dat)], check=True,
                             capture_output=True, text=True)
    except FileNotFoundError:
        raise TraceError("trace-cmd is not installed (apt install trace-cmd)") from None
    except subprocess.CalledProcessError as e:
        raise TraceError(f"{dat}: trace-cmd report failed: "
                         f"{(e.stderr or '').strip()[-300:]}") from None
    return out.stdout.splitlines()


def parse(lines: list[str]) -> list[tuple[int, str, str, int, dict, int]]:
    """(ts ns, event, comm, pid, fields, cpu) in trace order."""
    events = []
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        sec, _, frac = m["ts"].partition(".")
        ts = int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
        rest = m["rest"]
        fields = dict(FIELD.findall(rest))
        if "function" in fields:  # "hrtimer_wakeup/0x0": the symbol and its offset
            fields["function"] = fields["function"].partition("/")[0]
        if m["event"] == "sched_switch":
            fields = _switch(rest)
        elif m["event"] == "softirq_entry":
            v = re.search(r"action=(\w+)", rest)
            fields["action"] = v[1] if v else fields.get("vec", "?")
        events.append((ts, m["event"], m["comm"].strip(), int(m["pid"]), fields,
                       int(m["cpu"])))
    return events


#: trace-cmd's sched_switch: "prev:pid [prio] S ==> next:pid [prio]"
SWITCH = re.compile(r"^(?P<prev_comm>.+):(?P<prev_pid>\d+) \[-?\d+\] \S+ ==> "
                    r"(?P<next_comm>.+):(?P<next_pid>\d+) \[-?\d+\]")


def _switch(rest: str) -> dict:
    m = SWITCH.match(rest.strip())
    if m:
        return {"next_comm": m["next_comm"], "next_pid": int(m["next_pid"])}
    m = re.search(r"next_comm=(.+?) next_pid=(\d+)", rest)  # the kernel's own format
    if not m:
        raise ValueError(f"sched_switch not understood: {rest!r}")
    return {"next_comm": m[1], "next_pid": int(m[2])}


def segments(events: list) -> tuple[list[int], list[int], list[str]]:
    """The trace cut into spans, each with what had the CPU: starts, ends, labels. Hard
    interrupts nest on the CPU; a soft IRQ belongs to the task that runs it (on
    PREEMPT_RT that task can be preempted in the middle of one)."""
    starts, ends, labels = [], [], []
    task, pid = None, None
    irq: list[str] = []
    soft: dict[int, list[str]] = defaultdict(list)
    last = events[0][0] if events else 0
    for ts, ev, comm, who, f, _cpu in events:
        if task is None:
            task, pid = comm, who
        label = (f"hardirq {irq[-1]}" if irq else
                 f"softirq {soft[pid][-1]} in {task}" if soft[pid] else task)
        if ts > last:
            starts.append(last)
            ends.append(ts)
            labels.append(label)
        last = ts
        if ev == "sched_switch":
            task, pid = f["next_comm"], f["next_pid"]
        elif ev == "irq_handler_entry":
            irq.append(f.get("name", f.get("irq", "?")))
        elif ev == "local_timer_entry":
            irq.append("local_timer")
        elif ev in ("irq_handler_exit", "local_timer_exit") and irq:
            irq.pop()
        elif ev == "softirq_entry":
            soft[who].append(f["action"])
        elif ev == "softirq_exit" and soft[who]:
            soft[who].pop()
    return starts, ends, labels


def cycles(events: list) -> list[dict]:
    """cyclictest's measuring thread's cycles: due, fired, switched in."""
    starts = defaultdict(int)
    for _, ev, comm, pid, f, _cpu in events:
        if ev == "hrtimer_start" and comm.startswith("cyclictest") and \
                f.get("function") == "hrtimer_wakeup":
            starts[pid] += 1
    if not starts:
        return []
    tid = max(starts, key=starts.get)
    out, cur = [], None
    for ts, ev, _comm, pid, f, _cpu in events:
        if ev == "hrtimer_start" and pid == tid and f.get("function") == "hrtimer_wakeup":
            cur = {"due": int(f["expires"]), "timer": f["hrtimer"]}
        elif cur and ev == "hrtimer_expire_entry" and f.get("hrtimer") == cur["timer"]:
            cur["fired"] = ts
        elif cur and "fired" in cur and ev == "sched_switch" and f["next_pid"] == tid:
            cur["in"] = ts
            out.append(cur)
            cur = None
    return out


#: a stretch of the traced CPU without a single event longer than this is "silent" (an
#: e1000 packet takes 300-360 µs of this guest's time, docs/enforcement.md)
SILENT_NS = 1_000_000


def silent(c: dict, seg: tuple, silent_ns: int = SILENT_NS) -> tuple[int, int]:
    """(total, longest) of the silent stretches between due and switch-in: spans between
    two consecutive events of the CPU longer than ``silent_ns``. On the icount testbed the
    two vCPUs take turns on one host thread, and guest time goes on by the instructions
    of either: a vCPU waiting for its turn shows as such a stretch (docs/enforcement.md)."""
    starts, ends, _ = seg
    total = longest = 0
    i = max(bisect.bisect_right(starts, c["due"]) - 1, 0)
    while i < len(starts) and starts[i] < c["in"]:
        span = min(ends[i], c["in"]) - max(starts[i], c["due"])
        if ends[i] - starts[i] > silent_ns and span > 0:
            total += span
            longest = max(longest, span)
        i += 1
    return total, longest


def breakdown(c: dict, seg: tuple) -> dict[str, int]:
    starts, ends, labels = seg
    got: dict[str, int] = defaultdict(int)
    i = max(bisect.bisect_right(starts, c["due"]) - 1, 0)
    while i < len(starts) and starts[i] < c["in"]:
        lo, hi = max(starts[i], c["due"]), min(ends[i], c["in"])
        if hi > lo:
            got[labels[i]] += hi - lo
        i += 1
    return dict(got)


def quantile(xs: list[int], q: float) -> int:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0


def _means_us(total: dict[str, int], n: int) -> dict[str, float]:
    """Each total (ns) over ``n`` cycles, in µs, largest first."""
    return {k: round(v / n / 1000, 1) for k, v in
            sorted(total.items(), key=lambda kv: -kv[1])} if n else {}


def analyse(dat: Path, late_us: float | None, worst: int, silent_ns: int = SILENT_NS) -> dict:
    events = parse(report_lines(dat))
    # the CPU cyclictest runs on (the guest traces that one alone)
    cpus = defaultdict(int)
    for e in events:
        if e[1] == "hrtimer_start" and e[2].startswith("cyclictest"):
            cpus[e[5]] += 1
    if cpus:
        cpu = max(cpus, key=cpus.get)
        events = [e for e in events if e[5] == cpu]
    seg = segments(events)
    cs = cycles(events)
    lat = [c["in"] - c["due"] for c in cs]
    threshold = int(late_us * 1000) if late_us is not None else quantile(lat, 0.99)
    late = [c for c in cs if c["in"] - c["due"] > threshold]
    total: dict[str, int] = defaultdict(int)
    for c in cs:
        c["silent"] = silent(c, seg, silent_ns)
    runnable: dict[str, int] = defaultdict(int)
    for c in late:
        c["by"] = breakdown(c, seg)
        for k, v in c["by"].items():
            total[k] += v
        for k, v in breakdown({"due": c["fired"], "in": c["in"]}, seg).items():
            runnable[k] += v
    late.sort(key=lambda c: c["in"] - c["due"], reverse=True)
    return {
        "trace": dat.name, "events": len(events), "cycles": len(cs),
        "silent_over_us": silent_ns / 1000,
        "lateness_us": {q: round(quantile(lat, p) / 1000, 1) for q, p in
                        (("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999), ("max", 1.0))},
        "late_over_us": round(threshold / 1000, 1), "late_cycles": len(late),
        "timer_late_us_max": round(max((c["fired"] - c["due"] for c in cs), default=0)
                                   / 1000, 1),
        "silent_in_late_us": {"mean": round(sum(c["silent"][0] for c in late) / len(late)
                                            / 1000, 1) if late else 0,
                              "mean_lateness": round(sum(c["in"] - c["due"] for c in late)
                                                     / len(late) / 1000, 1) if late else 0},
        "lateness_less_silent_us": {
            q: round(quantile([c["in"] - c["due"] - c["silent"][0] for c in cs], p) / 1000, 1)
            for q, p in (("p99", 0.99), ("max", 1.0))},
        "mean_in_late_us": _means_us(total, len(late)),
        # the same from the timer's firing on, while the task was runnable
        "mean_runnable_in_late_us": _means_us(runnable, len(late)),
        "worst": [{"lateness_us": round((c["in"] - c["due"]) / 1000, 1),
                   "timer_late_us": round((c["fired"] - c["due"]) / 1000, 1),
                   "silent_us": round(c["silent"][0] / 1000, 1),
                   "longest_silent_us": round(c["silent"][1] / 1000, 1),
                   "by_us": {k: round(v / 1000, 1) for k, v in
                             sorted(c["by"].items(), key=lambda kv: -kv[1])}}
                  for c in late[:worst]],
    }


def traces_of(record: Path) -> list[tuple[dict, Path]]:
    """The traced rows of a latency_hrtick.py record and their trace files."""
    try:
        rec = json.loads(record.read_text())
        raw = Path(rec["raw_out"])
        rows = rec["result"]["results"]
    except OSError as e:
        raise TraceError(f"{record}: cannot read it: {e.strerror}") from None
    except (ValueError, KeyError, TypeError):
        raise TraceError(f"{record}: not a record of latency_hrtick.py (JSON with raw_out "
                         f"and result.results)") from None
    return [(r, raw / r["trace"]["file"]) for r in rows if r.get("trace")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record", type=Path, nargs="+",
                    help="latency_hrtick.py's record (JSON) of a --trace run, or a .dat")
    ap.add_argument("--late", type=float, help="lay out the cycles later than this, µs "
                    "(default: each trace's own p99)")
    ap.add_argument("--worst", type=int, default=3, help="the worst cycles shown one by one")
    ap.add_argument("--silent", type=float, default=SILENT_NS / 1000, metavar="US",
                    help="a stretch without any event on the CPU longer than this counts as "
                         "silent (default %(default)g)")
    ap.add_argument("--json", action="store_true", help="the layouts as JSON, one object "
                    "per traced row")
    args = ap.parse_args()
    if args.silent <= 0 or args.worst < 0 or (args.late is not None and args.late < 0):
        ap.error("--silent must be above 0, --worst and --late at least 0")
    try:
        results = _layouts(ap, args)
    except TraceError as e:
        ap.error(str(e))
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    _print(results)
    return 0


def _layouts(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[dict]:
    results = []
    for path in args.record:
        pairs = ([({"label": path.stem, "run": ""}, path)] if path.suffix == ".dat"
                 else traces_of(path))
        if not pairs:
            ap.error(f"{path}: no traced row (run latency_hrtick.py with --trace KB)")
        for row, dat in pairs:
            if not dat.exists():
                ap.error(f"{dat}: missing (the record's raw_out was removed?)")
            a = analyse(dat, args.late, args.worst, int(args.silent * 1000))
            a["label"], a["run"] = row["label"], row["run"]
            a["cyclictest_max_us"] = (row.get("hist") or {}).get("max_us")
            results.append(a)
    return results


def _print(results: list[dict]) -> None:
    for a in results:
        print(f"{a['label']} run {a['run']}: {a['cycles']} cycles, lateness {a['lateness_us']}"
              f" µs (cyclictest's max {a['cyclictest_max_us']}), timer fired late by at most "
              f"{a['timer_late_us_max']} µs")
        print(f"  {a['late_cycles']} cycles later than {a['late_over_us']} µs, "
              f"{a['silent_in_late_us']['mean']} of their mean "
              f"{a['silent_in_late_us']['mean_lateness']} µs silent (stretches over "
              f"{a['silent_over_us']:g} µs without an event); lateness less the "
              f"silent stretches {a['lateness_less_silent_us']} µs; mean µs in them: "
              f"{a['mean_in_late_us']}; from the timer's firing on: "
              f"{a['mean_runnable_in_late_us']}")
        for w in a["worst"]:
            print(f"    {w['lateness_us']} µs (timer {w['timer_late_us']}, silent "
                  f"{w['silent_us']}, longest {w['longest_silent_us']}): {w['by_us']}")


if __name__ == "__main__":
    sys.exit(main())
