"""Guest side of experiment 4 (bench/seeds/disk.py): a disk's IRQ thread under a reservation.

The host adds a virtio-blk disk with the serial ``seedsdisk`` and one request queue, so one
IRQ thread (``irq/<N>-virtio<K>-req.0``, forced-threaded on PREEMPT_RT) completes every
request of it. Readers (``seedload disk``: O_DIRECT reads through Linux AIO, a fixed number
always in flight) run on every other vCPU at SCHED_FIFO; the completions they wait for are
made in that IRQ thread (virtblk_done -> blk_mq_complete_request -> bio end_io -> the AIO
event), whose CPU sees nothing else of the load. The thread runs at the kernel's
SCHED_FIFO 50, or reserved (Q, T) by irqresd through a profile with an ``irq:`` target.

The disk's backend does no I/O (QEMU's null-co driver), so the guest's CPU, not the host's
disk, is the slow part: with enough reads in flight the IRQ thread always has completions
waiting, and the reads completed per guest second follow the time it may run.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

from seeds import _irqresd_state, _journal, apply_retrying, thread_fifo50, wait_deadline
from vmguest import OUT, mark, read, sh, thread, wait_for

SEEDLOAD = "/payload/extra/seedload"
PROFILE = "/run/seeds-disk.yaml"
READER_PRIO = 60  # above everything else on the reader's vCPU


def disk_setup(serial: str) -> dict:
    """The disk whose serial is ``serial``: its /dev node, virtio device, IRQ, IRQ thread,
    the IRQ's CPU and the other vCPUs (the readers'); its queue set to the cheapest path."""
    dev = next((d for d in sorted(os.listdir("/sys/block"))
                if read(f"/sys/block/{d}/serial") == serial), None)
    if dev is None:
        raise RuntimeError(f"no block device with serial {serial!r}: "
                           f"{sorted(os.listdir('/sys/block'))}")
    virtio = os.path.basename(os.readlink(f"/sys/block/{dev}/device"))
    lines = [x for x in (read("/proc/interrupts") or "").splitlines()
             if re.search(rf"\s{virtio}-req\.\d+$", x)]
    if len(lines) != 1:
        raise RuntimeError(f"{dev} ({virtio}): expected one request-queue IRQ, found "
                           f"{len(lines)}:\n{read('/proc/interrupts')}")
    irq = int(lines[0].split(":")[0])
    t = thread(rf"irq/{irq}-.*")
    if t is None:
        raise RuntimeError(f"{dev}: IRQ {irq} has no IRQ thread")
    cpu = int(re.split(r"[-,]", read(f"/proc/irq/{irq}/effective_affinity_list") or "0")[0])
    ncpu = os.cpu_count() or 1
    # the cheapest submission path, so that the readers keep up with the IRQ thread: no
    # I/O scheduler (one queue gets mq-deadline by default), no merging, no accounting
    q = f"/sys/block/{dev}/queue"
    for knob, value in (("scheduler", "none"), ("nomerges", "2"), ("iostats", "0"),
                        ("add_random", "0")):
        sh(f"echo {value} > {q}/{knob}")
    return {"dev": f"/dev/{dev}", "virtio": virtio, "irq": irq, "thread": t,
            "action": lines[0].split()[-1], "irq_cpu": cpu,
            "reader_cpus": [c for c in range(ncpu) if c != cpu] or [cpu],
            "reader_cpu": (cpu + 1) % ncpu, "ncpu": ncpu,
            "size_bytes": int(read(f"/sys/block/{dev}/size") or 0) * 512,
            "queue": {k: read(f"{q}/{k}") for k in ("scheduler", "nomerges", "iostats",
                                                    "nr_requests", "max_sectors_kb")}}


def disk_fifo(setup: dict) -> dict:
    """The disk thread back at the kernel's SCHED_FIFO 50 (``irqres restore``)."""
    return thread_fifo50(rf"irq/{setup['irq']}-.*", "the disk thread")


def disk_reserved(setup: dict, runtime_ns: int, period_ns: int) -> dict:
    """The disk thread at exactly (runtime_ns, period_ns): a profile with one ``irq:``
    target applied through irqresd (in place of whatever profile is in force; tried again
    when refused right after a restore: the kernel's root domains may not be rebuilt
    yet)."""
    if _irqresd_state() != "active":
        raise RuntimeError(f"irqresd is not active:\n{_journal()}")
    with open(PROFILE, "w") as f:
        f.write(f"version: 1\ntargets:\n  - name: disk\n    irq: {setup['irq']}\n"
                f"    runtime: {runtime_ns}ns\n    period: {period_ns}ns\n")
    pat = rf"irq/{setup['irq']}-.*"
    # The kernel grants SCHED_DEADLINE only once the thread has run inside its new
    # partition (its runqueue's root domain must be the partition's), and an idle disk
    # raises no interrupt: a few reads keep it waking while irqresd moves it.
    poke = subprocess.Popen(f"exec taskset -c {setup['reader_cpu']} {SEEDLOAD} disk "
                            f"{setup['dev']} 1 4096 30", shell=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _, refusals = apply_retrying(PROFILE)
    finally:
        poke.kill()
        poke.wait()
    t = wait_deadline(pat, runtime_ns, period_ns)
    if not t:
        raise RuntimeError(f"irqres apply of disk {runtime_ns}ns/{period_ns}ns did not take: "
                           f"{refusals}; thread {thread(pat)}\n{_journal()}")
    return {**t, "apply_refusals": refusals}


def _irq_count(irq: int) -> int:
    for line in (read("/proc/interrupts") or "").splitlines():
        if line.split(":")[0].strip() == str(irq):
            return sum(int(w) for w in line.split(":", 1)[1].split() if w.isdigit())
    return 0


def _cpu_ns(pid: int) -> int | None:
    st = read(f"/proc/{pid}/schedstat")
    return int(st.split()[0]) if st else None


def _counters(setup: dict) -> dict:
    # (the block layer's own counts are off: iostats 0)
    return {"thread_cpu_ns": _cpu_ns(setup["thread"]["pid"]),
            "irqs": _irq_count(setup["irq"]),
            "irq_cpu_idle_ns": _cpu_stat_idle(setup["irq_cpu"])}


def _cpu_stat_idle(cpu: int) -> int | None:
    """Idle time of ``cpu`` in ns (/proc/stat, USER_HZ ticks)."""
    for line in (read("/proc/stat") or "").splitlines():
        if line.startswith(f"cpu{cpu} "):
            return int(line.split()[4]) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    return None


def disk_measure(setup: dict, depth: int, size: int, seconds: int) -> dict:
    """One measurement: a reader on each of the reader CPUs for ``seconds`` guest-seconds;
    the reads they completed and the span they measured them in, their CPU time, the IRQ
    thread's CPU time, its interrupts and its CPU's idle time over the same interval."""
    c0, t0 = _counters(setup), time.monotonic_ns()
    procs = [subprocess.Popen(f"exec chrt -f {READER_PRIO} taskset -c {cpu} {SEEDLOAD} disk "
                              f"{setup['dev']} {depth} {size} {seconds}", shell=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cpu in setup["reader_cpus"]]
    ios = nbytes = span = reader_ns = 0
    for p in procs:
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)  # the reader's own CPU time
        p.returncode = os.waitstatus_to_exitcode(status)
        m = re.match(r"ios (\d+) bytes (\d+) ns (\d+)", out)
        if p.returncode != 0 or not m:
            raise RuntimeError(f"seedload disk failed ({p.returncode}): {out}")
        ios += int(m.group(1))
        nbytes += int(m.group(2))
        span = max(span, int(m.group(3)))
        reader_ns += round((usage.ru_utime + usage.ru_stime) * 1e9)
    c1, t1 = _counters(setup), time.monotonic_ns()
    delta = {k: (c1[k] - c0[k]) if c0[k] is not None and c1[k] is not None else None
             for k in c0}
    # window_ns: the interval the counters cover (the readers' start and exit included)
    return {"ios": ios, "bytes": nbytes, "span_ns": span, "window_ns": t1 - t0,
            "iops": ios * 1e9 / span,
            "mib_s": nbytes * 1e9 / span / 2**20, "reader_cpu_ns": reader_ns, **delta}


def hog(cpu: int) -> subprocess.Popen:
    """A SCHED_IDLE busy loop on ``cpu``: under -icount,sleep=off the guest's clock jumps
    to its next timer whenever every vCPU is idle; a vCPU that never idles keeps guest
    time advancing by instructions only."""
    return subprocess.Popen(f"exec taskset -c {cpu} chrt -i 0 sh -c 'while :; do :; done'",
                            shell=True)


def scenario_seeds_disk(runs: int, seconds: int, depth: int, size: int, period_ns: int,
                        budgets: list[int], serial: str = "seedsdisk",
                        hog_cpu: str = "reader", warmup_s: int = 1,
                        baseline: bool = True) -> dict:
    """Experiment 4: ``runs`` rounds, each the disk thread at SCHED_FIFO 50 (unless not
    ``baseline``) then reserved at each runtime of ``budgets`` (ascending) every
    ``period_ns``, ``seconds`` of reads at each. ``hog_cpu``: where SCHED_IDLE busy
    loops run: "reader" (the first reader's vCPU), "readers"
    (every reader's vCPU: under icount each vCPU then keeps the same share of the
    instruction stream), "irq" or "none"."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = disk_setup(serial)
    mark(f"seeds disk: {setup['dev']} ({setup['action']}, IRQ {setup['irq']} on CPU "
         f"{setup['irq_cpu']}), readers on CPUs {setup['reader_cpus']}, queue "
         f"{setup['queue']}")
    cpus = {"none": [], "reader": [setup["reader_cpu"]], "readers": setup["reader_cpus"],
            "irq": [setup["irq_cpu"]]}[hog_cpu]
    hogs = [hog(c) for c in cpus]
    rows = []
    try:
        disk_fifo(setup)
        warm = disk_measure(setup, depth, size, warmup_s) if warmup_s else None
        if warm:
            mark(f"disk warm-up: {warm['iops']:.0f} reads/s")
        for run in range(runs):
            for q in [None, *budgets] if baseline else budgets:
                t = disk_fifo(setup) if q is None else disk_reserved(setup, q, period_ns)
                r = disk_measure(setup, depth, size, seconds)
                r.update({"run": run, "runtime_ns": q, "period_ns": period_ns,
                          "sched": t["sched"], "apply_refusals": t.get("apply_refusals")})
                rows.append(r)
                share = (r["thread_cpu_ns"] or 0) / r["window_ns"]
                mark(f"disk run {run} {'FIFO 50' if q is None else f'Q/T {q / period_ns:.0%}'}"
                     f": {r['iops']:.0f} reads/s, {r['mib_s']:.2f} MiB/s, thread CPU "
                     f"{share:.1%}, reader CPU {r['reader_cpu_ns'] / r['span_ns']:.1%}, "
                     f"{r['irqs']} IRQs")
            disk_fifo(setup)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    with open(os.path.join(OUT, "disk-interrupts.txt"), "w") as f:
        f.write(read("/proc/interrupts") or "")
    return {"setup": setup, "warmup": warm, "rows": rows, "hog_cpu": hog_cpu,
            "uptime": read("/proc/uptime")}
