"""Discovery by interface name on a multi-queue NIC with predictable names.

A virtio-net with two queue pairs (a multi-queue tap in a network namespace of the run)
appears as ens5, with one IRQ thread per queue whose names (irq/NN-virtio2-input.0) do
not fit the kernel's 15-character comm. profiles/nic-multiqueue.yaml, pointed at ens5,
must reserve every data-queue thread and leave the configuration interrupt alone.
"""

import re

import pytest
import vmrunner
import yaml

pytestmark = [pytest.mark.vm, pytest.mark.slow]

IFACE = vmrunner.VM.VIRTIO_IFACE
QUEUES = 2


@pytest.mark.kernel_independent(
    "virtio-net queue threads are named alike on 6.1 and 6.12")
def test_interface_takes_every_queue_thread(boot, tmp_path):
    from irqres.units import parse_duration

    doc = yaml.safe_load((vmrunner.REPO / "profiles" / "nic-multiqueue.yaml").read_text())
    doc["targets"][0]["interface"] = IFACE
    profile = tmp_path / "nic-multiqueue.yaml"
    profile.write_text(yaml.safe_dump(doc))
    t = doc["targets"][0]
    want = {"runtime_ns": parse_duration(t["runtime"]), "period_ns": parse_duration(t["period"]),
            "deadline_ns": parse_duration(t["deadline"])}

    res = boot("multiqueue", nic="virtio-mq", queues=QUEUES, profile=profile,
               enable_irqresd=True, params={"interface": IFACE})
    d = res.data
    names = {int(k): v for k, v in d["actions"].items()}
    data_irqs = {i for i, v in names.items() if any(re.search(r"-(input|output)\.\d+$", a)
                                                     for a in v)}
    assert len(data_irqs) == 2 * QUEUES, (names, d["queues"]["out"])
    assert d["irqresd"]["ActiveState"] == "active", d["journal"]["out"]
    assert "Failed to start" not in d["journal"]["out"], d["journal"]["out"]
    by_irq = {th["irq"]: th for th in d["threads"] if not th["secondary"]}
    for irq in sorted(names):
        th = by_irq.get(irq)
        assert th is not None, f"IRQ {irq} ({names[irq]}) has no thread"
        if irq in data_irqs:
            got = {k: th["sched"][k] for k in want}
            assert th["sched"]["policy"] == "deadline" and got == want, (names[irq], th,
                                                                         d["journal"]["out"])
        else:  # the configuration interrupt
            assert th["sched"]["policy"] == "fifo", (names[irq], th)
    long_names = [a for v in names.values() for a in v if len(f"irq/00-{a}") > 15]
    assert long_names, "no action name was long enough to be cut in comm"
    vmrunner.say(f"multiqueue: {IFACE} IRQs {sorted(names)}; reserved {sorted(data_irqs)}; "
                 f"comms {sorted(d['comms'].values())}")
