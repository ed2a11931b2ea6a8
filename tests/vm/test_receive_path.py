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

import csv
import io
import json
import os
import re
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
    # per-CPU kthreads are pinned (PF_NO_SETAFFINITY): refused in the root domain (EPERM),
    # not movable into a one-CPU partition (EINVAL), and accepted where they are once a
    # partition of their CPU exists (it is their root domain, whatever their cgroup)
    per_cpu = [f for f in facts["facts"] if re.fullmatch(r"(ksoftirqd|ktimers)/\d", f["comm"])
               or f["comm"].startswith("backlog_napi/")]  # backlog_napi/N from 6.10
    assert {"ksoftirqd/0", "ksoftirqd/1", "ktimers/0", "ktimers/1"} <= \
        {f["comm"] for f in per_cpu}, by_comm
    # with CPU 0 made a partition (as irqresd does for the NIC thread pinned there), a
    # NAPI kthread moved into it takes SCHED_DEADLINE there: what with_napi relies on
    for f in napi:
        w = f["with_partition"]
        assert (w["move"], w.get("deadline_in_partition"), w["restored"]) == (
            "ok", "ok", "ok"), (where, f)
    for f in per_cpu:
        assert f["no_setaffinity"], f
        assert (f["deadline_in_root"], f["move"]) == ("EPERM", "EINVAL"), f
        assert (f["deadline_beside_partition"], f["restored"]) == ("ok", "ok"), f

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


NAPI_NS = [2 * MS, 10 * MS]     # the NAPI kthread's reservation
NIC_NS = [1 * MS, 10 * MS]      # the IRQ thread's, in both phases


def test_threaded_napi_reserved(boot, demo_profile):
    """threaded_napi: true and a napi target beside the NIC's: the NAPI kthread exists,
    holds the profile's reservation, and the device work left to ksoftirqd does not grow
    (it falls where the soft IRQ phase left a measurable share there); stopping irqresd
    puts threaded back."""
    res = boot("threaded_napi", profile=demo_profile["path"], enable_irqresd=True,
               timeout_s=1500,
               params={"port": vmrunner.VM.UDP_PORT, "pps": 4000, "seconds": 5,
                       "size": 1000, "nic_ns": NIC_NS, "napi_ns": NAPI_NS})
    where, d = res.kernel.release, res.data
    assert d["apply"]["rc"] == 0, d["apply"]
    assert (d["threaded_before"], d["threaded_applied"]) == ("0", "1"), d
    # the e1000's one NAPI instance: its kthread exists once the apply returns, and is
    # reserved once it has polled (in the IRQ thread's partition, docs/receive-path.md)
    assert len(d["napi_at_apply"]) == 1, d["napi_at_apply"]
    napi = d["napi_applied"]
    assert len(napi) == 1, napi
    want = {"policy": "deadline", "runtime_ns": NAPI_NS[0], "period_ns": NAPI_NS[1]}
    for t in napi + d["napi_after_flood"]:
        got = {k: (t["sched"] or {}).get(k) for k in want}
        assert got == want, (where, t)
    kinds = {t["name"]: t["kind"] for t in json.loads(d["status"]["out"])["targets"]}
    assert kinds == {"nic": "irq", "poll": "napi"}, kinds
    # stopped: threaded back to 0; a kernel that keeps the kthread (6.1 does) has it
    # back as it was, SCHED_OTHER in the root cgroup
    assert d["threaded_after_stop"] == "0", d
    for t in d["napi_after_stop"]:
        assert (t["sched"]["policy"], t["cgroup"]) == ("other", "/"), (where, t)

    work = {}
    for ph in d["phases"]:
        assert ph["record"]["rc"] == 0, ph["record"]
        report = host_analyze(res.out / ph["trace"])
        nic = [t for t in report["threads"] if t["comm"] == NIC]
        assert len(nic) == 1, [t["comm"] for t in report["threads"]]
        work[ph["label"]] = w = nic[0]["device_work"]
        assert w is not None and w["total_ns"] > 0, nic[0]
        vmrunner.say(
            f"threaded NAPI ({where}) {ph['label']}: received {ph['received']['packets']}/"
            f"{ph['sent']}, device work {w['total_ns'] / 1e6:.1f} ms: IRQ thread "
            f"{w['irq_thread_share']:.3f}, NAPI {w['napi_share']:.3f}, ksoftirqd "
            f"{w['ksoftirqd_share']:.3f}, other {w['other_tasks_share']:.3f}; outside "
            f"{w['outside_share']:.3f}")
    (res.out.parent / "threaded-napi.json").write_text(json.dumps(
        {"kernel": where, "work": work, "napi": napi}, indent=1))
    soft, thr = work["softirq"], work["threaded"]
    # the polls ran in the reserved NAPI kthread, named in the accounting
    assert thr["napi_share"] > 0 and [h for h in thr["napi"] if h["ns"] > 0], thr
    assert soft["napi_share"] == 0, soft
    # what ksoftirqd ran of the device's work: never more with the switch; and less
    # wherever the soft IRQ phase left it a share worth measuring (its size depends on
    # how the emulated guest's time falls, docs/receive-path.md)
    assert thr["ksoftirqd_share"] <= soft["ksoftirqd_share"], (soft, thr)
    if soft["ksoftirqd_share"] >= 0.01:
        assert thr["ksoftirqd_share"] < soft["ksoftirqd_share"], (soft, thr)


def check_tuned(tuned: dict, want: dict, where: str) -> None:
    """``irqres tune`` on the with_napi target moved both threads' budget, only ever to
    budgets it sent, and put the profile's back on both when it stopped."""
    assert tuned["apply"]["rc"] == 0, tuned["apply"]
    assert tuned["tune_rc"] == 0, tuned["tune_out"]
    rows = list(csv.DictReader(io.StringIO(tuned["tune_csv"])))
    sent = {int(r["Q_sent_ns"]) for r in rows if r["Q_sent_ns"]}
    assert rows and sent, tuned["tune_out"]
    q0 = want["runtime_ns"]
    for who in ("nic", "napi"):
        seen = {r for s in tuned["samples"] for r in s[who]}
        # each thread took a budget tune sent (quiet: below the profile's), and no other
        assert seen - {q0}, (where, who, sorted(seen), sorted(sent))
        assert seen <= sent | {q0}, (where, who, sorted(seen - sent - {q0}), sorted(sent))
    after = tuned["after"]
    assert len(after["nic"]) == 1 and len(after["napi"]) == 1, after
    for t in after["nic"] + after["napi"]:
        got = {k: (t["sched"] or {}).get(k) for k in want}
        assert got == want, (where, "after tune", t)
    vmrunner.say(f"device path tuned ({where}): {len(rows)} intervals, budgets sent "
                 f"{min(sent)}..{max(sent)} ns, both threads followed and were put back")


@pytest.mark.kernels_too("7.3")
def test_device_path_under_one_target(boot, demo_profile, kernel):
    """with_napi: true on an interface target: the IRQ thread and the NAPI kthread hold
    the target's one reservation, and follow ``irqres tune``'s budgets when it is
    adaptive; without it the NAPI kthread is the kernel's again;
    stopping irqresd puts everything back."""
    # the boot profile's reservation: from 6.19 the kernel refuses to lower the budget of
    # a thread beside its partition by more than the partition's count (7.3's IRQ threads
    # stay beside it, docs/vm.md "What 7.3 changes"), and lowering is not what this tests.
    nic_ns = [demo_profile["runtime_ns"], demo_profile["period_ns"]]
    res = boot("device_path", profile=demo_profile["path"], enable_irqresd=True,
               timeout_s=900, params={"port": vmrunner.VM.UDP_PORT, "nic_ns": nic_ns})
    where, d = res.kernel.release, res.data
    want = {"policy": "deadline", "runtime_ns": nic_ns[0], "period_ns": nic_ns[1]}

    def sched(t):
        return {k: (t["sched"] or {}).get(k) for k in want}

    both = d["with_napi"]
    assert both["apply"]["rc"] == 0, both["apply"]
    assert both["threaded"] == "1" and len(both["nic"]) == 1 and len(both["napi"]) == 1, both
    for t in both["nic"] + both["napi"]:
        assert sched(t) == want, (where, t)
    (target,) = json.loads(both["status"]["out"])["targets"]
    comms = sorted(th["comm"] for th in target["threads"])
    assert target["kind"] == "irq" and len(comms) == 2 and comms[1].startswith("napi/eth0-"), (
        target)
    # the plan came before the switch: it had no NAPI kthread yet, and said it would fit
    assert both["plan"]["rc"] == 0 and json.loads(both["plan"]["out"])["feasible"], both["plan"]
    check_tuned(d["tuned"], want, where)
    # the same target without with_napi: the IRQ thread alone; the kthread given back
    alone = d["without"]
    assert alone["apply"]["rc"] == 0, alone["apply"]
    assert [sched(t) for t in alone["nic"]] == [want], (where, alone["nic"])
    assert [t["sched"]["policy"] for t in alone["napi"]] == ["other"], (where, alone["napi"])
    # stopped: threaded back to 0 (irqresd switched it), the IRQ thread at the kernel's
    # SCHED_FIFO 50
    after = d["after_stop"]
    assert d["before"]["threaded"] == "0", d["before"]
    assert after["threaded"] == "0", after
    assert [(t["sched"]["policy"], t["sched"]["priority"]) for t in after["nic"]] == [
        ("fifo", 50)], (where, after)
    for t in after["napi"]:
        assert t["sched"]["policy"] == "other", (where, t)
