"""``irqres stats``: per-thread counters of what irqresd holds, as a table, JSON,
OpenMetrics text, or a file for node_exporter's textfile collector."""

from __future__ import annotations

import logging

import click

from .. import metrics, served_time
from ..client import Client
from ..errors import DaemonError
from ..tables import RESERVATION_COLUMNS, ns_cell, reservation_cells
from .common import cli_errors, echo_json, json_option, socket_option, table, where

logger = logging.getLogger(__name__)


def format_stats(reply: dict) -> str:
    """The ``irqres stats`` tables: one row per thread under irqresd, then the
    device-thread time per served process when a target has serves:."""
    text = _format_threads(reply)
    acc = served_time.parse(reply)
    if not acc.wanted:
        return text
    if not acc.enabled:
        return f"{text}\n\naccounting off: {acc.error}"
    lost = (f" ({acc.lost_events} trace events lost, {acc.dropped_activations} activations "
            f"not charged)" if acc.lost_events or acc.dropped_activations else "")
    rows = served_time.text_rows(acc)
    return (f"{text}\n\ndevice-thread time per served process, since the profile came in "
            f"force{lost}:\n"
            + (table(["TARGET", "PID", "COMM", "TIME", "ACTIVATIONS", "WAKEUPS", "PACKETS"],
                    rows)
               if rows else "nothing accounted yet"))


def _format_threads(reply: dict) -> str:
    threads = reply.get("threads") or []
    if not threads:
        return "no threads under irqresd"
    rows = [[th.get("pid"), th.get("comm"), th.get("target"),
             ",".join(str(i) for i in th.get("irqs") or []) or "-", th.get("irq_count"),
             th.get("policy"), *reservation_cells(th), ns_cell(th.get("cpu_time_ns")),
             ns_cell(th.get("wait_time_ns")), th.get("timeslices"), th.get("voluntary_switches"),
             th.get("involuntary_switches")] for th in threads]
    return table(["PID", "COMM", "TARGET", "IRQS", "IRQ COUNT", "POLICY", *RESERVATION_COLUMNS,
                  "CPU TIME", "WAIT TIME", "SLICES", "VOL SW", "INVOL SW"], rows)


@click.command("stats", epilog="Example: irqres stats --openmetrics")
@socket_option
@json_option
@click.option("--openmetrics", is_flag=True,
              help="Print OpenMetrics text (Q/D/T, runtime used, wait, context switches, "
                   "throttle events, interrupts, NIC drops per thread; device-thread time "
                   "per served process).")
@click.option("--textfile", metavar="DIR", type=click.Path(file_okay=False),
              help="Write DIR/irqres.prom for node_exporter's textfile collector "
                   "(atomically; irqres_up 0 when irqresd does not answer).")
def stats_cmd(as_json: bool, openmetrics: bool,
              textfile: str | None) -> None:
    """Per thread under irqresd: interrupts, CPU and wait time, context switches; per
    process a target with serves: serves, the device-thread time spent on its behalf.

    \b
    That time is live: irqresd follows the target's threads in its own tracefs
    instance and splits each activation's execution time evenly among the processes it
    woke, the remainder to the lowest pid; activations that woke nobody are "(none)".
    The totals count from when the profile came in force (docs/process-aware.md).

    \b
    With --openmetrics or --textfile, per thread: the reservation (Q, D, T), runtime
    used, wait time, context switches, throttle events, interrupts; per NIC of an IRQ
    target: rx_dropped and rx_missed_errors. Throttle events are derived: a
    SCHED_DEADLINE thread is switched out involuntarily once each time its budget runs
    out (preemptions count too); one throttling can pay for several periods' budgets
    when the kernel enforces budgets at its tick, so they are not throttled periods.
    \b
    For node_exporter, every 15 s from a systemd timer or cron:
      irqres stats --textfile /var/lib/prometheus/node-exporter
    """
    if as_json and openmetrics:
        raise click.UsageError("--json and --openmetrics exclude each other")
    if not (openmetrics or textfile):
        with cli_errors(), Client(where().socket) as c:
            reply = c.stats()
        if as_json:
            echo_json(reply)
        else:
            click.echo(format_stats(reply))
        return
    with cli_errors():
        try:
            with Client(where().socket) as c:
                status = c.status()
                reply = c.stats()
        except DaemonError:
            _emit([metrics.up(False)], openmetrics, textfile)   # say so there too
            raise
        _emit(metrics.families(metrics.snapshot(status, reply)), openmetrics, textfile)
        if as_json:
            echo_json(reply)


def _emit(fams: list[metrics.Family], openmetrics: bool, textfile: str | None) -> None:
    if textfile:
        path = metrics.write_textfile(textfile, metrics.render(fams, openmetrics=False))
        logger.info("wrote %s", path)
    if openmetrics:
        click.echo(metrics.render(fams), nl=False)
