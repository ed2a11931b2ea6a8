"""Reading traces: the native libtracecmd reader (:mod:`.reader`) and the host-safe
recorder (:mod:`.record`)."""

from .reader import RECORD_COMMAND, Selection, Trace, read_trace

__all__ = ["RECORD_COMMAND", "Selection", "Trace", "read_trace"]
