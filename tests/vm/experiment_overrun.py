"""Experiment (not collected by the VM suite; bench/enforcement/run.sh runs it): the
overrun of a reserved task's budget with HRTICK_DL off and on, in the PREEMPT_RT guest.

A busy task reserved Q = 1 ms every T = 5 ms by ``irqresd --once``, HRTICK_DL off
(enforcement: keep) and on (enforcement: hrtick), alternating in one boot: how long it
runs in one go. Emulation stretches guest time, so only the shape is asserted: with the
hrtick the mean burst stays near Q, at the tick bursts run on towards the next tick
(HZ=250: up to 4 ms past Q), fewer and longer. On 6.12 under plain TCG the hrtick's
bursts were 1.05-1.38 ms in some boots and 1.84-2.19 ms in another (docs/enforcement.md):
until that is explained the shape is measured here, not asserted by `make test`.
"""

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MS = 1_000_000


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
