"""Zhang and West's process-aware experiment, short, on the seeds' icount testbed
(bench/seeds/zhang_west.py): a real-time task (SCHED_FIFO 40, 95 ms of every 100 ms)
on the NIC's CPU above a UDP server (SCHED_FIFO 10) under MMPP-2 bursts at rising mean
rates. Coupled (the NIC target ``serves:`` the server's port), the task misses no
deadline and the server reads at least 80 % of what the CPU left to it allows
(bench/seeds/shapes.py zhang_west, on guest-time data).

IRQRES_ZW_MODE=default runs the same test with the NIC thread left at the kernel's
SCHED_FIFO 50: the assertion must then fail (the task misses deadlines)."""

import os
import sys

import pytest
import vmrunner

sys.path.insert(0, str(vmrunner.REPO / "bench" / "seeds"))

import shapes
import zhang_west

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MODE = os.environ.get("IRQRES_ZW_MODE", "coupled")


def test_rt_task_misses_nothing_when_the_nic_thread_serves_the_server(icount_boot):
    if MODE not in ("coupled", "default"):
        pytest.fail(f"IRQRES_ZW_MODE={MODE!r}: coupled or default")
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
