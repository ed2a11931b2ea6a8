"""Fault campaign on the cpuset-partition steps, with irqresd run by its own unit
(irqresd.service as shipped: Type=notify, SCHED_FIFO 1, LimitRTTIME=2s:3s, WatchdogSec,
TimeoutStopSec, ExecStopPost=irqresd --restore, Restart=on-failure).

tests/fuzz/killat.c, preloaded into the unit's processes through the service manager's
environment (``systemctl set-environment``: the unit itself is as shipped), SIGKILLs
irqresd once, just before or just after one step of a partition's
life: at start-up (``+cpuset`` into the root's subtree_control, the group's mkdir, its
cpuset.cpus, cpuset.mems, ``root`` into cpuset.cpus.partition, the NIC thread's pid into
its cgroup.procs) or at the stop (the thread's pid back into the root's cgroup.procs,
``member`` into cpuset.cpus.partition, the rmdir, ``-cpuset``). The kill is armed by a
token file the first process to reach the step takes, so the unit's own recovery runs
unhindered; the journal line it writes at the kill tells that the step was reached. Each
trial is checked with vmguest.fingerprint against the one taken before
irqresd first ran: after the unit's ExecStopPost (start-up kills: while systemd waits to
restart it; stop kills: once the stop is over), and, for start-up kills, again after the
restarted irqresd is stopped. The restart must not overtake the recovery check (RestartSec
is 2 s; a fingerprint takes seconds under emulation, tens on a loaded host): the kill
also creates a gate file, at which the restarted irqresd waits before its main() until
the check is done (killat.c, IRQRES_KILLAT_GATE). A start-up kill whose recovery check
the restart overtook all the same is counted as raced and judged by the final stop
alone."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time

from vmguest import fingerprint, fingerprint_diff, mark, read, sh, wait_for

UNIT = "irqresd.service"
TOKEN = "/run/irqres/killat.token"
GATE = "/run/irqres/killat.gate"
KILLAT = "/usr/local/lib/irqres-vm/killat.so"

# (phase, op, path text ('$': at the end), data prefix ('-': any)), each killed before
# and after the call
STEPS = (
    ("start", "write", "/cgroup.subtree_control$", "+cpuset"),
    ("start", "mkdir", "/irqres.cpu", "-"),
    ("start", "write", "/cpuset.cpus$", "-"),
    ("start", "write", "/cpuset.mems$", "-"),
    ("start", "write", "/cpuset.cpus.partition$", "root"),
    ("start", "write", "/cgroup.procs$", "-"),
    ("stop", "write", "/cgroup.procs$", "-"),
    ("stop", "write", "/cpuset.cpus.partition$", "member"),
    ("stop", "rmdir", "/irqres.cpu", "-"),
    ("stop", "write", "/cgroup.subtree_control$", "-cpuset"),
)


def _unit() -> dict:
    """The unit's state, read quietly (polled often; the serial console is slow)."""
    out = subprocess.run(["systemctl", "show", UNIT, "-p", "ActiveState", "-p", "SubState",
                          "-p", "MainPID", "-p", "NRestarts", "-p", "Result"],
                         capture_output=True, text=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def _arm(spec: str) -> None:
    os.makedirs("/run/irqres", mode=0o700, exist_ok=True)
    with open(TOKEN, "w") as f:
        f.write(spec + "\n")


def _journal() -> list[str]:
    return subprocess.run(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat"],
                          capture_output=True, text=True).stdout.splitlines()


def _restarting(restarts: int, unit: dict | None = None) -> bool:
    """Whether the unit is between the kill's recovery and the restarted irqresd's work:
    a restart counted since the trial began, and the unit waiting RestartSec or starting
    the new irqresd (held at the gate), not active yet."""
    u = unit or _unit()
    return (int(u.get("NRestarts") or 0) > restarts and u.get("ActiveState") != "active"
            and u.get("SubState") in ("auto-restart", "start"))


def _open_gate() -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(GATE)


def _trial(before: dict, phase: str, op: str, path: str, data: str, when: str) -> dict:
    spec = f"{op}|{path}|{data}|{when}"
    mark(f"partition faults: {phase} {spec}")
    sh(f"systemctl reset-failed {UNIT}")
    j0 = len(_journal())
    restarts = int(_unit().get("NRestarts") or 0)
    out: dict = {"phase": phase, "spec": spec}
    if phase == "start":
        _arm(spec)
        sh(f"systemctl start --no-block {UNIT}")
        # the kill, ExecStopPost's --restore, then systemd waits RestartSec to restart it,
        # and the restarted irqresd waits at the gate
        wait_for(lambda: not os.path.exists(TOKEN) or _unit().get("ActiveState") == "active",
                 60, 0.05)
        if not os.path.exists(TOKEN):
            restarting, _ = wait_for(lambda: _restarting(restarts), 60, 0.05)
            recovered = fingerprint("recovered")
            out["recovered"] = _unit()
            # the restarted irqresd may have changed things already (not counted)
            out["recovery_raced"] = not _restarting(restarts, out["recovered"])
            out["diff_after_recovery"] = fingerprint_diff(before, recovered)
            if not restarting:
                out["diff_after_recovery"].append("the unit never waited to restart")
        _open_gate()
        wait_for(lambda: _unit().get("ActiveState") == "active", 60, 0.1)
    else:
        sh(f"systemctl start {UNIT}", check=True)
        wait_for(lambda: _unit().get("ActiveState") == "active", 60, 0.1)
        _arm(spec)
    sh(f"systemctl stop {UNIT}", timeout=120)
    out["stopped"] = _unit()
    out["diff_after_stop"] = fingerprint_diff(before, fingerprint("stopped"))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(TOKEN)
    _open_gate()  # a stop kill closed it too; nothing restarts after a stop
    journal = _journal()[j0:]
    out["killed"] = [ln for ln in journal if ln.startswith("killat: SIGKILL")]
    out["state_left"] = os.path.exists("/run/irqres/state")
    out["journal"] = journal[-30:]
    return out


def scenario_partition_faults(rounds: int = 1, only: str = "") -> dict:
    """Each step of STEPS killed before and after the call, ``rounds`` times; the unit
    recovers; every fingerprint equal to the first. ``only``: the trials whose
    ``phase op|path|data|when`` contains it (to repeat one step)."""
    shutil.copy("/payload/extra/killat.so", KILLAT)
    before = fingerprint("before irqresd")
    trials = []
    t0 = time.monotonic_ns()
    # the unit as shipped; only the service manager's environment preloads killat
    sh(f"systemctl set-environment LD_PRELOAD={KILLAT} IRQRES_KILLAT_TOKEN={TOKEN} "
       f"IRQRES_KILLAT_GATE={GATE}", check=True)
    try:
        for _ in range(rounds):
            for phase, op, path, data in STEPS:
                for when in ("before", "after"):
                    if only not in f"{phase} {op}|{path}|{data}|{when}":
                        continue
                    trials.append(_trial(before, phase, op, path, data, when))
    finally:
        _open_gate()
        sh("systemctl unset-environment LD_PRELOAD IRQRES_KILLAT_TOKEN IRQRES_KILLAT_GATE; "
           f"systemctl stop {UNIT}")
    failures = [t for t in trials if len(t["killed"]) != 1 or t["diff_after_stop"]
                or (t.get("diff_after_recovery") and not t.get("recovery_raced"))
                or t["state_left"]]
    return {"trials": trials, "failures": failures, "campaign_ns": time.monotonic_ns() - t0,
            "unit": read(f"/lib/systemd/system/{UNIT}") or read(f"/etc/systemd/system/{UNIT}"),
            "preload_errors": [ln for t in trials for ln in t["journal"] if "preload" in ln],
            "after": fingerprint_diff(before, fingerprint("after the campaign"))}
