"""The VM suite's guests one at a time against two at once, side by side in one run.

    python3 bench/vmgroups/compare.py --rounds 3 --out /var/tmp/vmgroups
    python3 bench/vmgroups/compare.py --rounds 3 tests/vm/test_boot.py tests/vm/test_daemon.py

Each round runs the same tests (default: the boot and daemon scenarios on the default
kernels) through tests/vm/groups.py with one group and with two, in alternating order
(so a change in the host's load over the run falls on both), and records each wall time
and whether every test passed. Prints a Markdown table: the wall time of each, the
median over the rounds, and the median of the per-round ratios (one group / two groups).
The image is made (or taken from its cache) before the first round, so no round pays for
it; the package is built by the first round's first session and found up to date after.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "vm"))

import vmrunner  # noqa: E402
from groups import collect, deal, load_durations, run  # noqa: E402

DEFAULT_TESTS = ["tests/vm/test_boot.py",
                 "tests/vm/test_daemon.py::test_stop_and_kill_end_consistent"]


def once(ids: list[str], groups: int, out: Path, workdir: str) -> dict:
    dealt = deal(ids, groups, load_durations())
    t0 = time.monotonic()
    results = run(dealt, sys.executable, workdir, out)
    wall = time.monotonic() - t0
    return {"groups": groups, "wall_s": round(wall, 1),
            "passed": all(status == 0 for _, status, _ in results),
            "load_after": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of both (3)")
    ap.add_argument("--out", type=Path, default=Path("/var/tmp/vmgroups"),
                    help="logs, junit XML and results.json")
    ap.add_argument("paths", nargs="*", default=DEFAULT_TESTS,
                    help="the tests of each round (default: test_boot.py and test_daemon's "
                         "stop scenario)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds: at least 1, not {args.rounds}")
    ids = collect(sys.executable, args.paths)
    for name in {vmrunner.image_name("amd64", k) for k in vmrunner.DEFAULT_KERNELS}:
        vmrunner.ensure_image(name)  # once, outside the rounds
    rows = []
    for r in range(args.rounds):
        for groups in ((1, 2) if r % 2 == 0 else (2, 1)):
            res = once(ids, groups, args.out / f"r{r}-g{groups}",
                       f"/var/tmp/irqres-vm-cmp-r{r}-{groups}")
            res["round"] = r
            rows.append(res)
            print(f"compare: round {r}, {groups} group(s): {res['wall_s']} s, "
                  f"{'passed' if res['passed'] else 'FAILED'}", flush=True)
    (args.out / "results.json").write_text(json.dumps({"tests": ids, "rows": rows}, indent=1))
    one = [x["wall_s"] for x in rows if x["groups"] == 1]
    two = [x["wall_s"] for x in rows if x["groups"] == 2]
    ratios = [a / b for a, b in zip(one, two, strict=True)]
    print(f"\n{len(ids)} tests: {', '.join(ids)}\n")
    print("| groups | wall s per round | median s | all passed |")
    print("|---:|---|---:|---|")
    for g, w in ((1, one), (2, two)):
        ok = all(x["passed"] for x in rows if x["groups"] == g)
        print(f"| {g} | {', '.join(f'{v:.0f}' for v in w)} | {statistics.median(w):.0f} | "
              f"{'yes' if ok else 'no'} |")
    print(f"\none group / two groups, per round: {', '.join(f'{x:.2f}' for x in ratios)}; "
          f"median {statistics.median(ratios):.2f}")
    return 0 if all(x["passed"] for x in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
