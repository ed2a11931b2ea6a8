"""``irqres analyze``: measure the IRQ threads of a trace and recommend (Q, T)."""

from __future__ import annotations

import importlib
import json
import math
import sys
import threading

import click

from ..errors import IrqresError
from ..model import MODELS
from ..trace.reader import RECORD_COMMAND
from .params import POSITIVE_DURATION
from .status import cli_errors

HELP = f"""Measure the IRQ threads in TRACE (a trace-cmd .dat file) and recommend a
SCHED_DEADLINE reservation (Q every T) for each.

\b
Record the trace on the target with:
  {RECORD_COMMAND}
or, where trace-cmd record fails (locked-down tracefs):
  irqres record -o trace.dat -- sleep 10

Per IRQ thread it prints the statistics of inter-arrival and execution times, the
lost events, the processes the thread served, the buffering check (with --buffer),
the recommendation table (model, Monte Carlo and replay of the real activations) and a
profile snippet for `irqres apply`. Durations take units: 10us, 2ms, 1.5ms.
"""


def _load_analysis() -> None:
    """Import what the analysis runs: the model, and the numpy subpackages (loaded on first
    use by numpy 2) that the solver and the Monte Carlo call."""
    for name in ("irqres.measure.report", "numpy.fft", "numpy.random"):
        importlib.import_module(name)


def _progress():
    if not sys.stderr.isatty():
        return None

    def report(n: int) -> None:
        sys.stderr.write(f"\rreading trace: {n / 1e6:.0f}M records")
        sys.stderr.flush()

    return report


@click.command("analyze", help=HELP)
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--thread", "pattern", metavar="PATTERN",
              help="Only IRQ threads whose comm matches this glob (irq/11-*, eth0) or IRQ number.")
@click.option("--granularity", type=POSITIVE_DURATION, default=None,
              help="Bin width of the PMFs and the model [default: about 1,000 bins].")
@click.option("--buffer", type=click.IntRange(min=1), default=None, metavar="N",
              help="Interrupts the device can hold (N_c), for the buffering check.")
@click.option("--min-interarrival", type=POSITIVE_DURATION, default=None,
              help="P of the buffering check [default: smallest measured IRQ inter-arrival].")
@click.option("--period", "periods", type=POSITIVE_DURATION, multiple=True,
              help="A candidate period (repeatable) [default: 1x..50x the mean inter-arrival].")
@click.option("--deadline", type=POSITIVE_DURATION, default=None,
              help="Response-time bound D of the target [default: each period].")
@click.option("--target-prob", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.99, show_default=True, help="Required P{response <= D}.")
@click.option("--max-bandwidth", type=click.FloatRange(0, 1, min_open=True), default=0.9,
              show_default=True, help="Largest Q/T to consider.")
@click.option("--model", type=click.Choice(MODELS), default="auto", show_default=True,
              help="The chain per candidate period: per activation, per period's demand, "
                   "or auto (per activation when most inter-arrivals are >= the period).")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False), default=None,
              help="Write PNG and SVG plots of both PMFs per thread into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
@click.option("--profile-out", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write a profile with every recommended reservation to this file.")
def analyze_cmd(trace, pattern, granularity, buffer, min_interarrival, periods, deadline,
                target_prob, max_bandwidth, model, plot_dir, as_json, profile_out):
    from ..trace.reader import read_trace

    # the native reader releases the GIL: load numpy and the model meanwhile
    loader = threading.Thread(target=_load_analysis, daemon=True)
    loader.start()
    with cli_errors():
        progress = _progress()
        try:
            tr = read_trace(trace, progress=progress)
        finally:
            loader.join()
        if progress is not None:
            sys.stderr.write("\r\033[K")
        from ..measure.report import Options, analyze

        opts = Options(pattern=pattern, granularity_ns=granularity, buffer=buffer,
                       min_interarrival_ns=min_interarrival,
                       periods_ns=list(periods) or None, deadline_ns=deadline,
                       target_prob=target_prob, max_bandwidth=max_bandwidth, model=model)
        report = analyze(tr, opts)
        plots = []
        if plot_dir is not None:
            from ..plots import plot_thread

            for t in report.threads:
                th = t.act.thread
                plots += plot_thread(plot_dir, th.comm, th.pid, t.interarrival_pmf, t.exec_pmf,
                                     subtitle=f"IRQ {th.irq}, {t.act.count} activations")
        if profile_out is not None:
            text = report.profile()
            try:
                with open(profile_out, "w") as fh:
                    fh.write(text)
            except OSError as exc:
                raise IrqresError(f"{profile_out}: cannot write the profile: "
                                  f"{exc.strerror}") from exc
        if as_json:
            d = report.to_dict()
            d["plots"] = plots
            click.echo(json.dumps(_finite(d), indent=1, allow_nan=False,
                                  default=_json_default))
        else:
            click.echo(report.text(), nl=False)
            for p in plots:
                click.echo(f"plot: {p}")
            if profile_out is not None:
                click.echo(f"profile written to {profile_out}")


def _finite(obj):
    """JSON has no NaN or infinity: such statistics become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def _json_default(obj):
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__}")
