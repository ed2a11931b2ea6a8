"""Accounting of IRQ time by the socket rule (irqres.measure.accounting), with known
answers: data queued on a socket by the IRQ thread (sock:sk_data_ready) counts one
packet for the socket's latest reader before it (sock:sock_recv_length, ret > 0)."""

from __future__ import annotations

import numpy as np
from irqres.measure.accounting import Served, by_sockets, served_processes
from irqres.measure.activations import activations
from irqres.trace.reader import FLAG_HARDIRQ, FLAG_SOFTIRQ
from irqres.trace.synthetic import TraceBuilder, irq_thread_trace

RT = "Linux guest 7.3.4+deb13-rt-amd64 x86_64"
THREAD = 100
A, B = 500, 600
ARRIVALS = [1_000_000, 2_000_000, 3_000_000]
EXECS = [90_001, 100_000, 60_000]
STARTS = [a + 3_000 for a in ARRIVALS]  # the thread runs from arrival + 3 us
SK_A, SK_B = 0xFFFF8C13830D0800, 0xFFFF8C13830D1000  # the readers' sockets


def skb(i: int) -> int:
    return 0xFFFF8AEE81A88000 + 0x100 * i


def _by_pid(served: list[Served]) -> dict[int, Served]:
    return {s.pid: s for s in served}


def _served(b: TraceBuilder) -> dict[int, Served]:
    trace = b.build()
    return _by_pid(served_processes(trace, activations(trace)[0]))


def _times(b: TraceBuilder) -> dict[int, int]:
    return {p: s.irq_time_ns for p, s in _served(b).items()}


def _base(execs=EXECS, served=None) -> TraceBuilder:
    b, _ = irq_thread_trace(ARRIVALS[:len(execs)], execs, served=served or {})
    b.uname = RT
    b.comm(A, "reader-a")
    b.comm(B, "reader-b")
    return b


def _seven_three(with_sockets: bool = True) -> TraceBuilder:
    """As on Linux 7.3: each reader reads its socket once before the first activation;
    activation 0 queues 3 datagrams for A and 1 for B, activation 1 one each, activation
    2 two for B. The skbs are freed by the thread itself (the deferred free), so the skb
    rule finds no read by a reader; the readers are awake (no wake-ups)."""
    b = _base()
    b.recv_length(500_000, 1, A, SK_A, 512)
    b.recv_length(500_100, 1, B, SK_B, 512)
    plan = [(0, SK_A), (0, SK_A), (0, SK_A), (0, SK_B), (1, SK_A), (1, SK_B), (2, SK_B),
            (2, SK_B)]
    for i, (k, sk) in enumerate(plan):
        t = STARTS[k] + 1_000 + 100 * i
        b.deliver(t, 0, THREAD, skb(i), flags=FLAG_SOFTIRQ)
        if with_sockets:
            b.data_ready(t + 10, 0, THREAD, sk, flags=FLAG_SOFTIRQ)
        b.recv_length(ARRIVALS[k] + 500_000 + i, 1, A if sk == SK_A else B, sk, 512)
        b.consume_skb(STARTS[k] + 5_000 + i, 0, THREAD, skb(i), flags=FLAG_SOFTIRQ)
    return b


def test_socket_rule_splits_where_the_skbs_were_freed_by_the_thread():
    b = _seven_three()
    trace = b.build()
    assert by_sockets(trace)
    served = _by_pid(served_processes(trace, activations(trace)[0]))
    # activation 0: 90,001 * 3/4 = 67,500 (floor) + the remainder 1 to A, 22,500 to B;
    # activation 1: 50,000 each; activation 2: all to B
    assert served[A].irq_time_ns == 67_501 + 50_000
    assert served[B].irq_time_ns == 22_500 + 50_000 + 60_000
    assert (served[A].packets, served[B].packets) == (4, 4)
    assert (served[A].activations, served[B].activations) == (2, 3)
    assert sum(s.irq_time_ns for s in served.values()) == sum(EXECS)
    # without the socket events the skb rule sees no reader: nobody is served
    old = _served(_seven_three(with_sockets=False))
    assert set(old) == {-1} and old[-1].irq_time_ns == sum(EXECS)


def test_a_delivery_goes_to_the_latest_reader_at_or_before_it():
    b = _base()
    # the socket is read by A, then by B (a handed-over socket): a delivery counts for
    # whoever read it last before (a read at the very time of the delivery counts)
    b.recv_length(500_000, 1, A, SK_A, 100)
    b.data_ready(STARTS[0] + 1_000, 0, THREAD, SK_A)
    b.recv_length(1_500_000, 1, B, SK_A, 100)
    b.recv_length(STARTS[1] + 1_000, 1, A, SK_A, 100)
    b.data_ready(STARTS[1] + 1_000, 0, THREAD, SK_A)
    b.data_ready(STARTS[2] + 1_000, 0, THREAD, SK_A)
    b.recv_length(STARTS[2] + 500, 1, B, SK_A, 100)
    served = _served(b)
    assert served[A].irq_time_ns == 90_001 + 100_000 and served[A].packets == 2
    assert served[B].irq_time_ns == 60_000 and served[B].packets == 1


def test_failed_reads_and_the_threads_own_do_not_make_a_reader():
    b = _base(EXECS[:1])
    b.recv_length(500_000, 1, A, SK_A, 64)
    b.recv_length(600_000, 1, B, SK_A, -11)  # EAGAIN: B polled, read nothing
    b.recv_length(700_000, 1, B, SK_A, 0)
    b.recv_length(800_000, 0, THREAD, SK_A, 64)
    b.data_ready(STARTS[0] + 1_000, 0, THREAD, SK_A)
    assert _times(b) == {A: 90_001}


def test_a_socket_not_read_before_the_delivery_falls_back():
    b = _base(EXECS[:2], served={0: B, 1: B})
    # activation 0 queues data on SK_A before anyone read it (the live daemon cannot
    # look ahead): not counted, the wake-up decides; A's read comes after
    b.data_ready(STARTS[0] + 1_000, 0, THREAD, SK_A)
    b.recv_length(1_500_000, 1, A, SK_A, 64)
    b.data_ready(STARTS[1] + 1_000, 0, THREAD, SK_A)
    served = _served(b)
    assert served[A].irq_time_ns == 100_000 and served[A].packets == 1
    assert served[B].irq_time_ns == 90_001 and served[B].wakeups == 2
    assert served[B].activations == 1


def test_hard_irq_deliveries_are_not_the_threads():
    b = _base(EXECS[:1], served={0: B})
    b.recv_length(500_000, 1, A, SK_A, 64)
    b.data_ready(STARTS[0] + 1_000, 0, THREAD, SK_A, flags=FLAG_HARDIRQ)
    served = _served(b)
    assert A not in served and served[B].irq_time_ns == 90_001


def test_deliveries_by_others_or_outside_activations_are_ignored():
    b = _base(EXECS[:2], served={0: B, 1: B})
    b.comm(29, "ksoftirqd/1")
    b.recv_length(500_000, 1, A, SK_A, 64)
    b.data_ready(1_500_000, 0, THREAD, SK_A)  # the thread sleeps then
    b.data_ready(STARTS[1] + 1_000, 1, 29, SK_A)  # another task's delivery
    served = _served(b)
    assert A not in served and served[B].irq_time_ns == 190_001


def test_with_skb_and_socket_events_each_packet_counts_once():
    # 6.1/6.12-like: the readers free the skbs themselves, and the socket events exist:
    # the socket rule alone counts, so each reader has its 4 packets, not 8
    b = _seven_three()
    for i, reader in enumerate([A, A, A, B, A, B, B, B]):
        b.consume_skb(3_800_000 + i, 1, reader, skb(i))
    served = _served(b)
    assert (served[A].packets, served[B].packets) == (4, 4)
    assert served[A].irq_time_ns == 67_501 + 50_000


def test_without_both_socket_events_the_skb_rule_is_unchanged():
    def skb_trace(extra: bool) -> TraceBuilder:
        b = _base()
        for i, (k, reader) in enumerate([(0, A), (0, A), (0, B), (1, B), (2, A)]):
            b.deliver(STARTS[k] + 1_000 + 100 * i, 0, THREAD, skb(i))
            b.consume_skb(ARRIVALS[k] + 500_000 + i, 1, reader, skb(i))
        if extra:  # reads of a socket, but no sk_data_ready: not the socket rule
            b.recv_length(500_000, 1, B, SK_A, 64)
        return b

    plain = skb_trace(extra=False).build()
    assert "sk_data_ready" not in plain.events and not by_sockets(plain)
    want = _times(skb_trace(extra=False))
    assert want == {A: 60_001 + 60_000, B: 30_000 + 100_000}
    assert _times(skb_trace(extra=True)) == want


def test_synthetic_socket_columns():
    b = _base(EXECS[:1])
    b.data_ready(STARTS[0] + 1_000, 0, THREAD, SK_A, flags=FLAG_SOFTIRQ)
    b.recv_length(500_000, 1, A, SK_A, -11)
    trace = b.build()
    d, r = trace.table("sk_data_ready"), trace.table("sock_recv_length")
    assert d["skaddr"].dtype == np.uint64 and int(d["skaddr"][0]) == SK_A
    assert r["sk"].dtype == np.uint64 and int(r["sk"][0]) == SK_A
    assert r["ret"].dtype == np.int32 and int(r["ret"][0]) == -11
    assert int(d["flags"][0]) == FLAG_SOFTIRQ and int(r["pid"][0]) == A
