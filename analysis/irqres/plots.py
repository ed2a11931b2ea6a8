"""Plots of one analysed thread: its PMFs, their tails, and its response time.

Four panels per thread, in ``<comm>-<pid>.png`` and ``.svg``:

- the PMFs of the inter-arrival and of the execution times (bars of a 1-2-5 width), with
  the statistics of the report's table (the raw samples' mean and standard deviation, not
  the binned PMF's);
- their tails, P{X > x} on a log scale, from the raw samples, where a heavy tail that the
  bars flatten to nothing shows;
- the response time: the measured CDF (as the thread ran while traced), the CDF the model
  predicts under the recommended (Q, T), and the replay of the recorded jobs through that
  reservation, with the bound D and the target marked.

The plots only draw: the model's prediction and the replay come computed, in
:class:`irqres.report.ResponseCurves`. matplotlib is imported only when a plot is drawn
(with the Agg backend, so no display is needed); ``irqres analyze`` without ``--plot``
never loads it.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import numpy as np

from .errors import IrqresError
from .pmf import Pmf, nice_granularity
from .tables import readable
from .units import format_duration

if TYPE_CHECKING:
    from .measure.stats import Summary
    from .model.recommend import Recommendation
    from .report import ResponseCurves, ThreadReport


def _safe_name(comm: str, pid: int) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", comm).strip("_") + f"-{pid}"


#: bars drawn over a PMF's range at most; finer PMFs are merged into wider bars to draw
PLOT_BINS = 80


def display_bins(pmf: Pmf, bins: int = PLOT_BINS) -> tuple[np.ndarray, np.ndarray, int]:
    """The PMF merged into bars of a 1-2-5 width (a multiple of its granularity) so that
    at most about ``bins`` cover its range: (bar starts ns, probabilities, width ns)."""
    g = pmf.granularity_ns
    width = max(nice_granularity(pmf.max_ns - pmf.min_ns, bins), g)
    width = -(-width // g) * g
    idx = pmf.values_ns // width
    uniq, inv = np.unique(idx, return_inverse=True)
    probs = np.bincount(inv, weights=pmf.probs)
    return uniq * width, probs, width


def stats_label(s: Summary) -> str:
    """The legend of a panel: the table's statistics, rounded as tables round them."""
    return f"mean {readable(round(s.mean_ns))} (std {readable(round(s.std_ns))})"


def _bars(ax, pmf: Pmf, s: Summary, color: str, title: str, xlabel: str) -> None:
    starts, probs, width = display_bins(pmf)
    width_us = width / 1000.0
    ax.bar(starts / 1000.0, probs, width=width_us, align="edge",
           color=color, edgecolor="white", linewidth=0.3)
    ax.axvline(s.mean_ns / 1000.0, color="black", linestyle="--", linewidth=1,
               label=stats_label(s))
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("probability per bar")
    ax.grid(True, axis="y", alpha=0.3)
    lo, hi = s.min_ns / 1000.0, s.max_ns / 1000.0
    pad = max((hi - lo) * 0.05, width_us * 1.5)
    ax.set_xlim(max(lo - pad, 0.0), hi + pad)
    ax.set_ylim(0, float(probs.max()) * 1.25)
    ax.legend(loc="upper right", fontsize=9, frameon=False)
    note = (f"{s.count} samples\nmin {format_duration(s.min_ns)}, "
            f"max {format_duration(s.max_ns)}\nbars of {format_duration(width)} "
            f"(PMF bin {format_duration(pmf.granularity_ns)})")
    ax.text(0.99, 0.80, note, transform=ax.transAxes, ha="right", va="top", fontsize=8,
            color="dimgray")


def _tail(x_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x in µs, P{X > x}) of the samples, the zero of the largest one left out."""
    x = np.sort(np.asarray(x_ns, dtype=np.int64))
    p = 1.0 - np.arange(1, x.size + 1) / x.size
    return x[:-1] / 1000.0, p[:-1]


def _tails(ax, tr: ThreadReport) -> None:
    drawn = False
    for x, color, what in ((tr.act.interarrival_ns, "tab:blue", "inter-arrival"),
                           (tr.model_exec_ns, "tab:orange", "execution"),
                           (tr.act.response_ns, "tab:green", "response (measured)")):
        if len(x) >= 2:
            xs, ps = _tail(x)
            ax.step(xs, ps, where="post", color=color, label=what)
            drawn = True
    ax.set_yscale("log")
    ax.set_xscale("log")
    ax.set_title("tails: P{X > x}, log scales", fontsize=11)
    ax.set_xlabel("x (µs)")
    ax.set_ylabel("P{X > x}")
    ax.grid(True, which="both", alpha=0.3)
    if drawn:
        ax.legend(loc="lower left", fontsize=9, frameon=False)


def _response(ax, tr: ThreadReport, curves: ResponseCurves) -> None:
    resp = curves.measured_ns
    if resp.size == 0:
        ax.text(0.5, 0.5, "no response-time samples", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return
    rec = tr.recommendation
    best = None if rec is None else rec.best
    d = tr.deadline_ns
    hi = max(int(resp.max()), d or 0)
    ax.step(resp / 1000.0, np.arange(1, resp.size + 1) / resp.size, where="post",
            color="tab:green", label="measured (as traced)")
    title = "response time"
    if curves.replay_ns is not None and rec is not None and best is not None \
            and best.runtime_ns is not None:
        hi = max(hi, _under_reservation(ax, curves, rec))
        title += (f" under Q = {format_duration(best.runtime_ns)} every "
                  f"T = {format_duration(best.period_ns)}")
    if d is not None:
        ax.axvline(d / 1000.0, color="tab:red", linewidth=0.8,
                   label=f"D = {format_duration(d)}")
    ax.set_xlim(0, hi / 1000.0 * 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("response time (µs)")
    ax.set_ylabel("P{response <= x}")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize=8, frameon=False)


def _under_reservation(ax, curves: ResponseCurves, rec: Recommendation) -> int:
    """The model's CDF and the replay under the recommended reservation, and the target;
    returns the largest replayed response time."""
    rr, xs, cdf = curves.replay_ns, curves.xs_ns, curves.predicted_cdf
    assert rr is not None and xs is not None and cdf is not None and rec.best is not None
    ax.plot(xs / 1000.0, cdf, color="black", label=f"predicted, model ({rec.best.model})")
    ax.step(rr / 1000.0, np.arange(1, rr.size + 1) / rr.size, where="post",
            color="tab:purple", linestyle=":", label="replay of the jobs")
    ax.axhline(rec.target_prob, color="tab:red", linewidth=0.8, linestyle="--",
               label=f"target {rec.target_prob}")
    return int(rr.max())


#: what a missing matplotlib costs, and the package that brings it on Debian and elsewhere
MATPLOTLIB_MISSING = ("plots need matplotlib: on Debian `apt install python3-matplotlib` "
                      "(the irqres package recommends it), elsewhere `pip install matplotlib`")


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed), imported on first use.

    Raises
    ------
    IrqresError
        When matplotlib is not installed, naming the package that brings it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise IrqresError(MATPLOTLIB_MISSING) from exc
    return plt


def thread_figure(tr: ThreadReport, curves: ResponseCurves):
    """The matplotlib figure of one thread (see the module docstring), its response-time
    panel drawn from ``curves`` (:func:`irqres.report.curves.response_curves`)."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    st = tr.stats
    for ax, pmf, s, color, what in (
            (axes[0, 0], tr.interarrival_pmf, st.interarrival, "tab:blue", "inter-arrival time"),
            (axes[0, 1], tr.exec_pmf, st.exec, "tab:orange", "execution time")):
        if pmf is None or s.count == 0:
            ax.text(0.5, 0.5, f"no {what} samples", ha="center", va="center",
                    transform=ax.transAxes)
            ax.set_axis_off()
            continue
        _bars(ax, pmf, s, color, f"PMF of the {what}", f"{what} (µs)")
    _tails(axes[1, 0], tr)
    _response(axes[1, 1], tr, curves)
    th = tr.act.thread
    head = f"{th.comm} (pid {th.pid})"
    sub = (f"IRQ {th.irq}, " if th.is_irq else "") + f"{tr.act.count} activations"
    fig.suptitle(f"{head} — {sub}", fontsize=13)
    fig.tight_layout()
    return fig


def plot_paths(out_dir: str, tr: ThreadReport) -> list[str]:
    """The files :func:`plot_thread` writes for ``tr``: ``<comm>-<pid>.png`` and ``.svg``
    in ``out_dir``."""
    base = os.path.join(out_dir, _safe_name(tr.act.thread.comm, tr.act.thread.pid))
    return [base + ".png", base + ".svg"]


def plot_thread(out_dir: str, tr: ThreadReport, curves: ResponseCurves) -> list[str]:
    """Write ``<comm>-<pid>.png`` and ``.svg`` of one analysed thread in ``out_dir``
    (its response-time panel from ``curves``); return their paths.

    Raises
    ------
    IrqresError
        When matplotlib is missing or the directory cannot be written.
    """
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise IrqresError(f"{out_dir}: cannot create the plot directory: {exc.strerror}") from exc
    fig = thread_figure(tr, curves)
    import matplotlib.pyplot as plt

    try:
        paths = plot_paths(out_dir, tr)
        base = os.path.splitext(paths[0])[0]
        try:
            fig.savefig(paths[0], dpi=100)
            fig.savefig(paths[1])
        except OSError as exc:
            raise IrqresError(f"{base}: cannot write the plot: {exc.strerror}") from exc
    finally:
        plt.close(fig)
    return paths
