"""The plan report: what applying a profile does to each thread, as text.

irqresd builds the plan and sends it as JSON (PLAN in docs/protocol.md); this module
renders it. The daemon's own ``irqresd --dry-run`` prints the same text from the same
plan (``plan_report_text()`` in daemon/src/plan_report.c): one column order and one naming for
both, so the two change together (tests/integration/test_plan_report.py compares them).
"""

from __future__ import annotations

from typing import Any

from .tables import RESERVATION_COLUMNS, reservation_cells, text_table

ITEM_COLUMNS = ("TARGET", "THREAD", "PID", "IRQ", "CPUS", "NOW", *RESERVATION_COLUMNS,
                "BW", "PARTITION", "BUFFER", "VERDICT")
DOMAIN_COLUMNS = ("ROOT DOMAIN", "PARTITION", "CAPACITY", "EXISTING", "NEW", "TOTAL", "OK")
BANDWIDTH_NOTE = "(bandwidth in CPUs: the kernel admits while existing + new <= capacity)"


def _now(item: dict[str, Any]) -> str:
    policy = item.get("old_policy")
    if policy in ("fifo", "rr"):
        return f"{policy} {item.get('old_priority')}"
    if policy == "deadline":
        return "deadline"
    return f"{policy} nice {item.get('old_nice', 0)}"


def _summary(plan: dict[str, Any]) -> str:
    if plan.get("summary"):
        return str(plan["summary"])
    if not plan.get("items"):
        return "REFUSED: the profile matches no thread"
    return ("the kernel will accept it" if plan.get("feasible")
            else "the kernel will NOT accept it")


def _partition_cell(it: dict[str, Any]) -> str:
    """The item's partition; "(stays)" after it for a thread that cannot move into it and
    stays in its cgroup beside it (PF_NO_SETAFFINITY), as irqresd --dry-run writes it."""
    stays = it.get("needs_partition") and it.get("moves_into_partition") is False
    return (it.get("partition") or "-") + (" (stays)" if stays else "")


def format_plan(plan: dict[str, Any]) -> str:
    """The plan report: a header line, the threads, the root domains, warnings, errors."""
    lines = [f"Plan for {plan.get('profile') or 'the profile'}: {_summary(plan)}", ""]
    items = plan.get("items") or []
    if not items:
        lines.append("no thread matched")
    else:
        lines += text_table([ITEM_COLUMNS] + [[
            it.get("target"), it.get("comm"), it.get("pid"),
            "-" if it.get("irq") is None else it["irq"], it.get("cpus"), _now(it),
            *reservation_cells(it),
            f"{float(it.get('bw') or 0):.3f}", _partition_cell(it),
            it.get("buffer_check"), it.get("verdict")] for it in items])
        domains = plan.get("domains") or []
        if domains:
            lines.append("")
            lines += text_table([DOMAIN_COLUMNS] + [[
                d.get("cpus"),
                (d.get("partition") or ("(isolated)" if d.get("isolated") else "(default)"))
                + (" (new)" if d.get("new") else ""),
                "unlimited" if d.get("capacity") is None else f"{d['capacity']:.3f}",
                f"{d.get('existing_bw', 0):.3f}", f"{d.get('new_bw', 0):.3f}",
                f"{d.get('total_bw', 0):.3f}", "yes" if d.get("ok") else "NO"]
                for d in domains])
            lines.append(BANDWIDTH_NOTE)
        # where the numbers come from: irqresd's own text, as it prints it
        if plan.get("sources"):
            lines += str(plan["sources"]).rstrip("\n").split("\n")
        # how the budgets will be enforced: irqresd's paragraph, as it prints it
        enforcement = plan.get("enforcement") or {}
        if enforcement.get("text"):
            lines += str(enforcement["text"]).rstrip("\n").split("\n")
    warnings = plan.get("warnings") or []
    errors = plan.get("errors") or []
    for i, w in enumerate(warnings):
        lines += [""] * (i == 0) + [f"warning: {w}"]
    for i, e in enumerate(errors):
        lines += [""] * (i == 0 and not warnings) + [f"error: {e}"]
    return "\n".join(lines)


def refusal(profile: str, plan: dict[str, Any]) -> str:
    """Why a plan is refused, for an error message: a profile that matches nothing, or
    the kernel's verdicts; never the kernel's fault when nothing matched."""
    errors = [str(e) for e in plan.get("errors") or []]
    if not plan.get("items"):
        return f"{profile}: the profile matches no thread: " + (
            "; ".join(errors) or "no target selects a thread on this machine")
    why = "; ".join(errors) or "; ".join(
        f"{it.get('comm')} ({it.get('pid')}): {it.get('verdict')}"
        for it in plan.get("items") or [] if it.get("verdict") != "ok") or "see the plan"
    return f"{profile}: the kernel would refuse this plan: {why}"
