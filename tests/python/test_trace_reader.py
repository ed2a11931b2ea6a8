"""The native trace reader on real host traces, and on files that are not good traces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from irqres.errors import TraceError
from irqres.trace import RECORD_COMMAND, read_trace
from irqres.trace.reader import parse_cpustats

DATA = Path(__file__).resolve().parents[1] / "data"
FAKE = DATA / "host-fakeirq.dat"


@pytest.fixture(scope="module")
def trace():
    return read_trace(FAKE)


def test_columns_have_the_documented_types_and_are_time_ordered(trace):
    assert trace.ncpus == 2
    assert trace.buffer.startswith("irqres-")  # irqres record keeps events in an instance
    for name in ("sched_switch", "sched_waking", "sched_wakeup", "irq_handler_entry",
                 "irq_handler_exit", "sched_migrate_task"):
        assert name in trace.events
        cols = trace.events[name]
        assert cols["ts"].dtype == np.int64 and cols["cpu"].dtype == np.int32
        assert np.all(np.diff(cols["ts"]) >= 0)
        lens = {len(v) for v in cols.values()}
        assert len(lens) == 1
    sw = trace.events["sched_switch"]
    assert sw["prev_state"].dtype == np.int64
    assert len(sw["ts"]) > 500
    assert trace.first_ts <= sw["ts"][0] and sw["ts"][-1] <= trace.last_ts
    assert set(np.unique(sw["cpu"]).tolist()) <= {0, 1}
    assert trace.nevents == trace.nrecords  # only these events were recorded: none lost


def test_comms_are_stored_once_per_pid_and_name(trace):
    assert len(trace.comms) == len(set(trace.comms))
    sw = trace.events["sched_switch"]
    assert len(trace.comms) < len(sw["ts"]) / 2
    assert "irq/99-fakedev" in {c for _, c in trace.comms}
    pid = next(p for p, c in trace.comms if c == "irq/99-fakedev")
    assert trace.irq_threads()[pid] == (99, "irq/99-fakedev")
    # the fake thread was forked from python3 and renamed itself: both names are kept
    assert trace.names_of(pid)[-1] == "irq/99-fakedev"
    assert trace.names_of(-12345) == []


def test_switch_pids_agree_with_waking_events(trace):
    # every task woken by the fake device is later switched in
    pid = next(p for p, c in trace.comms if c == "irq/99-fakedev")
    wk = trace.events["sched_waking"]
    sw = trace.events["sched_switch"]
    woken = wk["ts"][wk["pid"] == pid]
    runs = sw["ts"][sw["next_pid"] == pid]
    assert len(woken) > 100
    # each wake-up is followed by a switch-in (more of them when the busy loop is preempted)
    assert len(runs) >= len(woken) - 2
    assert np.all(np.searchsorted(runs, woken[:-2]) < len(runs))


def test_irq_entries_carry_their_handler_name(trace):
    entry = trace.events["irq_handler_entry"]
    for irq, idx in zip(entry["irq"][:50], entry["name_idx"][:50], strict=True):
        assert trace.irq_names[idx][0] == irq


def test_overrun_counters_become_gaps_before_the_first_record():
    t = read_trace(DATA / "host-overrun.dat")
    assert len(t.lost["ts"]) >= 1
    assert np.all(t.lost["prev_ts"] == -1)
    assert np.all(t.lost["count"] > 0)
    assert len(set(t.lost["cpu"].tolist())) == len(t.lost["cpu"])  # one gap per CPU


def test_parse_cpustats_picks_the_buffer_section():
    text = ("CPU: 0\noverrun: 0\ndropped events: 0\n\nCPU: 1\noverrun: 0\n\n"
            "Buffer: inst\n\nCPU: 0\noverrun: 12\ndropped events: 3\n\nCPU: 1\noverrun: 0\n")
    assert parse_cpustats(text, "inst") == {0: {"overrun": 12, "dropped": 3},
                                            1: {"overrun": 0, "dropped": 0}}
    assert parse_cpustats(text, "")[0] == {"overrun": 0, "dropped": 0}


def test_missing_events_name_the_record_command():
    with pytest.raises(TraceError) as exc:
        read_trace(DATA / "host-noevents.dat")
    msg = str(exc.value)
    assert "host-noevents.dat" in msg and "sched:sched_switch" in msg
    assert RECORD_COMMAND in msg
    t = read_trace(DATA / "host-noevents.dat", check_events=False)
    assert len(t.table("sched_switch")["ts"]) == 0


def test_buffer_selection():
    with pytest.raises(TraceError, match="no buffer instance named 'nope'"):
        read_trace(FAKE, buffer="nope")
    with pytest.raises(TraceError, match="no records at all"):
        read_trace(FAKE, buffer="")  # the top level of this file is empty


@pytest.mark.parametrize("size", [0, 1, 7, 100, 4096, 300_000, 1_000_000, -1000])
def test_truncated_copies_are_errors_not_crashes(tmp_path, size):
    data = FAKE.read_bytes()
    cut = len(data) + size if size < 0 else size
    p = tmp_path / "cut.dat"
    p.write_bytes(data[:cut])
    with pytest.raises(TraceError) as exc:
        read_trace(p)
    assert str(p) in str(exc.value)
    if cut == 0:
        assert "empty" in str(exc.value)


def test_damaged_data_section_is_an_error_or_readable_never_a_crash(tmp_path):
    data = bytearray(FAKE.read_bytes())
    rng = np.random.default_rng(3)
    # scribble over the tail, where the ring-buffer pages are
    for pos in rng.integers(len(data) - 60_000, len(data), size=400):
        data[int(pos)] = int(rng.integers(0, 256))
    p = tmp_path / "damaged.dat"
    p.write_bytes(bytes(data))
    try:
        t = read_trace(p, check_events=False)
    except TraceError as exc:
        assert str(p) in str(exc)
    else:
        assert t.nrecords >= 0


def test_garbage_directory_and_missing_files(tmp_path):
    g = tmp_path / "garbage.dat"
    g.write_bytes(np.random.default_rng(1).integers(0, 256, 50_000, dtype=np.uint8).tobytes())
    with pytest.raises(TraceError, match="not a trace-cmd data file"):
        read_trace(g)
    with pytest.raises(TraceError, match="not a regular file"):
        read_trace(tmp_path)
    with pytest.raises(TraceError, match="No such file"):
        read_trace(tmp_path / "missing.dat")
    # the magic alone is not enough
    fake = tmp_path / "magic.dat"
    fake.write_bytes(b"\x17\x08\x44tracing6\x00" + b"\x00" * 5000)
    with pytest.raises(TraceError, match="truncated or damaged"):
        read_trace(fake)


def test_a_damaged_header_is_named_with_the_errno_libtracecmd_gave(tmp_path):
    """libtracecmd sets -errno on some paths: the message names the cause, never
    "Unknown error -22"."""
    data = bytearray((DATA / "vm-e1000-udp.dat").read_bytes())
    data[247293] ^= 0xFF        # inside the section headers: tracecmd_open refuses it
    bad = tmp_path / "damaged.dat"
    bad.write_bytes(bytes(data))
    with pytest.raises(TraceError, match=r"damaged\.dat: .*\(Invalid argument\)") as e:
        read_trace(bad)
    assert "Unknown error" not in str(e.value)



def test_progress_is_reported_and_an_exception_in_it_stops_the_reading():
    from irqres import _tracereader

    seen = []
    raw = _tracereader.read(str(FAKE), progress=seen.append, progress_every=1000)
    assert seen == [1000, 2000, 3000, 4000] and raw["nrecords"] == 4401

    def stop(n):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _tracereader.read(str(FAKE), progress=stop, progress_every=10)
    with pytest.raises(TypeError, match="callable"):
        _tracereader.read(str(FAKE), progress=3)
    with pytest.raises(ValueError, match="at least 1"):
        _tracereader.read(str(FAKE), progress=print, progress_every=0)


@pytest.mark.parametrize(("name", "pattern", "tasks"), [
    ("vm-e1000-udp.dat", None, ()),
    ("vm-e1000-udp.dat", "irq/11-*", ()),
    ("vm-e1000-udp.dat", "eth0", ("python3",)),
    ("vm-e1000-udp.dat", None, ("rcuc/*", "ktimers/0")),
])
def test_a_selection_keeps_exactly_what_the_analysis_of_those_threads_uses(name, pattern,
                                                                           tasks):
    from irqres.report import Options, analyze
    from irqres.trace import Selection

    full = read_trace(DATA / name)
    part = read_trace(DATA / name, select=Selection.of(pattern, tasks))
    assert full.selected_pids is None and part.selected_pids
    assert part.nrecords == full.nrecords and part.comms == full.comms
    assert part.seen == {e: len(t["ts"]) for e, t in full.events.items()}
    assert part.nevents < full.nevents
    opts = Options(pattern=pattern, tasks=tasks, mc_jobs=0)
    a, b = analyze(full, opts), analyze(part, opts)
    assert len(a.threads) == len(b.threads) > 0
    for x, y in zip(a.threads, b.threads, strict=True):
        assert x.act.thread == y.act.thread
        for col in ("start_ns", "end_ns", "exec_ns", "irqs", "irq_ts_ns"):
            assert np.array_equal(getattr(x.act, col), getattr(y.act, col)), col
        assert x.served == y.served and x.uncredited == y.uncredited
        assert x.stats.to_dict() == y.stats.to_dict()
        xr, yr = x.recommendation, y.recommendation
        assert (xr is None) == (yr is None)
        if xr is not None:
            assert [r.to_dict() for r in xr.rows] == [r.to_dict() for r in yr.rows]
    assert [(ln.irq, ln.ts_ns.tolist()) for ln in a.lines] == [
        (ln.irq, ln.ts_ns.tolist()) for ln in b.lines]


def test_a_thread_that_renamed_itself_is_analysed_from_its_selected_name_on():
    # fake_irq.py's processes start as python3 and name themselves fake-*: a read that
    # selects fake-* keeps their rows from the rename on; the activations are the same
    from irqres.report import Options, analyze
    from irqres.trace import Selection

    tasks = ("fake-consumer", "fake-device")
    opts = Options(tasks=tasks, mc_jobs=0)
    part = analyze(read_trace(DATA / "host-fakeirq.dat", select=Selection.of(None, tasks)),
                   opts)
    full = analyze(read_trace(DATA / "host-fakeirq.dat"), opts)
    for x, y in zip(full.threads, part.threads, strict=True):
        assert np.array_equal(x.act.start_ns, y.act.start_ns)
        assert np.array_equal(x.act.exec_ns, y.act.exec_ns)
        assert y.act.busy_ns <= x.act.busy_ns


def test_missing_events_are_reported_from_the_whole_file_with_a_selection():
    from irqres.trace import Selection

    with pytest.raises(TraceError, match="no sched:sched_switch"):
        read_trace(DATA / "host-noevents.dat", select=Selection())
