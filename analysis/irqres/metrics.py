"""Per-thread metrics of the reservations irqresd holds: one snapshot model, rendered as
OpenMetrics text (``irqres stats --openmetrics``), as the Prometheus text format that
node_exporter's textfile collector reads (``--textfile DIR``), and turned into rates
between two snapshots (``irqres top``).

Where each number comes from:

* Q, D, T: the thread's reservation as irqresd reports it (``stats``);
* runtime used: ``cpu_time_ns`` (the first field of /proc/PID/schedstat), wait time the
  second field (time runnable but not running, throttled time included);
* context switches: voluntary and involuntary, as /proc/PID/status shows them;
* throttle events: derived, not counted by the kernel (SCHED_DEADLINE keeps no per-task
  throttle count): the involuntary context switches of a thread under SCHED_DEADLINE.
  Each time its budget runs out while it runs, the kernel switches it out once; a
  preemption by an earlier deadline counts too, so the count bounds the throttlings from
  above. It is at most one per period, and it is not the number of periods in which the
  budget ran out: where the kernel enforces budgets at its tick (HRTICK_DL off, the
  default; 4 ms at HZ=250) a thread overruns a budget shorter than the tick, and one
  throttling then pays for several periods (the kernel pushes the deadline on by as many
  periods as the overrun needs). A thread that needs 1 ms of every 10 ms and runs until
  its next tick shows some 20-35 events a second, not 100. The counter starts with the
  thread. Exported only for threads under SCHED_DEADLINE;
* taken: 1 while another irqresd or tool holds the thread (``status``: ``taken``), which
  irqresd then leaves alone (docs/coexistence.md);
* waiting: how long a thread irqresd moved into its cpuset partition has waited for the
  kernel to accept its reservation (``status``, WAITING: refused until it has run there,
  at its next interrupt); exported only while it waits;
* IRQ counts: ``irq_count``, the thread's IRQ lines summed over CPUs in /proc/interrupts;
* served time: the device-thread time a target with ``serves:`` spent per process it
  woke (:mod:`irqres.served_time`, docs/process-aware.md "Accounting"), with its
  activations, whether the accounting runs and the trace events it lost;
* NIC drops: rx_dropped and rx_missed_errors of /sys/class/net/IF/statistics, for a
  target whose threads serve an interface (found from their action names), once per
  (target, interface): the queues of one NIC share these counters.

Time stays integer nanoseconds; the exposition writes seconds as exact decimals.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .client import Client
from .errors import IrqresError
from .procfs import net_interface, read_net_counters
from .served_time import NO_ACCOUNTING, Accounting, AccountingError
from .served_time import parse as parse_accounting
from .targetkind import TargetKind


class MetricsError(IrqresError):
    """The metrics cannot be written (the textfile directory, a bad name)."""


@dataclass(frozen=True)
class ThreadSample:
    """One thread's reservation and cumulative counters at one instant."""

    pid: int
    comm: str
    target: str
    kind: TargetKind
    policy: str
    cpus: str
    runtime_ns: int | None
    period_ns: int | None
    deadline_ns: int | None
    cpu_time_ns: int
    wait_time_ns: int
    voluntary: int
    involuntary: int
    irq_count: int | None           # None for a task
    irqs: tuple[int, ...] = ()
    interface: str | None = None
    taken: bool = False             # another irqresd or tool holds it (status "taken")


@dataclass(frozen=True)
class Snapshot:
    """What irqresd holds and the counters of its threads, read together."""

    time_ns: int                    # when irqresd read the counters (its monotonic clock)
    daemon_pid: int | None
    profile: str | None
    threads: tuple[ThreadSample, ...]
    # (target, interface) -> {counter: value}
    nic: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    # (target, comm, pid) -> ns it has waited to be reserved (status, WAITING)
    waiting: dict[tuple[str, str, int], int] = field(default_factory=dict)
    accounting: Accounting = NO_ACCOUNTING


def _int(v: object) -> int | None:
    return None if v is None else int(v)  # type: ignore[call-overload]


def snapshot(status: dict, stats: dict, sys_root: str = "/sys") -> Snapshot:
    """A :class:`Snapshot` from irqresd's ``status`` and ``stats`` replies
    (docs/protocol.md). Raises :class:`MetricsError` on a malformed reply."""
    kinds, actions, cpus, waiting, taken = {}, {}, {}, {}, {}
    for t in status.get("targets") or []:
        kinds[t.get("name")] = TargetKind.of(t)
        for w in t.get("waiting") or []:
            try:
                waiting[(str(t.get("name")), str(w.get("comm") or ""), int(w["pid"]))] = int(
                    w["waiting_ns"])
            except (KeyError, TypeError, ValueError) as exc:
                raise MetricsError(f"irqresd status: waiting thread: missing or bad field "
                                   f"{exc}") from exc
        for th in t.get("threads") or []:
            actions[th.get("pid")] = list(th.get("actions") or [])
            cpus[th.get("pid")] = str(th.get("cpus") or "")
            taken[th.get("pid")] = bool(th.get("taken"))
    threads = []
    nic: dict[tuple[str, str], dict[str, int]] = {}
    try:
        for th in stats.get("threads") or []:
            pid, target = int(th["pid"]), str(th.get("target") or "")
            kind = kinds.get(target, TargetKind.IRQ if th.get("irqs") else TargetKind.TASK)
            iface = net_interface(actions.get(pid, []), sys_root) if kind == TargetKind.IRQ \
                else None
            if iface and (target, iface) not in nic:
                nic[(target, iface)] = read_net_counters(iface, sys_root)
            threads.append(ThreadSample(
                pid, str(th.get("comm") or ""), target, kind, str(th.get("policy") or ""),
                cpus.get(pid, ""), _int(th.get("runtime_ns")), _int(th.get("period_ns")),
                _int(th.get("deadline_ns")), int(th["cpu_time_ns"]),
                int(th.get("wait_time_ns") or 0), int(th["voluntary_switches"]),
                int(th["involuntary_switches"]),
                _int(th.get("irq_count")) if kind == TargetKind.IRQ else None,
                tuple(int(i) for i in th.get("irqs") or []), iface, taken.get(pid, False)))
        return Snapshot(int(stats.get("time_ns") or 0), _int(status.get("pid")),
                        status.get("profile"), tuple(threads), nic, waiting,
                        parse_accounting(stats))
    except AccountingError as exc:
        raise MetricsError(str(exc)) from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise MetricsError(f"irqresd stats: missing or bad field {exc}") from exc


def collect(client: Client, sys_root: str = "/sys") -> Snapshot:
    """Ask irqresd for ``status`` and ``stats`` and read the NIC counters."""
    status = client.status()
    return snapshot(status, client.stats(), sys_root)


# -- exposition -------------------------------------------------------------------------
@dataclass
class Family:
    """A metric family: its samples as (labels, value text)."""

    name: str                       # without _total (OpenMetrics) or a unit suffix added
    kind: str                       # counter, gauge, info
    help: str
    unit: str = ""
    samples: list[tuple[dict[str, str], str]] = field(default_factory=list)


_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def seconds(ns: int) -> str:
    """Integer ns as exact decimal seconds: 1500000 -> 0.0015."""
    whole, frac = divmod(int(ns), 1_000_000_000)
    return f"{whole}.{frac:09d}".rstrip("0").rstrip(".") if frac else str(whole)


def up(answering: bool) -> Family:
    """``irqres_up``: 1 when irqresd answered, 0 when it did not (so a stale textfile
    cannot pass for a live one)."""
    f = Family("irqres_up", "gauge", "1 when irqresd answered the status and stats requests.")
    f.samples.append(({}, "1" if answering else "0"))
    return f


def families(snap: Snapshot) -> list[Family]:
    """The metric families of a snapshot, in a fixed order."""
    info = Family("irqres_daemon", "info", "The irqresd that answered and its profile.")
    info.samples.append(({"profile": snap.profile or "", "daemon_pid": str(snap.daemon_pid
                                                                           or "")}, "1"))
    fams = [up(True), info]

    def fam(name: str, kind: str, help_: str, unit: str = "") -> Family:
        f = Family(name, kind, help_, unit)
        fams.append(f)
        return f

    q = fam("irqres_thread_runtime_seconds", "gauge", "Reserved budget Q per period.",
            "seconds")
    d = fam("irqres_thread_deadline_seconds", "gauge", "Relative deadline D.", "seconds")
    t = fam("irqres_thread_period_seconds", "gauge", "Reservation period T.", "seconds")
    cpu = fam("irqres_thread_cpu_seconds", "counter",
              "CPU time the thread ran (runtime used; /proc/PID/schedstat).", "seconds")
    wait = fam("irqres_thread_wait_seconds", "counter", "Time runnable but not running, "
               "throttled time included (/proc/PID/schedstat).", "seconds")
    sw = fam("irqres_thread_context_switches", "counter",
             "Context switches by kind (/proc/PID/status).")
    thr = fam("irqres_thread_throttle_events", "counter",
              "Times the kernel took the CPU from the thread under SCHED_DEADLINE: its "
              "involuntary context switches (one per throttling, when its budget ran out "
              "while it ran; preemptions by earlier deadlines count too). At most one per "
              "period, and not the periods in which the budget ran out: with budgets "
              "enforced at the scheduler tick (HRTICK_DL off; 4 ms at HZ=250) one "
              "throttling can pay for several periods' budgets.")
    irq = fam("irqres_thread_interrupts", "counter",
              "Interrupts raised on the thread's IRQ lines (/proc/interrupts, all CPUs).")
    waiting = fam("irqres_thread_waiting_seconds", "gauge",
                  "How long a thread moved into its cpuset partition has waited for the "
                  "kernel to accept its reservation (until it has run there once).", "seconds")
    taken_ = fam("irqres_thread_taken", "gauge",
                 "1 while another irqresd or tool holds the thread (its scheduling is "
                 "theirs, and irqresd leaves it alone until it is free or back in line), "
                 "else 0.")
    drops = fam("irqres_nic_drops", "counter",
                "Frames the NIC of an IRQ target dropped (/sys/class/net/IF/statistics).")
    for th in snap.threads:
        lb = {"target": th.target, "comm": th.comm, "pid": str(th.pid)}
        for f, v in ((q, th.runtime_ns), (d, th.deadline_ns), (t, th.period_ns)):
            if v is not None and th.policy == "deadline":
                f.samples.append((lb, seconds(v)))
        cpu.samples.append((lb, seconds(th.cpu_time_ns)))
        wait.samples.append((lb, seconds(th.wait_time_ns)))
        sw.samples.append(({**lb, "kind": "voluntary"}, str(th.voluntary)))
        sw.samples.append(({**lb, "kind": "involuntary"}, str(th.involuntary)))
        taken_.samples.append((lb, "1" if th.taken else "0"))
        if th.policy == "deadline":
            thr.samples.append((lb, str(th.involuntary)))
        if th.irq_count is not None:
            irq.samples.append(({**lb, "irqs": ",".join(str(i) for i in th.irqs)},
                                str(th.irq_count)))
    for (target, comm, pid), ns in sorted(snap.waiting.items()):
        waiting.samples.append(({"target": target, "comm": comm, "pid": str(pid)},
                                seconds(ns)))
    _served_families(snap.accounting, fam)
    for (target, iface), counters in sorted(snap.nic.items()):
        for name, v in sorted(counters.items()):
            drops.samples.append(({"target": target, "interface": iface, "counter": name},
                                  str(v)))
    return fams


def _served_families(acc: Accounting, fam: Callable[..., Family]) -> None:
    """The accounting families, only where some target asked for accounting."""
    if not acc.wanted:
        return
    fam("irqres_accounting_enabled", "gauge", "1 while irqresd's tracefs instance "
        "follows the threads of the targets with serves:, 0 when it could not be made "
        "(irqres stats says why).").samples.append(({}, "1" if acc.enabled else "0"))
    fam("irqres_accounting_lost_events", "counter", "Trace events the kernel dropped; "
        "activations they touch are not charged.").samples.append(({}, str(acc.lost_events)))
    fam("irqres_accounting_dropped_activations", "counter", "Activations not charged: "
        "touched by lost events, or one of their switches was not traced.").samples.append(
        ({}, str(acc.dropped_activations)))
    t = fam("irqres_served_irq_seconds", "counter", "Device-thread time spent on behalf of "
            "each process a target's threads served (an activation's time split by the "
            "packets each served thread read, else evenly among the processes it woke; "
            "pid -1: served nobody).", "seconds")
    a = fam("irqres_served_activations", "counter",
            "Activations of a target's threads that gave the process time.")
    k = fam("irqres_served_packets", "counter",
            "Packets the process read that a target's threads delivered.")
    for s in acc.served:
        lb = {"target": s.target, "comm": s.comm, "pid": str(s.pid)}
        t.samples.append((lb, seconds(s.irq_time_ns)))
        a.samples.append((lb, str(s.activations)))
        k.samples.append((lb, str(s.packets)))


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(lb: dict[str, str]) -> str:
    if not lb:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in lb.items()) + "}"


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def render(fams: Iterable[Family], openmetrics: bool = True) -> str:
    """The families as OpenMetrics 1.0 text (``# EOF`` at the end, counters' samples
    ``_total``, ``# UNIT``), or with ``openmetrics=False`` as the Prometheus text format
    0.0.4 that node_exporter's textfile collector reads (no UNIT, no EOF, the counter's
    name with ``_total`` in TYPE and HELP, info as a gauge ``_info``)."""
    out = []
    for f in fams:
        if not _NAME.match(f.name):
            raise MetricsError(f"metric name {f.name!r} is not valid")
        suffix = {"counter": "_total", "info": "_info"}.get(f.kind, "")
        if openmetrics:
            head, kind = f.name, f.kind
        else:
            head, kind = f.name + suffix, "gauge" if f.kind == "info" else f.kind
        out.append(f"# TYPE {head} {kind}")
        if openmetrics and f.unit:
            out.append(f"# UNIT {head} {f.unit}")
        out.append(f"# HELP {head} {_help(f.help)}")
        for lb, value in f.samples:
            out.append(f"{f.name}{suffix}{_labels(lb)} {value}")
    if openmetrics:
        out.append("# EOF")
    return "\n".join(out) + "\n"


def write_textfile(directory: str, text: str, name: str = "irqres.prom") -> str:
    """Write ``text`` to DIRECTORY/NAME atomically (a temporary file in the same
    directory, flushed to disk, then renamed over it), so node_exporter never reads half
    a file. Returns the path."""
    if not os.path.isdir(directory):
        raise MetricsError(f"{directory}: not a directory (node_exporter's "
                           "--collector.textfile.directory)")
    path = os.path.join(directory, name)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
    except OSError as exc:
        raise MetricsError(f"{directory}: cannot write: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise MetricsError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    return path
