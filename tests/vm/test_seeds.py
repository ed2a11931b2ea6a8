"""The shapes of the seeds' experiments (bench/seeds/), short, in one boot.

The guest runs under QEMU's instruction counting (guest time independent of the host's
load) with two e1000s on a hub, traffic made inside the guest. Asserted are shapes, not
absolute times, on guest-time data only; the shapes are the functions of
bench/seeds/shapes.py, which tests/python/test_seeds_shapes.py runs on the recorded data
of bench/seeds/data with each cause present (they hold) and removed (they fail):
- latency: cyclictest on the NIC's CPU under a flood has, over its intended cycle grid
  (missed cycles counted with the lateness they had), a p99.9 and a maximum at least 5x
  smaller with the NIC's receive path reserved than with it at SCHED_FIFO 50 (fails with
  a FIFO 50 run in place of the reserved one). The path is eth0 with threaded NAPI: its
  IRQ thread and its NAPI kthread, where all of the receive work runs
  (guest/seeds_path.py). Reserving the IRQ thread alone (experiment 6 as bench/seeds/
  latency.py runs it) is no such comparison on 6.1: the polls the thread leaves go on in
  ksoftirqd, ktimers and rcuc, below cyclictest, so at SCHED_FIFO 50 the thread alone
  delays cyclictest by 12-50 ms (bench/seeds/RESULTS.md), not the 0.1-3 s seen while a
  restore defect let the sender's SCHED_FIFO 90 IRQ thread run those polls on the NIC's
  CPU. With the budget enforced by HRTICK_DL the mean lateness of the latest 1 % of the
  cycle grid, three runs pooled, is below the tick's (fails with HRTICK_DL off in place
  of on; the worst case, the p99 and the share beyond Q + 2 ms of single runs were not
  always lower: shapes.hrtick_below_tick);
- statistical tools (rows T10 and T100; the thread's activations that woke the
  receiver): no datagram lost or merged, the NIC thread's inter-arrival std at most the
  receiver's, and its inter-arrival distribution within 1 % of the period
  (Wasserstein-1) of the sender's (fails with a datagram lost or
  merged, or the thread's series shuffled with a spread of 2 % of the period); a check
  of the method, not of irqres;
- the player on the NIC's CPU under the flood, eth0 with threaded NAPI: below the NIC's
  path (IRQ thread and NAPI kthread at SCHED_FIFO 50 there) it misses frames (plain
  SCHED_FIFO: the precondition, not irqres); with the player and the path reserved
  through irqres (the NIC's budget split between IRQ thread and NAPI kthread) it runs
  under SCHED_DEADLINE and misses none (fails with the player below the path at fixed
  priorities), the pair's CPU share is at most its Q/T + 1 point with under 1 % of the
  NIC's CPU in ksoftirqd (fails with the path unreserved above the player, or with the
  polls in ksoftirqd), and its Mbit/s per point of CPU is at least 0.8 of the
  fixed-priority case's (fails at half that line); reserved at 18 % the path takes fewer
  Mbit/s than at fixed priority, where it takes 60-70 % of the CPU;
- adaptive budget: `irqres tune` sent budgets within its clamps that moved by more than
  its hysteresis (fails without the tuner, or with it stuck at its start value); with
  it the player misses no more frames and has a shorter longest inter-frame time than
  with a budget fixed for the bursts (800 us every 1 ms). That second shape is about the
  budget's level, not the tuner: a budget fixed at 400 us, or at the tuner's start value
  (500 us), passes it too, and tune does not beat either (recorded, asserted in
  tests/python/test_seeds_shapes.py).

Experiment 4 (disk) is not part of this boot: its test disk, one more PCI device, moves
eth0's interrupt to the other vCPU, and with it the latency shape fails (the NIC thread
at SCHED_FIFO 50 took ~1,180 of 20,000 datagrams in both boots tried); a boot of its own
costs minutes. Its report's arithmetic is checked below on made-up rows.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import vmrunner

sys.path.insert(0, str(vmrunner.REPO / "bench" / "seeds"))

import adaptive
import adaptive_analysis
import report
import shapes
import stats
import testbed
import tools
import tools_spread

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MS = 1_000_000
ADAPT_SECONDS = 2  # experiment 5's load per configuration, guest seconds
NIC_PERIOD_NS = 100 * MS  # the NIC thread's period with both reserved (experiment 3)
SIZE = 1400  # the flood's datagrams, bytes
RESERVED = (2 * MS, 10 * MS)  # the path's reservation in experiment 6
# the one whose worst case HRTICK_DL lowered with the widest margin (bench/seeds/RESULTS.md)
RESERVED_HRTICK = (1 * MS, 5 * MS)
# 4 s per row: HRTICK_DL's lead over the tick at 1 ms / 5 ms was 0.85-1.8 ms in four suite
# boots of 2 s rows, 2.5 ms and more in bench/seeds' 5 s rows (a longer row gives the tick
# more periods to overrun in). Three runs: HRTICK_DL's shape is on the runs pooled
# (shapes.hrtick_below_tick).
LATENCY = {"runs": 3, "seconds": 4, "flood_period_ns": 100_000, "size": SIZE,
           "reserved": [list(RESERVED), list(RESERVED_HRTICK)], "napi_split": [3, 4],
           "interval_us": 1000, "priority": 40, "hist_us": 100_000}


def test_seeds_shapes(icount_boot):
    """On the image's first kernel only (the one bench/seeds/ measured): one icount boot
    costs several minutes, and the shapes are about the method, not the kernel."""
    res = icount_boot("seeds_shapes", timeout_s=1800,
                      params={"latency_enforcement_napi": LATENCY,
                              "tools": {"runs": 1, "rows": [[10 * MS, 100], [100 * MS, 20]],
                                        "size": 256},
                              "player_napi": {"runs": 1, "seconds": 2,
                                              "period_ns": 40 * MS, "work_ns": 20 * MS,
                                              "flood_period_ns": 100_000, "size": SIZE},
                              "player_dl_napi": {"runs": 1, "seconds": 2,
                                                 "period_ns": 40 * MS, "work_ns": 16 * MS,
                                                 "nic_period_ns": NIC_PERIOD_NS,
                                                 "flood_period_ns": 100_000, "size": SIZE,
                                                 "tests": [[20 * MS, 18 * MS]],
                                                 "napi": "reserved", "napi_split": [3, 4],
                                                 "receiver_prio": 95},
                              "adaptive": adaptive.guest_params(1, ADAPT_SECONDS,
                                                                "fixed:800,tune:0.25")})
    check_shapes(res.data, res.out)
    check_adaptive(res.data["adaptive"], res.out)


def check_shapes(d: dict, out: Path) -> None:
    """The assertions, on the guest's result and out/ directory (also usable on the raw
    data of bench/seeds/ runs)."""

    lat: dict[str, list[dict]] = {}
    for r in d["latency_enforcement_napi"]["results"]:
        lat.setdefault(r["label"], []).append(r)
    for fifo, tick, base in zip(lat["fifo50"], lat["keep-{}-{}".format(*RESERVED)],
                                lat["baseline"], strict=True):
        fs, ts = stats.summary(fifo["hist"]), stats.summary(tick["hist"])
        vmrunner.say(f"seeds latency run {fifo['run']} p99.9: FIFO 50 {fs['p99.9']} us, "
                     f"reserved {ts['p99.9']} us; max {fs['max']} / {ts['max']} us; "
                     f"baseline max {base['hist']['max_us']} us")
        # recorded (bench/seeds/data/shapes-napi-*, RESULTS.md): p99.9 FIFO 50 0.2-2 s,
        # reserved at the tick 5.4-6.9 ms
        bad = shapes.latency(fifo, tick, LATENCY["interval_us"], LATENCY["hist_us"])
        assert bad == [], (bad, ts, fs)
    # HRTICK_DL: the latest 1 % of the cycles less late than at the tick, the runs pooled
    # (single numbers of single runs were not: see shapes.hrtick_below_tick)
    tick, hrtick = (lat["{}-{}-{}".format(e, *RESERVED_HRTICK)] for e in ("keep", "hrtick"))
    grid = LATENCY["interval_us"], LATENCY["hist_us"]
    runs = (shapes.tail_means(rs, *grid)[0] for rs in (tick, hrtick))
    vmrunner.say("seeds latency at 1 ms / 5 ms, latest 1 % of the grid per run (tick / "
                 "HRTICK_DL): " + ", ".join(f"{t} / {h} us"
                                            for t, h in zip(*runs, strict=True)))
    assert all("HRTICK_DL" in r["features"].split() for r in hrtick), hrtick[0]["features"]
    assert all("NO_HRTICK_DL" in r["features"].split() for r in tick), tick[0]["features"]
    bad = shapes.hrtick_below_tick(lat["fifo50"], tick, hrtick, *grid)
    assert bad == [], bad

    for row in d["tools"]["rows"]:
        base = out / row["files"]
        # the thread's activations that woke the receiver: the datagrams' own (the
        # e1000 watchdog adds an interrupt of its own every 2 s)
        row["irq_rx"] = tools.receiver_activations(base.with_name(base.name + ".dat"))
        assert "error" not in row["irq_rx"], row["irq_rx"]
        tools.keep_series(row, base)
        j = tools_spread.judge(row)
        vmrunner.say(f"seeds tools T{row['period_ns'] // MS}: {j['counts']}, std sender "
                     f"{j['stats']['send']['std_ns']} receiver {j['stats']['recv']['std_ns']} "
                     f"thread {j['stats']['irq_rx']['std_ns']} ns, W1 to the sender's "
                     f"{j['vs_send']['w1_ns']} ns, the receiver's {j['vs_recv']['w1_ns']} ns")
        # recorded (bench/seeds/RESULTS.md, 3 runs): met in every run at T10 and T100
        bad = shapes.tools_spread_row(row)
        assert bad == [], (bad, j)

    by = {r["order"]: r for r in d["player_napi"]["rows"]}
    misses = {k: int(r["player"].split()[3]) for k, r in by.items()}
    vmrunner.say(f"seeds player: above NIC {misses['above']} misses, "
                 f"{by['above']['mbit_s']:.1f} Mbit/s; below {misses['below']} misses, "
                 f"{by['below']['mbit_s']:.1f} Mbit/s")
    # Below the NIC's path at SCHED_FIFO 50 the player misses frames: the precondition,
    # plain SCHED_FIFO. (With the IRQ thread alone at 50 it need not: the polls the
    # thread leaves go on in ksoftirqd, below the player; bench/seeds/RESULTS.md.)
    assert misses["below"] > 0, by["below"]
    dl = d["player_dl_napi"]["rows"][0]
    vmrunner.say(f"seeds player reserved (20,40) ms, NIC (18,100) ms over IRQ thread and "
                 f"NAPI kthread: {dl['player']}, {dl['mbit_s']:.1f} Mbit/s, CPU {dl['cpu_ns']}")
    # both reserved: the player misses nothing, the NIC's pair (IRQ thread + NAPI kthread)
    # runs within its reservation with nothing in ksoftirqd, and gets as much throughput
    # per point of CPU as at fixed priority (it gets fewer points: 18 % reserved against
    # 60-70 % above the player, and so fewer Mbit/s, 26 against 62 in one boot)
    bad = shapes.path_reserved(by["below"], dl, NIC_PERIOD_NS)
    assert bad == [], (bad, dl, by["below"])


def check_adaptive(d: dict, out: Path) -> None:
    """Experiment 5's shape: under the same fluctuating load, with `irqres tune` moving
    the NIC thread's budget the player on the NIC's CPU misses no more frames and its
    longest inter-frame time is shorter than with a budget fixed for the bursts
    (800 us every 1 ms); tune sent budgets, all within its clamps."""
    rec = {"params": adaptive.guest_params(1, ADAPT_SECONDS, "fixed:800,tune:0.25"),
           "raw_out": str(out), "result": d}
    adaptive_analysis.analyze(rec)
    by = {r["config"]: r["analysis"] for r in d["rows"]}
    fixed, tune = by["fixed800"], by["tune0.25"]
    vmrunner.say(f"seeds adaptive: fixed 800 us/1 ms: {fixed['summary']}")
    vmrunner.say(f"seeds adaptive: tune: {tune['summary']}")
    assert "HRTICK_DL" in d["sched_features"].split(), d["sched_features"]
    clamps = adaptive.TUNE["min_ns"] / 1000, adaptive.TUNE["max_ns"] / 1000
    assert shapes.tuner(tune, clamps, adaptive.TUNE["hysteresis_ns"] / 1000) == [], (
        tune["tune"])
    # recorded (bench/seeds/RESULTS.md, 3 runs of 5 s): misses 29-55 fixed, 0-1 tuned;
    # longest inter-frame 97-111 ms fixed, 59-68 ms tuned. The time per 1 ms is not
    # asserted: the thread's stretches outlast its 1 ms period in both (see there).
    assert shapes.player_budget(fixed, tune) == [], (fixed, tune)


def test_hist_percentiles():
    """The percentile of a cyclictest histogram (host only, no guest)."""
    b = {5: 90, 10: 9, 2000: 1}
    assert stats.hist_percentile(b, 0, 2000, 50) == 5
    assert stats.hist_percentile(b, 0, 2000, 99) == 10
    assert stats.hist_percentile(b, 0, 2000, 99.9) == 2000
    assert stats.hist_percentile({5: 99}, 1, 250_000, 100) == 250_000
    p = subprocess.run(["gcc", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-std=gnu11",
                        str(Path(testbed.HERE) / "seedload.c")], capture_output=True, text=True,
                       check=False)
    assert p.returncode == 0, p.stderr


def test_disk_fit_and_monotony():
    """The disk report's linear fit and monotony check on made-up rows (host only)."""
    def row(q_pct, iops):
        return {"runtime_ns": q_pct * 50_000, "period_ns": 5 * MS, "iops": iops}

    fit = report.linear_fit([(2.0, 250.0), (10.0, 1050.0), (60.0, 6050.0)])
    assert fit["slope"] == pytest.approx(100.0)
    assert fit["intercept"] == pytest.approx(50.0)
    assert fit["r2"] == pytest.approx(1.0)
    rec = {"result": {"rows": [{"run": 0, **row(5, 1000)}, {"run": 0, **row(10, 900)},
                               {"run": 1, **row(5, 1000)}, {"run": 1, **row(10, 2000)}]}}
    assert report.disk_monotone(rec) == {"medians": True, "runs": {0: False, 1: True}}
