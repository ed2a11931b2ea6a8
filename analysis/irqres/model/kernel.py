"""What the kernel adds to a SCHED_DEADLINE reservation, as the recommendation plans it.

- **Limits.** ``sched_setattr`` refuses a period outside
  [``sched_deadline_period_min_us``, ``sched_deadline_period_max_us``]
  (/proc/sys/kernel; 100 µs and 4,194,304 µs by default) and a runtime below 1024 ns.
- **Enforcement.** The budget is checked when the scheduler charges the thread: at every
  switch-out and dequeue, and while the thread runs only at the scheduler tick (1/HZ,
  4 ms at HZ=250) unless the HRTICK_DL scheduler feature arms a high-resolution timer for
  the exact moment the budget runs out (``/sys/kernel/debug/sched/features``: HRTICK_DL,
  off by default: NO_HRTICK_DL). Under tick enforcement a job that outruns its budget
  keeps the CPU until the next tick and the overrun is taken from later periods, so a
  budget that is meant to cut a job into slices does not do what the model assumes.

The slices of a job are ⌈c/Q⌉ for its execution time c. :func:`default_max_slices`
gives the limit the recommendation applies to the execution time at the target quantile:
one budget per job under tick enforcement (the model's exact slicing does not happen),
:data:`HRTICK_MAX_SLICES` under HRTICK_DL (each slice costs a throttle, a replenishment
and two context switches, which the model does not count).

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass, field, replace

from ..errors import ModelError

#: The kernel refuses SCHED_DEADLINE runtimes below this (sched_setattr: EINVAL).
KERNEL_MIN_RUNTIME_NS = 1024
#: The kernel's defaults of sched_deadline_period_{min,max}_us, in ns.
DEFAULT_PERIOD_MIN_NS = 100_000
DEFAULT_PERIOD_MAX_NS = (1 << 22) * 1000
#: HZ assumed when the kernel's configuration cannot be read (Debian's kernels use 250).
DEFAULT_HZ = 250
#: Budget slices allowed per job under HRTICK_DL enforcement (tick enforcement: 1).
HRTICK_MAX_SLICES = 4
ENFORCEMENTS = ("auto", "tick", "hrtick")
_HZ_RE = re.compile(r"^CONFIG_HZ=(\d+)$", re.M)


@dataclass(frozen=True)
class KernelFacts:
    """The limits and the budget enforcement of the kernel a reservation is planned for.

    ``sources`` says where each fact came from (a file, "default", "given").
    """

    period_min_ns: int = DEFAULT_PERIOD_MIN_NS
    period_max_ns: int = DEFAULT_PERIOD_MAX_NS
    runtime_min_ns: int = KERNEL_MIN_RUNTIME_NS
    enforcement: str = "tick"     # "tick" or "hrtick"
    tick_ns: int = 1_000_000_000 // DEFAULT_HZ
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.enforcement not in ("tick", "hrtick"):
            raise ModelError(f"enforcement: must be tick or hrtick, got {self.enforcement!r}")
        if not 0 < self.period_min_ns <= self.period_max_ns:
            raise ModelError(f"deadline period limits: {self.period_min_ns} ns .. "
                             f"{self.period_max_ns} ns is not a range")
        if self.tick_ns <= 0:
            raise ModelError(f"tick: must be positive, got {self.tick_ns} ns")

    @property
    def enforcement_ns(self) -> int:
        """How late a budget may be enforced: the tick, or 0 with HRTICK_DL."""
        return self.tick_ns if self.enforcement == "tick" else 0

    def period_refused(self, period_ns: int) -> str | None:
        """Why the kernel refuses ``period_ns`` (None: it accepts it)."""
        if period_ns < self.period_min_ns:
            return (f"the kernel refuses periods below {_us(self.period_min_ns)} "
                    "(sched_deadline_period_min_us)")
        if period_ns > self.period_max_ns:
            return (f"the kernel refuses periods above {_us(self.period_max_ns)} "
                    "(sched_deadline_period_max_us)")
        return None

    def default_max_slices(self) -> int:
        """Budget slices allowed per job when none is given (see the module docstring)."""
        return 1 if self.enforcement == "tick" else HRTICK_MAX_SLICES

    def describe(self) -> str:
        """One line for the report."""
        how = (f"at the scheduler tick, every {_us(self.tick_ns)} (HZ="
               f"{round(1e9 / self.tick_ns)}; {self.sources.get('tick_ns', 'default')})"
               if self.enforcement == "tick" else "by HRTICK_DL, at the exact moment")
        return (f"budget enforced {how}, {self.sources.get('enforcement', 'default')}; "
                f"periods {_us(self.period_min_ns)}..{_us(self.period_max_ns)} "
                f"({self.sources.get('periods', 'default')}), runtime >= "
                f"{self.runtime_min_ns} ns")

    def to_dict(self) -> dict:
        return {"period_min_ns": self.period_min_ns, "period_max_ns": self.period_max_ns,
                "runtime_min_ns": self.runtime_min_ns, "enforcement": self.enforcement,
                "tick_ns": self.tick_ns, "enforcement_ns": self.enforcement_ns,
                "sources": dict(self.sources)}


def _us(ns: int) -> str:
    return f"{ns / 1000:g}us" if ns < 1_000_000 else f"{ns / 1e6:g}ms"


def _read(path: str) -> str | None:
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt") as fh:
                return fh.read()
        with open(path) as fh:
            return fh.read()
    except (OSError, EOFError):
        return None


def _config_hz(root: str) -> tuple[int | None, str]:
    release = os.uname().release
    for rel in ("proc/config.gz", f"boot/config-{release}"):
        text = _read(os.path.join(root, rel))
        m = _HZ_RE.search(text or "")
        if m:
            return int(m.group(1)), "/" + rel
    return None, ""


def _hrtick_dl(root: str) -> tuple[bool | None, str]:
    rel = "sys/kernel/debug/sched/features"
    words = (_read(os.path.join(root, rel)) or "").split()
    if "HRTICK_DL" in words:
        return True, "/" + rel
    if "NO_HRTICK_DL" in words:
        return False, "/" + rel
    return None, ""


def host_facts(*, root: str = "/", enforcement: str = "auto",
               tick_ns: int | None = None) -> KernelFacts:
    """The facts of the kernel this runs on (files under ``root``), with the given
    overrides. Unreadable files leave the kernel's defaults, and ``sources`` says so.

    ``enforcement`` ``"auto"`` reads HRTICK_DL from debugfs (not mounted or not readable:
    tick, the kernel's default); ``tick_ns`` None reads CONFIG_HZ (/proc/config.gz,
    /boot/config-RELEASE; else HZ=250).
    """
    if enforcement not in ENFORCEMENTS:
        raise ModelError(f"enforcement: must be one of {', '.join(ENFORCEMENTS)}, "
                         f"got {enforcement!r}")
    src: dict[str, str] = {}
    vals = []
    for name, default in (("min", DEFAULT_PERIOD_MIN_NS), ("max", DEFAULT_PERIOD_MAX_NS)):
        rel = f"proc/sys/kernel/sched_deadline_period_{name}_us"
        text = (_read(os.path.join(root, rel)) or "").strip()
        vals.append(int(text) * 1000 if text.isdigit() else default)
        if text.isdigit():
            src["periods"] = "/proc/sys/kernel/sched_deadline_period_{min,max}_us"
    src.setdefault("periods", "the kernel's defaults")
    if tick_ns is None:
        hz, where = _config_hz(root)
        tick_ns = 1_000_000_000 // (hz or DEFAULT_HZ)
        src["tick_ns"] = f"CONFIG_HZ from {where}" if hz else f"HZ unknown, {DEFAULT_HZ} assumed"
    else:
        src["tick_ns"] = "given"
    if enforcement == "auto":
        on, where = _hrtick_dl(root)
        enforcement = "hrtick" if on else "tick"
        src["enforcement"] = (f"from {where}" if where else
                              "HRTICK_DL unreadable (debugfs), off by default: tick assumed")
    else:
        src["enforcement"] = "given"
    return KernelFacts(vals[0], vals[1], KERNEL_MIN_RUNTIME_NS, enforcement, tick_ns, src)


#: ``irqres record`` writes the recording kernel's facts beside the trace, in TRACE + this.
FACTS_SUFFIX = ".kernel.json"
_FACT_KEYS = ("period_min_ns", "period_max_ns", "enforcement", "tick_ns")


def facts_path(trace_path: str) -> str:
    """Where ``irqres record`` keeps the facts of the kernel a trace was recorded on."""
    return trace_path + FACTS_SUFFIX


def save_facts(path: str, facts: KernelFacts, release: str) -> None:
    """Writes ``facts`` of the kernel ``release`` to ``path`` (JSON, integer ns)."""
    doc = {"schema_version": 1, "release": release,
           **{k: getattr(facts, k) for k in _FACT_KEYS}, "sources": dict(facts.sources)}
    try:
        with open(path, "w") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
    except OSError as exc:
        raise ModelError(f"{path}: cannot write the kernel's facts: {exc.strerror}") from exc


def load_facts(path: str) -> tuple[KernelFacts, str]:
    """The facts ``save_facts`` wrote to ``path``, and the kernel release they are of."""
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the kernel's facts: {exc.strerror}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: not JSON ({exc}); irqres record writes this file beside "
                         "its trace: remove it, or record again") from exc
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        raise ModelError(f"{path}: not irqres kernel facts (schema_version 1 expected)")
    bad = [k for k in _FACT_KEYS if k not in doc or isinstance(doc[k], bool)
           or not isinstance(doc[k], int if k != "enforcement" else str)]
    if bad or not isinstance(doc.get("release"), str):
        raise ModelError(f"{path}: kernel facts with {', '.join(bad) or 'release'} missing "
                         "or of the wrong type")
    sources = {k: f"recorded with the trace ({os.path.basename(path)}: "
                  f"{v})" for k, v in (doc.get("sources") or {}).items()
               if isinstance(v, str)}
    try:
        facts = KernelFacts(doc["period_min_ns"], doc["period_max_ns"], KERNEL_MIN_RUNTIME_NS,
                            doc["enforcement"], doc["tick_ns"], sources)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from exc
    return facts, doc["release"]


def _given(facts: KernelFacts, enforcement: str, tick_ns: int | None) -> KernelFacts:
    """``facts`` with the options the user gave ("auto" / None: keep them)."""
    if enforcement not in ENFORCEMENTS:
        raise ModelError(f"enforcement: must be one of {', '.join(ENFORCEMENTS)}, "
                         f"got {enforcement!r}")
    sources = dict(facts.sources)
    if enforcement != "auto":
        sources["enforcement"] = "given"
    if tick_ns is not None:
        sources["tick_ns"] = "given"
    return replace(facts, enforcement=facts.enforcement if enforcement == "auto"
                   else enforcement, tick_ns=facts.tick_ns if tick_ns is None else tick_ns,
                   sources=sources)


def trace_facts(trace_path: str, trace_release: str | None, *, enforcement: str = "auto",
                tick_ns: int | None = None, root: str = "/",
                this_release: str | None = None) -> tuple[KernelFacts, str | None]:
    """The facts of the kernel the trace at ``trace_path`` was recorded on, with the
    options given, and a warning (None when there is nothing to say).

    In order: the facts ``irqres record`` kept beside the trace; this kernel's, when the
    trace was recorded on a kernel of the same release or does not say which
    (``trace_release`` None); otherwise the kernel's defaults, and a warning saying so.
    """
    this_release = this_release or os.uname().release
    side = facts_path(trace_path)
    if os.path.exists(side):
        facts, release = load_facts(side)
        warning = None
        if trace_release and release != trace_release:
            warning = (f"{side} describes kernel {release}, the trace was recorded on "
                       f"{trace_release}: its facts are used all the same")
        return _given(facts, enforcement, tick_ns), warning
    if not trace_release or trace_release == this_release:
        return host_facts(root=root, enforcement=enforcement, tick_ns=tick_ns), None
    why = f"the trace's kernel ({trace_release}) is not this one ({this_release})"
    facts = KernelFacts(sources={
        "periods": f"the kernel's defaults ({why})",
        "tick_ns": f"HZ={DEFAULT_HZ} assumed ({why})",
        "enforcement": f"tick assumed, the kernel's default ({why})"})
    warning = None
    if enforcement == "auto" or tick_ns is None:
        warning = (f"{trace_path}: recorded on kernel {trace_release}, not this one "
                   f"({this_release}), and no {os.path.basename(side)} beside it (irqres "
                   "record writes one): the recommendation assumes the kernel's defaults "
                   f"(budgets enforced at the tick, HZ={DEFAULT_HZ}); give --enforcement "
                   "and --tick for the recording kernel")
    return _given(facts, enforcement, tick_ns), warning
