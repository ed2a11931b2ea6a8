"""Lee et al.'s process-aware experiment, short, on the seeds' icount testbed (bench/seeds/
process_aware.py): a high-priority job (SCHED_FIFO 40) and a low-priority one on the NIC's
CPU around a UDP server (SCHED_FIFO 10) under a rising load. Coupled (the NIC target
``serves:`` the server's port), the high job's mean execution time at the highest rate
is at most 25 % above the jobs-alone rate's (shapes.PA_GROWTH; the paper's 10 % is the
goal RESULTS.md reports), it misses no deadline, and at the highest rate it spends at most
300 us a frame off its work (shapes.PA_OFF_NS: preempted or in interrupts; 14-53 us
coupled and 532-1214 us at the kernel default in the recorded runs, whose growth at the
kernel default, +1.3 % to +30.7 %, no longer fails the 25 % alone) (bench/seeds/shapes.py
process_aware, on guest-time data).

Zhang and West's, short, on the same testbed (bench/seeds/zhang_west.py): a real-time
task (SCHED_FIFO 40, 95 ms of every 100 ms) on the NIC's CPU above the same UDP server
under MMPP-2 bursts at rising mean rates. Coupled, the task misses no deadline and the
server reads at least half of what the CPU left to it allows (shapes.zhang_west: the
recorded runs read 65 % or more coupled, the goal of 80 % RESULTS.md reports was met in 2
of 3; at the kernel default the task missed 8 to 40 of 40 deadlines at every rate with a
sender).

IRQRES_PA_MODE=default runs the same tests with the NIC thread left at the kernel's
SCHED_FIFO 50: the assertions must then fail (the shapes' cause removed)."""

import os
import sys

import pytest
import vmrunner

sys.path.insert(0, str(vmrunner.REPO / "bench" / "seeds"))

import process_aware
import shapes
import zhang_west

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MODE = os.environ.get("IRQRES_PA_MODE", "coupled")


def test_high_job_flat_when_the_nic_thread_serves_the_server(icount_boot):
    if MODE not in ("coupled", "default"):
        pytest.fail(f"IRQRES_PA_MODE={MODE!r}: coupled or default")
    res = icount_boot("seeds_process_aware", timeout_s=1800,
                      params=process_aware.guest_params(1, 2, [0, 450, 900], [MODE]))
    rows = res.data["rows"]
    for r in rows:
        vmrunner.say(f"process-aware {MODE} {r['rate']}/s: high mean "
                     f"{shapes.pa_mean_ns(r['high']) / 1e6:.2f} ms, {r['high']['out']}; "
                     f"low {r['low']['out']}; server {r['server']}; NIC {r['nic_seen']}")
    want = [["fifo", 10]] if MODE == "coupled" else [["fifo", 50]]
    assert all(r["nic_seen"] == want for r in rows if r["rate"]), [r["nic_seen"] for r in rows]
    bad = shapes.process_aware(rows)
    assert bad == [], bad


def test_rt_task_misses_nothing_when_the_nic_thread_serves_the_server(icount_boot):
    """Zhang and West's experiment at mean rates 0, 150 and 600/s, 2 s each."""
    if MODE not in ("coupled", "default"):
        pytest.fail(f"IRQRES_PA_MODE={MODE!r}: coupled or default")
    params = zhang_west.guest_params(1, 2, [0, 150, 600], [MODE])
    res = icount_boot("seeds_zhang_west", timeout_s=1800, params=params)
    rows = res.data["rows"]
    for r in rows:
        m = shapes.zw_row(r, params["task"])
        vmrunner.say(f"zhang-west {MODE} {r['rate']}/s {r['rates']}: {m['misses']} misses of "
                     f"{m['periods']}, max late {m['max_late_ns'] / 1e6:.2f} ms; sent "
                     f"{m['sent']}, read {m['rx_per_s']:.0f}/s, allowed "
                     f"{m['allowed_per_s']:.0f}/s; NIC {r['nic_seen']}")
    want = [["fifo", 10]] if MODE == "coupled" else [["fifo", 50]]
    assert all(r["nic_seen"] == want for r in rows if r["rate"]), [r["nic_seen"] for r in rows]
    bad = shapes.zhang_west(rows, params["task"])
    assert bad == [], bad
