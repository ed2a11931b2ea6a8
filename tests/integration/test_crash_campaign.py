"""A small crash campaign (tests/fuzz/crash_campaign.py): irqresd killed with SIGKILL at
a random instant during start-up, apply, set-budget, restore and --restore itself; after
the documented recovery no task may be left changed and no state file left behind. Then
the state file a kill left is damaged seven ways: the restore must restore exactly the
threads whose records are intact, fail naming the problem, and keep the file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from irqresd_util import need_root_and_binary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))

from crash_campaign import campaign
from crashlib import DAMAGES, PHASES

pytestmark = pytest.mark.root


def test_ten_kills_leave_nothing_changed():
    need_root_and_binary()
    out = campaign(trials=10, n_tasks=20, seed=7, damage=len(DAMAGES))
    assert out["failures"] == [], out["failures"]
    assert out["threads_left_changed"] == 0
    assert all(out["phases"][p]["trials"] == 2 for p in PHASES)
    # the kills landed while there was something to recover: a state file was left (every
    # set-budget kill; a restore is one rewrite of the file, so a kill there rarely does)
    assert out["phases"]["set-budget"]["state_file_left"] == 2
    assert sum(out["phases"][p]["state_file_left"] for p in PHASES) >= 3
    assert out["damage"]["failures"] == [], out["damage"]["failures"]
    assert all(out["damage"]["kinds"][k]["trials"] == 1 for k in DAMAGES)
