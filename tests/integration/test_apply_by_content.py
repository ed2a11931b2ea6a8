"""Apply by content: `irqres apply` sends the profile's text, so irqresd never opens the
user's path. Here irqresd runs with a private, empty /tmp-like directory over the one that
holds the profile (what the unit's PrivateTmp=/ProtectHome= do to /tmp and ~), and the
apply still works."""

from __future__ import annotations

import os
import shutil

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqresd_util import SCHED_DEADLINE, SCHED_OTHER, profile_text, sched_getattr, task_target

pytestmark = pytest.mark.root

MS = 1_000_000


def test_apply_a_profile_the_daemon_cannot_see(spawn, daemon, tmp_path):
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is missing")
    a = spawn()
    user = tmp_path / "home"
    user.mkdir()
    prof = user / "x.yaml"
    prof.write_text(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    hide = ("unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            f'mount -t tmpfs tmpfs "{user}" && exec "$@"', "sh")
    d = daemon().start(None, wrap=hide)
    env = {"IRQRES_SOCKET": str(d.sock)}
    r = CliRunner().invoke(main, ["apply", str(prof)], env=env, catch_exceptions=False)
    assert r.exit_code == 0, r.output + d.log_text()
    assert f"applied {prof} through irqresd" in r.output
    s = sched_getattr(a.pid)
    assert (s.policy, s.runtime_ns, s.period_ns) == (SCHED_DEADLINE, 2 * MS, 10 * MS)
    assert d.request("status")["profile"] == str(prof)
    # the daemon indeed cannot see the file (its mount namespace hides the directory)
    assert prof.exists() and not os.path.exists(f"/proc/{d.proc.pid}/root{prof}")
    assert d.stop() == 0
    assert sched_getattr(a.pid).policy == SCHED_OTHER
