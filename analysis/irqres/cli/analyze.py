"""``irqres analyze``: measure the IRQ threads of a trace and recommend (Q, T)."""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time

import click

from ..errors import IrqresError, SelectionError
from ..measure import EXEC_SOURCES
from ..model import MODELS
from ..model.kernel import ENFORCEMENTS
from ..trace.reader import RECORD_COMMAND, Selection
from .common import POSITIVE_DURATION, cli_errors, dur, echo_json, warn


class ReservationParam(click.ParamType):
    """``Q,T``: a runtime and a period with units (``250us,1ms``)."""

    name = "Q,T"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        parts = str(value).split(",")
        if len(parts) != 2:
            self.fail(f"{value!r}: expected Q,T (runtime,period), e.g. 250us,1ms", param, ctx)
        q, t = (POSITIVE_DURATION.convert(x.strip(), param, ctx) for x in parts)
        if q > t:
            self.fail(f"{value!r}: the runtime Q is longer than the period T", param, ctx)
        return (q, t)


class BufferParam(click.ParamType):
    """``N`` (every thread) or ``PATTERN=N`` (the threads PATTERN matches): N_c."""

    name = "[PATTERN=]N"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        pattern, sep, count = str(value).rpartition("=")
        if sep and not pattern:
            self.fail(f"{value!r}: the pattern before '=' is empty", param, ctx)
        try:
            n = int(count)
        except ValueError:
            self.fail(f"{value!r}: expected N or PATTERN=N, N a number of interrupts",
                      param, ctx)
        if n < 1:
            self.fail(f"{value!r}: N must be at least 1 interrupt", param, ctx)
        return (pattern if sep else None, n)


def _check_output(path: str | None, what: str, directory: bool = False) -> None:
    """Refuse an output path that cannot be written, before the (long) read."""
    if path is None:
        return
    if os.path.exists(path):
        if directory != os.path.isdir(path):
            raise click.BadParameter(f"{path}: is {'not ' if directory else ''}a directory",
                                     param_hint=what)
        if not os.access(path, os.W_OK):
            raise click.BadParameter(f"{path}: not writable", param_hint=what)
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise click.BadParameter(f"{path}: the directory {parent} does not exist",
                                 param_hint=what)
    if not os.access(parent, os.W_OK):
        raise click.BadParameter(f"{path}: cannot create it in {parent} (not writable)",
                                 param_hint=what)


#: The fewest bins of --granularity (Δ) a response bound D must span. The model counts
#: time in whole bins (a budget is floor(Q/Δ) of them) and the default candidate periods
#: go down to D/20 (model.recommend.deadline_periods): with D >= 20 Δ each of them can
#: hold a budget of one bin at least; a coarser Δ makes rows infeasible by rounding alone.
MIN_DEADLINE_BINS = 20


def _too_coarse(granularity: int, deadline: int, bound: str) -> click.BadParameter:
    return click.BadParameter(
        f"{dur(granularity)} leaves fewer than {MIN_DEADLINE_BINS} bins below {bound} "
        "(the model counts time in whole bins): give at most "
        f"{dur(deadline // MIN_DEADLINE_BINS)}, or a longer --deadline",
        param_hint="'--granularity'")


def _check_granularity(granularity: int | None, deadline: int | None,
                       periods: tuple[int, ...]) -> None:
    """Refuse a --granularity too coarse for the --deadline or a --period given (the
    default response bound is checked once the trace gave it: :func:`_check_bins`)."""
    if granularity is None:
        return
    if deadline is not None and deadline < MIN_DEADLINE_BINS * granularity:
        raise _too_coarse(granularity, deadline, f"--deadline {dur(deadline)}")
    for t in periods:
        if t < granularity:
            raise click.BadParameter(
                f"{dur(granularity)} is longer than --period {dur(t)}: a budget is a whole "
                "number of bins, so that period could hold none", param_hint="'--granularity'")


def _check_bins(granularity: int | None, report) -> None:
    """Refuse a --granularity too coarse for a thread's response bound D (the default
    one, chosen from its activations; see :data:`MIN_DEADLINE_BINS`)."""
    if granularity is None:
        return
    for t in report.threads:
        d = t.deadline_ns
        if d is not None and d < MIN_DEADLINE_BINS * granularity:
            th = t.act.thread
            raise _too_coarse(granularity, d, f"the response bound D = {dur(d)} chosen "
                                              f"for {th.comm} (pid {th.pid})")


def _inputs(trace: str, probe_path: str | None) -> list[tuple[str, str]]:
    """The files analyze reads, by what they are: no output may be one of them."""
    from ..model.kernel import facts_path

    named = [("TRACE", trace), ("TRACE's kernel facts", facts_path(trace))]
    return named + ([] if probe_path is None else [("--calibrate PROBE", probe_path)])


def _check_not_input(path: str | None, what: str, inputs: list[tuple[str, str]]) -> None:
    """Refuse an output that is one of the ``inputs`` (the same file, also through a
    symbolic or hard link): writing it would destroy the recording."""
    if path is None or not os.path.exists(path):
        return
    for name, source in inputs:
        try:
            same = os.path.samefile(path, source)
        except OSError:             # the input is missing: reading it says so
            continue
        if same:
            raise click.BadParameter(f"{path} is the same file as {name} {source}: "
                                     "writing it would overwrite the recording",
                                     param_hint=what)


HELP = f"""Measure the IRQ threads in TRACE (a trace-cmd .dat file), or any thread
named with --task, and recommend a SCHED_DEADLINE reservation (Q every T) for each: the
least bandwidth that meets P{{response <= D}} >= --target-prob, D the response bound
(--deadline; by default the thread's mean inter-arrival time, at least 1ms).

\b
Record the trace on the target with:
  {RECORD_COMMAND}
or, where trace-cmd record fails (locked-down tracefs):
  irqres record -o trace.dat -- sleep 10

Per thread it prints the statistics of inter-arrival and execution times, the
lost events, the processes the thread served, the buffering check (with --buffer),
the recommendation table (model, Monte Carlo and replay of the real activations) and a
profile snippet for `irqres apply`. A thread with fewer activations than the target
needs gets no reservation, and a warning. Durations take units: 10us, 2ms, 1.5ms.
"""


def _load_analysis() -> None:
    """Import what the analysis runs: the model, and the numpy subpackages (loaded on first
    use by numpy 2) that the solver and the Monte Carlo call."""
    for name in ("irqres.report", "numpy.fft", "numpy.random"):
        importlib.import_module(name)


#: progress shows only once a read has taken this long (seconds)
PROGRESS_AFTER_S = 2.0


class _Progress:
    """Records read so far, on stderr, only on a terminal and only for reads that take
    longer than :data:`PROGRESS_AFTER_S`."""

    def __init__(self, path: str):
        self.path = path
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, n: int) -> None:
        elapsed = time.monotonic() - self.start
        if elapsed < PROGRESS_AFTER_S:
            return
        self.shown = True
        sys.stderr.write(f"\rreading {self.path}: {n / 1e6:.0f}M records, {elapsed:.0f} s")
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _progress(path: str) -> _Progress | None:
    return _Progress(path) if sys.stderr.isatty() else None


@click.command("analyze", help=HELP,
               epilog="Example: irqres analyze trace.dat --buffer 256 --plot plots/ "
                      "--profile-out nic.yaml")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--thread", "pattern", metavar="PATTERN",
              help="Only IRQ threads whose comm matches this glob (irq/11-*, eth0) or IRQ number.")
@click.option("--task", "tasks", metavar="PATTERN", multiple=True,
              help="Also (or, without --thread, only) analyse the threads whose pid is "
                   "PATTERN or whose comm matches it (a glob, or a part of it): any thread, "
                   "e.g. a real-time application's (repeatable).")
@click.option("--granularity", type=POSITIVE_DURATION, default=None,
              help="Bin width of the PMFs and the model [default: about 1,000 bins]; "
                   f"at most D/{MIN_DEADLINE_BINS} (D: the response bound, see --deadline) "
                   "and no longer than a --period.")
@click.option("--buffer", "buffers", type=BufferParam(), multiple=True,
              help="Interrupts the device can hold (N_c), for the buffering check: N for "
                   "every thread, PATTERN=N for the threads PATTERN (as --task, or an IRQ "
                   "number) matches; repeatable, the first match wins.")
@click.option("--min-interarrival", type=POSITIVE_DURATION, default=None,
              help="P of the buffering check [default: smallest measured IRQ inter-arrival].")
@click.option("--period", "periods", type=POSITIVE_DURATION, multiple=True,
              help="A candidate period (repeatable) [default: D/20 .. D].")
@click.option("--deadline", type=POSITIVE_DURATION, default=None,
              help="Response-time bound D: the target is P{response <= D}, and the "
                   "recommendation is the least bandwidth that meets it [default: the "
                   "thread's mean inter-arrival time, at least 1ms].")
@click.option("--target-prob", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.99, show_default=True, help="Required P{response <= D}.")
@click.option("--max-bandwidth", type=click.FloatRange(0, 1, min_open=True), default=0.9,
              show_default=True, help="Largest Q/T to consider.")
@click.option("--model", type=click.Choice(MODELS), default="auto", show_default=True,
              help="The chain per candidate period: per activation, per period's demand, "
                   "or auto (per activation when most inter-arrivals are >= the period).")
@click.option("--exec", "exec_source", type=click.Choice(EXEC_SOURCES), default="auto",
              show_default=True,
              help="The execution time the model uses: the kernel's charge "
                   "(sched_stat_runtime, what a reservation's budget pays), the time between "
                   "the sched_switch events, or auto (the charge where the trace has it).")
@click.option("--enforcement", type=click.Choice(ENFORCEMENTS), default="auto",
              show_default=True,
              help="How the kernel enforces a budget: at the scheduler tick, or exactly "
                   "(HRTICK_DL); auto: as the recording kernel did (TRACE.kernel.json, "
                   "which irqres record writes; else this kernel's "
                   "/sys/kernel/debug/sched/features when the trace is of this kernel; "
                   "else tick, the kernel's default).")
@click.option("--tick", "tick_ns", type=POSITIVE_DURATION, default=None,
              help="The scheduler tick (1/HZ) [default: the recording kernel's, from "
                   "TRACE.kernel.json or, for a trace of this kernel, its CONFIG_HZ; "
                   "else 4ms].")
@click.option("--max-slices", type=click.IntRange(min=1), default=None,
              help="The most budgets (Q) a job at the --target-prob quantile of the "
                   "execution times may need [default: 1 with tick enforcement, 4 with "
                   "HRTICK_DL].")
@click.option("--under", type=ReservationParam(), default=None,
              help="The trace was recorded while the threads ran under this reservation "
                   "(Q,T: 250us,1ms): report the achieved P{response <= D} against the "
                   "promised --target-prob (needs --deadline).")
@click.option("--calibrate", "probe_path", type=click.Path(dir_okay=False), default=None,
              metavar="PROBE",
              help="A trace of the same threads (same comm) recorded while they ran under a "
                   "SCHED_DEADLINE reservation that held them (e.g. twice the budget this "
                   "analysis recommends without it): each execution time is raised to the "
                   "probe's at the same quantile before the model plans, so the budget pays "
                   "for what a reservation adds to a job (on PREEMPT_RT a reserved task woken "
                   "by ktimers/N blocks on its waker's lock; a job run in phase with the tick "
                   "pays for its work). The probe's preempted or throttled activations are "
                   "left out; more of them than 1 - --target-prob is refused.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False), default=None,
              help="Write PNG and SVG plots of both PMFs per thread into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
@click.option("--profile-out", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write a profile with every recommended reservation to this file.")
def analyze_cmd(trace, pattern, tasks, granularity, buffers, min_interarrival, periods,
                deadline, target_prob, max_bandwidth, model, exec_source, enforcement, tick_ns,
                max_slices, under, probe_path, plot_dir, as_json, profile_out):
    from ..trace.reader import read_trace

    _check_granularity(granularity, deadline, periods)
    _check_output(profile_out, "'--profile-out'")
    inputs = _inputs(trace, probe_path)
    _check_not_input(profile_out, "'--profile-out'", inputs)
    _check_output(plot_dir, "'--plot'", directory=True)
    # the native reader releases the GIL: load numpy and the model meanwhile
    loader = threading.Thread(target=_load_analysis, daemon=True)
    loader.start()
    with cli_errors():
        progress = _progress(trace)
        try:
            # only the rows of the threads analysed: memory follows them, not the trace
            tr = read_trace(trace, progress=progress, select=Selection.of(pattern, tasks))
        finally:
            loader.join()
            if progress is not None:
                progress.done()
        from ..model.kernel import trace_facts
        from ..report import Options, analyze

        uname = tr.uname.split()
        kernel, kernel_warning = trace_facts(trace, uname[2] if len(uname) >= 3 else None,
                                             enforcement=enforcement, tick_ns=tick_ns)
        if kernel_warning and not as_json:
            warn(kernel_warning)

        opts = Options(pattern=pattern, tasks=tuple(tasks), granularity_ns=granularity,
                       buffers=tuple(buffers),
                       min_interarrival_ns=min_interarrival,
                       periods_ns=list(periods) or None, deadline_ns=deadline,
                       target_prob=target_prob, max_bandwidth=max_bandwidth, model=model,
                       exec_source=exec_source, max_slices=max_slices, under=under,
                       kernel=kernel, calibrate=probe_path)
        probe = None if probe_path is None else _read(probe_path, pattern, tasks)
        try:
            report = analyze(tr, opts, probe)
        except SelectionError:
            tr = read_trace(trace, progress=progress)
            if probe is not None:
                probe = read_trace(probe_path)
            report = analyze(tr, opts, probe)
        _check_bins(granularity, report)
        _show(tr, report, plot_dir, profile_out, as_json, inputs)


def _read(path: str, pattern: str | None, tasks: tuple[str, ...]):
    """The probe trace of --calibrate, read with the analysed threads' selection."""
    from ..trace.reader import read_trace

    try:
        return read_trace(path, select=Selection.of(pattern, tasks))
    except IrqresError as exc:
        raise IrqresError(f"--calibrate: {exc}") from exc


def _show(tr, report, plot_dir: str | None, profile_out: str | None, as_json: bool,
          inputs: list[tuple[str, str]]) -> None:
    """The warnings, the plots and the profile written, and the report (text or JSON).
    No plot may overwrite one of the ``inputs`` (a trace kept in the plot directory)."""
    if not as_json:  # JSON carries them in its trace's and each thread's entries
        for jump in tr.time_jumps:
            warn(f"{tr.path}: {jump.describe(tr.first_ts)}")
        for t in report.threads:
            for w in t.warnings:
                warn(w)
    plots = []
    if plot_dir is not None:
        from ..plots import plot_paths, plot_thread
        from ..report.curves import response_curves

        for t in report.threads:
            for path in plot_paths(plot_dir, t):
                _check_not_input(path, "'--plot'", inputs)
        for t in report.threads:
            plots += plot_thread(plot_dir, t, response_curves(t))
    if profile_out is not None:
        text = report.profile()
        try:
            with open(profile_out, "w") as fh:
                fh.write(text)
        except OSError as exc:
            raise IrqresError(f"{profile_out}: cannot write the profile: "
                              f"{exc.strerror}") from exc
    if as_json:
        echo_json({**report.to_dict(), "plots": plots}, indent=1, sort_keys=False)
        return
    click.echo(report.text(), nl=False)
    for p in plots:
        click.echo(f"plot: {p}")
    if profile_out is not None:
        click.echo(f"profile written to {profile_out}")
