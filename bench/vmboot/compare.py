"""Two ways of booting a VM scenario's guest, side by side.

    python3 bench/vmboot/compare.py --rounds 3 --kernels 6.1,6.12 --out /var/tmp/vmboot
    python3 bench/vmboot/compare.py --ways layer,snapshot --kernels 6.1,6.12

The ways (``--ways A,B``, default ``in-guest,layer``): ``in-guest`` installs the package
in the guest's own boot, ``layer`` boots the image's layer with the package installed,
cold, and ``snapshot`` starts the layer's guest from a boot snapshot (bootsnap), made
before the first round and timed apart like the layer.

Until the layer (vmrunner.installed_layer) every guest of the VM suite ran ``dpkg -i`` of
the checkout's package in its own boot, under emulation; now dpkg runs once per package,
in the layer's boot, and every guest boots the layer. Each round boots the ``boot_basics``
scenario (tests/vm/test_boot.py's) once each way on each kernel, in alternating order (so
a change in the host's load falls on both), and records per guest, in host wall seconds
from QEMU's start: when the scenario began (the guest's first mark) and when QEMU exited;
and the install step's own time from the guest's install.log. The layer is made (or
found) before the first round and its making is timed apart: a run pays it once.

Prints a Markdown table (medians over the rounds and the median of the per-round ratios,
the first way / the second) and writes every record to ``--out``/results.json.
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

# each way's VM options
WAYS = {"in-guest": {"layered": False, "boot_snapshots": False},
        "layer": {"layered": True, "boot_snapshots": False},
        "snapshot": {"layered": True, "boot_snapshots": True}}


def clock_s(stamp: str) -> float:
    h, m, s = stamp.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def install_seconds(log: str) -> float | None:
    """install.log's first and last stamps ("payload install: HH:MM:SS" ... "done: ...")."""
    stamps = re.findall(r"payload install(?: done)?: (\d\d:\d\d:\d\d)", log)
    return clock_s(stamps[-1]) - clock_s(stamps[0]) if len(stamps) == 2 else None


def boot(image: vmrunner.Image, stage: vmrunner.Stage, kernel: str, way: str,
         work: Path) -> dict:
    vm = vmrunner.VM(image, stage, "boot_basics", name=f"vmboot-{kernel}-{way}",
                     kernel=kernel, workdir=work, timeout_s=900, **WAYS[way])
    res = vm.run()
    starts = [t for t, msg in res.marks if "starts" in msg]
    log = (res.out / "install.log").read_text(errors="replace")
    return {"kernel": kernel, "way": way, "boot_snapshot": res.boot_snapshot,
            "wall_s": round(res.wall_s, 1),
            "scenario_start_s": round(starts[0], 1) if starts else None,
            "install_s": install_seconds(log),
            "package": res.data["package"]["out"], "retried": res.retried,
            "load_after": round(os.getloadavg()[0], 2)}


def table(rows: list[dict], kernels: list[str], ways: list[str]) -> str:
    out = ["| kernel | boot | scenario began at s (per round) | median | QEMU exited at s "
           "(median) | install step s (median) |", "|---|---|---|---:|---:|---:|"]
    for k in kernels:
        for way in ways:
            mine = [r for r in rows if r["kernel"] == k and r["way"] == way]
            began = [r["scenario_start_s"] for r in mine]
            out.append(f"| {k} | {way} | {', '.join(f'{b:.1f}' for b in began)} | "
                       f"{statistics.median(began):.1f} | "
                       f"{statistics.median(r['wall_s'] for r in mine):.1f} | "
                       f"{statistics.median(r['install_s'] for r in mine):.0f} |")
        first, second = ways
        pairs = {}
        for r in rows:
            if r["kernel"] == k:
                pairs.setdefault(r["round"], {})[r["way"]] = r["scenario_start_s"]
        ratios = [p[first] / p[second] for p in pairs.values() if len(p) == 2]
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
    ap.add_argument("--ways", default="in-guest,layer",
                    help=f"the two ways compared, A,B ({', '.join(WAYS)}; in-guest,layer)")
    ap.add_argument("--out", type=Path, default=Path("/var/tmp/vmboot"),
                    help="the guests' work directories and results.json")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds: at least 1, not {args.rounds}")
    ways = [w for w in args.ways.split(",") if w]
    if len(ways) != 2 or len(set(ways)) != 2 or not set(ways) <= set(WAYS):
        ap.error(f"--ways: two different ways of {', '.join(WAYS)}, not {args.ways!r}")
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
    snapshot_s = {}
    for k in kernels if "snapshot" in ways else []:
        # the snapshot's own boot, paid once per configuration: the first guest makes it
        t1 = time.monotonic()
        boot(image, stage, k, "snapshot", args.out / f"made-{k}")
        snapshot_s[k] = round(time.monotonic() - t1, 1)
    rows = []
    for r in range(args.rounds):
        for k in kernels:
            for way in (ways if r % 2 == 0 else ways[::-1]):
                row = boot(image, stage, k, way, args.out / f"r{r}-{k}-{way}")
                row["round"] = r
                rows.append(row)
                vmrunner.say(f"vmboot round {r + 1}: {k} {way}"
                             f": scenario at {row['scenario_start_s']} s, exit at "
                             f"{row['wall_s']} s")
    bad = [r for r in rows if not r["package"].startswith("install ok installed")]
    if bad:
        sys.exit(f"vmboot: irqres not installed in {len(bad)} guests: {bad}")
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"layer": str(layer), "layer_s": layer_s, "image": args.image, "ways": ways,
              "snapshot_first_guest_s": snapshot_s, "rows": rows}
    (args.out / "results.json").write_text(json.dumps(record, indent=1) + "\n")
    print(table(rows, kernels, ways))
    print(f"\nlayer made (or found) in {layer_s} s before the first round: {layer}")
    for k, secs in snapshot_s.items():
        print(f"{k}: the first guest, which made (or found) the boot snapshot, took {secs} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
