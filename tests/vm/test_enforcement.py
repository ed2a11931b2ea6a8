"""Budget enforcement on the PREEMPT_RT guest.

1. switch: a profile with ``enforcement: hrtick`` reserves a busy task; ``--dry-run``
   predicts the switch and changes nothing; while irqresd runs the guest's
   /sys/kernel/debug/sched/features shows HRTICK_DL (recorded in the state file first);
   ``irqresd`` stopped gives NO_HRTICK_DL back; after kill -9 the feature stays on,
   recorded, and ``irqresd --restore`` gives it back and leaves no state file.
2. overrun: the same busy task reserved Q = 1 ms every T = 5 ms by ``irqresd --once``,
   HRTICK_DL off (enforcement: keep) and on (enforcement: hrtick), alternating in one
   boot: how long it runs in one go. Emulation stretches guest time, so only the shape is
   asserted: with the hrtick the mean burst stays near Q, at the tick bursts run on
   towards the next tick (HZ=250: up to 4 ms past Q), fewer and longer.
"""

import json

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MS = 1_000_000


def test_hrtick_switched_on_and_given_back(boot):
    res = boot("enforcement_switch", params={"runtime": "1ms", "period": "5ms"})
    s = {x["label"]: x for x in res.data["snapshots"]}
    where = res.kernel.release
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


def _pct(v: list[int], q: float) -> int:
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else 0


def _share_over(v: list[int], bound: int) -> float:
    return sum(x > bound for x in v) / len(v)


def test_overrun_tick_versus_hrtick(boot):
    q, t = 1 * MS, 5 * MS
    res = boot("enforcement_overrun", params={"runtime_ns": q, "period_ns": t,
                                              "seconds": 6, "repeats": 3,
                                              "gap_ns": 200_000})
    where = res.kernel.release
    runs: dict[str, list[list[int]]] = {"keep": [], "hrtick": []}
    for ph in res.data["phases"]:
        assert ph["reserved"] and ph["once_rc"] == 0, ph
        assert ph["hrtick_dl"] is (ph["enforcement"] == "hrtick"), ph
        assert ph["after"] is False, ph  # --restore gave it back
        b = ph["bursts_ns"]
        assert len(b) > 50, (where, ph["enforcement"], len(b))
        runs[ph["enforcement"]].append(b)
        vmrunner.say(f"overrun {where} {ph['enforcement']:6}: {len(b)} bursts, mean "
                     f"{sum(b) / len(b) / MS:.2f} ms, p50 {_pct(b, 0.5) / MS:.2f} ms, p90 "
                     f"{_pct(b, 0.9) / MS:.2f} ms, p99 {_pct(b, 0.99) / MS:.2f} ms, max "
                     f"{max(b) / MS:.2f} ms, {100 * _share_over(b, q + MS):.0f} % longer "
                     f"than Q + 1 ms (Q = {q / MS:.0f} ms, T = {t / MS:.0f} ms)")
    # The shape. The long-run bandwidth is Q/T either way (the kernel charges an overrun
    # to the next periods), so what differs is how the run time is cut: at the tick the
    # task runs on past Q until the next tick or scheduler event, in fewer and longer
    # bursts; with the hrtick it stops at Q. The mean burst (run time / bursts) is robust
    # to the host stealing the guest's CPU now and then, which cuts bursts either way.
    mean = {k: [sum(b) / len(b) for b in v] for k, v in runs.items()}
    pooled = {k: sum(map(sum, v)) / sum(map(len, v)) for k, v in runs.items()}
    assert all(k > h for k, h in zip(mean["keep"], mean["hrtick"], strict=True)), (where, mean)
    assert pooled["hrtick"] <= 1.5 * q, (where, pooled)
    assert pooled["keep"] >= 1.5 * pooled["hrtick"], (where, pooled)
