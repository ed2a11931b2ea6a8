"""Budget enforcement as the client shows it: the plan's paragraph, irqresd's status and
the state file's sched feature (docs/protocol.md, ENFORCEMENT)."""

from __future__ import annotations

import copy

from fakes import PLAN
from irqres.cli.status import format_state, format_status
from irqres.plan import format_plan

TEXT = ("\nBudget enforcement: at the scheduler tick, a budget may overrun by up to 4ms per "
        "period\n  HZ=250 (/boot/config-6.1.0-50-rt-amd64)\n  high-resolution timers: "
        "active, resolution 1ns\n  HRTICK_DL: off (/sys/kernel/debug/sched/features)\n")


def now(**kw) -> dict:
    e = {"mode": "tick", "requested": False, "held": False, "granularity_ns": 4_000_000,
         "overrun_max_ns": 4_000_000, "hz": 250, "hrtick_dl": False}
    e.update(kw)
    return e


def test_plan_shows_irqresds_paragraph_after_the_sources():
    plan = copy.deepcopy(PLAN)
    plan["sources"] = "\nWhere the numbers come from: here\n"
    plan["enforcement"] = {"mode": "tick", "text": TEXT}
    lines = format_plan(plan).split("\n")
    i = lines.index("Where the numbers come from: here")
    assert lines[i + 1:i + 6] == ["", "Budget enforcement: at the scheduler tick, a budget "
                                  "may overrun by up to 4ms per period",
                                  "  HZ=250 (/boot/config-6.1.0-50-rt-amd64)",
                                  "  high-resolution timers: active, resolution 1ns",
                                  "  HRTICK_DL: off (/sys/kernel/debug/sched/features)"]
    # a plan without facts (an older irqresd, set-budget) renders as before
    plan["enforcement"] = None
    assert "Budget enforcement" not in format_plan(plan)


def test_status_says_how_budgets_are_enforced():
    reply = {"pid": 1, "profile": "p.yaml", "admission_control": "keep", "targets": [],
             "enforcement": now()}
    line = format_status(reply).split("\n")[1]
    assert line == ("budget enforcement: tick at HZ=250, overrun up to 4ms per period; "
                    "HRTICK_DL off")
    reply["enforcement"] = now(mode="hrtick", granularity_ns=10_000, overrun_max_ns=10_000,
                               hrtick_dl=True, held=True, requested=True)
    assert format_status(reply).split("\n")[1] == (
        "budget enforcement: hrtick, overrun up to 10us per period; HRTICK_DL on "
        "(switched on by irqresd, given back on stop)")
    reply["enforcement"] = now(hz=None, overrun_max_ns=None, hrtick_dl=None)
    assert "overrun up to unknown per period; HRTICK_DL unknown" in format_status(reply)


def test_state_file_names_the_feature_to_give_back():
    reply = {"exists": True, "state_file": "/run/irqres/state", "threads": [],
             "admission_control": "keep", "owed": [],
             "sched_feature": {"name": "HRTICK_DL", "was": False, "set": True}}
    assert format_state(reply).split("\n")[-1] == "sched feature to give back: HRTICK_DL off"
    reply["sched_feature"] = None
    assert "sched feature" not in format_state(reply)
