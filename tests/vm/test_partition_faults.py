"""Faults at the cpuset-partition steps on the PREEMPT_RT guest, irqresd run by its own
unit (guest/faults.py): SIGKILL just before and just after each step of a partition's
creation (at start-up) and removal (at the stop) of the NIC thread's partition, through
tests/fuzz/killat.c preloaded into the unit; after the unit's own recovery (ExecStopPost's
``irqresd --restore``, then Restart=) the guest's scheduler fingerprint must equal the one
taken before irqresd first ran, and no state file may be left.

    IRQRES_VM_KERNELS=6.1 pytest -s tests/vm/test_partition_faults.py

The trials are kept in the test's work directory (faults.json).
"""

import json
import os
import subprocess

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

ROUNDS = int(os.environ.get("IRQRES_VM_FAULT_ROUNDS", "1"))
ONLY = os.environ.get("IRQRES_VM_FAULT_ONLY", "")  # repeat the trials whose spec has it
STEPS = 10  # guest/faults.py STEPS, each killed before and after the call


@pytest.fixture(scope="module")
def killat(tmp_path_factory):
    so = tmp_path_factory.mktemp("killat") / "killat.so"
    subprocess.run(["cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    "-O2", "-o", str(so), str(vmrunner.REPO / "tests" / "fuzz" / "killat.c"),
                    "-ldl"], check=True)
    return so


def test_kills_at_partition_steps_leave_the_guest_as_found(boot, demo_profile, killat):
    res = boot("partition_faults", profile=demo_profile["path"], enable_irqresd=False,
               params={"rounds": ROUNDS, "only": ONLY}, files={"killat.so": killat},
               timeout_s=300 + 60 * ROUNDS * STEPS * 2)
    d = res.data
    trials = d["trials"]
    (res.out.parent / "faults.json").write_text(json.dumps(
        {"kernel": res.kernel.release, "wall_s": round(res.wall_s, 1), **d}, indent=1))
    vmrunner.say(f"partition faults on {res.kernel.release}: {len(trials)} trials in "
                 f"{d['campaign_ns'] / 1e9:.1f}s guest time, {len(d['failures'])} failed")
    for t in trials:
        vmrunner.say(f"  {t['phase']:5} {t['spec']:45} kills={len(t['killed'])} "
                     f"recovery={t.get('diff_after_recovery')}"
                     f"{' (raced the restart)' if t.get('recovery_raced') else ''} "
                     f"stop={t['diff_after_stop']}")
    assert d["preload_errors"] == [], d["preload_errors"]
    assert "LimitRTTIME=2s:3s" in (d["unit"] or "") and "CPUSchedulingPolicy=fifo" in d["unit"]
    if not ONLY:
        assert len(trials) == ROUNDS * STEPS * 2, len(trials)
    assert d["failures"] == [], d["failures"]
    assert all(len(t["killed"]) == 1 for t in trials), [t["spec"] for t in trials]
    # most start-up kills are checked between ExecStopPost and the restart
    raced = [t for t in trials if t.get("recovery_raced")]
    assert len(raced) <= len([t for t in trials if t["phase"] == "start"]) // 2, raced
    assert d["after"] == [], d["after"]
