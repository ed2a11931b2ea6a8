"""irqresd keeps -p as an absolute path: status, the plan and a reload do not depend on
the directory it was started in."""

from __future__ import annotations

from pathlib import Path

import pytest
from irqresd_util import profile_text, run_irqresd, sched_getattr, task_target

pytestmark = pytest.mark.root

MS = 1_000_000


def test_a_relative_profile_path_is_kept_absolute(spawn, daemon, profile, tmp_path,
                                                  monkeypatch):
    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    monkeypatch.chdir(tmp_path)
    r = run_irqresd("--dry-run", "-p", f"./{p.name}")
    assert r.stdout.startswith(f"Plan for {p}: "), r.stdout
    d = daemon().start(Path(p.name))
    st = d.request("status")
    assert (st["profile"], st["configured_profile"]) == (str(p), str(p))
    assert sched_getattr(a.pid).runtime_ns == 2 * MS
    # a reload re-reads the same file, wherever the caller is
    p.write_text(profile_text(task_target("a", "3ms", "10ms", pid=a.pid)))
    monkeypatch.chdir("/")
    assert d.request("reload")["ok"]
    assert sched_getattr(a.pid).runtime_ns == 3 * MS
    assert d.stop() == 0
