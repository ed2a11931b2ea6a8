"""The tune loop against a fake irqresd whose `stats` come from a small CBS model."""

from __future__ import annotations

import csv
import itertools
import threading
import time

import pytest
from fakes import LOAD_ADAPTIVE as ADAPTIVE
from fakes import LOAD_SAMPLE_NS as SAMPLE
from fakes import FakeDaemon, make_target
from fakes import LoadModel as Model
from irqres.control import ControlError
from irqres.control.admission import cpu_count
from irqres.control.csvlog import LOG_COLUMNS, CsvLog
from irqres.control.loop import (
    REFUSAL_HOLD_NS,
    RESTORE_TIMEOUT_S,
    Tuner,
)
from irqres.units import parse_duration


def run_until_done(tuner: Tuner, model: Model, limit: float = 30.0) -> dict:
    threading.Thread(target=lambda: (model.done.wait(limit), tuner.stop()),
                     daemon=True).start()
    return tuner.run()


def test_budget_follows_step_load(daemon, tmp_path):
    model = Model(daemon, [(150, 2_000_000), (250, 6_000_000), (250, 3_000_000)])
    daemon.stats_fn = model
    log = tmp_path / "tune.csv"
    tuner = Tuner(daemon.path, log_path=str(log))
    summary = run_until_done(tuner, model)
    assert summary["load"]["sent"] > 0
    q = model.budgets
    assert min(q) >= 1_000_000 and max(q) <= 9_000_000          # within the clamps
    assert all(abs(x - 2_000_000) < 100_000 for x in q[:150])    # steady: holds its budget
    high = sum(q[250:400]) / 150
    low = sum(q[500:650]) / 150
    assert 5_000_000 < high < 8_000_000, high                    # up with the load ...
    assert 2_200_000 < low < 4_500_000 and low < 0.7 * high, low  # ... and down again
    rows = list(csv.reader(log.open()))
    assert tuple(rows[0]) == LOG_COLUMNS
    assert len(rows) > 600 and all(r[1] == "load" for r in rows[1:])
    sent = [int(r[6]) for r in rows[1:] if r[6]]
    assert sent and all(1_000_000 <= x <= 9_000_000 for x in sent)
    assert any(r.startswith("set-budget load ") for r in daemon.requests)


def test_applies_the_profile_when_irqresd_does_not_hold_it(daemon, tmp_path):
    prof = tmp_path / "adaptive.yaml"
    prof.write_text("version: 1\n")
    model = Model(daemon, [(20, 2_000_000)])
    daemon.stats_fn = model
    run_until_done(Tuner(daemon.path, profile=str(prof)), model)
    assert daemon.requests[:3] == ["status", f"apply {prof} {prof.stat().st_size}", "status"]
    # already held: not applied again
    daemon.requests.clear()
    model2 = Model(daemon, [(5, 2_000_000)])
    daemon.stats_fn = model2
    run_until_done(Tuner(daemon.path, profile=str(prof)), model2)
    assert not any(r.startswith("apply") for r in daemon.requests)


def test_survives_an_irqresd_restart(daemon, tmp_path):
    prof = tmp_path / "adaptive.yaml"
    prof.write_text("version: 1\n")
    model = Model(daemon, [(200, 6_000_000)])
    daemon.stats_fn = model
    holder = {}

    def restart():
        while model.calls < 50:
            time.sleep(0.005)
        daemon.stop()
        time.sleep(0.4)                   # the tuner must back off and retry meanwhile
        new = FakeDaemon(daemon.path, targets=daemon.targets, profile=None)
        new.stats_fn, new.stats_clock = model, daemon.stats_clock
        holder["new"] = new.start()

    threading.Thread(target=restart, daemon=True).start()
    tuner = Tuner(daemon.path, profile=str(prof), backoff_ns=(50_000_000, 200_000_000))
    try:
        run_until_done(tuner, model)
    finally:
        if "new" in holder:
            holder["new"].stop()
    assert tuner.reconnects >= 1 and model.done.is_set()
    new_reqs = holder["new"].requests
    # the new daemon got the profile
    assert new_reqs[:2] == ["status", f"apply {prof} {prof.stat().st_size}"]
    assert any(r.startswith("set-budget load") for r in new_reqs)


def test_thread_that_disappears_and_comes_back(daemon, tmp_path):
    model = Model(daemon, [(100, 2_000_000), (200, 6_000_000)])
    model.gone = range(60, 90)
    daemon.stats_fn = model
    log = tmp_path / "tune.csv"
    tuner = Tuner(daemon.path, log_path=str(log))
    run_until_done(tuner, model)
    rows = list(csv.reader(log.open()))[1:]
    # one row per interval with a thread; none while it was gone; the returning thread
    # (a new pid) is primed for one interval, then controlled again and follows the load
    assert 250 <= len(rows) <= model.calls - 30 - 1   # (calls go on until it is stopped)
    assert max(model.budgets[model.done_at - 100:model.done_at]) > 4_000_000


def run_refused(daemon, phases: list, error: str,
                errno: str | None = None) -> tuple[dict, list[str], int]:
    """The tuner against a daemon that refuses every set-budget with ``error`` (and
    ``errno``): its summary, the set-budget requests made while the load lasted, and the
    run's wall ns."""
    model = Model(daemon, phases)
    daemon.stats_fn = model
    daemon.override["set-budget"] = {"ok": False, "error": error,
                                     **({"errno": errno} if errno else {})}
    t0 = time.monotonic_ns()
    summary = run_until_done(Tuner(daemon.path), model)
    took = time.monotonic_ns() - t0
    asks = [r for r in daemon.requests[:model.requests_at_done] if r.startswith("set-budget")]
    assert summary["load"]["sent"] == 0 and summary["load"]["budget_ns"] == 2_000_000
    return summary, asks, took


def test_refused_budget_is_held_back(daemon, caplog):
    _, asks, took = run_refused(daemon, [(60, 6_000_000)],
                                "set-budget load: EBUSY: root domain 0-1 has no bandwidth left",
                                "EBUSY")
    assert "no bandwidth left" in caplog.text
    # after a refused raise the tuner does not ask again for REFUSAL_HOLD_NS (wall
    # time), so its asks are that far apart: at most one per hold in the run, however
    # many of the 60 intervals a loaded machine fits in it (asking at every interval,
    # ~20 asks, fails this unless the 60 intervals took 20 s). Counted while the load
    # lasts: once it is over the tuner lowers the budget, which is refused too, until
    # run_until_done's thread gets the CPU to stop it.
    assert 1 <= len(asks) <= 1 + took // REFUSAL_HOLD_NS, (asks, took)


def test_refused_decrease_is_held_back(daemon, caplog):
    """A refused decrease (whatever the cause) is not asked again at every interval either:
    at most once per REFUSAL_HOLD_NS of wall time while the light load lasts."""
    _, asks, took = run_refused(daemon, [(80, 300_000)],
                                "set-budget load: no thread of target 'load' left")
    assert "no thread of target" in caplog.text
    # every ask is a decrease, and they come one per hold at most
    assert all(parse_duration(r.split()[2]) < 2_000_000 for r in asks), asks
    assert 1 <= len(asks) <= 1 + took // REFUSAL_HOLD_NS, (asks, took)


def test_a_decrease_refused_for_its_size_comes_in_smaller_steps(daemon):
    """irqresd refuses a decrease larger than a bound (on 7.x the partition's count below
    the budget in force: docs/vm.md), with EBUSY: the tuner halves the refused step at
    the next interval until one is taken, not after REFUSAL_HOLD_NS (the light phase's
    250 intervals take well under that here), and goes on in steps of that size, so the
    budget comes down after the load."""
    bound = 200_000
    model = Model(daemon, [(150, 6_000_000), (250, 300_000)])
    daemon.stats_fn = model
    handle, refused = daemon.handle, []

    def bounded(words: list[str]) -> dict:
        if words[:1] == ["set-budget"] and len(words) >= 3:
            now, q = daemon.target(words[1])["runtime_ns"], parse_duration(words[2])
            if now - q > bound:
                refused.append(now - q)
                return {"ok": False, "error": f"set-budget {words[1]}: new budget refused: "
                        f"EBUSY: it refuses any runtime below {now - bound}ns",
                        "errno": "EBUSY"}
        return handle(words)

    daemon.handle = bounded
    tuner = Tuner(daemon.path)
    run_until_done(tuner, model)
    q = model.budgets[:model.done_at]
    assert max(q[:150]) > 5_000_000, q[:150]            # up with the load
    assert refused, "the bound never refused a step: the test tests nothing"
    assert all(b - a <= bound for b, a in itertools.pairwise(q)), q   # no step beyond it
    assert q[-1] < 2_000_000, q[150:]                    # ... and down again, in steps
    assert len(refused) < 40, refused

    # put back on the way out, in steps too, from a budget further above than the bound
    daemon.target("load")["runtime_ns"] = tuner.targets["load"].runtime_ns = 3_000_000
    asked = len(daemon.requests)
    assert tuner.restore_budgets() == {"load": 2_000_000}
    assert daemon.target("load")["runtime_ns"] == 2_000_000
    steps = [parse_duration(r.split()[2]) for r in daemon.requests[asked:]]
    assert steps[0] == 2_000_000 and len(steps) <= 12, steps  # refused at once, then steps


def test_no_adaptive_target(tmp_path):
    d = FakeDaemon(str(tmp_path / "s.sock"), profile="/etc/irqres/p.yaml").start()
    try:
        with pytest.raises(ControlError, match="irqresd holds no adaptive target "
                           r"\(profile /etc/irqres/p.yaml\)"):
            Tuner(d.path).run()
    finally:
        d.stop()


def test_cpu_count():
    assert (cpu_count("0"), cpu_count("0-1"), cpu_count("0-3,6"), cpu_count("")) == (1, 2, 5, 0)


def test_live_view_redraws_one_line_per_target(daemon):
    import io

    model = Model(daemon, [(30, 2_000_000), (30, 6_000_000)])
    daemon.stats_fn = model
    view = io.StringIO()
    run_until_done(Tuner(daemon.path, view=view), model)
    text = view.getvalue()
    assert "\x1b[1F" in text                          # back up one line per redraw
    last = text.rsplit("\x1b[2K", 1)[-1]
    assert last.startswith("load") and "T_thr" in last and "Q " in last


def test_new_thread_is_looked_up_once_in_status(daemon):
    model = Model(daemon, [(40, 2_000_000)])
    model.gone = range(10, 12)          # back as pid 778, which status does not list yet
    t = daemon.targets[0]

    def stats():                        # (called with the fake daemon's lock held)
        if model.calls == 10:           # irqresd lists the new thread before it runs
            t["threads"] = [dict(t["threads"][0], pid=778, cpus="1")]
        return model()

    daemon.stats_fn = stats
    tuner = Tuner(daemon.path)
    run_until_done(tuner, model)
    assert tuner.targets["load"].threads.keys() == {778}
    assert tuner.targets["load"].threads[778]["cpus"] == "1"
    assert daemon.requests.count("status") == 2        # the start, and once for pid 778


def test_a_garbled_stats_entry_costs_one_interval(daemon, caplog):
    model = Model(daemon, [(40, 2_000_000), (40, 6_000_000)])

    def stats():
        threads = model()
        if model.calls == 20:
            del threads[0]["cpu_time_ns"]
        return threads

    daemon.stats_fn = stats
    tuner = Tuner(daemon.path)
    run_until_done(tuner, model)
    assert "missing or bad field 'cpu_time_ns'" in caplog.text
    assert tuner.targets["load"].sent > 0            # it went on controlling


def test_irq_counts_from_proc_interrupts_when_irqresd_has_none(tmp_path):
    """An IRQ thread's N_pro comes from /proc/interrupts when stats gives no irq_count;
    its NIC drops from /sys/class/net/IF/statistics count as left over."""
    proc, sysr = tmp_path / "proc", tmp_path / "sys"
    proc.mkdir()
    stats_dir = sysr / "class/net/eth0/statistics"
    stats_dir.mkdir(parents=True)
    d = FakeDaemon(str(tmp_path / "s.sock"),
                   targets=[make_target("nic", pid=105, runtime=400_000, period=1_000_000,
                                        adaptive=ADAPTIVE)]).start()
    calls = {"n": 0}

    def stats():
        n = calls["n"] = calls["n"] + 1
        (proc / "interrupts").write_text(f"  CPU0 CPU1\n 11: {70 * n} {30 * n} IO-APIC eth0\n")
        (stats_dir / "rx_dropped").write_text(f"{3 * n}\n")
        if n >= 40:
            stop.set()
        return [{"pid": 105, "comm": "irq/11-eth0", "target": "nic", "irqs": [11],
                 "irq_count": None, "cpu_time_ns": 200_000 * n, "voluntary_switches": 2 * n,
                 "involuntary_switches": 0}]

    stop = threading.Event()
    d.stats_fn = stats
    d.stats_clock = lambda: calls["n"] * SAMPLE
    log = tmp_path / "t.csv"
    tuner = Tuner(d.path, log_path=str(log), proc_root=str(proc), sys_root=str(sysr))
    threading.Thread(target=lambda: (stop.wait(30), tuner.stop()), daemon=True).start()
    try:
        tuner.run()
    finally:
        d.stop()
    rows = list(csv.reader(log.open()))[1:]
    assert rows and {(r[2], r[3], r[4]) for r in rows} == {("100", "200000", "3")}


# A signal's Python handler runs between any two bytecodes of the main thread. This runs
# Tuner._sleep once per instruction it executes (its callees' included) and calls stop()
# right before that instruction, as `irqres tune`'s SIGINT/SIGTERM handler does: the
# sleep must end at once after the call and the loop must see the stop. A threading.Event
# hung here for ever when the call landed while Event.wait held the Event's lock (seen as
# a tune that never exited after SIGINT in the VM suite).
_STOP_AT_EVERY_INSTRUCTION = """
import sys, time
from irqres.control.loop import Tuner
n = 1
while True:
    tuner, seen, fired = Tuner("/nonexistent.sock"), [0], [0.0]
    def local(frame, event, arg):
        if event == "opcode" and not fired[0]:
            seen[0] += 1
            if seen[0] == n:
                fired[0] = time.monotonic()
                tuner.stop()
        return local
    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        return local
    sys.settrace(tracer)
    stopped = tuner._sleep(2_000_000_000)
    sys.settrace(None)
    stopped = stopped or tuner._expired()     # run() checks this next
    if not fired[0]:
        break
    late = time.monotonic() - fired[0]
    assert stopped and late < 1.0, (n, stopped, late)
    n += 1
print(n)
"""


def test_stop_ends_a_sleep_wherever_the_signal_lands():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _STOP_AT_EVERY_INSTRUCTION],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout) > 5           # instructions of _sleep that were each tried


def test_a_garbled_stats_reply_costs_one_interval(daemon, caplog):
    """One reply that is not JSON is logged and skipped: the loop goes on controlling."""
    model = Model(daemon, [(40, 2_000_000), (40, 6_000_000)])

    def stats():
        threads = model()
        if model.calls == 20:
            daemon.once["stats"] = b"garbage\n"     # the next reply
        return threads

    daemon.stats_fn = stats
    tuner = Tuner(daemon.path)
    run_until_done(tuner, model)
    assert "reply to stats is not JSON (7 bytes): b'garbage'; interval skipped " \
        "(1 bad reply in a row; 5 end the loop)" in caplog.text
    assert tuner.skipped == 1 and tuner.bad_replies == 0
    assert tuner.targets["load"].sent > 0            # it went on controlling


@pytest.mark.parametrize("reply", [b"garbage\n", {"ok": True, "threads": 5},
                                   {"ok": True, "threads": [], "time_ns": "soon"},
                                   {"ok": False, "error": "stats: busy"}])
def test_bad_replies_in_a_row_end_the_loop(daemon, reply, caplog):
    model = Model(daemon, [(10**6, 6_000_000)])

    def stats():
        threads = model()
        if model.calls == 30:
            daemon.override["stats"] = reply        # every reply from the next one on
        return threads

    daemon.stats_fn = stats
    tuner = Tuner(daemon.path)
    with pytest.raises(ControlError, match=r"5 bad replies in a row from irqresd, giving "
                       r"up; the last: irqres"):
        tuner.run()
    assert tuner.skipped == 5
    assert caplog.text.count("interval skipped") == 4
    # on the way out the budget it raised was put back all the same
    assert daemon.target("load")["runtime_ns"] == 2_000_000
    assert tuner.restored == {"load": 2_000_000}


def test_duration_ends_a_request_irqresd_does_not_answer(daemon, caplog):
    """A daemon that stops answering holds the loop to its duration: the waiting request
    is given up at its end (before: 2 + 5 s of timeouts, then 5 s to put a budget back)."""
    model = Model(daemon, [(10**6, 6_000_000)])

    def stats():
        threads = model()
        if model.calls == 30:
            daemon.frozen.set()                     # every request from the next one on
        return threads

    daemon.stats_fn = stats
    tuner = Tuner(daemon.path, duration_ns=1_000_000_000)
    t0 = time.monotonic()
    tuner.run()
    took = time.monotonic() - t0
    # the duration, then at most RESTORE_TIMEOUT_S for the budget it could not put back
    assert model.calls >= 30 and 1.0 <= took < 1.0 + RESTORE_TIMEOUT_S + 0.7, took
    assert "could not put the budgets back" in caplog.text
    assert "no reply to set-budget within 1 s" in caplog.text


def test_csv_log_turns_every_write_failure_into_a_control_error(tmp_path):
    """Before: row(), flush() and close() let OSError out (a traceback in the CLI)."""
    log = CsvLog("/dev/full")
    with pytest.raises(ControlError, match=r"^log /dev/full: cannot write it: No space "):
        log.flush()
    log.close()                         # the failure was reported: close only releases
    log = CsvLog("/dev/full")
    with pytest.raises(ControlError, match="No space left on device"):
        for _ in range(10_000):         # past the write buffer
            log.row(1, "t", 1, 1, 1, 1, None)
    log.close()
    log = CsvLog("/dev/full")
    with pytest.raises(ControlError, match=r"^log /dev/full: cannot write it"):
        log.close()
    log.close()                         # a second close does nothing
    with pytest.raises(ControlError, match=f"^log {tmp_path}: Is a directory"):
        CsvLog(tmp_path)
