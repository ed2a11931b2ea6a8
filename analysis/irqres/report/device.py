"""The device's whole work in the report: where an IRQ thread's device ran
(:mod:`irqres.measure.softirq`), as text and as JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..units import format_duration

if TYPE_CHECKING:
    from .pipeline import ThreadReport


def device_dict(tr: ThreadReport) -> dict[str, Any] | None:
    """``device_work`` of a thread's JSON, None when it was not measured."""
    if tr.device is None:
        return None
    return {**tr.device.to_dict(), "added_to_model_ns": tr.device_model_ns}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def device_text(tr: ThreadReport, measured: bool) -> list[str]:
    """The lines of a thread's device work; ``measured``: the trace has soft IRQ events."""
    if not tr.act.thread.is_irq:
        return []
    w = tr.device
    if w is None:
        if measured:
            return []
        return ["device work: only the IRQ thread's (the trace has no irq:softirq_entry/"
                "exit events, so NAPI work continued elsewhere is not seen; irqres record "
                "records them)"]
    parts = [f"IRQ thread {_pct(w.share(w.thread_ns))}"]
    if w.napi:
        names = ", ".join(h.comm for h in w.napi)
        parts.append(f"NAPI threads {_pct(w.share(w.napi_ns))} ({names})")
    parts.append(f"ksoftirqd {_pct(w.share(w.ksoftirqd_ns))}")
    parts.append(f"other tasks {_pct(w.share(w.other_ns))}")
    out = [f"device work: {format_duration(w.total_ns)} in all: {', '.join(parts)}; "
           f"outside the device's threads (no reservation of them bounds it): "
           f"{_pct(w.leak_share)}"]
    if w.hosts:
        top = ", ".join(f"{h.comm} (pid {h.pid}) {format_duration(h.ns)} in {h.runs} runs"
                        for h in w.hosts[:4])
        out.append(f"  NET_RX/BLOCK soft IRQs run for it elsewhere: {top}")
    if tr.device_model_ns:
        out.append(f"  the model sizes the device's whole work: "
                   f"{format_duration(tr.device_model_ns)} of it added to the execution "
                   "times of the activations it followed")
    return out
