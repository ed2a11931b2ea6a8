"""The target kind of irqresd's status reply: every kind the daemon names is one this
package handles, and a kind it does not know is refused by name rather than taken for a
task (the daemon's side: tests/c/test_target_kind.c)."""

from __future__ import annotations

import copy

import pytest
from fakes import STATS, STATUS
from irqres import metrics
from irqres.control.inputs import InputError, counters_from_stats
from irqres.errors import DaemonError
from irqres.targetkind import TargetKind, napi_interface


def test_the_daemons_kind_names():
    assert [k.value for k in TargetKind] == ["irq", "task", "napi", "softirq"]
    assert TargetKind.of({"name": "sirq", "kind": "softirq"}) is TargetKind.SOFTIRQ
    assert TargetKind.of({"name": "nic", "kind": "task"}) is TargetKind.TASK
    assert TargetKind.of({"name": "poll", "kind": "napi"}) is TargetKind.NAPI
    assert TargetKind.of({"name": "nic"}) is TargetKind.IRQ    # before "kind" existed


def test_an_unknown_kind_names_the_target_and_the_kind():
    with pytest.raises(DaemonError,
                       match=r"target 'nic' has kind 'backlog'.*known: irq, task, napi, softirq"):
        TargetKind.of({"name": "nic", "kind": "backlog"})


def test_metrics_refuse_an_unknown_kind_instead_of_taking_it_for_a_task(tmp_path):
    status = copy.deepcopy(STATUS)
    for t in status["targets"]:
        t["kind"] = "backlog"
    with pytest.raises(DaemonError, match="has kind 'backlog'"):
        metrics.snapshot(status, STATS, str(tmp_path))


def test_counters_refuse_an_unknown_kind():
    th = {"pid": 105, "irq_count": 1, "voluntary_switches": 1, "involuntary_switches": 0,
          "cpu_time_ns": 10}
    assert counters_from_stats(th, "irq").jobs == 1
    assert counters_from_stats(th, TargetKind.TASK).jobs == 1
    th["voluntary_switches"] = 7    # a NAPI kthread: a wake-up per poll, no IRQ of its own
    assert counters_from_stats(th, "napi").jobs == 7
    assert counters_from_stats(th, "softirq").jobs == 7     # one per round of soft IRQs
    with pytest.raises(InputError, match="backlog"):
        counters_from_stats(th, "backlog")


@pytest.mark.parametrize("comm, ifname", [
    ("napi/eth0-8193", "eth0"), ("napi/enp0s3-8193", "enp0s3"), ("napi/a-b-12", "a-b"),
    ("napi/enp0s31f6-", None),      # cut at 15 characters before the id
    ("napi/eth0", None), ("irq/11-eth0", None), ("ksoftirqd/0", None),
])
def test_napi_interface_of_a_kthread_name(comm, ifname):
    assert napi_interface(comm) == ifname


def _report_of(comm: str, is_irq: bool = False):
    from types import SimpleNamespace

    from irqres.report.types import ThreadReport

    th = SimpleNamespace(comm=comm, is_irq=is_irq, pid=12)
    return ThreadReport(act=SimpleNamespace(thread=th), stats=None, served=[], uncredited={},
                        exec_pmf=None, interarrival_pmf=None, min_interarrival_ns=None,
                        p_source="", recommendation=None, problem=None)


@pytest.mark.parametrize("comm, name, selector", [
    ("ksoftirqd/1", "ksoftirqd-1", {"softirq": {"kthreads": ["ksoftirqd"], "cpu": [1]}}),
    ("ktimers/0", "ktimers-0", {"softirq": {"kthreads": ["ktimers"], "cpu": [0]}}),
    ("backlog_napi/3", "backlog_napi-3",
     {"softirq": {"kthreads": ["backlog_napi"], "cpu": [3]}}),
])
def test_a_recommended_profile_takes_a_soft_irq_kthread_by_name_and_cpu(comm, name, selector):
    """A task selector never takes a kernel thread: the recommendation for ksoftirqd/1
    must be a softirq target, or irqresd would match nothing."""
    r = _report_of(comm)
    assert r.kind is TargetKind.SOFTIRQ
    assert r.target_name == name
    assert r.selector == selector


def test_a_user_thread_named_like_one_stays_a_task():
    assert _report_of("ksoftirqd/01").kind is TargetKind.TASK
    assert _report_of("mpv").selector == {"task": {"comm": "mpv"}}
