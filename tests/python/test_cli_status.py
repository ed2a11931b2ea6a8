"""irqres status / stats against a fake daemon."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes import fake_daemon, make_waiting
from irqres.cli import main
from irqres.plan import ITEM_COLUMNS
from irqres.tables import RESERVATION_COLUMNS


@pytest.fixture
def fake(tmp_path, monkeypatch):
    gen = fake_daemon(tmp_path, monkeypatch, profile="/etc/irqres/profile.yaml")
    d = next(gen)
    d.stats_threads = [{"pid": 105, "comm": "irq/11-eth0", "target": "nic", "irqs": [11],
                        "irq_count": 12345, "policy": "deadline", "runtime_ns": 2_000_000,
                        "period_ns": 10_000_000, "deadline_ns": 10_000_000,
                        "cpu_time_ns": 1_500_000_000, "wait_time_ns": 2_500_000,
                        "timeslices": 99, "voluntary_switches": 80,
                        "involuntary_switches": 19}]
    yield d
    gen.close()


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_status_table(fake):
    r = run("status")
    assert r.exit_code == 0, r.output
    assert "profile /etc/irqres/profile.yaml" in r.output
    assert "nic" in r.output and "fifo:50" in r.output
    assert "irq/11-eth0" in r.output and "pid 105" in r.output
    assert_reservation_columns(r.output, "2ms 10ms 10ms")


def assert_reservation_columns(output: str, cells: str) -> None:
    """The reservation in the plan report's columns and order (RUNTIME DEADLINE PERIOD),
    under their headers."""
    lines = output.splitlines()
    (i, header), = [(i, ln) for i, ln in enumerate(lines) if "RUNTIME" in ln]
    cols = [header.index(c) for c in RESERVATION_COLUMNS]
    assert cols == sorted(cols)
    assert [h for h in ITEM_COLUMNS if h in RESERVATION_COLUMNS] == list(RESERVATION_COLUMNS)
    row = lines[i + 1]
    assert " ".join(row[c:].split()[0] for c in cols) == cells, (header, row)


def test_status_says_which_threads_wait(fake):
    """A thread moved into its partition and not reserved yet is named, with where it
    waits, for how long and why, in the text and in --json."""
    fake.targets[0]["waiting"] = [make_waiting(waiting_ns=2_500_000_000)]
    r = run("status")
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.startswith("waiting:"))
    assert "irq/12-eth1 (pid 106), target nic" in line, line
    assert "in /sys/fs/cgroup/irqres.cpu1 for 2.5s" in line, line
    assert "until the thread has run in its cpuset partition once" in line, line
    r = run("status", "--json")
    assert json.loads(r.output)["targets"][0]["waiting"][0]["pid"] == 106
    fake.targets[0]["waiting"] = []
    assert "waiting:" not in run("status").output


def test_reservation_columns_in_the_plans_order(fake):
    """runtime, deadline, period: a deadline shorter than the period shows in the middle."""
    for t in fake.targets:
        t["deadline_ns"] = 5_000_000
        for th in t["threads"]:
            th["deadline_ns"] = 5_000_000
    fake.stats_threads[0]["deadline_ns"] = 5_000_000
    assert_reservation_columns(run("status").output, "2ms 5ms 10ms")
    assert_reservation_columns(run("stats").output, "2ms 5ms 10ms")


def test_status_json_and_socket_option(fake, monkeypatch):
    monkeypatch.delenv("IRQRES_SOCKET")
    r = run("status", "--json", "--socket", fake.path)
    assert r.exit_code == 0
    assert json.loads(r.output)["targets"][0]["threads"][0]["pid"] == 105


def test_stats(fake):
    r = run("stats")
    assert r.exit_code == 0
    assert "12345" in r.output and "1.5s" in r.output and "2.5ms" in r.output
    r = run("stats", "--json")
    assert json.loads(r.output)["threads"][0]["voluntary_switches"] == 80


def test_not_running(tmp_path, monkeypatch):
    monkeypatch.setenv("IRQRES_SOCKET", str(tmp_path / "none.sock"))
    r = run("stats")
    assert r.exit_code == 1 and "irqresd is not running" in r.output
    # status reads the state file through irqresd --status instead (tests/integration)
    monkeypatch.delenv("IRQRES_SOCKET")
    monkeypatch.setenv("IRQRES_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("IRQRESD", str(tmp_path / "no-irqresd"))
    r = run("status")
    assert r.exit_code == 1 and "no-irqresd: not an executable file" in r.output


def test_daemon_refuses(fake):
    fake.override["stats"] = {"ok": False, "error": "stats: /proc/105/schedstat: gone"}
    r = run("stats")
    assert r.exit_code == 1 and "/proc/105/schedstat: gone" in r.output
