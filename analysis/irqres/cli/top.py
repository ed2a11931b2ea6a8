"""``irqres top``: a live per-thread view of budget use, for a terminal (over ssh too)."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import sys
import termios
import time
import tty
from collections.abc import Iterator

import click

from .. import live, metrics
from ..client import Client
from ..errors import DaemonError
from .common import POSITIVE_DURATION, cli_errors, socket_option, where

# plain ANSI/VT100: alternate screen, cursor off/on, home, erase to end of line/screen
ENTER, LEAVE = "\x1b[?1049h\x1b[?25l", "\x1b[?25h\x1b[?1049l"
HOME, EOL, EOS = "\x1b[H", "\x1b[K", "\x1b[J"


class _Quit(Exception):
    """A signal asked to stop."""


@contextlib.contextmanager
def _terminal(fd_in: int, out) -> Iterator[int]:
    """cbreak input (keys without Enter, no echo), the alternate screen, and a pipe that
    SIGWINCH writes to (so a resize wakes the select). Everything is put back on exit,
    whatever ends it."""
    saved = termios.tcgetattr(fd_in)
    r, w = os.pipe()
    os.set_blocking(w, False)
    old_wakeup = signal.set_wakeup_fd(w)
    old_winch = signal.signal(signal.SIGWINCH, lambda *_: None)

    def quit_(*_: object) -> None:
        raise _Quit

    old_term = {s: signal.signal(s, quit_) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        tty.setcbreak(fd_in)
        out.write(ENTER)
        out.flush()
        yield r
    finally:
        out.write(LEAVE)
        out.flush()
        termios.tcsetattr(fd_in, termios.TCSADRAIN, saved)
        signal.set_wakeup_fd(old_wakeup)
        signal.signal(signal.SIGWINCH, old_winch)
        for s, h in old_term.items():
            signal.signal(s, h)
        os.close(r)
        os.close(w)


def _size() -> tuple[int, int]:
    size = shutil.get_terminal_size((100, 30))
    return max(size.columns, 20), max(size.lines, 5)


def _wait(fd_in: int, wake: int, seconds: float) -> str:
    """Wait up to ``seconds`` for a key or a resize: "q" (quit), "resize", "key" or ""."""
    ready, _, _ = select.select([fd_in, wake], [], [], max(seconds, 0))
    if wake in ready:
        os.read(wake, 512)
        return "resize"
    if fd_in in ready:
        keys = os.read(fd_in, 64)
        return "q" if b"q" in keys.lower() or b"\x03" in keys else "key"
    return ""


@click.command("top", epilog="Example: irqres top --interval 500ms")
@socket_option
@click.option("-i", "--interval", type=POSITIVE_DURATION, default="1s", show_default=True,
              help="Time between refreshes.")
@click.option("-n", "--iterations", type=click.IntRange(min=1), default=None,
              help="Stop after this many refreshes [default: until q].")
@click.option("--once", is_flag=True, help="Measure one interval, print one table, exit "
              "(for scripts; same as --iterations 1 without the screen handling).")
def top_cmd(interval: int, iterations: int | None, once: bool) -> None:
    """Per thread under irqresd, refreshed: the budget it used per period against Q,
    %CPU, waiting, interrupts, throttle events and NIC drops per second; per process
    a target with serves: serves, the device-thread time spent on it (total, and %CPU
    over the interval).

    On a terminal it redraws in place with plain ANSI codes (fine over ssh), follows
    resizes (narrow terminals lose the least useful columns first) and quits on q or
    Ctrl-C. Piped, or with --once, it prints plain tables, one per interval.
    Rates are over the last interval, from irqresd's counters (see `irqres stats
    --openmetrics` for how throttle events are derived).
    """
    if once:
        iterations = 1
    screen = sys.stdout.isatty() and sys.stdin.isatty() and not once
    with cli_errors():
        client = Client(where().socket).connect()
        try:
            prev = metrics.collect(client)
            if screen:
                _run_screen(client, prev, interval, iterations)
            else:
                _run_plain(client, prev, interval, iterations)
        finally:
            client.close()


def _run_plain(client: Client, prev: metrics.Snapshot, interval: int,
               iterations: int | None) -> None:
    n = 0
    width = shutil.get_terminal_size((160, 30)).columns if sys.stdout.isatty() else 160
    while iterations is None or n < iterations:
        time.sleep(interval / 1e9)
        cur = metrics.collect(client)
        rs = live.rows(prev, cur)
        if n:
            click.echo("")
        click.echo(f"# {time.strftime('%H:%M:%S')} irqresd pid {cur.daemon_pid}, "
                   f"{len(rs)} thread(s), over {(cur.time_ns - prev.time_ns) / 1e9:.3f} s")
        click.echo("\n".join(live.table(rs, width)) if rs else "no threads under irqresd")
        served = live.served_lines(prev, cur, width)
        if served:
            click.echo("\n" + "\n".join(served))
        prev, n = cur, n + 1


def _run_screen(client: Client, first: metrics.Snapshot, interval: int,
                iterations: int | None) -> None:
    out = sys.stdout
    fd_in = sys.stdin.fileno()
    prev, cur, note, n = None, first, "measuring the first interval...", 0
    gone = ""           # why irqresd does not answer: no table then (it would be stale)
    try:
        with _terminal(fd_in, out) as wake:
            next_at = time.monotonic() + interval / 1e9
            while True:
                width, height = _size()
                lines = (live.gone_frame(gone, width) if gone
                         else live.frame(prev, cur, width, height, interval, note))
                out.write(HOME + "".join(line + EOL + "\r\n" for line in lines[:-1])
                          + lines[-1] + EOL + EOS)
                out.flush()
                if iterations is not None and n >= iterations:
                    return
                ev = _wait(fd_in, wake, next_at - time.monotonic())
                if ev == "q":
                    return
                if ev:                   # a resize or another key: redraw at once
                    continue
                next_at = max(next_at + interval / 1e9, time.monotonic())
                try:
                    new = metrics.collect(client)
                except DaemonError as exc:
                    gone = gone or (f"{time.strftime('%H:%M:%S')}: irqresd does not answer "
                                    f"on {client.path}: {exc}")
                    client.close()
                    continue
                if gone:        # back (perhaps restarted): rates start over
                    prev, cur, note, gone = None, new, "irqresd answers again", ""
                    continue
                prev, cur, note, n = cur, new, "", n + 1
    except (KeyboardInterrupt, _Quit):
        return
