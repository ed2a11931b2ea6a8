"""``irqres record``: record the events ``irqres analyze`` needs, host-safely."""

from __future__ import annotations

import click

from ..errors import TraceError, UnitError
from ..units import parse_duration
from .status import cli_errors


def _seconds_or_duration(value: str) -> int:
    text = value.strip()
    try:
        float(text)
    except ValueError:
        return parse_duration(text, what="--duration")
    return parse_duration(text + "s", what="--duration")


@click.command("record", context_settings={"ignore_unknown_options": True})
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The trace.dat file to write.")
@click.option("--duration", default=None, metavar="DURATION",
              help="How long to record (10, 10s, 500ms; a bare number is seconds). With a "
                   "command: stop it after this long.")
@click.option("--buffer-kb", type=click.IntRange(min=1), default=16384, show_default=True,
              help="Ring buffer size per CPU, KiB.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record_cmd(output, duration, buffer_kb, command):
    """Record sched_switch, sched_waking/wakeup, sched_migrate_task and
    irq_handler_entry/exit into OUTPUT while COMMAND runs (or for --duration).

    \b
    irqres record -o trace.dat --duration 10s
    irqres record -o trace.dat -- ping -c 100 -i 0.01 127.0.0.1

    Uses a private tracefs instance and `trace-cmd extract`, so it works where
    `trace-cmd record` does not, and leaves the host's tracing setup as it was.
    Needs root.
    """
    from ..trace.record import record

    with cli_errors():
        try:
            dur = None if duration is None else _seconds_or_duration(duration)
        except UnitError as exc:
            raise click.BadParameter(str(exc), param_hint="--duration") from exc
        if dur is not None and dur <= 0:
            raise click.BadParameter("must be longer than 0", param_hint="--duration")
        if not command and dur is None:
            raise click.UsageError("give a command to run (after --) or --duration")
        res = record(output, command=list(command) or None, duration_ns=dur,
                     buffer_kb=buffer_kb)
        lost = {c: n for c, n in res.overrun.items() if n} | {
            c: n for c, n in res.dropped.items() if n}
        click.echo(f"recorded {res.duration_ns / 1e9:.2f} s into {res.path}")
        if lost:
            click.echo("warning: the ring buffer lost events on CPU "
                       + ", ".join(f"{c} ({n})" for c, n in sorted(lost.items()))
                       + "; analyze discards what they touch; a larger --buffer-kb helps",
                       err=True)
        if res.returncode:
            raise TraceError(f"the command exited with status {res.returncode} "
                             f"(the trace was written to {res.path})")
