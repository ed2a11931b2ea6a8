"""``irqres apply`` and ``irqres set-budget``.

apply asks a running irqresd for the plan and then applies it over the socket. With no
daemon running it runs ``irqresd --dry-run --json`` for the plan and ``irqresd --once``
to apply it, which leaves the reservations in place until ``irqres restore``.
"""

from __future__ import annotations

import json
import os

import click

from ..client import Client, DaemonNotRunning, run_irqresd
from ..errors import DaemonError
from .params import POSITIVE_DURATION, Command
from .status import cli_errors, dur, echo_json, policy_text, socket_option, table


def format_plan(plan: dict) -> str:
    """The plan as a table of threads, the bandwidth per root domain, warnings, errors."""
    out = []
    items = plan.get("items") or []
    if items:
        rows = []
        for it in items:
            q_t_d = "/".join(dur(it.get(k)) for k in ("runtime_ns", "period_ns", "deadline_ns"))
            rows.append([it.get("target"), f"{it.get('comm')} ({it.get('pid')})",
                         it.get("cpus"),
                         f"{policy_text(it.get('old_policy'), it.get('old_priority'))} -> "
                         f"{it.get('new_policy')}", q_t_d,
                         (it.get("cpuset") or "new") if it.get("needs_partition") else "no",
                         it.get("buffer_check"), it.get("verdict")])
        out.append(table(["target", "thread", "cpu", "policy", "Q/T/D", "partition",
                          "buffering", "verdict"], rows))
    else:
        out.append("no threads matched")
    domains = plan.get("domains") or []
    if domains:
        out.append("")
        out.append(table(["root domain", "capacity", "existing", "new", "total", ""], [
            [d.get("cpus"), f"{d.get('capacity', 0):.3f}", f"{d.get('existing_bw', 0):.3f}",
             f"{d.get('new_bw', 0):.3f}",
             f"{d.get('existing_bw', 0) + d.get('new_bw', 0):.3f}",
             "ok" if d.get("ok") else "OVER CAPACITY"] for d in domains]))
    for w in plan.get("warnings") or []:
        out.append(f"warning: {w}")
    for e in plan.get("errors") or []:
        out.append(f"error: {e}")
    out.append("plan: " + ("feasible" if plan.get("feasible") else "REFUSED"))
    return "\n".join(out)


def _refused(profile: str, plan: dict) -> click.ClickException:
    why = "; ".join(plan.get("errors") or []) or "; ".join(
        f"{it.get('comm')} ({it.get('pid')}): {it.get('verdict')}"
        for it in plan.get("items") or [] if it.get("verdict") != "ok") or "see the plan"
    return click.ClickException(f"{profile}: the kernel would refuse this plan: {why}")


def _plan_without_daemon(profile: str) -> dict:
    proc = run_irqresd("--dry-run", "--json", "-p", profile)
    if proc.returncode not in (0, 1):
        msg = proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}"
        raise DaemonError(f"irqresd --dry-run: {msg}")
    try:
        reply = json.loads(proc.stdout)
    except ValueError as exc:
        raise DaemonError(f"irqresd --dry-run --json -p {profile}: output is not JSON: "
                          f"{proc.stdout[:200]!r}") from exc
    plan = reply.get("plan", reply) if isinstance(reply, dict) else None
    if not isinstance(plan, dict) or "feasible" not in plan:
        raise DaemonError(f"irqresd --dry-run --json -p {profile}: output has no plan")
    return plan


@click.command("apply")
@click.argument("profile", type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("-n", "--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@socket_option
def apply_cmd(profile: str, dry_run: bool, as_json: bool, socket_: str | None) -> None:
    """Validate PROFILE, show what it does to each thread, and apply it.

    With irqresd running, the plan and the change go over its socket and the daemon keeps
    the reservations (and the profile's hotplug rules). With no daemon, `irqresd --once`
    applies the profile and exits; `irqres restore` (or `irqresd --restore`) undoes it.
    """
    profile = os.path.abspath(profile)
    with cli_errors():
        try:
            with Client(socket_) as c:
                plan = c.plan(profile)
                show(plan, as_json)
                if not plan.get("feasible"):
                    raise _refused(profile, plan)
                if dry_run:
                    return
                applied = c.apply(profile)
            n = len(applied.get("items") or [])
            click.echo(f"applied {profile} through irqresd: {n} thread(s) reserved", err=as_json)
            return
        except DaemonNotRunning:
            pass
        plan = _plan_without_daemon(profile)
        show(plan, as_json)
        if not plan.get("feasible"):
            raise _refused(profile, plan)
        if dry_run:
            return
        proc = run_irqresd("--once", "-p", profile)
        if proc.returncode != 0:
            msg = proc.stderr.strip() or f"exit status {proc.returncode}"
            raise DaemonError(f"irqresd --once -p {profile}: {msg}")
        click.echo(f"no irqresd running: applied {profile} once with `irqresd --once`; the "
                   "reservations stay until `irqres restore` (or `irqresd --restore`)",
                   err=as_json)


def show(plan: dict, as_json: bool) -> None:
    if as_json:
        echo_json(plan)
    else:
        click.echo(format_plan(plan))


@click.command("set-budget", cls=Command)
@click.argument("target")
@click.argument("runtime", type=POSITIVE_DURATION)
@click.argument("period", type=POSITIVE_DURATION, required=False)
@socket_option
@click.option("--json", "as_json", is_flag=True, help="Print irqresd's reply as JSON.")
def set_budget_cmd(target: str, runtime: int, period: int | None, socket_: str | None,
                   as_json: bool) -> None:
    """Give TARGET (a target name or pid:N) the budget RUNTIME every PERIOD.

    Durations take units: 2ms, 500us. Without PERIOD the period stays. irqresd checks it
    against admission control; it is in force when this command returns.
    """
    if period is not None and runtime > period:
        raise click.BadParameter(f"{dur(runtime)} is longer than PERIOD {dur(period)}: a "
                                 "budget cannot exceed its period", param_hint="'RUNTIME'")
    with cli_errors(), Client(socket_) as c:
        r = c.set_budget(target, runtime, period)
    if as_json:
        echo_json(r)
        return
    pids = ",".join(str(p) for p in r.get("pids") or []) or "none"
    click.echo(f"{r.get('target', target)}: runtime {dur(r.get('runtime_ns'))} period "
               f"{dur(r.get('period_ns'))} deadline {dur(r.get('deadline_ns'))} (pids {pids})")
