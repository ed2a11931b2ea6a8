"""SCHED_DEADLINE admission at its exact limit, on each kernel.

irqresd (profiles/demo.yaml, started at boot) reserves the e1000's thread. In the guest, a
task of ours is pinned to each CPU in turn, and ``irqresd --dry-run`` on a profile that
also reserves that task tells the largest runtime (every 2^20 ns, so one ns is one step of
the kernel's bandwidth arithmetic) its root domain admits, with where each number comes
from: the RT limit, the kernel's own count of the bandwidth in use (deadline servers
included: fair from 6.12, sched_ext's from 7.0, each counted only while it holds
bandwidth) and the tasks. Then the kernel itself is asked: sched_setattr must accept
exactly that runtime and refuse one nanosecond more, and irqresd's dry-run must have said
so (feasible at the limit, EBUSY beyond) before anything was changed.
"""

import sys
from pathlib import Path

import pytest
import vmrunner

sys.path.insert(0, str(Path(__file__).resolve().parent / "guest"))

from vmguest import to_ratio

pytestmark = [pytest.mark.vm, pytest.mark.slow]

EBUSY = 16


# On 7.3 the NIC thread (PF_NO_SETAFFINITY) stays in the root cgroup beside the partition
# of its CPU, and the kernel counts it in the root cgroup's domain: _check_staying.
@pytest.mark.kernels_too("7.3")
@pytest.mark.arm64
def test_fill_to_the_predicted_limit(boot, demo_profile):
    import yaml

    nic = yaml.safe_load(demo_profile["path"].read_text())["targets"][0]
    res = boot("admission", profile=demo_profile["path"], enable_irqresd=True,
               params={"nic_target": nic, "lower_nic_ns": LOWER_NS,
                       "lower_steps_ns": LOWER_STEPS_NS})
    _check_lower_steps(res)
    _check_fill(res)
    _check_lower(res)


# On 7.3 too: an isolated CPU is a root domain without a partition, and the kernel counts
# the IRQ thread pinned there where it runs.
@pytest.mark.kernels_too("7.3")
def test_fill_to_the_predicted_limit_with_the_nic_cpu_isolated(boot, demo_profile):
    import yaml

    nic = yaml.safe_load(demo_profile["path"].read_text())["targets"][0]
    res = boot("admission", profile=demo_profile["path"], enable_irqresd=False,
               params={"nic_target": nic, "irq_cpu": 1}, kernel_args=vmrunner.ISOLATE_CPU1)
    b = res.data["boot"]
    assert b["isolated"] == "1" and b["nohz_full"] == "1", b
    assert b["irq_cpu"]["thread_moved"], b["irq_cpu"]
    assert res.data["nic"]["cpus"] == "1", res.data["nic"]
    vmrunner.say(f"admission {res.kernel.release}, CPU 1 isolated: NIC thread on CPU 1 "
                 f"(moved {b['irq_cpu']['waited_ns'] / 1e9:.1f} s after its IRQ), partitions "
                 f"{res.data['partitions']}")
    _check_fill(res)


LOWER_NS = 500_000      # the NIC's runtime lowered to, from demo.yaml's 2 ms
# first in steps each below the 7.x floor the one before leaves (its partition's count,
# 0.05 of a CPU, is 0.5 ms every 10 ms) and within the floor after the kernel counted again
LOWER_STEPS_NS = [1_600_000, 1_200_000]


def _check_lower_steps(res) -> None:
    """Each step of the NIC's budget lowered through irqresd before the fill: accepted, and
    the kernel's counts afterwards those of before the step but for the thread's new
    bandwidth in the domain that counts it (where it runs on 6.1 and 6.12; its cgroup's,
    CPU 1's, on 7.x). 7.x charges the change to the partition's domain, where it runs and
    which does not count it: irqresd has the kernel count again after it. Without that,
    CPU 0's count would fall 0.04 of a CPU below its fair server's own, the second step
    would be refused (below the floor the first left), and the fill (_check_staying) would
    find the kernel admitting more than its servers leave."""
    d, where = res.data, res.kernel.release
    counting = "1" if res.kernel.label.startswith("7.") else "0"
    prev = d["kernel_before"]["rd"]
    old = d["nic_at_boot"]["sched"]
    for step in d["lower_steps"]:
        new = step["nic"]["sched"]
        assert step["set_budget"]["rc"] == 0, (where, step)
        assert new["runtime_ns"] == step["runtime_ns"], (where, step)
        change = (to_ratio(new["period_ns"], new["runtime_ns"])
                  - to_ratio(old["period_ns"], old["runtime_ns"]))
        for cpu, got in step["kernel_bw"].items():
            want = prev[cpu]["total_bw"] + (change if cpu == counting else 0)
            assert got["total_bw"] == want, (where, cpu, step["runtime_ns"], prev, step)
        prev, old = step["kernel_bw"], new
    counts = [{c: v["total_bw"] for c, v in s["kernel_bw"].items()} for s in d["lower_steps"]]
    vmrunner.say(f"admission {where}: NIC lowered through {LOWER_STEPS_NS} ns: counts {counts}")


def _check_lower(res) -> None:
    """The NIC's budget lowered from the last step to 0.5 ms every 10 ms. 6.1 and 6.12 count the
    thread where it runs: irqresd and the kernel accept it. On 7.x it stays in / beside
    its partition and the kernel counts it in the root cgroup's domain, but checks the
    change against its partition's count, which lacks its 0.2 CPU: the new budget would
    take it below zero, and the kernel refuses (EBUSY); irqresd says so before it asks
    (its plan's floor), and the thread keeps its budget."""
    low, where = res.data["lower"], res.kernel.release
    before = low["before"]["sched"]
    if res.kernel.label.startswith("7."):
        out = low["set_budget"]["out"] + low["set_budget"]["err"]
        assert low["set_budget"]["rc"] != 0, (where, low)
        assert "EBUSY: the kernel counts this thread" in out, (where, out)
        assert "it refuses any runtime below" in out, (where, out)
        assert low["after_set_budget"]["sched"] == before, (where, low)
        assert low["kernel"] == EBUSY, (where, low)
        assert low["after_kernel"]["sched"] == before, (where, low)
    else:
        assert low["set_budget"]["rc"] == 0, (where, low)
        assert low["after_set_budget"]["sched"]["runtime_ns"] == LOWER_NS, (where, low)
        assert low["kernel"] == 0, (where, low)
    vmrunner.say(f"admission {where}: NIC lowered from {before['runtime_ns']} to {LOWER_NS} "
                 f"ns: set-budget rc {low['set_budget']['rc']}, kernel errno {low['kernel']}"
                 f"; CPU 0's count {low['kernel_bw'].get('0', {}).get('total_bw')}")


SIRQ_NS = (1_000_000, 10_000_000)   # each soft IRQ kthread's reservation


# On 7.3 too: the kthreads stay beside the partition as the NIC thread does there, and
# the kernel counts all of them in the root cgroup's domain (_check_staying).
@pytest.mark.kernels_too("7.3")
def test_fill_with_the_soft_irq_kthreads_reserved(boot, demo_profile, tmp_path):
    """A softirq target beside the NIC's (docs/profile.md): irqresd reserves ksoftirqd,
    ktimers and backlog_napi of the NIC's CPU at boot. They are pinned (PF_NO_SETAFFINITY)
    and stay in the root cgroup beside the partition of their CPU; 6.1 and 6.12 count them
    where they run, so the prediction must take them out of the kernel's count of that
    partition when it plans them again, and fill it exactly (a plan that kept them in would
    stop 0.3 CPU short, and the kernel would accept one ns beyond); 7.3 counts them in the
    root cgroup's domain. Stopped, irqresd gives each back as it was: as its twin on the
    other CPU, which it never touched."""
    import json

    import yaml

    doc = yaml.safe_load(demo_profile["path"].read_text())
    nic = doc["targets"][0]
    sirq = {"name": "sirq", "softirq": {"kthreads": ["ksoftirqd", "ktimers", "backlog_napi"],
                                       "cpu": [0]},
            "runtime": f"{SIRQ_NS[0]}ns", "period": f"{SIRQ_NS[1]}ns"}
    doc["targets"].append(sirq)
    profile = tmp_path / "softirq.yaml"
    profile.write_text(yaml.safe_dump(doc, sort_keys=False))
    res = boot("admission", profile=profile, enable_irqresd=True,
               params={"nic_target": nic, "other_targets": [sirq]})
    d, where = res.data, res.kernel.release
    assert d["nic"]["cpus"] == "0", d["nic"]    # the e1000's IRQ on CPU 0
    cpu0 = [t for t in d["softirqd"] if t["cpu"] == 0]
    twins = {(t["kthread"], t["cpu"]): t for t in d["softirqd"]}
    assert {t["kthread"] for t in cpu0} >= {"ksoftirqd", "ktimers"}, d["softirqd"]
    for t in cpu0:
        # reserved where they are: in the root cgroup, pinned to CPU 0
        assert t["sched"]["policy"] == "deadline", (where, t)
        assert (t["sched"]["runtime_ns"], t["sched"]["period_ns"]) == SIRQ_NS, (where, t)
        assert (t["cgroup"], t["cpus"]) == ("/", "0"), (where, t)
    for t in d["softirqd"]:
        if t["cpu"] != 0:   # not selected: never touched
            assert t["sched"]["policy"] != "deadline", (where, t)
    kinds = {t["name"]: t["kind"] for t in json.loads(d["status"]["out"])["targets"]}
    assert kinds == {"nic": "irq", "sirq": "softirq"}, kinds
    _check_fill(res)
    # stopped: each back as its twin on CPU 1 is, the partition gone
    for t in d["softirqd_after_stop"]:
        twin = twins.get((t["kthread"], 1))
        if t["cpu"] == 0 and twin is not None:
            assert t["sched"] == twin["sched"], (where, t, twin)
            assert t["cgroup"] == "/", (where, t)
    assert not [g for g in d["partitions_after_stop"] if g.startswith("irqres")], d
    vmrunner.say(f"softirq kthreads ({where}): {[t['comm'] for t in cpu0]} reserved "
                 f"{SIRQ_NS[0]} ns / {SIRQ_NS[1]} ns in / beside irqres.cpu0; given back as "
                 f"{[(t['comm'], t['sched']['policy']) for t in d['softirqd_after_stop']]}")


def _check_fill(res) -> None:
    d = res.data
    assert d["irqresd"]["ActiveState"] == "active", d["journal"]["out"]
    assert d["nic"]["sched"]["policy"] == "deadline", d["nic"]
    rd = d["kernel_before"]["rd"]
    servers = d["kernel_before"]["servers"]
    ext_state = d["kernel_before"]["sched_ext_state"]
    held = _servers_held(servers, res.kernel.label, ext_state)
    if res.kernel.label == "6.1":
        assert not servers, "6.1 has no deadline server"
    else:
        # 6.12+ has a fair server on every CPU, and counts it
        assert set(servers["fair_server"]) == set(rd), (servers, rd)
        assert set(held) == set(rd), (servers, rd)
    if res.kernel.label.startswith("7."):
        # CONFIG_SCHED_CLASS_EXT=y: sched_ext's server is there on every CPU
        assert set(servers.get("ext_server", {})) == set(rd), servers
    assert len(d["domains"]) >= 2
    # A thread irqresd cannot move (PF_NO_SETAFFINITY: IRQ threads on 7.x, the soft IRQ
    # kthreads everywhere) stays in the root cgroup beside the partition of its CPU; 7.x
    # counts it in the root cgroup's domain, 6.1 and 6.12 where it runs
    staying = [t for t in [d["nic"], *d.get("softirqd", [])] if _stays(t, d["partitions"])]
    staying_bw = sum((t["sched"]["runtime_ns"] << 20) // t["sched"]["period_ns"]
                     for t in staying)
    for dom in d["domains"]:
        if staying and res.kernel.label.startswith("7."):
            _check_staying(res, dom, held, rd, staying_bw)
            continue
        cpu, limit = dom["cpu"], dom["limit_ns"]
        where = f"{res.kernel.release} CPU {cpu} ({dom['group'] or 'default root domain'})"
        probe = dom["probe_domain"]
        assert probe is not None, (where, "no root domain of the plan has the CPU",
                                   dom["probe"]["text"], dom["probe"]["plan"]["domains"])
        assert probe["existing_source"] == "kernel", (where, probe)
        # the prediction: exactly the kernel's own figures, read before anything changed
        kernel = dom["kernel_bw_before"]
        assert probe["cap_bw_units"] == kernel["bw"], (where, probe, kernel)
        # the servers' share of what is in use: those of the domain's CPUs that hold
        # bandwidth (an ext_server with no BPF scheduler holds none from 7.2 on)
        cpus = vmrunner.cpu_list(probe["cpus"])
        assert probe["servers_bw_units"] == sum(held.get(str(c), 0) for c in cpus), \
            (where, probe, servers)
        if res.kernel.label.startswith("7."):
            # the kernel counts exactly the servers that hold bandwidth and the tasks: an
            # ext_server with no BPF scheduler is not in it (6.12.95 leaves the servers
            # out of the root domains it builds for partitions: not compared there)
            assert probe["existing_bw_units"] == probe["servers_bw_units"] + \
                probe["tasks_bw_units"], (where, probe, servers)
        assert 0 < limit <= kernel["bw"], (where, probe)
        # irqresd says which it will be before anything changes...
        at, beyond = dom["at_limit"], dom["beyond"]
        assert at["rc"] == 0 and at["plan"]["feasible"], (where, at["text"])
        assert beyond["rc"] != 0 and not beyond["plan"]["feasible"], (where, beyond["text"])
        fill = next(i for i in beyond["plan"]["items"] if i["target"] == "fill")
        assert fill["verdict"].startswith("EBUSY: admission"), (where, fill)
        assert "Where the numbers come from" in at["text"], at["text"]
        # ...and the kernel agrees to the nanosecond
        assert dom["kernel_beyond"] == EBUSY, (where, dom)
        assert dom["kernel_at_limit"] == 0, (where, dom, at["text"])
        assert dom["filler_sched"]["runtime_ns"] == limit
        assert dom["kernel_bw_full"]["total_bw"] == kernel["bw"], (where, dom)
        assert dom["kernel_more"] == EBUSY, (where, dom)
        assert dom["reset"] == 0, (where, dom)
        # A task that leaves SCHED_DEADLINE while asleep keeps its bandwidth counted in
        # its root domain (the kernel frees it from the "inactive timer", which only a
        # task that ran starts): one more reason the prediction reads the kernel's count
        # instead of adding up the tasks it can see.
        vmrunner.say(f"admission {where}: servers {_held_names(servers, ext_state)}; "
                     f"limit {limit} ns / {1 << 20} ns = "
                     f"{probe['cap_bw_units']} - {probe['existing_bw_units']} in use - "
                     f"{probe['new_bw_units'] - 1024} for the threads irqresd holds; kernel: "
                     f"accepted at the limit, EBUSY one ns beyond; total_bw {kernel['total_bw']} "
                     f"before, {dom['kernel_bw_after']['total_bw']} after the task left "
                     f"SCHED_DEADLINE asleep, {dom['kernel_bw_exited']['total_bw']} after "
                     f"it exited")


def _stays(t: dict, partitions: dict) -> bool:
    """A reserved thread in the root cgroup beside an irqres partition of its CPUs."""
    return (t.get("sched") or {}).get("policy") == "deadline" and t["cgroup"] == "/" and \
        any(p["cpus"] == t["cpus"] for g, p in partitions.items() if "irqres" in g)


def _check_staying(res, dom: dict, held: dict, rd: dict, nic_bw: int) -> None:
    """Threads that stay in the root cgroup beside the partition of their CPU (7.x: the
    NIC thread, and any soft IRQ kthreads reserved; ``nic_bw`` their bandwidth): where
    the kernel counts them, irqresd's prediction is exact; on their own CPU irqresd counts
    them where they run and the kernel does not, so the kernel accepts exactly their
    bandwidth more than irqresd predicts (docs/vm.md, "What 7.3 changes")."""
    cpu, limit = dom["cpu"], dom["limit_ns"]
    where = f"{res.kernel.release} CPU {cpu} ({dom['group'] or 'default root domain'})"
    probe, kernel = dom["probe_domain"], dom["kernel_bw_before"]
    nic_here = dom["group"] is not None
    # the kernel's count: the servers, and the NIC thread only outside its partition
    assert kernel["total_bw"] == held[str(cpu)] + (0 if nic_here else nic_bw), \
        (where, kernel, held, rd)
    assert probe["cap_bw_units"] == kernel["bw"], (where, probe, kernel)
    at, beyond = dom["at_limit"], dom["beyond"]
    assert at["rc"] == 0 and at["plan"]["feasible"], (where, at["text"])
    assert beyond["rc"] != 0 and not beyond["plan"]["feasible"], (where, beyond["text"])
    assert "stays in cgroup / beside cpuset partition" in at["text"], at["text"]
    assert dom["kernel_at_limit"] == 0, (where, dom, at["text"])
    assert dom["filler_sched"]["runtime_ns"] == limit
    assert dom["reset"] == 0, (where, dom)
    if nic_here:
        # irqresd: capacity - servers - the NIC thread; the kernel did not count the NIC
        assert limit == kernel["bw"] - held[str(cpu)] - nic_bw, (where, limit, probe)
        assert dom["kernel_beyond"] == 0, (where, dom)
        assert dom["kernel_bw_full"]["total_bw"] == held[str(cpu)] + limit, (where, dom)
    else:
        assert limit == kernel["bw"] - kernel["total_bw"], (where, limit, kernel)
        assert dom["kernel_beyond"] == EBUSY and dom["kernel_more"] == EBUSY, (where, dom)
        assert dom["kernel_bw_full"]["total_bw"] == kernel["bw"], (where, dom)
    counted = f"elsewhere: it accepts {nic_bw} more here" if nic_here else \
        "here: EBUSY one ns beyond"
    vmrunner.say(f"admission {where}: NIC thread stays in / beside its partition; limit "
                 f"{limit} ns / {1 << 20} ns predicted and accepted; the kernel counts the "
                 f"NIC thread {counted}")


def _servers_held(servers: dict, label: str, ext_state: str | None) -> dict[str, int]:
    """Per CPU, the bandwidth (2^-20 CPU) its deadline servers hold: runtime and period
    both set (the kernel zeroes them when it removes a server's reservation), and from
    7.2 on sched_ext's only while a BPF scheduler is loaded (its debugfs files keep
    showing 50 ms / 1 s meanwhile)."""
    held: dict[str, int] = {}
    ext_off = tuple(map(int, label.split("."))) >= (7, 2) and ext_state == "disabled"
    for name, per_cpu in servers.items():
        if name == "ext_server" and ext_off:
            continue
        for cpu, s in per_cpu.items():
            if s["runtime_ns"] > 0 and s["period_ns"] > 0:
                held[cpu] = held.get(cpu, 0) + (s["runtime_ns"] << 20) // s["period_ns"]
    return held


def _held_names(servers: dict, ext_state: str | None) -> str:
    """The servers, for the log: "ext_server, fair_server (sched_ext disabled)"."""
    return ", ".join(servers) + (f" (sched_ext {ext_state})" if ext_state else "") \
        if servers else "none"
