"""``irqres restore``: every thread back as irqresd found it."""

from __future__ import annotations

import click

from ..client import Client, DaemonNotRunning, run_irqresd
from ..errors import DaemonError
from .status import cli_errors, socket_option


@click.command("restore")
@socket_option
def restore_cmd(socket_: str | None) -> None:
    """Put every thread irqresd changed back as it was and remove its cpusets.

    A running irqresd does it and stays up with no profile; with none running,
    `irqresd --restore` undoes what an earlier `irqresd --once` left in its state file.
    """
    with cli_errors():
        try:
            with Client(socket_) as c:
                n = c.restore()
            click.echo(f"irqresd restored {n} thread(s)")
            return
        except DaemonNotRunning:
            pass
        proc = run_irqresd("--restore")
        if proc.returncode != 0:
            raise DaemonError("irqresd --restore: "
                              + (proc.stderr.strip() or f"exit status {proc.returncode}"))
        click.echo("no irqresd running: restored from its state file with "
                   "`irqresd --restore`" + (f"\n{proc.stdout.strip()}" if proc.stdout.strip()
                                            else ""))
