"""``irqres apply`` and ``irqres set-budget``.

apply asks a running irqresd for the plan and then applies it over the socket. With no
daemon running it runs ``irqresd --dry-run --json`` for the plan and ``irqresd --once``
to apply it, which leaves the reservations in place until ``irqres restore``.
"""

from __future__ import annotations

import os

import click

from ..client import Client, DaemonNotRunning, irqresd_failed, irqresd_json, run_irqresd
from ..errors import DaemonError
from ..plan import format_plan, refusal
from .common import (
    POSITIVE_DURATION,
    Command,
    cli_errors,
    complete_targets,
    dur,
    echo_json,
    not_named_daemon,
    socket_option,
    where,
)


def _refused(profile: str, plan: dict) -> click.ClickException:
    return click.ClickException(refusal(profile, plan))


def _plan_without_daemon(profile: str, run_dir: str) -> dict:
    reply = irqresd_json("--dry-run", "--json", "-p", profile, "--run-dir", run_dir)
    plan = reply.get("plan", reply)
    if not isinstance(plan, dict) or "feasible" not in plan:
        raise DaemonError(f"irqresd --dry-run --json -p {profile}: output has no plan")
    return plan


@click.command("apply", epilog="Example: irqres apply /etc/irqres/profile.yaml --dry-run")
@click.argument("profile", type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("-n", "--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@socket_option
def apply_cmd(profile: str, dry_run: bool, as_json: bool) -> None:
    """Validate PROFILE, show what it does to each thread, and apply it.

    With irqresd running, the plan and the change go over its socket and the daemon keeps
    the reservations (and the profile's hotplug rules). With no daemon, `irqresd --once
    --run-dir RUN_DIR` applies the profile and exits; `irqres restore` (or `irqresd
    --restore`) undoes it. A socket named with --socket or $IRQRES_SOCKET is that daemon
    or an error: without a daemon there, apply changes nothing unless --run-dir (or
    $IRQRES_RUN_DIR) names the run directory to use.
    """
    profile = os.path.abspath(profile)
    ep = where()
    with cli_errors():
        try:
            with Client(ep.socket) as c:
                plan = c.plan(profile)
                show(plan, as_json)
                if not plan.get("feasible"):
                    raise _refused(profile, plan)
                if dry_run:
                    return
                applied = c.apply(profile)
            waiting = applied.get("waiting") or []
            n = len(applied.get("items") or []) - len(waiting)
            click.echo(f"applied {profile} through irqresd on {ep.socket}: {n} thread(s) "
                       "reserved", err=as_json)
            for w in waiting:
                click.echo(f"waiting: {w.get('comm')} (pid {w.get('pid')}) is in cpuset "
                           f"partition {w.get('partition')} and is reserved once it has run "
                           "there (its next interrupt); `irqres status` shows it meanwhile",
                           err=as_json)
            return
        except DaemonNotRunning as exc:
            not_named_daemon(ep, exc)
        plan = _plan_without_daemon(profile, ep.run_dir)
        show(plan, as_json)
        if not plan.get("feasible"):
            raise _refused(profile, plan)
        if dry_run:
            return
        proc = run_irqresd("--once", "-p", profile, "--run-dir", ep.run_dir)
        if proc.returncode != 0:
            raise irqresd_failed(f"irqresd --once -p {profile} --run-dir {ep.run_dir}", proc)
        click.echo(f"no irqresd answers on {ep.socket}: applied {profile} once with "
                   f"`irqresd --once --run-dir {ep.run_dir}`; the reservations stay until "
                   "`irqres restore` (or `irqresd --restore`)", err=as_json)


def show(plan: dict, as_json: bool) -> None:
    if as_json:
        echo_json(plan)
    else:
        click.echo(format_plan(plan))


@click.command("set-budget", cls=Command,
               epilog="Example: irqres set-budget nic 3ms 10ms (pid:1234 for one thread)")
@click.argument("target", shell_complete=complete_targets)
@click.argument("runtime", type=POSITIVE_DURATION)
@click.argument("period", type=POSITIVE_DURATION, required=False)
@socket_option
@click.option("--json", "as_json", is_flag=True, help="Print irqresd's reply as JSON.")
def set_budget_cmd(target: str, runtime: int, period: int | None, as_json: bool) -> None:
    """Give TARGET (a target name or pid:N) the budget RUNTIME every PERIOD.

    Durations take units: 2ms, 500us. Without PERIOD the period stays. irqresd checks it
    against admission control; it is in force when this command returns.
    """
    if period is not None and runtime > period:
        raise click.BadParameter(f"{dur(runtime)} is longer than PERIOD {dur(period)}: a "
                                 "budget cannot exceed its period", param_hint="'RUNTIME'")
    with cli_errors(), Client(where().socket) as c:
        r = c.set_budget(target, runtime, period)
    if as_json:
        echo_json(r)
        return
    pids = ",".join(str(p) for p in r.get("pids") or []) or "none"
    click.echo(f"{r.get('target', target)}: runtime {dur(r.get('runtime_ns'))} period "
               f"{dur(r.get('period_ns'))} deadline {dur(r.get('deadline_ns'))} (pids {pids})")
    if r.get("deadline_scaled"):
        click.echo(f"note: the deadline moved with the period from "
                   f"{dur(r.get('old_deadline_ns'))} to {dur(r.get('deadline_ns'))} "
                   "(it keeps its ratio to the period)")
