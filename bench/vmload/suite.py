"""Run the whole VM suite (what `make test-vm` runs) as several pytest processes at once.

    python3 bench/vmload/hold_load.py --target 8 --log OUT/load.jsonl -- \\
        python3 bench/vmload/suite.py --groups 3 --out OUT

The tests are collected once (`pytest --collect-only`), dealt to ``--groups`` groups so
that each group's expected time is about the same (from ``--durations`` — a junit XML
of an earlier run — or one unit a test), and each group runs its tests in one pytest
process with its own work directory; the guests of the groups share the machine's
CPUs. Each group writes OUT/gN.xml (junit) and OUT/gN.log. The exit status is 0 when
every group passed. The dealing and the groups' processes are tests/vm/groups.py's.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "vm"))

from groups import collect, deal, junit_cases, run  # noqa: E402  (the suite's own dealer)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=3, help="pytest processes at once (3)")
    ap.add_argument("--out", type=Path, required=True, help="directory for logs and XML")
    ap.add_argument("--durations", type=Path,
                    help="junit XML of an earlier run, to balance the groups")
    ap.add_argument("--workdir", default="/var/tmp/irqres-vm-load",
                    help="prefix of each group's IRQRES_VM_WORKDIR")
    ap.add_argument("paths", nargs="*", default=["tests/vm"],
                    help="what to run (default tests/vm)")
    args = ap.parse_args(argv)
    if args.groups < 1:
        ap.error(f"--groups: must be at least 1, not {args.groups}")
    if args.durations and not args.durations.is_file():
        ap.error(f"--durations: {args.durations}: no such file")
    python = sys.executable
    ids = collect(python, args.paths)
    times = ({node: secs for node, secs, _ in junit_cases(args.durations)}
             if args.durations else {})
    results = run(deal(ids, args.groups, times), python, args.workdir, args.out)
    failed = [n for n, status, _ in results if status != 0]
    print(f"suite: groups failed: {failed or 'none'}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
