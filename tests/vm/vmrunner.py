"""Boot the PREEMPT_RT guest under QEMU, run one scenario in it and bring the results back.

The pieces, in the order a run uses them:

* :func:`ensure_image` builds or reuses a cached guest image (build-image.sh).
* :func:`stage_checkout` builds the checkout's Debian package (``make deb-package``) once.
* :func:`installed_layer` installs that package with dpkg, in one boot of the image, into
  a qcow2 layer over the image's disk, once per package: the scenarios' guests start
  with irqres installed instead of each running dpkg under emulation.
* :class:`VM` writes a small ext4 *payload* disk (the guest scenario library, the
  profile, the scenario name), boots QEMU with that layer as the root disk in snapshot
  mode (neither the cached image nor the layer is ever modified), serves the guest's
  requests on a second serial port (``ttyS1``: load generation, progress marks), and
  after power-off copies ``/out`` back from the payload disk with ``debugfs``.

The guest always powers off (the scenario unit's ExecStopPost); a guest that does not is
killed after ``timeout_s`` and :class:`VMError` carries the console log tail.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bootsnap import HOLD_ARG, RESTORED, BootSnapshot, SnapshotError, key_of
from qemu_state import qemu_state

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
GUEST_DIR = HERE / "guest"
NS_PER_S = 1_000_000_000


class VMError(RuntimeError):
    """A guest run failed: the message names the scenario, the cause and the console tail;
    ``console`` holds the whole console log when the guest got as far as booting;
    ``killed``: the harness killed the guest (its timeout, or its kernel found dead)."""

    def __init__(self, message: str, console: str = "", killed: bool = False):
        super().__init__(message)
        self.console = console
        self.killed = killed


_INT3_OOPS = re.compile(r"Oops: int3\b.*?RIP: 0010:(\S+).*?Code: ([0-9a-f <>]+)", re.S)
# An RCU stall report of the guest kernel: "rcu: INFO: rcu_preempt self-detected stall on
# CPU" (the CPU itself saw that it holds up the grace period) or "... detected stalls on
# CPUs/tasks" (another CPU saw it).
_RCU_STALL = re.compile(r"rcu: INFO: rcu_\w+ (?:self-detected stall on CPU|detected stalls? on)")
# A line the scenario wrote (its marks and commands reach the console through the
# journal as "python3[PID]: ..."): the guest is still getting on with its work.
_SCENARIO_LINE = re.compile(r"\bpython3\[\d+\]: ")
# Reports a guest may print, with nothing from the scenario in between, before the run
# is called stuck. The kernel repeats a report while a stall lasts (every ~63 s of guest
# time after the first at 21 s); a guest whose scenario still writes between reports is
# slow, not stuck (an experiment's FIFO 90 sender starves RCU's threads for seconds at a
# time, and the guest gets on), and one or two reports can be the host's doing.
STALL_REPORTS = 3


def kernel_stall(console: str) -> str | None:
    """The guest kernel's RCU stall, if it reported one STALL_REPORTS times with no line of
    the scenario's in between: the console from the first of those reports on (at most 80
    lines), else None."""
    lines = console.splitlines()
    first, reports = None, 0
    for i, line in enumerate(lines):
        if _RCU_STALL.search(line):
            first = i if reports == 0 else first
            reports += 1
            if reports >= STALL_REPORTS:
                return "\n".join(lines[first:first + 80])
        elif _SCENARIO_LINE.search(line):
            first, reports = None, 0
    return None


# A guest kernel's oops: "BUG: kernel NULL pointer dereference, ...", "Oops: ...".
_OOPS = re.compile(r"\] (?:BUG: |Oops: )")
_OOPS_RIP = re.compile(r"RIP: 0010:(\S+)")
# Wall seconds a console may stay silent after an oops before the guest is called dead:
# an oops that killed only a task lets the guest go on writing; one that took the
# scheduler down leaves nothing more to print.
OOPS_QUIET_S = 60.0
# What a console shows once the kernel has started user space: the initramfs's first line
# (initramfs-tools), systemd's greeting, the scenario's marks.
_USER_SPACE = ("Loading, please wait", "Welcome to ", "irqres-vm:")
# Wall seconds a console may stay silent before user space started: the kernel alone
# boots in 2 s of guest time, and its console was never silent for more than about 30 s
# of wall time on a loaded host; one CI guest stopped at 1.1 s of guest time (ACPI, PCI)
# with a vCPU spinning in the kernel and was killed only at its 900 s timeout.
BOOT_QUIET_S = 180.0
# What the console shows once the scenario runs (run.py's first mark).
_SCENARIO_STARTS = "irqres-vm: scenario "
# Wall seconds a console may stay silent after user space started and before the scenario
# said its first line: systemd reaches the scenario unit in 20-60 s of wall time, twice
# that on a loaded host; one CI guest (6.1, two guests at once) printed nothing more after
# systemd started the unit, not even the scenario's first line, until its 600 s timeout.
SCENARIO_QUIET_S = 300.0


def user_space_started(console: str) -> bool:
    """Whether the guest's console shows that its kernel started user space."""
    return any(m in console for m in _USER_SPACE)


def scenario_started(console: str) -> bool:
    """Whether the guest's console shows that its scenario started."""
    return _SCENARIO_STARTS in console


def kernel_oops(console: str) -> str | None:
    """The guest kernel's first oops, if it printed one: the console from its first line
    on (at most 80 lines), else None."""
    lines = console.splitlines()
    at = next((i for i, line in enumerate(lines) if _OOPS.search(line)), None)
    return None if at is None else "\n".join(lines[at:at + 80])


def oops_site(oops: str) -> str:
    """Where an oops (``kernel_oops``) happened: the function RIP named, or its first line."""
    m = _OOPS_RIP.search(oops)
    return m.group(1) if m else oops.splitlines()[0].strip()


def patching_oops(console: str) -> str | None:
    """The kernel function a guest died in if it died of its own live code patching under
    TCG, else None.

    The kernel flips a static key (cpusets_enabled_key, for one, when the cpuset
    controller is first enabled, as irqresd does) with text_poke_bp(): an int3 on the
    first byte of the instruction, the other bytes, the first byte, each step followed by
    an IPI that serialises every CPU; a CPU that hits the int3 meanwhile is steered over
    the site by the breakpoint handler. Seen in 2 of about 50 boots of the 6.12 kernel under
    QEMU's multi-threaded TCG (never on 6.1 so far), at ___slab_alloc and at
    __alloc_pages_noprof, both behind cpusets_enabled(), while irqresd turned the cpuset
    controller on: a CPU trapped on that int3 and the handler no longer knew the site,
    and the kernel died with "Oops: int3" while the code dump shows the finished
    instruction, no int3 where it trapped. Whether the emulator or 6.12's code patching is
    at fault, it is not irqres's: enabling the cpuset controller is what every cpuset user
    does. Only that signature counts: an int3 still in memory before RIP is a real trap.
    """
    m = _INT3_OOPS.search(console)
    if m is None:
        return None
    code = m.group(2).split()
    at = next((i for i, b in enumerate(code) if b.startswith("<")), None)
    if at is None or at == 0 or code[at - 1] == "cc":
        return None
    return m.group(1)


def timing_label(res: Result) -> str:
    """A guest's line in the suite's wall-time summary: its name, and why it was booted
    again if it was."""
    return res.name + (f"  (booted again: {res.retried})" if res.retried else "")


def say(msg: str) -> None:
    """Progress for the person watching (pytest -s, make demo)."""
    print(f"[vm {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# The guest images by name: the architecture each is for, the script (and its argument)
# under tests/vm that builds it, and its PREEMPT_RT kernels by the label tests use:
# Debian 12's own (6.1) and bookworm-backports' 6.12 in bookworm's userland;
# trixie-backports' 7.3 in trixie's, the userland it ships with. The trixie image also
# holds the newest 6.12 Debian ships (trixie-security's, 6.12.118), not yet a label of
# its own: its guests take about 25 s more to boot than bookworm's (docs/vm.md, "Debian
# 13's userland"), which the whole suite on it cannot yet afford in CI's 90 minutes. The
# arm64 image holds Debian 12's and bookworm-backports' arm64 kernels.
# ``numpy``: the numpy series the userland ships (bookworm's 1.24 is the oldest the
# project supports).
@dataclass(frozen=True)
class ImageSpec:
    arch: str
    build: tuple[str, ...]
    kernels: tuple[str, ...]
    numpy: str


IMAGES = {
    "bookworm": ImageSpec("amd64", ("build-image.sh", "bookworm"), ("6.1", "6.12"), "1.24"),
    "trixie": ImageSpec("amd64", ("build-image.sh", "trixie"), ("7.3",), "2.2"),
    "arm64": ImageSpec("arm64", ("build-image-arm64.sh",), ("6.1", "6.12"), "1.24"),
}
# The amd64 kernels, oldest first, and the arm64 image's.
KERNELS = tuple(k for spec in IMAGES.values() if spec.arch == "amd64" for k in spec.kernels)
ARM64_KERNELS = IMAGES["arm64"].kernels
# The kernels every scenario runs on unless $IRQRES_VM_KERNELS names others, newest last: a
# scenario marked kernel_independent runs on the last alone. 7.3 runs only the scenarios
# marked kernels_too("7.3"), those that touch what changed there (docs/vm.md, "What 7.3
# changes", and "Which scenarios run on which kernel").
DEFAULT_KERNELS = ("6.1", "6.12")
# The arm64 kernels its scenarios run on unless $IRQRES_VM_KERNELS says.
DEFAULT_ARM64_KERNELS = ("6.1",)
# The guest architectures.
ARCHES = tuple(dict.fromkeys(spec.arch for spec in IMAGES.values()))


def image_name(arch: str, label: str) -> str:
    """The image that holds kernel ``label`` of ``arch`` ("trixie" for amd64's "6.12")."""
    for name, spec in IMAGES.items():
        if spec.arch == arch and label in spec.kernels:
            return name
    known = "; ".join(f"{n} ({spec.arch}): {' '.join(spec.kernels)}"
                      for n, spec in IMAGES.items())
    raise VMError(f"no {arch} image holds a {label} kernel (the images: {known})")


# CPU 1 as RT boxes boot the NIC's CPU: out of the scheduler's domains (isolcpus=domain:
# the kernel puts such CPUs in its default root domain, outside any partition), its
# managed IRQs kept off (managed_irq) and its tick stopped while one task runs
# (nohz_full). The boot arguments of the scenarios that isolate it.
ISOLATE_CPU1 = "isolcpus=domain,managed_irq,1 nohz_full=1"


def cpu_list(text: str | None) -> list[int]:
    """The CPUs of a kernel CPU list ("0-2,5")."""
    out: list[int] = []
    for part in (text or "").split(","):
        lo, _, hi = part.partition("-")
        if lo.strip().isdigit():
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out


@dataclass(frozen=True)
class Kernel:
    """One bootable kernel of the image: its label ("6.12"), release, vmlinuz and initrd."""

    label: str
    release: str
    vmlinuz: Path
    initrd: Path


@dataclass(frozen=True)
class Image:
    """A built guest image (``name``, a key of :data:`IMAGES`): raw ext4 root disk and its
    kernels with their initramfs; an image whose userland is not the host's (arm64,
    trixie) also has ``builder``, the root its package is built in."""

    path: Path
    arch: str = "amd64"
    name: str = "bookworm"

    @property
    def builder(self) -> Path:
        return self.path / "builder"

    @property
    def disk(self) -> Path:
        return self.path / "disk.img"

    @property
    def kernels(self) -> dict[str, Kernel]:
        """The image's kernels by label, from its ``kernels`` file."""
        found = {}
        for line in (self.path / "kernels").read_text().splitlines():
            label, release = line.split()
            found[label] = Kernel(label, release, self.path / f"vmlinuz-{release}",
                                  self.path / f"initrd.img-{release}")
        return found

    def kernel(self, label: str | None = None) -> Kernel:
        """The kernel ``label`` (default: the first, Debian 12's own)."""
        kernels = self.kernels
        if label is None:
            return next(iter(kernels.values()))
        if label not in kernels:
            raise VMError(f"image {self.path}: no {label} kernel (it has "
                          f"{', '.join(kernels) or 'none'})")
        return kernels[label]

    @property
    def release(self) -> str:
        return self.kernel().release


def ensure_image(name: str = "bookworm") -> Image:
    """Build the image ``name`` (a key of :data:`IMAGES`) unless a complete cached one
    matches the inputs."""
    t0 = time.monotonic()
    spec = IMAGES[name]
    script, *args = spec.build
    kernels = spec.kernels
    proc = subprocess.run(
        ["bash", str(HERE / script), *args], stdout=subprocess.PIPE, text=True, check=False
    )
    if proc.returncode != 0:
        raise VMError(f"{' '.join(spec.build)} failed with status {proc.returncode} "
                      "(see its stderr)")
    path = Path(proc.stdout.strip().splitlines()[-1])
    image = Image(path, spec.arch, name)
    if not (path / "kernels").is_file():
        raise VMError(f"image {path}: no kernels file (built by an older build-image.sh)")
    files = [image.disk, *(f for k in image.kernels.values() for f in (k.vmlinuz, k.initrd))]
    for f in files:
        if not f.is_file():
            raise VMError(f"image {path}: {f.name} is missing")
    missing = [k for k in kernels if k not in image.kernels]
    if missing:
        raise VMError(f"image {path}: no {', '.join(missing)} kernel")
    releases = ", ".join(k.release for k in image.kernels.values())
    say(f"image {path} (kernels {releases}) ready in {time.monotonic() - t0:.1f}s")
    return image


@dataclass
class Stage:
    """The checkout's Debian package, in ``root``, as the guest installs it."""

    root: Path
    missing: list[str] = field(default_factory=list)
    log: str = ""


def stage_checkout(dest: Path, image: Image | None = None) -> Stage:
    """Build the checkout's .deb (``make deb-package``) and put it in ``dest``.

    The guest installs it with dpkg (guest/install.sh): its Depends must be met by the
    image's userland alone, its maintainer scripts enable irqresd.service. A package
    that does not build is listed in ``missing``; the guest then has no irqres. For an
    ``image`` with a builder root (arm64, trixie) the package is built there (debbuild).
    """
    dest.mkdir(parents=True, exist_ok=True)
    if image is not None and image.builder.is_dir():
        from debbuild import build_in_root

        stage = Stage(dest)
        try:
            deb = build_in_root(image.builder, REPO / "build" / f"deb-{image.name}",
                                foreign=image.arch != "amd64")
        except VMError as err:
            stage.missing.append(f"irqres {image.name} .deb: {err}")
            return stage
        shutil.copy2(deb, dest / deb.name)
        return stage
    env = dict(os.environ, PYTHON=os.environ.get("PYTHON", sys.executable))
    cmd = ["make", "-s", "-C", str(REPO), "deb-package"]
    # Two test sessions of one checkout (the suite split across pytest processes) would
    # build into the same build/deb at once and each find the other's half-made package:
    # one builds and copies at a time.
    (REPO / "build").mkdir(exist_ok=True)
    with open(REPO / "build" / ".deb-package.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        stage = Stage(dest, log=proc.stdout + proc.stderr)
        debs = sorted((REPO / "build" / "deb").glob("irqres_*.deb"))
        if proc.returncode != 0 or len(debs) != 1:
            stage.missing.append(f"irqres .deb: make deb-package failed with status "
                                 f"{proc.returncode}: {stage.log.strip()[-600:]}")
            return stage
        shutil.copy2(debs[0], dest / debs[0].name)
    return stage


def stage_deb(stage: Stage | None) -> Path | None:
    """The one package a stage holds, or None (no stage, or its package did not build)."""
    debs = sorted(stage.root.glob("irqres_*.deb")) if stage is not None else []
    return debs[0] if len(debs) == 1 else None


LAYERS_KEPT = 4  # layers of other packages kept beside an image (other checkouts)
LAYER_TIMEOUT_S = 900


def installed_layer(image: Image, stage: Stage | None) -> Path | None:
    """The image's root disk with the stage's package installed: a qcow2 layer over
    ``image.disk``, made by booting the image once with the package on the payload disk
    (guest/install.sh's layer mode: ``dpkg -i``, a clean read-only root, power off).

    Layers live in ``<image>/layers/<key>.qcow2``, the key a hash of the package and of
    install.sh; a layer is built once and reused by every later guest (they boot it in
    snapshot mode), and is renamed into place only when dpkg said the package is
    installed. None when the stage has no package: the guest then boots the bare image.
    Raises VMError, with dpkg's output, when the package cannot be installed."""
    deb = stage_deb(stage)
    if deb is None:
        return None
    digest = hashlib.sha256(deb.read_bytes())
    digest.update((GUEST_DIR / "install.sh").read_bytes())
    layers = image.path / "layers"
    layers.mkdir(exist_ok=True)
    layer = layers / f"{digest.hexdigest()[:16]}.qcow2"
    with open(layers / ".lock", "w") as lock:
        # two test sessions of one checkout build it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if layer.is_file():
            return layer
        t0 = time.monotonic()
        say(f"installing {deb.name} into a layer of the {image.name} image (once per package)")
        work = Path(tempfile.mkdtemp(prefix="layer-", dir=layers))
        try:
            disk = work / "disk.qcow2"
            subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw",
                            "-b", str(image.disk), str(disk)], check=True)
            vm = VM(image, stage, "layer", name=f"layer {deb.name}",
                    timeout_s=LAYER_TIMEOUT_S, workdir=work)
            vm.root = disk
            vm.making_layer = True
            log = vm.boot_layer()
            if "layer installed" not in log:
                raise VMError(f"layer {deb.name}: dpkg did not install the package in the "
                              f"{image.name} image; install.log:\n{log}")
            disk.replace(layer)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for old in sorted(layers.glob("*.qcow2"), key=lambda f: f.stat().st_mtime)[:-LAYERS_KEPT]:
            old.unlink(missing_ok=True)
            shutil.rmtree(old.with_name(old.name + ".snapshots"), ignore_errors=True)
        say(f"layer {layer} ready in {time.monotonic() - t0:.1f}s")
        return layer


def free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoadServer:
    """Answers the guest's requests on ttyS1, one line each way.

    Requests: ``mark <text>`` (progress), ``udp <guest port> <pps> <seconds> <size>``
    (fixed-rate UDP from the host), ``tcp <guest port> <seconds>`` (bulk TCP as fast as
    the guest takes it). Replies: ``ok <numbers...>`` or ``err <why>``.
    """

    def __init__(self, vm: VM):
        self.vm = vm
        self.sock: socket.socket | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.marks: list[tuple[float, str]] = []
        self.held = threading.Event()  # the generator said "hold" (bootsnap)

    def start(self, path: Path, deadline: float) -> None:
        while time.monotonic() < deadline:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(str(path))
            except OSError:
                s.close()
                if self.vm.proc is not None and self.vm.proc.poll() is not None:
                    return
                time.sleep(0.05)
                continue
            self.sock = s
            self.thread.start()
            return

    def send(self, line: str) -> None:
        """A line the guest waits for unasked: the answer to a ``hold`` it said in the
        boot the snapshot was taken of."""
        if self.sock is None:
            raise VMError(f"{self.vm.name}: no control connection to answer the guest on")
        self.sock.sendall(line.encode() + b"\n")

    def _serve(self) -> None:
        assert self.sock is not None
        buf = b""
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:
                return
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                text = line.decode(errors="replace").strip()
                if text:
                    reply = self._handle(text)
                    if reply is not None:
                        with contextlib.suppress(OSError):
                            self.sock.sendall(reply.encode() + b"\n")

    def _handle(self, text: str) -> str | None:
        words = text.split()
        try:
            if words[0] == "hold":
                self.held.set()  # answered once the snapshot is saved (VM._make_snapshot)
                return None
            if words[0] == "mark":
                msg = text[5:]
                self.marks.append((time.monotonic() - self.vm.started, msg))
                say(f"{self.vm.name}: guest: {msg}")
                return None
            if words[0] == "udp":
                port, pps, secs, size = (int(w) for w in words[1:5])
                return "ok " + " ".join(map(str, self.vm.send_udp(port, pps, secs, size)))
            if words[0] == "tcp":
                port, secs = int(words[1]), float(words[2])
                return "ok " + " ".join(map(str, self.vm.send_tcp(port, secs)))
        except (ValueError, IndexError, KeyError, OSError) as e:
            return f"err {words[0] if words else '?'}: {e}"
        return f"err unknown request {text!r}"


def send_udp_paced(addr: tuple[str, int], pps: int, seconds: float, size: int) -> tuple[int, int]:
    """Send ``size``-byte UDP datagrams at ``pps`` per second for ``seconds``.

    Sending times are absolute (start + k * period, integer ns) so the rate does not drift.
    Returns (datagrams sent, period in ns).
    """
    if pps <= 0 or seconds <= 0:
        raise ValueError(f"udp load: rate {pps}/s for {seconds}s is not positive")
    period = NS_PER_S // pps
    n = int(seconds * pps)
    payload = bytes(size)
    sent = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        start = time.monotonic_ns()
        for k in range(n):
            due = start + k * period
            while (now := time.monotonic_ns()) < due:
                if due - now > 200_000:
                    time.sleep((due - now - 100_000) / NS_PER_S)
            with contextlib.suppress(OSError):
                s.sendto(payload, addr)
                sent += 1
    return sent, period


def send_tcp_bulk(addr: tuple[str, int], seconds: float) -> tuple[int, int]:
    """Push bytes over one TCP connection for ``seconds``; returns (bytes sent, ns taken)."""
    chunk = bytes(65536)
    sent = 0
    with socket.create_connection(addr, timeout=10) as s:
        s.settimeout(2)
        start = time.monotonic_ns()
        end = start + int(seconds * NS_PER_S)
        while time.monotonic_ns() < end:
            try:
                sent += s.send(chunk)
            except TimeoutError:
                continue
        took = time.monotonic_ns() - start
    return sent, took


@dataclass
class Result:
    """What a finished guest run left: its result.json, files in out/, the console log."""

    name: str
    kernel: Kernel
    data: dict
    out: Path
    console: str
    wall_s: float
    marks: list[tuple[float, str]]
    # Why the guest was booted again (see VM.run), or None.
    retried: str | None = None
    # The boot snapshot (bootsnap) the guest started from, or None: booted cold.
    boot_snapshot: str | None = None


class VM:
    """One boot of the guest running one scenario.

    ``kernel`` is the label of one of the image's kernels (:data:`KERNELS`; default the
    first) and ``cpus`` the number of vCPUs. ``nic`` is ``"e1000"`` (eth0, irq/11-eth0,
    QEMU user networking with port forwarding), ``"virtio-mq"`` (virtio-net-pci with
    ``queues`` queue pairs on MSI-X, predictable interface name ens5, a multi-queue tap in
    a network namespace made for the run) or ``"virtio-mq+e1000"`` (both: the e1000 is
    then ens3, its name from slot 3, with the same user networking), or ``"hub"``: two
    e1000s joined by a QEMU hub and nothing else (eth0 in slot 3, IRQ 11, the receiver;
    eth1, the sender's, in slot 6, IRQ 10: slot 4 would share IRQ 11), so traffic is made
    inside the guest, in guest time.

    ``icount`` (for example ``"shift=3,sleep=off"``) runs the guest with QEMU's
    instruction counting: guest time follows the instructions executed, not the host's
    clock, so a busy host slows the run down without changing what the guest measures.
    ``qemu`` is the emulator's command (default ``qemu-system-x86_64``, with ``-L DIR``
    for another build's firmware) and ``qemu_env`` its extra environment; ``files`` maps
    names to host files copied into the payload's ``extra/`` directory
    (``/payload/extra/<name>`` in the guest); ``extra_qemu`` is appended to QEMU's
    command line (more devices, such as the seeds' disk experiment's test disk) and
    ``kernel_args`` to the kernel's (``isolcpus=...``, say).
    """

    UDP_PORT = 5001
    TCP_PORT = 5002
    VIRTIO_SLOT = 5
    VIRTIO_IFACE = "ens5"  # the predictable name udev gives it (slot 5 of the firmware)

    def __init__(self, image: Image, stage: Stage | None, scenario: str, *, name: str = "",
                 profile: Path | None = None, params: dict | None = None,
                 nic: str = "e1000", timeout_s: float = 600, memory_mb: int = 1024,
                 enable_irqresd: bool = False, queues: int = 2,
                 workdir: Path | None = None, kernel: str | None = None, cpus: int = 2,
                 icount: str | None = None, files: dict[str, Path] | None = None,
                 qemu: list[str] | None = None, qemu_env: dict[str, str] | None = None,
                 e1000_mitigation_opt: bool = True, extra_qemu: list[str] | None = None,
                 kernel_args: str = "", layered: bool = True,
                 boot_snapshots: bool | None = None):
        self.image = image
        self.stage = stage
        self.scenario = scenario
        self.name = name or scenario
        self.profile = profile
        self.params = params or {}
        self.nic = nic
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.enable_irqresd = enable_irqresd
        self.queues = queues
        self.kernel = image.kernel(kernel)
        self.cpus = cpus
        self.icount = icount
        self.files = dict(files or {})
        self.qemu = list(qemu or ["qemu-system-x86_64"])
        self.qemu_env = dict(qemu_env or {})
        # QEMU 9 dropped the e1000's "mitigation" property (interrupt mitigation is
        # always emulated there); pass False for such a QEMU
        self.e1000_mitigation_opt = e1000_mitigation_opt
        self.extra_qemu = list(extra_qemu or [])
        self.kernel_args = kernel_args
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix=f"irqres-vm-{self.name}-"))
        # the root disk: the image with the package installed (installed_layer), found at
        # the first boot; ``making_layer`` marks the boot that makes it. layered=False boots
        # the bare image and installs the package in the guest (bench/vmboot compares them).
        self.root: Path | None = None
        self.making_layer = False
        self.layered = layered
        # start from a boot snapshot of this configuration (bootsnap), made by the first
        # guest that needs it; $IRQRES_VM_BOOT_SNAPSHOTS=0 boots every guest cold
        if boot_snapshots is None:
            boot_snapshots = os.environ.get("IRQRES_VM_BOOT_SNAPSHOTS", "1") != "0"
        self.boot_snapshots = boot_snapshots
        self.hold = False  # this boot's command line asks the generator to hold
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.last_state = ""
        self.ports = {
            ("udp", self.UDP_PORT): free_port(socket.SOCK_DGRAM),
            ("tcp", self.TCP_PORT): free_port(socket.SOCK_STREAM),
        }

    # -- load towards the guest, through QEMU's user-network port forwarding ------------
    def send_udp(self, guest_port: int, pps: int, seconds: float, size: int) -> tuple[int, int]:
        return send_udp_paced(("127.0.0.1", self.ports[("udp", guest_port)]), pps, seconds, size)

    def send_tcp(self, guest_port: int, seconds: float) -> tuple[int, int]:
        return send_tcp_bulk(("127.0.0.1", self.ports[("tcp", guest_port)]), seconds)

    # -- the payload disk ---------------------------------------------------------------
    def _payload(self) -> Path:
        root = self.workdir / "payload"
        if root.exists():
            shutil.rmtree(root)
        (root / "out").mkdir(parents=True)
        shutil.copytree(GUEST_DIR, root / "guest", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(GUEST_DIR / "install.sh", root / "install.sh")
        if self.making_layer:
            (root / "layer").touch()
        if self.stage is not None and (self.making_layer or not self.layered):
            shutil.copytree(self.stage.root, root / "stage", symlinks=True)
        if self.profile is not None:
            shutil.copy2(self.profile, root / "profile.yaml")
        if self.enable_irqresd:
            (root / "enable-irqresd").touch()
        if self.files:
            (root / "extra").mkdir()
            for name, src in self.files.items():
                shutil.copy2(src, root / "extra" / name)
        (root / "scenario.json").write_text(
            json.dumps({"scenario": self.scenario, "name": self.name, "params": self.params})
        )
        img = self.workdir / "payload.img"
        img.unlink(missing_ok=True)
        subprocess.run(["mke2fs", "-q", "-t", "ext4", "-L", "irqres-payload", "-d", str(root),
                        str(img), "512M"], check=True, stdout=subprocess.DEVNULL)
        return img

    def _fetch_out(self, img: Path) -> Path:
        out = self.workdir / "out"
        if out.exists():
            shutil.rmtree(out)
        subprocess.run(["debugfs", "-R", f"rdump /out {self.workdir}", str(img)],
                       capture_output=True, check=False)
        out.mkdir(exist_ok=True)
        return out

    def _qemu_cmd(self, payload: Path, ctl: Path) -> list[str]:
        fwd = ",".join(f"hostfwd={proto}:127.0.0.1:{hp}-:{gp}"
                       for (proto, gp), hp in self.ports.items())
        # acpi_irq_nobalance keeps the firmware's PCI interrupt routing, so the e1000 in
        # slot 3 is always IRQ 11 (irq/11-eth0) whatever order the drivers probe in.
        append = ("root=/dev/vda rw console=ttyS0,115200 panic=-1 loglevel=5 "
                  "acpi_irq_nobalance")
        if self.kernel_args:
            append += " " + self.kernel_args
        if self.hold:
            append += " " + HOLD_ARG
        models = self.nic.split("+")
        if models == ["e1000"]:
            append += " net.ifnames=0"
        if models == ["hub"]:
            # no_timer_check: on a very busy host the kernel's early check that the
            # IO-APIC timer ticks can time out under plain TCG and panic the boot
            append += " net.ifnames=0 no_timer_check"
        nic = []
        for model in models:
            if model == "e1000":
                # mitigation=off: QEMU does not emulate the e1000's interrupt throttling,
                # so each datagram of a paced sender raises its own interrupt.
                nic += ["-netdev", f"user,id=n0,{fwd}",
                        "-device", "e1000,netdev=n0,addr=0x3,mitigation=off"]
            elif model == "virtio-mq":
                # QEMU's user networking has one queue; a multi-queue tap lives in a
                # network namespace of this run (see _netns), so nothing touches the
                # host's network.
                q = self.queues
                nic += ["-netdev", f"tap,id=n1,ifname=tap0,script=no,downscript=no,"
                                   f"vhost=off,queues={q}",
                        "-device", f"virtio-net-pci,netdev=n1,mq=on,vectors={2 * q + 2},"
                                   f"addr={self.VIRTIO_SLOT:#x}"]
            elif model == "hub":
                # No host network at all: the guest's two NICs are the hub's only ports
                # (QEMU warns that hub 0 is not connected to the host network; that is
                # the point).
                mit = ",mitigation=off" if self.e1000_mitigation_opt else ""
                nic += ["-netdev", "hubport,id=h0,hubid=0",
                        "-device", f"e1000,netdev=h0,addr=0x3{mit}",
                        "-netdev", "hubport,id=h1,hubid=0",
                        "-device", f"e1000,netdev=h1,addr=0x6{mit}"]
            else:
                raise VMError(f"{self.name}: unknown NIC model {model!r}")
        timing = ["-icount", self.icount] if self.icount else []
        if self.image.arch == "arm64":
            return self._qemu_cmd_arm64(payload, ctl, append, nic)
        return [*self.qemu, "-accel", "tcg", *timing, "-smp", str(self.cpus),
                "-m", str(self.memory_mb),
                "-kernel", str(self.kernel.vmlinuz), "-initrd", str(self.kernel.initrd),
                "-append", append,
                "-drive", self._root_drive(),
                "-drive", f"file={payload},if=virtio,format=raw",
                "-display", "none", "-no-reboot", "-serial", "stdio",
                "-serial", f"unix:{ctl},server=on,wait=off", *self._qmp_args(), *nic,
                *self.extra_qemu]

    def _qemu_cmd_arm64(self, payload: Path, ctl: Path, append: str, nic: list[str]) -> list[str]:
        """The arm64 guest: QEMU's virt board (GICv3, PCIe) with an emulated CPU, the same
        disks and NICs on PCI (a PCI e1000's INTx is then a GIC SPI), the console on the
        board's PL011 UART, which is its only one: the control channel is a virtio
        serial port (/dev/virtio-ports/irqres.ctl in the guest)."""
        if self.icount:
            raise VMError(f"{self.name}: -icount is not supported on the arm64 guest")
        append = append.replace("console=ttyS0,115200", "console=ttyAMA0")
        append = append.replace(" acpi_irq_nobalance", "")
        # the virt board places its PCI devices itself: a fixed slot could clash
        nic = [re.sub(r",addr=0x[0-9a-f]+", "", a) for a in nic]
        qemu = self.qemu if self.qemu != ["qemu-system-x86_64"] else ["qemu-system-aarch64"]
        # pauth-impdef: the emulated CPU signs pointers with a cheap algorithm of QEMU's
        # own rather than the architected QARMA, which costs TCG much of its speed
        return [*qemu, "-M", "virt,gic-version=3", "-cpu", "max,pauth-impdef=on",
                "-accel", "tcg", "-smp", str(self.cpus), "-m", str(self.memory_mb),
                "-kernel", str(self.kernel.vmlinuz), "-initrd", str(self.kernel.initrd),
                "-append", append,
                "-drive", self._root_drive(),
                "-drive", f"file={payload},if=virtio,format=raw",
                "-display", "none", "-no-reboot", "-serial", "stdio",
                "-device", "virtio-serial-pci",
                "-chardev", f"socket,id=ctl,path={ctl},server=on,wait=off",
                "-device", "virtserialport,chardev=ctl,name=irqres.ctl",
                *self._qmp_args(), *nic, *self.extra_qemu]

    def _root_drive(self) -> str:
        """The root disk: the bare image or the package's layer, in snapshot mode (the
        guest's writes are thrown away), except for the boot that makes the layer."""
        if self.root is None:
            return f"file={self.image.disk},if=virtio,format=raw,snapshot=on"
        keep = "" if self.making_layer else ",snapshot=on"
        return f"file={self.root},if=virtio,format=qcow2{keep}"

    def _qmp_args(self) -> list[str]:
        """QEMU's QMP socket, for ``qemu_state`` of a guest about to be killed."""
        return ["-qmp", f"unix:{self.workdir / 'qmp.sock'},server=on,wait=off"]

    @contextlib.contextmanager
    def _netns(self):
        """For virtio-mq: a network namespace holding a multi-queue tap; yields the
        command prefix that runs QEMU inside it, and deletes the namespace afterwards."""
        if "virtio-mq" not in self.nic.split("+"):
            yield []
            return
        ns = f"irqres-vm-{os.getpid()}"
        subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            for c in (["ip", "tuntap", "add", "dev", "tap0", "mode", "tap", "multi_queue"],
                      ["ip", "link", "set", "tap0", "up"]):
                subprocess.run(["ip", "netns", "exec", ns, *c], check=True)
            yield ["ip", "netns", "exec", ns]
        finally:
            subprocess.run(["ip", "netns", "delete", ns], check=False)

    # Boots a guest may take when each of the earlier ones died of a patching int3: at
    # about 1 in 25 boots of 6.12, two in a row are 1 in 600; three, 1 in 15,000.
    BOOTS_AFTER_PATCHING_DEATHS = 3

    def run(self) -> Result:
        """Boot, run the scenario, power off; raise VMError on timeout or missing results.

        A guest whose kernel died of a live-patching int3 (see ``patching_oops``) is booted
        again, up to BOOTS_AFTER_PATCHING_DEATHS boots in all; a guest whose kernel stalled
        (``kernel_stall``), oopsed otherwise (``kernel_oops``) or hung before it started
        user space or its scenario, and never finished, is booted once more, once in all
        for those causes. Each dead boot's console is kept as console.attemptN.log and the
        Result's ``retried`` says why. Any other failure, or the last boot dying so too,
        raises.
        """
        deaths: list[str] = []
        while True:
            try:
                res = self._run_once()
            except VMError as err:
                why = self._restore_failed(err) or self._death(err, deaths)
                if why is None:
                    raise
                kept = self.workdir / f"console.attempt{len(deaths) + 1}.log"
                (self.workdir / "console.log").replace(kept)
                say(f"{self.name}: {why}; booting it again, that console kept in {kept}")
                deaths.append(f"{why}, console {kept}")
                continue
            res.retried = "; ".join(deaths) or None
            res.boot_snapshot = self.restored_from
            return res

    def _restore_failed(self, err: VMError) -> str | None:
        """Why a guest started from a boot snapshot is booted again, cold: it failed
        before its scenario started, which a cold boot tells apart from a bad snapshot."""
        if self.restored_from is None or scenario_started(err.console):
            return None
        self.boot_snapshots = False
        first = str(err).splitlines()[0]
        return f"the guest started from boot snapshot {self.restored_from} failed ({first})"

    def _death(self, err: VMError, deaths: list[str]) -> str | None:
        """Why the guest that raised ``err`` may be booted again, or None if it may not.

        A stall, another oops or a hang before user space (the console silent for
        BOOT_QUIET_S, or the guest's timeout, before the kernel started user space) or
        before the scenario (silent for SCENARIO_QUIET_S, or the timeout, after user space
        started and before the scenario's first line) is retried once only, and only one
        of them: no cause is known. The stall seen (6.1, CI) began at a start-up kill of
        the partition fault campaign, while no irqres code ran (irqresd had been killed,
        its ExecStopPost's process was still blocked before it ran irqresd); the oops seen
        (6.12.95, CI, 1 boot of several hundred) was a NULL dereference in the fair class's
        pick_task_fair() on ksoftirqd/0 while the unit's ExecStopPost ran ``irqresd
        --restore`` after a kill. A lasting defect fails the second boot too."""
        if len(deaths) + 1 >= self.BOOTS_AFTER_PATCHING_DEATHS:
            return None
        oops = patching_oops(err.console)
        if oops is not None:
            return f"the guest kernel died of a live-patching int3 ({oops})"
        if any(d.startswith(self._UNEXPLAINED) for d in deaths):
            return None
        stall = kernel_stall(err.console)
        if stall is not None:
            return f"{self._UNEXPLAINED} stalled ({stall.splitlines()[0].strip()})"
        if err.killed and not user_space_started(err.console):
            return f"{self._UNEXPLAINED} hung before user space started"
        if err.killed and self.awaits_scenario and not scenario_started(err.console):
            return f"{self._UNEXPLAINED} hung after user space started, before its scenario"
        other = kernel_oops(err.console)
        if other is not None:
            return f"{self._UNEXPLAINED} oopsed in {oops_site(other)}"
        return None

    _UNEXPLAINED = "the guest kernel"

    POLL_S = 10.0  # how often _wait reads the console
    OOPS_QUIET_S = OOPS_QUIET_S
    BOOT_QUIET_S = BOOT_QUIET_S
    SCENARIO_QUIET_S = SCENARIO_QUIET_S
    awaits_scenario = True  # False while a layer boots: no scenario runs there
    restored_from: str | None = None  # the boot snapshot the last boot started from

    def _wait(self, console_path: Path) -> tuple[bool, tuple[str, str] | None]:
        """Wait for QEMU to end; kill it at ``timeout_s``, once the guest's kernel is
        stuck in an RCU stall (``kernel_stall``), once it oopsed (``kernel_oops``) and
        its console then stayed silent for OOPS_QUIET_S, or once its console stayed silent
        for BOOT_QUIET_S before user space started (``user_space_started``) or for
        SCENARIO_QUIET_S after it and before the scenario started (``scenario_started``):
        (timed out, None) or (False, (what killed the guest, the console from it on)). A
        guest killed at its timeout is first described by QEMU (``qemu_state``, kept in
        ``self.last_state``)."""
        deadline = self.started + self.timeout_s
        size, grown = -1, time.monotonic()
        while True:
            try:
                self.proc.wait(timeout=max(0.0, min(self.POLL_S, deadline - time.monotonic())))
                return False, None
            except subprocess.TimeoutExpired:
                pass
            text = console_path.read_text(errors="replace")
            if len(text) != size:
                size, grown = len(text), time.monotonic()
            dead = self._dead(text, time.monotonic() - grown)
            if dead is not None or time.monotonic() >= deadline:
                if dead is None:
                    self.last_state = qemu_state(self.workdir / "qmp.sock")
                self.proc.kill()
                self.proc.wait()
                return dead is None, dead

    def _dead(self, console: str, silent_s: float) -> tuple[str, str] | None:
        if silent_s >= self.BOOT_QUIET_S and not user_space_started(console):
            return (f"printed nothing for {self.BOOT_QUIET_S:.0f}s before user space "
                    f"started"), console
        if (self.awaits_scenario and silent_s >= self.SCENARIO_QUIET_S
                and user_space_started(console) and not scenario_started(console)):
            return (f"printed nothing for {self.SCENARIO_QUIET_S:.0f}s after user space "
                    f"started, before its scenario started"), console
        stall = kernel_stall(console)
        if stall is not None:
            return f"stalled (RCU stall reported {STALL_REPORTS} times)", stall
        oops = kernel_oops(console) if silent_s >= self.OOPS_QUIET_S else None
        if oops is not None:
            return (f"oopsed in {oops_site(oops)} and printed nothing for "
                    f"{self.OOPS_QUIET_S:.0f}s"), oops
        return None

    def boot_layer(self) -> str:
        """The layer's boot (see installed_layer): its install.log."""
        payload, console_text, wall, _ = self._boot(scenario=False)
        log = self._fetch_out(payload) / "install.log"
        if not log.is_file():
            raise VMError(f"{self.name}: the guest left no install.log (qemu status "
                          f"{self.proc.returncode}, {wall:.0f}s); console tail:\n"
                          f"{tail(console_text)}", console_text)
        return log.read_text(errors="replace")

    def _run_once(self) -> Result:
        if self.root is None and self.layered:
            self.root = installed_layer(self.image, self.stage)
        payload, console_text, wall, marks = self._boot()
        out = self._fetch_out(payload)
        result_file = out / "result.json"
        if not result_file.is_file():
            install_log = out / "install.log"
            extra = f"\ninstall.log:\n{install_log.read_text()}" if install_log.is_file() else ""
            raise VMError(f"{self.name}: guest left no result.json (qemu status "
                          f"{self.proc.returncode}); console tail:\n{tail(console_text)}{extra}",
                          console_text)
        data = json.loads(result_file.read_text())
        booted = data.get("kernel_release")
        if booted != self.kernel.release:
            raise VMError(f"{self.name}: asked for kernel {self.kernel.release}, the guest "
                          f"ran {booted!r}")
        return Result(self.name, self.kernel, data, out, console_text, wall, marks)

    def _boot(self, scenario: bool = True) -> tuple[Path, str, float, list]:
        """One boot to power-off: (payload disk, console, wall seconds, the guest's marks).
        Raises VMError when the guest's kernel died or it outlived ``timeout_s``.
        ``scenario``: the guest runs a scenario (not a layer's install)."""
        self.awaits_scenario = scenario
        self.restored_from = None
        snap = self._snapshot(scenario)
        self.hold = snap is not None
        payload = self._payload()
        ctl = self.workdir / "ctl.sock"
        console_path = self.workdir / "console.log"
        cmd = self._qemu_cmd(payload, ctl)
        if snap is not None:
            cmd[cmd.index(self._root_drive())] = snap.root_drive()
            cmd += snap.restore_args()
        (self.workdir / "qemu.cmd").write_text(" ".join(cmd) + "\n")
        how = f"from boot snapshot {snap.key}" if snap is not None else "cold"
        say(f"{self.name}: booting {self.kernel.release} ({self.cpus} vCPUs, {self.nic}) "
            f"{how}, workdir {self.workdir}")
        self.started = time.monotonic()
        server = LoadServer(self)
        with self._netns() as prefix, open(console_path, "wb") as console:
            if snap is not None:
                # the boot up to the snapshot, as a cold boot's console would show it
                console.write(snap.console.read_bytes() + RESTORED.format(key=snap.key).encode())
                console.flush()
            self.proc = self._popen(prefix, cmd, console)
            server.start(ctl, self.started + 30)
            if snap is not None:
                self._resume(snap, server, console_path)
            timed_out, dead = self._wait(console_path)
        wall = time.monotonic() - self.started
        console_text = console_path.read_text(errors="replace")
        say(f"{self.name}: guest finished in {wall:.1f}s wall")
        if dead is not None:
            raise VMError(f"{self.name}: the guest kernel {dead[0]} and was killed after "
                          f"{wall:.0f}s; console from there:\n{tail(dead[1], 80)}",
                          console_text, killed=True)
        if timed_out:
            raise VMError(f"{self.name}: guest did not power off within {self.timeout_s:.0f}s "
                          f"and was killed; before the kill: {self.last_state}; console "
                          f"tail:\n{tail(console_text)}", console_text, killed=True)
        return payload, console_text, wall, server.marks

    def _popen(self, prefix: list[str], cmd: list[str], console) -> subprocess.Popen:
        """QEMU, its console (and QEMU's own messages) into ``console``."""
        env = dict(os.environ, **self.qemu_env) if self.qemu_env else None
        return subprocess.Popen([*prefix, *cmd], stdin=subprocess.DEVNULL, env=env,
                                stdout=console, stderr=subprocess.STDOUT)

    def _snapshot(self, scenario: bool) -> BootSnapshot | None:
        """The boot snapshot this boot starts from, made now by a boot of its own if no
        guest made it yet; None for a cold boot: no snapshots wanted, a boot that is no
        scenario's, a configuration a snapshot cannot carry (instruction counting, extra
        devices whose contents differ between runs, the arm64 board), or a snapshot that
        could not be made."""
        if not (scenario and self.boot_snapshots and self.root is not None
                and not self.making_layer and self.image.arch == "amd64"
                and not self.icount and not self.extra_qemu):
            return None
        self.hold = True
        snap = BootSnapshot(self.root, key_of(
            self._qemu_cmd(self.workdir / "payload.img", self.workdir / "ctl.sock"),
            self.workdir))
        if not snap.ready():
            with snap.making() as needed:
                if needed:
                    self._make_snapshot(snap)
        return snap if snap.ready() else None

    def _make_snapshot(self, snap: BootSnapshot) -> None:
        """Boot this configuration until its generator holds, and save it there. A boot
        that dies or never holds leaves no snapshot (the guest then boots cold)."""
        payload = self._payload()  # not read: the generator holds before it looks
        ctl = self.workdir / "ctl.sock"
        cmd = self._qemu_cmd(payload, ctl)
        cmd[cmd.index(self._root_drive())] = snap.root_drive(writable=True)
        console_path = self.workdir / "console.snapshot.log"
        say(f"{self.name}: making boot snapshot {snap.key} of {self.kernel.release} "
            f"({self.cpus} vCPUs, {self.nic})")
        t0 = time.monotonic()
        server = LoadServer(self)
        why = "it never held"
        with self._netns() as prefix, open(console_path, "wb") as console:
            proc = self._popen(prefix, cmd, console)
            try:
                self.proc = proc
                server.start(ctl, t0 + 30)
                while not server.held.wait(1.0):
                    if proc.poll() is not None:
                        why = f"QEMU ended (status {proc.returncode}) before the guest held"
                        break
                    if time.monotonic() - t0 > min(self.timeout_s, BOOT_QUIET_S * 2):
                        why = f"the guest did not hold within {time.monotonic() - t0:.0f}s"
                        break
                if server.held.is_set():
                    console.flush()
                    saved = snap.save(self.workdir / "qmp.sock",
                                      console_path.read_text(errors="replace"))
                    say(f"{self.name}: boot snapshot {snap.key} held at "
                        f"{time.monotonic() - t0 - saved:.1f}s, saved in {saved:.1f}s "
                        f"({snap.state.stat().st_size >> 20} MiB)")
                    return
            except (SnapshotError, OSError, RuntimeError, ConnectionError) as err:
                why = str(err)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        say(f"{self.name}: no boot snapshot {snap.key}: {why}; booting cold")

    def _resume(self, snap: BootSnapshot, server: LoadServer, console_path: Path) -> None:
        """Run the guest QEMU is loading from ``snap`` and answer its generator's hold
        with the time of day (the saved guest's clock is that of the snapshot)."""
        self.restored_from = snap.key  # a failure here is the snapshot's (_restore_failed)
        try:
            loaded = snap.resume(self.workdir / "qmp.sock", lambda: self.proc.poll() is None)
            server.send(f"ok {int(time.time())}")
        except (SnapshotError, OSError) as err:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            text = console_path.read_text(errors="replace")
            raise VMError(f"{self.name}: could not start from boot snapshot {snap.key}: "
                          f"{err}; console tail:\n{tail(text)}", text) from err
        say(f"{self.name}: started from boot snapshot {snap.key} in {loaded:.1f}s")


def tail(text: str, lines: int = 60) -> str:
    # Drop terminal escapes so the log reads cleanly in a test report.
    clean = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return "\n".join(clean.splitlines()[-lines:])


def build_images(arch: str = "amd64") -> int:
    """Build (or find cached) every ``arch`` image of :data:`IMAGES`, one after the other;
    the number that failed. `make test` runs this in the background while its host suites
    run, so that the VM suite finds its images made (a cold one costs it minutes)."""
    failed = 0
    for name, spec in IMAGES.items():
        if spec.arch != arch:
            continue
        try:
            ensure_image(name)
        except VMError as err:
            say(f"image {name}: {err} (the VM suite will try again and say why)")
            failed += 1
    return failed


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="tests/vm/vmrunner.py",
        description="Build (or find in the cache) every amd64 guest image of the VM suite, "
                    "one after the other (`make vm-images-background` runs this).")
    ap.parse_args(argv)
    return 1 if build_images() else 0


if __name__ == "__main__":
    sys.exit(main())
