"""The crash campaign on the PREEMPT_RT guest (tests/fuzz/crashlib.py, the host's procedure):
irqresd SIGKILLed at a random instant while it reserves the NIC's IRQ thread (moving it into
a cpuset partition), gives it a new budget, restores it, restores from the state file, or
follows the new thread of a link down/up (proc connector, the thread moved into its
partition and waiting there to run); after the documented recovery (``irqresd --restore``
or the next start, in turn) the guest's scheduler state is as found before irqresd first
ran (vmguest.fingerprint: every thread's policy, priority, parameters, cgroup and CPU
affinity; cgroups and cpuset partitions; sched_* sysctls; root domains' deadline
bandwidth and fair servers; scheduling domains; sched features). A last kill left
unrecovered proves the comparison names what it leaves.

``make test`` runs IRQRES_VM_CRASH_TRIALS (default 18, 3 per phase) trials in one boot per
kernel; the 100-trial runs of tests/fuzz/RESULTS.md are

    IRQRES_VM_CRASH_TRIALS=100 flock /tmp/irqres-vm.lock pytest -s tests/vm/test_crash_campaign.py

The summary is printed and kept in the test's work directory (campaign.json).
"""

import json
import os
import re

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

TRIALS = int(os.environ.get("IRQRES_VM_CRASH_TRIALS", "18"))
SEED = int(os.environ.get("IRQRES_VM_CRASH_SEED", "1"))
NEW_RUNTIME_NS = 3_000_000  # set-budget nic 3ms (demo.yaml: 2ms every 10ms)
# the NIC thread runs only at an interrupt; a few datagrams a second out of eth0 make
# sure it does while irqresd waits for it to run in a new partition (0: an idle NIC)
TRAFFIC_PPS = int(os.environ.get("IRQRES_VM_CRASH_PPS", "20"))
# trials with the state file damaged after the kills (one of each crashlib.DAMAGES per 7)
DAMAGE = int(os.environ.get("IRQRES_VM_CRASH_DAMAGE", "7"))


# On 7.3 too: the NIC thread stays in the root cgroup beside its partition there, and a
# kill at any point must still leave it, and the partition, as found.
@pytest.mark.kernels_too("7.3")
@pytest.mark.kernel_independent(
    "6.1 and 6.12 both move the NIC thread into its partition; the kernel's part of "
    "a kill, a partition left half made, is test_partition_faults' on each")
@pytest.mark.arm64
def test_kills_leave_every_irq_thread_as_found(boot, demo_profile, kernel, nic_thread):
    # a guest minute or two per 18 trials under emulation: the timeout scales with them
    res = boot("crash_campaign", profile=demo_profile["path"],
               params={"trials": TRIALS, "seed": SEED, "new_runtime_ns": NEW_RUNTIME_NS,
                       "calibration_runs": 1 if TRIALS < 50 else 3,
                       "traffic_pps": TRAFFIC_PPS, "damage": DAMAGE},
               files={"crashlib.py": vmrunner.REPO / "tests" / "fuzz" / "crashlib.py"},
               timeout_s=300 + 10 * (TRIALS + 2 * DAMAGE))
    d = res.data
    out = d["campaign"]
    summary = {"kernel": res.kernel.release, "trials": TRIALS, "seed": SEED,
               "traffic_pps": TRAFFIC_PPS, "wall_s": round(res.wall_s, 1), **out}
    (res.out.parent / "campaign.json").write_text(json.dumps(summary, indent=1))
    phases = out["phases"]
    vmrunner.say(f"crash campaign on {res.kernel.release}: {TRIALS} trials in "
                 f"{out['campaign_ns'] / 1e9:.1f}s guest time; threads left changed "
                 f"{out['threads_left_changed']}, left behind {out['residue']}; "
                 f"state file left by {sum(p['state_file_left'] for p in phases.values())} "
                 f"kills; phase medians {out['phase_median_s']}")
    vmrunner.say(json.dumps(phases))
    assert re.fullmatch(nic_thread, d["nic"]["comm"]), d["nic"]
    assert out["failures"] == [], (out["failures"], d["log_tail"])
    assert out["threads_left_changed"] == 0 and out["residue"] == 0, out
    # a damaged state file: the intact records restored, nothing else changed; the
    # original put back, everything restored
    if DAMAGE:
        damage = out["damage"]
        vmrunner.say(f"damage trials: {json.dumps(damage['kinds'])}")
        assert damage["trials"] == DAMAGE, damage
        assert damage["failures"] == [], (damage["failures"], d["log_tail"])
    assert d["after"] == {"changed": [], "residue": []}, d["after"]
    (res.out.parent / "fingerprints.json").write_text(json.dumps(d["fingerprints"]))
    # the check can fail: a kill left unrecovered is named (the NIC thread, its partition)
    vmrunner.say(f"killed, not restored: {d['unrestored_diff']}")
    assert any(x.startswith(f"thread {d['nic']['comm']} ") for x in d["unrestored_diff"]), (
        d["unrestored_diff"])
    assert any(x.startswith("cgroup /irqres") for x in d["unrestored_diff"]), d["unrestored_diff"]
    assert d["restored_diff"] == [], d["restored_diff"]
    assert "hotplug" in phases, phases
    assert all(phases[p]["trials"] >= TRIALS // len(phases) for p in phases), phases
    # the kills landed while there was something to recover: state files were left, and
    # some kills caught the thread already changed
    assert sum(p["state_file_left"] for p in phases.values()) >= TRIALS // 5, phases
    assert sum(p["done_at_kill"]["all"] for p in phases.values()) >= 1, phases
