"""Which kernels each VM scenario runs on (conftest.pytest_generate_tests): the default
kernels, a ``kernels_too`` mark's beside them, the newest default one alone for a
``kernel_independent`` scenario, and whatever $IRQRES_VM_KERNELS names over all of it.
Collected on the host, nothing booted."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import vmrunner

HERE = vmrunner.REPO / "tests" / "vm"


def _collected(files: list[str], kernels: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("IRQRES_VM_KERNELS", "IRQRES_VM_ARCH")}
    if kernels is not None:
        env["IRQRES_VM_KERNELS"] = kernels
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--collect-only", *[str(HERE / f) for f in files]],
                         capture_output=True, text=True, env=env, cwd=vmrunner.REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    return sorted(line.split("::", 1)[1] for line in out.stdout.splitlines() if "::" in line)


def test_a_kernel_independent_scenario_runs_on_the_newest_default_kernel():
    newest = vmrunner.DEFAULT_KERNELS[-1]
    assert _collected(["test_coupling.py", "test_analysis.py"], None) == [
        f"test_each_nic_thread_follows_its_own_receiver[{newest}]",
        f"test_nic_thread_follows_the_udp_receiver[{newest}]",
        f"test_trace_analyze_recommend_apply[{newest}]",
    ]


def test_kernels_too_stay_beside_the_newest():
    # adapt is kernel independent between 6.1 and 6.12 but touches what 7.x changed
    assert _collected(["test_adapt.py"], None) == [
        f"test_tune_follows_the_load[{k}]" for k in (vmrunner.DEFAULT_KERNELS[-1], "7.3")]


def test_a_kernel_dependent_scenario_runs_on_every_default_kernel():
    got = _collected(["test_four_cpus.py"], None)
    assert got == sorted(f"test_partitions_per_cpu_match_the_kernel[{k}]"
                         for k in vmrunner.DEFAULT_KERNELS)


@pytest.mark.parametrize("kernels", ["6.1", "6.1,6.12"])
def test_the_kernels_named_override_the_rule(kernels):
    got = _collected(["test_coupling.py"], kernels)
    assert got == sorted(f"test_{t}[{k}]" for k in kernels.split(",")
                         for t in ("each_nic_thread_follows_its_own_receiver",
                                   "nic_thread_follows_the_udp_receiver"))
