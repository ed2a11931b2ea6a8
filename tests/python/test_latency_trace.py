"""bench/seeds/latency_trace.py: experiment 6's cycles laid out from a trace-cmd report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "seeds"))

import latency_trace as lt  # noqa: E402

# One cycle of cyclictest (pid 430) on CPU 1: due at 100.001000000, the timer fires 20 µs
# late in the local timer interrupt while the NIC thread runs; the NIC thread polls (a
# NET_RX soft IRQ, one packet), then nothing happens on the CPU for 600 µs (silent), and
# cyclictest is switched in at 100.001900000: 900 µs late. Lines of CPU 0 are left out.
LINES = [
    ("cyclictest-430", 1, "100.000050000", "hrtimer_start", "hrtimer=0xffff1 "
     "function=hrtimer_wakeup/0x0 expires=100001000000 softexpires=100001000000"),
    ("cyclictest-430", 1, "100.000060000", "sched_switch",
     "cyclictest:430 [59] S ==> irq/11-eth0:288 [-1]"),
    ("irq/11-eth0-288", 1, "100.000100000", "softirq_entry", "vec=3 [action=NET_RX]"),
    ("irq/11-eth0-288", 1, "100.000900000", "netif_receive_skb",
     "dev=eth0 skbaddr=0xffff2 len=1400"),
    ("irq/11-eth0-288", 1, "100.001010000", "local_timer_entry", "vector=236"),
    ("irq/11-eth0-288", 1, "100.001020000", "hrtimer_expire_entry",
     "hrtimer=0xffff1 now=100001020000 function=hrtimer_wakeup/0x0"),
    ("irq/11-eth0-288", 1, "100.001025000", "sched_waking",
     "comm=cyclictest pid=430 prio=59 target_cpu=001"),
    ("irq/11-eth0-288", 1, "100.001040000", "local_timer_exit", "vector=236"),
    ("irq/11-eth0-288", 1, "100.001100000", "softirq_exit", "vec=3 [action=NET_RX]"),
    ("irq/11-eth0-288", 1, "100.001200000", "irq_handler_entry", "irq=11 name=eth0"),
    ("irq/11-eth0-288", 1, "100.001210000", "irq_handler_exit", "irq=11 ret=handled"),
    ("<idle>-0", 0, "100.001300000", "sched_switch",
     "swapper/0:0 [120] R ==> seedload:500 [120]"),
    ("irq/11-eth0-288", 1, "100.001900000", "sched_switch",
     "irq/11-eth0:288 [-1] R ==> cyclictest:430 [59]"),
]


def report(lines: list[tuple]) -> str:
    """(task-pid, cpu, ts, event, fields) as ``trace-cmd report -t`` prints them."""
    return "cpus=2\n" + "".join(f"{who:>16}   [{cpu:03d}]   {ts}: {ev + ':':21} {rest}\n"
                                 for who, cpu, ts, ev, rest in lines)


REPORT = report(LINES)


def events():
    return lt.parse(REPORT.splitlines())


def test_parse_reads_switches_and_functions():
    ev = events()
    assert len(ev) == 13
    sw = [e for e in ev if e[1] == "sched_switch"]
    assert sw[0][4] == {"next_comm": "irq/11-eth0", "next_pid": 288}
    assert sw[-1][4] == {"next_comm": "cyclictest", "next_pid": 430}
    assert ev[0][4]["function"] == "hrtimer_wakeup"     # the offset cut off
    assert ev[2][4]["action"] == "NET_RX"
    assert {e[5] for e in ev} == {0, 1}


def test_one_cycle_laid_out():
    ev = [e for e in events() if e[5] == 1]
    (c,) = lt.cycles(ev)
    assert (c["due"], c["fired"], c["in"]) == (100_001_000_000, 100_001_020_000,
                                               100_001_900_000)
    seg = lt.segments(ev)
    by = lt.breakdown(c, seg)
    # due (1.000 ms) .. switch-in (1.900 ms): 10 µs in the soft IRQ, 30 µs in the timer
    # interrupt, 60 µs more soft IRQ, 100 µs of the thread, 10 µs in its hard handler,
    # and the thread's last 690 µs
    assert by == {"softirq NET_RX in irq/11-eth0": 70_000, "hardirq local_timer": 30_000,
                  "irq/11-eth0": 790_000, "hardirq eth0": 10_000}
    assert sum(by.values()) == c["in"] - c["due"]
    # the one stretch without an event longer than 200 µs: 1.210 .. 1.900 ms
    assert lt.silent(c, seg, 200_000) == (690_000, 690_000)
    assert lt.silent(c, seg) == (0, 0)          # the default: over 1 ms


def test_cycles_need_the_measuring_thread():
    ev = [e for e in events() if e[1] != "hrtimer_start"]
    assert lt.cycles(ev) == []


def test_a_preempted_soft_irq_stays_with_its_task():
    """On PREEMPT_RT a task can be preempted inside a soft IRQ: the task that preempts it
    runs as itself, and the soft IRQ goes on when its task is back."""
    lines = [
        ("ktimers/1-28", 1, "200.000000000", "softirq_entry", "vec=3 [action=NET_RX]"),
        ("ktimers/1-28", 1, "200.000100000", "sched_switch",
         "ktimers/1:28 [98] R ==> cyclictest:430 [59]"),
        ("cyclictest-430", 1, "200.000300000", "sched_switch",
         "cyclictest:430 [59] S ==> ktimers/1:28 [98]"),
        ("ktimers/1-28", 1, "200.000350000", "softirq_exit", "vec=3 [action=NET_RX]"),
        ("ktimers/1-28", 1, "200.000400000", "sched_switch",
         "ktimers/1:28 [98] S ==> swapper/1:0 [120]"),
    ]
    starts, ends, labels = lt.segments(lt.parse(report(lines).splitlines()))
    assert list(zip(labels, (e - s for s, e in zip(starts, ends, strict=True)),
                    strict=True)) == [
        ("softirq NET_RX in ktimers/1", 100_000), ("cyclictest", 200_000),
        ("softirq NET_RX in ktimers/1", 50_000), ("ktimers/1", 50_000)]


def _main(argv: list[str], monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", ["latency_trace.py", *argv])
    lt.main()


def test_bad_inputs_are_named(tmp_path, monkeypatch, capsys):
    """A file that is no record, one that is missing, one that is no trace, and a bad
    option: exit 2 with the file (or option) and the cause."""
    notrec = tmp_path / "other.json"
    notrec.write_text('{"rows": []}')
    notdat = tmp_path / "x.dat"
    notdat.write_text("not a trace")
    cases = [([str(notrec)], f"{notrec}: not a record of latency_hrtick.py"),
             ([str(tmp_path / "gone.json")], "gone.json: cannot read it: No such file"),
             ([str(notdat)], f"{notdat}: trace-cmd report failed"),
             ([str(notdat), "--silent", "0"], "--silent must be above 0")]
    for argv, words in cases:
        with pytest.raises(SystemExit) as e:
            _main(argv, monkeypatch)
        assert e.value.code == 2, argv
        assert words in capsys.readouterr().err, argv


def test_a_record_without_traced_rows(tmp_path, monkeypatch, capsys):
    rec = tmp_path / "rec.json"
    rec.write_text('{"raw_out": "/nowhere", "result": {"results": [{"label": "fifo50"}]}}')
    with pytest.raises(SystemExit) as e:
        _main([str(rec)], monkeypatch)
    assert e.value.code == 2
    assert "no traced row (run latency_hrtick.py with --trace KB)" in capsys.readouterr().err
