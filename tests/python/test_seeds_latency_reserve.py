"""Experiment 6's reservations: ``latency_hrtick.py --reserve Q:T[:D]`` and the guest's
plan and profile for a constrained deadline (D shorter than T)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "seeds"))
sys.path.insert(0, str(ROOT / "tests" / "vm" / "guest"))

import latency_hrtick  # noqa: E402
import seeds  # noqa: E402

MS = 1_000_000


def test_reserve_takes_a_deadline():
    assert latency_hrtick.parse_reserve("1:5,0.5:10:2") == [[MS, 5 * MS],
                                                           [MS // 2, 10 * MS, 2 * MS]]


@pytest.mark.parametrize(("text", "words"), [
    ("1:5:6", "needs 0 < Q <= D <= T"),      # D past the period
    ("2:5:1", "needs 0 < Q <= D <= T"),      # the budget past D
    ("1", "not Q:T or Q:T:D"),
    ("1:5:1:1", "not Q:T or Q:T:D"),
    ("1:x", "not Q:T or Q:T:D"),
])
def test_reserve_refuses_what_the_kernel_would(text, words):
    with pytest.raises(SystemExit, match=words):
        latency_hrtick.parse_reserve(text)


def test_plan_and_profile_carry_the_deadline(tmp_path):
    plan = seeds.enforcement_plan([[MS, 5 * MS], [MS, 5 * MS, MS]])
    assert [p[0] for p in plan] == ["baseline", "fifo50", f"keep-{MS}-{5 * MS}",
                                    f"hrtick-{MS}-{5 * MS}", f"keep-{MS}-{5 * MS}-{MS}",
                                    f"hrtick-{MS}-{5 * MS}-{MS}"]
    with_d = Path(seeds._nic_profile(str(tmp_path / "d.yaml"), "hrtick", MS, 5 * MS, MS))
    assert f"    deadline: {MS}ns\n" in with_d.read_text()
    without = Path(seeds._nic_profile(str(tmp_path / "t.yaml"), "keep", MS, 5 * MS))
    assert "deadline" not in without.read_text()
