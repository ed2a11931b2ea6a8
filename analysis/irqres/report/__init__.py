"""The analysis of a trace put together and shown: :mod:`.pipeline` runs measure and
model over each thread, :mod:`.render` shows the result (text, JSON, profile)."""

from .pipeline import Options, Report, ThreadReport, analyze, buffer_for

__all__ = ["Options", "Report", "ThreadReport", "analyze", "buffer_for"]
