"""The testbed of the seeds' experiments: how the PREEMPT_RT guest is booted for them.

Every experiment script under bench/seeds/ takes the same testbed options:

``--testbed icount`` (default)
    QEMU's instruction counting, ``-icount shift=S,sleep=off``: guest time advances by
    2**S ns per guest instruction and jumps over idle time, so it does not depend on how
    busy the host is. A busy host makes the run take longer, not the guest's
    measurements different. QEMU 7.2 (Debian 12) hangs an SMP guest under icount; with
    ``--qemu`` pointing at a newer build (bookworm-backports' 10.0 works) the guest gets
    two vCPUs, the NIC on one, the sender on the other.
``--testbed tcg``
    plain multi-threaded TCG, guest time is the host's: for comparison.

The load is made inside the guest (tests/vm/guest/seeds.py): two e1000s on a QEMU hub,
the sender's NIC in a network namespace. ``--nice N`` runs QEMU at that niceness: on a
shared host, ``--nice 19`` starves the guest of host CPU, which is how the scripts show
that a result does not depend on the host's load.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "vm"))

import vmrunner  # noqa: E402

DATA = HERE / "data"
BPO_QEMU = Path("/opt/irqres-qemu")  # where scripts/install-qemu-bpo.sh unpacks QEMU 10 there


def add_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--testbed", choices=("icount", "tcg"), default="icount",
                    help="icount: guest time from instruction counts (load-independent); "
                         "tcg: guest time is the host's")
    ap.add_argument("--shift", type=int, default=3,
                    help="icount shift: 2**SHIFT ns of guest time per instruction")
    ap.add_argument("--smp", type=int, default=None,
                    help="vCPUs (default: 2, or 1 for icount on a QEMU that cannot run "
                         "SMP under icount)")
    ap.add_argument("--qemu", default=None,
                    help="QEMU to run: a qemu-system-x86_64 binary; its firmware is "
                         "looked up in ../share/qemu-fw beside it when that exists "
                         f"(default: {BPO_QEMU}/bin/qemu-system-x86_64 if present, "
                         "else the system's)")
    ap.add_argument("--nice", type=int, default=0, help="run QEMU at this niceness")
    ap.add_argument("--runs", type=int, default=3, help="repetitions (at least 3)")
    ap.add_argument("--tag", default="", help="added to the raw data file's name")
    ap.add_argument("--kernel", default=None, choices=vmrunner.KERNELS,
                    help="the guest kernel (default: 6.1, Debian 12's own)")


def qemu_command(args) -> tuple[list[str], str, dict[str, str]]:
    """The QEMU argv prefix, its version line and its environment (module directory)."""
    binary = args.qemu
    if binary is None:
        cand = BPO_QEMU / "bin" / "qemu-system-x86_64"
        binary = str(cand) if cand.exists() else "qemu-system-x86_64"
    cmd = [binary]
    usr = Path(binary).resolve().parent.parent
    env = {}
    if (usr / "share" / "qemu-fw").is_dir():
        cmd += ["-L", str(usr / "share" / "qemu-fw")]
    if (usr / "lib" / "x86_64-linux-gnu" / "qemu").is_dir():
        env["QEMU_MODULE_DIR"] = str(usr / "lib" / "x86_64-linux-gnu" / "qemu")
    version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[0]
    if args.nice:
        cmd = ["nice", "-n", str(args.nice), *cmd]
    return cmd, version, env


def smp_of(args, version: str) -> int:
    if args.smp:
        return args.smp
    if args.testbed == "icount" and "version 7." in version:
        return 1
    return 2


def build_seedload(work: Path) -> Path:
    """Compile bench/seeds/seedload.c for the guest (same Debian 12 userland)."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / "seedload"
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-std=gnu11", "-o", str(out),
                    str(HERE / "seedload.c"), "-lm"], check=True)
    return out


def describe(args, version: str, smp: int,
             devices: str = "two e1000 on a QEMU hub, traffic made in the guest") -> str:
    timing = (f"`-icount shift={args.shift},sleep=off`" if args.testbed == "icount"
              else "plain TCG (guest time = host time)")
    return (f"{version.split('(')[0].strip()}, `-accel tcg` {timing}, {smp} vCPU(s), "
            f"1 GB; {devices}; QEMU at nice {args.nice}")


def commit() -> str:
    r = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "."],
                           capture_output=True, text=True, check=False).stdout.strip()
    return r.stdout.strip() + ("+changes" if dirty else "")


def run_guest(args, scenario: str, name: str, params: dict, timeout_s: float = 7200,
              profile: str = "demo.yaml", irqresd: bool = True,
              extra_qemu: list[str] | None = None, devices: str | None = None) -> dict:
    """Boot the guest on the chosen testbed, run ``scenario``; returns the run's record
    (params, testbed, wall time, host load, the guest's result) and saves it as JSON.
    ``extra_qemu`` adds devices to QEMU's command line, ``devices`` says what the
    testbed's description names instead of the hub's two e1000s."""
    qemu, version, qemu_env = qemu_command(args)
    smp = smp_of(args, version)
    work = Path(os.environ.get("IRQRES_VM_WORKDIR", "/var/tmp/irqres-vm")) / f"seeds-{name}"
    image = vmrunner.ensure_image(vmrunner.image_name("amd64", args.kernel or "6.1"))
    stage = vmrunner.stage_checkout(work / f"stage-{image.name}", image)
    seedload = build_seedload(work)
    icount = f"shift={args.shift},sleep=off" if args.testbed == "icount" else None
    load0 = os.getloadavg()
    t0 = time.monotonic()
    vm = vmrunner.VM(image, stage, scenario, name=f"seeds-{name}",
                     profile=REPO / "profiles" / profile, enable_irqresd=irqresd,
                     workdir=work / "vm", timeout_s=timeout_s, nic="hub", cpus=smp,
                     icount=icount, qemu=qemu, qemu_env=qemu_env,
                     e1000_mitigation_opt="version 7." in version,
                     files={"seedload": seedload}, params=params, extra_qemu=extra_qemu,
                     kernel=getattr(args, "kernel", None))
    res = vm.run()
    wall = time.monotonic() - t0
    record = {
        "name": name, "scenario": scenario, "params": params,
        "date": f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "commit": commit(), "kernel": vm.kernel.release, "qemu": version, "smp": smp,
        "testbed": describe(args, version, smp, *([devices] if devices else [])),
        "testbed_key": args.testbed,
        "nice": args.nice, "shift": args.shift, "wall_s": round(wall, 1),
        "loadavg_before": load0, "loadavg_after": os.getloadavg(),
        "command": "python3 " + " ".join(map(shlex.quote, [os.path.relpath(sys.argv[0],
                                                                          REPO), *sys.argv[1:]])),
        "result": res.data,
        "raw_out": str(res.out),  # the guest's out/ directory: traces, time series
    }
    DATA.mkdir(exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    tag = f"-{args.tag}" if args.tag else ""
    path = DATA / f"{name}-{args.testbed}-nice{args.nice}{tag}-{stamp}.json"
    record["path"] = str(path)
    path.write_text(json.dumps(record, indent=1, sort_keys=True))
    vmrunner.say(f"{name}: raw data in {path.relative_to(REPO)}")
    if "error" in res.data:
        raise SystemExit(f"{name}: the guest scenario failed: {res.data['error']}\n"
                         f"{res.data.get('traceback', '')}")
    return record
