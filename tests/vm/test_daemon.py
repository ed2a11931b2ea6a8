"""Scenarios 1-3: irqresd on the PREEMPT_RT guest with profiles/demo.yaml.

1. boot: irqresd.service (Type=notify) starts at boot and irq/11-eth0 gets exactly the
   profile's Q/T/D inside a cpuset partition irqres created; ``irqres status`` shows it.
2. hotplug: driver reload and link down/up recreate the thread; the reservation is back
   within a bound (measured and printed).
3. stop: ``systemctl stop`` restores SCHED_FIFO 50 and removes the partition; kill -9
   and a new start end consistent.
4. waiting: a thread that has not run in its new partition is moved, recorded and listed
   as waiting, and reserved once it has run there.
"""

import json
import re

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]

# The NIC thread on amd64: e1000 in slot 3 with acpi_irq_nobalance, always IRQ 11 (the
# scenarios marked arm64 take the arm64 guest's from the nic_thread fixture)
NIC = r"irq/11-eth0"
# A new thread moved into its partition gets SCHED_DEADLINE only once it has run there, at
# its next interrupt; when irqresd is quicker than the e1000's first interrupts after it
# is opened, the next one is its watchdog's, every 2 s of an idle link.
HOTPLUG_BOUND_S = 4.0
# The default rescan is 1 s; a starved TCG guest's rescans run late in guest time
# (3.0 and 3.1 s on 6.1 at host load 14, docs/vm.md): five rescans' worth.
DRIFT_BOUND_S = 5.0


def unit_rttime_us() -> list[str]:
    """LimitRTTIME of systemd/irqresd.service as /proc/PID/limits shows it (us)."""
    unit = (vmrunner.REPO / "systemd" / "irqresd.service").read_text()
    value = re.search(r"^LimitRTTIME=(\S+)", unit, re.M)[1]
    scale = {"us": 1, "ms": 1000, "s": 1_000_000}
    soft, _, hard = value.partition(":")
    out = []
    for v in (soft, hard or soft):
        m = re.fullmatch(r"(\d+)(us|ms|s)", v)
        assert m, f"LimitRTTIME={value}: not a value this test reads"
        out.append(str(int(m[1]) * scale[m[2]]))
    return out


def want(profile: dict) -> dict:
    return {k: profile[k] for k in ("runtime_ns", "period_ns", "deadline_ns")}


def assert_reserved(snap: dict, profile: dict, nic: str = NIC) -> None:
    """The NIC thread (its name matches ``nic``) has exactly the profile's reservation, in
    a partition of irqres."""
    t = snap["thread"]
    assert t is not None, f"{snap['label']}: no {nic} thread"
    assert re.fullmatch(nic, t["comm"]), t
    assert t["sched"]["policy"] == "deadline", (snap["label"], t)
    assert {k: t["sched"][k] for k in want(profile)} == want(profile), (snap["label"], t)
    group = staying_beside(snap) or t["cgroup"].strip("/")
    assert group in snap["partitions"], (snap["label"], t["cgroup"], snap["partitions"])
    part = snap["partitions"][group]
    assert part["partition"] == "root", part
    assert group == staying_beside(snap) or str(t["pid"]) in part["procs"], part
    assert "irqres" in group, f"partition {group} is not one irqres names as its own"


def staying_beside(snap: dict) -> str | None:
    """The partition of irqres a thread in the root cgroup is pinned to the CPUs of: where
    an IRQ thread (PF_NO_SETAFFINITY from 7.x, which the kernel does not let into a
    cpuset) stays while the partition is its root domain (docs/vm.md, "What 7.3
    changes")."""
    t = snap["thread"]
    if t["cgroup"] != "/":
        return None
    return next((g for g, p in snap["partitions"].items()
                 if "irqres" in g and p["cpus"] == t["cpus"]), None)


def assert_reserved_anywhere(snap: dict, profile: dict) -> None:
    """Exactly the profile's reservation; a partition only if the thread needed one.

    Once irqres has removed its partition the kernel leaves the thread with the root
    cpuset's CPUs until the IRQ's affinity is set again, and SCHED_DEADLINE is then
    accepted without a partition: that is consistent too, as long as no partition is
    left over that the thread is not in.
    """
    t = snap["thread"]
    assert t is not None, f"{snap['label']}: no {NIC} thread"
    assert t["sched"]["policy"] == "deadline", (snap["label"], t)
    assert {k: t["sched"][k] for k in want(profile)} == want(profile), (snap["label"], t)
    ours = [g for g in snap["partitions"] if "irqres" in g]
    assert ours in ([], [staying_beside(snap) or t["cgroup"].strip("/")]), \
        (snap["label"], t, snap["partitions"])


def assert_restored(snap: dict, running: dict | None = None) -> None:
    t = snap["thread"]
    assert t is not None, f"{snap['label']}: no {NIC} thread"
    assert (t["sched"]["policy"], t["sched"]["priority"]) == ("fifo", 50), (snap["label"], t)
    assert not [g for g in snap["partitions"] if "irqres" in g], (snap["label"],
                                                                  snap["partitions"])
    assert t["cgroup"] in ("/", ""), (snap["label"], t["cgroup"])
    # back on its IRQ's CPU, as in its partition: leaving the partition and removing it
    # made the kernel allow it every CPU, which irqresd puts back
    if running is not None and running["thread"]["cgroup"].startswith("/irqres"):
        assert t["cpus"] == running["thread"]["cpus"], (snap["label"], t, running["thread"])


def assert_metrics(d: dict, profile: dict) -> None:
    """stats --openmetrics and top --once on the real NIC thread: its reservation, its
    interrupts, and the NIC's drop counters, as the guest's own tools see them."""
    comm = d["snapshot"]["thread"]["comm"]
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    om = d["openmetrics"]
    assert om["rc"] == 0, om
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for f in text_string_to_metric_families(om["out"]) for s in f.samples}

    def nic(name: str) -> list:
        return [v for (n, lb), v in got.items() if n == name and ("comm", comm) in lb]

    assert nic("irqres_thread_runtime_seconds") == [profile["runtime_ns"] / 1e9], om["out"]
    assert nic("irqres_thread_period_seconds") == [profile["period_ns"] / 1e9], om["out"]
    assert len(nic("irqres_thread_interrupts_total")) == 1, om["out"]
    assert nic("irqres_thread_cpu_seconds_total")[0] > 0, om["out"]
    drops = [lb for (n, lb) in got if n == "irqres_nic_drops_total"]
    assert drops and all(("interface", "eth0") in lb for lb in drops), om["out"]
    top = d["top_once"]
    assert top["rc"] == 0 and comm in top["out"] and "\x1b" not in top["out"], top
    line = next(ln for ln in top["out"].splitlines() if comm in ln)
    assert "deadline" in line, top["out"]


@pytest.mark.arm64
def test_irqresd_reserves_nic_thread_at_boot(boot, demo_profile, nic_thread):
    res = boot("daemon_boot", profile=demo_profile["path"], enable_irqresd=True)
    d = res.data
    snap = d["snapshot"]
    assert snap["irqresd"]["Type"] == "notify", snap["irqresd"]
    assert snap["irqresd"]["ActiveState"] == "active", (snap["irqresd"], d["journal"]["out"])
    # started once by the boot transaction: no failed first attempt, no restarts
    assert snap["irqresd"]["NRestarts"] == "0", d["journal"]["out"]
    assert not re.search(r"Failed to start|FAILURE", d["journal"]["out"]), d["journal"]["out"]
    assert_reserved(snap, demo_profile, nic_thread)
    comm = snap["thread"]["comm"]
    status = d["status_json"]
    assert status["rc"] == 0, status
    reply = json.loads(status["out"])
    threads = [th for tg in reply["targets"] for th in tg["threads"]]
    nic = [th for th in threads if th["comm"] == comm]
    assert len(nic) == 1, threads
    assert nic[0]["policy"] == "deadline"
    assert nic[0]["runtime_ns"] == demo_profile["runtime_ns"]
    assert nic[0]["pid"] == snap["thread"]["pid"]
    assert comm in d["status_text"]["out"], d["status_text"]
    verify = d["verify"]
    assert verify["rc"] == 0 and "1 thread as the profile says" in verify["out"], verify
    # the thread runs where its IRQ is delivered, and its partition is that CPU: an IO-APIC
    # line on amd64, a GIC SPI (a GICv3 interrupt of hardware number 32 or more) on arm64
    irq = d["nic_irq"]
    assert irq["interrupts_line"] and irq["interrupts_line"].split()[-1] == "eth0", irq
    cpus = vmrunner.cpu_list(irq["effective_affinity"])
    assert len(cpus) == 1, irq
    assert vmrunner.cpu_list(snap["thread"]["cpus"]) == cpus, (irq, snap["thread"])
    part = snap["partitions"][staying_beside(snap) or snap["thread"]["cgroup"].strip("/")]
    assert vmrunner.cpu_list(part["cpus"]) == cpus, (irq, part)
    if res.kernel.release.endswith("-arm64"):
        words = irq["interrupts_line"].split()
        chip = words.index("GICv3")
        assert int(words[chip + 1]) >= 32, irq  # an SPI: 0-15 are SGIs, 16-31 PPIs
    assert_metrics(d, demo_profile)
    vmrunner.say(f"irqresd active {d['active_wait_ns'] / 1e9:.1f}s after the scenario began")
    # The packaged unit as booted: the package enabled irqresd.service (not the
    # controller), Debian 12's systemd knows every directive, and irqresd runs with the
    # unit's scheduling (item by item, as bench/daemon measured it).
    assert d["is_enabled"]["out"].split() == ["enabled", "disabled"], d["is_enabled"]
    verify = d["unit_verify"]
    assert verify["rc"] == 0, verify
    assert not re.search(r"[Uu]nknown|[Ii]nvalid|[Ff]ailed|ignoring|outside of section",
                         verify["out"] + verify["err"]), verify
    sched = d["daemon_sched"]
    assert sched["pid"] == int(snap["irqresd"]["MainPID"]), sched
    assert sched["fifo"] and sched["priority"] == 1, sched
    assert sched["reset_on_fork"], sched
    assert sched["rttime_us"] == unit_rttime_us(), sched


@pytest.mark.arm64
@pytest.mark.kernel_independent(
    "a reloaded driver's new thread found from /proc: the same on 6.1 and 6.12")
def test_hotplug_gets_the_reservation_back(boot, demo_profile, nic_thread):
    res = boot("hotplug", profile=demo_profile["path"], enable_irqresd=True,
               params={**want(demo_profile), "bound_s": HOTPLUG_BOUND_S})
    d = res.data
    assert_reserved(d["before"], demo_profile, nic_thread)
    for step in d["steps"]:
        assert step["cmd"]["rc"] == 0, step["cmd"]
        assert step["old"] is not None and step["new"] is not None, step
        assert step["new"]["pid"] != step["old"]["pid"], "the thread was not recreated"
        vmrunner.say(f"hotplug {step['label']}: reservation back {step['reaction_ns'] / 1e6:.1f}"
                     f" ms after the command began ({step['cmd']['took_ns'] / 1e6:.1f} ms of it "
                     f"the command itself; bound {HOTPLUG_BOUND_S}s after it)")
        assert step["restored"], (f"{step['label']}: {nic_thread} not reserved again within "
                                  f"{HOTPLUG_BOUND_S}s: {step['new']}\n{d['journal']['out']}")
        # SCHED_DEADLINE on a thread pinned to fewer CPUs than its root domain defeats the
        # kernel's admission control: the new thread must be in an irqres partition too
        # (or beside one, pinned to its CPUs, where it cannot move in; or still free to
        # run on every CPU).
        new = step["new"]
        beside = staying_beside({"thread": new, "partitions": step.get("partitions") or {}})
        assert new["cgroup"].startswith("/irqres") or beside or \
            new["cpus"] == d["before"]["cpus_all"], (
            f"{step['label']}: {new['comm']} (pid {new['pid']}) is SCHED_DEADLINE pinned to "
            f"CPU {new['cpus']} in cgroup {new['cgroup']}\n{d['journal']['out']}")


# On 7.3 too: there the NIC thread stays in the root cgroup beside its partition
@pytest.mark.arm64
@pytest.mark.kernels_too("7.3")
def test_stop_and_kill_end_consistent(boot, demo_profile, nic_thread):
    """irqresd started on a guest it never touched; each stop gives back the scheduler's
    state exactly as before (vmguest.fingerprint), kill -9 then start ends consistent."""
    res = boot("stop", profile=demo_profile["path"], enable_irqresd=False,
               params=want(demo_profile))
    diffs = res.data["fingerprint_diffs"]
    (res.out.parent / "fingerprints.json").write_text(json.dumps(res.data["fingerprints"]))
    vmrunner.say(f"stop: {res.data['pinned']} pinned before the start; fingerprint "
                 f"differences {diffs}")
    assert res.data["pinned"] and res.data["pinned"]["cpus"] == "0", res.data["pinned"]
    assert diffs["after stop"] == [] and diffs["after final stop"] == [], diffs
    snaps = {s["label"]: s for s in res.data["snapshots"]}
    journal = res.data["journal"]["out"]
    assert_reserved(snaps["running"], demo_profile, nic_thread)
    assert_restored(snaps["after stop"], snaps["running"])
    assert_reserved_anywhere(snaps["after start"], demo_profile)
    # kill -9 leaves the thread as it was or restored, never half-way; after the next
    # start the reservation is exactly the profile's again, in one partition.
    killed = snaps["after kill -9"]["thread"]["sched"]
    assert killed["policy"] in ("deadline", "fifo"), killed
    assert_reserved_anywhere(snaps["after restart"], demo_profile)
    assert_restored(snaps["after final stop"], snaps["after restart"])
    assert "state" not in res.data["state_dir"]["out"], (res.data["state_dir"], journal)


@pytest.mark.kernel_independent(
    "drift found by reading sched_getattr, SIGHUP reload: the same on every kernel")
def test_drift_and_reload(boot, demo_profile):
    """An IRQ thread changed behind irqresd's back gets its reservation back at the next
    rescan (no kernel event exists for it); systemctl reload reports a refusal."""
    res = boot("drift_reload", profile=demo_profile["path"], enable_irqresd=True,
               params={**want(demo_profile), "bound_s": DRIFT_BOUND_S})
    d = res.data
    journal = d["journal"]["out"]
    assert_reserved(d["before"], demo_profile)
    for step in d["steps"]:
        assert step["cmd"]["rc"] == 0, step["cmd"]
        vmrunner.say(f"drift {step['label']}: reservation back after "
                     f"{step['reaction_ns'] / 1e6:.0f} ms")
        assert step["back"], f"{step['label']}: not re-applied: {step['after']}\n{journal}"
        assert step["after"]["pid"] == d["before"]["thread"]["pid"]
        assert "changed behind irqresd's back" in journal and "re-applied" in journal
    assert d["verify"]["rc"] == 0, d["verify"]
    assert d["reload"]["rc"] == 0, (d["reload"], journal)
    assert_reserved(d["after_reload"], demo_profile)
    assert "reload: re-reading /etc/irqres/profile.yaml" in journal
    # a broken profile: systemctl reload fails, irqresd stays up with what was in force
    assert d["reload_bad"]["rc"] != 0, (d["reload_bad"], journal)
    assert "unknown key 'bogus_key'" in journal, journal
    assert d["after_bad"]["irqresd"]["ActiveState"] == "active", d["status"]
    assert_reserved(d["after_bad"], demo_profile)


NAP = "irqres-nap"


def waiting_profile(tmp_path) -> dict:
    """A task target for the scenario's sleeper, alone: no partition exists before it."""
    path = tmp_path / "waiting.yaml"
    path.write_text(f"version: 1\ntargets:\n  - name: nap\n    task:\n      comm: {NAP}\n"
                    "    runtime: 1ms\n    period: 20ms\n")
    return {"path": path, "runtime_ns": 1_000_000, "period_ns": 20_000_000}


def test_thread_waits_visibly_until_it_runs_in_its_partition(boot, tmp_path):
    """The kernel refuses SCHED_DEADLINE (EPERM) to a thread that has not run in its new
    root domain; irqresd neither waits for it in place nor gives up: the thread is moved and
    recorded, listed as waiting by status, verify and the metrics, reserved within a
    backoff step once it has run, and put back by stop. A sleeping task stands in for a
    quiet device's IRQ thread, so that the moment it runs is the test's to choose."""
    prof = waiting_profile(tmp_path)
    res = boot("waiting", profile=prof["path"], enable_irqresd=True,
               params={"comm": NAP, "runtime_ns": prof["runtime_ns"],
                       "period_ns": prof["period_ns"]})
    d = res.data
    journal = d["journal"]["out"]
    pid = d["pid"]
    # the set-up holds: no partition before; the sleeper last ran on another CPU than the
    # one it is pinned to
    assert not [g for g in d["partitions"] if "irqres" in g], d["partitions"]
    assert d["last_cpu_pinned"] == d["away"], d
    # listed as waiting, in the partition of its CPU, not reserved, recorded for restore
    assert d["waiting"], (d.get("listed_ns"), journal)
    w = d["waiting"][0]
    assert w["comm"] == NAP and w["cpus"] == str(d["home"]), w
    assert w["cpuset"].endswith(f"irqres.cpu{d['home']}"), w
    assert (w["runtime_ns"], w["period_ns"]) == (prof["runtime_ns"], prof["period_ns"]), w
    assert "has run in its cpuset partition once" in w["reason"], w
    now = d["while"]
    assert now["sched"]["policy"] == "other", now
    assert now["cgroup"] == f"/irqres.cpu{d['home']}", now
    assert now["last_cpu"] == d["away"], now
    assert re.search(rf"\bpid\W+{pid}\b", now["state"] or ""), now["state"]
    line = next((ln for ln in now["status_text"]["out"].splitlines()
                 if ln.startswith(f"waiting: {NAP} (pid {pid}), target nap")), None)
    assert line and f"irqres.cpu{d['home']}" in line, now["status_text"]
    assert now["verify"]["rc"] != 0, now["verify"]
    assert "has not run there since it was moved" in now["verify"]["out"] + now["verify"][
        "err"], now["verify"]
    assert re.search(rf'irqres_thread_waiting_seconds\{{[^}}]*pid="{pid}"[^}}]*\}} '
                     r"([1-9]|0\.[2-9])", now["openmetrics"]["out"]), now["openmetrics"]
    assert re.search(rf"{NAP} \(pid {pid}\), target 'nap': moved into cpuset partition "
                     r"irqres\.cpu\d+ \d+ ms ago, SCHED_DEADLINE is refused \(EPERM\)",
                     journal), journal
    # once it has run there: reserved within irqresd's longest backoff step (64 ms) plus
    # the guest's slack, listed among the threads, and verify is content
    after = d["after"]
    assert after["sched"]["policy"] == "deadline", (after, journal)
    assert after["last_cpu"] == d["home"], after
    vmrunner.say(f"waiting: listed {d['listed_ns'] / 1e6:.0f} ms after the rename; reserved "
                 f"{d['reserved_ns'] / 1e6:.0f} ms after it ran in its partition")
    assert d["reserved_ns"] < 2_000_000_000, d["reserved_ns"]
    status = json.loads(after["status"]["out"])
    nap = next(t for t in status["targets"] if t["name"] == "nap")
    assert [t["pid"] for t in nap["threads"]] == [pid] and nap["waiting"] == [], nap
    assert after["verify"]["rc"] == 0, after["verify"]
    # stop puts it back as it was
    stopped = d["stopped"]
    assert stopped["sched"]["policy"] == "other", stopped
    assert stopped["cgroup"] == d["cgroup_before"], (d["cgroup_before"], stopped)
    assert not [g for g in stopped["partitions"] if "irqres" in g], stopped
