"""``irqres verify``: does the running system hold the profile? (like tuned-adm verify)"""

from __future__ import annotations

import os

import click

from ..client import Client, DaemonNotRunning, irqresd_json
from ..errors import DaemonError
from .common import Command, cli_errors, echo_json, not_named_daemon, socket_option, where
from .status import tasks_text


def format_verify(reply: dict) -> str:
    diffs = reply.get("differences") or []
    served = [f"  target '{s.get('target')}' serves: "
              f"{tasks_text(s['threads']) if s.get('threads') else 'nobody now'}"
              for s in reply.get("serves") or []]
    if not diffs:
        n = reply.get("checked", 0)
        own = reply.get("by_set_budget") or 0   # threads a set-budget pid:N re-budgeted
        return "\n".join([f"Verified {reply.get('profile')}: {n} thread{'' if n == 1 else 's'}"
                          " as the profile says" + (f", {own} of them as the last set-budget "
                                                    "says" if own else ""), *served])
    lines = [f"{reply.get('profile')}: {len(diffs)} difference{'' if len(diffs) == 1 else 's'}"
             " between the running system and the profile:"]
    return "\n".join(lines + [f"  {d}" for d in diffs] + served)


def _verify_without_daemon(profile: str) -> dict:
    reply = irqresd_json("--verify", "--json", "-p", profile)
    if "differences" not in reply:
        raise DaemonError(f"irqresd --verify --json -p {profile}: no differences list")
    return reply


@click.command("verify", cls=Command, epilog="Example: irqres verify /etc/irqres/profile.yaml")
@click.argument("profile", required=False,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@socket_option
@click.pass_context
def verify_cmd(ctx: click.Context, profile: str | None, as_json: bool) -> None:
    """Check that the running system holds PROFILE (default: the profile irqresd holds).

    Every thread the profile selects must have its reservation (policy, runtime, deadline,
    period; an adaptive target's runtime within its clamps) and sit in the cpuset
    partition it needs, and every target must select a thread. Exits 0 when all hold,
    1 on any difference (each one printed).
    """
    if profile is not None:
        profile = os.path.abspath(profile)
    ep = where()
    with cli_errors():
        try:
            with Client(ep.socket) as c:
                reply = c.verify(profile)
        except DaemonNotRunning as exc:
            not_named_daemon(ep, exc)
            if profile is None:
                raise DaemonError("no irqresd is running: name the PROFILE to verify "
                                  "(irqres verify PROFILE)") from None
            reply = _verify_without_daemon(profile)
    if as_json:
        echo_json({k: v for k, v in reply.items() if k != "ok"})
    else:
        click.echo(format_verify(reply))
    if reply.get("differences"):
        ctx.exit(1)
