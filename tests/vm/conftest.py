"""Fixtures of the PREEMPT_RT VM suite: the cached image and the staged checkout are made
once per session; every scenario boots its own guest from the pristine image."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vmrunner

_TIMES: list[tuple[str, float]] = []


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the VM suite needs root (debootstrap, chroot, mke2fs of the image)"
    dirs = [*os.environ.get("PATH", "").split(":"), "/usr/sbin", "/sbin"]
    for tool in ("qemu-system-x86_64", "debootstrap", "mke2fs", "debugfs"):
        if not any((Path(d) / tool).exists() for d in dirs):
            return f"{tool} is not installed (scripts/install-deps.sh installs it)"
    return None


@pytest.fixture(scope="session")
def image() -> vmrunner.Image:
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    t0 = time.monotonic()
    img = vmrunner.ensure_image()
    _TIMES.append(("image (build or cache)", time.monotonic() - t0))
    return img


@pytest.fixture(scope="session")
def stage(tmp_path_factory: pytest.TempPathFactory) -> vmrunner.Stage:
    t0 = time.monotonic()
    st = vmrunner.stage_checkout(tmp_path_factory.mktemp("stage") / "root")
    _TIMES.append(("make deb-package", time.monotonic() - t0))
    for m in st.missing:
        vmrunner.say(f"staging: missing {m}")
    return st


def _kernel_labels() -> list[str]:
    """The kernels every scenario runs on: vmrunner.DEFAULT_KERNELS, or $IRQRES_VM_KERNELS
    (comma-separated labels of the image's kernels, e.g. "6.12" while working on one of
    them, "all" for every one)."""
    want = os.environ.get("IRQRES_VM_KERNELS")
    if not want:
        return list(vmrunner.DEFAULT_KERNELS)
    if want.strip() == "all":
        return list(vmrunner.KERNELS)
    labels = [k.strip() for k in want.split(",") if k.strip()]
    unknown = [k for k in labels if k not in vmrunner.KERNELS]
    if unknown:
        raise pytest.UsageError(f"IRQRES_VM_KERNELS: unknown kernel {', '.join(unknown)} "
                                f"(the image has {', '.join(vmrunner.KERNELS)})")
    return labels


@pytest.fixture(params=_kernel_labels())
def kernel(request) -> str:
    """The label of the kernel a scenario boots: every scenario runs on each of them,
    and its test id names it (test_x[6.12])."""
    return request.param


def _fresh_workdir(request) -> Path:
    """$IRQRES_VM_WORKDIR (default /var/tmp/irqres-vm)/<test name>/, emptied: a test's
    console log, payload and results stay there until the test runs again."""
    workdir = Path(os.environ.get("IRQRES_VM_WORKDIR", "/var/tmp/irqres-vm"))
    workdir = workdir / request.node.name
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    return workdir


def _run(vm: vmrunner.VM, scenario: str) -> vmrunner.Result:
    """Boot ``vm``, note its wall time for the summary, fail on an error in the guest."""
    res = vm.run()
    _TIMES.append((vmrunner.timing_label(res), res.wall_s))
    if "error" in res.data:
        pytest.fail(f"{scenario}: the guest scenario raised {res.data['error']}\n"
                    f"{res.data.get('traceback', '')}\nconsole tail:\n"
                    f"{vmrunner.tail(res.console, 40)}")
    return res


@pytest.fixture
def boot(image, stage, kernel, request):
    """Run one scenario in a fresh guest: boot(scenario, **VM options) -> Result.

    The guest boots ``kernel`` (parametrised: every test using this fixture runs on each
    of the image's kernels); its files stay in :func:`_fresh_workdir`.
    """

    def run(scenario: str, **kw) -> vmrunner.Result:
        vm = vmrunner.VM(image, stage, scenario, name=request.node.name,
                         workdir=_fresh_workdir(request), kernel=kernel, **kw)
        return _run(vm, scenario)

    return run


def pytest_terminal_summary(terminalreporter):
    if _TIMES:
        terminalreporter.section("irqres VM suite: wall time")
        for name, secs in _TIMES:
            terminalreporter.write_line(f"{secs:8.1f} s  {name}")
        terminalreporter.write_line(f"{sum(s for _, s in _TIMES):8.1f} s  total")


@pytest.fixture
def icount_boot(image, stage, tmp_path, request):
    """Run one scenario on the seeds' testbed, on the image's first kernel:
    icount_boot(scenario, files=..., **VM options) -> Result.

    The testbed is QEMU 10 in /opt/irqres-qemu (Debian 12's QEMU 7.2 hangs an SMP guest
    under -icount) with two e1000s on a hub, irqresd running on profiles/demo.yaml and the
    seeds' load generator in the payload; its files stay in :func:`_fresh_workdir`."""
    sys.path.insert(0, str(vmrunner.REPO / "bench" / "seeds"))
    import testbed

    q = testbed.BPO_QEMU / "bin" / "qemu-system-x86_64"
    if not q.exists():
        pytest.skip(f"{q} missing (scripts/install-qemu-bpo.sh): Debian 12's QEMU 7.2 hangs "
                    "an SMP guest under -icount")
    qemu, version, env = testbed.qemu_command(type("A", (), {"qemu": str(q), "nice": 0})())
    seedload = testbed.build_seedload(tmp_path)

    def run(scenario: str, files: dict | None = None, **kw) -> vmrunner.Result:
        vm = vmrunner.VM(image, stage, scenario, name=request.node.name,
                         workdir=_fresh_workdir(request),
                         profile=vmrunner.REPO / "profiles" / "demo.yaml",
                         enable_irqresd=True, nic="hub", cpus=2, icount="shift=3,sleep=off",
                         qemu=qemu, qemu_env=env,
                         e1000_mitigation_opt="version 7." in version,
                         files={"seedload": seedload, **(files or {})}, **kw)
        return _run(vm, scenario)

    return run


@pytest.fixture(scope="session")
def demo_profile() -> dict:
    """profiles/demo.yaml and its NIC target's reservation in integer ns."""
    import yaml
    from irqres.units import parse_duration

    path = vmrunner.REPO / "profiles" / "demo.yaml"
    doc = yaml.safe_load(path.read_text())
    nic = doc["targets"][0]
    period = parse_duration(nic["period"])
    return {"path": path, "target": nic["name"],
            "runtime_ns": parse_duration(nic["runtime"]), "period_ns": period,
            "deadline_ns": parse_duration(nic.get("deadline", period))}
