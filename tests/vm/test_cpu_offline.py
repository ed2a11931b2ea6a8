"""A CPU taken offline while irqres holds a reservation in its partition.

The NIC's IRQ is steered to CPU 1, irqresd.service started: irq/11-eth0 gets demo.yaml's
reservation in partition irqres.cpu1, a root domain of one CPU. Then `echo 0 >
/sys/devices/system/cpu/cpu1/online`, as an admin or a hotplug tool would. The kernel
refuses (EBUSY): taking the CPU away would leave the domain's deadline bandwidth no CPU to
run on (cpuset_cpu_inactive() in kernel/sched/core.c; suspend's "frozen" hotplug skips
that check). Nothing of irqres's may change meanwhile: the reservation, the
partition, `irqres verify` consistent; the CPU comes back online (a no-op) and irqresd's
stop leaves the scheduler as it found it. docs/coexistence.md, "CPU hotplug".

On 7.3 too, where the refusal is the newer rule (6.14's dl_bw_deactivate(): a CPU may not
leave while its root domain's deadline bandwidth needs it). There IRQ threads are
PF_NO_SETAFFINITY (the kernel does not let them into a cpuset) and the kernel counts a
thread left beside its partition in the root cgroup's domain: the guest boots with CPU 1
isolated (isolcpus=domain,managed_irq nohz_full, as RT boxes boot), which makes CPU 1 a
root domain of its own without a partition, counted where the thread runs.
"""

import json

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

EBUSY = 16


@pytest.mark.kernels_too("7.3")
def test_a_partition_cpu_refuses_to_go_offline_and_nothing_changes(boot, demo_profile,
                                                                   kernel):
    isolated = kernel.startswith("7.")
    res = boot("cpu_offline", profile=demo_profile["path"], enable_irqresd=False,
               params={"cpu": 1}, kernel_args=vmrunner.ISOLATE_CPU1 if isolated else "")
    d = res.data
    (res.out.parent / "offline.json").write_text(json.dumps(d, indent=1))
    assert d["steer"]["thread_moved"], d["steer"]
    snaps = {s["label"]: s for s in d["snapshots"]}
    held = snaps["reserved"]
    assert held["thread"]["sched"]["policy"] == "deadline", held
    # CPU 1 isolated is a root domain already: the thread stays in the root cgroup
    partitions = {} if isolated else {"irqres.cpu1": {
        "cpus": "1", "partition": "root", "procs": [str(held["thread"]["pid"])]}}
    assert held["partitions"] == partitions, held
    cgroup = "/" if isolated else "/irqres.cpu1"
    # the kernel says no, and says it at once
    assert d["offline"]["errno"] == EBUSY, d["offline"]
    assert d["offline"]["online"] == "0-1", d["offline"]
    for label in ("offline", "online again"):
        s = snaps[label]
        assert s["thread"]["pid"] == held["thread"]["pid"], (label, s["thread"])
        assert s["thread"]["sched"] == held["thread"]["sched"], (label, s["thread"])
        assert s["thread"]["cpus"] == "1" and s["thread"]["cgroup"] == cgroup, s
        assert s["partitions"] == held["partitions"], (label, s["partitions"])
        assert s["irqresd"]["ActiveState"] == "active", (label, s["irqresd"])
        verify = json.loads(s["verify"]["out"])
        assert verify["consistent"] and verify["differences"] == [], (label, verify)
        # the NIC thread's bandwidth still counted in its root domain; 6.12 rebuilds the
        # root domains at the refused offline and leaves its fair servers out of the
        # rebuilt count (docs/vm.md, "What 6.12 changes"), which is the kernel's own doing
        assert s["kernel"]["rd"]["1"]["total_bw"] in _counts(held, res.kernel.label), \
            (label, s["kernel"]["rd"], held["kernel"]["rd"])
    assert d["online"]["errno"] == 0, d["online"]
    assert d["diff_after_stop"] == [], d["diff_after_stop"]
    vmrunner.say(f"cpu offline {res.kernel.release}: CPU 1 refused with errno "
                 f"{d['offline']['errno']} in {d['offline']['ns'] / 1e6:.1f} ms of guest time; "
                 f"the reservation and {'root domain' if isolated else 'partition'} as "
                 f"they were")


def _counts(held: dict, label: str) -> set[int]:
    """What CPU 1's root domain may count after the refused offline: what it counted
    before, and on 6.12 that less CPU 1's fair server."""
    total = held["kernel"]["rd"]["1"]["total_bw"]
    if label != "6.12":
        return {total}
    fair = held["kernel"]["servers"].get("fair_server", {}).get("1", {})
    share = (fair.get("runtime_ns", 0) << 20) // max(fair.get("period_ns", 1), 1)
    return {total, total - share}
