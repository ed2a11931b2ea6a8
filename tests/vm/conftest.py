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


def _why_not(arch: str = "amd64") -> str | None:
    if os.geteuid() != 0:
        return "the VM suite needs root (debootstrap, chroot, mke2fs of the image)"
    dirs = [*os.environ.get("PATH", "").split(":"), "/usr/sbin", "/sbin"]
    qemu = {"amd64": "qemu-system-x86_64", "arm64": "qemu-system-aarch64"}[arch]
    deps = "scripts/install-deps.sh" + ("" if arch == "amd64" else f" vm-{arch}")
    for tool in (qemu, "debootstrap", "mke2fs", "debugfs"):
        if not any((Path(d) / tool).exists() for d in dirs):
            return f"{tool} is not installed ({deps} installs it)"
    if arch == "arm64":
        handler = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64")
        if not handler.is_file() or handler.read_text().split()[0] != "enabled":
            return f"arm64 binaries cannot run here: no qemu-aarch64 binfmt handler ({deps})"
    return None


def _arches() -> list[str]:
    """The guests' architectures: amd64, or those $IRQRES_VM_ARCH names (comma-separated:
    "arm64", "amd64,arm64"). Only scenarios marked ``arm64`` run on the arm64 guest."""
    want = [a.strip() for a in os.environ.get("IRQRES_VM_ARCH", "amd64").split(",")
            if a.strip()]
    unknown = [a for a in want if a not in vmrunner.ARCHES]
    if unknown:
        raise pytest.UsageError(f"IRQRES_VM_ARCH: unknown architecture {', '.join(unknown)} "
                                f"(known: {', '.join(vmrunner.ARCHES)})")
    return want


_IMAGES: dict[str, vmrunner.Image] = {}
_STAGES: dict[str, vmrunner.Stage] = {}


def _image(name: str) -> vmrunner.Image:
    """The guest image ``name`` (vmrunner.IMAGES), built or taken from the cache once per
    session."""
    if name not in _IMAGES:
        reason = _why_not(vmrunner.IMAGES[name].arch)
        if reason:
            pytest.skip(reason)
        t0 = time.monotonic()
        _IMAGES[name] = vmrunner.ensure_image(name)
        _TIMES.append((f"{name} image (build or cache)", time.monotonic() - t0))
    return _IMAGES[name]


def _stage(name: str, tmp_path_factory: pytest.TempPathFactory) -> vmrunner.Stage:
    """The checkout's package for the image ``name``, built once per session."""
    if name not in _STAGES:
        img = _image(name)
        t0 = time.monotonic()
        st = vmrunner.stage_checkout(tmp_path_factory.mktemp(f"stage-{name}") / "root", img)
        how = (f"built in the {name} userland" if img.builder.is_dir()
               else "make deb-package")
        _TIMES.append((f"{name} package ({how})", time.monotonic() - t0))
        for m in st.missing:
            vmrunner.say(f"staging: missing {m}")
        _STAGES[name] = st
    if _STAGES[name].missing:
        # a guest without the checkout's package can only fail later and more obscurely
        pytest.fail(f"staging the checkout for the {name} image: missing "
                    f"{'; '.join(_STAGES[name].missing)}", pytrace=False)
    return _STAGES[name]


@pytest.fixture(scope="session")
def image() -> vmrunner.Image:
    """Debian 12's amd64 image (scenarios that take the image themselves boot its first
    kernel, 6.1)."""
    if "amd64" not in _arches():
        pytest.skip("an amd64-only scenario, and IRQRES_VM_ARCH leaves amd64 out")
    return _image("bookworm")


@pytest.fixture(scope="session")
def stage(image, tmp_path_factory: pytest.TempPathFactory) -> vmrunner.Stage:
    return _stage("bookworm", tmp_path_factory)


def _kernel_labels(arch: str = "amd64") -> list[str]:
    """The kernels every scenario runs on: vmrunner.DEFAULT_KERNELS (on arm64
    DEFAULT_ARM64_KERNELS), or $IRQRES_VM_KERNELS (comma-separated labels of the image's
    kernels, e.g. "6.12" while working on one of them, "all" for every one; on arm64 those
    of them the arm64 image has)."""
    known, default = ((vmrunner.KERNELS, vmrunner.DEFAULT_KERNELS) if arch == "amd64" else
                      (vmrunner.ARM64_KERNELS, vmrunner.DEFAULT_ARM64_KERNELS))
    want = os.environ.get("IRQRES_VM_KERNELS")
    if not want:
        return list(default)
    if want.strip() == "all":
        return list(known)
    labels = [k.strip() for k in want.split(",") if k.strip()]
    unknown = [k for k in labels if k not in (*vmrunner.KERNELS, *vmrunner.ARM64_KERNELS)]
    if unknown:
        raise pytest.UsageError(f"IRQRES_VM_KERNELS: unknown kernel {', '.join(unknown)} "
                                f"(the image has {', '.join(vmrunner.KERNELS)})")
    return [k for k in labels if k in known]


def pytest_generate_tests(metafunc):
    """Every scenario that boots through ``kernel`` runs on each kernel of each
    architecture of $IRQRES_VM_ARCH (the arm64 ones only if it is marked ``arm64``; the
    amd64 kernels a ``kernels_too`` mark names as well, unless $IRQRES_VM_KERNELS says); its
    test id names them: test_x[6.12] on amd64, test_x[arm64-6.1] on arm64. A scenario
    marked ``kernel_independent`` runs on the newest default kernel alone (and on its
    ``kernels_too``), unless $IRQRES_VM_KERNELS names kernels (docs/vm.md, "Which
    scenarios run on which kernel")."""
    if "kernel" not in metafunc.fixturenames:
        return
    params = []
    chosen = os.environ.get("IRQRES_VM_KERNELS")
    for arch in _arches():
        if arch != "amd64" and metafunc.definition.get_closest_marker(arch) is None:
            continue
        prefix = "" if arch == "amd64" else f"{arch}-"
        labels = _kernel_labels(arch)
        if metafunc.definition.get_closest_marker("kernel_independent") and not chosen:
            labels = labels[-1:]
        too = metafunc.definition.get_closest_marker("kernels_too")
        if arch == "amd64" and too is not None and not chosen:
            labels += [k for k in too.args if k in vmrunner.KERNELS and k not in labels]
        params += [prefix + k for k in labels]
    if not params:
        why = f"not an arm64 scenario, and IRQRES_VM_ARCH={','.join(_arches())}"
        params = [pytest.param("", marks=pytest.mark.skip(reason=why), id="not-arm64")]
    metafunc.parametrize("kernel", params, indirect=True)


@pytest.fixture
def kernel(request) -> str:
    """What a scenario boots: a kernel label, "arm64-" in front for the arm64 guest."""
    return request.param


def arch_of(kernel: str) -> tuple[str, str]:
    """("arm64", "6.1") for "arm64-6.1", ("amd64", "6.12") for "6.12"."""
    arch, _, label = kernel.rpartition("-")
    return arch or "amd64", label


def image_of(kernel: str) -> str:
    """The name of the image that holds ``kernel`` ("trixie" for "6.12")."""
    return vmrunner.image_name(*arch_of(kernel))


@pytest.fixture
def guest_image(kernel) -> vmrunner.Image:
    """The image that holds the kernel ``kernel`` names."""
    return _image(image_of(kernel))


@pytest.fixture
def nic_thread(kernel) -> str:
    """The e1000's IRQ thread in the guest ``kernel`` boots, as a regular expression: on
    amd64 IRQ 11 (slot 3, acpi_irq_nobalance); on arm64 whatever Linux numbered the GIC
    SPI its INTx is wired to."""
    return r"irq/11-eth0" if arch_of(kernel)[0] == "amd64" else r"irq/\d+-eth0"


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
def boot(guest_image, kernel, request, tmp_path_factory):
    """Run one scenario in a fresh guest: boot(scenario, **VM options) -> Result.

    The guest boots ``kernel`` (parametrised: every test using this fixture runs on each
    of the image's kernels, and on arm64 too if marked so); its files stay in
    :func:`_fresh_workdir`.
    """
    label = arch_of(kernel)[1]
    stage = _stage(guest_image.name, tmp_path_factory)

    def run(scenario: str, **kw) -> vmrunner.Result:
        vm = vmrunner.VM(guest_image, stage, scenario, name=request.node.name,
                         workdir=_fresh_workdir(request), kernel=label, **kw)
        return _run(vm, scenario)

    return run


def pytest_terminal_summary(terminalreporter):
    if _TIMES:
        terminalreporter.section("irqres VM suite: wall time")
        for name, secs in _TIMES:
            terminalreporter.write_line(f"{secs:8.1f} s  {name}")
        terminalreporter.write_line(f"{sum(s for _, s in _TIMES):8.1f} s  total")


@pytest.fixture
def icount_boot(image, tmp_path, tmp_path_factory, request):
    """Run one scenario on the seeds' testbed, on 6.1 unless ``kernel=`` names another
    (booted from the image that holds it, with that image's package):
    icount_boot(scenario, files=..., **VM options) -> Result (``icount=None``: the same
    QEMU and devices under plain TCG).

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
        name = image_of(kw.get("kernel") or "6.1")
        vm = vmrunner.VM(_image(name), _stage(name, tmp_path_factory), scenario,
                         name=request.node.name,
                         workdir=_fresh_workdir(request),
                         profile=kw.pop("profile", vmrunner.REPO / "profiles" / "demo.yaml"),
                         enable_irqresd=True, nic="hub", cpus=2,
                         icount=kw.pop("icount", "shift=3,sleep=off"),
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
