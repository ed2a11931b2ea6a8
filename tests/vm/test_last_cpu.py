"""A thread that needs no partition but last ran outside its root domain.

The kernel checks a SCHED_DEADLINE request against the root domain of the CPU a thread
last ran on. A task (or a NAPI kthread) that slept on CPU 0 before irqresd's partition
took CPU 0 (the NIC thread's, demo.yaml) is left CPU 1 only, which is then the default
root domain: the plan rightly gives it no partition, and the kernel refuses it EPERM
until it has run on CPU 1. irqresd waits for that in place, up to a second: the task
woken while irqresd applies is reserved; the one left asleep is refused with the reason
(the CPU it last ran on, its domain, what makes it run) and nothing of that apply stays.
"""

import pytest
import yaml

pytestmark = [pytest.mark.vm, pytest.mark.slow]


def test_a_thread_that_last_ran_outside_its_domain_is_waited_for(boot, demo_profile):
    nic = yaml.safe_load(demo_profile["path"].read_text())["targets"][0]
    res = boot("last_cpu", profile=demo_profile["path"], enable_irqresd=False,
               params={"nic_target": nic})
    d = res.data
    journal = d["journal"]["out"]
    # the set-up holds: both sleepers last ran on CPU 0, which the NIC's partition took
    for name in ("lastcpu-woken", "lastcpu-asleep"):
        assert d[name]["cpus"] == "1" and d[name]["last_cpu"] == 0, (name, d[name])
    assert d["woken_at_plan"], journal
    woken = d["woken_apply"]
    assert woken["rc"] == 0, woken["out"]
    assert woken["sched"]["policy"] == "deadline", woken
    assert (woken["sched"]["runtime_ns"], woken["sched"]["period_ns"]) == \
        (1_000_000, 20_000_000), woken
    assert woken["last_cpu"] == 1, woken
    assert f"lastcpu-woken (pid {d['lastcpu-woken']['pid']}): accepted after" in journal \
        and "once it had run in its root domain" in journal, journal
    asleep = d["asleep_apply"]
    text = asleep["out"] + asleep["err"]
    assert asleep["rc"] != 0, text
    assert (f"lastcpu-asleep (pid {d['lastcpu-asleep']['pid']}): SCHED_DEADLINE refused: "
            "EPERM: it last ran on CPU 0, outside its root domain (CPUs 1)") in text, text
    assert "a NAPI kthread at its next poll" in text, text
    # all or nothing: the refused apply left the sleeper, and the NIC thread, as they were
    assert asleep["sched"]["policy"] == "other", asleep
    assert asleep["nic"]["sched"]["policy"] == "deadline", asleep["nic"]
