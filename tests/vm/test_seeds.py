"""The shapes of the seeds' experiments (bench/seeds/), short, in one boot.

The guest runs under QEMU's instruction counting (guest time independent of the host's
load) with two e1000s on a hub, traffic made inside the guest. Asserted are shapes, not
absolute times:
- latency: cyclictest on the NIC's CPU under a flood has a p99.9 and a maximum at least
  5x smaller with the NIC thread reserved than with it at SCHED_FIFO 50;
- statistical tools: the receiver's and the NIC thread's mean inter-arrival within 1 % of
  the sender's period (rows T10 and T100; the thread's activations that woke the
  receiver);
- the player on the NIC's CPU under the flood: above the NIC thread (SCHED_FIFO) it
  costs the NIC throughput; below it, it misses frames; with both reserved through
  irqres it misses none and the NIC keeps more throughput than with the player above;
- adaptive budget: under a fluctuating load `irqres tune` keeps the NIC thread's time
  per 1 ms lower at its high end than a budget fixed for the bursts, and the player
  misses no more frames.

Experiment 4 (disk) is not part of this boot: its test disk, one more PCI device, moves
eth0's interrupt to the other vCPU, and with it the latency shape fails (the NIC thread
at SCHED_FIFO 50 took ~1,180 of 20,000 datagrams in both boots tried); a boot of its own
costs minutes. Its report's arithmetic is checked below on made-up rows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import conftest
import pytest
import vmrunner

sys.path.insert(0, str(vmrunner.REPO / "bench" / "seeds"))

import adaptive
import adaptive_analysis
import report
import stats
import testbed
import tools

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MS = 1_000_000
ADAPT_SECONDS = 2  # experiment 5's load per configuration, guest seconds


def test_seeds_shapes(image, stage, icount_qemu, tmp_path, request):
    """On the image's first kernel only (the one bench/seeds/ measured): one icount boot
    costs several minutes, and the shapes are about the method, not the kernel."""
    qemu, version, env = icount_qemu
    seedload = testbed.build_seedload(tmp_path)
    workdir = Path(os.environ.get("IRQRES_VM_WORKDIR", "/var/tmp/irqres-vm")) / request.node.name
    if workdir.exists():
        shutil.rmtree(workdir)
    vm = vmrunner.VM(image, stage, "seeds_shapes", name=request.node.name, workdir=workdir,
                     profile=vmrunner.REPO / "profiles" / "demo.yaml",
                     enable_irqresd=True, nic="hub", cpus=2, icount="shift=3,sleep=off",
                     qemu=qemu, qemu_env=env, e1000_mitigation_opt="version 7." in version,
                     files={"seedload": seedload}, timeout_s=1800,
                     params={"latency": {"runs": 1, "seconds": 2, "flood_period_ns": 100_000,
                                         "size": 1400, "reserved": [2 * MS, 10 * MS],
                                         "interval_us": 1000, "priority": 40,
                                         "hist_us": 100_000},
                             "tools": {"runs": 1, "rows": [[10 * MS, 100], [100 * MS, 20]],
                                       "size": 256},
                             "player": {"runs": 1, "seconds": 2, "period_ns": 40 * MS,
                                        "work_ns": 20 * MS, "flood_period_ns": 100_000,
                                        "size": 1400},
                             "player_dl": {"runs": 1, "seconds": 2, "period_ns": 40 * MS,
                                           "work_ns": 16 * MS, "nic_period_ns": 100 * MS,
                                           "flood_period_ns": 100_000, "size": 1400,
                                           "tests": [[20 * MS, 18 * MS]]},
                             "adaptive": adaptive.guest_params(1, ADAPT_SECONDS,
                                                               "fixed:800,tune:0.25")})
    res = vm.run()
    conftest._TIMES.append((vmrunner.timing_label(res), res.wall_s))
    if "error" in res.data:
        pytest.fail(f"seeds_shapes: the guest scenario raised {res.data['error']}\n"
                    f"{res.data.get('traceback', '')}\nconsole tail:\n"
                    f"{vmrunner.tail(res.console, 40)}")
    check_shapes(res.data, res.out)
    check_adaptive(res.data["adaptive"], res.out)


def check_shapes(d: dict, out: Path) -> None:
    """The assertions, on the guest's result and out/ directory (also usable on the raw
    data of bench/seeds/ runs)."""

    lat = report.latency_rows({"result": d["latency"]})
    fifo, rsv = lat["fifo50"][0], lat["reserved"][0]
    vmrunner.say(f"seeds latency p99.9: FIFO 50 {fifo['p99.9']} us, reserved "
                 f"{rsv['p99.9']} us; max {fifo['max']} / {rsv['max']} us")
    # recorded (bench/seeds/RESULTS.md, 6 runs in 2 boots): p99.9 3.3-4.4 ms reserved,
    # 90 ms-3.3 s at FIFO 50; the p99 of the two cases came within 1.4x in one run
    assert rsv["p99.9"] * 5 <= fifo["p99.9"], (rsv, fifo)
    assert rsv["max"] * 5 <= fifo["max"], (rsv, fifo)

    for row in d["tools"]["rows"]:
        base = out / row["files"]
        period = row["period_ns"]
        recv = tools.series_stats(tools.diffs(base.with_name(base.name + "-recv.txt")))
        # the thread's activations that woke the receiver: the datagrams' own (the
        # e1000 watchdog adds an interrupt of its own every 2 s)
        irq = tools.receiver_activations(base.with_name(base.name + ".dat"))
        assert "error" not in irq, irq
        vmrunner.say(f"seeds tools T{period // MS}: receiver mean {recv['mean_ns']:.0f} ns, "
                     f"IRQ thread mean {irq['interarrival']['mean_ns']:.0f} ns "
                     f"({irq['activations']} of {irq['of']} activations)")
        assert irq["activations"] >= row["count"] - 2, (row, irq)
        assert recv["count"] >= row["count"] - 2, (row, recv)
        assert abs(recv["mean_ns"] - period) <= 0.01 * period, (period, recv)
        assert abs(irq["interarrival"]["mean_ns"] - period) <= 0.01 * period, (period, irq)

    by = {r["order"]: r for r in d["player"]["rows"]}
    misses = {k: int(r["player"].split()[3]) for k, r in by.items()}
    vmrunner.say(f"seeds player: above NIC {misses['above']} misses, "
                 f"{by['above']['mbit_s']:.1f} Mbit/s; below {misses['below']} misses, "
                 f"{by['below']['mbit_s']:.1f} Mbit/s")
    # Below the NIC thread the player misses frames. Above it, two regimes have been seen
    # (bench/seeds/RESULTS.md, experiment 2): the NIC thread starved and the player
    # missing frames anyway (the unexplained one, seen while irqresd waited in place at
    # an apply), or the player on time and the NIC thread on the CPU the player leaves,
    # at the throughput it gets below (seen since irqresd stopped waiting in place):
    # which one a boot shows is measured there, not asserted here.
    assert misses["below"] > 0, by["below"]
    dl = d["player_dl"]["rows"][0]
    vmrunner.say(f"seeds player reserved (20,40) ms, NIC (18,100) ms: {dl['player']}, "
                 f"{dl['mbit_s']:.1f} Mbit/s")
    # both reserved: the player misses nothing and the NIC thread keeps at least half
    # the throughput it takes when it is above the player (FIFO: player below)
    assert (dl["player_sched"] or {}).get("policy") == "deadline", dl
    assert int(dl["player"].split()[3]) == 0, dl
    assert dl["mbit_s"] >= 0.5 * by["below"]["mbit_s"], (dl, by)


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
    assert tune["tune"] and tune["tune"]["sent"] > 0, tune["tune"]
    clamps = adaptive.TUNE["min_ns"] / 1000, adaptive.TUNE["max_ns"] / 1000
    assert clamps[0] <= tune["tune"]["q_min_us"] <= tune["tune"]["q_max_us"] <= clamps[1], (
        tune["tune"])
    # recorded (bench/seeds/RESULTS.md, 3 runs of 5 s): misses 29-55 fixed, 0 tuned;
    # longest inter-frame 97-111 ms fixed, 59-64 ms tuned. The time per 1 ms is not
    # asserted: the thread's stretches outlast its 1 ms period in both (see there).
    assert tune["frames"]["misses"] <= fixed["frames"]["misses"], (fixed, tune)
    assert tune["frames"]["max_ms"] < fixed["frames"]["max_ms"], (fixed, tune)


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
