"""``irqres tune``: the adaptive threshold controller, in the foreground."""

from __future__ import annotations

import signal
import sys

import click

from ..control.loop import Tuner
from .common import POSITIVE_DURATION, cli_errors, dur, socket_option, table, where


@click.command("tune", epilog="Example: irqres tune /etc/irqres/profile.yaml --log tune.csv")
@click.argument("profile", required=False,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("-d", "--duration", type=POSITIVE_DURATION, default=None,
              help="Stop after this long (e.g. 30s); default: run until interrupted.")
@click.option("--log", "log_path", metavar="FILE.csv", type=click.Path(dir_okay=False),
              help="Write every interval: time_ns, target, N_pro, T_pro_ns, N_rmn, "
              "T_thr_ns, Q_sent_ns.")
@socket_option
def tune_cmd(profile: str | None, duration: int | None, log_path: str | None) -> None:
    """Adapt the budget of every `mode: adaptive` target irqresd holds.

    Each target is sampled every `adaptive.sample` interval; its next budget comes from
    the threshold controller (docs/controller.md) and goes to irqresd with set-budget.
    With PROFILE, irqresd is made to hold it first (applied if it does not). On a
    terminal one line per target shows the last interval. irqresd restarts and threads
    that come and go are survived. When it stops (--duration, Ctrl-C, SIGTERM, SIGHUP)
    every budget it changed is put back to the one the target had when tune started
    (the profile's), so no adapted budget outlives it.

    A bad reply from irqresd (not JSON, truncated, an error) is logged and costs one
    interval; 5 in a row end tune with an error. A daemon that is gone or stops
    answering (2 s per request) is reconnected to with backoff until the duration ends
    or tune is stopped. No wait goes past --duration or a signal: tune ends within one
    interval of either, plus at most 1 s per budget put back.
    """
    with cli_errors():
        view = sys.stdout if sys.stdout.isatty() else None
        tuner = Tuner(where().socket, profile, duration, log_path, view)

        def stop(signum: int, frame: object) -> None:
            tuner.stop()                    # the loop ends and puts the budgets back
            # a second Ctrl-C interrupts that too
            signal.signal(signal.SIGINT, signal.default_int_handler)

        old = {sig: signal.signal(sig, stop)
               for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            summary = tuner.run()
        except KeyboardInterrupt:
            raise click.ClickException("interrupted while putting the budgets back: "
                                       "check them with `irqres status`") from None
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
    rows = [[name, dur(v["last_ns"]), dur(v["budget_ns"]) + (" (put back)" if v["restored"]
                                                              else ""), v["sent"]]
            for name, v in summary.items()]
    click.echo(table(["target", "last budget", "budget now", "budgets sent"], rows))
    if tuner.reconnects:
        click.echo(f"reconnected to irqresd {tuner.reconnects} time(s)")
