"""Durations in tables: one unit per column, 4 significant digits; exact ns in --json."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes import FakeDaemon, make_target
from irqres import live
from irqres.cli import main
from irqres.metrics import ThreadSample
from irqres.tables import Ns, column_texts, duration_column, readable, text_table


@pytest.mark.parametrize(("values", "texts"), [
    ([2_000_000, 10_000_000, 8_000_000], ["2ms", "10ms", "8ms"]),
    ([7_862_828, 7_275_501, 1_289_807], ["7.863ms", "7.276ms", "1.29ms"]),
    ([215_192, 222_754, 19_749], ["215.2us", "222.8us", "19.7us"]),
    ([116_392_107, 26_427_393], ["116.4ms", "26.4ms"]),
    ([1_234_567_891, 5_000_000], ["1.235s", "0.005s"]),
    ([750, 3], ["750ns", "3ns"]),
    ([0], ["0ns"]),
])
def test_a_column_of_durations_is_in_one_unit(values, texts):
    assert duration_column(values) == texts


def test_cells_of_a_table():
    rows = [["A", "Q/T", "N"], [Ns(1_500_000), (Ns(2_000_000), Ns(10_000_000)), 3],
            ["-", "-", "x"], [Ns(25_123_456), (Ns(500_000), Ns(5_000_000)), 4]]
    assert text_table(rows) == ["A        Q/T        N",
                                "1.5ms    2ms/10ms   3",
                                "-        -          x",
                                "25.12ms  0.5ms/5ms  4"]
    assert column_texts([Ns(1_500_000), "-", Ns(25_123_456)]) == ["1.5ms", "-", "25.12ms"]
    assert readable(1_234_567) == "1.235ms"


def odd_target():
    t = make_target("nic", runtime=3_051_234, period=10_000_000)
    t["deadline_ns"] = 9_876_543
    t["threads"][0].update(runtime_ns=3_051_234, deadline_ns=9_876_543)
    return t


def test_status_stats_and_top_round_but_json_is_exact(tmp_path, monkeypatch):
    d = FakeDaemon(str(tmp_path / "irqresd.sock"), targets=[odd_target()]).start()
    monkeypatch.setenv("IRQRES_SOCKET", d.path)
    d.stats_threads = [{"pid": 105, "comm": "irq/11-eth0", "target": "nic", "irqs": [11],
                        "irq_count": 1, "policy": "deadline", "runtime_ns": 3_051_234,
                        "period_ns": 10_000_000, "deadline_ns": 9_876_543,
                        "cpu_time_ns": 1_234_567_891, "wait_time_ns": 5_432,
                        "timeslices": 1, "voluntary_switches": 1, "involuntary_switches": 0}]
    try:
        out = CliRunner().invoke(main, ["status"]).output
        assert "3.051ms" in out and "9.877ms" in out and "3.051234ms" not in out
        st = json.loads(CliRunner().invoke(main, ["status", "--json"]).output)
        assert st["targets"][0]["runtime_ns"] == 3_051_234
        out = CliRunner().invoke(main, ["stats"]).output
        assert "1.235s" in out and "5.432us" in out and "1.234567891s" not in out
        assert json.loads(CliRunner().invoke(main, ["stats", "--json"]).output)[
            "threads"][0]["cpu_time_ns"] == 1_234_567_891
    finally:
        d.stop()
    # top: Q/T and USED/T in one unit each
    th = ThreadSample(pid=105, comm="irq/11-eth0", target="nic", kind="irq",
                      policy="deadline", cpus="0", runtime_ns=3_051_234, period_ns=10_000_000,
                      deadline_ns=9_876_543, cpu_time_ns=0, wait_time_ns=0, voluntary=0,
                      involuntary=0, irq_count=0)
    row = live.Row(th, 1_234_567, 0.4, 0.1, 0.0, None, None, None)
    line = live.table([row], 200)[1]
    assert " 3.051ms/10ms " in line and " 1.235ms " in line
