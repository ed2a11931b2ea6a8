"""The adaptive threshold controller (docs/controller.md) and what drives it.

``controller`` is the pure algorithm, ``inputs`` reads the live counters, ``loop`` runs the
controller against irqresd (``irqres tune``), keeping per target a ``state.TargetState``,
estimating admission with ``admission``, logging to ``csvlog`` and drawing ``view`` on a
terminal; ``simulate`` drives it through a model of a CBS server with bursty arrivals
(``irqres simulate``). See docs/controller.md.
"""

from .controller import ControlError, ControllerConfig, Step, ThresholdController

__all__ = ["ControlError", "ControllerConfig", "Step", "ThresholdController"]
