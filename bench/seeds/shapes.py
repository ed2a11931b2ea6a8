"""The shapes the VM suite asserts on the seeds' experiments, as pure functions of the
guest's data (guest time only), so that each can be run on recorded data as well: on a
run with its cause present (it must hold) and on one with its cause removed (it must
not). Each function returns the list of what failed, empty when the shape holds.

tests/vm/test_seeds.py asserts them on a fresh boot; tests/python/test_seeds_shapes.py
runs them on bench/seeds/data with the cause present and removed.
"""

from __future__ import annotations

import tools_spread
from report import app_mbit_s, linear_fit, offered_mbit_s
from stats import grid_summary, grid_tail_mean

# The reserved case's p99.9 and maximum against FIFO 50's: at least this many times smaller.
LATENCY_FACTOR = 5
# A reserved NIC thread's CPU share over the flood: at most Q/T plus SLACK points (the
# reservation bounds it). No lower bound: a reservation caps the thread, it does not make
# it use its budget (a CI boot on an idle host saw 1.5 % at Q/T 18 %, the flood's work
# done in less).
SHARE_SLACK = 1.0
# Experiment 6 with HRTICK_DL: the reserved worst case at most HRTICK_FACTOR Q above the
# task's own worst case without a flood; FIFO 50's at least FIFO_FACTOR times the reserved.
HRTICK_FACTOR = 1.2
FIFO_FACTOR = 20
# Enforced at the tick a budget overruns by up to a tick (4 ms at the HZ=250 of Debian's RT
# kernels); at its end (HRTICK_DL), by much less: the shape's line is half a tick.
OVERRUN_SLACK_US = 2000
# Experiment 6 with HRTICK_DL against the tick: the mean lateness of the latest TAIL_PCT %
# of the cycle grid, the runs of each pooled.
TAIL_PCT = 1.0
# A busy task reserved Q every T (tests/vm/test_enforcement.py, experiment_overrun.py): with
# HRTICK_DL each run in one go (a burst) ends at Q, p99 at most BURST_P99 Q and at most
# BURST_LONG of the bursts longer than Q + 1 ms; at the tick at least TICK_LONG of them are.
BURST_P99 = 1.1
BURST_LONG = 0.01
TICK_LONG = 0.25
# Experiment 3 with threaded NAPI (player_dl_napi.py): the application's throughput
# proportional to the NIC's Q/T (a fit through the origin with at least this R²), less than
# NAPI_SOFTIRQ_PCT % of the NIC's CPU in ksoftirqd, and an offered load held: a run's
# largest at most OFFERED_SPREAD times its smallest.
NAPI_R2 = 0.98
# Under a flood that overflows the NIC's ring the reserved NAPI kthread always has work:
# it gets at least NAPI_USE of its Q/T (a reservation guarantees its budget to a thread
# that is runnable; unreserved, SCHED_OTHER beside the sender's real-time tasks, it does not).
NAPI_USE = 0.9
NAPI_SOFTIRQ_PCT = 1.0
OFFERED_SPREAD = 1.1
# Experiment 3 against 2 over the whole receive path: reserved, the NIC's throughput per
# point of CPU its threads had is at least this share of what it had per point at fixed
# priority above the player (one 6.1 boot: 1.79 against 0.89 Mbit/s per point; the
# reserved path polls bigger batches). A reservation caps the CPU the path gets, not what
# it does with it.
PER_POINT_SHARE = 0.8


def _misses(row: dict) -> int:
    return int(row["player"].split()[3])  # "frames N misses M"


def latency(fifo: dict, reserved: dict, interval_us: int, hist_us: int) -> list[str]:
    """Experiment 6: cyclictest on the NIC's CPU under the flood; ``fifo`` with the NIC
    thread at SCHED_FIFO 50, ``reserved`` with it reserved (each a cyclictest histogram
    record). Over the intended cycle grid (stats.grid_summary), the reserved case's p99.9
    and maximum are LATENCY_FACTOR times smaller (a FIFO 50 percentile beyond the
    histogram counts as its bound, ``hist_us``)."""
    f = grid_summary(fifo["hist"], interval_us, hist_us)
    r = grid_summary(reserved["hist"], interval_us, hist_us)
    bad = []
    for k in ("p99.9", "max"):
        fv = hist_us if f[k] is None else f[k]
        if r[k] is None or r[k] * LATENCY_FACTOR > fv:
            bad.append(f"latency: {k} {r[k] or f'> {hist_us}'} us reserved is not "
                       f"{LATENCY_FACTOR}x below FIFO 50's {f[k] or f'> {hist_us}'} us")
    return bad


def worst(rows: list[dict]) -> int:
    """The largest cyclictest maximum (µs) over measurements."""
    return max(r["hist"]["max_us"] for r in rows)


def _worst_within(baseline: list[dict], fifo: list[dict], reserved: list[dict],
                  slack_us: float, what: str) -> list[str]:
    """Every reserved run's worst case at most the baseline's + ``slack_us``, every FIFO
    50 run's at least FIFO_FACTOR times the reserved runs' worst."""
    if not (baseline and fifo and reserved):
        return ["latency: a baseline, a FIFO 50 and a reserved run are all needed"]
    bound = worst(baseline) + slack_us
    bad = [f"latency: reserved run {r['run']} worst case {r['hist']['max_us']} us above "
           f"{what} + baseline = {bound:g} us"
           for r in reserved if r["hist"]["max_us"] > bound]
    low = min(r["hist"]["max_us"] for r in fifo)
    if low < FIFO_FACTOR * worst(reserved):
        bad.append(f"latency: FIFO 50 worst case {low} us is not {FIFO_FACTOR}x the "
                   f"reserved {worst(reserved)} us")
    return bad


def latency_enforced(baseline: list[dict], fifo: list[dict], reserved: list[dict],
                     runtime_ns: int) -> list[str]:
    """Experiment 6's goal with the budget enforced at its end (HRTICK_DL): in one boot,
    ``baseline`` the task without a flood, ``fifo`` with the NIC thread at SCHED_FIFO 50,
    ``reserved`` with it reserved with budget ``runtime_ns``. Every reserved run's worst
    case is at most HRTICK_FACTOR Q + the baseline's worst case, and every FIFO 50 run's
    at least FIFO_FACTOR times the reserved runs' worst."""
    return _worst_within(baseline, fifo, reserved, HRTICK_FACTOR * runtime_ns / 1000,
                         f"{HRTICK_FACTOR:g} Q")


def latency_overrun(baseline: list[dict], fifo: list[dict], reserved: list[dict],
                    runtime_ns: int) -> list[str]:
    """Experiment 6, the shape HRTICK_DL made in one 6.1 boot, not in the next (arguments
    as ``latency_enforced``): every reserved run's worst case is at most the baseline's
    + Q + OVERRUN_SLACK_US (enforced at the tick the thread overruns its budget by up to
    a tick), FIFO 50 as there."""
    return _worst_within(baseline, fifo, reserved, runtime_ns / 1000 + OVERRUN_SLACK_US,
                         f"Q + {OVERRUN_SLACK_US} us")


def share_over(bursts: list[int], bound: float) -> float:
    """The share of ``bursts`` longer than ``bound`` (0 for none)."""
    return sum(b > bound for b in bursts) / len(bursts) if bursts else 0.0


def burst_pct(bursts: list[int], q: float) -> int:
    """The ``q`` quantile of ``bursts`` (the burst at rank q·n; 0 for none)."""
    v = sorted(bursts)
    return v[min(len(v) - 1, int(q * len(v)))] if v else 0


def bursts_cut_at_budget(hrtick: list[list[int]], tick: list[list[int]],
                         q_ns: int) -> list[str]:
    """HRTICK_DL cuts a reserved busy task's bursts (ns of guest time, one list per run) at
    its budget; at the tick they run on towards the next tick."""
    bad = []
    for k, b in enumerate(hrtick):
        p99, long = burst_pct(b, 0.99), share_over(b, q_ns + 1_000_000)
        if not b or p99 > BURST_P99 * q_ns or long > BURST_LONG:
            bad.append(f"HRTICK_DL run {k}: {len(b)} bursts, p99 {p99 / 1e6:.2f} ms (at most "
                       f"{BURST_P99:g} Q = {BURST_P99 * q_ns / 1e6:.2f} ms), "
                       f"{100 * long:.1f} % longer than Q + 1 ms (at most "
                       f"{100 * BURST_LONG:g} %)")
    for k, b in enumerate(tick):
        long = share_over(b, q_ns + 1_000_000)
        if long < TICK_LONG:
            bad.append(f"tick run {k}: {100 * long:.1f} % of {len(b)} bursts longer than "
                       f"Q + 1 ms (at least {100 * TICK_LONG:g} %)")
    return bad


def tail_means(rows: list[dict], interval_us: int,
               hist_us: int) -> tuple[list[int | None], int | None]:
    """The mean lateness of the latest TAIL_PCT % of the cycle grid (stats.grid_tail_mean)
    of each run of ``rows`` and of the runs pooled (None: beyond the histogram)."""
    def mean(hists: list[dict]) -> int | None:
        return grid_tail_mean(hists, interval_us, hist_us, TAIL_PCT)

    return [mean([r["hist"]]) for r in rows], mean([r["hist"] for r in rows])


def hrtick_below_tick(fifo: list[dict], tick: list[dict], hrtick: list[dict],
                      interval_us: int, hist_us: int) -> list[str]:
    """Experiment 6 with HRTICK_DL over the whole receive path: the mean lateness of the
    latest TAIL_PCT % of the intended cycle grid (stats.grid_tail_mean), the runs pooled,
    with the budget enforced by HRTICK_DL (``hrtick``) below the same at the tick
    (``tick``); FIFO 50's every worst case at least FIFO_FACTOR times HRTICK_DL's largest.

    Why the tail's mean over runs. Precisely enforced, the path's two reservations still
    delay the task in one stretch by up to about 2 Q (the end of one period and the start
    of the next; a CBS wake-up with a fresh deadline adds to it), and where that band lies
    moved from 2 Q + 0.4 to 2 Q + 1.8 ms between boots. At the tick the bursts run up to
    4 ms past the budget, but how often they do varied too (a run's maximum 3.8 to 11.4 ms
    at 1 ms / 5 ms). So each single-number shape failed in one boot: the maximum (one
    cycle: 7,023 µs with HRTICK_DL against 6,762), the p99 (inside the band: 2,933 against
    2,639 µs) and the share later than Q + 2 ms (the band beyond it: 3.54 against 2.40 %).
    The mean of the latest 1 % (about 40 cycles of a 4-s run) weighs how far the tail
    reaches, not one cycle or one line. At 1 ms / 5 ms on 6.1 it was below the tick's in
    each of 12 runs alone (six boots of tests/vm/test_seeds.py of 2026-11-27/28, the six
    runs of bench/seeds/data/latency-hrtick-napi-*), by 1.10 to 2.87 times. On 6.12, whose
    stalls reach 10 ms with HRTICK_DL as well, it was below with the three runs pooled
    (4,660 against 5,497 µs), not in one of them alone."""
    if not (fifo and hrtick and tick):
        return ["latency: a FIFO 50, a tick and an HRTICK_DL run are all needed"]

    def fmt(v: int | None) -> str:
        return f"> {hist_us}" if v is None else str(v)

    bad = []
    mine, theirs = (tail_means(rs, interval_us, hist_us)[1] for rs in (hrtick, tick))
    if mine is None or (theirs is not None and mine >= theirs):
        bad.append(f"latency: the latest {TAIL_PCT:g} % of cycles {fmt(mine)} us late on "
                   f"average with HRTICK_DL, not below the tick's {fmt(theirs)} us (runs "
                   f"pooled: {len(hrtick)} and {len(tick)})")
    if min(r["hist"]["max_us"] for r in fifo) < FIFO_FACTOR * worst(hrtick):
        bad.append(f"latency: FIFO 50 worst case under {FIFO_FACTOR}x HRTICK_DL's "
                   f"{worst(hrtick)} us")
    return bad


def _player_kept(dl: dict) -> list[str]:
    """The player under its reservation: SCHED_DEADLINE and no frame missed."""
    bad = []
    policy = (dl.get("player_sched") or {}).get("policy")
    if policy != "deadline":
        bad.append(f"player: policy {policy}, not deadline")
    if _misses(dl) != 0:
        bad.append(f"player: {_misses(dl)} deadline misses with its reservation")
    return bad


def player_reserved(below: dict, dl: dict, nic_period_ns: int) -> list[str]:
    """Experiment 3 against experiment 2: ``dl`` the player and the NIC thread both
    reserved through irqres, ``below`` the player below the NIC thread at fixed priorities
    (SCHED_FIFO 40 under 50), under the same flood.

    - the player ran under SCHED_DEADLINE and missed no frame (below the NIC thread at
      fixed priorities it misses frames: the player's reservation is the cause);
    - the NIC thread's CPU share over the flood is at most its Q/T + SHARE_SLACK points
      (unreserved it takes what the player leaves: the NIC's reservation is the cause);
    - the NIC thread keeps at least half the throughput it takes above the player."""
    bad = _player_kept(dl)
    bad += nic_share(dl, dl["nic_q"], nic_period_ns)
    if dl["mbit_s"] < 0.5 * below["mbit_s"]:
        bad.append(f"NIC thread: {dl['mbit_s']:.1f} Mbit/s reserved, under half its "
                   f"{below['mbit_s']:.1f} Mbit/s above the player")
    return bad


def _pair_pct(row: dict) -> float | None:
    irq, napi = _pct(row, "nic_thread"), _pct(row, "napi_thread")
    return None if irq is None or napi is None else irq + napi


def path_reserved(below: dict, dl: dict, nic_period_ns: int) -> list[str]:
    """Experiment 3 against experiment 2 over the NIC's whole receive path (threaded NAPI):
    ``dl`` the player and the pair (IRQ thread + NAPI kthread) reserved through irqres,
    ``below`` the player below the pair at fixed priorities (SCHED_FIFO 40 under 50),
    under the same flood.

    - the player ran under SCHED_DEADLINE and missed no frame;
    - the row holds as napi_row (nothing in ksoftirqd, the pair within its Q/T + slack,
      the NAPI kthread using its part while the ring overflows);
    - the NIC's Mbit/s per point of CPU the pair had is at least PER_POINT_SHARE of its
      Mbit/s per point at fixed priority."""
    bad = _player_kept(dl)
    bad += napi_row(dl, nic_period_ns)
    got, fixed = _pair_pct(dl), _pair_pct(below)
    if not got or not fixed:
        return [*bad, "NIC threads: CPU time not recorded (or none), reserved or at FIFO"]
    if dl["mbit_s"] / got < PER_POINT_SHARE * below["mbit_s"] / fixed:
        bad.append(f"NIC threads: {dl['mbit_s'] / got:.2f} Mbit/s per point of CPU reserved, "
                   f"under {PER_POINT_SHARE:g} of {below['mbit_s'] / fixed:.2f} at fixed "
                   f"priority")
    return bad


def nic_share(row: dict, runtime_ns: int, period_ns: int) -> list[str]:
    """The NIC thread's CPU share over the flood (``row``: its ``cpu_ns`` and ``span_ns``)
    against the reservation (runtime_ns, period_ns): at most Q/T + SHARE_SLACK points."""
    used = (row.get("cpu_ns") or {}).get("nic_thread")
    if used is None:
        return ["NIC thread: its CPU time was not recorded"]
    qt = 100 * runtime_ns / period_ns
    share = 100 * used / row["span_ns"]
    if share <= qt + SHARE_SLACK:
        return []
    return [f"NIC thread: CPU share {share:.1f} % above {qt + SHARE_SLACK:.1f} % for Q/T "
            f"{qt:g} %"]


def tuner(tune: dict, clamps_us: tuple[float, float], hysteresis_us: float) -> list[str]:
    """Experiment 5, what the tuner itself does: ``tune`` is the analysis of a run under
    `irqres tune`. It sent budgets, all within its clamps, and they moved by more than
    its hysteresis (a tuner stuck at its start value sends none, or that one value)."""
    t = tune.get("tune")
    if not t or not t.get("sent"):
        return ["tune: no budget sent"]
    bad = []
    if not clamps_us[0] <= t["q_min_us"] <= t["q_max_us"] <= clamps_us[1]:
        bad.append(f"tune: budgets {t['q_min_us']:g}..{t['q_max_us']:g} us outside the "
                   f"clamps {clamps_us[0]:g}..{clamps_us[1]:g} us")
    if t["q_max_us"] - t["q_min_us"] <= hysteresis_us:
        bad.append(f"tune: budgets {t['q_min_us']:g}..{t['q_max_us']:g} us did not move by "
                   f"more than its hysteresis ({hysteresis_us:g} us)")
    return bad


def player_budget(fixed: dict, other: dict) -> list[str]:
    """Experiment 5, the player's side: against a budget fixed for the bursts (``fixed``,
    800 us every 1 ms), the NIC thread's budget in ``other`` lets the player miss no more
    frames and makes its longest inter-frame time shorter. A budget fixed near the mean
    or at the tuner's start value passes this as well as the tuner does, and the tuner
    does not beat either (recorded: bench/seeds/data, fixed 400 us and 500 us), so this
    shows that a budget below the bursts' serves the player, not that the tuner is
    needed for it."""
    f, o = fixed["frames"], other["frames"]
    bad = []
    if o["misses"] > f["misses"]:
        bad.append(f"player: {o['misses']} misses against {f['misses']} at the fixed budget")
    if o["max_ms"] >= f["max_ms"]:
        bad.append(f"player: longest inter-frame {o['max_ms']} ms, not below the fixed "
                   f"budget's {f['max_ms']} ms")
    return bad


def tools_spread_row(row: dict) -> list[str]:
    """Experiment 1, one row of one run (its per-datagram series and datagram counts, as
    tools.keep_series leaves them): no datagram lost or merged, the NIC thread's
    inter-arrival std at most the receiver's, its distribution within 1 % of the period
    (Wasserstein-1) of the sender's (tools_spread.judge). A check of
    the method, not of irqres: the thread is at SCHED_FIFO 50."""
    return [f"tools T{row['period_ns'] // 1_000_000} run {row['run']}: {m}"
            for m in tools_spread.judge(row)["missed"]]


def _pct(row: dict, who: str) -> float | None:
    used = (row.get("cpu_ns") or {}).get(who)
    return None if used is None else 100 * used / row["span_ns"]


def napi_run(rows: list[dict], size: int, nic_period_ns: int) -> dict:
    """One run of experiment 3 with threaded NAPI (its rows, one per Q/T): the fit of the
    application's Mbit/s through the origin against the NIC's Q/T in %, the largest
    ksoftirqd share, the player's misses, the offered load's spread (largest/smallest),
    and per row the NIC pair's (IRQ thread + NAPI kthread) CPU share minus its Q/T."""
    pts = [(100 * r["nic_q"] / nic_period_ns, app_mbit_s(r, size)) for r in rows]
    offered = [offered_mbit_s(r, size) for r in rows]
    soft = [_pct(r, "ksoftirqd") for r in rows]
    return {"fit": linear_fit(pts, proportional=True), "points": pts,
            "softirq_max": None if None in soft else max(soft),
            "misses": sum(_misses(r) for r in rows),
            "offered_spread": max(offered) / min(offered),
            "share_over": [pair_over(r, nic_period_ns) for r in rows]}


def pair_over(row: dict, nic_period_ns: int) -> float | None:
    """The NIC pair's (IRQ thread + NAPI kthread) CPU share over the flood minus the row's
    NIC Q/T, in points (None when either was not recorded)."""
    irq, napi = _pct(row, "nic_thread"), _pct(row, "napi_thread")
    if irq is None or napi is None:
        return None
    return irq + napi - 100 * row["nic_q"] / nic_period_ns


def napi_reserved(rows: list[dict], size: int, nic_period_ns: int) -> list[str]:
    """Experiment 3 with threaded NAPI, one run, what the NIC pair's reservation does:
    every row as napi_row, the player missing no frame, at an offered load held (spread at
    most OFFERED_SPREAD). Left at its default (SCHED_OTHER, beside the sender's real-time
    tasks on the other vCPU) the kthread gets no budget: its share stays near 1 % whatever
    the row's Q/T."""
    offered = [offered_mbit_s(r, size) for r in rows]
    misses = sum(_misses(r) for r in rows)
    bad = [f"player: {misses} deadline misses"] if misses else []
    if max(offered) / min(offered) > OFFERED_SPREAD:
        bad.append(f"offered load: largest {max(offered) / min(offered):.3f} times the "
                   f"smallest, over {OFFERED_SPREAD}")
    return [b for r in rows for b in napi_row(r, nic_period_ns)] + bad


def napi_row(row: dict, nic_period_ns: int) -> list[str]:
    """One row of experiment 3 with threaded NAPI: ksoftirqd under NAPI_SOFTIRQ_PCT % of
    the NIC's CPU, the pair's (IRQ thread + NAPI kthread) CPU share at most the row's Q/T
    + SHARE_SLACK points, the NAPI kthread's at least NAPI_USE of its part while the ring
    overflows."""
    bad = []
    soft = _pct(row, "ksoftirqd")
    if soft is None:
        bad.append(f"Test{row['test']}: ksoftirqd's CPU time was not recorded")
    elif soft >= NAPI_SOFTIRQ_PCT:
        bad.append(f"Test{row['test']}: ksoftirqd {soft:.2f} % of the NIC's CPU, not under "
                   f"{NAPI_SOFTIRQ_PCT:g} %")
    over = pair_over(row, nic_period_ns)
    if over is None:
        bad.append(f"Test{row['test']}: the NIC threads' CPU time was not recorded")
    elif over > SHARE_SLACK:
        bad.append(f"Test{row['test']}: NIC threads' CPU share {over:+.1f} points over "
                   f"its Q/T")
    used = _napi_used(row, nic_period_ns)
    return bad + ([used] if used else [])


def _napi_used(row: dict, nic_period_ns: int) -> str:
    """'' when the NAPI kthread got at least NAPI_USE of its part of the row's budget (Q
    minus the IRQ thread's) or the ring did not overflow; else what it got."""
    used = _pct(row, "napi_thread")
    part = 100 * (row["nic_q"] - row["irq_q"]) / nic_period_ns
    if used is None or row["rx"]["rx_missed_errors"] == 0 or used >= NAPI_USE * part:
        return ""
    return (f"Test{row['test']}: NAPI kthread {used:.1f} % of the CPU, under {NAPI_USE:g} of "
            f"its {part:g} % while the ring overflowed")


def napi_goal(rows: list[dict], size: int, nic_period_ns: int) -> list[str]:
    """The goal of experiment 3 with threaded NAPI, one run: napi_reserved, and the
    application's Mbit/s proportional to the NIC's Q/T (R² of the fit through the origin
    at least NAPI_R2)."""
    r2 = napi_run(rows, size, nic_period_ns)["fit"]["r2"]
    bad = napi_reserved(rows, size, nic_period_ns)
    if not r2 >= NAPI_R2:
        bad.append(f"application: R² {r2:.4f} of Mbit/s ∝ Q/T, under {NAPI_R2}")
    return bad


# Lee et al.'s experiment (process_aware.py). The goal: coupled, the high-priority job's
# mean execution time at the highest rate at most PA_GOAL above its mean at the lowest,
# and no deadline missed at any rate. The shape the VM suite asserts: the same with
# PA_GROWTH, and the mechanism itself at the highest rate: the high job's mean time off
# its work per frame (start to end less the CPU time the frame got, which `seedload
# player` reports: preempted, or in interrupts) at most PA_OFF_NS. The two 2026-11-28
# records (bench/seeds/data/process-aware-icount-nice0-20261128T094723 and the
# -offcpu- probe, 6 runs): coupled, 14-53 us a frame at the highest rate and 14-19 us in
# 18 of the 21 rows with datagrams (51, 53 and 233 us in the other three); with
# the NIC thread at the kernel's SCHED_FIFO 50, 532-1214 us at 900/s and 255 us or more at
# every rate with datagrams. The growth alone stopped telling the two apart: at the
# kernel default it was +1.3 %, +18.3 % and +30.7 % in that record, against +74 % to +76 %
# in the 2026-11-26 one; the jobs-alone rows' frames take 4.1-5.0 ms as the job's
# wake-up after its release varies (0.1-0.8 ms a row on average, nothing off its work:
# the timers of sleepers under instruction counting). The growth's line stays for the
# goal it stands for; the time off the work is what fails when the coupling is removed.
PA_GOAL = 0.10
PA_GROWTH = 0.25
PA_OFF_NS = 300_000


def pa_misses(job: dict) -> int:
    return int(job["out"].split()[3])  # "frames N misses M"


def pa_off_mean_ns(job: dict) -> int | None:
    """The job's mean time off its work per frame ("... off_mean_ns A off_max_ns B");
    None in records from before `seedload player` reported it."""
    words = job["out"].split()
    return int(words[words.index("off_mean_ns") + 1]) if "off_mean_ns" in words else None


def pa_mean_ns(job: dict) -> float:
    return sum(job["exec_ns"]) / len(job["exec_ns"]) if job["exec_ns"] else float("nan")


def process_aware(rows: list[dict], growth: float = PA_GROWTH,
                  off_ns: int | None = PA_OFF_NS) -> list[str]:
    """Lee et al.'s shape on one run's rows of one mode (every rate): the high job's mean
    execution time at most ``growth`` above the lowest rate's at the highest, 0 misses at
    every rate, and (``off_ns``) its mean time off its work per frame at the highest rate
    at most ``off_ns``. ``growth=PA_GOAL, off_ns=None``: the goal."""
    rows = sorted(rows, key=lambda r: r["rate"])
    if len(rows) < 2:
        return [f"{len(rows)} rate(s): the shape needs at least two"]
    bad = [f"{r['mode']} {r['rate']}/s: the high job missed {pa_misses(r['high'])} "
           f"deadline(s) ({r['high']['out']})" for r in rows if pa_misses(r["high"])]
    lo, hi = pa_mean_ns(rows[0]["high"]), pa_mean_ns(rows[-1]["high"])
    top = rows[-1]
    if not hi <= (1 + growth) * lo:
        bad.append(f"{top['mode']}: the high job's mean execution time grew "
                   f"{100 * (hi / lo - 1):+.1f} % from {rows[0]['rate']}/s ({lo / 1e6:.2f} "
                   f"ms) to {top['rate']}/s ({hi / 1e6:.2f} ms), over "
                   f"{100 * growth:g} %")
    off = pa_off_mean_ns(top["high"])
    if off_ns is not None and off is None:
        bad.append(f"{top['mode']} {top['rate']}/s: the high job reported no time off its "
                   f"work ({top['high']['out']!r})")
    elif off_ns is not None and off > off_ns:
        bad.append(f"{top['mode']} {top['rate']}/s: the high job spent {off / 1e3:.0f} us "
                   f"a frame off its work (mean), over {off_ns / 1e3:g} us: something "
                   f"above it ran on its CPU")
    return bad


# Accounting accuracy (accounting_accuracy.py): each receiver's accounted NIC-thread time
# within ACCT_ERROR of its true share (the thread's CPU time split by the datagrams it
# delivered to each, accounting_attribution): the goal, which the VM test asserts. The
# rule that split by wake-ups alone missed it by up to 14 % (bench/seeds/RESULTS.md); the
# rule by the packets each receiver read meets it.
ACCT_ERROR = 0.05


def accounting_accurate(rows: list[dict], bound: float = ACCT_ERROR) -> list[str]:
    """Every window of ``rows`` (the guest's ``seeds_acct`` rows): the accounting on, no
    events lost, every receiver read something, the histogram of deliveries (where the
    record has it) counted every datagram read, and every receiver got an accounted time
    within ``bound`` of its truth (accounting_attribution.attribution)."""
    from accounting_attribution import attribution
    bad = []
    for row in rows:
        w = attribution(row)
        where = f"run {w['run']} periods {w['periods_ns']}"
        if not w["enabled"]:
            bad.append(f"{where}: accounting off: {w['error_text']}")
            continue
        if w["lost"]:
            bad.append(f"{where}: {w['lost']} trace events lost")
        for r in w["receivers"]:
            if r["delivered"] is not None and r["delivered"] + r["elsewhere"] < r["reads"]:
                bad.append(f"{where}: port {r['port']}: read {r['reads']}, delivered "
                           f"{r['delivered'] + r['elsewhere']}: the histogram missed some")
            if r["error"] is None:
                bad.append(f"{where}: port {r['port']}: read {r['reads']}, no true time")
            elif abs(r["error"]) >= bound:
                bad.append(f"{where}: port {r['port']}: accounted {r['accounted_ns']} ns, "
                           f"true {r['truth_ns']} ns: error {100 * r['error']:+.1f} %")
    return bad


# Experiment 2 before any irqres action and after apply/restore cycles in one boot
# (player_fifo.py --regimes): per order of the player and the NIC thread, the player's
# misses within REGIME_MISS_PTS points of its frames and the NIC thread's throughput
# within REGIME_MBIT_S Mbit/s. The two regimes the VM suite's boots showed are 76 points
# and 52 Mbit/s apart with the player above the NIC thread (44 points, 8 Mbit/s below).
REGIME_MISS_PTS = 20.0
REGIME_MBIT_S = 15.0


def _miss_pct(row: dict) -> float:
    frames = int(row["player"].split()[1])
    return 100.0 * _misses(row) / max(frames, 1)


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def regimes_agree(first: list[dict], second: list[dict]) -> list[str]:
    """Experiment 2's rows of two phases (``first``, e.g. before any irqres action, and
    ``second``, after apply/restore cycles): for each order of the player, the medians of
    its missed frames (% of its frames) and of the NIC thread's throughput agree."""
    bad = []
    for order in ("above", "below"):
        a = [r for r in first if r["order"] == order]
        b = [r for r in second if r["order"] == order]
        if not a or not b:
            bad.append(f"player {order}: a phase without rows")
            continue
        ma, mb = _median([_miss_pct(r) for r in a]), _median([_miss_pct(r) for r in b])
        if abs(ma - mb) > REGIME_MISS_PTS:
            bad.append(f"player {order}: misses {ma:.0f} % of frames against {mb:.0f} %, "
                       f"more than {REGIME_MISS_PTS:g} points apart")
        ta = _median([r["mbit_s"] for r in a])
        tb = _median([r["mbit_s"] for r in b])
        if abs(ta - tb) > REGIME_MBIT_S:
            bad.append(f"player {order}: NIC thread {ta:.1f} Mbit/s against {tb:.1f}, more "
                       f"than {REGIME_MBIT_S:g} Mbit/s apart")
    return bad


# Zhang and West's experiment (zhang_west.py). The goal: coupled, the real-time task
# misses no deadline at any rate, and the server reads at least ZW_RX_GOAL of what the
# CPU the task leaves allows (zw_row: allowed_per_s). The shape the VM suite asserts: the
# same with ZW_RX_BOUND. In the recorded 3 runs (bench/seeds/RESULTS.md) the coupled task
# missed nothing and the server read 65 % to 124 % of that at the highest rate (where
# the server's CPU time per read was 3 times the lower rates' in two runs, not
# explained), 89 % or more below it; at the kernel default the task missed 32 to 40
# of 40 deadlines at 300/s and more, and the server read 0 to 53 datagrams/s (0 at
# 600/s in every run). The VM suite's one 2-s row at 600/s read 44 % in a CI run of
# 2026-11-27 (coupled, no miss), so the shape asks a quarter: still far above the
# default's nothing, and it fails without the coupling by the misses alone.
ZW_RX_GOAL = 0.8
ZW_RX_BOUND = 0.25


def _zw_cost_ns(row: dict) -> float | None:
    """CPU ns per datagram of the NIC thread (per packet taken from the ring) plus the
    server (per datagram read while the task ran); None when either saw none."""
    end = row["frames"][-1][2] if row["frames"] else 0
    reads = sum(1 for t in row["reads_ns"] if t <= end)
    if not row["rx"]["rx_packets"] or not reads:
        return None
    return row["nic_cpu_ns"] / row["rx"]["rx_packets"] + row["server_cpu_ns"] / reads


def _zw_sent_between(row: dict, lo: int, hi: int) -> float:
    """The datagrams the sender sent from ``lo`` to ``hi`` (CLOCK_MONOTONIC ns), from its
    sojourns ([start, state, sent], each up to the next one's start, the last up to
    the end of its run): a sojourn's datagrams are spread over it in proportion, which
    is what a Poisson process's are on average given their number."""
    words = row["sender"].split()
    end = int(words[words.index("start_ns") + 1]) + int(words[words.index("duration_ns") + 1])
    starts = [s[0] for s in row["states"]] + [end]
    total = 0.0
    for (start, _, n), stop in zip(row["states"], starts[1:], strict=True):
        if stop > start:
            total += n * max(0, min(stop, hi) - max(start, lo)) / (stop - start)
    return total


def zw_row(row: dict, task: dict) -> dict:
    """One row's numbers: the task's periods (the player runs every release, late or not,
    so none is skipped), misses (a job ending after its next release), the worst and the
    mean lateness of the late ones; the datagrams sent (in all, and per second while the
    task ran: first release to the last period's end), the server's reads per second
    over the same span; what the CPU the task leaves (1 - work/period) allows the NIC thread
    and the server at their measured cost per datagram, at most what was sent."""
    period = task["period_ns"]
    late = [end - (release + period) for release, _, end in row["frames"]
            if end > release + period]
    lo = row["frames"][0][0] if row["frames"] else 0
    hi = row["frames"][-1][0] + period if row["frames"] else 0
    reads = sum(1 for t in row["reads_ns"] if lo <= t < hi)
    words = row["sender"].split()
    sent = int(words[1]) if words else 0
    sent_per_s = _zw_sent_between(row, lo, hi) * 1e9 / (hi - lo) if words and hi > lo else 0.0
    cost = _zw_cost_ns(row)
    left = 1 - task["work_ns"] / period
    return {"periods": len(row["frames"]), "misses": len(late),
            "max_late_ns": max(late, default=0),
            "mean_late_ns": sum(late) / len(late) if late else 0.0,
            "sent": sent, "sent_per_s": sent_per_s,
            "rx_per_s": reads * 1e9 / (hi - lo) if hi > lo else 0.0,
            "cost_ns": cost,
            "allowed_per_s": min(sent_per_s, left * 1e9 / cost) if cost else sent_per_s}


def zhang_west(rows: list[dict], task: dict, share: float = ZW_RX_BOUND) -> list[str]:
    """Zhang and West's shape on one run's rows of one mode: the task misses no deadline
    at any rate, and wherever datagrams were sent the server read at least ``share`` of
    what the CPU left to it allows (zw_row). ``share=ZW_RX_GOAL``: the goal."""
    if not rows:
        return ["no rows"]
    bad = []
    for r in sorted(rows, key=lambda r: r["rate"]):
        m = zw_row(r, task)
        if m["misses"]:
            bad.append(f"{r['mode']} {r['rate']}/s: the task missed {m['misses']} of "
                       f"{m['periods']} deadlines, up to {m['max_late_ns'] / 1e6:.2f} ms late")
        if m["sent"] and not m["rx_per_s"] >= share * m["allowed_per_s"]:
            bad.append(f"{r['mode']} {r['rate']}/s: the server read {m['rx_per_s']:.0f}/s, "
                       f"under {100 * share:g} % of the {m['allowed_per_s']:.0f}/s the CPU "
                       f"left to it allows")
    return bad
