"""``irqres record``: record the events ``irqres analyze`` needs, host-safely."""

from __future__ import annotations

import contextlib
import os

import click

from ..errors import TraceError
from ..units import format_duration
from .common import POSITIVE_DURATION, cli_errors, warn


@click.command("record", context_settings={"ignore_unknown_options": True,
                                           "allow_interspersed_args": False},
               epilog="Example: irqres record -o trace.dat --duration 10s")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The trace.dat file to write.")
@click.option("--duration", type=POSITIVE_DURATION, default=None,
              help="How long to record (10s, 500ms). With a command: stop it after this "
                   "long.")
@click.option("--buffer-kb", type=click.IntRange(min=1), default=16384, show_default=True,
              help="Ring buffer size per CPU, KiB.")
@click.option("--busy-idle", is_flag=True,
              help="Keep every CPU out of the idle task while recording: a SCHED_IDLE "
                   "spinner (comm irqres-idle) on each, which any other task preempts at "
                   "once. For kernels that leave switches out of idle out of the trace "
                   "(`irqres analyze` warns when activations were lost so).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record_cmd(output, duration, buffer_kb, busy_idle, command):
    """Record sched_switch, sched_waking/wakeup, sched_migrate_task,
    irq_handler_entry/exit and (where the kernel has them) sched_stat_runtime,
    softirq_entry/exit, netif_receive_skb, consume_skb, skb_copy_datagram_iovec,
    sk_data_ready and sock_recv_length into OUTPUT while COMMAND runs (or for
    --duration).

    \b
    irqres record -o trace.dat --duration 10s
    irqres record -o trace.dat -- ping -c 100 -i 0.01 127.0.0.1

    Uses a private tracefs instance and `trace-cmd extract`, so it works where
    `trace-cmd record` does not, and leaves the host's tracing setup as it was.
    Beside OUTPUT it writes OUTPUT.kernel.json: this kernel's deadline period limits,
    HZ and HRTICK_DL, which `irqres analyze` plans with wherever it runs.
    Needs root. Exits with 0 when COMMAND succeeds or --duration ends it (it gets
    SIGTERM, then SIGKILL a second later), 1 when it fails on its own. Everything after
    COMMAND is COMMAND's.
    """
    from ..model.kernel import facts_path, host_facts, save_facts
    from ..trace.record import record
    from ..trace.spinners import idle_spinners

    with cli_errors():
        if not command and duration is None:
            raise click.UsageError("give a command to run (after --) or --duration")
        with idle_spinners() if busy_idle else contextlib.nullcontext():
            res = record(output, command=list(command) or None, duration_ns=duration,
                         buffer_kb=buffer_kb)
        lost = {c: n for c, n in res.overrun.items() if n} | {
            c: n for c, n in res.dropped.items() if n}
        click.echo(f"recorded {res.duration_ns / 1e9:.2f} s into {res.path}")
        # the kernel's limits and budget enforcement, for an analysis on another machine
        side = facts_path(res.path)
        save_facts(side, host_facts(), os.uname().release)
        click.echo(f"this kernel's facts for irqres analyze: {side}")
        if res.stopped:
            click.echo(f"--duration {format_duration(duration)} ended {command[0]} "
                       f"(exit status {res.returncode})")
        if lost:
            warn("the ring buffer lost events on CPU "
                 + ", ".join(f"{c} ({n})" for c, n in sorted(lost.items()))
                 + "; analyze discards what they touch; a larger --buffer-kb helps")
        if res.returncode and not res.stopped:
            raise TraceError(f"the command exited with status {res.returncode} "
                             f"(the trace was written to {res.path})")
