"""Without a running irqresd: `irqres status` shows what `irqres apply` (irqresd --once)
left, `irqres verify PROFILE` compares the system with the profile (exit 1 on any
difference), and `irqres restore` says truthfully whether it restored anything."""

from __future__ import annotations

import json
import os
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


def cli_without_daemon(tmp_path):
    """`irqres` with no irqresd answering, told to use the run directory tmp_path/run
    ($IRQRES_RUN_DIR): a function of the arguments giving (exit code, output)."""
    env = {"IRQRESD": str(IRQRESD), "IRQRES_SOCKET": None,
           "IRQRES_RUN_DIR": str(tmp_path / "run")}

    def irqres(*args: str) -> tuple[int, str]:
        r = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
        return r.exit_code, r.output
    return irqres


def test_once_status_verify_restore(spawn, profile, tmp_path):
    if not shutil.which("chrt"):
        pytest.skip("chrt (util-linux) is missing")
    irqres = cli_without_daemon(tmp_path)
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


def _starttime(pid: int) -> int:
    """/proc/PID/stat field 22, the pid's start time (the comm may hold spaces)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def test_restore_gives_back_an_earlier_runs_owed_cpus(spawn, tmp_path):
    """A state file whose owed records say what a partition change took from threads
    irqres did not move (as a crash or --once leaves it): status shows them, restore
    gives them back unless someone else changed them since, and the file goes. Run on
    processes this test spawns, standing in for IRQ threads."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: no affinity to take and give back")
    irqres = cli_without_daemon(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)

    every = ",".join(map(str, cpus))
    mine, theirs = spawn(), spawn()
    for p in (mine, theirs):
        os.sched_setaffinity(p.pid, cpus)       # as the partition change left them
    (run_dir / "state").write_text(
        "# irqres state 1\n"
        f"owed pid={mine.pid} start={_starttime(mine.pid)} comm=mine cpus={cpus[-1]} "
        f"seen={every}\n"
        # someone else gave this one CPU 0 after irqres had left it on every CPU
        f"owed pid={theirs.pid} start={_starttime(theirs.pid)} comm=theirs cpus={cpus[-1]} "
        f"seen={every}\n")
    os.sched_setaffinity(theirs.pid, [cpus[0]])

    code, out = irqres("status")
    assert code == 0, out
    assert f"CPU affinity to give back: mine (pid {mine.pid}): {cpus[-1]}" in out, out
    st = json.loads(irqres("status", "--json")[1])
    assert [o["pid"] for o in st["owed"]] == [mine.pid, theirs.pid], st

    code, out = irqres("restore")
    assert code == 0, out
    assert os.sched_getaffinity(mine.pid) == {cpus[-1]}
    assert os.sched_getaffinity(theirs.pid) == {cpus[0]}
    assert not (run_dir / "state").exists()
