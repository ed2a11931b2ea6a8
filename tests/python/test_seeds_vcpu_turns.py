"""bench/seeds/vcpu_turns.py on the host: the pauses it reads from a busy task's bursts,
and the options it refuses before booting anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "seeds" / "vcpu_turns.py"
sys.path.insert(0, str(SCRIPT.parent))
import vcpu_turns  # noqa: E402


def test_pauses_are_the_gaps_between_bursts_over_the_span():
    # bursts [start, end] in ns: gaps of 100 and 900 over a 2,000 ns span
    case = {"run": 0, "busy": [1], "cpu": 1, "bursts": [[0, 400], [500, 1000], [1900, 2000]]}
    gaps, span = vcpu_turns.pauses(case["bursts"])
    assert gaps.tolist() == [100, 900] and span == 2000
    s = vcpu_turns.summary(case)
    assert s["paused_share"] == 0.5 and s["pauses"] == 2 and s["max_us"] == 0.9


@pytest.mark.parametrize("args, says", [
    (["--runs", "2"], "--runs must be at least 3"),
    (["--heartbeat-us", "-1"], "--heartbeat-us: at least 0, not -1"),
])
def test_bad_options_are_refused_before_a_guest_boots(args, says):
    out = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and says in out.stderr, out.stderr
