"""A VM scenario's boot with the package installed in the guest against the image's layer.

    python3 bench/vmboot/compare.py --rounds 3 --kernels 6.1,6.12 --out /var/tmp/vmboot

Until the layer (vmrunner.installed_layer) every guest of the VM suite ran ``dpkg -i`` of
the checkout's package in its own boot, under emulation; now dpkg runs once per package,
in the layer's boot, and every guest boots the layer. Each round boots the ``boot_basics``
scenario (tests/vm/test_boot.py's) once each way on each kernel, in alternating order (so
a change in the host's load falls on both), and records per guest, in host wall seconds
from QEMU's start: when the scenario began (the guest's first mark) and when QEMU exited;
and the install step's own time from the guest's install.log. The layer is made (or
found) before the first round and its making is timed apart: a run pays it once.

Prints a Markdown table (medians over the rounds and the median of the per-round ratios,
installed in the guest / layer) and writes every record to ``--out``/results.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "vm"))

import vmrunner  # noqa: E402

WAYS = {"in guest": False, "layer": True}


def clock_s(stamp: str) -> float:
    h, m, s = stamp.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def install_seconds(log: str) -> float | None:
    """install.log's first and last stamps ("payload install: HH:MM:SS" ... "done: ...")."""
    stamps = re.findall(r"payload install(?: done)?: (\d\d:\d\d:\d\d)", log)
    return clock_s(stamps[-1]) - clock_s(stamps[0]) if len(stamps) == 2 else None


def boot(image: vmrunner.Image, stage: vmrunner.Stage, kernel: str, layered: bool,
         work: Path) -> dict:
    vm = vmrunner.VM(image, stage, "boot_basics", name=f"vmboot-{kernel}-{int(layered)}",
                     kernel=kernel, workdir=work, layered=layered, timeout_s=900)
    res = vm.run()
    starts = [t for t, msg in res.marks if "starts" in msg]
    log = (res.out / "install.log").read_text(errors="replace")
    return {"kernel": kernel, "layered": layered, "wall_s": round(res.wall_s, 1),
            "scenario_start_s": round(starts[0], 1) if starts else None,
            "install_s": install_seconds(log),
            "package": res.data["package"]["out"], "retried": res.retried,
            "load_after": round(os.getloadavg()[0], 2)}


def table(rows: list[dict], kernels: list[str]) -> str:
    out = ["| kernel | boot | scenario began at s (per round) | median | QEMU exited at s "
           "(median) | install step s (median) |", "|---|---|---|---:|---:|---:|"]
    for k in kernels:
        for way, layered in WAYS.items():
            mine = [r for r in rows if r["kernel"] == k and r["layered"] == layered]
            began = [r["scenario_start_s"] for r in mine]
            out.append(f"| {k} | {way} | {', '.join(f'{b:.1f}' for b in began)} | "
                       f"{statistics.median(began):.1f} | "
                       f"{statistics.median(r['wall_s'] for r in mine):.1f} | "
                       f"{statistics.median(r['install_s'] for r in mine):.0f} |")
        pairs = {}
        for r in rows:
            if r["kernel"] == k:
                pairs.setdefault(r["round"], {})[r["layered"]] = r["scenario_start_s"]
        ratios = [p[False] / p[True] for p in pairs.values() if len(p) == 2]
        out.append(f"| {k} | ratio | {', '.join(f'{x:.2f}' for x in ratios)} | "
                   f"**{statistics.median(ratios):.2f}** | | |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of both ways (3)")
    ap.add_argument("--kernels", default="6.1", help="comma-separated kernel labels (6.1)")
    ap.add_argument("--image", default="bookworm", choices=sorted(vmrunner.IMAGES),
                    help="the guest image the kernels are in (bookworm)")
    ap.add_argument("--out", type=Path, default=Path("/var/tmp/vmboot"),
                    help="the guests' work directories and results.json")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds: at least 1, not {args.rounds}")
    kernels = [k for k in args.kernels.split(",") if k]
    known = vmrunner.IMAGES[args.image].kernels
    unknown = [k for k in kernels if k not in known]
    if not kernels:
        ap.error(f"--kernels: no kernel given (the {args.image} image has {', '.join(known)})")
    if unknown:
        ap.error(f"--kernels: {', '.join(unknown)} not among the {args.image} image's kernels "
                 f"({', '.join(known)})")
    image = vmrunner.ensure_image(args.image)
    stage = vmrunner.stage_checkout(args.out / f"stage-{image.name}", image)
    if stage.missing:
        sys.exit(f"vmboot: {'; '.join(stage.missing)}")
    t0 = time.monotonic()
    layer = vmrunner.installed_layer(image, stage)
    layer_s = round(time.monotonic() - t0, 1)
    rows = []
    for r in range(args.rounds):
        for k in kernels:
            for layered in ((False, True) if r % 2 == 0 else (True, False)):
                row = boot(image, stage, k, layered, args.out / f"r{r}-{k}-{int(layered)}")
                row["round"] = r
                rows.append(row)
                vmrunner.say(f"vmboot round {r + 1}: {k} {'layer' if layered else 'in guest'}"
                             f": scenario at {row['scenario_start_s']} s, exit at "
                             f"{row['wall_s']} s")
    bad = [r for r in rows if not r["package"].startswith("install ok installed")]
    if bad:
        sys.exit(f"vmboot: irqres not installed in {len(bad)} guests: {bad}")
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"layer": str(layer), "layer_s": layer_s, "image": args.image, "rows": rows}
    (args.out / "results.json").write_text(json.dumps(record, indent=1) + "\n")
    print(table(rows, kernels))
    print(f"\nlayer made (or found) in {layer_s} s before the first round: {layer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
