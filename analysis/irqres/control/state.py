"""What ``irqres tune`` keeps per adaptive target between intervals."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..targetkind import TargetKind
from .controller import ControllerConfig, Step, ThresholdController
from .inputs import Counters, Interval


@dataclass
class TargetState:
    name: str
    kind: TargetKind
    config: ControllerConfig
    ctl: ThresholdController
    runtime_ns: int
    period_ns: int
    sample_ns: int
    threads: dict[int, dict] = field(default_factory=dict)   # pid -> THREAD of status
    prev: dict[int, Counters] = field(default_factory=dict)
    prev_time_ns: int = 0                                     # when prev was read
    next_due_ns: int = 0
    absent: bool = False
    iface: dict[int, str | None] = field(default_factory=dict)  # pid -> NIC, looked up once
    ceiling: tuple[int, int] | None = None                   # (runtime, until_ns)
    # after a refused decrease: (runtime, until_ns); no lower budget is asked till then
    floor: tuple[int, int] | None = None
    # the last decrease refused (ns less than the budget then), until a raise: a decrease
    # as large is then asked half as large (loop.Tuner._follow)
    refused_step_ns: int | None = None
    last: Step | None = None
    # (the threads dict it was made from, [(cpus, threads on them, CPUs in the list)])
    cpu_groups: tuple[dict, list[tuple[str, int, int]]] | None = None
    last_interval: Interval | None = None
    sent: int = 0
    # a set-budget given up unanswered (a signal, the duration's end): irqresd may hold
    # the budget asked or the one before, so the end puts it back whichever it is
    unsure: bool = False
    note: str = ""
