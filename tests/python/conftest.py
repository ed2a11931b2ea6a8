"""Fixtures the Python tests share: fake irqresd daemons (tests/python/fakes.py) started
in the test's directory, with $IRQRES_SOCKET pointing at them, and stopped after it."""

from __future__ import annotations

import pytest
from fakes import LOAD_ADAPTIVE, NIC, STATUS, TASK, FakeDaemon, fake_daemon, make_target


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake irqresd holding one static IRQ target ("nic", irq/11-eth0, pid 105)."""
    yield from fake_daemon(tmp_path, monkeypatch)


@pytest.fixture
def daemon(tmp_path, monkeypatch):
    """A fake irqresd holding one adaptive task target, "load" (pid 777, 2 ms budget): the
    tune loop's (its stats from a fakes.LoadModel the test sets)."""
    d = FakeDaemon(str(tmp_path / "irqresd.sock"),
                   targets=[make_target("load", pid=777, runtime=2_000_000,
                                        adaptive=LOAD_ADAPTIVE, kind="task")],
                   profile=None).start()
    monkeypatch.setenv("IRQRES_SOCKET", d.path)
    yield d
    d.stop()


@pytest.fixture
def stats_daemon(tmp_path, monkeypatch):
    """A fake irqresd with fakes.STATUS's two targets and the stats of their threads."""
    d = FakeDaemon(str(tmp_path / "irqresd.sock"), targets=STATUS["targets"]).start()
    d.stats_threads = [NIC, TASK]
    monkeypatch.setenv("IRQRES_SOCKET", d.path)
    yield d
    d.stop()
