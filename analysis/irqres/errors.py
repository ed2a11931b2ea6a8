"""Exceptions raised by the irqres library. The CLI turns them into clean messages."""


class IrqresError(Exception):
    """Base class of every error the library raises on purpose."""


class UnitError(IrqresError, ValueError):
    """A duration or number with a unit could not be read."""


class DaemonError(IrqresError):
    """irqresd refused a request, or could not be reached. ``errno_name`` is the name of
    the errno a refusal came with (the reply's ``errno``, e.g. ``"EBUSY"`` for the
    kernel's admission control: docs/protocol.md), None when it has none."""

    def __init__(self, *args: object, errno_name: str | None = None) -> None:
        super().__init__(*args)
        self.errno_name = errno_name


class TraceError(IrqresError, ValueError):
    """A trace file cannot be used; the message names the file and the cause."""


class SelectionError(TraceError):
    """A trace read with a selection lacks the rows of a thread the analysis picked
    (the reader's and the analysis' matching disagree); read it again without one."""


class ModelError(IrqresError, ValueError):
    """The analysis model (PMFs, buffering, CBS solver, replay) got inputs it cannot use."""
