"""Process-aware coupling on the PREEMPT_RT guest (docs/process-aware.md): the e1000's
IRQ thread, in a coupled target serving a UDP port, follows the SCHED_FIFO priority of
the receiver bound to that port, and is back at the kernel's SCHED_FIFO 50 when the
receiver exits and when irqresd stops."""

import json

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

PORT = 5555
BOUND_S = 10.0      # the unit's rescan is 1 s; guest time stretches under emulation


@pytest.mark.kernel_independent(
    "sched_setattr of a FIFO priority: the same on every kernel")
def test_nic_thread_follows_the_udp_receiver(boot, tmp_path):
    prof = tmp_path / "coupled.yaml"
    prof.write_text("version: 1\ntargets:\n  - name: nic\n    interface: eth0\n"
                    f"    serves:\n      port: {PORT}\n")
    res = boot("coupling", profile=prof, enable_irqresd=True,
               params={"port": PORT, "bound_s": BOUND_S})
    d = res.data
    journal = d["journal"]["out"]
    assert d["active"] == "active", journal
    assert d["before"] == ["fifo", 50], (d["before"], journal)    # nobody bound yet
    for step in ("bound", "raised", "exited", "again"):
        assert d[step]["ns"] is not None, (step, d[step], journal)
        vmrunner.say(f"coupling {step}: NIC thread at {d[step]['want']} after "
                     f"{d[step]['ns'] / 1e6:.0f} ms (guest time)")
    status = json.loads(d["status"]["out"])
    nic = next(t for t in status["targets"] if t["name"] == "nic")
    assert nic["coupling"]["priority"] == 20, nic
    assert [t["comm"] for t in nic["coupling"]["threads"]] == ["irq/11-eth0"], nic
    assert len(nic["serves"]) == 1 and nic["serves"][0]["priority"] == 20, nic
    assert json.loads(d["verify"]["out"])["consistent"], d["verify"]
    assert "coupled: target nic: SCHED_FIFO 20" in d["status_text"]["out"], d["status_text"]
    assert d["stop"]["rc"] == 0, d["stop"]
    assert d["stopped"] == ["fifo", 50], (d["stopped"], journal)


PER_NIC_PORTS = [6001, 6002]
PER_NIC_PRIOS = [30, 12]


@pytest.mark.kernel_independent(
    "sched_setattr of a FIFO priority: the same on every kernel")
def test_each_nic_thread_follows_its_own_receiver(boot, tmp_path):
    """One NIC per served process (docs/process-aware.md, "Per flow"): two e1000s, each in
    a coupled target serving its own receiver's port; each IRQ thread takes its own
    receiver's priority, not the highest of both, and follows that receiver alone."""
    prof = tmp_path / "per-nic.yaml"
    prof.write_text("version: 1\ntargets:\n"
                    + "".join(f"  - name: nic{i}\n    interface: eth{i}\n"
                              f"    serves:\n      port: {p}\n"
                              for i, p in enumerate(PER_NIC_PORTS)))
    res = boot("coupling_per_nic", profile=prof, enable_irqresd=True, nic="hub",
               params={"ports": PER_NIC_PORTS, "prios": PER_NIC_PRIOS, "bound_s": BOUND_S})
    d = res.data
    journal = d["journal"]["out"]
    assert d["active"] == "active", journal
    assert all(d["irqs"].values()) and len(set(d["irqs"].values())) == 2, d["irqs"]
    for step in ("before", "bound", "raised", "exited"):
        assert d[step]["ns"] is not None, (step, d[step], journal)
        vmrunner.say(f"coupling per NIC {step}: {d[step]['got']} after "
                     f"{d[step]['ns'] / 1e6:.0f} ms (guest time)")
    status = {t["name"]: t for t in json.loads(d["status"]["out"])["targets"]}
    for i, prio in enumerate(PER_NIC_PRIOS):
        c = status[f"nic{i}"]["coupling"]
        assert c["priority"] == prio, (i, status[f"nic{i}"])
        assert [t["comm"] for t in c["threads"]] == [d["irqs"][f"eth{i}"]], c
    assert d["stop"]["rc"] == 0, d["stop"]
    assert d["stopped"] == {"eth0": ["fifo", 50], "eth1": ["fifo", 50]}, (d["stopped"], journal)
