"""Plots of an IRQ thread's PMFs: inter-arrival and execution times, side by side.

matplotlib is imported only when a plot is drawn (with the Agg backend, so no display is
needed); ``irqres analyze`` without ``--plot`` never loads it.
"""

from __future__ import annotations

import os
import re

import numpy as np

from .errors import IrqresError
from .pmf import Pmf, nice_granularity


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


def _bars(ax, pmf: Pmf, color: str, title: str, xlabel: str) -> None:
    starts, probs, width = display_bins(pmf)
    width_us = width / 1000.0
    ax.bar(starts / 1000.0, probs, width=width_us, align="edge",
           color=color, edgecolor="white", linewidth=0.3)
    mean_us, std_us = pmf.mean_ns() / 1000.0, pmf.std_ns() / 1000.0
    ax.axvline(mean_us, color="black", linestyle="--", linewidth=1,
               label=f"mean {mean_us:.1f} µs (std {std_us:.1f})")
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("probability per bar")
    ax.grid(True, axis="y", alpha=0.3)
    lo, hi = pmf.min_ns / 1000.0, pmf.max_ns / 1000.0
    pad = max((hi - lo) * 0.05, width_us * 1.5)
    ax.set_xlim(max(lo - pad, 0.0), hi + pad)
    ax.set_ylim(0, float(probs.max()) * 1.25)
    ax.legend(loc="upper right", fontsize=9, frameon=False)
    note = (f"{pmf.count} samples\nmin {lo:.1f} µs, max {hi:.1f} µs\n"
            f"bars of {width_us:g} µs (PMF bin {pmf.granularity_ns / 1000:g} µs)")
    ax.text(0.99, 0.80, note, transform=ax.transAxes, ha="right", va="top", fontsize=8,
            color="dimgray")


def plot_thread(out_dir: str, comm: str, pid: int, interarrival: Pmf | None,
                exec_: Pmf | None, *, subtitle: str = "") -> list[str]:
    """Write ``<comm>-<pid>.png`` and ``.svg`` in ``out_dir``; return their paths.

    Raises
    ------
    IrqresError
        When matplotlib is missing or the directory cannot be written.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise IrqresError("plots need matplotlib (pip install matplotlib)") from exc
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise IrqresError(f"{out_dir}: cannot create the plot directory: {exc.strerror}") from exc
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    try:
        for ax, pmf, color, what in ((axes[0], interarrival, "tab:blue", "inter-arrival time"),
                                     (axes[1], exec_, "tab:orange", "execution time")):
            if pmf is None:
                ax.text(0.5, 0.5, f"no {what} samples", ha="center", va="center",
                        transform=ax.transAxes)
                ax.set_axis_off()
                continue
            _bars(ax, pmf, color, f"PMF of the {what}", f"{what} (µs)")
        head = f"{comm} (pid {pid})"
        fig.suptitle(head + (f" — {subtitle}" if subtitle else ""), fontsize=13)
        fig.tight_layout()
        base = os.path.join(out_dir, _safe_name(comm, pid))
        paths = [base + ".png", base + ".svg"]
        try:
            fig.savefig(paths[0], dpi=110)
            fig.savefig(paths[1])
        except OSError as exc:
            raise IrqresError(f"{base}: cannot write the plot: {exc.strerror}") from exc
    finally:
        plt.close(fig)
    return paths
