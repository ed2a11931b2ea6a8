"""irqres top's numbers and layout (irqres.live), and the command piped (plain tables)."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner
from irqres import live
from irqres.cli import main
from irqres.metrics import Snapshot, ThreadSample

S = 1_000_000_000


def sample(**kw) -> ThreadSample:
    base = dict(pid=105, comm="irq/11-eth0", target="nic", kind="irq", policy="deadline",
                cpus="0", runtime_ns=2_000_000, period_ns=10_000_000, deadline_ns=10_000_000,
                cpu_time_ns=0, wait_time_ns=0, voluntary=0, involuntary=0, irq_count=0,
                irqs=(11,), interface="eth0")
    return ThreadSample(**{**base, **kw})


def snap(t_ns: int, *threads: ThreadSample, drops: int = 0) -> Snapshot:
    return Snapshot(t_ns, 4242, "p.yaml", threads,
                    {("nic", "eth0"): {"rx_dropped": drops, "rx_missed_errors": 0}})


def test_rates_over_one_interval():
    a = snap(10 * S, sample(cpu_time_ns=5 * S, involuntary=7, irq_count=100,
                            wait_time_ns=S), drops=4)
    b = snap(12 * S, sample(cpu_time_ns=5 * S + 300_000_000, involuntary=207,
                            irq_count=4100, wait_time_ns=S + 100_000_000), drops=10)
    (r,) = live.rows(a, b)
    # 0.3 s of CPU in 2 s: 15 % of a CPU, 1.5 ms per 10 ms period, 75 % of Q = 2 ms
    assert r.used_per_period_ns == 1_500_000
    assert r.budget_share == pytest.approx(0.75) and r.cpu_share == pytest.approx(0.15)
    assert r.wait_share == pytest.approx(0.05)
    assert r.irq_per_s == pytest.approx(2000) and r.throttled_per_s == pytest.approx(100)
    assert r.drops_per_s == pytest.approx(3)


def test_nothing_is_made_up():
    first = snap(S, sample())
    (r,) = live.rows(None, first)
    assert r.budget_share is None and r.irq_per_s is None
    # the pid now belongs to another thread: its counters went back
    later = snap(2 * S, sample(cpu_time_ns=0, involuntary=0))
    (r,) = live.rows(snap(S, sample(cpu_time_ns=S, involuntary=5)), later)
    assert r.cpu_share is None and r.throttled_per_s is None
    # no reservation in force: no Q, no %Q, no throttling
    other = dataclasses.replace(sample(), policy="fifo")
    (r,) = live.rows(snap(S, other), snap(2 * S, dataclasses.replace(other, cpu_time_ns=S)))
    assert r.cpu_share == pytest.approx(1.0) and r.budget_share is None
    assert r.throttled_per_s is None
    line = live.table([r], 200)[1]
    assert " fifo " in line and "-" in line


@pytest.mark.parametrize("width", [30, 45, 60, 80, 200])
def test_narrow_terminals_lose_the_least_useful_columns(width):
    a = snap(S, sample(), sample(pid=106, comm="irq/12-eth0-TxRx-1"))
    b = snap(2 * S, sample(cpu_time_ns=10**7), sample(pid=106, comm="irq/12-eth0-TxRx-1"))
    lines = live.table(live.rows(a, b), width)
    assert all(len(ln) <= width for ln in lines)
    head = lines[0].split()
    if width >= 60:
        assert {"TARGET", "THREAD", "PID", "%Q"} <= set(head)
    if width == 200:
        assert "WAIT%" in head and "DROP/s" in head
    if width == 60:
        assert "WAIT%" not in head


def test_a_short_terminal_says_how_many_threads_it_hides():
    threads = [sample(pid=200 + i) for i in range(30)]
    lines = live.frame(None, snap(S, *threads), 100, 10, S)
    assert len(lines) == 10 and "more thread(s)" in lines[-1]
    # 10 lines: title, note, header, 6 threads, this one
    assert lines[-1].startswith("... 24 more")


@pytest.mark.usefixtures("stats_daemon")
def test_top_piped_prints_plain_tables():
    r = CliRunner().invoke(main, ["top", "--once", "-i", "50ms"])
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output and r.output.count("TARGET") == 1
    assert "irq/11-eth0" in r.output and "2ms/10ms" in r.output
    r = CliRunner().invoke(main, ["top", "--iterations", "2", "--interval", "50ms"])
    assert r.exit_code == 0 and r.output.count("TARGET") == 2
    r = CliRunner().invoke(main, ["top", "--interval", "5"])
    assert r.exit_code == 2 and "'5' is not a duration" in r.output


def test_top_without_daemon(tmp_path, monkeypatch):
    monkeypatch.setenv("IRQRES_SOCKET", str(tmp_path / "none.sock"))
    r = CliRunner().invoke(main, ["top", "--once"])
    assert r.exit_code == 1 and "irqresd is not running" in r.output


def test_top_on_a_terminal_says_when_irqresd_is_gone(stats_daemon, monkeypatch):
    """The screen drops the table when irqresd stops answering (a stale table would show
    a gone daemon's reservations as current), and says so."""
    import contextlib
    import io
    import sys

    from irqres.cli import top
    from irqres.client import Client
    from irqres.metrics import collect

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    monkeypatch.setattr(sys.stdin, "fileno", lambda: 0, raising=False)
    monkeypatch.setattr(top, "_terminal", lambda fd, o: contextlib.nullcontext(-1))
    monkeypatch.setattr(top, "_size", lambda: (200, 30))
    keys = []

    def wait(fd_in, wake, seconds):
        keys.append(out.getvalue().rsplit(top.HOME, 1)[-1])   # the frame on the screen
        if len(keys) == 2:
            stats_daemon.override.update(status="close", stats="close")
        return "q" if len(keys) == 3 else ""

    monkeypatch.setattr(top, "_wait", wait)
    client = Client(stats_daemon.path).connect()
    top._run_screen(client, collect(client), 10_000_000, None)
    _measured, table, gone = keys
    assert "TARGET" in table and "irq/11-eth0" in table
    assert "irqresd is gone" in gone and "TARGET" not in gone and "irq/11-eth0" not in gone
    assert f"irqresd does not answer on {stats_daemon.path}" in gone
