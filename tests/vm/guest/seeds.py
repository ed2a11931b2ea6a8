"""Guest side of the seeds' experiments (bench/seeds/): traffic made inside the guest.

The guest has two e1000s on a QEMU hub (vmrunner ``nic="hub"``): eth0 (IRQ 11, the NIC
under test) stays in the root network namespace; eth1 moves into the namespace ``snd``
and is the "other machine". A sender there (``seedload send``, at SCHED_FIFO 90 on the
other vCPU when there is one) paces its datagrams in guest time, so the load the NIC
thread sees does not depend on how busy the host is.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import time

from vmguest import (
    CGROUP,
    OUT,
    cgroup_of,
    cpus_allowed,
    fingerprint,
    fingerprint_diff,
    mark,
    read,
    sched_attr,
    sh,
    thread,
    wait_for,
)

NIC_THREAD = r"irq/\d+-eth0"
SEEDLOAD = "/payload/extra/seedload"
RX_ADDR = "10.0.2.15"
TX_ADDR = "10.0.2.16"
NS = "snd"
SENDER_PRIO = 90


def _irqresd_state() -> str:
    out = sh("systemctl show irqresd.service -p ActiveState")["out"]
    return out.strip().partition("=")[2]


_SETUP: dict = {}
REFUSALS: list[str] = []  # irqres apply refusals seen (see nic_reserved)


def hub_setup() -> dict:
    """eth1 into namespace ``snd``; static neighbours both ways (no ARP during a run).
    Done once per boot; later calls return the first call's facts."""
    if _SETUP:
        return _SETUP
    ncpu = os.cpu_count() or 1
    mac0 = read("/sys/class/net/eth0/address")
    mac1 = read("/sys/class/net/eth1/address")
    for c in (f"ip netns add {NS}", f"ip link set eth1 netns {NS}",
              f"ip -n {NS} addr flush dev eth1", f"ip -n {NS} link set lo up",
              f"ip -n {NS} addr add {TX_ADDR}/24 dev eth1", f"ip -n {NS} link set eth1 up",
              f"ip -n {NS} neigh replace {RX_ADDR} lladdr {mac0} dev eth1 nud permanent",
              f"ip neigh replace {TX_ADDR} lladdr {mac1} dev eth0 nud permanent"):
        sh(c, check=True)
    nic = thread(NIC_THREAD)
    nic_cpu = int(re.split(r"[-,]", (nic or {}).get("cpus") or "0")[0])
    other = (nic_cpu + 1) % ncpu
    # The sender's NIC stands for another machine: its interrupt goes to the other vCPU
    # (when there is one) and its thread above the measured tasks.
    irq1 = _irq_of("eth1")
    if irq1 is None or irq1 == _irq_of("eth0"):
        raise RuntimeError(f"eth1 must have an interrupt of its own, eth0's is "
                           f"{_irq_of('eth0')}, eth1's {irq1}:\n{read('/proc/interrupts')}")
    if irq1 is not None and ncpu > 1:
        sh(f"echo {other} > /proc/irq/{irq1}/smp_affinity_list")
    t1 = thread(r"irq/\d+-eth1")
    if t1:
        sh(f"chrt -f -p {SENDER_PRIO} {t1['pid']}")
    _SETUP.update({"ncpu": ncpu, "nic_cpu": nic_cpu, "sender_cpu": other, "eth1_irq": irq1,
                   "nic": nic, "eth1_thread": thread(r"irq/\d+-eth1"),
                   "addr": sh("ip -br addr; ip -n snd -br addr")["out"]})
    return _SETUP


def _irq_of(iface: str) -> int | None:
    for line in (read("/proc/interrupts") or "").splitlines():
        if line.rstrip().endswith(iface):
            return int(line.split(":")[0])
    return None


def sender(setup: dict, port: int, period_ns: int, count: int, size: int,
           times: str | None = None) -> subprocess.Popen:
    """The paced sender in namespace ``snd`` at SCHED_FIFO 90 on the sender's vCPU."""
    out = f" {times}" if times else ""
    return subprocess.Popen(
        f"exec ip netns exec {NS} chrt -f {SENDER_PRIO} taskset -c {setup['sender_cpu']} "
        f"{SEEDLOAD} send {RX_ADDR} {port} {period_ns} {count} {size}{out}",
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def receiver(setup: dict, port: int, count: int, idle_ns: int, times: str | None = None,
             prio: int = 0) -> subprocess.Popen:
    """The receiving application (SCHED_OTHER unless ``prio``), on the sender's vCPU: the
    NIC's CPU may be a partition of irqres that only the NIC thread and the measured task
    enter. The kernel timestamps every datagram in the NIC thread, wherever this runs."""
    out = f" {times}" if times else ""
    chrt = f"chrt -f {prio} " if prio else ""
    return subprocess.Popen(
        f"exec {chrt}taskset -c {setup['sender_cpu']} {SEEDLOAD} recv {port} {count} "
        f"{idle_ns}{out}", shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)


def nic_fifo50() -> dict | None:
    """The NIC thread back at the kernel's SCHED_FIFO 50: ``irqres restore`` (irqresd
    stays up without a profile, so the next reservation needs no service restart)."""
    return thread_fifo50(NIC_THREAD, "the NIC thread")


def thread_fifo50(comm_re: str, what: str) -> dict:
    """``irqres restore``, then the IRQ thread matching ``comm_re`` back at SCHED_FIFO."""
    if _irqresd_state() == "active":
        sh("irqres restore")
    t, _ = wait_for(lambda: (x := thread(comm_re)) and x["sched"]
                    and x["sched"]["policy"] == "fifo" and x, 10, 0.05)
    if not t:
        raise RuntimeError(f"{what} did not return to SCHED_FIFO: "
                           f"{thread(comm_re)}\n{_journal()}")
    return t


def _journal() -> str:
    return sh("journalctl -b -u irqresd.service --no-pager -o cat | tail -n 30")["out"]


def nic_reserved(runtime_ns: int, period_ns: int) -> dict | None:
    """The NIC thread at exactly (runtime_ns, period_ns): the profile applied again
    through the running irqresd, then ``irqres set-budget``."""
    if _irqresd_state() != "active":
        raise RuntimeError(f"irqresd is not active:\n{_journal()}")
    # a refused apply is logged in the result and tried again (a thread that has not run
    # in its partition yet is not a refusal: irqresd reserves it at its next interrupt,
    # which wait_deadline() waits for)
    a, refusals = apply_retrying("/etc/irqres/profile.yaml")
    REFUSALS.extend(refusals)
    r = sh(f"irqres set-budget nic {runtime_ns}ns {period_ns}ns")
    t = wait_deadline(NIC_THREAD, runtime_ns, period_ns)
    if not t:
        raise RuntimeError(f"irqres apply + set-budget nic {runtime_ns}ns {period_ns}ns "
                           f"did not take: {a['err'] or a['out']} {r['err'] or r['out']}; "
                           f"thread {thread(NIC_THREAD)}\n{_journal()}")
    return t


def apply_retrying(profile: str, tries: int = 3) -> tuple[dict, list[str]]:
    """``irqres apply profile``, tried again half a second later when refused; returns the
    last attempt and the refusals."""
    refusals = []
    for _ in range(tries):
        a = sh(f"irqres apply {profile}", timeout=120)
        if a["rc"] == 0:
            break
        refusals.append((a["err"] or a["out"])[-400:])
        time.sleep(0.5)
    return a, refusals


def wait_deadline(comm_re: str, runtime_ns: int, period_ns: int) -> dict | None:
    """The IRQ thread matching ``comm_re`` once it is SCHED_DEADLINE at exactly
    (runtime_ns, period_ns), or None after 10 s."""
    t, _ = wait_for(lambda: (x := thread(comm_re)) and x["sched"]
                    and x["sched"]["policy"] == "deadline"
                    and x["sched"]["runtime_ns"] == runtime_ns
                    and x["sched"]["period_ns"] == period_ns and x, 10, 0.05)
    return t


def _in_cgroup(t: dict | None) -> str:
    cg = t and t.get("cgroup")
    return f"echo $$ > {CGROUP}{cg}/cgroup.procs && " if cg and cg != "/" else ""


def cyclictest_hist(nic: dict | None, cpu: int, seconds: int, interval_us: int,
                    priority: int, hist_us: int) -> subprocess.Popen:
    """cyclictest on the NIC's CPU with a histogram of 1 µs buckets up to ``hist_us``."""
    return subprocess.Popen(
        f"{_in_cgroup(nic)}exec cyclictest -q -m -a {cpu} -t 1 -p {priority} "
        f"-i {interval_us} -D {seconds} -h {hist_us}", shell=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def parse_hist(out: str) -> dict:
    """cyclictest -h output: the non-empty buckets, the overflows, min/avg/max."""
    buckets = {}
    for line in out.splitlines():
        m = re.match(r"^(\d+)\s+(\d+)\s*$", line)
        if m and int(m.group(2)):
            buckets[int(m.group(1))] = int(m.group(2))
    def field(name):
        m = re.search(rf"# {name}[^:]*:\s*(\d+)", out)
        return int(m.group(1)) if m else None
    return {"buckets": buckets, "overflows": field("Histogram Overflows"),
            "min_us": field("Min Latencies"), "avg_us": field("Avg Latencies"),
            "max_us": field("Max Latencies"), "cycles": field("Total")}


def _flooded_hist(setup: dict, nic: dict | None, run: int, label: str, seconds: int,
                  flood_period_ns: int, size: int, interval_us: int, priority: int,
                  hist_us: int, port: int) -> dict:
    """One measurement of experiment 6: cyclictest on the NIC's CPU while the sender
    floods eth0 (``flood_period_ns`` 0: no flood, the task's own worst case); with the
    CPU time of the threads that can do the NIC's work over the flood (nic_work())."""
    count = seconds * 1_000_000_000 // flood_period_ns if flood_period_ns else 0
    rx = receiver(setup, port, count, 3_000_000_000) if count else None
    cyc = cyclictest_hist(nic, setup["nic_cpu"], seconds + 1, interval_us, priority,
                          hist_us)
    time.sleep(0.5)
    c0, t0, w0 = rx_counters(), time.monotonic_ns(), nic_work(setup)
    snd_out = ""
    if count:
        snd_out, _ = sender(setup, port, flood_period_ns, count, size).communicate(
            timeout=3600)
    c1, sent_ns, w1 = rx_counters(), time.monotonic_ns() - t0, nic_work(setup)
    cyc_out, _ = cyc.communicate(timeout=3600)
    rx_out = rx.communicate(timeout=3600)[0] if rx else ""
    h = parse_hist(cyc_out)
    mark(f"latency run {run} {label}: max {h['max_us']} us avg {h['avg_us']} us "
         f"cycles {h['cycles']}; {snd_out.strip()}; {rx_out.strip()}")
    return {"run": run, "label": label, "thread": nic, "hist": h,
            "sender": snd_out.strip(), "receiver": rx_out.strip(),
            "send_ns": sent_ns, "rx": _delta(c0, c1), "work_ns": _work_delta(w0, w1),
            "eth1_after": w1["eth1_where"],
            "cyclictest_tail": cyc_out[-600:] if not h["buckets"] else ""}


def nic_work(setup: dict) -> dict:
    """CPU time so far (ns, /proc/PID/schedstat) of the threads that can do eth0's work
    on the NIC's CPU: eth0's IRQ thread, eth1's (the sender's NIC: its bottom half polls
    whatever NAPI is scheduled on the CPU it runs on) and ksoftirqd of the NIC's CPU;
    eth1's thread's migrations and where it is (it may run on either CPU); the NIC's
    CPU's /proc/stat times (cpu_times()); eth0's and eth1's interrupt counts; every
    task's CPU time (_task_times(), for the tasks that ran most meanwhile). The 6.1
    and 6.12 guest kernels have no IRQ_TIME_ACCOUNTING: a thread's CPU time includes the
    softirq work (NAPI polls) it ran in its bottom halves."""
    out = cpu_times(setup)
    del out["player"]
    t1 = thread(r"irq/\d+-eth1")
    pid = t1 and t1["pid"]
    where = _where(pid)
    out["eth1_thread"] = where and where["run_ns"]
    m = re.search(r"nr_migrations\s*:\s*(\d+)", (read(f"/proc/{pid}/sched") if pid else "")
                  or "")
    out["eth1_migrations"] = int(m.group(1)) if m else None
    out["eth1_where"] = where
    # the interrupts eth0 and eth1 raised, over all CPUs
    for name, irq in (("eth0_irqs", _irq_of("eth0")), ("eth1_irqs", setup["eth1_irq"])):
        out[name] = sum(_irq_counts(irq)) if irq is not None else None
    out["tasks"] = _task_times()
    return out


POLICIES = {0: "other", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}


def _task_times() -> dict[int, tuple[str, int, int, str]]:
    """Every task's (threads included) comm, CPU time so far (ns), last CPU and policy
    (with its SCHED_FIFO/RR priority)."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            st = read(f"/proc/{pid}/task/{tid}/stat")
            run = read(f"/proc/{pid}/task/{tid}/schedstat")
            if st and run:
                comm = st[st.index("(") + 1:st.rindex(")")]
                f = st[st.rindex(")") + 2:].split()  # from field 3 (state) on
                policy = POLICIES.get(int(f[38]), f[38])
                out[int(tid)] = (comm, int(run.split()[0]), int(f[36]),
                                 f"{policy} {f[37]}" if policy in ("fifo", "rr") else policy)
    return out


def _work_delta(a: dict, b: dict, top: int = 8) -> dict:
    """The counters' changes, and the ``top`` tasks that ran most in between."""
    d = {k: b[k] - a[k] if isinstance(a[k], int) and isinstance(b[k], int) else None
         for k in a if k not in ("eth1_where", "tasks")}
    ran = sorted(((t[1] - (a["tasks"][tid][1] if tid in a["tasks"] else 0), tid, t)
                  for tid, t in b["tasks"].items()), reverse=True)
    d["top"] = [{"tid": tid, "comm": t[0], "ns": ns, "cpu": t[2], "sched": t[3]}
                for ns, tid, t in ran[:top]]
    return d


def scenario_seeds_latency(runs: int, seconds: int, flood_period_ns: int, size: int,
                           reserved: list[int], interval_us: int, priority: int,
                           hist_us: int, port: int = 5001,
                           eth1_cpus: str | None = None) -> dict:
    """Experiment 6: cyclictest on the NIC's CPU under an in-guest flood, the NIC thread
    at SCHED_FIFO 50 vs reserved (Q,T) by irqresd; ``runs`` alternating repeats.
    ``eth1_cpus``: a control, eth1's IRQ thread allowed on these CPUs before each
    measurement (the row's ``eth1_control`` says where it was then)."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    mark(f"seeds latency: NIC on CPU {setup['nic_cpu']}, sender on CPU "
         f"{setup['sender_cpu']}, {setup['ncpu']} vCPUs")
    results = []
    for run in range(runs):
        for label in ("fifo50", "reserved"):
            nic = nic_fifo50() if label == "fifo50" else nic_reserved(*reserved)
            control = _eth1_thread_cpus(setup, eth1_cpus) if eth1_cpus else None
            results.append(_flooded_hist(setup, nic, run, label, seconds, flood_period_ns,
                                         size, interval_us, priority, hist_us, port)
                           | {"eth1_control": control})
    nic_fifo50()
    return {"setup": setup, "results": results, "apply_refusals": REFUSALS,
            "interrupts": read("/proc/interrupts"),
            "uptime": read("/proc/uptime")}


def _nic_profile(path: str, enforcement: str, runtime_ns: int, period_ns: int,
                 deadline_ns: int | None = None) -> str:
    with open(path, "w") as f:
        f.write(f"version: 1\nenforcement: {enforcement}\ntargets:\n  - name: nic\n"
                f"    interface: eth0\n    runtime: {runtime_ns}ns\n"
                f"    period: {period_ns}ns\n    min_interarrival: 50us\n"
                f"    buffer: 256\n" +
                (f"    deadline: {deadline_ns}ns\n" if deadline_ns else ""))
    return path


def nic_enforced(runtime_ns: int, period_ns: int, enforcement: str,
                 deadline_ns: int | None = None) -> dict:
    """The NIC thread reserved (runtime_ns, period_ns) by a profile with ``enforcement:``
    keep (budget enforced at the tick) or hrtick (irqresd switches HRTICK_DL on); with
    ``deadline_ns``, a constrained deadline (shorter than the period)."""
    prof = _nic_profile(f"/tmp/nic-{enforcement}-{runtime_ns}.yaml", enforcement,
                        runtime_ns, period_ns, deadline_ns)
    a, refusals = apply_retrying(prof)
    REFUSALS.extend(refusals)
    t = wait_deadline(NIC_THREAD, runtime_ns, period_ns)
    if not t:
        raise RuntimeError(f"irqres apply {prof} did not take: {a['err'] or a['out']}; "
                           f"thread {thread(NIC_THREAD)}\n{_journal()}")
    return t


def enforcement_plan(reserved: list[list[int]]) -> list[tuple]:
    """One run of experiment 6 with HRTICK_DL: (label, (Q, T) or None, enforcement) for
    the task without a flood, the NIC at SCHED_FIFO 50, then each (Q, T) of ``reserved``
    enforced at the tick and by HRTICK_DL ((Q, T, D): with a constrained deadline D)."""
    plan: list[tuple] = [("baseline", None, "keep"), ("fifo50", None, "keep")]
    return plan + [("-".join(str(x) for x in (enf, *qt)), tuple(qt), enf) for qt in reserved
                   for enf in ("keep", "hrtick")]


def traced_row(setup: dict, label: str, run: int, trace_kb: int, measure) -> dict:
    """``measure()``'s row; with ``trace_kb`` and a row other than FIFO 50's, the NIC's CPU
    traced meanwhile (LATENCY_TRACE_EVENTS, a ring buffer of that many KiB) into
    OUT/latency-LABEL-runN.dat, which the row's ``trace`` names."""
    if trace_kb <= 0 or label == "fifo50":
        return measure()
    name = f"latency-{label}-run{run}.dat"
    _switch_trace_start(setup["nic_cpu"], trace_kb, LATENCY_TRACE_EVENTS)
    try:
        row = measure()
    finally:
        stopped = _switch_trace_stop(os.path.join(OUT, name), setup["ncpu"],
                                     LATENCY_TRACE_EVENTS)
    return row | {"trace": {"file": name} | stopped}


def scenario_seeds_latency_enforcement(runs: int, seconds: int, flood_period_ns: int,
                                       size: int, reserved: list[list[int]],
                                       interval_us: int, priority: int, hist_us: int,
                                       port: int = 5001, trace_kb: int = 0) -> dict:
    """Experiment 6 with the budget enforced at the tick and by HRTICK_DL: per run, the
    task's own worst case without a flood (``baseline``), the NIC thread at SCHED_FIFO
    50, then for each (Q, T) of ``reserved`` the NIC thread reserved with ``enforcement:
    keep`` and ``enforcement: hrtick``. Each row records the sched features it ran
    under. ``trace_kb``: every row but FIFO 50's also traces the NIC's CPU
    (traced_row())."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    if not os.path.exists(SCHED_FEATURES):
        sh("mount -t debugfs none /sys/kernel/debug")
    setup = hub_setup()
    mark(f"seeds latency enforcement: NIC on CPU {setup['nic_cpu']}, sender on CPU "
         f"{setup['sender_cpu']}, {setup['ncpu']} vCPUs")
    results = []
    for run in range(runs):
        for label, qt, enf in enforcement_plan(reserved):
            nic = nic_fifo50() if qt is None else nic_enforced(qt[0], qt[1], enf, *qt[2:])
            flood = 0 if label == "baseline" else flood_period_ns
            row = traced_row(setup, label, run, trace_kb, functools.partial(
                _flooded_hist, setup, nic, run, label, seconds, flood, size, interval_us,
                priority, hist_us, port))
            row.update({"enforcement": enf, "reserved": list(qt) if qt else None,
                        "features": read(SCHED_FEATURES) or ""})
            results.append(row)
    nic_fifo50()
    return {"setup": setup, "results": results, "apply_refusals": REFUSALS,
            "features_after": read(SCHED_FEATURES) or "",
            "interrupts": read("/proc/interrupts"), "uptime": read("/proc/uptime")}


def scenario_seeds_idle(seconds: int, interval_us: int, priority: int, hist_us: int) -> dict:
    """The testbed's own noise: cyclictest on CPU 0 of an idle guest."""
    cyc = cyclictest_hist(None, 0, seconds, interval_us, priority, hist_us)
    out, _ = cyc.communicate(timeout=3600)
    return {"hist": parse_hist(out), "uptime": read("/proc/uptime"), "out_dir": OUT}


TRACE_EVENTS = ("-e irq:irq_handler_entry -e irq:irq_handler_exit -e sched:sched_switch "
                "-e sched:sched_migrate_task -e sched:sched_waking -e sched:sched_wakeup")
# what irqres analyze's accounting reads where the kernel has it: the charge, and the
# packets (docs/analysis.md); the sock events exist from about 6.6
ACCT_EVENTS = ("sched:sched_stat_runtime", "net:netif_receive_skb", "skb:consume_skb",
               "skb:skb_copy_datagram_iovec", "sock:sk_data_ready", "sock:sock_recv_length")


def acct_trace_events() -> str:
    """TRACE_EVENTS and the accounting's events this kernel has."""
    have = [e for e in ACCT_EVENTS
            if os.path.isdir(os.path.join("/sys/kernel/tracing/events", *e.split(":")))]
    return " ".join([TRACE_EVENTS, *(f"-e {e}" for e in have)])


def _record_start(path: str, events: str = TRACE_EVENTS) -> subprocess.Popen:
    """trace-cmd record of the events ``irqres analyze`` reads; returns once they are on."""
    rec = subprocess.Popen(f"exec trace-cmd record -q -b 8192 {events} -o {path}",
                           shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    enabled = "/sys/kernel/tracing/events/irq/irq_handler_entry/enable"
    wait_for(lambda: read(enabled) == "1" or rec.poll() is not None, 300, 0.05)
    time.sleep(0.2)
    return rec


def _record_stop(rec: subprocess.Popen) -> dict:
    rec.send_signal(2)
    out, _ = rec.communicate(timeout=600)
    return {"rc": rec.returncode, "out": out[-2000:]}


def scenario_seeds_tools(runs: int, rows: list[list[int]], size: int,
                         port: int = 5001) -> dict:
    """Experiment 1 (statistical tools): for each row (period_ns, count) a sender at that
    fixed period; the sender's send times, the receiver's kernel receive timestamps and
    a trace of the NIC thread are left in /payload/out/tools-<run>-<period_ms>ms-*."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    nic = nic_fifo50()  # the thread as the kernel made it: arrivals are the sender's
    out = []
    for run in range(runs):
        for period_ns, count in rows:
            base = os.path.join(OUT, f"tools-{run}-{period_ns // 1_000_000}ms")
            rx = receiver(setup, port, count, 5_000_000_000, base + "-recv.txt", prio=20)
            rec = _record_start(base + ".dat")
            snd = sender(setup, port, period_ns, count, size, base + "-send.txt")
            snd_out, _ = snd.communicate(timeout=3600)
            rx_out, _ = rx.communicate(timeout=3600)
            trace = _record_stop(rec)
            out.append({"run": run, "period_ns": period_ns, "count": count,
                        "files": os.path.basename(base), "sender": snd_out.strip(),
                        "receiver": rx_out.strip(), "trace": trace})
            mark(f"tools run {run} T{period_ns // 1_000_000}: {snd_out.strip()}; "
                 f"{rx_out.strip()}")
    return {"setup": setup, "thread": nic, "rows": out}


def rx_counters() -> dict:
    """eth0's driver counters: what the NIC thread took from the ring, and what it lost."""
    base = "/sys/class/net/eth0/statistics/"
    return {k: int(read(base + k) or 0) for k in ("rx_packets", "rx_bytes", "rx_dropped",
                                                  "rx_missed_errors", "rx_fifo_errors")}


def _delta(a: dict, b: dict) -> dict:
    return {k: b[k] - a[k] for k in a}


def player(cpu: int, period_ns: int, work_ns: int, frames: int, chrt: str,
           times: str | None = None, cgroup_of: dict | None = None,
           delay_ns: int = 0) -> subprocess.Popen:
    out = f" {times or '/dev/null'} {delay_ns}" if times or delay_ns else ""
    return subprocess.Popen(
        f"{_in_cgroup(cgroup_of)}exec {chrt} taskset -c {cpu} {SEEDLOAD} player {period_ns} "
        f"{work_ns} {frames}{out}", shell=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)


def _ksoftirqd(cpu: int) -> int | None:
    return _pid_of(re.escape(f"ksoftirqd/{cpu}"))


def _pid_of(comm_re: str) -> int | None:
    """The first task whose whole comm matches ``comm_re``."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and re.fullmatch(comm_re, read(f"/proc/{entry}/comm") or ""):
            return int(entry)
    return None


def run_ns(pid: int | None) -> int | None:
    """A task's time on the CPU so far (ns, /proc/PID/schedstat); None when it is gone."""
    st = read(f"/proc/{pid}/schedstat") if pid else None
    return int(st.split()[0]) if st else None


def cpu_times(setup: dict, player_pid: int | None = None) -> dict:
    """CPU time (ns, /proc/PID/schedstat) of the NIC thread and of ksoftirqd on its CPU:
    network work the NIC thread leaves (NAPI beyond its per-poll limits) continues in
    ksoftirqd, a SCHED_OTHER thread outside the reservation. With threaded NAPI the polls
    run in eth0's NAPI kthread (None without one)."""
    out = {}
    nic = thread(NIC_THREAD)
    for name, pid in (("nic_thread", nic and nic["pid"]),
                      ("ksoftirqd", _ksoftirqd(setup["nic_cpu"])), ("player", player_pid),
                      ("napi_thread", _pid_of(r"napi/eth0-\d+"))):
        out[name] = run_ns(pid)
    # where the NIC's CPU spent its time (USER_HZ ticks: user nice system idle iowait
    # irq softirq steal), to find time no recorded thread accounts for
    cpu = f"cpu{setup['nic_cpu']} "
    line = next((x for x in (read("/proc/stat") or "").splitlines() if x.startswith(cpu)), "")
    for name, v in zip(("user", "nice", "system", "idle", "iowait", "irq", "softirq",
                        "steal"), line.split()[1:9], strict=False):
        out[f"stat_{name}"] = int(v) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    return out


def _loaded_player(setup: dict, nic: dict | None, port: int, seconds: int, period_ns: int,
                   work_ns: int, flood_period_ns: int, size: int, chrt: str,
                   times: str, before_player=None, delay_ns: int = 0,
                   rx_prio: int = 0) -> dict:
    """The player on the NIC's CPU while the sender floods eth0; eth0's counters over the
    flood give the NIC thread's throughput. ``rx_prio``: the receiver's SCHED_FIFO
    priority (0: SCHED_OTHER)."""
    count = seconds * 1_000_000_000 // flood_period_ns
    frames = seconds * 1_000_000_000 // period_ns
    rx = receiver(setup, port, count, 2_000_000_000, prio=rx_prio)
    pl = player(setup["nic_cpu"], period_ns, work_ns, frames, chrt, times, nic, delay_ns)
    if before_player:
        before_player(pl)
    c0, t0, cpu0 = rx_counters(), time.monotonic_ns(), cpu_times(setup, pl.pid)
    snd = sender(setup, port, flood_period_ns, count, size)
    snd_out, _ = snd.communicate(timeout=7200)
    c1, t1, cpu1 = rx_counters(), time.monotonic_ns(), cpu_times(setup, pl.pid)
    pl_out, _ = pl.communicate(timeout=7200)
    rx_out, _ = rx.communicate(timeout=7200)
    d = _delta(c0, c1)
    return {"sender": snd_out.strip(), "player": pl_out.strip(), "receiver": rx_out.strip(),
            "rx": d, "span_ns": t1 - t0,
            "cpu_ns": {k: (cpu1[k] - cpu0[k]) if cpu0[k] is not None and cpu1[k] is not None
                       else None for k in cpu0},
            "mbit_s": d["rx_bytes"] * 8 * 1000 / max(t1 - t0, 1)}


def scenario_seeds_player_fifo(runs: int, seconds: int, period_ns: int, work_ns: int,
                               flood_period_ns: int, size: int, port: int = 5001,
                               fifo50=None) -> dict:
    """Experiment 2: the player (``work_ns`` every ``period_ns``) on the NIC's CPU under a
    flood, at SCHED_FIFO 60 (above the NIC thread's 50) and at SCHED_FIFO 40 (below).
    ``fifo50(setup)``: what puts the NIC's path at SCHED_FIFO 50 before each row and
    returns the NIC thread (default: ``irqres restore``, nic_fifo50())."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    rows = []
    for run in range(runs):
        for order, prio in (("above", 60), ("below", 40)):
            nic = fifo50(setup) if fifo50 else nic_fifo50()
            r = _loaded_player(setup, None, port, seconds, period_ns, work_ns,
                               flood_period_ns, size, f"chrt -f {prio}",
                               os.path.join(OUT, f"fifo-{run}-{order}.txt"))
            r.update({"run": run, "order": order, "player_prio": prio, "thread": nic})
            rows.append(r)
            mark(f"player {order} NIC, run {run}: {r['player']}, {r['mbit_s']:.1f} Mbit/s")
    return {"setup": setup, "rows": rows}


def _where(pid: int | None) -> dict | None:
    """The CPU a task last ran on (/proc/PID/stat field 39), its CPUs and cgroup, and the
    CPU time it has had (ns, /proc/PID/schedstat)."""
    stat = read(f"/proc/{pid}/stat") if pid else None
    if not stat:
        return None
    return {"pid": pid, "cpu": int(stat[stat.rindex(")") + 2:].split()[36]),
            "cpus": cpus_allowed(pid), "cgroup": cgroup_of(pid), "run_ns": run_ns(pid) or 0}


def _irq_counts(irq: int) -> list[int]:
    """eth0's interrupts per CPU (/proc/interrupts)."""
    line = next((x for x in (read("/proc/interrupts") or "").splitlines()
                 if x.strip().startswith(f"{irq}:")), "")
    return [int(w) for w in line.split()[1:1 + (os.cpu_count() or 1)] if w.isdigit()]


def _delta_list(a: list[int], b: list[int]) -> list[int]:
    return [y - x for x, y in zip(a, b, strict=False)]


def _placement(setup: dict) -> dict:
    """Where the network path of eth0 runs now: the NIC thread, eth0's interrupt (its
    affinity, effective CPUs and counts per CPU), ksoftirqd of the NIC's CPU, NAPI
    threaded or not, and irqresd's state."""
    irq = _irq_of("eth0")
    nic = thread(NIC_THREAD)
    snd = thread(r"irq/\d+-eth1")
    return {"nic_thread": _where(nic and nic["pid"]), "nic_sched": nic and nic["sched"],
            "irq": irq, "irq_affinity": read(f"/proc/irq/{irq}/smp_affinity_list"),
            "irq_effective": read(f"/proc/irq/{irq}/effective_affinity_list"),
            "irq_counts": _irq_counts(irq) if irq is not None else [],
            "eth1_thread": _where(snd and snd["pid"]), "eth1_sched": snd and snd["sched"],
            "eth1_effective": read(f"/proc/irq/{setup['eth1_irq']}/effective_affinity_list"),
            "eth1_counts": _irq_counts(setup["eth1_irq"]),
            "ksoftirqd": _where(_ksoftirqd(setup["nic_cpu"])),
            "threaded_napi": read("/sys/class/net/eth0/threaded"),
            "irqresd": _irqresd_state()}


def _player_rows(setup: dict, phase: str, runs: int, seconds: int, period_ns: int,
                 work_ns: int, flood_period_ns: int, size: int, port: int) -> list[dict]:
    """Experiment 2's rows (the player above, then below the NIC thread) with where every
    piece ran: the player's CPU and cgroup as it started, the path's before and after."""
    rows = []
    tag = phase.replace(" ", "-")
    for run in range(runs):
        for order, prio in (("above", 60), ("below", 40)):
            seen: dict = {}

            def where_player(pl, seen=seen):
                wait_for(lambda: read(f"/proc/{pl.pid}/comm") == "seedplayer", 5, 0.002)
                seen["player_at_start"] = _where(pl.pid)

            nic = nic_fifo50()
            before = _placement(setup)
            r = _loaded_player(setup, None, port, seconds, period_ns, work_ns,
                               flood_period_ns, size, f"chrt -f {prio}",
                               os.path.join(OUT, f"regimes-{tag}-{run}-{order}.txt"),
                               before_player=where_player)
            after = _placement(setup)
            r.update({"phase": phase, "run": run, "order": order, "player_prio": prio,
                      "thread": nic, **seen, "before": before, "after": after,
                      "irq_delta": _delta_list(before["irq_counts"], after["irq_counts"]),
                      "eth1_delta": _delta_list(before["eth1_counts"], after["eth1_counts"])})
            rows.append(r)
            mark(f"regimes {phase}: player {order} NIC, run {run}: {r['player']}, "
                 f"{r['mbit_s']:.1f} Mbit/s, {r['receiver']}, irqs {r['irq_delta']}")
    return rows


def scenario_seeds_player_fifo_regimes(runs: int, seconds: int, period_ns: int, work_ns: int,
                                       flood_period_ns: int, size: int,
                                       cycles: list[list[int]], suite_order: bool = False,
                                       experiments: dict | None = None,
                                       at_boot: bool = False, port: int = 5001) -> dict:
    """Experiment 2 twice in one boot: (a) before irqres has done anything (irqresd not
    started), then (b) after the apply/restore cycles the VM suite's seeds boot makes
    before its experiment 2: irqresd started (it applies the profile), then for each
    (Q, T) of ``cycles`` the profile applied with the NIC thread at (Q, T) and restored
    (the latency experiment's), and one more restore (the tools experiment's). The
    scheduler's fingerprint is taken before the first apply and after every restore;
    its differences are kept. ``suite_order``: two more phases, (c) after the suite's
    order of events is reproduced (_suite_order()), (d) then with the eth1 thread
    allowed on the sender's CPU alone again. ``experiments`` ({"latency": ..., "tools":
    ...}: their scenarios' parameters): two more phases, after the latency and tools
    experiments themselves have run, then with the tracing they leave reset. ``at_boot``:
    irqresd enabled at boot instead (the VM suite's order: hub_setup() after its first
    apply), see _regimes_at_boot()."""
    exp = {"runs": runs, "seconds": seconds, "period_ns": period_ns, "work_ns": work_ns,
           "flood_period_ns": flood_period_ns, "size": size, "port": port}
    if at_boot:
        return _regimes_at_boot(exp, experiments)
    setup = hub_setup()
    rows = _player_rows(setup, "before", **exp)
    first = fingerprint("before any apply")
    diffs = {}
    sh("systemctl start irqresd.service")
    if not wait_for(lambda: _irqresd_state() == "active", 60, 0.2)[0]:
        raise RuntimeError(f"irqresd did not start:\n{_journal()}")
    applied = [{"reserved": "profile at start", "thread": wait_deadline(NIC_THREAD, 2_000_000,
                                                                         10_000_000)}]
    nic_fifo50()
    diffs["restore after start"] = fingerprint_diff(first, fingerprint("restore 0"))
    for i, (q, t) in enumerate(cycles):
        applied.append({"reserved": [q, t], "thread": nic_reserved(q, t)})
        nic_fifo50()
        diffs[f"restore after ({q}, {t})"] = fingerprint_diff(first, fingerprint(f"r{i + 1}"))
    nic_fifo50()
    diffs["restore again"] = fingerprint_diff(first, fingerprint("restore again"))
    rows += _player_rows(setup, "after cycles", **exp)
    controls = {}
    if suite_order:
        controls["suite order"] = _suite_order(setup, cycles[0])
        rows += _player_rows(setup, "suite order", **exp)
        controls["eth1 thread pinned"] = _eth1_thread_cpus(setup, str(setup["sender_cpu"]))
        rows += _player_rows(setup, "eth1 thread pinned", **exp)
    if experiments:
        controls["tracing before the experiments"] = _tracing()
        scenario_seeds_latency(**experiments["latency"])
        scenario_seeds_tools(**experiments["tools"])
        controls["tracing after the experiments"] = _tracing()
        diffs["after the experiments"] = fingerprint_diff(first, fingerprint("experiments"))
        rows += _player_rows(setup, "after the experiments", **exp)
        sh("trace-cmd reset")
        controls["tracing reset"] = _tracing()
        rows += _player_rows(setup, "tracing reset", **exp)
    return {"setup": setup, "rows": rows, "applied": applied, "fingerprint_diffs": diffs,
            "controls": controls, "apply_refusals": REFUSALS,
            "interrupts": read("/proc/interrupts")}


def _regimes_at_boot(exp: dict, experiments: dict | None) -> dict:
    """Experiment 2 as the VM suite's seeds boot has it: irqresd applied the profile at
    boot, hub_setup() after it, the NIC thread restored; then (``experiments``) after the
    latency and tools experiments."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    nic_fifo50()
    rows = _player_rows(setup, "boot apply restored", **exp)
    controls = {"tracing before the experiments": _tracing()}
    if experiments:
        scenario_seeds_latency(**experiments["latency"])
        scenario_seeds_tools(**experiments["tools"])
        controls["tracing after the experiments"] = _tracing()
        rows += _player_rows(setup, "after the experiments", **exp)
    return {"setup": setup, "rows": rows, "fingerprint_diffs": {}, "controls": controls,
            "apply_refusals": REFUSALS, "interrupts": read("/proc/interrupts")}


def _tracing() -> dict:
    """What tracefs is left doing: tracing on or off, the enabled events, the buffer."""
    return {f: read(os.path.join(TRACEFS, f)) for f in ("tracing_on", "set_event",
                                                         "current_tracer", "buffer_size_kb",
                                                         "trace_clock", "tracing_cpumask")}


def _eth1_thread_cpus(setup: dict, cpus: str) -> dict:
    """The sender's NIC's IRQ thread (SCHED_FIFO 90) allowed on ``cpus``; where it is."""
    t = thread(r"irq/\d+-eth1")
    sh(f"taskset -p -c {cpus} {t['pid']}", check=True)
    return {"eth1_thread": _where(t["pid"]),
            "eth1_affinity": read(f"/proc/irq/{setup['eth1_irq']}/smp_affinity_list")}


def _suite_order(setup: dict, reserved: list[int]) -> dict:
    """The order of the VM suite's seeds boot, where irqresd has made the NIC's partition
    before hub_setup() moves eth1's interrupt to the sender's CPU: eth1's interrupt and
    thread on every CPU (as at boot), the profile applied (partition made), eth1's
    interrupt moved to the sender's CPU and fired (its thread follows it), restored
    (partition removed). Returns the eth1 thread's placement at each step."""
    irq1 = setup["eth1_irq"]
    sh(f"echo 0-{setup['ncpu'] - 1} > /proc/irq/{irq1}/smp_affinity_list", check=True)
    steps = {"as at boot": _eth1_thread_cpus(setup, f"0-{setup['ncpu'] - 1}")}
    nic_reserved(*reserved)
    sh(f"echo {setup['sender_cpu']} > /proc/irq/{irq1}/smp_affinity_list", check=True)
    sh(f"ip netns exec {NS} ping -c 3 -i 0.2 {RX_ADDR}")
    t = thread(r"irq/\d+-eth1")
    steps["moved, partition made"] = {"eth1_thread": _where(t["pid"])}
    nic_fifo50()
    steps["restored"] = {"eth1_thread": _where(t["pid"]),
                         "eth1_effective": read(f"/proc/irq/{irq1}/effective_affinity_list")}
    return steps


TRACEFS = "/sys/kernel/tracing"


def _present(events: tuple[str, ...]) -> list[str]:
    """Those of ``events`` (``group/name``) this kernel has."""
    return [e for e in events if os.path.exists(os.path.join(TRACEFS, "events", e))]


def _switch_trace_start(cpu: int, buffer_kb: int,
                        events: tuple[str, ...] = ("sched/sched_switch",)) -> None:
    """``events`` (sched_switch alone by default) of one CPU into the ring buffer,
    CLOCK_MONOTONIC time stamps (the clock of the player's and the sender's logs, and of
    cyclictest's timers); no reader runs while it records."""
    for name, value in (("tracing_on", "0"), ("trace", ""), ("trace_clock", "mono"),
                        ("buffer_size_kb", str(buffer_kb)), ("tracing_cpumask",
                                                             f"{1 << cpu:x}"),
                        *((f"events/{e}/enable", "1") for e in _present(events)),
                        ("tracing_on", "1")):
        with open(os.path.join(TRACEFS, name), "w") as f:
            f.write(value)


def _switch_trace_stop(path: str, ncpu: int,
                       events: tuple[str, ...] = ("sched/sched_switch",)) -> dict:
    """Stop, save the ring buffer as a trace-cmd file, put tracefs back as it was."""
    with open(os.path.join(TRACEFS, "tracing_on"), "w") as f:
        f.write("0")
    ex = sh(f"trace-cmd extract -o {path}", timeout=600)
    for name, value in (*((f"events/{e}/enable", "0") for e in _present(events)),
                        ("trace_clock", "local"), ("tracing_cpumask", f"{(1 << ncpu) - 1:x}"),
                        ("trace", "")):
        with open(os.path.join(TRACEFS, name), "w") as f:
            f.write(value)
    return {"rc": ex["rc"], "out": (ex["out"] + ex["err"])[-1000:]}


#: what delays cyclictest (``latency_hrtick.py --trace``): its timer set and fired, its
#: wake-up and switch-in, every interrupt and soft IRQ on its CPU meanwhile, and each
#: packet received (so that a NAPI poll's work is not a stretch without events)
LATENCY_TRACE_EVENTS = ("sched/sched_switch", "sched/sched_waking", "timer/hrtimer_start",
                        "timer/hrtimer_expire_entry", "irq/irq_handler_entry",
                        "irq/irq_handler_exit", "irq/softirq_entry", "irq/softirq_exit",
                        "irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit",
                        "net/netif_receive_skb")


SCHED_FEATURES = "/sys/kernel/debug/sched/features"


def _hrtick_dl(on: bool) -> str:
    """SCHED_DEADLINE enforces a budget at the scheduler tick (4 ms at this kernel's
    HZ=250) unless the HRTICK_DL feature arms a timer for the end of the budget: with
    a 1 ms period and the tick, a thread overruns its budget by up to a tick and pays
    it back in throttled periods. Returns the feature list after the change."""
    if not os.path.exists(SCHED_FEATURES):
        sh("mount -t debugfs none /sys/kernel/debug")
    with open(SCHED_FEATURES, "w") as f:
        f.write("HRTICK_DL" if on else "NO_HRTICK_DL")
    return read(SCHED_FEATURES) or ""


def _adaptive_profile(path: str, nic_period_ns: int, tune: dict) -> None:
    with open(path, "w") as f:
        f.write(f"""version: 1
targets:
  - name: nic
    interface: eth0
    runtime: {tune['start_ns']}ns
    period: {nic_period_ns}ns
    min_interarrival: 50us
    buffer: 256
    mode: adaptive
    adaptive:
      sample: {tune['sample_ns']}ns
      gain: {tune['gain']}
      window: {tune['window']}
      default_job: {tune['default_job_ns']}ns
      min_runtime: {tune['min_ns']}ns
      max_runtime: {tune['max_ns']}ns
      hysteresis: {tune['hysteresis_ns']}ns
""")


def _irqresd_priority(prio: int) -> dict:
    """irqresd at SCHED_FIFO ``prio`` (0: back to SCHED_OTHER); its policy before."""
    pid = sh("systemctl show -p MainPID --value irqresd.service")["out"].strip()
    before = sched_attr(int(pid)) if pid.isdigit() and pid != "0" else None
    if before is not None:
        sh(f"chrt -f -p {prio} {pid}" if prio else f"chrt -o -p 0 {pid}", check=True)
    return {"pid": pid, "before": before}


def _tune_start(setup: dict, nic_period_ns: int, tune: dict, log: str,
                prio: int) -> subprocess.Popen:
    """`irqres tune` on the sender's vCPU (the NIC's CPU is its partition) at SCHED_FIFO
    ``prio``, started with its profile and waited for until it has logged a few
    intervals. Below the sender (SCHED_FIFO 90) it gets a sample now and then while
    the load runs, not every interval."""
    prof = "/run/seeds-adaptive.yaml"
    _adaptive_profile(prof, nic_period_ns, tune)
    proc = subprocess.Popen(f"exec chrt -f {prio} taskset -c {setup['sender_cpu']} irqres tune "
                            f"{prof} --log {log}", shell=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    ok, _ = wait_for(lambda: proc.poll() is not None
                     or len((read(log) or "").splitlines()) > 10, 300, 0.2)
    if proc.poll() is not None:
        raise RuntimeError(f"irqres tune stopped at once: {proc.communicate()[0][-2000:]}\n"
                           f"{_journal()}")
    if not ok:
        raise RuntimeError(f"irqres tune logged nothing in 300 s\n{_journal()}")
    return proc


def scenario_seeds_adaptive(runs: int, seconds: int, configs: list[dict], period_ns: int,
                            work_ns: int, priority: int, nic_period_ns: int, size: int,
                            phase_ns: list[int], load_periods_ns: list[int],
                            hrtick: bool = True, tune_priority: int = 95,
                            buffer_kb: int = 16384,
                            port: int = 5001) -> dict:
    """Experiment 5: a player on the NIC's CPU under a fluctuating load (``seedload
    vsend``: phases of ``phase_ns`` [min, max] at one of ``load_periods_ns``, the same
    draws for every configuration of a run), the NIC thread at a fixed budget or with
    ``irqres tune`` moving it. ``configs``: {"name", "kind": fifo50|fixed|tune, "q_ns"
    (fixed), "tune" (the adaptive settings)}. A sched_switch trace of the NIC's CPU gives
    the NIC thread's time per 1 ms; files adapt-<run>-<name>-* in /payload/out.
    ``hrtick``: budgets enforced by a timer (HRTICK_DL) rather than at the tick.
    ``tune_priority``: SCHED_FIFO of `irqres tune` and of irqresd, which answers it (the
    sender runs at 90 on the same vCPU)."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    features = _hrtick_dl(hrtick)
    irqresd = _irqresd_priority(tune_priority)
    cpu = setup["nic_cpu"]
    frames = seconds * 1_000_000_000 // period_ns
    rows = []
    for run in range(runs):
        for cfg in configs:
            base = os.path.join(OUT, f"adapt-{run}-{cfg['name']}")
            tune = None
            if cfg["kind"] == "fifo50":
                nic = nic_fifo50()
            elif cfg["kind"] == "fixed":
                nic = nic_reserved(cfg["q_ns"], nic_period_ns)
            else:
                tune = _tune_start(setup, nic_period_ns, cfg["tune"], base + "-tune.csv",
                                   tune_priority)
                nic = thread(NIC_THREAD)
            most = seconds * 1_000_000_000 // min(load_periods_ns) + len(load_periods_ns)
            rx = receiver(setup, port, most, 2_000_000_000)
            pl = player(cpu, period_ns, work_ns, frames, f"chrt -f {priority}",
                        base + "-player.txt", nic, delay_ns=period_ns)
            c0, cpu0 = rx_counters(), cpu_times(setup, pl.pid)
            _switch_trace_start(cpu, buffer_kb)
            snd = subprocess.Popen(
                f"exec ip netns exec {NS} chrt -f {SENDER_PRIO} taskset -c "
                f"{setup['sender_cpu']} {SEEDLOAD} vsend {RX_ADDR} {port} {size} "
                f"{seconds * 1_000_000_000} {run + 1} {phase_ns[0]} {phase_ns[1]} "
                f"{base}-phases.txt {' '.join(map(str, load_periods_ns))}",
                shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            snd_out, _ = snd.communicate(timeout=7200)
            c1, cpu1 = rx_counters(), cpu_times(setup, pl.pid)
            pl_out, _ = pl.communicate(timeout=7200)
            trace = _switch_trace_stop(base + ".dat", setup["ncpu"])
            rx_out, _ = rx.communicate(timeout=600)  # ends 2 s after the last datagram
            tune_out = None
            if tune:
                tune.send_signal(2)
                tune_out = tune.communicate(timeout=600)[0][-1500:]
            pids = {"nic_thread": (thread(NIC_THREAD) or {}).get("pid"), "player": pl.pid,
                    "ksoftirqd": _ksoftirqd(cpu)}
            r = {"run": run, "config": cfg["name"], "kind": cfg["kind"], "thread": nic,
                 "files": os.path.basename(base), "sender": snd_out.strip(),
                 "player": pl_out.strip(), "receiver": rx_out.strip(), "rx": _delta(c0, c1),
                 "cpu_ns": {k: (cpu1[k] - cpu0[k]) if cpu0[k] is not None
                            and cpu1[k] is not None else None for k in cpu0},
                 "pids": pids, "trace": trace, "tune_out": tune_out}
            rows.append(r)
            mark(f"adaptive run {run} {cfg['name']}: {r['player']}; {r['sender']}; "
                 f"rx {r['rx']['rx_packets']} missed {r['rx']['rx_missed_errors']}")
    nic_fifo50()
    _hrtick_dl(False)
    _irqresd_priority(0)
    return {"setup": setup, "rows": rows, "apply_refusals": REFUSALS,
            "sched_features": features, "irqresd": irqresd}


def _dl_profile(path: str, nic_q: int, nic_t: int, player_q: int, player_t: int) -> None:
    with open(path, "w") as f:
        f.write(f"""version: 1
targets:
  - name: nic
    interface: eth0
    runtime: {nic_q}ns
    period: {nic_t}ns
  - name: player
    task:
      comm: "seedplayer"
    runtime: {player_q}ns
    period: {player_t}ns
""")


def scenario_seeds_player_dl(runs: int, seconds: int, period_ns: int, work_ns: int,
                             flood_period_ns: int, size: int, tests: list[list[int]],
                             nic_period_ns: int, port: int = 5001) -> dict:
    """Experiment 3: player and NIC thread both under SCHED_DEADLINE through irqres.
    ``tests`` rows are (player Q, NIC Q); the player's period is ``period_ns``, the NIC's
    ``nic_period_ns``. For each row a profile with both targets is applied once the
    player runs (in the NIC's partition, before its first frame)."""
    wait_for(lambda: _irqresd_state() in ("active", "failed"), 60, 0.2)
    setup = hub_setup()
    prof = "/run/seeds-player-dl.yaml"
    rows = []
    for run in range(runs):
        for i, (pq, nq) in enumerate(tests):
            nic = nic_reserved(nq, nic_period_ns)
            _dl_profile(prof, nq, nic_period_ns, pq, period_ns)
            applied: dict = {}

            def give_reservation(pl, pq=pq, applied=applied):
                applied["apply"] = sh(f"irqres apply {prof}", timeout=120)
                applied["player_sched"] = _sched_of_player(pl.pid)
                applied["nic"] = thread(NIC_THREAD)

            r = _loaded_player(setup, nic, port, seconds, period_ns, work_ns,
                               flood_period_ns, size, "",
                               os.path.join(OUT, f"dl-{run}-test{i + 1}.txt"),
                               before_player=give_reservation, delay_ns=2_000_000_000)
            r.update({"run": run, "test": i + 1, "player_q": pq, "nic_q": nq, **applied})
            rows.append(r)
            mark(f"Test{i + 1} run {run}: player ({pq / 1e6:g},{period_ns / 1e6:g}) ms "
                 f"{applied['player_sched']}, NIC ({nq / 1e6:g},{nic_period_ns / 1e6:g}) "
                 f"ms: {r['player']}, {r['mbit_s']:.1f} Mbit/s")
            nic_fifo50()
    return {"setup": setup, "rows": rows}


def _sched_of_player(pid: int) -> dict | None:
    """The player's scheduling attributes (the Popen pid is the player: ``exec``)."""
    return sched_attr(pid)


def scenario_vcpu_turns(seconds: float, gap_ns: int, runs: int, heartbeat_ns: int = 0) -> dict:
    """How the testbed's vCPUs share the host (bench/seeds/vcpu_turns.py): a busy task
    that reads CLOCK_MONOTONIC in a loop (enforcement.BUSY) pinned to CPU 1 alone, then
    one on each CPU at once, ``runs`` times each; every stretch longer than ``gap_ns``
    between two of its reads is a pause (the task or its vCPU did not run).

    ``heartbeat_ns``: meanwhile a task on CPU 0 (SCHED_FIFO 99) wakes every that many ns
    (``seedload player`` with no work): under icount QEMU gives each vCPU at most its
    share of the guest time to the next timer, so a timer that is always near ends
    every turn soon."""
    from enforcement import BUSY

    out = []
    for run in range(runs):
        for cpus in ((1,), (0, 1)):
            mark(f"vcpu turns: run {run + 1}/{runs}, busy on CPU {cpus}"
                 + (f", heartbeat {heartbeat_ns} ns on CPU 0" if heartbeat_ns else ""))
            beat = None
            if heartbeat_ns:
                frames = int((seconds + 2) * 1e9 // heartbeat_ns)
                beat = subprocess.Popen(["chrt", "-f", "99", "taskset", "-c", "0", SEEDLOAD,
                                         "player", str(heartbeat_ns), "0", str(frames)],
                                        stdout=subprocess.PIPE, text=True)
            procs = {cpu: subprocess.Popen(["taskset", "-c", str(cpu), "python3", "-c", BUSY,
                                            str(seconds), str(gap_ns), f"turns{cpu}"],
                                           stdout=subprocess.PIPE, text=True)
                     for cpu in cpus}
            for cpu, p in procs.items():
                text, _ = p.communicate(timeout=seconds * 20 + 120)
                bursts = json.loads(text)
                out.append({"run": run, "busy": list(cpus), "cpu": cpu, "bursts": bursts})
            if beat is not None:
                said, _ = beat.communicate(timeout=seconds * 20 + 120)
                out[-1]["heartbeat"] = said.strip()
    return {"cases": out}
