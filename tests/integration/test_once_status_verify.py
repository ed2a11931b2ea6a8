"""Without a running irqresd: `irqres status` shows what `irqres apply` (irqresd --once)
left, `irqres verify PROFILE` compares the system with the profile (exit 1 on any
difference), and `irqres restore` says truthfully whether it restored anything."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqresd_util import (
    IRQRESD,
    SCHED_DEADLINE,
    SCHED_OTHER,
    profile_text,
    sched_getattr,
    task_target,
)

pytestmark = pytest.mark.root

MS = 1_000_000


def test_once_status_verify_restore(spawn, profile, tmp_path):
    if not shutil.which("chrt"):
        pytest.skip("chrt (util-linux) is missing")
    # irqresd with its own run directory, as `irqres` finds it through $IRQRESD
    wrapper = tmp_path / "irqresd"
    wrapper.write_text(f'#!/bin/sh\nexec "{IRQRESD}" --run-dir "{tmp_path}/run" "$@"\n')
    wrapper.chmod(0o755)
    env = {"IRQRESD": str(wrapper), "IRQRES_SOCKET": str(tmp_path / "nobody.sock")}

    def irqres(*args: str) -> tuple[int, str]:
        r = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
        return r.exit_code, r.output

    state = tmp_path / "run" / "state"
    code, out = irqres("status")
    assert code == 0 and f"no state file {state}" in out
    code, out = irqres("restore")
    assert code == 0 and "nothing to restore" in out and "restored" not in out

    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    code, out = irqres("apply", str(p))
    assert code == 0, out
    assert sched_getattr(a.pid).policy == SCHED_DEADLINE
    # the reservation --once left is visible
    code, out = irqres("status")
    assert code == 0 and f"state file {state}" in out and "1 thread(s)" in out
    row = next(line for line in out.splitlines() if f" {a.pid} " in line)
    # RUNTIME DEADLINE PERIOD, the plan report's columns
    assert re.search(r" 2ms +10ms +10ms ", row) and "deadline" in row and " other " in row
    st = json.loads(irqres("status", "--json")[1])
    assert st["daemon"] is False and [t["pid"] for t in st["threads"]] == [a.pid]

    code, out = irqres("verify", str(p))
    assert code == 0 and f"Verified {p}: 1 thread as the profile says" in out, out
    subprocess.run(["chrt", "-o", "-p", "0", str(a.pid)], check=True)
    code, out = irqres("verify", str(p))
    assert code == 1
    assert (f"target 'a': python3 (pid {a.pid}): scheduling is other nice 0, the profile "
            "says deadline 2ms/10ms/10ms") in out
    verdict = json.loads(irqres("verify", "--json", str(p))[1])
    assert verdict["consistent"] is False and len(verdict["differences"]) == 1

    code, out = irqres("restore")
    assert code == 0 and "restored 1 thread(s)" in out, out
    assert sched_getattr(a.pid).policy == SCHED_OTHER
    assert not state.exists()
    # nothing left: verify says the profile is not held
    code, out = irqres("verify", str(p))
    assert code == 1 and "scheduling is other nice 0" in out
