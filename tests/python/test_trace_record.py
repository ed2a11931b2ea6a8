"""The host-safe recorder: tracefs settings put back, errors named, a real recording."""

from __future__ import annotations

import os

import pytest
from irqres.errors import TraceError
from irqres.measure.softirq import SOFTIRQ_NAMES, softirq_runs
from irqres.trace import read_trace
from irqres.trace.record import _restore, _snapshot, buffer_kb, record

TRACEFS = "/sys/kernel/tracing"


def fake_tracefs(root):
    (root / "options").mkdir()
    files = {"tracing_on": "1\n", "buffer_size_kb": "7 (expanded: 1408)\n",
             "current_tracer": "nop\n", "set_event": "", "options/overwrite": "1\n"}
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "available_events").write_text("sched:sched_switch\n")
    return files


def test_settings_changed_meanwhile_are_put_back(tmp_path):
    fake_tracefs(tmp_path)
    before = _snapshot(str(tmp_path))
    (tmp_path / "tracing_on").write_text("0\n")
    (tmp_path / "buffer_size_kb").write_text("2048\n")
    (tmp_path / "options/overwrite").write_text("0\n")
    _restore(str(tmp_path), before)
    assert (tmp_path / "tracing_on").read_text().strip() == "1"
    assert (tmp_path / "buffer_size_kb").read_text().strip() == "1408"  # the expanded size
    assert (tmp_path / "options/overwrite").read_text().strip() == "1"
    assert (tmp_path / "current_tracer").read_text() == "nop\n"  # unchanged: not written


def test_a_buffer_the_kernel_grew_to_its_size_is_left_alone(tmp_path):
    # the first event enabled anywhere grows the top buffer, for good, to the size it
    # was to grow to, in whole pages: "7 (expanded: 1408)" reads "1410" from then on
    fake_tracefs(tmp_path)
    before = _snapshot(str(tmp_path))
    (tmp_path / "buffer_size_kb").write_text("1410\n")
    _restore(str(tmp_path), before)
    assert (tmp_path / "buffer_size_kb").read_text() == "1410\n"  # not written: 1408


@pytest.mark.parametrize("text, kb", [("7 (expanded: 1408)\n", 1408), ("1410\n", 1410),
                                      ("16384", 16384), ("", None), ("X\n", None)])
def test_buffer_kb_reads_both_forms(text, kb):
    assert buffer_kb(text) == kb


def test_bad_requests_are_named(tmp_path):
    fake_tracefs(tmp_path)
    out = str(tmp_path / "t.dat")
    with pytest.raises(TraceError, match="give a command to run or a duration"):
        record(out, tracefs=str(tmp_path))
    with pytest.raises(TraceError, match="duration must be positive"):
        record(out, duration_ns=0, tracefs=str(tmp_path))
    with pytest.raises(TraceError, match="no-such-trace-cmd not found"):
        record(out, duration_ns=1, tracefs=str(tmp_path), trace_cmd="no-such-trace-cmd")
    with pytest.raises(TraceError, match=r"kernel has no sched:sched_waking, .*_exit event"):
        record(out, duration_ns=1, tracefs=str(tmp_path))


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="recording needs root (tracefs writes)")
@pytest.mark.skipif(not os.path.isfile(f"{TRACEFS}/available_events"),
                    reason="tracefs is not mounted at /sys/kernel/tracing")
def test_record_for_a_duration(tmp_path):
    out = tmp_path / "d.dat"
    res = record(str(out), duration_ns=200_000_000, buffer_kb=512)
    assert res.returncode is None and res.duration_ns >= 200_000_000
    assert set(res.overrun) == set(range(len(res.overrun))) and len(res.overrun) >= 1
    t = read_trace(out, check_events=False)
    assert t.buffer == f"irqres-{os.getpid()}"
    assert len(t.table("sched_switch")["ts"]) > 0
    # soft IRQs (timer, RCU at least) are recorded and read back as runs
    assert len(t.table("softirq_entry")["ts"]) > 0 and len(t.table("softirq_exit")["ts"]) > 0
    runs = softirq_runs(t, vecs=tuple(range(len(SOFTIRQ_NAMES))))
    assert len(runs.start_ns) > 0 and (runs.ran_ns >= 0).all()
    assert not os.path.isdir(f"{TRACEFS}/instances/irqres-{os.getpid()}")
