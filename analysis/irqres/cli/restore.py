"""``irqres restore``: every thread back as irqresd found it."""

from __future__ import annotations

import re
from typing import Any

import click

from ..client import Client, DaemonNotRunning, run_irqresd
from ..errors import DaemonError
from .common import cli_errors, echo_json, not_named_daemon, socket_option, where

# what `irqresd --restore` says on stderr (daemon/src/main.c, daemon.c)
_NOTHING = re.compile(r": nothing to restore$")
_RESTORED = re.compile(r"\brestored (\d+) threads?$")


def restore_without_daemon(run_dir: str) -> dict[str, Any]:
    """Run ``irqresd --restore --run-dir RUN_DIR`` and say what it did, from its own
    words: how many threads it put back (None when it did not say), or that its state
    file held none."""
    proc = run_irqresd("--restore", "--run-dir", run_dir)
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
    return {"by": "irqresd --restore", "restored": restored, "log": lines,
            "run_dir": run_dir}


@click.command("restore", epilog="Example: irqres restore --run-dir /run/irqres")
@socket_option
@click.option("--json", "as_json", is_flag=True, help="Print what was restored as JSON.")
def restore_cmd(as_json: bool) -> None:
    """Put every thread irqresd changed back as it was and remove its cpusets.

    A running irqresd does it and stays up with no profile; with none running,
    `irqresd --restore` undoes what an earlier `irqresd --once` (`irqres apply` without
    a daemon) left in its state file RUN_DIR/state. A socket named with --socket or
    $IRQRES_SOCKET is that daemon or an error (name --run-dir too to restore from its
    state file). --json prints {"by", "restored", "log"} and "socket" or "run_dir":
    "restored" is the number of threads put back (null if irqresd did not say).
    """
    result: dict[str, Any]
    ep = where()
    with cli_errors():
        try:
            with Client(ep.socket) as c:
                result = {"by": "irqresd", "restored": c.restore(), "log": [],
                          "socket": ep.socket}
        except DaemonNotRunning as exc:
            not_named_daemon(ep, exc)
            result = restore_without_daemon(ep.run_dir)
    if as_json:
        echo_json(result)
        return
    n = result["restored"]
    none = f"no irqresd answers on {ep.socket}"
    if result["by"] == "irqresd":
        click.echo(f"irqresd ({ep.socket}) restored {n} thread(s)")
    elif n == 0:
        click.echo(f"{none}, and its state file {ep.state_file} lists no thread: nothing "
                   "to restore")
    elif n is None:
        click.echo(f"{none}: `irqresd --restore` finished (run directory {ep.run_dir}):\n"
                   + "\n".join(result["log"]))
    else:
        click.echo(f"{none}: `irqresd --restore` restored {n} thread(s) from its state "
                   f"file {ep.state_file}")
