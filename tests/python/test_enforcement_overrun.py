"""The burst shape tests/vm/test_enforcement.py asserts (``shapes.bursts_cut_at_budget``),
run on the overrun experiment's records (bench/enforcement/data): it holds on the icount
testbed, fails there with HRTICK_DL removed (the tick's runs in place of the hrtick's), and
fails under plain TCG, where emulated timers let the budget run on; and the records'
report tool."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "seeds"))

import shapes  # noqa: E402

# under a name of its own: bench/seeds has a report.py too, on sys.path in other tests
_spec = importlib.util.spec_from_file_location(
    "enforcement_report", ROOT / "bench" / "enforcement" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

DATA = ROOT / "bench" / "enforcement" / "data"


def _records(testbed: str) -> list[dict]:
    recs = [json.loads(p.read_text()) for p in sorted(DATA.glob(f"overrun-{testbed}-*.json"))]
    return [r for r in recs if r["testbed"] == testbed]


ICOUNT = _records("icount")
TCG = _records("tcg") + _records("tcg-qemu10")


def _q(rec: dict) -> int:
    return rec["params"]["runtime_ns"]


def test_records_cover_both_kernels_on_both_testbeds():
    for recs in (ICOUNT, TCG):
        assert {r["kernel"].split("-")[0].rsplit(".", 1)[0] for r in recs} >= {"6.1", "6.12"}


@pytest.mark.parametrize("rec", ICOUNT, ids=lambda r: r["kernel"])
def test_hrtick_cuts_bursts_at_the_budget_on_the_icount_testbed(rec):
    runs = rec["runs"]
    assert shapes.bursts_cut_at_budget(runs["hrtick"], runs["keep"], _q(rec)) == []
    # removed: HRTICK_DL off (the tick's runs where the hrtick's were): every run fails
    bad = shapes.bursts_cut_at_budget(runs["keep"], runs["hrtick"], _q(rec))
    assert len(bad) == len(runs["keep"]) + len(runs["hrtick"]), bad


@pytest.mark.parametrize("rec", TCG, ids=lambda r: f"{r['testbed']}-{r['kernel']}")
def test_plain_tcg_lets_hrtick_bursts_run_on(rec):
    """Emulated timers without -icount: some HRTICK_DL bursts last to the next tick."""
    bad = shapes.bursts_cut_at_budget(rec["runs"]["hrtick"], rec["runs"]["keep"], _q(rec))
    assert any(b.startswith("HRTICK_DL") for b in bad), bad


def test_shape_refuses_empty_runs_and_names_them():
    bad = shapes.bursts_cut_at_budget([[]], [[]], 1_000_000)
    assert bad[0].startswith("HRTICK_DL run 0: 0 bursts") and bad[1].startswith("tick run 0")


def test_report_tabulates_every_run(capsys):
    assert report.main([str(p) for p in sorted(DATA.glob("overrun-icount-*.json"))]) == 0
    out = capsys.readouterr().out
    assert out.count("| HRTICK_DL |") == sum(len(r["runs"]["hrtick"]) for r in ICOUNT)


def test_report_refuses_what_is_not_a_record(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text('{"kernel": "6.1"}')
    assert report.main([str(p)]) == 2
    assert f"{p}: not an overrun record (KeyError" in capsys.readouterr().err
