"""Replay real activations through a simulated SCHED_DEADLINE server.

The stochastic model (:mod:`.cbs`) assumes independent execution and inter-arrival
times and counts time in whole server periods. The replay drops both assumptions: the
trace's own arrivals and execution times go, in order, through a CBS that follows
Documentation/scheduler/sched-deadline.rst and the kernel's update_dl_entity():

- Jobs of the thread are served FIFO; a job that arrives while the previous one is
  still pending waits for it (the thread does not sleep in between).
- Wake-up (a job arrives to a sleeping thread at time t): if the scheduling deadline d
  has passed (d < t) or the remaining runtime r overflows the bandwidth,
  r·D > (d - t)·Q, then d = t + D and r = Q. With a constrained deadline (D < T) and
  d not yet passed, the kernel's revised rule applies instead: r = (d - t)·Q/D.
- Running consumes r one for one. At r = 0 the thread is throttled until d, then
  replenished: d += T, r += Q; if d is still in the past, d = now + D and r = Q.
  A job that ends exactly as r reaches 0 leaves the thread throttled the same way.

Assumptions, stated: the thread is the only SCHED_DEADLINE task on its CPU (or EDF never
lets another task delay it), so it runs whenever it has budget and work; enforcement is
exact (no tick granularity, no overrun). Times are integer ns; the loop uses Python ints
(no numba), about a microsecond per job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..pmf import as_ns_array
from .cbs import CbsResult


@dataclass(frozen=True, eq=False)
class ReplayResult:
    """Per-job results of a replay and the probabilities derived from them."""

    runtime_ns: int
    period_ns: int
    deadline_ns: int
    response_ns: np.ndarray  # int64, finish - arrival, per job
    finish_ns: np.ndarray  # int64
    throttles: int  # times the budget ran out with work left or at a job's end
    max_delta: int

    @property
    def prob(self) -> np.ndarray:
        """P{response <= δT} over the replayed jobs, δ = 1 .. max_delta."""
        limits = np.arange(1, self.max_delta + 1, dtype=np.int64) * self.period_ns
        return np.array([self.prob_within(int(x)) for x in limits])

    def prob_within(self, limit_ns: int) -> float:
        """The fraction of jobs whose response time is at most ``limit_ns``."""
        if self.response_ns.size == 0:
            raise ModelError("replay: no jobs were replayed")
        return float(np.count_nonzero(self.response_ns <= limit_ns) / self.response_ns.size)

    def pessimism(self, model: CbsResult) -> np.ndarray | None:
        """replay P - model P per δ: positive where the model is pessimistic.

        None when the model is unstable (it then gives no probabilities).
        """
        if model.prob is None:
            return None
        k = min(self.max_delta, model.prob.size)
        return self.prob[:k] - model.prob[:k]

    def to_dict(self) -> dict:
        """A JSON-ready summary (not the per-job arrays)."""
        resp = self.response_ns
        return {
            "runtime_ns": self.runtime_ns,
            "period_ns": self.period_ns,
            "deadline_ns": self.deadline_ns,
            "jobs": int(resp.size),
            "throttles": self.throttles,
            "response_mean_ns": float(resp.mean()) if resp.size else None,
            "response_max_ns": int(resp.max()) if resp.size else None,
            "prob_within_periods": [float(p) for p in self.prob] if resp.size else None,
        }


def replay(
    arrival_ns: np.ndarray,
    exec_ns: np.ndarray,
    runtime_ns: int,
    period_ns: int,
    deadline_ns: int | None = None,
    *,
    max_delta: int = 10,
) -> ReplayResult:
    """Run the jobs (arrival, execution time) through a CBS (Q, T, D).

    Parameters
    ----------
    arrival_ns
        Activation times, int64 ns, sorted.
    exec_ns
        Execution time of each activation, int64 ns, same length.
    runtime_ns, period_ns, deadline_ns
        Q, T and the relative deadline D (default T); 0 < Q <= D <= T.
    max_delta
        Largest δ for P{response <= δT}.
    """
    arr = as_ns_array(arrival_ns, "arrival times")
    exe = as_ns_array(exec_ns, "execution times")
    if arr.size != exe.size:
        raise ModelError(f"replay: {arr.size} arrival times but {exe.size} execution times")
    if arr.size == 0:
        raise ModelError("replay: no activations to replay")
    if arr.size > 1 and np.any(np.diff(arr) < 0):
        raise ModelError("arrival times: must be sorted")
    if np.any(exe < 0):
        raise ModelError("execution times: must not be negative")
    q, t = int(runtime_ns), int(period_ns)
    d_rel = t if deadline_ns is None else int(deadline_ns)
    if not 0 < q <= d_rel <= t:
        raise ModelError(
            f"replay: need 0 < runtime <= deadline <= period, got runtime {q} ns, "
            f"deadline {d_rel} ns, period {t} ns"
        )
    if max_delta < 1:
        raise ModelError(f"max_delta: must be at least 1, got {max_delta}")
    finish, throttles = _run(arr.tolist(), exe.tolist(), q, t, d_rel)
    fin = np.array(finish, dtype=np.int64)
    return ReplayResult(q, t, d_rel, fin - arr, fin, throttles, int(max_delta))


def _run(arrivals: list, execs: list, q: int, t: int, d_rel: int) -> tuple[list, int]:
    """The CBS state machine; returns finish times and the number of throttlings."""
    implicit = d_rel == t
    dl = arrivals[0] - 1  # scheduling deadline: in the past, so the first wake-up replenishes
    rt = 0  # remaining runtime
    avail = arrivals[0]  # when the thread can take its next queued job
    finish = []
    throttles = 0
    for a, work in zip(arrivals, execs, strict=True):
        if a >= avail:  # the thread sleeps: this arrival wakes it up
            now = a
            if dl < now or (dl - now) * q < rt * d_rel:
                if implicit or dl < now:
                    dl, rt = now + d_rel, q
                else:  # constrained deadline, deadline still ahead: revised wake-up
                    rt = (dl - now) * q // d_rel
        else:
            now = avail
        while work > rt:  # the budget runs out with work left: throttled until dl
            work -= rt
            now = max(now + rt, dl)
            throttles += 1
            dl += t
            rt = q
            if dl < now:
                dl = now + d_rel
        now += work
        rt -= work
        finish.append(now)
        if rt == 0:  # the budget ran out as the job ended: replenished at the deadline
            throttles += 1
            avail = max(now, dl)
            dl += t
            rt = q
            if dl < avail:
                dl = avail + d_rel
        else:
            avail = now
    return finish, throttles
