"""``irqres restore``: every thread back as irqresd found it."""

from __future__ import annotations

import re
from typing import Any

import click

from ..client import Client, DaemonNotRunning, run_irqresd
from ..errors import DaemonError
from .common import cli_errors, echo_json, socket_option

# what `irqresd --restore` says on stderr (daemon/src/main.c, daemon.c)
_NOTHING = re.compile(r": nothing to restore$")
_RESTORED = re.compile(r"\brestored (\d+) threads?$")


def restore_without_daemon() -> dict[str, Any]:
    """Run ``irqresd --restore`` and say what it did, from its own words: how many
    threads it put back (None when it did not say), or that its state file held none."""
    proc = run_irqresd("--restore")
    lines = [ln for ln in proc.stderr.splitlines() + proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0:
        raise DaemonError("irqresd --restore: "
                          + ("; ".join(lines) or f"exit status {proc.returncode}"))
    restored = None
    for ln in lines:
        if _NOTHING.search(ln):
            restored = 0
        m = _RESTORED.search(ln)
        if m:
            restored = int(m.group(1))
    return {"by": "irqresd --restore", "restored": restored, "log": lines}


@click.command("restore")
@socket_option
@click.option("--json", "as_json", is_flag=True, help="Print what was restored as JSON.")
def restore_cmd(socket_: str | None, as_json: bool) -> None:
    """Put every thread irqresd changed back as it was and remove its cpusets.

    A running irqresd does it and stays up with no profile; with none running,
    `irqresd --restore` undoes what an earlier `irqresd --once` (`irqres apply` without
    a daemon) left in its state file. --json prints {"by", "restored", "log"}:
    "restored" is the number of threads put back (null if irqresd did not say).
    """
    result: dict[str, Any]
    with cli_errors():
        try:
            with Client(socket_) as c:
                result = {"by": "irqresd", "restored": c.restore(), "log": []}
        except DaemonNotRunning:
            result = restore_without_daemon()
    if as_json:
        echo_json(result)
        return
    n = result["restored"]
    if result["by"] == "irqresd":
        click.echo(f"irqresd restored {n} thread(s)")
    elif n == 0:
        click.echo("no irqresd running, and its state file lists no thread: nothing to "
                   "restore")
    elif n is None:
        click.echo("no irqresd running: `irqresd --restore` finished:\n"
                   + "\n".join(result["log"]))
    else:
        click.echo(f"no irqresd running: `irqresd --restore` restored {n} thread(s) from "
                   "its state file")
