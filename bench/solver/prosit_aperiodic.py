"""irqres's solver against PROSIT's model of aperiodic arrivals, on the sample traces.

PROSIT (tool/V2.0/qbd_rr_solver.cpp, ``matrix_prob_ts``, after Abeni, Manica and
Palopoli, JSS 85(5), 2012) builds the transition of the backlog v after an arrival as

    v' = c                     when v < z_min·q   (every inter-arrival empties it)
    v' = v - z·q + c           otherwise, for each z of the inter-arrival PMF,

keeping only the states v' >= 0: where v - z·q < 0 the budget left unused is credited
to the next job (v' < c), and where v - z·q + c < 0 the mass has no state and is left
out, the normalisation putting it back in proportion. This script computes the
stationary distribution of that transition (the normalised dominant left eigenvector,
by power iteration on the same lattice: c in units of Δ rounded up, z = ⌊a/T⌋ rounded
down, q = ⌊Q/Δ⌋) and compares P{v <= δq} with irqres's exact Lindley chain
(v' = max(v - z·q, 0) + c) for the activations of every thread of every sample trace in
tests/data, at each period of the recommendation's table and budgets at loads 0.5, 0.8
and 0.95. Output: one JSON line per (thread, Q, T) and a summary.

    PYTHONPATH=analysis python3 bench/solver/prosit_aperiodic.py [TRACE...]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from irqres.measure.activations import activations
from irqres.model.cbs import CbsModel
from irqres.pmf import Pmf, default_granularity
from irqres.trace.reader import read_trace
from scipy.signal import fftconvolve

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
LOADS = (0.5, 0.8, 0.95)
DELTAS = (1, 2, 3)
US = 1000


def prosit_stationary(c: np.ndarray, zv: np.ndarray, zp: np.ndarray, q: int,
                      tol: float = 1e-12, max_iter: int = 200_000) -> tuple[np.ndarray, bool]:
    """PROSIT's aperiodic chain: the stationary distribution of v on 0 .. N-1, and
    whether the iteration converged (L1 change below ``tol``)."""
    zmin = int(zv[0])
    n = max(int(c.size) * 8, 4 * zmin * q + c.size, 4096)
    pi = np.zeros(n)
    pi[: c.size] = c
    for _ in range(max_iter):
        nxt = np.zeros(n)
        reset = pi[: min(zmin * q, n)].sum()
        nxt[: c.size] += reset * c
        tail = np.zeros(n)
        tail[zmin * q:] = pi[zmin * q:]
        vc = np.maximum(fftconvolve(tail, c), 0.0)   # index k: v + c
        for z, p in zip(zv, zp, strict=True):
            # v' = v + c - z·q, the states v' >= 0 only
            seg = vc[int(z) * q: int(z) * q + n]
            nxt[: seg.size] += p * seg
        total = nxt.sum()
        nxt /= total
        if np.abs(nxt - pi).sum() < tol:
            return nxt, True
        pi = nxt
    return pi, False


def rows_for(name: str, arr: np.ndarray, exe: np.ndarray) -> list[dict]:
    g = default_granularity(exe)
    model = CbsModel(Pmf.from_samples(exe, g, rounding="up"),
                     Pmf.from_samples(np.diff(arr), g, rounding="down"))
    mean_ia = int(np.mean(np.diff(arr)))
    periods = sorted({max(100 * US, int(mean_ia * f) // US * US) for f in (0.25, 0.5, 1.0)})
    out = []
    for t in periods:
        zv, zp = model.z_pmf(t)
        ez = float(np.dot(zv, zp))
        if ez == 0:
            continue
        for load in LOADS:
            q = math.ceil(model.mean_c / (load * ez))
            if q * g > t or q < 1:
                continue
            res = model.solve(q * g, t, max_delta=max(DELTAS))
            if res.prob is None or zv[0] * q >= model.c_max:
                continue    # unstable, or the backlog is always empty: both agree
            pi, converged = prosit_stationary(model.c, zv, zp, q)
            cdf = np.cumsum(pi)
            for d in DELTAS:
                exact = float(res.prob[d - 1])
                pros = float(cdf[min(d * q, cdf.size - 1)])
                out.append({"thread": name, "period_ns": t, "runtime_ns": q * g,
                            "load": round(res.load, 3), "delta": d, "irqres": exact,
                            "prosit": pros, "diff": pros - exact,
                            "converged": converged, "lost_top": float(pi[-1])})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="*", default=sorted(str(p) for p in DATA.glob("*.dat")))
    args = ap.parse_args()
    rows = []
    for path in args.traces:
        try:
            trace = read_trace(path)
            acts = activations(trace)
        except Exception as e:  # a sample without IRQ threads (host-noevents.dat)
            print(json.dumps({"trace": Path(path).name, "skipped": str(e)[:120]}))
            continue
        for act in acts:
            if act.count < 100:
                continue
            name = f"{Path(path).name}:{act.thread.comm}"
            for r in rows_for(name, act.start_ns, act.exec_ns):
                print(json.dumps(r))
                rows.append(r)
    if rows:
        d = np.array([r["diff"] for r in rows])
        print(json.dumps({"rows": len(rows), "min_diff": float(d.min()),
                          "max_diff": float(d.max()),
                          "median_abs_diff": float(np.median(np.abs(d)))}))


if __name__ == "__main__":
    main()
