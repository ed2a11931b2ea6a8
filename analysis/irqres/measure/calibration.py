"""What a reservation adds to a thread's execution, measured from one probe recording.

A recommendation is planned from a trace recorded while the thread runs at its own
policy. Under SCHED_DEADLINE some threads cost more per job than that trace shows: on
PREEMPT_RT a task woken by ``ktimers/N`` preempts its waker, blocks on the lock the waker
still holds and runs its wake-up path twice (:mod:`.handover`: 73-94 µs more per job in
the PREEMPT_RT guest), and a job the reservation runs at once, in phase with the
scheduler tick, pays for the tick's work (every 4th job of a 1 ms timer at HZ=250, 130 µs
more in the guest). Nothing in the free trace records either; a trace of the same thread
recorded *under* a reservation (the probe) does, as the shape of its execution times.

The calibration maps the free trace's execution times onto the probe's, quantile by
quantile: the execution at rank u of the free trace becomes the larger of itself and the
probe's execution at the same quantile u, so the model plans from the probe's
distribution (its tail included) with the free trace's arrivals. The probe's activations
that were preempted or throttled (a switch-out runnable, R, inside the activation: under
SCHED_DEADLINE nothing but another deadline task or the budget running out takes the CPU
from it) are left out: a budget too small for the thread throttles it, and the jobs that
pile up behind run in one long activation that is not what one job costs. Long
activations of piled-up jobs that were not throttled themselves stay in and raise the
upper quantiles, which errs on the side of a larger budget; a probe throttled in more of
its activations than the target leaves is refused (:mod:`irqres.report.pipeline`).

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..trace.reader import Trace
from .activations import ThreadActivations

#: the fewest held (not preempted) activations of the thread the probe must hold
MIN_PROBE_ACTIVATIONS = 20
#: a switch-out in a state with none of these bits is runnable: R, or R+ (preempted)
_NOT_RUNNABLE = 0xff


@dataclass(frozen=True)
class Calibration:
    """One thread's calibration from the probe ``probe_path``: the execution times at
    ``quantile`` (the target) and at the median in both traces, and what was added."""

    probe_path: str
    probe_pids: tuple[int, ...]     # the probe's threads of the same comm
    probe_activations: int          # held activations used
    preempted: int                  # the probe's activations left out (preempted, throttled)
    source: str                     # the execution figure compared: "kernel" or "switch"
    quantile: float                 # the target probability
    free_ns: int                    # the free trace's execution at the quantile
    probe_ns: int                   # the probe's
    median_free_ns: int
    median_probe_ns: int
    added_ns: int                   # the sum added to the free trace's execution times

    @property
    def allowance_ns(self) -> int:
        """What the model's execution at the target quantile gained."""
        return max(0, self.probe_ns - self.free_ns)

    def to_dict(self) -> dict:
        return {"probe": self.probe_path, "probe_pids": list(self.probe_pids),
                "probe_activations": self.probe_activations, "preempted": self.preempted,
                "source": self.source, "quantile": self.quantile, "free_ns": self.free_ns,
                "probe_ns": self.probe_ns, "allowance_ns": self.allowance_ns,
                "median_free_ns": self.median_free_ns,
                "median_probe_ns": self.median_probe_ns, "added_ns": self.added_ns}


def quantile_ns(samples: np.ndarray, q: float) -> int:
    """The ``q`` quantile of ``samples`` as one of them, the next higher (the convention
    of the recommendation's execution time at the target, model.recommend), in ns."""
    return int(np.quantile(samples, q, method="higher"))


def preempted(trace: Trace, act: ThreadActivations) -> np.ndarray:
    """Per activation of ``act``, whether the thread was switched out runnable inside it
    (preempted, or throttled by its reservation)."""
    sw = trace.events["sched_switch"]
    out = (sw["prev_pid"] == act.thread.pid) & ((sw["prev_state"] & _NOT_RUNNABLE) == 0)
    k = act.holding(sw["ts"][out])
    flags = np.zeros(act.count, dtype=bool)
    flags[k[k >= 0]] = True
    return flags


def mapped(free_ns: np.ndarray, probe_ns: np.ndarray) -> np.ndarray:
    """``free_ns`` with each execution raised to the probe's at the same quantile (its
    rank among ``free_ns``, ties in order); both non-empty."""
    free_ns = np.asarray(free_ns, dtype=np.int64)
    probe = np.sort(np.asarray(probe_ns, dtype=np.int64))
    rank = np.empty(len(free_ns), dtype=np.int64)
    rank[np.argsort(free_ns, kind="stable")] = np.arange(len(free_ns))
    at = np.minimum((rank * len(probe)) // len(free_ns), len(probe) - 1)
    return np.maximum(free_ns, probe[at])


def calibrate(free_ns: np.ndarray, probe_ns: np.ndarray, *, probe_path: str,
              probe_pids: tuple[int, ...], source: str, quantile: float,
              preempted_count: int = 0) -> tuple[np.ndarray, Calibration]:
    """The free execution times mapped onto the probe's held ones (:func:`mapped`), and
    what that did."""
    out = mapped(free_ns, probe_ns)
    cal = Calibration(probe_path, probe_pids, len(probe_ns), preempted_count, source,
                      quantile, quantile_ns(free_ns, quantile), quantile_ns(probe_ns, quantile),
                      quantile_ns(free_ns, 0.5), quantile_ns(probe_ns, 0.5),
                      int(out.sum() - np.asarray(free_ns, dtype=np.int64).sum()))
    return out, cal
