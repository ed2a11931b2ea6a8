"""Records with impossible timestamps (a damaged trace): dropped with a warning, taken as a
gap, never a span of centuries, a rate of 0.0/s or an inter-arrival of years. Synthetic
traces here; a damaged real trace in test_trace_mutants.py."""

from __future__ import annotations

import numpy as np
import pytest
from irqres.report import Options, analyze
from irqres.trace.reader import parse_cpustats_now
from irqres.trace.synthetic import damage_times, irq_thread_trace
from irqres.trace.timecheck import (
    AFTER_END,
    FAR,
    NEGATIVE,
    OUT_OF_ORDER,
    drop_damaged_times,
)

MS = 1_000_000
S = 1_000_000_000
# the trace runs 2 s from 100,000 s of its clock (a day of uptime), an activation every
# 2 ms on CPU 0
BASE = 100_000 * S
ARRIVALS = [S + k * 2 * MS for k in range(1000)]


def build():
    b, exp = irq_thread_trace(ARRIVALS, [200_000] * len(ARRIVALS))
    trace = b.build()
    for t in trace.events.values():
        t["ts"] += BASE - S
    trace.first_ts += BASE - S
    trace.last_ts += BASE - S
    return trace, exp


def report_of(trace):
    return analyze(trace, Options(periods_ns=[5 * MS])).threads[0]


def test_a_healthy_trace_is_left_as_it_is():
    trace, _ = build()
    before = {e: {c: v.copy() for c, v in t.items()} for e, t in trace.events.items()}
    span = (trace.first_ts, trace.last_ts)
    end = trace.last_ts + MS
    assert drop_damaged_times(trace, {0: end, 1: end}) == []
    assert trace.time_jumps == [] and (trace.first_ts, trace.last_ts) == span
    for e, t in trace.events.items():
        for c, v in t.items():
            assert np.array_equal(v, before[e][c]), (e, c)


@pytest.mark.parametrize("delta", [1 << 62, 1 << 35, -(1 << 33), -(S // 2)])
def test_a_run_moved_in_the_middle_is_dropped_and_cut(delta):
    """A page's worth of CPU 0's records moved ahead (146 years, 34 s) or back (8.6 s,
    0.5 s, inside the trace): dropped as out of order, the rest analysed as if the page
    had been lost."""
    good, _ = build()
    want = report_of(good)
    trace, _ = build()
    moved = damage_times(trace, 0, BASE + 600 * MS, BASE + 610 * MS, delta)
    jumps = drop_damaged_times(trace)
    assert len(jumps) == 1, [j.to_dict() for j in jumps]
    j = jumps[0]
    assert (j.cpu, j.reason, j.count) == (0, OUT_OF_ORDER, moved)
    assert j.after_ns < BASE + 600 * MS <= BASE + 610 * MS <= j.before_ns
    assert (j.jump_ns > 0) == (delta > 0) and abs(j.jump_ns) > abs(delta) // 2
    assert (trace.first_ts, trace.last_ts) == (good.first_ts, good.last_ts)
    for t in trace.events.values():
        assert np.all(np.diff(t["ts"]) >= 0)            # back in time order
    got = report_of(trace)
    # the 5 activations of the page are gone, the one across its edge discarded
    assert want.stats.activations - 7 <= got.stats.activations < want.stats.activations
    assert got.stats.interarrival.max_ns <= want.stats.interarrival.max_ns
    assert got.stats.exec.max_ns == want.stats.exec.max_ns
    assert got.stats.dropped_lost >= 1 and want.stats.dropped_lost == 0
    assert got.stats.irq_rate_hz == pytest.approx(want.stats.irq_rate_hz, rel=0.02)


def test_a_run_moved_past_the_recordings_end_is_dropped():
    """The CPU's last records moved 18 min ahead: past the clock the stats read at the
    end; without stats the move is too small to tell from a quiet CPU."""
    trace, _ = build()
    end = trace.last_ts
    moved = damage_times(trace, 0, end - 10 * MS, end + 1, 1 << 40)
    jumps = drop_damaged_times(trace, {0: end + MS, 1: end + MS})
    assert [(j.cpu, j.reason, j.count) for j in jumps] == [(0, AFTER_END, moved)]
    assert jumps[0].before_ns == np.iinfo(np.int64).max
    assert trace.last_ts < end and trace.last_ts - trace.first_ts < 3 * S
    trace, _ = build()
    damage_times(trace, 0, end - 10 * MS, end + 1, 1 << 40)
    assert drop_damaged_times(trace) == []


def test_a_run_far_outside_the_trace_is_dropped_without_stats():
    trace, _ = build()
    end = trace.last_ts
    moved = damage_times(trace, 0, end - 10 * MS, end + 1, 1 << 45)     # 9.8 hours
    jumps = drop_damaged_times(trace)
    assert [(j.cpu, j.reason, j.count) for j in jumps] == [(0, FAR, moved)]
    assert trace.last_ts - trace.first_ts < 3 * S
    trace, _ = build()
    moved = damage_times(trace, 0, 0, BASE + 10 * MS, -(1 << 45))      # the first page back
    jumps = drop_damaged_times(trace)
    assert [(j.cpu, j.reason, j.count) for j in jumps] == [(0, FAR, moved)]


def test_negative_times_are_dropped():
    trace, _ = build()
    moved = damage_times(trace, 0, BASE + 600 * MS, BASE + 610 * MS, -(1 << 63) + 1)
    jumps = drop_damaged_times(trace)
    assert [(j.cpu, j.reason, j.count) for j in jumps] == [(0, NEGATIVE, moved)]
    assert trace.first_ts > 0


def test_the_step_the_reader_saw_places_the_run_in_the_file():
    trace, _ = build()
    damage_times(trace, 0, BASE + 600 * MS, BASE + 610 * MS, 1 << 62)
    ahead = BASE + 609 * MS + (1 << 62)

    def col(*v, dt=np.int64):
        return np.array(v, dtype=dt)

    # a step on CPU 1 and one out of another time: not this run's
    steps = {"cpu": col(1, 0, 0, dt=np.int32), "index": col(7, 8, 3000),
             "offset": col(100, 200, 123456), "prev_ts": col(ahead, BASE + 5 * MS, ahead),
             "ts": col(BASE, BASE + 4 * MS, BASE + 610 * MS)}
    (j,) = drop_damaged_times(trace, steps=steps)
    assert (j.record, j.offset) == (3000, 123456)
    assert j.to_dict()["offset"] == 123456
    assert "its time steps back at its record 3000 (file offset 123456)" in j.describe()


def test_the_jump_is_reported_in_text_and_json():
    trace, _ = build()
    moved = damage_times(trace, 0, BASE + 600 * MS, BASE + 610 * MS, 1 << 62)
    drop_damaged_times(trace)
    rep = analyze(trace, Options(periods_ns=[5 * MS]))
    text = rep.text()
    assert f"damaged timestamps: {moved} records dropped in 1 runs" in text
    assert f"  CPU 0: {moved} records (irq_handler_entry 5, irq_handler_exit 5, " \
        "sched_switch 10, sched_wakeup 5, sched_waking 5) stamped 4611786019.027387904s to " \
        "4611786019.035590904s dropped (out of order): 4611686018.429387904s ahead of the " \
        "CPU's records around them, after its record at +1.598202999s; activations across " \
        "them are discarded" in text
    assert "lost events: none" in text
    d = rep.to_dict()["trace"]
    assert d["damaged_timestamps"]["records_dropped"] == moved
    run = d["damaged_timestamps"]["runs"][0]
    assert run["cpu"] == 0 and run["reason"] == OUT_OF_ORDER and run["jump_ns"] > 1 << 61
    assert d["lost"]["gaps"] == 0 and d["last_ts_ns"] - d["first_ts_ns"] < 3 * S


def test_stats_now_ts():
    text = ("CPU: 0\nentries: 7\noverrun: 0\noldest event ts:    50.439743\n"
            "now ts:    56.682105\ndropped events: 0\n"
            "CPU: 1\nentries: 3\nnow ts: garbage\n")
    assert parse_cpustats_now(text, "") == {0: 56_682_105_000}
