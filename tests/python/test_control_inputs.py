"""Live inputs of the controller, on fixture /proc and /sys trees."""

from __future__ import annotations

import os

import pytest
from irqres.control.inputs import (
    Counters,
    InputError,
    counters_from_stats,
    interval,
    net_interface,
    per_sample,
    read_interrupts,
    read_net_drops,
)
from irqres.targetkind import TargetKind

INTERRUPTS = """\
           CPU0       CPU1
  0:         45          0   IO-APIC   2-edge      timer
 11:       1200        300   IO-APIC  11-fasteoi   eth0
 38:          7         13   PCI-MSI 49152-edge      virtio2-input.0
NMI:          0          0   Non-maskable interrupts
LOC:     123456     654321   Local timer interrupts
ERR:          0
"""


def test_read_interrupts(tmp_path):
    (tmp_path / "interrupts").write_text(INTERRUPTS)
    assert read_interrupts(str(tmp_path)) == {0: 45, 11: 1500, 38: 20}
    (tmp_path / "interrupts").write_text(INTERRUPTS.replace("1200", "12x0"))
    with pytest.raises(InputError, match=r"interrupts:3: cannot read the counts of IRQ 11"):
        read_interrupts(str(tmp_path))
    with pytest.raises(InputError, match="No such file"):
        read_interrupts(str(tmp_path / "none"))


def test_net_interface_and_drops(tmp_path):
    stats = tmp_path / "class/net/eth0/statistics"
    stats.mkdir(parents=True)
    (stats / "rx_missed_errors").write_text("5\n")
    (stats / "rx_dropped").write_text("7\n")
    (tmp_path / "class/net/lo/statistics").mkdir(parents=True)
    sysr = str(tmp_path)
    assert net_interface(["eth0"], sysr) == "eth0"
    assert net_interface(["eth0-TxRx-0"], sysr) == "eth0"
    assert net_interface(["virtio2-input.0", "ahci"], sysr) is None
    assert read_net_drops("eth0", sysr) == 12
    assert read_net_drops("lo", sysr) is None           # a device without the counters
    (stats / "rx_dropped").write_text("many\n")
    with pytest.raises(InputError, match="rx_dropped: cannot read"):
        read_net_drops("eth0", sysr)


def stats(pid=105, irq=100, vol=10, invol=0, cpu=1_000_000):
    return {"pid": pid, "irqs": [11], "irq_count": irq, "cpu_time_ns": cpu,
            "voluntary_switches": vol, "involuntary_switches": invol}


def test_intervals_irq_and_task():
    a = counters_from_stats(stats(), "irq", drops=3)
    b = counters_from_stats(stats(irq=160, vol=14, invol=2, cpu=1_400_000), "irq", drops=8)
    # 60 interrupts over 4 activations: each of the 2 cuts leaves ~15 behind; 5 dropped
    assert interval(a, b)._asdict() == {"n_pro": 60, "t_pro_ns": 400_000, "n_rmn": 2 * 15 + 5}
    t0 = counters_from_stats(stats(vol=10, invol=1), "task")
    t1 = counters_from_stats(stats(vol=10, invol=4, cpu=3_000_000), "task")
    # a task: every run counts (3 cut runs), each cut leaves its job behind
    assert interval(t0, t1)._asdict() == {"n_pro": 3, "t_pro_ns": 2_000_000, "n_rmn": 3}


def test_a_napi_kthread_of_an_irq_target_counts_its_polls():
    # with_napi: the interface's NAPI kthread in an IRQ target: no IRQ, irq_count 0
    s0, s1 = stats(vol=10, invol=1), stats(vol=40, invol=5, cpu=2_000_000)
    for s in (s0, s1):
        s["irqs"], s["irq_count"] = [], 0
    a, b = counters_from_stats(s0, "irq"), counters_from_stats(s1, "irq")
    assert a.kind == TargetKind.NAPI and interval(a, b)._asdict() == {
        "n_pro": 34, "t_pro_ns": 1_000_000, "n_rmn": 4}


def test_irq_count_from_proc_when_the_daemon_has_none():
    s = stats()
    s["irq_count"] = None
    assert counters_from_stats(s, "irq", interrupts={11: 777}).jobs == 777


def test_counter_going_back_means_a_new_thread():
    a = Counters(105, "irq", 100, 10, 5_000, 0, None)
    assert interval(a, Counters(105, "irq", 90, 10, 6_000, 0, None)) is None
    assert interval(a, Counters(106, "irq", 200, 10, 6_000, 0, None)) is None
    # a NIC whose statistics were reset does not make drops negative
    c = Counters(105, "irq", 100, 10, 5_000, 0, 50)
    assert interval(c, Counters(105, "irq", 110, 11, 6_000, 0, 2)).n_rmn == 0


def test_bad_stats_entry():
    with pytest.raises(InputError, match="irqresd stats for pid 105: missing or bad field "
                       "'cpu_time_ns'"):
        counters_from_stats({"pid": 105, "irq_count": 1, "voluntary_switches": 1,
                             "involuntary_switches": 0}, "irq")


def test_read_dl_params_of_this_process():
    from irqres.control.inputs import read_dl_params

    p = read_dl_params(os.getpid())
    assert p.policy == os.sched_getscheduler(0) and p.period_ns == 0  # not SCHED_DEADLINE
    with pytest.raises(InputError, match=r"sched_getattr\(pid 999999999\): No such process"):
        read_dl_params(999_999_999)


def test_per_sample_scales_a_late_sample():
    from irqres.control.inputs import Interval

    iv = Interval(20, 1_000_000, 5)
    assert per_sample(iv, 10_000_000, 10_150_000) is iv          # within 2 %: as measured
    assert per_sample(iv, 10_000_000, 12_500_000) == Interval(16, 800_000, 4)
    assert per_sample(iv, 10_000_000, 0) is iv
