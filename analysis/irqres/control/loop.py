"""``irqres tune``: run the threshold controller against irqresd.

The daemon is the one source of truth: the adaptive targets and their settings come from
its ``status`` (it parsed the profile), the counters from its ``stats``, and every new
budget goes back through ``set-budget``, which irqresd admission-checks and applies.
The loop survives an irqresd restart (it reconnects with backoff, re-applies the profile
when the new daemon does not hold it, and starts the controllers again from the budgets
in force) and threads that disappear and come back (a returning thread starts a fresh
window). When it stops, however it stops, every budget it changed is put back to the one
the target had when the loop took it over from that irqresd (the profile's, unless
someone set another before), so no adapted budget outlives the controller.

A reply irqresd garbles (not JSON, an error, ``stats`` without its thread list) costs the
interval it was for: it is logged and the next interval is tried; only
:data:`MAX_BAD_REPLIES` in a row end the loop (:class:`ControlError`). A daemon that is
gone or stops answering is waited for (reconnecting with backoff) until the duration is
over or the loop is stopped. Every request waits at most :data:`REQUEST_TIMEOUT_S`, and
none goes on past the duration or past :meth:`Tuner.stop`; putting the budgets back at the
end waits at most :data:`RESTORE_TIMEOUT_S` per request.
"""

from __future__ import annotations

import logging
import os
import select
import sys
import time
from typing import IO, Any

from ..client import Client, DaemonNotRunning, DaemonUnreachable, RequestCancelled
from ..errors import DaemonError
from ..targetkind import TargetKind
from ..units import format_duration
from .admission import bandwidth_left, domain_usage, rt_capacity
from .controller import ControlError, ControllerConfig, Step, ThresholdController
from .csvlog import CsvLog
from .inputs import (
    Counters,
    InputError,
    Interval,
    counters_from_stats,
    interval,
    net_interface,
    per_sample,
    read_interrupts,
    read_net_drops,
)
from .state import TargetState
from .view import TerminalView

logger = logging.getLogger(__name__)

REFUSAL_HOLD_NS = 1_000_000_000     # after a refused budget, ask no further that way this long
#: A refusal for bandwidth (irqresd's reply has "errno": "EBUSY"). A decrease asks for
#: none, so a decrease refused so was refused for its size (on 7.x, the bound of a thread
#: beside its partition: docs/vm.md, "What 7.3 changes"), and half the step is asked at the
#: next interval rather than after REFUSAL_HOLD_NS.
SIZE_REFUSAL = "EBUSY"
#: Requests at most to put one target's budget back in steps (loop.Tuner._put_back)
PUT_BACK_TRIES = 64
#: Bad replies (not JSON, an error, a stats reply without its threads) in a row that end
#: the loop; each one before costs one interval.
MAX_BAD_REPLIES = 5
#: Seconds a request of the loop may wait for its reply (a daemon that does not answer
#: by then is reconnected to).
REQUEST_TIMEOUT_S = 2.0
#: Seconds each request that puts a budget back at the end may wait.
RESTORE_TIMEOUT_S = 1.0


class Tuner:
    """The controller loop for every adaptive target irqresd holds.

    Parameters
    ----------
    socket
        irqresd's socket (default as for :class:`irqres.client.Client`).
    profile
        When given, irqresd must hold this profile: it is applied if it does not.
    duration_ns
        Stop after this long; None runs until :meth:`stop`.
    log_path
        CSV log of every interval (:data:`irqres.control.csvlog.LOG_COLUMNS`).
    view
        A stream for the live one-line-per-target view (a TTY), or None.
    """

    def __init__(self, socket: str | None = None, profile: str | None = None,
                 duration_ns: int | None = None, log_path: str | None = None,
                 view: IO[str] | None = None, sys_root: str = "/sys", proc_root: str = "/proc",
                 backoff_ns: tuple[int, int] = (100_000_000, 2_000_000_000)):
        self.socket = socket
        self.profile = os.path.abspath(profile) if profile else None
        self.duration_ns = duration_ns
        self.log = CsvLog(log_path) if log_path else None
        self.view = TerminalView(view) if view is not None else None
        self.sys_root, self.proc_root = sys_root, proc_root
        self.backoff_ns = backoff_ns
        self.targets: dict[str, TargetState] = {}
        self.client: Client | None = None
        self.reconnects = 0
        # stop() is called from signal handlers: a flag and a self-pipe, no lock. A
        # threading.Event here deadlocks when the signal lands while the main thread holds
        # the Event's own lock inside wait() (its set() then waits for that lock forever).
        self._stopped = False
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._t0 = time.monotonic_ns()
        self._capacity = rt_capacity(proc_root)
        self._others: list[dict] = []       # threads of static targets (for bandwidth)
        self._asked: set[int] = set()       # new pids already looked up in status
        self._tick_no = 0
        self._irq_tick = -1
        self._irq_counts: dict[int, int] = {}
        # target -> runtime_ns it had when taken over from the irqresd of _daemon_pid
        self.baseline: dict[str, int] = {}
        self._daemon_pid: object = None
        self.restored: dict[str, int] = {}      # target -> runtime_ns put back at the end
        self.bad_replies = 0                    # in a row; MAX_BAD_REPLIES end the loop
        self.skipped = 0                        # intervals lost to bad replies

    # -- control --------------------------------------------------------------------
    def stop(self) -> None:
        """End the loop (it then puts the budgets back). Safe in a signal handler and
        from another thread."""
        self._stopped = True
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):     # the pipe is full (already woken) or closed
            pass

    def __del__(self) -> None:
        for fd in (getattr(self, "_wake_r", -1), getattr(self, "_wake_w", -1)):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def _time_left(self) -> int | None:
        """ns until --duration is over; None without one."""
        if self.duration_ns is None:
            return None
        return self._t0 + self.duration_ns - time.monotonic_ns()

    def _sleep(self, ns: int) -> bool:
        """Wait ``ns`` (bounded by the duration); True when stopped meanwhile."""
        left = self._time_left()
        if left is not None:
            ns = min(ns, left)
        if not self._stopped and ns > 0:
            # select() takes float seconds; a signal's handler writes to the pipe
            select.select([self._wake_r], [], [], ns / 1e9)
        return self._stopped

    def _expired(self) -> bool:
        left = self._time_left()
        return self._stopped or (left is not None and left <= 0)

    def _client(self) -> Client:
        """A connection whose requests give up at :meth:`stop` and at the duration's end."""
        end = None if self.duration_ns is None else self._t0 + self.duration_ns
        return Client(self.socket, timeout=REQUEST_TIMEOUT_S, cancel_fd=self._wake_r,
                      deadline_ns=end)

    # -- daemon ---------------------------------------------------------------------
    def _connect(self, first: bool) -> bool:
        """Connect, make sure the profile is held, load the targets. False when stopped."""
        delay = self.backoff_ns[0]
        while True:
            client = self._client()
            try:
                client.connect()
                status = client.status()
                if self.profile and not _same_file(status.get("profile"), self.profile):
                    logger.info("irqresd holds %s; applying %s", status.get("profile"),
                                self.profile)
                    client.apply(self.profile)
                    status = client.status()
                self._load(status)
                self.client = client
                return True
            except DaemonUnreachable as exc:
                client.close()
                if first:
                    raise
                logger.warning("%s; retrying in %s", exc, format_duration(delay))
            except BaseException:
                client.close()
                raise
            if self._expired():
                return False
            self._sleep(delay)
            delay = min(delay * 2, self.backoff_ns[1])
            if self._expired():
                return False

    def _load(self, status: dict[str, Any]) -> None:
        old = self.targets
        self.targets = {}
        self._others = []
        now = time.monotonic_ns()
        if status.get("pid") != self._daemon_pid:
            # another irqresd (a restart): it applied the profile afresh
            self._daemon_pid = status.get("pid")
            self.baseline = {}
        for t in status.get("targets") or []:
            if t.get("mode") != "adaptive":
                self._others.extend(dict(th, period_ns=t.get("period_ns"),
                                         runtime_ns=t.get("runtime_ns"))
                                    for th in t.get("threads") or [])
                continue
            cfg = ControllerConfig.from_status(t)
            runtime = int(t["runtime_ns"])
            sample = int(t["adaptive"].get("sample_ns") or 10_000_000)
            st = TargetState(t["name"], TargetKind.of(t), cfg,
                             ThresholdController(cfg, runtime), runtime, cfg.period_ns, sample)
            st.threads = {int(th["pid"]): th for th in t.get("threads") or []}
            st.next_due_ns = now + sample
            prev = old.get(st.name)
            st.sent = prev.sent if prev else 0
            self.baseline.setdefault(st.name, runtime)
            self.targets[st.name] = st
        if not self.targets:
            raise ControlError("irqresd holds no adaptive target"
                               + (f" (profile {status.get('profile')})"
                                  if status.get("profile") else " (no profile loaded)")
                               + ": give targets `mode: adaptive` in the profile")

    # -- the loop -------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Run until the duration is over or :meth:`stop`; return a summary per target."""
        try:
            self._loop()
        except RequestCancelled as exc:     # stopped, or the duration ended, mid-request
            logger.debug("%s", exc)
        finally:
            last = {name: st.runtime_ns for name, st in self.targets.items()}
            try:
                self.restore_budgets()
            finally:
                if self.client:
                    self.client.close()
                self._close_log(failing=sys.exc_info()[1] is not None)
        return {name: {"budget_ns": st.runtime_ns, "last_ns": last.get(name, st.runtime_ns),
                       "sent": st.sent, "threshold_ns": st.ctl.threshold_ns,
                       "restored": name in self.restored}
                for name, st in self.targets.items()}

    def _close_log(self, failing: bool) -> None:
        """Close the --log; when the run is failing already (``failing``), a log that
        cannot be written is only logged, so the error that ended the run is the one
        reported."""
        if not self.log:
            return
        try:
            self.log.close()
        except ControlError as exc:
            if not failing:
                raise
            logger.error("%s", exc)

    def _loop(self) -> None:
        self._connect(first=True)
        while not self._expired():
            due = min(st.next_due_ns for st in self.targets.values())
            wait = due - time.monotonic_ns()
            left = self._time_left()
            if left is not None and left < wait:
                self._sleep(left)
                break
            if wait > 0 and self._sleep(wait):
                break
            try:
                self._tick()
                self.bad_replies = 0
            except DaemonUnreachable as exc:
                logger.warning("%s; reconnecting", exc)
                if self.client:
                    self.client.close()
                self.client = None
                self.reconnects += 1
                if not self._connect(first=False):
                    break
            except RequestCancelled:
                raise
            except DaemonError as exc:
                self._bad_reply(exc)

    def _bad_reply(self, exc: DaemonError) -> None:
        """One garbled reply: skip the interval it was for; MAX_BAD_REPLIES in a row end
        the loop."""
        self.bad_replies += 1
        self.skipped += 1
        if self.bad_replies >= MAX_BAD_REPLIES:
            raise ControlError(f"{self.bad_replies} bad replies in a row from irqresd, "
                               f"giving up; the last: {exc}") from exc
        logger.warning("%s; interval skipped (%d bad repl%s in a row; %d end the loop)",
                       exc, self.bad_replies, "y" if self.bad_replies == 1 else "ies",
                       MAX_BAD_REPLIES)
        now = time.monotonic_ns()
        for st in self.targets.values():
            if st.next_due_ns <= now:
                st.next_due_ns = now + st.sample_ns
                st.note = "bad reply"

    def restore_budgets(self) -> dict[str, int]:
        """Put back the budget of every target this loop changed, on a fresh connection
        (the loop's may have been cut mid-request). Best effort: a refusal is logged and
        the next target is tried; with irqresd gone there is nothing to put back (it
        restores its threads itself). Returns target -> runtime_ns put back."""
        to_restore = {name: q for name, q in self.baseline.items()
                      if name in self.targets and (self.targets[name].runtime_ns != q
                                                   or self.targets[name].unsure)}
        if not to_restore:
            return {}
        try:
            # not cancelled by stop(): this is what stopping does; bounded all the same
            with Client(self.socket, timeout=RESTORE_TIMEOUT_S) as client:
                for name, q in to_restore.items():
                    if self._put_back(client, self.targets[name], q):
                        self.restored[name] = self.targets[name].runtime_ns
        except DaemonNotRunning:
            logger.info("irqresd is gone: no budget to put back")
        except DaemonError as exc:         # unreachable, or refused at connection
            logger.warning("could not put the budgets back: %s", exc)
        return dict(self.restored)

    def _put_back(self, client: Client, st: TargetState, q: int) -> bool:
        """st's budget set back to ``q``. A decrease irqresd refuses for its size (on 7.x,
        larger than the partition's count: docs/vm.md, "What 7.3 changes") is made in
        steps: a refused step is halved, a step taken is repeated, until ``q``."""
        step, taken = None, 0
        for _ in range(PUT_BACK_TRIES):
            ask = q if step is None or st.runtime_ns - q <= step else st.runtime_ns - step
            try:
                reply = client.set_budget(st.name, ask)
            except DaemonUnreachable:
                raise
            except DaemonError as exc:
                if ask >= st.runtime_ns or st.runtime_ns - ask < 2:     # no smaller step
                    logger.warning("target %s: could not put its budget back to %s: %s",
                                   st.name, format_duration(q), exc)
                    return False
                step = (st.runtime_ns - ask) // 2
                continue
            st.runtime_ns, st.unsure = int(reply.get("runtime_ns", ask)), False
            taken += 1
            if st.runtime_ns == q:
                logger.info("target %s: budget back to %s%s", st.name, format_duration(q),
                            f" in {taken} steps" if taken > 1 else "")
                return True
        logger.warning("target %s: could not put its budget back to %s: %s left after %d "
                       "requests", st.name, format_duration(q),
                       format_duration(st.runtime_ns), PUT_BACK_TRIES)
        return False

    def _tick(self) -> None:
        assert self.client is not None
        self._tick_no += 1
        now = time.monotonic_ns()
        due = [st for st in self.targets.values() if st.next_due_ns <= now]
        stats = self.client.stats()
        by_target: dict[str, list[dict]] = {}
        for th in _stats_threads(stats, self.client.path):
            by_target.setdefault(str(th.get("target")), []).append(th)
        new = {int(th.get("pid", -1)) for st in due for th in by_target.get(st.name, [])
               if int(th.get("pid", -1)) not in st.threads} - self._asked
        if new:
            self._asked |= new          # ask once per new thread, not at every tick
            self._refresh_threads()     # hotplug: learn the new threads' CPUs and actions
        t_ns = now - self._t0
        read_ns = stats.get("time_ns") or now           # when irqresd read the counters
        used = domain_usage(self.targets.values(), self._others)
        for st in due:
            try:
                self._step(st, by_target.get(st.name, []), t_ns, now, used, read_ns)
            except InputError as exc:           # one bad entry costs one interval
                logger.warning("target %s: %s", st.name, exc)
                st.prev, st.note = {}, "bad counters"
            st.next_due_ns += st.sample_ns
            if st.next_due_ns <= now:              # fell behind: do not try to catch up
                st.next_due_ns = now + st.sample_ns
        if self.log:
            self.log.flush()
        if self.view is not None:
            self.view.draw(self.targets.values())

    def _interrupts(self) -> dict[int, int]:
        """/proc/interrupts, read at most once per tick (when irqresd gives no count)."""
        if self._irq_tick != self._tick_no:
            self._irq_counts = read_interrupts(self.proc_root)
            self._irq_tick = self._tick_no
        return self._irq_counts

    def _refresh_threads(self) -> None:
        """Take the thread lists (CPUs, actions) from a new ``status``; the controllers
        and their windows stay."""
        assert self.client is not None
        self._others = []
        for t in self.client.status().get("targets") or []:
            threads = t.get("threads") or []
            st = self.targets.get(t.get("name"))
            if st is None or t.get("mode") != "adaptive":
                self._others.extend(dict(th, period_ns=t.get("period_ns"),
                                         runtime_ns=t.get("runtime_ns")) for th in threads)
                continue
            st.threads = {int(th["pid"]): th for th in threads}

    def _step(self, st: TargetState, threads: list[dict], t_ns: int, now: int,
              used: dict[str, float] | None = None, read_ns: int | None = None) -> None:
        """One interval of one target: read its counters, run its controller, send the
        budget it decides (unless a refusal holds it), log the interval."""
        if not threads:
            if not st.absent:
                logger.info("target %s: no thread now; holding its controller", st.name)
            st.absent, st.prev, st.note = True, {}, "no thread"
            return
        cur, intervals = self._read_counters(st, threads)
        elapsed = self._keep_counters(st, cur, read_ns)
        if not intervals:
            st.note = "priming"
            return
        # every thread of a target gets the same Q: the busiest one decides
        busiest = intervals[0] if len(intervals) == 1 else max(
            intervals, key=lambda x: (x.t_pro_ns, x.n_rmn))
        iv = per_sample(busiest, st.sample_ns, elapsed)
        if used is None:
            used = domain_usage(self.targets.values(), self._others)
        step = st.ctl.update(iv.n_pro, iv.t_pro_ns, iv.n_rmn,
                             bandwidth_left(st, now, used, self._capacity))
        st.last, st.last_interval = step, iv
        sent = self._follow(st, step, now)
        if self.log:
            self.log.row(t_ns, st.name, iv.n_pro, iv.t_pro_ns, iv.n_rmn, step.threshold_ns,
                         sent)

    def _keep_counters(self, st: TargetState, cur: dict[int, Counters],
                       read_ns: int | None) -> int:
        """Keep the counters read (when irqresd read them: ``read_ns``) for the next
        interval; a thread back after none starts its controller afresh. Returns the ns
        since the previous read (the sample period when unknown)."""
        returning = st.absent
        elapsed = (read_ns - st.prev_time_ns) if read_ns is not None and st.prev_time_ns \
            else st.sample_ns
        st.prev, st.prev_time_ns = cur, read_ns or 0
        st.absent = False
        if len(st.iface) > 4 * len(cur):                    # forget threads long gone
            st.iface = {pid: st.iface[pid] for pid in cur if pid in st.iface}
        if returning:
            logger.info("target %s: thread(s) %s back", st.name, sorted(cur))
            st.ctl.reset(st.runtime_ns)
        return elapsed

    def _follow(self, st: TargetState, step: Step, now: int) -> int | None:
        """Send the budget the controller decided, unless it is the one in force or a
        refused decrease still holds it; the budget sent, or None. A decrease as large as
        the one refused is asked half as large: irqresd refuses a decrease larger than a
        bound of the kernel's (on 7.x, that of a thread beside its partition: docs/vm.md,
        "What 7.3 changes"), and halving the step finds the largest it takes; steps that
        size follow, until a raise. A decrease refused for its size (SIZE_REFUSAL) is
        halved at the next interval, any other once its hold is over."""
        if st.floor is not None and st.floor[1] <= now:
            st.floor = None
        held = st.floor is not None and step.budget_ns < st.floor[0]
        q = step.budget_ns
        if st.refused_step_ns is not None and st.runtime_ns - q >= st.refused_step_ns:
            q = st.runtime_ns - st.refused_step_ns // 2
        if step.send and q != st.runtime_ns and not held:
            return self._send(st, q, now)
        if step.send:
            st.ctl.sent_ns = st.runtime_ns
        return None

    def _read_counters(self, st: TargetState, threads: list[dict]
                       ) -> tuple[dict[int, Counters], list[Interval]]:
        """The counters of st's threads now, and the intervals since the previous read
        of each thread that had one."""
        intervals: list[Interval] = []
        cur: dict[int, Counters] = {}
        for th in threads:
            pid = int(th.get("pid", -1))
            c = counters_from_stats(th, st.kind, self._irq_counts_for(st, th),
                                    self._drops_for(st, pid))
            cur[pid] = c
            if pid in st.prev:
                iv = interval(st.prev[pid], c)
                if iv is not None:
                    intervals.append(iv)
        return cur, intervals

    def _drops_for(self, st: TargetState, pid: int) -> int | None:
        """The receive drops of the NIC an IRQ thread serves (looked up once per pid)."""
        if pid not in st.iface:
            st.iface[pid] = net_interface(
                list((st.threads.get(pid) or {}).get("actions") or []),
                self.sys_root) if st.kind == TargetKind.IRQ else None
        iface = st.iface[pid]
        return read_net_drops(iface, self.sys_root) if iface else None

    def _irq_counts_for(self, st: TargetState, th: dict) -> dict[int, int] | None:
        """/proc/interrupts for an IRQ thread whose stats carry no count of its own."""
        if st.kind == TargetKind.IRQ and th.get("irq_count") is None:
            return self._interrupts()
        return None

    def _send(self, st: TargetState, q: int, now: int) -> int | None:
        assert self.client is not None
        try:
            reply = self.client.set_budget(st.name, q)
        except DaemonUnreachable:
            st.ctl.sent_ns = None
            raise
        except RequestCancelled:
            # not a refusal: irqresd may have taken q; put back from the larger of the two
            st.runtime_ns, st.unsure = max(st.runtime_ns, q), True
            raise
        except DaemonError as exc:
            logger.warning("target %s: budget %s refused: %s", st.name, format_duration(q),
                           exc)
            st.note = "refused"
            st.ctl.hold(st.runtime_ns)
            # the same ask again would be refused again: not before REFUSAL_HOLD_NS (a
            # raise's refusal is about bandwidth; a decrease's, whatever it is, is asked
            # once per hold, not at every interval)
            if q > st.runtime_ns:
                st.ceiling = (st.runtime_ns, now + REFUSAL_HOLD_NS)
            else:
                st.refused_step_ns = st.runtime_ns - q
                if not (exc.errno_name == SIZE_REFUSAL and st.refused_step_ns >= 2):
                    st.floor = (st.runtime_ns, now + REFUSAL_HOLD_NS)
            return None
        if q > st.runtime_ns:
            st.refused_step_ns = None
        st.runtime_ns, st.unsure = int(reply.get("runtime_ns", q)), False
        st.ctl.sent_ns = st.runtime_ns
        st.sent += 1
        st.note = ""
        return st.runtime_ns

def _stats_threads(stats: dict[str, Any], path: str) -> list[dict]:
    """The thread entries of a ``stats`` reply; DaemonError when it has no such list or
    no usable time (a garbled reply)."""
    threads = stats.get("threads")
    if threads is None:
        threads = []
    if not isinstance(threads, list) or not all(isinstance(th, dict) for th in threads):
        raise DaemonError(f"irqresd ({path}): reply to stats: \"threads\" is not a list "
                          "of objects")
    t = stats.get("time_ns")
    if t is not None and (not isinstance(t, int) or isinstance(t, bool) or t < 0):
        raise DaemonError(f"irqresd ({path}): reply to stats: \"time_ns\" {t!r} is not a "
                          "time in ns")
    return threads


def _same_file(a: str | None, b: str) -> bool:
    if not a:
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)
