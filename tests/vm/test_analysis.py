"""Scenario 4: a trace of the NIC thread under fixed-rate UDP from the host.

The guest records with trace-cmd while the host sends datagrams at a fixed period through
QEMU's port forwarding. ``irqres analyze`` in the guest recommends a reservation that
``irqres apply`` must get irqresd to put in force on the real thread; on the host the
same trace must show the NIC thread with a mean IRQ inter-arrival close to the period.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

PPS = 100          # one datagram every 10 ms
SECONDS = 8
NIC = "irq/11-eth0"
# interrupts the trace may hold beyond the guest's count of the window: those between
# tracing going on and the window's start, and between its end and the trace's stop
# (the e1000 raises one every 2 s when idle; the sender runs only inside the window)
EDGE_IRQS = 3


def host_analyze(trace) -> dict:
    env = dict(os.environ, PYTHONPATH=str(vmrunner.REPO / "analysis"))
    p = subprocess.run([sys.executable, "-c", "from irqres.cli import main; main()",
                        "analyze", str(trace), "--json", "--thread", NIC],
                       capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def window_marks(trace) -> list[str]:
    """The window's edges the guest wrote into the trace (trace_marker), in order."""
    p = subprocess.run(["trace-cmd", "report", str(trace)], capture_output=True, text=True,
                       check=False)
    return [ln.split("counted window ", 1)[1].split(",")[0] for ln in p.stdout.splitlines()
            if "irqres-vm: counted window" in ln]


def nic_thread(report: dict) -> dict:
    found = [t for t in report["threads"] if t["comm"] == NIC]
    assert len(found) == 1, [t["comm"] for t in report["threads"]]
    return found[0]


@pytest.mark.kernel_independent(
    "record, analyze, apply: 6.1's trace format is the sample traces' (tests/data), "
    "read on the host")
def test_trace_analyze_recommend_apply(boot, demo_profile):
    res = boot("analysis", profile=demo_profile["path"],
               params={"pps": PPS, "seconds": SECONDS, "size": 256,
                       "port": vmrunner.VM.UDP_PORT})
    d = res.data
    assert d["record"]["rc"] == 0, d["record"]
    period = d["period_ns"]
    assert period == 1_000_000_000 // PPS
    assert d["received"]["packets"] >= 0.95 * d["sent"], (d["sent"], d["received"])
    trace = res.out / "trace.dat"
    assert trace.is_file() and trace.stat().st_size == d["trace_size"] > 0

    # on the host, from the copied trace
    report = host_analyze(trace)
    stats = nic_thread(report)["stats"]
    mean = stats["irq_interarrival"]["mean_ns"]
    irqs = d["record"]["irqs"]
    vmrunner.say(f"analysis: sender period {period} ns, measured mean IRQ inter-arrival "
                 f"{mean:.0f} ns over {stats['irq_requests']} requests; the guest counted "
                 f"{irqs['count']} eth0 interrupts in {irqs['window_ns'] / 1e9:.2f} s")
    # What the guest itself counted is the truth the trace is held to, whatever the host
    # did: the interrupts of the window (/proc/interrupts, counted where the guest wrote
    # the window's edges into the trace) are all in the trace, when the trace holds the
    # window's start (trace-cmd turns tracing on late on a loaded host: then the trace may
    # only hold fewer).
    assert irqs["count"] is not None and irqs["count"] > 0, irqs
    marks = window_marks(trace)
    assert marks in (["end"], ["start", "end"]), marks
    if marks == ["start", "end"]:
        assert irqs["count"] <= stats["irq_requests"] <= irqs["count"] + EDGE_IRQS, (
            stats, irqs)
    else:
        vmrunner.say(f"analysis: tracing came on after the window began ({marks}): only "
                     f"at most the guest's count asserted")
        assert stats["irq_requests"] <= irqs["count"] + EDGE_IRQS, (stats, irqs)
    guest_mean = irqs["window_ns"] / irqs["count"]
    assert abs(mean - guest_mean) <= 0.15 * guest_mean, (mean, guest_mean)
    # The sender's period shows only where the host delivered the datagrams on time. Under
    # software emulation on a shared host the guest's vCPUs sometimes stall for 100 ms and
    # more, and datagrams that arrive meanwhile reach the guest together and take one
    # interrupt; on a loaded host that is most of them (559 interrupts for 800 datagrams
    # at load 12-15). Where most datagrams were interrupts of their own, the mean stays
    # within 15 % of the sender's period.
    if irqs["count"] >= 0.8 * d["sent"]:
        assert abs(mean - period) <= 0.15 * period, (mean, period)
    else:
        vmrunner.say(f"analysis: the host delivered {d['sent']} datagrams in "
                     f"{irqs['count']} interrupts (merged while the guest waited for a "
                     f"host CPU): the sender's period is not asserted")

    # in the guest: numpy 1.24, the recommendation, applied for real
    assert d["analyze"]["rc"] == 0, d["analyze"]
    guest = json.loads((res.out / "analyze.json").read_text())
    best = nic_thread(guest)["recommendation"]["best"]
    assert best is not None and best["feasible"], nic_thread(guest)["recommendation"]
    assert "recommended_profile" in d, "analyze --profile-out wrote nothing"
    assert d["start"]["rc"] == 0, d["start"]
    assert d["apply"]["rc"] == 0, d["apply"]
    sched = d["after_apply"]["sched"]
    assert sched["policy"] == "deadline", (d["apply"], d["reserved"])
    assert (sched["runtime_ns"], sched["period_ns"]) == (best["runtime_ns"], best["period_ns"])

    keep = os.environ.get("IRQRES_VM_KEEP_TRACE")
    if keep:  # how tests/data/vm-e1000-udp.dat was made
        shutil.copy2(trace, keep)
