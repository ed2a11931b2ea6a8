"""Experiment 4: a disk's IRQ thread reserved at Q/T from 2 % to 60 %: throughput vs Q/T.

The guest gets one more disk, a virtio-blk device with one request queue (so one IRQ
thread, irq/<N>-virtio<K>-req.0) whose backend does no I/O (QEMU's null-co driver, or
with ``--backend shm`` a file in the host's /dev/shm). A reader on the other vCPU keeps
``--depth`` O_DIRECT reads of ``--size`` bytes in flight; every completion is made in the
IRQ thread. Per run: the thread at the kernel's SCHED_FIFO 50, then reserved by irqresd
at each Q/T of ``--budgets`` with a fixed period; reads per guest second at each.

    python3 bench/seeds/disk.py [--runs 3] [--budgets 2,5,10,20,30,40,50,60]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import testbed

MS = 1_000_000
SHM_FILE = Path("/dev/shm/irqres-seeds-disk.img")


def disk_qemu(backend: str, iothread: bool) -> tuple[list[str], str]:
    """QEMU's options for the test disk and the testbed's words for it."""
    io = ",iothread=seedsio" if iothread else ""
    dev = [*(["-object", "iothread,id=seedsio"] if iothread else []),
           "-device", f"virtio-blk-pci,drive=seedsdisk,serial=seedsdisk,num-queues=1,"
                      f"queue-size=1024,addr=0x9{io}"]
    where = " served by an I/O thread of its own" if iothread else ""
    if backend == "null":
        return (["-blockdev", "driver=null-co,node-name=seedsdisk,size=1073741824,"
                              "read-zeroes=off", *dev],
                f"a virtio-blk disk (one queue) on QEMU's null-co driver (no I/O){where}")
    SHM_FILE.unlink(missing_ok=True)
    with SHM_FILE.open("wb") as f:
        f.truncate(1 << 30)
    return (["-blockdev", f"driver=file,filename={SHM_FILE},node-name=seedsfile,aio=threads",
             "-blockdev", "driver=raw,file=seedsfile,node-name=seedsdisk", *dev],
            f"a virtio-blk disk (one queue) on a file in the host's /dev/shm{where}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=int, default=2, help="guest seconds per measurement")
    ap.add_argument("--depth", type=int, default=128, help="reads in flight per reader")
    ap.add_argument("--size", type=int, default=4096, help="bytes per read")
    ap.add_argument("--period-ms", type=int, default=5, help="the reservation's period T")
    ap.add_argument("--budgets", default="2,5,10,20,30,40,50,60",
                    help="Q/T in percent, comma-separated")
    ap.add_argument("--backend", choices=("null", "shm"), default="null")
    ap.add_argument("--iothread", action=argparse.BooleanOptionalAction, default=True,
                    help="serve the disk from a QEMU I/O thread, not the main loop")
    ap.add_argument("--hog", choices=("reader", "readers", "irq", "none"), default="reader",
                    help="where SCHED_IDLE busy loops keep vCPUs from idling: the first "
                         "reader's vCPU, every reader's, the IRQ thread's, none")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    try:
        pct = sorted({float(x) for x in args.budgets.split(",")})
    except ValueError:
        ap.error(f"--budgets {args.budgets!r}: not a comma-separated list of percentages")
    if not pct or pct[0] <= 0 or pct[-1] > 90:
        ap.error(f"--budgets {args.budgets!r}: each Q/T must be in (0, 90] %")
    period = args.period_ms * MS
    params = {"runs": args.runs, "seconds": args.seconds, "depth": args.depth,
              "size": args.size, "period_ns": period, "hog_cpu": args.hog,
              "budgets": [round(p * period / 100) for p in pct]}
    extra, devices = disk_qemu(args.backend, args.iothread)
    try:
        # a guest-second costs several wall seconds under icount on a loaded host
        rec = testbed.run_guest(args, "seeds_disk", "disk", params, extra_qemu=extra,
                                devices=devices, irqresd=True,
                                timeout_s=1800 + 60 * args.seconds * args.runs * (len(pct) + 1))
    finally:
        SHM_FILE.unlink(missing_ok=True)
    for r in rec["result"]["rows"]:
        qt = "FIFO 50" if r["runtime_ns"] is None else f"{r['runtime_ns'] / period:.0%}"
        print(f"run {r['run']} {qt}: {r['iops']:.0f} reads/s, {r['mib_s']:.2f} MiB/s")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
