"""Boot snapshots: a scenario's guest starts from a saved boot, not from the firmware.

Under TCG every guest spends its first 12-15 s of guest time (and more of wall time) on
the same work: firmware, kernel, initramfs, systemd's start. For guests of one QEMU
configuration (kernel, command line, CPUs, memory, NICs, the image's layer) that work is
the same to the byte, so it is done once: a guest booted with ``irqres_vm.hold`` on its
kernel command line stops in the payload generator (tests/vm/image/.../irqres-vm-payload)
before it has read anything of the payload disk and says ``hold`` on the control port.
The host stops it there, saves its state with QEMU's migration into a zstd file and keeps
its root disk as written until then (a qcow2 over the layer). Every later guest of that
configuration is started from that state (``-incoming``) with its own payload disk, ports
and work directory; the host answers ``ok <unix seconds>`` and the generator sets the
clock, drops the payload disk's cached blocks (the initramfs read its superblock) and
goes on as in a cold boot. From there on nothing differs: systemd loads the units the
payload wrote, irqresd.service among them, and starts the boot transaction.

A snapshot lives in ``<layer>.snapshots/<key>.{state.zst,qcow2,console}``, the key a hash
of QEMU's command line with what differs between runs (work directory, forwarded host
ports) taken out. It is published by renaming its state file into place, under a lock,
so two test sessions make it once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import subprocess
import time
from pathlib import Path

from qemu_state import _Qmp

HOLD_ARG = "irqres_vm.hold"  # on the kernel's command line: stop for a snapshot
RESTORED = "---- irqres-vm: restored from boot snapshot {key} ----\n"
SAVE_TIMEOUT_S = 120.0
RESUME_TIMEOUT_S = 120.0


class SnapshotError(RuntimeError):
    pass


def key_of(cmd: list[str], workdir: Path) -> str:
    """The configuration's key: ``cmd`` without the run's own work directory and ports."""
    norm = [re.sub(r"(hostfwd=\w+:127\.0\.0\.1:)\d+", r"\g<1>0",
                   a.replace(str(workdir), "@WORKDIR")) for a in cmd]
    return hashlib.sha256("\0".join(norm).encode()).hexdigest()[:16]


class BootSnapshot:
    """One saved boot of a configuration: its files, and saving and resuming it."""

    def __init__(self, layer: Path, key: str):
        self.key = key
        self.dir = layer.with_name(layer.name + ".snapshots")
        self.state = self.dir / f"{key}.state.zst"
        self.disk = self.dir / f"{key}.qcow2"
        self.console = self.dir / f"{key}.console"
        self.layer = layer

    def ready(self) -> bool:
        return self.state.is_file() and self.disk.is_file()

    @contextlib.contextmanager
    def making(self):
        """Held while this snapshot is made; yields False if another session made it
        meanwhile (nothing left to make)."""
        self.dir.mkdir(exist_ok=True)
        with open(self.dir / f"{self.key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.ready():
                yield False
                return
            self.state.unlink(missing_ok=True)
            self.disk.unlink(missing_ok=True)
            subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2",
                            "-b", str(self.layer), str(self.disk)], check=True)
            try:
                yield True
            finally:
                if not self.state.is_file():
                    self.disk.unlink(missing_ok=True)

    def save(self, qmp_path: Path, console_text: str) -> float:
        """Stop the held guest, write its state, end QEMU; returns the seconds it took.
        The state file appears only once complete."""
        t0 = time.monotonic()
        tmp = self.state.with_suffix(".tmp")
        qmp = _Qmp(qmp_path, SAVE_TIMEOUT_S)
        try:
            qmp.run("stop")
            qmp.run("migrate", uri=f"exec:zstd -q -1 -T1 -f -o {tmp}")
            while True:
                status = qmp.run("query-migrate").get("status")
                if status == "completed":
                    break
                if status in ("failed", "cancelled") or time.monotonic() - t0 > SAVE_TIMEOUT_S:
                    raise SnapshotError(f"saving boot snapshot {self.key}: migration {status}")
                time.sleep(0.2)
            with contextlib.suppress(OSError, RuntimeError, ConnectionError):
                qmp.run("quit")
        finally:
            qmp.close()
        self.console.write_text(console_text)
        tmp.replace(self.state)
        return time.monotonic() - t0

    def restore_args(self) -> list[str]:
        return ["-incoming", f"exec:zstd -q -dc {self.state}"]

    def root_drive(self, *, writable: bool = False) -> str:
        """QEMU's root drive: written by the boot that makes the snapshot, in snapshot
        mode (never written) for every guest started from it."""
        return f"file={self.disk},if=virtio,format=qcow2" + ("" if writable else ",snapshot=on")

    @staticmethod
    def resume(qmp_path: Path, alive) -> float:
        """Wait until QEMU has loaded the state, then run the guest; returns the seconds
        the load took. ``alive()`` says whether QEMU still runs."""
        t0 = time.monotonic()
        while True:
            if not alive():
                raise SnapshotError("QEMU ended while loading the boot snapshot")
            try:
                qmp = _Qmp(qmp_path, 10.0)
                break
            except (OSError, ValueError, RuntimeError, ConnectionError):
                if time.monotonic() - t0 > RESUME_TIMEOUT_S:
                    raise SnapshotError("QEMU's monitor never answered") from None
                time.sleep(0.05)
        try:
            while True:
                status = qmp.run("query-status").get("status")
                if status == "paused":
                    qmp.run("cont")
                    return time.monotonic() - t0
                if status == "running":
                    return time.monotonic() - t0
                if status != "inmigrate" or time.monotonic() - t0 > RESUME_TIMEOUT_S:
                    raise SnapshotError(f"loading the boot snapshot: QEMU status {status}")
                time.sleep(0.05)
        finally:
            qmp.close()
