"""Each shape tests/vm/test_seeds.py asserts, run on the recorded guest data of
bench/seeds/data: it holds with its cause present and fails with its cause removed (the
NIC thread's reservation, the player's, both replaced by plain SCHED_FIFO, the tuner)."""

from __future__ import annotations

import copy
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest

SEEDS = Path(__file__).resolve().parents[2] / "bench" / "seeds"
sys.path.insert(0, str(SEEDS))

import shapes  # noqa: E402
import tools  # noqa: E402

DATA = SEEDS / "data"
US = 1000
MS = 1_000_000


def record(name: str) -> dict:
    return json.loads((DATA / name).read_text())


# Recorded with the restore defect (the sender's SCHED_FIFO 90 IRQ thread left allowed on
# the NIC's CPU ran eth0's polls there, above the task: bench/seeds/RESULTS.md): the shape's
# function is checked on them; since the fix the VM suite asserts it over the whole
# receive path (SHAPES_NAPI below), where the IRQ thread alone no longer shows it.
LATENCY = [record("latency-icount-nice0-20261123T051005.json"),
           record("latency-icount-nice0-boot2-20261123T051237.json")]
FIFO = record("player-fifo-icount-nice0-20261123T050907.json")  # 3 runs, no CPU times
FIFO_CPU = record("player-fifo-icount-nice0-diag-20261123T053550.json")  # 1 run, CPU times
DL = record("player-dl-icount-nice0-cpu-20261123T053043.json")
ADAPTIVE = record("adaptive-icount-nice19-20261123T075644.json")


def _runs(rec: dict, label: str) -> list[dict]:
    return [r for r in rec["result"]["results"] if r["label"] == label]


@pytest.mark.parametrize("rec", LATENCY, ids=["boot1", "boot2"])
def test_latency_shape_holds_reserved_and_fails_with_the_reservation_removed(rec):
    fifo, rsv = _runs(rec, "fifo50"), _runs(rec, "reserved")
    grid = rec["params"]["interval_us"], rec["params"]["hist_us"]
    assert len(fifo) == len(rsv) == 3
    for f, r in zip(fifo, rsv, strict=True):
        assert shapes.latency(f, r, *grid) == [], (f["run"], shapes.latency(f, r, *grid))
    # removed: the "reserved" measurement is another run with the NIC thread at FIFO 50
    for f, g in itertools.permutations(fifo, 2):
        assert shapes.latency(f, g, *grid), (f["run"], g["run"])


def _fifo(order: str, run: int) -> dict:
    return next(r for r in FIFO["result"]["rows"] if r["order"] == order and r["run"] == run)


def test_both_reserved_shape_holds_for_every_test_and_run():
    period = DL["params"]["nic_period_ns"]
    for r in DL["result"]["rows"]:
        assert shapes.player_reserved(_fifo("below", r["run"]), r, period) == [], r["test"]


@pytest.mark.parametrize("order", ["below", "above"])
def test_both_reserved_shape_fails_at_fixed_priorities(order):
    """The reservations replaced by plain SCHED_FIFO: the player below or above the NIC
    thread, the NIC thread unreserved (its CPU time was recorded in the diagnostic boot)."""
    period = DL["params"]["nic_period_ns"]
    test5 = next(r for r in DL["result"]["rows"] if r["test"] == 5)
    for run in range(3):
        plain = {**_fifo(order, run), "nic_q": test5["nic_q"]}
        bad = shapes.player_reserved(_fifo("below", run), plain, period)
        assert any("not deadline" in b for b in bad), bad
        assert any("deadline misses" in b for b in bad), bad
    diag = next(r for r in FIFO_CPU["result"]["rows"] if r["order"] == order)
    bad = shapes.player_reserved(_fifo("below", 0), {**diag, "nic_q": test5["nic_q"]}, period)
    assert any("CPU share" in b for b in bad), bad


def test_nic_share_holds_reserved_and_fails_with_the_nic_reservation_removed():
    """The NIC thread's share against its Q/T: within bounds reserved at every Q/T; the
    NIC thread at SCHED_FIFO 50 under the same flood with the player on its CPU, above or
    below it, is outside them for every Q/T of the table."""
    period = DL["params"]["nic_period_ns"]
    qs = sorted({r["nic_q"] for r in DL["result"]["rows"]})
    for r in DL["result"]["rows"]:
        assert shapes.nic_share(r, r["nic_q"], period) == [], (r["run"], r["test"])
    for r in FIFO_CPU["result"]["rows"]:
        for q in qs:
            assert shapes.nic_share(r, q, period), (r["order"], q)
    assert shapes.nic_share(FIFO["result"]["rows"][0], qs[0], period) == [
        "NIC thread: its CPU time was not recorded"]


def _adaptive(config: str) -> list[dict]:
    return [r["analysis"] for r in ADAPTIVE["result"]["rows"] if r["config"] == config]


CLAMPS = (200.0, 800.0)
HYSTERESIS = 20.0


@pytest.mark.parametrize("config", ["tune0.25", "tune0.05"])
def test_tuner_shape_holds_with_the_tuner_and_fails_without(config):
    for a in _adaptive(config):
        assert shapes.tuner(a, CLAMPS, HYSTERESIS) == [], a["tune"]
        # stuck at its start value: it sent that budget only
        stuck = {**a, "tune": {**a["tune"], "q_min_us": 500.0, "q_max_us": 500.0}}
        assert shapes.tuner(stuck, CLAMPS, HYSTERESIS), stuck["tune"]
    for fixed in ("fixed800", "fixed400", "fifo50"):
        for a in _adaptive(fixed):
            assert shapes.tuner(a, CLAMPS, HYSTERESIS) == ["tune: no budget sent"]


def test_player_budget_shape_is_about_the_budget_not_the_tuner():
    """Against 800 us fixed, tune's player misses no more and its longest inter-frame time
    is shorter; a budget fixed near the tuner's start (400 us) does so too, and tune does
    not beat it: the player's shape cannot show that the tuner is needed."""
    fixed800, fixed400 = _adaptive("fixed800"), _adaptive("fixed400")
    for run, tune in enumerate(_adaptive("tune0.25")):
        assert shapes.player_budget(fixed800[run], tune) == [], run
        assert shapes.player_budget(fixed800[run], fixed400[run]) == [], run
        assert shapes.player_budget(fixed400[run], tune), run
    # removed: the budget fixed for the bursts against itself
    for a in fixed800:
        assert shapes.player_budget(a, a), a["frames"]


START = record("adaptive-icount-nice19-start-20261125T192736.json")


def test_the_tuner_stuck_at_its_start_value_fails_the_tuner_shape_not_the_player_one():
    """A boot with a budget fixed at the tuner's start value (500 us) beside tune: the
    tuner's own shape fails without it; the player's shape against 800 us would hold for
    the stuck budget too, and tune's longest inter-frame time is not shorter than the
    stuck budget's in any run (recorded), so the player's shape is not the tuner's."""
    fixed = [r["analysis"] for r in START["result"]["rows"] if r["config"] == "fixed500"]
    tune = [r["analysis"] for r in START["result"]["rows"] if r["config"] == "tune0.25"]
    assert len(fixed) == len(tune) == 3
    for f, t in zip(fixed, tune, strict=True):
        assert shapes.tuner(t, CLAMPS, HYSTERESIS) == [], t["tune"]
        assert shapes.tuner(f, CLAMPS, HYSTERESIS) == ["tune: no budget sent"]
        assert shapes.player_budget(f, t), (f["frames"], t["frames"])


# experiment 6 with HRTICK_DL, 3 runs of 5 s in one boot; the 1-s probe boot before it
LATENCY_HRTICK = record("latency-hrtick-icount-nice0-20261125T225133.json")  # 6.1
LATENCY_HRTICK_612 = record("latency-hrtick-icount-nice0-20261125T225631.json")
LATENCY_HRTICK_B2 = record("latency-hrtick-icount-nice0-20261125T230403.json")  # 6.1 again
# the same over the NIC's whole receive path (latency_hrtick.py --napi 3/4)
LATENCY_HRTICK_PATH = record("latency-hrtick-napi-icount-nice0-20261126T091414.json")  # 6.1
LATENCY_HRTICK_PATH_B2 = record("latency-hrtick-napi-icount-nice0-20261126T092626.json")
LATENCY_HRTICK_PATH_612 = record("latency-hrtick-napi-icount-nice0-20261126T091913.json")
# one 4-s run at 1 ms / 5 ms in each of six boots of tests/vm/test_seeds.py
HRTICK_BOOTS = record("latency-hrtick-napi-suite-boots-20261128.json")


def _hrtick_runs(rec: dict, q: int, t: int) -> tuple[list[dict], list[dict]]:
    hr, tick = _runs(rec, f"hrtick-{q}-{t}"), _runs(rec, f"keep-{q}-{t}")
    assert len(hr) == len(tick) == rec["params"]["runs"] >= 3
    # the switch took: HRTICK_DL on under `enforcement: hrtick`, off under `keep`
    assert all("HRTICK_DL" in r["features"].split() for r in hr)
    assert all("NO_HRTICK_DL" in r["features"].split() for r in tick)
    return hr, tick


@pytest.mark.parametrize("i", [0, 1], ids=["1ms", "2ms"])
@pytest.mark.parametrize("rec", [LATENCY_HRTICK, LATENCY_HRTICK_PATH], ids=["thread", "path"])
def test_latency_overrun_shape_holds_with_hrtick_and_fails_enforced_at_the_tick(rec, i):
    """In the first 6.1 boot of each, the NIC thread alone and the whole receive path."""
    qt = rec["params"]["reserved"][i]
    base, fifo = _runs(rec, "baseline"), _runs(rec, "fifo50")
    hr, tick = _hrtick_runs(rec, *qt)
    q = qt[0]
    if "napi_split" in rec["params"]:
        # the NAPI kthread did the path's work: nothing of it in ksoftirqd while reserved
        assert all(r["cpu_ns"]["ksoftirqd"] == 0 < r["cpu_ns"]["napi"] for r in hr + tick)
    assert shapes.latency_overrun(base, fifo, hr, q) == [], [r["hist"]["max_us"] for r in hr]
    # removed: HRTICK_DL off, the budget enforced at the tick overruns it by up to a tick
    assert shapes.latency_overrun(base, fifo, tick, q), [r["hist"]["max_us"] for r in tick]
    # removed: the NIC thread's reservation itself (a FIFO 50 run in its place)
    assert shapes.latency_overrun(base, fifo, fifo, q)


@pytest.mark.parametrize("qt", LATENCY_HRTICK_B2["params"]["reserved"], ids=["1ms", "2ms"])
def test_latency_overrun_shape_is_not_reproducible_in_a_second_6_1_boot(qt):
    """Why tests/vm asserts no worst-case shape of HRTICK_DL: the second 6.1 boot fails it
    with HRTICK_DL on as well (bench/seeds/RESULTS.md)."""
    rec = LATENCY_HRTICK_B2
    hr, _ = _hrtick_runs(rec, *qt)
    assert shapes.latency_overrun(_runs(rec, "baseline"), _runs(rec, "fifo50"), hr, qt[0])


@pytest.mark.parametrize("rec", [LATENCY_HRTICK, LATENCY_HRTICK_B2, LATENCY_HRTICK_612],
                         ids=["6.1", "6.1-boot2", "6.12"])
def test_latency_goal_of_hrtick_is_not_met_with_5_s_runs(rec):
    """The goal (worst case within 1.2 Q of the task's own) fails with HRTICK_DL on both
    kernels in 5-s runs (bench/seeds/RESULTS.md); FIFO 50 is still 20x worse."""
    base, fifo = _runs(rec, "baseline"), _runs(rec, "fifo50")
    for q, t in rec["params"]["reserved"]:
        hr, _ = _hrtick_runs(rec, q, t)
        bad = shapes.latency_enforced(base, fifo, hr, q)
        assert bad and not any("FIFO 50" in b for b in bad), bad




@pytest.mark.parametrize("rec", [LATENCY_HRTICK_PATH, LATENCY_HRTICK_PATH_B2,
                                 LATENCY_HRTICK_PATH_612], ids=["6.1", "6.1-boot2", "6.12"])
@pytest.mark.parametrize("i", [0, 1], ids=["1ms", "2ms"])
def test_hrtick_below_the_tick_over_the_whole_path(rec, i):
    q, t = rec["params"]["reserved"][i]
    grid = rec["params"]["interval_us"], rec["params"]["hist_us"]
    hr, tick = _hrtick_runs(rec, q, t)
    fifo = _runs(rec, "fifo50")
    assert shapes.hrtick_below_tick(fifo, tick, hr, *grid) == []
    # removed: HRTICK_DL off in place of on
    assert shapes.hrtick_below_tick(fifo, hr, tick, *grid)
    # removed: the reservation itself (FIFO 50 runs in place of the HRTICK_DL ones)
    assert shapes.hrtick_below_tick(fifo, tick, fifo, *grid)


@pytest.mark.parametrize("boot", range(len(HRTICK_BOOTS["boots"])),
                         ids=[b["date"][:16].replace(" ", "T") for b in HRTICK_BOOTS["boots"]])
def test_hrtick_below_the_tick_in_one_run_of_each_suite_boot(boot):
    """The shape holds on one run alone in each of the six suite boots, the one whose
    share beyond Q + 2 ms failed among them; the p99 or the share does not in every boot."""
    b = HRTICK_BOOTS["boots"][boot]
    p = HRTICK_BOOTS["params"]
    grid = p["interval_us"], p["hist_us"]
    fifo, tick, hr = ([r for r in b["results"] if r["label"] == label]
                      for label in ("fifo50", "keep-1000000-5000000", "hrtick-1000000-5000000"))
    assert len(fifo) == len(tick) == len(hr) == 1
    assert "HRTICK_DL" in hr[0]["features"].split()
    assert shapes.hrtick_below_tick(fifo, tick, hr, *grid) == []
    # removed: HRTICK_DL off in place of on
    assert shapes.hrtick_below_tick(fifo, hr, tick, *grid)


def test_single_numbers_of_single_runs_fail_in_some_suite_boot():
    """Why the shape is the tail's mean: the p99 and the share of cycles later than Q + 2
    ms (3 ms here) each put HRTICK_DL at or above the tick in at least one of the boots
    (the worst case did in a boot beside a host load of 8, not among these)."""
    import stats

    def late_share(hist: dict, interval_us: int, hist_us: int, beyond_us: int) -> float:
        cycles, beyond = stats.grid_lateness(hist, interval_us, hist_us)
        late = sum(n for lat, n in cycles.items() if lat > beyond_us) + beyond
        return late / (sum(cycles.values()) + beyond)

    p = HRTICK_BOOTS["params"]
    grid = p["interval_us"], p["hist_us"]
    above = {"p99": 0, "late share": 0}
    for b in HRTICK_BOOTS["boots"]:
        tick, hr = (next(r["hist"] for r in b["results"] if r["label"] == label)
                    for label in ("keep-1000000-5000000", "hrtick-1000000-5000000"))
        above["p99"] += (stats.grid_summary(hr, *grid)["p99"]
                         >= stats.grid_summary(tick, *grid)["p99"])
        above["late share"] += late_share(hr, *grid, 3000) >= late_share(tick, *grid, 3000)
    assert all(above.values()), above


def test_hrtick_does_not_lower_every_worst_case_over_the_whole_path_on_6_12():
    """Why the shape is the p99's: on 6.12 HRTICK_DL lowered it in every run, and the
    worst case not in three of six."""
    rec = LATENCY_HRTICK_PATH_612
    higher = []
    for q, t in rec["params"]["reserved"]:
        hr, tick = _hrtick_runs(rec, q, t)
        at_tick = {r["run"]: r["hist"]["max_us"] for r in tick}
        higher += [(q, r["run"]) for r in hr if r["hist"]["max_us"] >= at_tick[r["run"]]]
    assert len(higher) >= 3, higher


def test_latency_overrun_over_the_whole_path_does_not_hold_in_a_second_6_1_boot():
    rec = LATENCY_HRTICK_PATH_B2
    base, fifo = _runs(rec, "baseline"), _runs(rec, "fifo50")
    for q, t in rec["params"]["reserved"]:
        assert shapes.latency_overrun(base, fifo, _hrtick_runs(rec, q, t)[0], q)


def test_latency_goal_over_the_whole_path_is_met_at_2_ms_and_not_at_1_ms():
    """The goal (worst case within 1.2 Q of the task's own, FIFO 50 20x worse) holds with
    HRTICK_DL for Q = 2 ms over the whole path; for Q = 1 ms the worst case is two budgets
    back to back (2Q) plus the task's own (bench/seeds/RESULTS.md)."""
    rec = LATENCY_HRTICK_PATH
    base, fifo = _runs(rec, "baseline"), _runs(rec, "fifo50")
    (q1, t1), (q2, t2) = rec["params"]["reserved"]
    assert shapes.latency_enforced(base, fifo, _hrtick_runs(rec, q2, t2)[0], q2) == []
    bad = shapes.latency_enforced(base, fifo, _hrtick_runs(rec, q1, t1)[0], q1)
    assert bad and not any("FIFO 50" in b for b in bad), bad


TOOLS = record("tools-icount-nice0-20261126T015121.json")
TOOLS_ROWS = [r for r in TOOLS["result"]["rows"] if r["period_ns"] in (10_000_000, 100_000_000)]


def _mean_within_1pct(gaps: list[int], period: int) -> bool:
    """The criterion experiment 1 had before: blind to the distortions below."""
    return abs(sum(gaps) / len(gaps) - period) <= 0.01 * period


def _lost(row: dict) -> dict:
    r = copy.deepcopy(row)
    r["series"]["recv"] = r["series"]["recv"][:-1]
    r["datagrams"]["received"] -= 1
    return r


def _merged(row: dict) -> dict:
    r = copy.deepcopy(row)
    g = r["series"]["irq_rx"]
    g[len(g) // 2:len(g) // 2 + 2] = [g[len(g) // 2] + g[len(g) // 2 + 1]]
    r["datagrams"]["woke"] -= 1
    return r


def _wider(row: dict) -> dict:
    """The thread's gaps shuffled with their std made 2 % of the period, same mean."""
    r = copy.deepcopy(row)
    g = np.asarray(r["series"]["irq_rx"], dtype=np.float64)
    z = (g - g.mean()) / g.std()
    wide = np.rint(g.mean() + z * 0.02 * row["period_ns"]).astype(np.int64)
    r["series"]["irq_rx"] = [int(x) for x in np.random.default_rng(1).permutation(wide)]
    return r


@pytest.mark.parametrize("row", TOOLS_ROWS, ids=lambda r: f"T{r['period_ns'] // 1_000_000}"
                         f"-run{r['run']}")
def test_tools_spread_holds_on_the_recorded_rows_and_fails_on_a_distorted_series(row):
    assert shapes.tools_spread_row(row) == []
    # a lost datagram and a wider spread leave the mean within 1 % of the period; a
    # merged one moves it by 1/n (above 1 % in a 60-datagram row, below in longer ones)
    for distort, blind, why in ((_lost, "recv", ("lost 1",)), (_merged, None, ("merged 1",)),
                                (_wider, "irq_rx", ("thread std", "W1 to the"))):
        bad = distort(row)
        if blind:
            assert _mean_within_1pct(bad["series"][blind], row["period_ns"]), distort.__name__
        missed = shapes.tools_spread_row(bad)
        assert any(w in m for m in missed for w in why), (distort.__name__, missed)


def _tools_trace(watchdog_ns: int | None):
    """The NIC thread (pid 100) in a trace that starts inside its activation for datagram
    0 (at 1 ms it wakes the receiver, pid 200, and sleeps), then datagrams 1..4 every
    100 ms from 100 ms, each waking the receiver; with ``watchdog_ns`` the e1000 watchdog
    (a kworker, pid 300) raises the NIC's interrupt once more at that time."""
    from irqres.trace.synthetic import (
        IRQ_WAKE_THREAD,
        TASK_INTERRUPTIBLE,
        TASK_RUNNING,
        TraceBuilder,
    )
    b = TraceBuilder()
    for pid, name in ((100, tools.NIC), (200, "seedload"), (300, "kworker/1:2"),
                      (0, "swapper/1")):
        b.comm(pid, name)
    b.waking(1 * MS, 1, 100, 200, 0)
    b.switch(1 * MS + 50 * US, 1, 100, TASK_INTERRUPTIBLE, 0)
    jobs = [(100 * MS * k, 0, True) for k in range(1, 5)]
    if watchdog_ns is not None:
        jobs.append((watchdog_ns, 300, False))
    for t, cur, datagram in sorted(jobs):
        b.irq(t, 1, cur, 11, "eth0", IRQ_WAKE_THREAD)
        b.waking(t + 2 * US, 1, cur, 100, 1)
        b.switch(t + 3 * US, 1, cur, TASK_RUNNING, 100)
        if datagram:
            b.waking(t + 200 * US, 1, 100, 200, 0)
        b.switch(t + 250 * US, 1, 100, TASK_INTERRUPTIBLE, cur)
    return b.build()


@pytest.mark.parametrize("watchdog_ns", [None, 20 * MS, 150 * MS])
def test_tools_take_the_activation_each_datagram_woke_the_receiver_in(watchdog_ns):
    # recorded in a VM-suite run (6.1, T100): the datagram the trace started in had no kept
    # activation and was given the watchdog's, 20 ms later: the thread's std 4.5 ms
    rx = tools.datagram_activations(_tools_trace(watchdog_ns))
    assert rx["activations"] == 4
    assert rx["gaps_ns"] == [100 * MS] * 3
    assert len(rx["all_gaps_ns"]) == 3 + (watchdog_ns is not None)


# experiment 3 with threaded NAPI (player_dl_napi.py), 3 runs each on 6.1: the NAPI kthread
# reserved beside the IRQ thread, and left at its default
NAPI = record("player-dl-napi-icount-nice0-20261126T020220.json")
NAPI_DEFAULT = record("player-dl-napi-icount-nice0-default-20261126T020903.json")
NAPI_LONG = record("player-dl-napi-icount-nice0-long-20261126T022138.json")  # 8 s, reserved


def _napi_runs(rec: dict) -> list[list[dict]]:
    rows = rec["result"]["rows"]
    return [sorted((r for r in rows if r["run"] == run), key=lambda r: r["test"])
            for run in sorted({r["run"] for r in rows})]


def _napi_args(rec: dict) -> tuple[int, int]:
    return rec["params"]["size"], rec["params"]["nic_period_ns"]


def test_napi_shape_holds_reserved_and_fails_with_the_napi_kthread_at_its_default():
    assert NAPI["result"]["napi"] == "reserved" and NAPI_DEFAULT["result"]["napi"] == "default"
    assert len(_napi_runs(NAPI)) == len(_napi_runs(NAPI_DEFAULT)) == 3
    for rec in (NAPI, NAPI_LONG):
        for rows in _napi_runs(rec):
            assert shapes.napi_reserved(rows, *_napi_args(rec)) == [], rows[0]["run"]
    for rows in _napi_runs(NAPI_DEFAULT):
        bad = shapes.napi_reserved(rows, *_napi_args(NAPI_DEFAULT))
        assert len([b for b in bad if "NAPI kthread" in b]) == len(rows), bad


def test_napi_goal_is_not_met_reserved_only_for_the_proportionality():
    """With the NAPI kthread reserved, every part of the goal holds in every run but the
    fit's R² (0.75..0.97 through the origin, bench/seeds/RESULTS.md)."""
    for rows in _napi_runs(NAPI):
        bad = shapes.napi_goal(rows, *_napi_args(NAPI))
        assert len(bad) == 1 and bad[0].startswith("application: R²"), bad


def test_napi_goal_with_8_s_measurements_is_met_in_one_run_of_three():
    """Longer measurements (8 guest-seconds): R² 0.986, 0.969, 0.936; the rest holds."""
    met = []
    for rows in _napi_runs(NAPI_LONG):
        bad = shapes.napi_goal(rows, *_napi_args(NAPI_LONG))
        assert all(b.startswith("application: R²") for b in bad), bad
        met.append(not bad)
    assert met == [True, False, False], met


# the same, 3 runs each, on 6.12 (budgets at the tick) and with `enforcement: hrtick`
# (HRTICK_DL) on 6.1 and 6.12
NAPI_612 = record("player-dl-napi-icount-nice0-20261126T092158.json")
NAPI_HRTICK = record("player-dl-napi-icount-nice0-hrtick-20261126T092654.json")  # 6.1
NAPI_HRTICK_612 = record("player-dl-napi-icount-nice0-hrtick-20261126T093027.json")
# a second boot of each, later the same morning
NAPI_61_B = record("player-dl-napi-icount-nice0-20261126T093502.json")
NAPI_HRTICK_B = record("player-dl-napi-icount-nice0-hrtick-20261126T093847.json")  # 6.1
NAPI_612_B = record("player-dl-napi-icount-nice0-20261126T094158.json")
NAPI_HRTICK_612_B = record("player-dl-napi-icount-nice0-hrtick-20261126T094526.json")
# a third boot of each, the enforcements in the other order
NAPI_HRTICK_C = record("player-dl-napi-icount-nice0-hrtick-20261126T095037.json")  # 6.1
NAPI_61_C = record("player-dl-napi-icount-nice0-20261126T095407.json")
NAPI_HRTICK_612_C = record("player-dl-napi-icount-nice0-hrtick-20261126T095711.json")
NAPI_612_C = record("player-dl-napi-icount-nice0-20261126T100014.json")


def _failed_parts(bad: list[str]) -> list[str]:
    """What a list of shapes.napi_* failures names, without its numbers."""
    return sorted({b.split(":")[0] for b in bad})


@pytest.mark.parametrize(("rec", "kernel", "hrtick"), [
    (NAPI_612, "6.12.", False), (NAPI_HRTICK, "6.1.", True), (NAPI_HRTICK_612, "6.12.", True),
    (NAPI_61_B, "6.1.", False), (NAPI_HRTICK_B, "6.1.", True), (NAPI_612_B, "6.12.", False),
    (NAPI_HRTICK_612_B, "6.12.", True), (NAPI_HRTICK_C, "6.1.", True),
    (NAPI_61_C, "6.1.", False), (NAPI_HRTICK_612_C, "6.12.", True), (NAPI_612_C, "6.12.", False)])
def test_napi_records_ran_under_the_enforcement_they_name(rec, kernel, hrtick):
    assert rec["kernel"].startswith(kernel) and rec["result"]["napi"] == "reserved"
    assert rec["params"]["enforcement"] == ("hrtick" if hrtick else "keep")
    assert len(_napi_runs(rec)) == 3
    for r in rec["result"]["rows"]:
        feats = r["features"].split()
        assert ("HRTICK_DL" in feats) is hrtick and ("NO_HRTICK_DL" in feats) is not hrtick
        assert all(t["sched"]["policy"] == "deadline" for t in r["napi_after"]), r["test"]


@pytest.mark.parametrize(("rec", "reserved", "goal"), [
    # 6.12, the tick: the offered load was not held in runs 0 and 1 (1.125, 1.104 times
    # the smallest), R² 0.8492 in run 2
    (NAPI_612, [["offered load"], ["offered load"], []],
     [["offered load"], ["offered load"], ["application"]]),
    # 6.1, HRTICK_DL: R² 0.66, 0.84, 0.51
    (NAPI_HRTICK, [[], [], []], [["application"]] * 3),
    # 6.12, HRTICK_DL: R² 0.94, 0.97, 0.94; the offered load not held in run 2 (1.133)
    (NAPI_HRTICK_612, [[], [], ["offered load"]],
     [["application"], ["application"], ["application", "offered load"]]),
    # the second boots. 6.1, the tick: R² 0.9377, 0.9317 (and the offered load 1.112),
    # met in run 2 (R² 0.9882)
    (NAPI_61_B, [[], ["offered load"], []],
     [["application"], ["application", "offered load"], []]),
    # 6.1, HRTICK_DL: R² 0.90, 0.79, 0.95
    (NAPI_HRTICK_B, [[], [], []], [["application"]] * 3),
    # 6.12, the tick: met in runs 0 and 1 (R² 0.9950, 0.9930); run 2's offered load 1.102
    (NAPI_612_B, [[], [], ["offered load"]], [[], [], ["offered load"]]),
    # 6.12, HRTICK_DL: R² 0.9754, 0.9719, 0.9659; run 2's offered load 1.122
    (NAPI_HRTICK_612_B, [[], [], ["offered load"]],
     [["application"], ["application"], ["application", "offered load"]]),
    # the third boots. 6.1, HRTICK_DL: R² 0.94, 0.90, 0.95; run 2's offered load 1.172
    (NAPI_HRTICK_C, [[], [], ["offered load"]],
     [["application"], ["application"], ["application", "offered load"]]),
    # 6.1, the tick: R² 0.95, 0.87, 0.92
    (NAPI_61_C, [[], [], []], [["application"]] * 3),
    # 6.12, HRTICK_DL: R² 0.96, 0.88, 0.93; run 2's offered load 1.119
    (NAPI_HRTICK_612_C, [[], [], ["offered load"]],
     [["application"], ["application"], ["application", "offered load"]]),
    # 6.12, the tick: R² 0.9749, 0.9401, 0.9739; run 0's offered load 1.152
    (NAPI_612_C, [["offered load"], [], []],
     [["application", "offered load"], ["application"], ["application"]]),
])
def test_napi_shape_and_goal_per_run_as_measured_on_6_12_and_with_hrtick(rec, reserved, goal):
    """Every part of the reserved shape but the offered load's spread holds in every run
    (ksoftirqd 0 %, the player 0 misses, the pair within Q/T, the NAPI kthread using its
    part); the goal is met only with the budgets enforced at the tick (run 2 of 6.1's
    second boot, runs 0 and 1 of 6.12's)."""
    runs = _napi_runs(rec)
    assert [_failed_parts(shapes.napi_reserved(rs, *_napi_args(rec))) for rs in runs] == \
        reserved
    assert [_failed_parts(shapes.napi_goal(rs, *_napi_args(rec))) for rs in runs] == goal


# Lee et al.'s, 3 runs each: the record with each frame's time off its work, and the one
# from before the player reported it (its kernel default grew +74..76 %)
PA = record("process-aware-icount-nice0-20261128T094723.json")
PA_BEFORE = record("process-aware-icount-nice0-20261126T055146.json")


def _pa(run: int, mode: str, rec: dict = PA) -> list[dict]:
    return [r for r in rec["result"]["rows"] if r["run"] == run and r["mode"] == mode]


@pytest.mark.parametrize("run", [0, 1, 2])
def test_process_aware_shape_holds_coupled_and_fails_at_the_kernel_default(run):
    coupled, default = _pa(run, "coupled"), _pa(run, "default")
    rates = set(PA["params"]["rates"])
    assert {r["rate"] for r in coupled} == {r["rate"] for r in default} == rates
    assert all(["fifo", 10] in r["nic_seen"] for r in coupled)
    assert all(r["nic_seen"] == [["fifo", 50]] for r in default)
    assert shapes.process_aware(coupled) == [], shapes.process_aware(coupled)
    # removed: the NIC thread left at the kernel's SCHED_FIFO 50 preempts the high job
    bad = shapes.process_aware(default)
    assert any("off its work (mean), over 300 us" in b for b in bad), bad


def test_process_aware_growth_alone_did_not_tell_the_default_from_coupled():
    """Why the shape measures the time off the work: at the kernel default, this record's
    growth stays within the 25 % in some run, where the 2026-11-26 record's grew 74 %."""
    alone = [shapes.process_aware(_pa(run, "default"), off_ns=None) for run in (0, 1, 2)]
    assert [] in alone, alone
    assert all(shapes.process_aware(_pa(run, "default", PA_BEFORE), off_ns=None)
               for run in (0, 1, 2))


def test_process_aware_goal_of_10_percent_is_met_coupled_in_every_run():
    met = [run for run in (0, 1, 2)
           if not shapes.process_aware(_pa(run, "coupled"), shapes.PA_GOAL, off_ns=None)]
    assert met == [0, 1, 2]
    before = [run for run in (0, 1, 2)
              if not shapes.process_aware(_pa(run, "coupled", PA_BEFORE), shapes.PA_GOAL,
                                          off_ns=None)]
    assert before == [1]


def test_process_aware_shape_needs_the_time_off_the_work():
    """A record whose player did not report it cannot pass the shape."""
    bad = shapes.process_aware(_pa(0, "coupled", PA_BEFORE))
    assert len(bad) == 1 and "reported no time off its work" in bad[0], bad
    assert shapes.process_aware(_pa(0, "coupled", PA_BEFORE), off_ns=None) == []


def test_process_aware_shape_needs_two_rates_and_counts_misses():
    rows = _pa(0, "coupled")
    assert shapes.process_aware(rows[:1])
    missed = copy.deepcopy(rows)
    missed[-1]["high"]["out"] = missed[-1]["high"]["out"].replace("misses 0", "misses 1")
    assert any("missed 1" in b for b in shapes.process_aware(missed))
    assert shapes.pa_misses(missed[-1]["high"]) == 1


# the rule by the packets each receiver read, its truth from the kernel's histogram of
# the NIC thread's deliveries; the same rule's record from before the histogram (truth by
# the datagrams read); and before the rule, the rule by wake-ups alone
ACCT = record("accounting-accuracy-icount-nice0-20261127T232743.json")
ACCT_BY_READS = record("accounting-accuracy-icount-nice0-20261127T085739.json")
ACCT_WAKEUPS = record("accounting-accuracy-icount-nice0-20261126T060249.json")


def _acct_mutated(rec: dict, how: str) -> list[dict]:
    """The record's rows with the accounting's growth over each window redistributed:
    ``one`` all to the first receiver, ``swap`` each receiver's to the other, ``even``
    half each (an accounting blind to whom it woke), ``none`` all to nobody (fed a thread
    that wakes neither receiver)."""
    rows = copy.deepcopy(rec["result"]["rows"])
    for row in rows:
        before = {a["pid"]: a["irq_time_ns"] for a in row["before"]["served"]}
        after = {a["pid"]: a for a in row["after"]["served"]}
        grew = [after[p]["irq_time_ns"] - before.get(p, 0) for p in row["pids"]]
        new = {"one": [sum(grew), 0], "swap": grew[::-1],
               "even": [sum(grew) // 2] * 2, "none": [0, 0]}[how]
        for p, g in zip(row["pids"], new, strict=True):
            after[p]["irq_time_ns"] = before.get(p, 0) + g
    return rows


def test_accounting_accuracy_goal_met_and_fails_mis_attributed():
    """Recorded: the 5 % goal met in every window, and broken in every window by every
    mis-attribution."""
    rows = ACCT["result"]["rows"]
    assert len({r["run"] for r in rows}) == 3 and len({tuple(r["periods_ns"]) for r in rows}) == 2
    windows = {f"run {r['run']} periods {r['periods_ns']}" for r in rows}
    assert shapes.accounting_accurate(rows) == []
    for how in ("one", "swap", "even", "none"):
        bad = shapes.accounting_accurate(_acct_mutated(ACCT, how))
        assert {b.split(": port")[0] for b in bad} == windows, (how, bad)


def test_accounting_accuracy_fails_on_the_wakeup_rule_record():
    """The boot before the packet rule (wake-ups alone decided): the high-rate receiver
    8 to 12 % short in every window, which the goal rejects."""
    rows = ACCT_WAKEUPS["result"]["rows"]
    windows = {f"run {r['run']} periods {r['periods_ns']}" for r in rows}
    goal = shapes.accounting_accurate(rows)
    assert {b.split(": port")[0] for b in goal if ": port 5002:" in b} == windows, goal


def test_accounting_truth_is_the_nic_threads_deliveries():
    """The truth splits by what the NIC thread delivered to each receiver (a datagram read
    but taken from the ring by ktimers or rcuc cost the thread nothing); a record from
    before the histogram splits by the datagrams read, and still meets the goal."""
    from accounting_attribution import attribution, deliveries
    for row in ACCT["result"]["rows"]:
        w = attribution(row)
        assert w["truth_by"] == "delivered", w
        dv = deliveries(row)
        for i, r in enumerate(w["receivers"]):
            assert r["delivered"] == dv["thread"][i]
            assert r["delivered"] + r["elsewhere"] >= r["reads"]
        assert sum(r["truth_ns"] for r in w["receivers"]) <= w["cpu_ns"]
        assert row["before"]["thread"]["comm"] not in w["elsewhere_by"]
    assert any(r["elsewhere"] for row in ACCT["result"]["rows"]
               for r in attribution(row)["receivers"])
    old = [attribution(row) for row in ACCT_BY_READS["result"]["rows"]]
    assert {w["truth_by"] for w in old} == {"read"}
    assert all(r["truth_ns"] == r["truth_read_ns"] and r["delivered"] is None
               for w in old for r in w["receivers"])
    assert shapes.accounting_accurate(ACCT_BY_READS["result"]["rows"]) == []


def test_accounting_deliveries_count_by_thread_and_length():
    """Flow i's datagrams are sizes[i] + 28 bytes at netif_receive_skb; other lengths
    (ARP, another flow) count for no receiver."""
    from accounting_attribution import deliveries
    row = {"sizes": [512, 513], "after": {"thread": {"pid": 40}},
           "deliveries": [{"pid": 40, "len": 540, "count": 90, "comm": "irq/11-eth0"},
                          {"pid": 40, "len": 541, "count": 300, "comm": "irq/11-eth0"},
                          {"pid": 40, "len": 28, "count": 3, "comm": "irq/11-eth0"},
                          {"pid": 16, "len": 540, "count": 4, "comm": "ktimers/1"},
                          {"pid": 17, "len": 541, "count": 6, "comm": "rcuc/1"},
                          {"pid": 16, "len": 541, "count": 1, "comm": "ktimers/1"}]}
    assert deliveries(row) == {"thread": [90, 300], "elsewhere": [4, 7],
                               "by": {"ktimers/1": 5, "rcuc/1": 6}}
    assert deliveries({k: v for k, v in row.items() if k != "deliveries"}) is None


def test_accounting_accuracy_fails_when_the_histogram_missed_datagrams():
    """A histogram that counted fewer datagrams than a receiver read (a trigger set late,
    a length not the flow's) cannot be the truth: the goal says so."""
    rows = copy.deepcopy(ACCT["result"]["rows"])
    mine = [d for d in rows[0]["deliveries"]
            if d["len"] == rows[0]["sizes"][0] + 28 and d["count"] > 10]
    mine[0]["count"] -= 10
    bad = shapes.accounting_accurate(rows)
    assert any("port 5001" in b and "the histogram missed some" in b for b in bad), bad


def test_accounting_accuracy_fails_when_the_accounting_is_off():
    rows = copy.deepcopy(ACCT["result"]["rows"])
    rows[0]["after"]["enabled"] = False
    rows[0]["after"]["error"] = "tracefs /sys/kernel/tracing: creating the instance: EACCES"
    bad = shapes.accounting_accurate(rows)
    assert len(bad) == 1 and "accounting off" in bad[0], bad


# the boots with a phase before any irqres action (--at-boot boots have none)
REGIMES = sorted(p for p in DATA.glob("player-fifo-regimes-icount-*.json")
                 if "-at-boot-" not in p.name)
SUITE_BOOTS = record("player-fifo-suite-boots-20261126T050800.json")


def _phase(rec: dict, phase: str) -> list[dict]:
    return [r for r in rec["result"]["rows"] if r["phase"] == phase]


@pytest.mark.parametrize("path", REGIMES, ids=lambda p: p.name)
def test_experiment_2_agrees_before_any_irqres_action_and_after_its_cycles(path):
    """player_fifo.py --regimes: in each boot, experiment 2 before irqresd first ran and
    after the seeds boot's apply/restore cycles is in the same regime, and every restore
    left the scheduler's fingerprint as it was before the first apply."""
    rec = json.loads(path.read_text())
    assert shapes.regimes_agree(_phase(rec, "before"), _phase(rec, "after cycles")) == []
    assert all(d == [] for d in rec["result"]["fingerprint_diffs"].values()), (
        rec["result"]["fingerprint_diffs"])


def test_the_regimes_shape_fails_on_the_two_regime_data():
    """The VM suite's boots in each regime (the player above the NIC thread on time, the
    NIC thread sharing the CPU; or the NIC thread starved): the shape rejects the pair,
    on the player's misses and the NIC thread's throughput with the player above."""
    on_time, starved = (b["rows"] for b in SUITE_BOOTS["boots"])
    bad = shapes.regimes_agree(on_time, starved)
    assert any(b.startswith("player above: misses") for b in bad), bad
    assert any(b.startswith("player above: NIC thread") for b in bad), bad
    assert shapes.regimes_agree(on_time, on_time) == []
    assert shapes.regimes_agree(on_time, []) == ["player above: a phase without rows",
                                                 "player below: a phase without rows"]


def _at_boot(tag: str) -> list[dict]:
    return [json.loads(p.read_text())
            for p in sorted(DATA.glob(f"player-fifo-regimes-icount-*-{tag}-2*.json"))]


def test_in_the_suite_s_order_the_restore_left_the_sender_s_irq_thread_on_the_nic_s_cpu():
    """irqresd's apply at boot, the hub's setup after it (the VM suite's order): before the
    restore gave an IRQ thread back the CPUs of its IRQ that were all the root had, the
    sender's NIC's thread (SCHED_FIFO 90) was left on both CPUs, ran on the NIC's and the
    player above the NIC thread missed frames; with it, it stays on the sender's CPU and
    the player is on time, as in the boots whose first irqres action came later."""
    import regimes_report

    before, fixed = _at_boot("at-boot"), _at_boot("at-boot-fixed")
    assert before and fixed
    for rec, cpus, verdict in [(r, "0-1", "between") for r in before] + [
            (r, "0", "on time") for r in fixed]:
        rows = _phase(rec, "boot apply restored")
        assert regimes_report.regime(rows) == verdict, rows
        assert {r["before"]["eth1_thread"]["cpus"] for r in rows} == {cpus}, rows


# The VM suite's seeds boot over eth0's whole receive path (threaded NAPI), two 6.1 boots
# of its first version: experiment 6 as the path at SCHED_FIFO 50 and reserved 2 ms / 10 ms
# at the tick (``latency_napi``; the boot now runs the same rows and HRTICK_DL's beside).
SHAPES_NAPI = [record("shapes-napi-icount-20261126T090654.json"),
               record("shapes-napi-icount-20261126T090955.json")]


@pytest.mark.parametrize("rec", SHAPES_NAPI, ids=["boot1", "boot2"])
def test_latency_shape_over_the_whole_path_holds_and_fails_with_the_path_at_fifo(rec):
    res = rec["result"]["latency_napi"]
    by = {r["label"]: r for r in res["results"]}
    assert by["fifo50"]["napi"][0]["sched"]["policy"] == "fifo"
    assert by["reserved"]["napi"][0]["sched"]["policy"] == "deadline"
    # the NAPI kthread did the work, not ksoftirqd, in both cases
    for r in by.values():
        assert r["cpu_ns"]["napi"] > 10 * r["cpu_ns"]["ksoftirqd"], r["cpu_ns"]
    grid = 1000, 100_000
    assert shapes.latency(by["fifo50"], by["reserved"], *grid) == []
    # removed: the "reserved" measurement is the FIFO 50 one
    assert shapes.latency(by["fifo50"], by["fifo50"], *grid)


def _path_rows(rec: dict) -> tuple[dict, dict, dict]:
    by = {r["order"]: r for r in rec["result"]["player_napi"]["rows"]}
    return by["above"], by["below"], rec["result"]["player_dl_napi"]["rows"][0]


NIC_PERIOD_NS = 100_000_000  # the path's period in the seeds boot (experiment 3)


@pytest.mark.parametrize("rec", SHAPES_NAPI, ids=["boot1", "boot2"])
def test_path_reserved_holds_and_fails_with_each_reservation_removed(rec):
    above, below, dl = _path_rows(rec)
    assert shapes._misses(below) > 0  # the precondition: plain SCHED_FIFO below the path
    assert shapes.path_reserved(below, dl, NIC_PERIOD_NS) == []
    # the player's reservation removed: the player below the path at fixed priorities
    fifo = {**below, **{k: dl[k] for k in ("nic_q", "irq_q", "test")}}
    bad = shapes.path_reserved(below, fifo, NIC_PERIOD_NS)
    assert any(b.startswith("player: policy") for b in bad), bad
    assert any(b.startswith("player: ") and "misses" in b for b in bad), bad
    # the path's reservation removed: at SCHED_FIFO 50 above the player it takes what the
    # player leaves
    unreserved = {**dl, "cpu_ns": above["cpu_ns"], "span_ns": above["span_ns"]}
    bad = shapes.path_reserved(below, unreserved, NIC_PERIOD_NS)
    assert any("NIC threads' CPU share" in b for b in bad), bad
    # the polls leaking to ksoftirqd (the IRQ thread alone reserved)
    leak = {**dl, "cpu_ns": {**dl["cpu_ns"], "ksoftirqd": dl["span_ns"] // 10}}
    assert any("ksoftirqd" in b for b in shapes.path_reserved(below, leak, NIC_PERIOD_NS))
    # the reserved path doing half the work per point of CPU that the line asks for
    line = shapes.PER_POINT_SHARE * below["mbit_s"] / shapes._pair_pct(below)
    slow = {**dl, "mbit_s": 0.5 * line * shapes._pair_pct(dl)}
    assert any("per point" in b for b in shapes.path_reserved(below, slow, NIC_PERIOD_NS))


ZW_TASK = {"prio": 40, "period_ns": 10 * US * 1000, "work_ns": 9_500 * US}


def _zw_made_up(late_ns: int = 0, reads: int = 200, nic_cpu_ns: int = 20_000_000) -> dict:
    """A row of 100 periods of 10 ms, the last job ``late_ns`` after its next release; 400
    datagrams sent over 2 s (100 in the first half second, 200 in the next whole one,
    100 in the rest: 200 in the task's 1 s), 400 taken from the ring, ``reads`` of them
    read in the task's window, the NIC thread and the server on the CPU ``nic_cpu_ns`` and 5 ms."""
    period = ZW_TASK["period_ns"]
    frames = [[k * period, k * period, k * period + 9_600 * US] for k in range(100)]
    frames[-1][2] = 100 * period + late_ns if late_ns else frames[-1][2]
    return {"run": 0, "mode": "coupled", "rate": 200, "frames": frames,
            "reads_ns": [k * (100 * period // max(reads, 1)) for k in range(reads)],
            "sender": "sent 400 failed 0 sojourns 5 high_ns 1 start_ns 0 duration_ns "
                      "2000000000 seed 1 rate_lo 111 rate_hi 555 hold_lo_ns 400000000 "
                      "hold_hi_ns 100000000",
            "states": [[0, 0, 100], [period * 50, 1, 200], [period * 150, 0, 100]],
            "rx": {"rx_packets": 400}, "nic_cpu_ns": nic_cpu_ns, "server_cpu_ns": 5_000_000}


def test_zhang_west_row_counts_misses_lateness_reads_and_the_cpu_left():
    m = shapes.zw_row(_zw_made_up(late_ns=3_000 * US), ZW_TASK)
    assert (m["periods"], m["misses"], m["max_late_ns"]) == (100, 1, 3_000 * US)
    assert m["sent"] == 400 and m["sent_per_s"] == pytest.approx(200.0)  # 100 + 200 / 2
    assert m["rx_per_s"] == pytest.approx(200.0)  # 200 reads in the task's 1 s
    # 50 us per packet for the NIC thread, 25 us per read for the server: 75 us a
    # datagram; 5 % of a CPU allows 667/s, more than the 200/s sent
    assert m["cost_ns"] == pytest.approx(75_000)
    assert m["allowed_per_s"] == pytest.approx(200.0)
    slow = shapes.zw_row(_zw_made_up(nic_cpu_ns=400 * 1_000_000), ZW_TASK)
    assert slow["allowed_per_s"] == pytest.approx(0.05e9 / (1_000_000 + 25_000))


def test_zhang_west_shape_fails_on_a_miss_and_on_a_starved_server():
    assert shapes.zhang_west([_zw_made_up()], ZW_TASK) == []
    assert shapes.zhang_west([], ZW_TASK) == ["no rows"]
    bad = shapes.zhang_west([_zw_made_up(late_ns=1)], ZW_TASK)
    assert len(bad) == 1 and "missed 1 of 100" in bad[0], bad
    # the goal: 80 % of the 200/s allowed; the shape: a quarter of it
    assert shapes.zhang_west([_zw_made_up(reads=160)], ZW_TASK, shapes.ZW_RX_GOAL) == []
    bad = shapes.zhang_west([_zw_made_up(reads=150)], ZW_TASK, shapes.ZW_RX_GOAL)
    assert len(bad) == 1 and "read 150/s" in bad[0], bad
    assert shapes.zhang_west([_zw_made_up(reads=50)], ZW_TASK) == []
    bad = shapes.zhang_west([_zw_made_up(reads=45)], ZW_TASK)
    assert len(bad) == 1 and "read 45/s, under 25 %" in bad[0], bad


ZW = record("zhang-west-icount-nice0-20261126T130339.json")  # Zhang and West's, 3 runs


def _zw(run: int, mode: str) -> list[dict]:
    return [r for r in ZW["result"]["rows"] if r["run"] == run and r["mode"] == mode]


@pytest.mark.parametrize("run", [0, 1, 2])
def test_zhang_west_shape_holds_coupled_and_fails_at_the_kernel_default(run):
    coupled, default, task = _zw(run, "coupled"), _zw(run, "default"), ZW["params"]["task"]
    assert {r["rate"] for r in coupled} == {r["rate"] for r in default} == \
        set(ZW["params"]["rates"])
    assert all(r["nic_seen"] == [["fifo", 10]] for r in coupled if r["rate"])
    assert all(r["nic_seen"] == [["fifo", 50]] for r in default)
    assert shapes.zhang_west(coupled, task) == [], shapes.zhang_west(coupled, task)
    # removed: the NIC thread left at the kernel's SCHED_FIFO 50 misses at every rate
    # with a sender, and the server reads next to nothing at the highest
    bad = shapes.zhang_west(default, task)
    assert sum("the task missed" in b for b in bad) == 3, bad
    assert any(b.startswith("default 600/s: the server read") for b in bad), bad


def test_zhang_west_goal_of_80_percent_is_met_coupled_in_two_runs_of_three():
    met = [run for run in (0, 1, 2)
           if not shapes.zhang_west(_zw(run, "coupled"), ZW["params"]["task"],
                                    shapes.ZW_RX_GOAL)]
    assert met == [0, 1]


def test_zhang_west_report_rows_are_the_records_numbers():
    import zhang_west_report

    lines = zhang_west_report.table(ZW["result"]["rows"], "coupled", 5001, ZW["params"]["task"])
    assert "missed 0, 0, 0 deadlines" in lines[0] and "met in 2 of 3 runs" in lines[0]
    rows = {line.split(" | ")[0]: line for line in lines if line.startswith("| ")}
    assert rows["| 0"].startswith("| 0 | no sender | 3 | - | 0 [0..0] of 40 |")
    assert rows["| 600"].startswith("| 600 | 333 / 1665 | 3 | 581 [500..603] | 0 [0..0] of "
                                    "40 | 0 [0..0] | 116 [100..270] | 155 [139..218] |")
    default = zhang_west_report.table(ZW["result"]["rows"], "default", 5001,
                                      ZW["params"]["task"])
    assert any(line.startswith("| 600 | 333 / 1665 | 3 |") and "| 40 [40..40] of 40 |" in line
               and "| 0 [0..0] |" in line for line in default), default
