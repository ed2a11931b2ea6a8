"""What the response-time panel of a plot draws, computed from a
:class:`~.types.ThreadReport`: the model and the replay run here, so that drawing
(:mod:`irqres.plots`) only draws."""

from __future__ import annotations

import numpy as np

from ..measure.activations import joined_arrivals
from ..model.recommend import predicted_response_cdf
from ..model.replay import replay
from .types import ResponseCurves, ThreadReport

#: points of the predicted response-time curve
CURVE_POINTS = 240


def response_curves(tr: ThreadReport, points: int = CURVE_POINTS) -> ResponseCurves:
    """The measured response times of ``tr``; with a recommendation, the replay of its
    jobs through the best reservation and the model's CDF on ``points`` points from 0 to
    the largest of the measured, the replayed and the bound D."""
    measured = np.sort(tr.act.response_ns)
    rec = tr.recommendation
    best = None if rec is None else rec.best
    if measured.size == 0 or best is None or best.runtime_ns is None:
        return ResponseCurves(measured)
    arr = joined_arrivals(tr.act)
    replayed = np.sort(replay(arr, tr.model_exec_ns, best.runtime_ns, best.period_ns)
                       .response_ns)
    hi = max(int(measured.max()), tr.deadline_ns or 0, int(replayed.max()))
    xs = np.linspace(0, hi, points).astype(np.int64)
    return ResponseCurves(measured, replayed, xs,
                          predicted_response_cdf(arr, tr.model_exec_ns, best, xs))
