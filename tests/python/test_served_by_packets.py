"""Accounting of IRQ time by the packets each process read (irqres.measure.accounting),
with known answers: deliveries (net:netif_receive_skb) matched to reads (skb:consume_skb,
skb:skb_copy_datagram_iovec) by skb address."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
from irqres.measure.accounting import Served, format_served, served_processes
from irqres.measure.activations import activations
from irqres.trace import Selection, read_trace
from irqres.trace.reader import FLAG_HARDIRQ, FLAG_SOFTIRQ
from irqres.trace.synthetic import TraceBuilder, irq_thread_trace

DATA = Path(__file__).resolve().parents[1] / "data"

RT = "Linux guest 6.1.0-50-rt-amd64 x86_64"
THREAD = 100
AWAKE, SLEEPER = 500, 600  # the reader that is always busy, the one that sleeps
ARRIVALS = [1_000_000, 2_000_000, 3_000_000]
EXECS = [90_001, 100_000, 60_000]
# activations (start = arrival + 2 us, first switch-in at arrival + 3 us)
STARTS = [a + 3_000 for a in ARRIVALS]


def addr(i: int) -> int:
    """A kernel address, above 2**63 as real skb addresses are."""
    return 0xFFFF8AEE81A88000 + 0x100 * i


def _two_readers(uname: str = RT) -> TraceBuilder:
    """Three activations; each wakes only SLEEPER, yet AWAKE reads most of the packets."""
    b, _ = irq_thread_trace(ARRIVALS, EXECS, served={0: SLEEPER, 1: SLEEPER, 2: SLEEPER})
    b.uname = uname
    b.comm(AWAKE, "busy-reader")
    b.comm(SLEEPER, "sleepy-reader")
    # activation 0: 3 packets to AWAKE, 1 to SLEEPER; activation 1: 1 and 1;
    # activation 2: 0 and 2
    plan = [(0, AWAKE), (0, AWAKE), (0, AWAKE), (0, SLEEPER), (1, AWAKE), (1, SLEEPER),
            (2, SLEEPER), (2, SLEEPER)]
    for i, (k, reader) in enumerate(plan):
        t = STARTS[k] + 1_000 + 100 * i
        b.deliver(t, 0, THREAD, addr(i), flags=FLAG_SOFTIRQ)
        b.copy_datagram(ARRIVALS[k] + 500_000 + i, 1, reader, addr(i))
        b.consume_skb(ARRIVALS[k] + 500_100 + i, 1, reader, addr(i))
    return b


def _by_pid(served: list[Served]) -> dict[int, Served]:
    return {s.pid: s for s in served}


def _old_rule(b: TraceBuilder) -> dict[int, int]:
    """The answer of the wake-up rule alone: the same trace without the packet events."""
    for name in ("netif_receive_skb", "consume_skb", "skb_copy_datagram_iovec"):
        b.rows[name] = []
    trace = b.build()
    return {s.pid: s.irq_time_ns for s in served_processes(trace, activations(trace)[0])}


def test_time_follows_the_packets_not_the_wakeups():
    b = _two_readers()
    trace = b.build()
    act = activations(trace)[0]
    assert list(act.exec_ns) == EXECS
    served = _by_pid(served_processes(trace, act))
    # activation 0: 90,001 * 3/4 = 67,500 (floor) and 22,500, the remainder (1) to pid 500
    # activation 1: 50,000 each; activation 2: all to SLEEPER
    assert served[AWAKE].irq_time_ns == 67_501 + 50_000
    assert served[SLEEPER].irq_time_ns == 22_500 + 50_000 + 60_000
    assert (served[AWAKE].packets, served[SLEEPER].packets) == (4, 4)
    assert (served[AWAKE].wakeups, served[SLEEPER].wakeups) == (0, 3)
    assert (served[AWAKE].activations, served[SLEEPER].activations) == (2, 3)
    assert -1 not in served
    assert sum(s.irq_time_ns for s in served.values()) == sum(EXECS)
    # the wake-up rule gives everything to the one reader that slept
    old = _old_rule(b)
    assert old == {SLEEPER: sum(EXECS)}
    assert served[AWAKE].irq_time_ns > 0.45 * sum(EXECS)


def test_shares_add_up_exactly_per_activation():
    b, _ = irq_thread_trace([1_000_000], [100_003])
    b.uname = RT
    for pid in (700, 701, 702):
        b.comm(pid, f"r{pid}")
    # 3 packets to 700, 2 to 701, 2 to 702: 42,858 + 28,572 + 28,572 = 100,002, +1 to 700
    for i, pid in enumerate([700, 700, 700, 701, 701, 702, 702]):
        b.deliver(1_010_000 + i, 0, THREAD, addr(i))
        b.consume_skb(1_500_000 + i, 1, pid, addr(i))
    trace = b.build()
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    assert {p: s.irq_time_ns for p, s in served.items()} == {700: 42_859, 701: 28_572,
                                                             702: 28_572}
    assert sum(s.irq_time_ns for s in served.values()) == 100_003


def test_reused_addresses_are_matched_to_their_own_activations():
    b, _ = irq_thread_trace(ARRIVALS[:2], [50_000, 40_000])
    b.uname = RT
    b.comm(AWAKE, "a")
    b.comm(SLEEPER, "b")
    same = addr(7)
    # the same skb address is delivered in activation 0 (read by AWAKE), freed, then
    # delivered again in activation 1 (read by SLEEPER)
    b.deliver(STARTS[0] + 1_000, 0, THREAD, same)
    b.consume_skb(1_500_000, 1, AWAKE, same)
    b.deliver(STARTS[1] + 1_000, 0, THREAD, same)
    b.consume_skb(2_500_000, 1, SLEEPER, same)
    trace = b.build()
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    assert served[AWAKE].irq_time_ns == 50_000 and served[AWAKE].packets == 1
    assert served[SLEEPER].irq_time_ns == 40_000 and served[SLEEPER].packets == 1


def test_a_delivery_not_read_before_its_address_returns_is_nobodys():
    b, _ = irq_thread_trace(ARRIVALS[:2], [50_000, 40_000])
    b.uname = RT
    b.comm(AWAKE, "a")
    same = addr(3)
    # delivered in activation 0 and never read (dropped); the address comes back in
    # activation 1, whose packet AWAKE reads: activation 0 falls back (woke nobody)
    b.deliver(STARTS[0] + 1_000, 0, THREAD, same)
    b.deliver(STARTS[1] + 1_000, 0, THREAD, same)
    b.consume_skb(2_500_000, 1, AWAKE, same)
    trace = b.build()
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    assert served[AWAKE].irq_time_ns == 40_000 and served[AWAKE].packets == 1
    assert served[-1].irq_time_ns == 50_000 and served[-1].activations == 1


def test_a_delivery_read_twice_counts_once():
    b, _ = irq_thread_trace([1_000_000], [90_000])
    b.uname = RT
    b.comm(AWAKE, "a")
    b.comm(SLEEPER, "b")
    # AWAKE reads its packet twice (copied out, then freed); SLEEPER reads two packets
    b.deliver(1_010_000, 0, THREAD, addr(0))
    b.deliver(1_010_100, 0, THREAD, addr(1))
    b.deliver(1_010_200, 0, THREAD, addr(2))
    b.copy_datagram(1_500_000, 1, AWAKE, addr(0))
    b.consume_skb(1_500_100, 1, AWAKE, addr(0))
    b.consume_skb(1_500_200, 1, SLEEPER, addr(1))
    b.consume_skb(1_500_300, 1, SLEEPER, addr(2))
    trace = b.build()
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    assert served[AWAKE].packets == 1 and served[AWAKE].irq_time_ns == 30_000
    assert served[SLEEPER].packets == 2 and served[SLEEPER].irq_time_ns == 60_000


def test_reads_by_the_thread_itself_are_not_reads():
    b, _ = irq_thread_trace([1_000_000], [90_000])
    b.uname = RT
    b.comm(AWAKE, "a")
    # the thread frees the skb itself first: the first read by another task counts
    b.deliver(1_010_000, 0, THREAD, addr(0))
    b.consume_skb(1_020_000, 0, THREAD, addr(0))
    b.consume_skb(1_500_000, 1, AWAKE, addr(0))
    trace = b.build()
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    assert THREAD not in served
    assert served[AWAKE].packets == 1 and served[AWAKE].irq_time_ns == 90_000


def test_deliveries_in_hard_irq_context_are_not_the_threads():
    b, _ = irq_thread_trace([1_000_000], [90_000], served={0: SLEEPER})
    b.uname = RT
    b.comm(AWAKE, "a")
    b.comm(SLEEPER, "b")
    # a hard IRQ taken while the thread runs delivers a packet "from" it: not its work
    b.deliver(1_010_000, 0, THREAD, addr(0), flags=FLAG_HARDIRQ)
    b.consume_skb(1_500_000, 1, AWAKE, addr(0))
    trace = b.build()
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    assert AWAKE not in served
    assert served[SLEEPER].irq_time_ns == 90_000 and served[SLEEPER].packets == 0


def test_soft_irq_deliveries_count_only_on_preempt_rt():
    def build(uname: str):
        b, _ = irq_thread_trace([1_000_000], [90_000], served={0: SLEEPER})
        b.uname = uname
        b.comm(AWAKE, "a")
        b.comm(SLEEPER, "b")
        b.deliver(1_010_000, 0, THREAD, addr(0), flags=FLAG_SOFTIRQ)
        b.consume_skb(1_500_000, 1, AWAKE, addr(0))
        return b.build()

    rt = build(RT)
    served = _by_pid(served_processes(rt, activations(rt)[0]))
    assert served[AWAKE].irq_time_ns == 90_000 and served[SLEEPER].irq_time_ns == 0
    assert served[SLEEPER].wakeups == 1 and served[SLEEPER].activations == 0
    plain = build("Linux box 6.18.4 x86_64")
    served = _by_pid(served_processes(plain, activations(plain)[0]))
    assert AWAKE not in served and served[SLEEPER].irq_time_ns == 90_000


def test_deliveries_outside_activations_or_by_others_are_ignored():
    b, _ = irq_thread_trace(ARRIVALS[:2], [50_000, 40_000], served={0: SLEEPER, 1: SLEEPER})
    b.uname = RT
    b.comm(AWAKE, "a")
    b.comm(SLEEPER, "b")
    b.comm(29, "ksoftirqd/1")
    b.deliver(1_500_000, 0, THREAD, addr(0))  # the thread sleeps then
    b.deliver(STARTS[1] + 1_000, 1, 29, addr(1))  # another task's delivery
    b.consume_skb(1_600_000, 1, AWAKE, addr(0))
    b.consume_skb(2_600_000, 1, AWAKE, addr(1))
    trace = b.build()
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    assert AWAKE not in served and served[SLEEPER].irq_time_ns == 90_000


def test_a_trace_without_packet_events_gives_the_wakeup_rule():
    arrivals = [1_000_000, 2_000_000, 3_000_000, 4_000_000]
    b, _ = irq_thread_trace(arrivals, [90_001, 100_001, 50_000, 30_000],
                            served={0: 500, 1: 500, 3: 600})
    b.comm(500, "player")
    b.comm(600, "recorder")
    b.waking(2_050_000, 0, 100, 600, 1)
    trace = b.build()
    assert "netif_receive_skb" not in trace.events
    served = served_processes(trace, activations(trace)[0])
    got = [(s.pid, s.wakeups, s.activations, s.irq_time_ns, s.packets) for s in served]
    assert got == [(500, 2, 2, 90_001 + 50_001, 0), (600, 2, 2, 50_000 + 30_000, 0),
                   (-1, 0, 1, 50_000, 0)]


def test_table_and_json_show_the_packets():
    trace = _two_readers().build()
    served = served_processes(trace, activations(trace)[0])
    text = format_served(served)
    head, first = text.splitlines()[:2]
    assert head.split()[:4] == ["process", "pid", "packets", "wakeups"]
    assert first.split()[:4] == ["sleepy-reader", str(SLEEPER), "4", "3"]
    d = json.loads(json.dumps([s.to_dict() for s in served]))
    assert set(d[0]) == {"pid", "comm", "packets", "wakeups", "activations", "irq_time_ns",
                         "share"}


def test_real_guest_trace_splits_by_the_datagrams_each_receiver_read():
    # tests/data/vm-e1000-two-readers.dat: irq/11-eth0 (pid 325) delivers 1,198 datagrams;
    # seedload 379 reads 199 of them, seedload 380 999
    trace = read_trace(DATA / "vm-e1000-two-readers.dat")
    d = trace.table("netif_receive_skb")
    assert d["skbaddr"].dtype == np.uint64 and int(d["skbaddr"].min()) >= 2**63
    assert int((d["pid"] == 325).sum()) == 1198
    assert len(trace.skb_reads()["ts"]) == len(trace.table("consume_skb")["ts"])
    nic = next(a for a in activations(trace) if a.thread.comm == "irq/11-eth0")
    served = _by_pid(served_processes(trace, nic))
    assert (served[379].packets, served[380].packets) == (199, 999)
    assert abs(served[379].share - 199 / 1198) < 0.005
    assert abs(served[380].share - 999 / 1198) < 0.005
    assert sum(s.irq_time_ns for s in served.values()) == int(nic.exec_ns.sum())
    # the wake-up rule was off by about 10 % of each share
    old = {s.pid: s.share for s in _wakeup_rule(trace, nic)}
    assert old[379] > 1.05 * 199 / 1198 and old[380] < 0.95 * 999 / 1198


def test_selective_read_keeps_every_delivery_and_read():
    whole = read_trace(DATA / "vm-e1000-two-readers.dat")
    some = read_trace(DATA / "vm-e1000-two-readers.dat", select=Selection.of("eth0"))
    assert some.selected_pids is not None
    for name in ("netif_receive_skb", "consume_skb"):
        for col, v in whole.table(name).items():
            assert np.array_equal(v, some.table(name)[col]), (name, col)
    nic = next(a for a in activations(some) if a.thread.comm == "irq/11-eth0")
    assert {s.pid: s.packets for s in served_processes(some, nic)}[380] == 999


def _wakeup_rule(trace, act):
    events = {k: v for k, v in trace.events.items() if "skb" not in k}
    return served_processes(replace(trace, events=events), act)
