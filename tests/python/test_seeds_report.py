"""bench/seeds/RESULTS.md is what `report.py all` makes of the committed data: every table,
figure and computed sentence, and the prose's numbers filled in from the same records."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parents[2] / "bench" / "seeds"
sys.path.insert(0, str(SEEDS))

import reading  # noqa: E402
import report  # noqa: E402


def test_results_md_is_rebuilt_from_the_committed_data(tmp_path):
    """The text; the figures are drawn by the same code path (``figures`` only skips the
    drawing, which is most of the time) from the same records."""
    out = report.write_results(tmp_path, figures=False)
    made = out.read_text()
    committed = (SEEDS / "RESULTS.md").read_text()
    diff = "".join(difflib.unified_diff(committed.splitlines(True), made.splitlines(True),
                                        "bench/seeds/RESULTS.md", "report.py all", n=1))
    assert made == committed, ("bench/seeds/RESULTS.md differs from what "
                               "`python3 bench/seeds/report.py all` makes:\n" + diff[:6000])
    # every figure RESULTS.md shows is committed beside it
    figures = {line.split("](")[1].rstrip(")") for line in made.splitlines()
               if line.startswith("![")}
    assert figures, made[:500]
    assert all((SEEDS / f).is_file() for f in figures), figures


@pytest.mark.slow
def test_every_figure_is_drawn_from_the_committed_data(tmp_path):
    """The figures from the records alone: no section reads the guest's out/ directory."""
    out = report.write_results(tmp_path)
    figures = {line.split("](")[1].rstrip(")") for line in out.read_text().splitlines()
               if line.startswith("![")}
    assert figures == {p.name for p in tmp_path.glob("*.png")}


def test_prose_fields_refuse_a_missing_or_an_unused_value():
    assert reading.fill("at {{load_range}} load", {"load_range": "4-21"}, "t") == "at 4-21 load"
    with pytest.raises(reading.ReadingError, match=r"t: no value for the field\(s\) nope"):
        reading.fill("a {{nope}} b", {}, "t")
    assert reading.unused(["{{a}}", "x"], {"a": "1", "b": "2"}) == ["b"]


def test_application_throughput_and_offered_load_are_the_datagrams_over_the_span():
    row = {"sender": "sent 40000 failed 0", "receiver": "received 2000",
           "span_ns": 8_000_000_000, "mbit_s": 40.0}
    # 40,000 x 1400 bytes in 8 s: 56 Mbit/s offered; 2,000 of them read: 2.8 Mbit/s
    assert report.offered_mbit_s(row, 1400) == pytest.approx(56.0)
    assert report.app_mbit_s(row, 1400) == pytest.approx(2.8)


def test_grid_counts_the_cycles_a_late_wake_up_held_back():
    import stats

    # one wake-up 2,500 us late at a 1,000 us interval held back the cycles due 1,000 and
    # 2,000 us after its own: late 1,500 and 500 us until it ran
    hist = {"buckets": {"100": 7, "2500": 1}, "overflows": 0, "max_us": 2500,
            "avg_us": 400, "cycles": 8}
    cycles, beyond = stats.grid_lateness(hist, 1000, 100_000)
    assert cycles == {100: 7, 2500: 1, 1500: 1, 500: 1} and beyond == 0
    g = stats.grid_summary(hist, 1000, 100_000)
    assert (g["cycles"], g["ran"], g["p50"], g["p99"], g["max"]) == (10, 8, 100, 2500, 2500)
    # the latest 20 % (2 cycles): 2,500 and 1,500 us late; pooled with a run of ten
    # cycles at 100 us, the latest 10 % are the same two
    assert stats.grid_tail_mean([hist], 1000, 100_000, 20) == 2000
    assert stats.grid_tail_mean([hist], 1000, 100_000, 1) == 2500
    quiet = {"buckets": {"100": 10}, "overflows": 0, "max_us": 100, "avg_us": 100,
             "cycles": 10}
    assert stats.grid_tail_mean([hist, quiet], 1000, 100_000, 10) == 2000
    assert stats.grid_tail_mean([quiet], 1000, 100_000, 50) == 100
    # wake-ups beyond the histogram: known by number and (through the average) their sum;
    # two of 300 ms and 500 ms beside 8 of 100 us: 800,800 us over 10 wake-ups
    hist = {"buckets": {"100": 8}, "overflows": 2, "max_us": 500_000, "avg_us": 80_080,
            "cycles": 8}
    cycles, beyond = stats.grid_lateness(hist, 1000, 100_000)
    assert sum(cycles.values()) == 8 + 2 * 100 and beyond == (800_000 - 200_000) // 1000
    g = stats.grid_summary(hist, 1000, 100_000)
    assert g["p50"] is None and g["cycles"] == 8 + 800 and g["ran"] == 10
    # how late they were beyond the histogram is not known: neither is the tail's mean
    assert stats.grid_tail_mean([hist], 1000, 100_000, 1) is None
    assert stats.grid_tail_mean([quiet, hist], 1000, 100_000, 1) is None
    assert stats.spread_bounded([None, 5, None], 100_000) == "> 100000 [5..> 100000]"
    assert stats.spread_bounded([None, None], 100_000) == "> 100000 in every run"
