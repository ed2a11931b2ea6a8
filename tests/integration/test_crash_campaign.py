"""A small crash campaign (tests/fuzz/crash_campaign.py): irqresd killed with SIGKILL at
a random instant during start-up, apply, set-budget, restore and --restore itself; after
the documented recovery no task may be left changed and no state file left behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from irqresd_util import need_root_and_binary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))

from crash_campaign import campaign
from crashlib import PHASES

pytestmark = pytest.mark.root


def test_ten_kills_leave_nothing_changed():
    need_root_and_binary()
    out = campaign(trials=10, n_tasks=20, seed=7)
    assert out["failures"] == [], out["failures"]
    assert out["threads_left_changed"] == 0
    assert all(out["phases"][p]["trials"] == 2 for p in PHASES)
    # the kills landed while there was something to recover: a state file was left
    assert sum(out["phases"][p]["state_file_left"] for p in PHASES) >= 5
