"""Which kernels each VM scenario runs on (conftest.pytest_generate_tests): the default
kernels, a ``kernels_too`` mark's beside them, the newest default one alone for a
``kernel_independent`` scenario, and whatever $IRQRES_VM_KERNELS names over all of it.
Collected on the host, nothing booted."""

from __future__ import annotations

import sys

import groups
import pytest
import vmrunner


@pytest.fixture
def collected(monkeypatch):
    """The test names (no file) pytest collects from tests/vm files, with
    $IRQRES_VM_KERNELS as given (None: unset) and the default architecture."""
    def collect(files: list[str], kernels: str | None) -> list[str]:
        monkeypatch.delenv("IRQRES_VM_ARCH", raising=False)
        if kernels is None:
            monkeypatch.delenv("IRQRES_VM_KERNELS", raising=False)
        else:
            monkeypatch.setenv("IRQRES_VM_KERNELS", kernels)
        ids = groups.collect(sys.executable, [f"tests/vm/{f}" for f in files])
        return sorted(i.split("::", 1)[1] for i in ids)
    return collect


def test_a_kernel_independent_scenario_runs_on_the_newest_default_kernel(collected):
    newest = vmrunner.DEFAULT_KERNELS[-1]
    assert collected(["test_coupling.py", "test_analysis.py"], None) == [
        f"test_each_nic_thread_follows_its_own_receiver[{newest}]",
        f"test_nic_thread_follows_the_udp_receiver[{newest}]",
        f"test_trace_analyze_recommend_apply[{newest}]",
    ]


def test_kernels_too_stay_beside_the_newest(collected):
    # adapt is kernel independent between 6.1 and 6.12 but touches what 7.x changed
    assert collected(["test_adapt.py"], None) == [
        f"test_tune_follows_the_load[{k}]" for k in (vmrunner.DEFAULT_KERNELS[-1], "7.3")]


def test_a_kernel_dependent_scenario_runs_on_every_default_kernel(collected):
    got = collected(["test_four_cpus.py"], None)
    assert got == sorted(f"test_partitions_per_cpu_match_the_kernel[{k}]"
                         for k in vmrunner.DEFAULT_KERNELS)


@pytest.mark.parametrize("kernels", ["6.1", "6.1,6.12"])
def test_the_kernels_named_override_the_rule(collected, kernels):
    got = collected(["test_coupling.py"], kernels)
    assert got == sorted(f"test_{t}[{k}]" for k in kernels.split(",")
                         for t in ("each_nic_thread_follows_its_own_receiver",
                                   "nic_thread_follows_the_udp_receiver"))


def test_a_bad_promise_job_choice_is_named(monkeypatch):
    """IRQRES_VM_PROMISE_JOBS takes 'all' or nothing; anything else stops the collection
    with the variable and its value named."""
    monkeypatch.setenv("IRQRES_VM_PROMISE_JOBS", "some")
    with pytest.raises(SystemExit, match="IRQRES_VM_PROMISE_JOBS='some': 'all' or nothing"):
        groups.collect(sys.executable, ["tests/vm/test_promise.py"])
