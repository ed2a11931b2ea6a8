"""A damaged state file: --restore restores what it can, says what it could not, exits 1
and keeps the file; a read-only run dir does not stop a restore."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from irqresd_util import (
    IRQRESD,
    SCHED_DEADLINE,
    SCHED_OTHER,
    profile_text,
    run_irqresd,
    sched_getattr,
    task_target,
)

pytestmark = pytest.mark.root


def _once(spawn, daemon, profile, n: int = 3):
    tasks = [spawn() for _ in range(n)]
    p = profile(profile_text(*(task_target(f"t{i}", "1ms", "100ms", pid=t.pid)
                               for i, t in enumerate(tasks))))
    d = daemon()
    r = run_irqresd("--once", "-p", str(p), "--run-dir", str(d.run_dir))
    assert r.returncode == 0, r.stderr
    assert all(sched_getattr(t.pid).policy == SCHED_DEADLINE for t in tasks)
    return d, tasks


def _clean_up(d, tasks) -> None:
    """Puts the tasks back (the test owns them) and removes the kept file."""
    for t in tasks:
        if sched_getattr(t.pid).policy == SCHED_DEADLINE:
            subprocess.run(["chrt", "-o", "-p", "0", str(t.pid)], check=True)
    (d.run_dir / "state").unlink(missing_ok=True)


def test_one_bad_field_is_not_success(spawn, daemon, profile):
    d, tasks = _once(spawn, daemon, profile)
    state = d.run_dir / "state"
    lines = state.read_text().splitlines(keepends=True)
    victim = next(i for i, ln in enumerate(lines) if f"pid={tasks[1].pid} " in ln)
    lines[victim] = lines[victim].replace("policy=other", "policy=otherx")
    state.write_text("".join(lines))
    damaged = state.read_text()
    r = run_irqresd("--restore", "--run-dir", str(d.run_dir))
    assert r.returncode == 1, r.stderr
    assert f"state:{victim + 1}: checksum mismatch" in r.stderr, r.stderr
    assert "restored 2 threads from its good records" in r.stderr, r.stderr
    assert "the file is kept as it is" in r.stderr
    assert state.read_text() == damaged
    assert sched_getattr(tasks[0].pid).policy == SCHED_OTHER
    assert sched_getattr(tasks[2].pid).policy == SCHED_OTHER
    assert sched_getattr(tasks[1].pid).policy == SCHED_DEADLINE  # its record was lost
    # nor does a daemon start over it
    r = run_irqresd("--run-dir", str(d.run_dir), "--once", "-p", "/dev/null")
    assert r.returncode == 1 and "irqresd does not start over it" in r.stderr, r.stderr
    _clean_up(d, tasks)


@pytest.mark.parametrize("text", ["", "# irqres state 2\n", "garbage\x00\x01\n"])
def test_empty_or_garbage_state_is_an_error(spawn, daemon, profile, text):
    d, tasks = _once(spawn, daemon, profile, 2)
    (d.run_dir / "state").write_text(text)
    r = run_irqresd("--restore", "--run-dir", str(d.run_dir))
    assert r.returncode == 1, r.stderr
    assert "nothing to restore" not in r.stdout + r.stderr
    assert "could not be restored" in r.stderr
    assert (d.run_dir / "state").read_text() == text
    _clean_up(d, tasks)


def test_torn_write_detected(spawn, daemon, profile):
    d, tasks = _once(spawn, daemon, profile, 2)
    state = d.run_dir / "state"
    text = state.read_text()
    state.write_text(text[:-10])        # the last record's write did not finish
    r = run_irqresd("--restore", "--run-dir", str(d.run_dir))
    assert r.returncode == 1 and "unfinished last line" in r.stderr, r.stderr
    assert sched_getattr(tasks[0].pid).policy == SCHED_OTHER
    assert sched_getattr(tasks[1].pid).policy == SCHED_DEADLINE
    _clean_up(d, tasks)


def test_restore_on_read_only_run_dir(spawn, daemon, profile):
    """The run dir bind-mounted read-only in a private mount namespace: EROFS for real."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1)")
    d, tasks = _once(spawn, daemon, profile, 2)
    run = str(d.run_dir)
    (d.run_dir / "lock").unlink()       # a lock file cannot be made there either
    r = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         f'mount --bind "{run}" "{run}" && mount -o remount,bind,ro "{run}" && '
         f'touch "{run}/probe" 2>/dev/null && exit 99; exec "{IRQRESD}" --restore '
         f'--run-dir "{run}"'],
        capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode != 99, "the bind mount is not read-only"
    assert r.returncode == 0, r.stderr
    assert "read-only file system" in r.stderr and "the file stays" in r.stdout, r
    assert all(sched_getattr(t.pid).policy == SCHED_OTHER for t in tasks)
    assert (d.run_dir / "state").exists()
    # a later restore, writable again, finds them restored and removes the file
    r = run_irqresd("--restore", "--run-dir", run)
    assert r.returncode == 0, r.stderr
    assert not (d.run_dir / "state").exists()
