"""Shared fixtures for irqresd's integration tests (root, this host).

Only processes these tests spawn get reservations: every profile selects them by pid or by
a comm no other process on the machine has. The daemon runs with its own --run-dir in a
temporary directory, and every spawned process is killed in teardown.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from irqresd_util import (
    Daemon,
    Spawner,
    need_root_and_binary,
    profile_text,
    recount_kernel_dl_bandwidth,
    task_target,
    wait_for_dl_headroom,
)


@pytest.fixture
def spawn():
    need_root_and_binary()
    wait_for_dl_headroom()
    recount_kernel_dl_bandwidth()
    s = Spawner()
    yield s
    s.kill_all()


@pytest.fixture
def daemon(tmp_path):
    """Factory: daemon() gives a new (not yet started) irqresd; all are stopped after."""
    need_root_and_binary()
    made: list[Daemon] = []

    def make() -> Daemon:
        d = Daemon(tmp_path, len(made))
        made.append(d)
        return d

    yield make
    for d in reversed(made):
        d.cleanup()


@pytest.fixture
def profile(tmp_path):
    """Factory: profile(text) writes a profile file and returns its path."""
    n = [0]

    def write(text: str) -> Path:
        n[0] += 1
        p = tmp_path / f"profile{n[0]}.yaml"
        p.write_text(text)
        return p

    return write


@pytest.fixture
def running(spawn, daemon, profile):
    """irqresd holding a 2 ms / 10 ms reservation for one spawned task: (daemon, task)."""
    a = spawn()
    d = daemon().start(profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid))))
    yield d, a
    assert d.stop() == 0
