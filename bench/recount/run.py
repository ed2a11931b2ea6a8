"""What irqresd's recount costs on 7.x (docs/vm.md, "What 7.3 changes").

From 6.19 irqresd makes the kernel count its root domains again (the partition written
``member`` then ``root``) after each change to a thread that stays beside its partition:
two rebuilds of the root domains, each rewriting the affinity of the root cgroup's tasks.
In the PREEMPT_RT guest (demo.yaml: the NIC thread reserved 2 ms / 10 ms beside
``irqres.cpu0``), cyclictest runs on CPU 1 (SCHED_FIFO 80, 1 ms) for a phase with no
change and a phase in which the NIC's budget is set through irqresd's ``set-budget``
request every ``--every-ms``, alternating between two runtimes; each request's round trip
is timed. 7.3 recounts, 6.12
does not (it counts the thread where it runs): the same phases on 6.12 are the effect
with the cause removed.

    python3 bench/recount/run.py [--runs 3] [--seconds 10] [--every-ms 100]

Writes bench/recount/RESULTS.md and data/<kernel>-<date>.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "vm"))

import vmrunner  # noqa: E402

RUNTIMES = [2_000_000, 1_800_000]   # alternated; within 7.3's floor (0.5 ms every 10 ms)


def boot(kernel: str, args: argparse.Namespace, work: Path) -> dict:
    import yaml

    image = vmrunner.ensure_image(vmrunner.image_name("amd64", kernel))
    profile = vmrunner.REPO / "profiles" / "demo.yaml"
    nic = yaml.safe_load(profile.read_text())["targets"][0]
    stage = vmrunner.stage_checkout(work / f"stage-{image.name}", image)
    vm = vmrunner.VM(image, stage, "recount_cost", name=f"bench-recount-{kernel}",
                     profile=profile, enable_irqresd=True, workdir=work / kernel,
                     kernel=kernel, timeout_s=1800,
                     params={"nic_target": nic, "seconds": args.seconds,
                             "every_ms": args.every_ms, "runtimes": RUNTIMES,
                             "runs": args.runs})
    d = vm.run().data
    if "error" in d:
        raise SystemExit(d.get("traceback", d["error"]))
    return d


def summary(d: dict) -> dict:
    """Per phase label: cyclictest max and avg per run (µs), and the set-budget calls'
    median and largest duration (µs) over all runs."""
    out: dict = {}
    for label in ("quiet", "changes"):
        rows = [r for r in d["rows"] if r["label"] == label]
        calls = [c["ns"] for r in rows for c in r["calls"]]
        out[label] = {"max_us": [r["cyclictest"].get("max_us") for r in rows],
                      "avg_us": [r["cyclictest"].get("avg_us") for r in rows],
                      "calls": len(calls),
                      "refused": sum(1 for r in rows for c in r["calls"] if c["rc"]),
                      "call_median_us": round(statistics.median(calls) / 1e3) if calls else None,
                      "call_max_us": round(max(calls) / 1e3) if calls else None}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10, help="length of each phase")
    ap.add_argument("--every-ms", type=int, default=100, help="one set-budget this often")
    ap.add_argument("--kernels", default="6.12,7.3")
    args = ap.parse_args()
    command = "python3 bench/recount/run.py " + " ".join(map(shlex.quote, sys.argv[1:]))
    work = Path("/var/tmp/irqres-vm/bench-recount")
    commit = subprocess.run(["git", "-C", str(vmrunner.REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    stamp = datetime.datetime.now(datetime.UTC)
    lines = ["# The cost of irqresd's recount on 7.x", "",
             f"Date {stamp:%Y-%m-%d %H:%M} UTC, commit `{commit}`, command `{command}` (root, "
             "top of the checkout). Testbed: QEMU `-accel tcg -smp 2 -m 1024` (guest time "
             "follows the host's: absolute latencies are emulation's, compare the phases "
             "side by side), each kernel in the Debian userland it ships with "
             "(vmrunner.IMAGES), e1000, demo.yaml (NIC 2 ms / 10 ms beside "
             f"`irqres.cpu0`), host load average {open('/proc/loadavg').read().split()[0]} "
             "at the start.", "",
             "cyclictest on CPU 1 (SCHED_FIFO 80, every 1 ms) per phase, per run; *changes*: "
             f"a `set-budget` request for the NIC every {args.every_ms} ms (its round trip "
             "timed), alternating "
             f"{RUNTIMES[0] / 1e6:g} and {RUNTIMES[1] / 1e6:g} ms.", "",
             "| kernel | recount | phase | max µs per run | avg µs per run | set-budget requests "
             "(refused) | round trip median / max µs |", "|---|---|---|---|---|---:|---|"]
    data = {}
    t0 = time.monotonic()
    for kernel in args.kernels.split(","):
        d = boot(kernel, args, work)
        s = summary(d)
        data[kernel] = {"summary": s, "recounts_logged": d["recounts_logged"], "raw": d}
        for label, v in s.items():
            lines.append(f"| {d['kernel_release']} | {d['recounts_logged']} logged | {label} | "
                         f"{v['max_us']} | {v['avg_us']} | {v['calls']} ({v['refused']}) | "
                         f"{v['call_median_us']} / {v['call_max_us']} |")
    lines += ["", f"{time.monotonic() - t0:.0f} s wall. *recount*: the lines irqresd logged "
              "\"counted the deadline bandwidth of its root domains again\" in that boot "
              "(one per apply or set-budget of the staying thread; none on 6.12).", ""]
    (HERE / "data").mkdir(exist_ok=True)
    (HERE / "data" / f"recount-{stamp:%Y%m%dT%H%M%S}.json").write_text(
        json.dumps({"command": command, "commit": commit, "params": vars(args),
                    "result": {k: {kk: vv for kk, vv in v.items() if kk != "raw"}
                               for k, v in data.items()},
                    "rows": {k: v["raw"]["rows"] for k, v in data.items()}}, indent=1))
    (HERE / "RESULTS.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
