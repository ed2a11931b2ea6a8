"""The live view of ``irqres tune`` on a terminal: one line per target, redrawn in
place at every interval."""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

from ..units import format_duration
from .state import TargetState


def target_line(st: TargetState) -> str:
    """The line of one target: the last interval's inputs, the threshold and the budget."""
    iv, step = st.last_interval, st.last
    if iv is None or step is None:
        return f"{st.name:<16} Q {format_duration(st.runtime_ns):>8}  {st.note or 'waiting'}"
    clamp = f" [{step.clamp}]" if step.clamp else ""
    return (f"{st.name:<16} N_pro {iv.n_pro:>6} T_pro {format_duration(iv.t_pro_ns):>8} "
            f"N_rmn {iv.n_rmn:>5} T_thr {format_duration(step.threshold_ns):>8} "
            f"Q {format_duration(st.runtime_ns):>8}{clamp} sent {st.sent}"
            + (f" {st.note}" if st.note else ""))


class TerminalView:
    """Draws the targets' lines on ``stream``, over the ones drawn before."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self._lines = 0

    def draw(self, targets: Iterable[TargetState]) -> None:
        lines = [target_line(st) for st in targets]
        out = "".join("\x1b[2K" + line + "\n" for line in lines)
        up = f"\x1b[{self._lines}F" if self._lines else ""
        self.stream.write(up + out)
        self.stream.flush()
        self._lines = len(lines)
