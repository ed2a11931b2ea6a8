"""``irqres status``: what irqresd holds, read over its socket (or, without a daemon,
what its state file records)."""

from __future__ import annotations

import click

from ..client import Client, DaemonNotRunning, irqresd_json
from ..tables import RESERVATION_COLUMNS, reservation_cells
from ..units import format_duration
from .common import cli_errors, echo_json, json_option, socket_option, table


def policy_text(policy: object, priority: object = None) -> str:
    if policy in ("fifo", "rr") and priority is not None:
        return f"{policy}:{priority}"
    return str(policy)


def format_status(reply: dict) -> str:
    lines = [f"irqresd pid {reply.get('pid')}, profile {reply.get('profile') or '(none)'}, "
             f"admission control {reply.get('admission_control', '?')}"]
    if "configured_profile" in reply:  # what systemctl reload / SIGHUP re-reads
        conf = reply["configured_profile"]
        lines[0] += (f"; reload re-reads {conf}" if conf
                     else "; no profile of its own (reload re-reads nothing)")
    if reply.get("enforcement"):
        lines.append(enforcement_text(reply["enforcement"]))
    targets = reply.get("targets") or []
    if not targets:
        lines.append("no targets")
        return "\n".join(lines)
    rows = []
    for t in targets:
        threads = t.get("threads") or []
        rows.append([t.get("name"), t.get("kind"), t.get("mode"), *reservation_cells(t),
                     len(threads), "", ""])
        for th in threads:
            rows.append([f"  {th.get('comm')}", f"pid {th.get('pid')}", f"cpu {th.get('cpus')}",
                         *reservation_cells(th), th.get("policy"),
                         policy_text(th.get("orig_policy"), th.get("orig_priority")),
                         th.get("cpuset") or "-"])
    lines.append(table(["TARGET", "KIND", "MODE", *RESERVATION_COLUMNS, "THREADS", "WAS",
                        "CPUSET"], rows))
    # threads changed behind irqresd's back that it left so (drift: report, or a refusal)
    lines += [f"drift: {th.get('comm')} (pid {th.get('pid')}), target {t.get('name')}: "
              f"{th['drift']}" for t in targets for th in t.get("threads") or []
              if th.get("drift")]
    lines += [waiting_text(t, th) for t in targets for th in t.get("waiting") or []]
    return "\n".join(lines)


def enforcement_text(e: dict) -> str:
    """How the kernel enforces budgets now (docs/protocol.md, ENFORCEMENT_NOW)."""
    overrun = e.get("overrun_max_ns")
    hz = f" at HZ={e['hz']}" if e.get("hz") and e.get("mode") == "tick" else ""
    on = e.get("hrtick_dl")
    hrtick = "unknown" if on is None else "on" if on else "off"
    text = (f"budget enforcement: {e.get('mode')}{hz}, overrun up to "
            f"{format_duration(int(overrun)) if overrun else 'unknown'} per period; "
            f"HRTICK_DL {hrtick}")
    if e.get("held"):
        text += " (switched on by irqresd, given back on stop)"
    elif e.get("requested"):
        text += " (the profile asks for hrtick)"
    return text


def waiting_text(target: dict, th: dict) -> str:
    """A thread irqresd moved into its partition and waits to reserve (docs/protocol.md,
    WAITING)."""
    return (f"waiting: {th.get('comm')} (pid {th.get('pid')}), target {target.get('name')}: "
            f"in {th.get('cpuset')} for {format_duration(int(th.get('waiting_ns') or 0))}, "
            f"not reserved yet: {th.get('reason')}")


def format_state(reply: dict) -> str:
    """What the state file records, when no irqresd answers (``irqresd --status``)."""
    if not reply.get("exists"):
        return (f"no irqresd running, and no state file {reply.get('state_file')}: irqres "
                "holds no reservation here")
    threads = reply.get("threads") or []
    lines = [f"no irqresd running; state file {reply.get('state_file')} (left by "
             f"irqresd --once; undo with irqres restore): {len(threads)} thread(s), "
             f"admission control {reply.get('admission_control')}"]
    if threads:
        lines.append(table(["THREAD", "PID", "CPU", *RESERVATION_COLUMNS, "POLICY", "WAS",
                            "PARTITION"], [
            [th.get("comm"), th.get("pid"), th.get("cpus"),
             *(reservation_cells(th) if th.get("policy") == "deadline" else ["-"] * 3),
             th.get("policy") if th.get("alive") else "gone",
             policy_text(th.get("orig_policy"), th.get("orig_priority")),
             th.get("partition") or "-"] for th in threads]))
    # IRQ threads whose CPUs a partition change of irqres's took: given back on restore
    lines += [f"CPU affinity to give back: {o.get('comm')} (pid {o.get('pid')}): "
              f"{o.get('cpus')}" for o in reply.get("owed") or []]
    feature = reply.get("sched_feature")
    if feature:  # switched by irqresd (enforcement: hrtick), given back on restore
        lines.append(f"sched feature to give back: {feature.get('name')} "
                     f"{'on' if feature.get('was') else 'off'}")
    return "\n".join(lines)


@click.command("status")
@socket_option
@json_option
def status_cmd(socket_: str | None, as_json: bool) -> None:
    """Show the profile and reservations irqresd holds, thread by thread.

    With no irqresd running, show what its state file records: the reservations an
    `irqres apply` without a daemon (`irqresd --once`) left in place.
    """
    with cli_errors():
        try:
            with Client(socket_) as c:
                reply = c.status()
        except DaemonNotRunning:
            reply = _state_without_daemon()
            if as_json:
                echo_json({"daemon": False, **reply})
            else:
                click.echo(format_state(reply))
            return
    if as_json:
        echo_json(reply)
    else:
        click.echo(format_status(reply))


def _state_without_daemon() -> dict:
    return irqresd_json("--status", "--json", ok_codes=(0,))
