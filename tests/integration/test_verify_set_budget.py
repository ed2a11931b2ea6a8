"""irqres verify of the profile irqresd holds, after a `set-budget pid:N`: that thread is
checked against the budget set-budget gave it, and the message says so."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqresd_util import SCHED_OTHER, profile_text, sched_getattr, task_target, wait_for

pytestmark = pytest.mark.root

MS = 1_000_000


def test_verify_after_a_pid_set_budget(spawn, daemon, profile):
    if not shutil.which("chrt"):
        pytest.skip("chrt (util-linux) is missing")
    a, b = spawn(), spawn()
    text = "drift: report\n" + profile_text(task_target("a", "2ms", "10ms", pid=a.pid),
                                            task_target("b", "2ms", "10ms", pid=b.pid))
    d = daemon().start(profile(text), "--rescan", "100ms")

    def irqres(*args: str):
        return CliRunner().invoke(main, list(args), env={"IRQRES_SOCKET": str(d.sock)},
                                  catch_exceptions=False)

    r = irqres("set-budget", f"pid:{a.pid}", "1ms")
    assert r.exit_code == 0, r.output
    assert sched_getattr(a.pid).runtime_ns == 1 * MS
    r = irqres("verify")
    assert r.exit_code == 0, r.output
    assert "2 threads as the profile says, 1 of them as the last set-budget says" in r.output
    # changed behind irqresd's back: the difference names where the 1 ms comes from
    subprocess.run(["chrt", "-o", "-p", "0", str(a.pid)], check=True)
    assert sched_getattr(a.pid).policy == SCHED_OTHER
    wait_for(lambda: "left as it is (drift: report)" in d.log_text(), 3.0)
    r = irqres("verify")
    assert r.exit_code == 1
    assert (f"(pid {a.pid}): scheduling is other nice 0, the last set-budget says deadline "
            "1ms/10ms/10ms") in r.output
    assert "the profile says" not in r.output
    assert d.stop() == 0
