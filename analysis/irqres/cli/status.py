"""``irqres status``: what irqresd holds, read over its socket (or, without a daemon,
what its state file records)."""

from __future__ import annotations

import click

from ..client import Client, DaemonNotRunning, irqresd_json
from ..tables import RESERVATION_COLUMNS, reservation_cells
from ..units import format_duration
from .common import (
    cli_errors,
    echo_json,
    json_option,
    not_named_daemon,
    socket_option,
    table,
    where,
)


def policy_text(policy: object, priority: object = None) -> str:
    if policy in ("fifo", "rr") and priority is not None:
        return f"{policy}:{priority}"
    return str(policy)


def format_status(reply: dict) -> str:
    on = f" on {reply['socket']}" if reply.get("socket") else ""
    lines = [f"irqresd pid {reply.get('pid')}{on}, profile {reply.get('profile') or '(none)'}, "
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
        rows.append(_target_row(t, len(threads)))
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
    for t in targets:
        lines += serves_text(t)
    return "\n".join(lines)


def _target_row(t: dict, n_threads: int) -> list:
    if t.get("coupling") is not None:       # reserves nothing: no Q, D, T
        return [t.get("name"), t.get("kind"), "coupled", *(["-"] * len(RESERVATION_COLUMNS)),
                n_threads, "", ""]
    return [t.get("name"), t.get("kind"), t.get("mode"), *reservation_cells(t), n_threads,
            "", ""]


def tasks_text(tasks: list[dict]) -> str:
    """SERVED objects (docs/json.md) as 'comm (pid N) fifo:20, ...'."""
    return ", ".join(f"{s.get('comm')} (pid {s.get('pid')}) "
                     f"{policy_text(s.get('policy'), s.get('priority'))}" for s in tasks)


def serves_text(t: dict) -> list[str]:
    """Whom a target's threads serve and, for a coupled target, the priority they follow
    (docs/process-aware.md)."""
    if t.get("serves") is None:
        return []
    served = t["serves"]
    lines = [f"serves: target {t.get('name')}: {tasks_text(served) if served else 'nobody now'}"]
    coupling = t.get("coupling")
    if coupling is not None:
        prio = coupling.get("priority")
        rule = (f"SCHED_FIFO {prio}, the highest priority it serves" if prio is not None
                else "its threads have their own scheduling (it serves nobody)")
        threads = coupling.get("threads") or []
        lines.append(f"coupled: target {t.get('name')}: {rule}"
                     + (f"; {tasks_text(threads)}" if threads else "; no thread yet"))
    return lines


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
    who = (f"no irqresd answers on {reply['socket']}" if reply.get("socket")
           else "no irqresd running")
    if not reply.get("exists"):
        return (f"{who}, and no state file {reply.get('state_file')}: irqres holds no "
                "reservation there")
    threads = reply.get("threads") or []
    lines = [f"{who}; state file {reply.get('state_file')} (left by irqresd --once, or "
             "by an irqresd that ended without restoring; undo with irqres restore): "
             f"{len(threads)} thread(s), "
             f"admission control {reply.get('admission_control')}"]
    if threads:
        lines.append(table(["THREAD", "PID", "CPU", *RESERVATION_COLUMNS, "POLICY", "WAS",
                            "CPUSET"], [
            [th.get("comm"), th.get("pid"), th.get("cpus"),
             *(reservation_cells(th) if th.get("policy") == "deadline" else ["-"] * 3),
             th.get("policy") if th.get("alive") else "gone",
             policy_text(th.get("orig_policy"), th.get("orig_priority")),
             th.get("cpuset") or "-"] for th in threads]))
    # IRQ threads whose CPUs a partition change of irqres's took: given back on restore
    lines += [f"CPU affinity to give back: {o.get('comm')} (pid {o.get('pid')}): "
              f"{o.get('cpus')}" for o in reply.get("owed") or []]
    feature = reply.get("sched_feature")
    if feature:  # switched by irqresd (enforcement: hrtick), given back on restore
        lines.append(f"sched feature to give back: {feature.get('name')} "
                     f"{'on' if feature.get('was') else 'off'}")
    # interfaces switched to threaded NAPI (threaded_napi: true), given back on restore
    lines += [f"threaded NAPI to give back: {n.get('interface')} threaded {n.get('was')}"
              for n in reply.get("napi_threaded") or []]
    return "\n".join(lines)


@click.command("status", epilog="Example: irqres status --run-dir /run/irqres --json")
@socket_option
@json_option
def status_cmd(as_json: bool) -> None:
    """Show the profile and reservations irqresd holds, thread by thread.

    With no irqresd answering, show what its state file (RUN_DIR/state) records: the
    reservations an `irqres apply` without a daemon (`irqresd --once`) left in place, or
    those of an irqresd that was killed. When the socket was named (--socket,
    $IRQRES_SOCKET) that daemon not answering is an error (exit 1), after the state
    file of its run directory.
    """
    ep = where()
    with cli_errors():
        try:
            with Client(ep.socket) as c:
                reply = {**c.status(), "socket": ep.socket}
        except DaemonNotRunning as exc:
            reply = {"daemon": False, **_state_without_daemon(ep.run_dir), **ep.as_json()}
            if as_json:
                echo_json(reply)
            else:
                click.echo(format_state(reply))
            not_named_daemon(ep, exc, f"shown instead: the state file of its directory, "
                                      f"{ep.state_file}")
            return
    if as_json:
        echo_json(reply)
    else:
        click.echo(format_status(reply))


def _state_without_daemon(run_dir: str) -> dict:
    return irqresd_json("--status", "--json", "--run-dir", run_dir, ok_codes=(0,))
