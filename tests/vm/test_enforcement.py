"""Budget enforcement on the PREEMPT_RT guest.

1. switch: a profile with ``enforcement: hrtick`` reserves a busy task; ``--dry-run``
   predicts the switch and changes nothing; while irqresd runs the guest's
   /sys/kernel/debug/sched/features shows HRTICK_DL (recorded in the state file first);
   ``irqresd`` stopped gives NO_HRTICK_DL back; after kill -9 the feature stays on,
   recorded, and ``irqresd --restore`` gives it back and leaves no state file.
2. bursts: a busy task reserved 1 ms every 5 ms runs in one go (a burst) at most Q with
   HRTICK_DL and on towards the next tick without it, three runs of each alternating in
   one boot of the seeds' testbed (-icount: guest time advances with the guest's
   instructions, so a vCPU the loaded host stalls does not lengthen a burst; under plain
   TCG it does, which is why the same shape is only an experiment there:
   tests/vm/experiment_overrun.py, bench/enforcement/). The shape is
   ``shapes.bursts_cut_at_budget``; tests/python/test_enforcement_overrun.py shows it failing
   on recorded bursts with HRTICK_DL off.
"""

import json
import sys

import pytest
import vmrunner

sys.path.insert(0, str(vmrunner.REPO / "bench" / "seeds"))
import shapes

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MS = 1_000_000
Q, T = 1 * MS, 5 * MS
OVERRUN = {"runtime_ns": Q, "period_ns": T, "seconds": 6, "repeats": 3, "gap_ns": 200_000}


def bursts_by_enforcement(res: vmrunner.Result) -> dict[str, list[list[int]]]:
    """The bursts of each run, by enforcement ("keep": the tick, "hrtick"), after checking
    that each run was reserved with HRTICK_DL as it asked and given back."""
    runs: dict[str, list[list[int]]] = {"keep": [], "hrtick": []}
    for ph in res.data["phases"]:
        assert ph["reserved"] and ph["once_rc"] == 0, ph
        assert ph["hrtick_dl"] is (ph["enforcement"] == "hrtick"), ph
        assert ph["after"] is False, ph  # --restore gave it back
        runs[ph["enforcement"]].append(ph["bursts_ns"])
    return runs


@pytest.mark.kernel_independent(
    "HRTICK_DL's hrtimer ends a budget in the same deadline-class code on 6.1 and 6.12; "
    "7.3 boots with it on")
def test_hrtick_cuts_each_burst_at_the_budget(icount_boot, kernel):
    res = icount_boot("enforcement_overrun", params=OVERRUN, kernel=kernel)
    runs = bursts_by_enforcement(res)
    assert len(runs["keep"]) == len(runs["hrtick"]) == OVERRUN["repeats"], runs.keys()
    bad = shapes.bursts_cut_at_budget(runs["hrtick"], runs["keep"], Q)
    assert bad == [], (res.kernel.release, bad)
    p99 = {k: [round(shapes.burst_pct(b, 0.99) / MS, 2) for b in v] for k, v in runs.items()}
    vmrunner.say(f"enforcement {res.kernel.release}: bursts p99 {p99['hrtick']} ms with "
                 f"HRTICK_DL, {p99['keep']} ms at the tick (Q = 1 ms)")


@pytest.mark.kernels_too("7.3")  # HRTICK_DL on at boot there
def test_hrtick_switched_on_and_given_back(boot):
    res = boot("enforcement_switch", params={"runtime": "1ms", "period": "5ms"})
    s = {x["label"]: x for x in res.data["snapshots"]}
    where = res.kernel.release
    if res.kernel.label.startswith("7."):
        # 7.x boots with HRTICK_DL on: nothing to switch, record or give back
        assert s["boot"]["hrtick_dl"] is True, (where, s["boot"]["features"])
        _left_as_found_on(s, where)
        return
    assert s["boot"]["hrtick_dl"] is False, (where, s["boot"]["features"])
    assert s["boot"]["state"] is None
    # the dry run predicts the switch and changes nothing
    dry = s["after dry-run"]["dry"]
    assert dry["rc"] == 0, dry
    plan = json.loads(dry["out"])
    enf = plan["enforcement"]
    assert (enf["action"], enf["mode"], enf["hrtick_dl"]) == ("switch-on", "hrtick", False), enf
    assert enf["granularity_ns"] == 10_000 and enf["hz"] == 250, enf
    assert s["after dry-run"]["hrtick_dl"] is False
    # running: on, recorded in the state file, shown by status
    run = s["running"]
    assert run["reserved"], run
    assert run["hrtick_dl"] is True, (where, run["features"])
    assert "sched_feature name=HRTICK_DL was=0 set=1" in (run["state"] or ""), run["state"]
    st = run["status"]["enforcement"]
    assert (st["mode"], st["held"], st["hrtick_dl"]) == ("hrtick", True, True), st
    # stopped: back off, the task back as it was
    stop = s["after stop"]
    assert stop["rc"] == 0, stop["log"]
    assert stop["hrtick_dl"] is False, (where, stop["features"], stop["log"])
    assert stop["sched"]["policy"] != "deadline", stop
    assert stop["state"] is None
    # kill -9: stays on and recorded; --restore gives it back
    kill = s["after kill -9"]
    assert kill["reserved"] and kill["hrtick_dl"] is True, kill
    assert "sched_feature name=HRTICK_DL" in (kill["state"] or ""), kill["state"]
    rest = s["after --restore"]
    assert rest["restore"]["rc"] == 0, rest["restore"]
    assert rest["hrtick_dl"] is False, (where, rest["features"], rest["restore"])
    assert rest["state"] is None, rest["state"]
    assert rest["sched"]["policy"] != "deadline", rest
    vmrunner.say(f"enforcement {where}: HRTICK_DL off at boot, on while irqresd ran, off "
                 "after stop; on after kill -9, off after --restore")


def _left_as_found_on(s: dict, where: str) -> None:
    """HRTICK_DL on at boot: irqresd says so, never records the feature, and it stays
    on through stop, kill -9 and --restore; the task is reserved and given back."""
    assert s["boot"]["state"] is None
    enf = json.loads(s["after dry-run"]["dry"]["out"])["enforcement"]
    assert (enf["action"], enf["mode"], enf["hrtick_dl"]) == ("already-on", "hrtick", True), enf
    run, stop, kill, rest = (s[k] for k in ("running", "after stop", "after kill -9",
                                             "after --restore"))
    assert run["reserved"] and run["hrtick_dl"] is True, run
    assert "sched_feature" not in (run["state"] or ""), run["state"]
    assert stop["rc"] == 0 and stop["hrtick_dl"] is True and stop["state"] is None, stop
    assert stop["sched"]["policy"] != "deadline", stop
    assert kill["reserved"] and "sched_feature" not in (kill["state"] or ""), kill["state"]
    assert rest["restore"]["rc"] == 0 and rest["hrtick_dl"] is True, rest["restore"]
    assert rest["state"] is None and rest["sched"]["policy"] != "deadline", rest
    vmrunner.say(f"enforcement {where}: HRTICK_DL on at boot, left on and never recorded "
                 "through stop, kill -9 and --restore")
