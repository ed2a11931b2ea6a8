"""The analysis of a trace put together and shown: :mod:`.pipeline` runs measure and
model over each thread into the types of :mod:`.types`, :mod:`.curves` computes what a
plot draws, :mod:`.render` shows the result (text, JSON, profile); :mod:`irqres.jsonout`
makes every ``--json`` output JSON-safe and versioned."""

from .pipeline import analyze, buffer_for
from .types import Options, Report, ResponseCurves, ThreadReport

__all__ = ["Options", "Report", "ResponseCurves", "ThreadReport", "analyze", "buffer_for"]
