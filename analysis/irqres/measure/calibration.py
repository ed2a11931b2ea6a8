"""What a reservation adds to a thread's execution, measured from one probe recording.

A recommendation is planned from a trace recorded while the thread runs at its own
policy. Under SCHED_DEADLINE some threads cost more per job than that trace shows: on
PREEMPT_RT a task woken by ``ktimers/N`` preempts its waker, blocks on the lock the waker
still holds and runs its wake-up path twice (:mod:`.handover`, docs/model.md: 73-94 µs
more per job in the PREEMPT_RT guest). Nothing in the free trace records that cost; a
trace of the same thread recorded *under* a reservation (the probe) does.

The calibration compares the two traces' execution times, as the model uses them (the
kernel's charge where both traces have it), at a low quantile, :data:`QUANTILE`: a
reservation that is too small makes jobs overrun and merge (a merged activation holds
two or more jobs), which lengthens the probe's upper tail but not its lower quarter, so
the low quantile measures the cost per job whatever probe reservation was used. The
difference, never below 0, is the *allowance*: what the model adds to every execution
time of the free trace before it recommends.

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the quantile of both traces' execution times the allowance compares
QUANTILE = 0.25
#: the fewest activations of the thread the probe must hold
MIN_PROBE_ACTIVATIONS = 20


@dataclass(frozen=True)
class Calibration:
    """One thread's allowance, from the probe ``probe_path``."""

    probe_path: str
    probe_pids: tuple[int, ...]     # the probe's threads of the same comm
    probe_activations: int
    source: str                     # the execution figure compared: "kernel" or "switch"
    quantile: float
    free_ns: int                    # the free trace's execution at the quantile
    probe_ns: int                   # the probe's
    allowance_ns: int               # max(0, probe_ns - free_ns), added to every execution

    def to_dict(self) -> dict:
        return {"probe": self.probe_path, "probe_pids": list(self.probe_pids),
                "probe_activations": self.probe_activations, "source": self.source,
                "quantile": self.quantile, "free_ns": self.free_ns,
                "probe_ns": self.probe_ns, "allowance_ns": self.allowance_ns}


def quantile_ns(samples: np.ndarray, q: float) -> int:
    """The ``q`` quantile of ``samples`` as one of them (no interpolation), in ns."""
    s = np.sort(np.asarray(samples, dtype=np.int64))
    return int(s[min(int(q * len(s)), len(s) - 1)])


def calibrate(free_ns: np.ndarray, probe_ns: np.ndarray, *, probe_path: str,
              probe_pids: tuple[int, ...], source: str,
              quantile: float = QUANTILE) -> Calibration:
    """The allowance of a thread whose free execution times are ``free_ns`` and whose
    execution times under a reservation are ``probe_ns`` (both non-empty)."""
    f, p = quantile_ns(free_ns, quantile), quantile_ns(probe_ns, quantile)
    return Calibration(probe_path, probe_pids, len(probe_ns), source, quantile, f, p,
                       max(0, p - f))
