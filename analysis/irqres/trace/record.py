"""Record the events ``irqres analyze`` needs without ``trace-cmd record``.

``trace-cmd record`` fails on hosts whose function tracing is locked down (it cannot
open set_ftrace_pid). This recorder only uses what works everywhere:

1. a private tracefs instance ``instances/irqres-<pid>`` (its own ring buffer, so the
   top-level tracing setup and other users of tracefs are left alone), with
   ``buffer_size_kb`` and the events enabled through its ``set_event``;
2. ``tracing_on`` while the workload runs (a command, or a fixed duration);
3. ``trace-cmd extract -B <instance> -o FILE`` to write a trace.dat;
4. the instance is removed, and any top-level tracefs setting that changed while
   extracting (tracing_on, buffer_size_kb, set_event, options, ...) is put back.

The per-CPU overrun / dropped counters are returned so the caller can warn about a
buffer that was too small.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

from ..errors import TraceError

log = logging.getLogger(__name__)

EVENTS = (
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_migrate_task",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "sched:sched_stat_runtime",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "net:netif_receive_skb",
    "skb:consume_skb",
    "skb:skb_copy_datagram_iovec",
    "sock:sk_data_ready",
    "sock:sock_recv_length",
)

#: Events recorded when the kernel has them, skipped (with a note in the log) when not:
#: the analysis uses them where the trace holds them and does without otherwise.
OPTIONAL_EVENTS = frozenset({"sched:sched_stat_runtime", "irq:softirq_entry",
                             "irq:softirq_exit", "net:netif_receive_skb", "skb:consume_skb",
                             "skb:skb_copy_datagram_iovec", "sock:sk_data_ready",
                             "sock:sock_recv_length"})

TRACEFS_CANDIDATES = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")

# top-level settings put back after trace-cmd extract if they changed
_SETTINGS = ("tracing_on", "buffer_size_kb", "current_tracer", "trace_clock",
             "tracing_cpumask", "set_event", "set_event_pid", "buffer_percent")


@dataclass
class RecordResult:
    """What a recording produced."""

    path: str
    duration_ns: int
    returncode: int | None   # of the command, None when recording for a duration
    overrun: dict[int, int]  # cpu -> events overwritten (oldest lost)
    dropped: dict[int, int]  # cpu -> events dropped
    stopped: bool = False    # the duration ran out first and the command was stopped


def find_tracefs() -> str:
    """The mounted tracefs directory. Raises TraceError when there is none."""
    for d in TRACEFS_CANDIDATES:
        if os.path.isfile(os.path.join(d, "available_events")):
            return d
    raise TraceError(
        "tracefs is not mounted (looked in " + ", ".join(TRACEFS_CANDIDATES) + "); mount it "
        "with: mount -t tracefs nodev /sys/kernel/tracing")


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def _write(path: str, value: str) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(value)
    except OSError as exc:
        raise TraceError(f"{path}: cannot write {value.strip()!r}: {exc.strerror}") from exc


def _append(path: str, lines: list[str]) -> None:
    """Add entries to set_event-like files, one write each, without truncating."""
    fd = os.open(path, os.O_WRONLY)
    try:
        for line in lines:
            os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _snapshot(tracefs: str) -> dict[str, str]:
    names = list(_SETTINGS)
    opts = os.path.join(tracefs, "options")
    if os.path.isdir(opts):
        names += [f"options/{n}" for n in sorted(os.listdir(opts))]
    out = {}
    for n in names:
        v = _read(os.path.join(tracefs, n))
        if v is not None:
            out[n] = v
    return out


def buffer_kb(text: str) -> int | None:
    """The per-CPU ring buffer size a ``buffer_size_kb`` file says, in KiB: the size the
    buffer has, or (``"7 (expanded: 1408)"``, a buffer the kernel has not yet grown to
    its size because no event was ever enabled since boot) the size it grows to; None
    when the text says neither."""
    text = text.strip()
    if "expanded:" in text:
        text = text.split("expanded:")[1].strip(" )")
    word = text.split()[0] if text else ""
    return int(word) if word.isdigit() else None


# The kernel keeps a buffer in whole pages of 4080 bytes of data and reports the size of
# those: 1408 KiB written reads back as 1410.
_BUFFER_PAGE_KB = 4


def _restore(tracefs: str, before: dict[str, str]) -> None:
    after = _snapshot(tracefs)
    for name, old in before.items():
        if after.get(name) == old:
            continue
        value = old
        if name == "buffer_size_kb":
            # Enabling an event in any instance grows the top buffer to its size once and
            # for good ("7 (expanded: 1408)" -> "1410"); that size is what to keep.
            want, got = buffer_kb(old), buffer_kb(after.get(name, ""))
            if want is None:
                log.warning("tracefs buffer_size_kb: %r unreadable, left as it is", old)
                continue
            if got is not None and abs(got - want) < _BUFFER_PAGE_KB:
                continue
            value = str(want)
        elif name in ("set_event", "set_event_pid"):
            # these files take one entry per write; clear, then add back
            path = os.path.join(tracefs, name)
            try:
                with open(path, "w") as fh:
                    fh.write("")
                _append(path, [ln.strip() for ln in old.splitlines() if ln.strip()])
            except OSError as exc:
                log.warning("%s: could not restore: %s", path, exc.strerror)
            continue
        try:
            _write(os.path.join(tracefs, name), value)
            log.info("tracefs %s restored to %r", name, value.strip())
        except TraceError as exc:
            log.warning("%s", exc)


def _cpu_counters(instance: str) -> tuple[dict[int, int], dict[int, int]]:
    overrun, dropped = {}, {}
    per_cpu = os.path.join(instance, "per_cpu")
    for d in sorted(os.listdir(per_cpu)) if os.path.isdir(per_cpu) else []:
        if not d.startswith("cpu") or not d[3:].isdigit():
            continue
        text = _read(os.path.join(per_cpu, d, "stats")) or ""
        vals = {}
        for line in text.splitlines():
            k, _, v = line.partition(":")
            if v.strip().isdigit():
                vals[k.strip()] = int(v)
        cpu = int(d[3:])
        overrun[cpu] = vals.get("overrun", 0)
        dropped[cpu] = vals.get("dropped events", 0)
    return overrun, dropped


def record(output: str, *, command: list[str] | None = None, duration_ns: int | None = None,
           buffer_kb: int = 16384, events: tuple[str, ...] = EVENTS,
           tracefs: str | None = None, trace_cmd: str = "trace-cmd") -> RecordResult:
    """Record ``events`` while ``command`` runs, or for ``duration_ns``, into ``output``.

    With both, the command is stopped (SIGTERM, then SIGKILL after a second) when the
    duration is over.

    Raises
    ------
    TraceError
        tracefs missing or not writable (not root), an event the kernel lacks, a command
        that cannot start, trace-cmd missing or failing. The message names the cause.
    """
    if command is None and duration_ns is None:
        raise TraceError("record: give a command to run or a duration")
    if duration_ns is not None and duration_ns <= 0:
        raise TraceError(f"record: duration must be positive, got {duration_ns} ns")
    if buffer_kb <= 0:
        raise TraceError(f"record: buffer size must be positive, got {buffer_kb} KiB")
    tc = shutil.which(trace_cmd)
    if tc is None:
        raise TraceError(f"record: {trace_cmd} not found; install trace-cmd "
                         "(apt-get install trace-cmd)")
    out_dir = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(out_dir):
        raise TraceError(f"{output}: directory {out_dir} does not exist")
    tracefs = tracefs or find_tracefs()
    available = set((_read(os.path.join(tracefs, "available_events")) or "").split())
    skipped = [e for e in events if e not in available and e in OPTIONAL_EVENTS]
    for e in skipped:
        log.info("record: the kernel has no %s event; recording without it", e)
    events = tuple(e for e in events if e not in skipped)
    missing = [e for e in events if e not in available]
    if missing:
        raise TraceError(f"record: the kernel has no {', '.join(missing)} event "
                         f"(see {tracefs}/available_events)")
    name = f"irqres-{os.getpid()}"
    instance = os.path.join(tracefs, "instances", name)
    before = _snapshot(tracefs)
    try:
        os.mkdir(instance)
    except OSError as exc:
        raise TraceError(f"{instance}: cannot create a tracefs instance: {exc.strerror}"
                         + (" (run as root)" if exc.errno in (13, 1) else "")) from exc
    proc = None
    try:
        _write(os.path.join(instance, "tracing_on"), "0")
        _write(os.path.join(instance, "buffer_size_kb"), str(buffer_kb))
        try:
            _append(os.path.join(instance, "set_event"), list(events))
        except OSError as exc:
            raise TraceError(f"{instance}/set_event: cannot enable the events: "
                             f"{exc.strerror}") from exc
        _write(os.path.join(instance, "trace"), "")
        t0 = time.monotonic_ns()
        _write(os.path.join(instance, "tracing_on"), "1")
        rc, stopped = None, False
        if command:
            try:
                proc = subprocess.Popen(command)
            except OSError as exc:
                raise TraceError(f"record: cannot run {command[0]}: {exc.strerror}") from exc
            try:
                rc = proc.wait(timeout=None if duration_ns is None else duration_ns / 1e9)
            except subprocess.TimeoutExpired:
                stopped = True
                proc.send_signal(signal.SIGTERM)
                try:
                    rc = proc.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    rc = proc.wait()
        elif duration_ns is not None:     # (one of the two is given: checked above)
            time.sleep(duration_ns / 1e9)
        _write(os.path.join(instance, "tracing_on"), "0")
        elapsed = time.monotonic_ns() - t0
        overrun, dropped = _cpu_counters(instance)
        res = subprocess.run([tc, "extract", "-B", name, "-o", output],
                             capture_output=True, text=True)
        if res.returncode != 0 or not os.path.isfile(output):
            err = (res.stderr or res.stdout).strip().splitlines()
            raise TraceError(f"record: trace-cmd extract failed (exit {res.returncode}): "
                             + (err[-1] if err else "no output"))
        return RecordResult(output, elapsed, rc, overrun, dropped, stopped)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if os.path.isdir(instance):
            try:
                _write(os.path.join(instance, "tracing_on"), "0")
            except TraceError:
                pass
            try:
                os.rmdir(instance)
            except OSError as exc:
                log.warning("%s: could not remove the tracefs instance: %s", instance,
                            exc.strerror)
        _restore(tracefs, before)
