"""Per-thread statistics tables, like the reference work's: count, mean, standard
deviation, minimum and maximum of the inter-arrival and execution times (shown as
durations with units),
the IRQ rate and the CPU bandwidth of the thread.

Inputs and the stored numbers are integer nanoseconds; mean and standard deviation are
statistics and therefore floats (in ns). The standard deviation is the population one
(ddof=0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..tables import readable
from ..units import format_duration
from .activations import ThreadActivations


@dataclass(frozen=True)
class Summary:
    """count, mean, std, min, max of a set of durations (ns)."""

    count: int
    mean_ns: float
    std_ns: float
    min_ns: int
    max_ns: int

    @classmethod
    def of(cls, samples_ns: np.ndarray) -> Summary:
        x = np.asarray(samples_ns, dtype=np.int64)
        if x.size == 0:
            return cls(0, float("nan"), float("nan"), 0, 0)
        # the sum is exact in int64; only the statistics themselves are floats
        mean = int(x.sum(dtype=np.int64)) / x.size
        dev = x.astype(np.float64) - mean
        std = float(np.sqrt(np.mean(dev * dev)))
        return cls(int(x.size), mean, std, int(x.min()), int(x.max()))

    def row(self) -> list[str]:
        """count, then mean, std, min and max as durations ("-" without samples)."""
        if self.count == 0:
            return ["0", "-", "-", "-", "-"]
        return [str(self.count)] + [format_duration(round(v)) for v in
                                    (self.mean_ns, self.std_ns, self.min_ns, self.max_ns)]

    def to_dict(self) -> dict:
        """Without samples every statistic is None (never a min or max of 0)."""
        d = asdict(self)
        if self.count == 0:
            d["mean_ns"] = d["std_ns"] = d["min_ns"] = d["max_ns"] = None
        return d


@dataclass(frozen=True)
class ThreadStats:
    """The statistics table of one IRQ thread."""

    comm: str
    pid: int
    irq: int | None             # None: not an IRQ thread
    activations: int
    interarrival: Summary       # of activations
    exec: Summary               # execution time per activation
    response: Summary           # wake-up request to sleep
    irq_interarrival: Summary   # of hard IRQ requests
    irq_requests: int
    merged_irqs: int
    irq_rate_hz: float
    activation_rate_hz: float
    bandwidth: float            # on-CPU time / trace length
    span_ns: int
    dropped_edge: int
    dropped_lost: int
    dropped_inconsistent: int
    charged: Summary | None = None  # the kernel's charge per activation, when traced

    def to_dict(self) -> dict:
        out = {}
        for k, v in self.__dict__.items():
            out[k] = v.to_dict() if isinstance(v, Summary) else v
        return out

    def table(self) -> str:
        """The reference-style table as text."""
        # exact durations run to 11 characters and more (21.478378ms): a blank before each
        head = f"{'':24}{'count':>9}{'mean':>10}{'std':>10}{'min':>10}{'max':>10}"
        lines = [head]
        rows = (("inter-arrival (activ.)", self.interarrival),
                ("inter-arrival (IRQ)", self.irq_interarrival),
                ("execution time", self.exec),
                *((("  kernel charge", self.charged),) if self.charged else ()),
                ("response time", self.response))
        # each value in its own unit, 4 significant digits (irqres.tables.readable): a
        # column mixes seconds of inter-arrival with microseconds of execution, and a row
        # spans them too (a 0.2 ms gap beside 2 s ones); one unit would print them as 0
        for label, s in rows:
            cells = ["-" if s.count == 0 else readable(round(getattr(s, k)))
                     for k in ("mean_ns", "std_ns", "min_ns", "max_ns")]
            lines.append(f"{label:24}{s.count:>9}" + "".join(f"{c:>10}" for c in cells))
        lines.append(
            f"IRQ rate {self.irq_rate_hz:.1f}/s ({self.irq_requests} requests, "
            f"{self.merged_irqs} merged into running activations); activations "
            f"{self.activation_rate_hz:.1f}/s; CPU bandwidth {100 * self.bandwidth:.2f}%")
        lines.append(
            f"dropped activations: {self.dropped_edge} at the trace edges, "
            f"{self.dropped_lost} across lost events, {self.dropped_inconsistent} inconsistent")
        return "\n".join(lines)


def thread_stats(act: ThreadActivations, charged_ns: np.ndarray | None = None) -> ThreadStats:
    """The statistics of one thread's activations; ``charged_ns``: the kernel's charge of
    each (:mod:`.charge`), when the trace has it."""
    span = max(int(act.span_ns), 0)
    rate = (lambda n: n * 1e9 / span) if span > 0 else (lambda n: 0.0)
    th = act.thread
    return ThreadStats(
        comm=th.comm, pid=th.pid, irq=th.irq, activations=act.count,
        interarrival=Summary.of(act.interarrival_ns),
        exec=Summary.of(act.exec_ns),
        response=Summary.of(act.response_ns),
        irq_interarrival=Summary.of(act.irq_interarrival_ns),
        irq_requests=len(act.irq_ts_ns),
        merged_irqs=act.merged_irqs,
        irq_rate_hz=rate(len(act.irq_ts_ns)),
        activation_rate_hz=rate(act.count + act.dropped_lost + act.dropped_inconsistent),
        bandwidth=act.busy_ns / span if span > 0 else 0.0,
        span_ns=span,
        dropped_edge=act.dropped_edge, dropped_lost=act.dropped_lost,
        dropped_inconsistent=act.dropped_inconsistent,
        charged=None if charged_ns is None else Summary.of(charged_ns),
    )
