"""Boot snapshots' own rules (bootsnap), checked without booting a guest."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import bootsnap
import pytest
import vmrunner

GENERATOR = (Path(__file__).parent / "image" / "usr" / "lib" / "systemd" /
             "system-generators" / "irqres-vm-payload")


def _cmd(workdir: Path, udp: int = 40001, append: str = "root=/dev/vda") -> list[str]:
    return ["qemu-system-x86_64", "-append", append,
            "-drive", f"file={workdir}/payload.img,if=virtio,format=raw",
            "-serial", f"unix:{workdir}/ctl.sock,server=on,wait=off",
            "-netdev", f"user,id=n0,hostfwd=udp:127.0.0.1:{udp}-:5001"]


def test_runs_of_one_configuration_share_a_key(tmp_path):
    a = bootsnap.key_of(_cmd(tmp_path / "a", 40001), tmp_path / "a")
    b = bootsnap.key_of(_cmd(tmp_path / "b", 51234), tmp_path / "b")
    assert a == b and len(a) == 16


def test_another_configuration_has_another_key(tmp_path):
    base = bootsnap.key_of(_cmd(tmp_path), tmp_path)
    isolated = bootsnap.key_of(_cmd(tmp_path, append="root=/dev/vda isolcpus=1"), tmp_path)
    # the guest port is the configuration's, only the host's port is the run's
    other_port = [a.replace("-:5001", "-:5002") for a in _cmd(tmp_path)]
    assert len({base, isolated, bootsnap.key_of(other_port, tmp_path)}) == 3


def _layer(tmp_path: Path) -> Path:
    layer = tmp_path / "0123456789abcdef.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(layer), "64M"], check=True)
    return layer


def test_a_snapshot_is_made_once_and_only_a_saved_one_is_kept(tmp_path):
    snap = bootsnap.BootSnapshot(_layer(tmp_path), "k1")
    assert snap.dir == tmp_path / "0123456789abcdef.qcow2.snapshots"
    with snap.making() as needed:
        assert needed
        # the disk the held guest writes: a qcow2 over the layer
        info = subprocess.run(["qemu-img", "info", str(snap.disk)], capture_output=True,
                              text=True, check=True).stdout
        assert f"backing file: {snap.layer}" in info
    # never saved (the guest died before it held): nothing is left to restore
    assert not snap.ready() and not snap.disk.exists()
    with snap.making() as needed:
        assert needed
        snap.state.write_bytes(b"saved")
    assert snap.ready()
    with snap.making() as needed:
        assert not needed
    assert snap.state.read_bytes() == b"saved"


def test_a_second_session_waits_for_the_first_and_makes_nothing(tmp_path):
    layer = _layer(tmp_path)
    first, second = bootsnap.BootSnapshot(layer, "k2"), bootsnap.BootSnapshot(layer, "k2")
    inside, seen = threading.Event(), []

    def other():
        inside.wait()
        with second.making() as needed:
            seen.append(needed)

    t = threading.Thread(target=other)
    t.start()
    with first.making() as needed:
        assert needed
        inside.set()
        t.join(0.5)
        assert t.is_alive()  # held off by the lock
        first.state.write_bytes(b"saved")
    t.join(5)
    assert seen == [False]


def test_only_scenario_boots_of_plain_configurations_take_snapshots(tmp_path):
    image = vmrunner.Image(tmp_path, "amd64", "bookworm")

    class Probe(vmrunner.VM):
        def __init__(self, **kw):
            kernel = vmrunner.Kernel("6.1", "6.1.0-rt", tmp_path / "vmlinuz", tmp_path / "initrd")
            self.__dict__.update(image=image, root=tmp_path / "layer.qcow2", making_layer=False,
                                 icount=None, extra_qemu=[], boot_snapshots=True, kernel=kernel,
                                 hold=False)
            self.__dict__.update(kw)

        def _make_snapshot(self, snap):
            snap.dir.mkdir(exist_ok=True)
            snap.state.write_bytes(b"saved")
            snap.disk.write_bytes(b"disk")

        def _qemu_cmd(self, payload, ctl):
            return ["qemu", "-append", "root=/dev/vda" + (" irqres_vm.hold" if self.hold else "")]

    _layer(tmp_path).replace(tmp_path / "layer.qcow2")
    assert Probe(workdir=tmp_path)._snapshot(True) is not None
    assert Probe(workdir=tmp_path)._snapshot(False) is None  # a layer's boot
    assert Probe(workdir=tmp_path, boot_snapshots=False)._snapshot(True) is None
    assert Probe(workdir=tmp_path, icount="shift=3")._snapshot(True) is None
    assert Probe(workdir=tmp_path, extra_qemu=["-drive", "x"])._snapshot(True) is None
    assert Probe(workdir=tmp_path, root=None)._snapshot(True) is None
    arm = vmrunner.Image(tmp_path, "arm64", "arm64")
    assert Probe(workdir=tmp_path, image=arm)._snapshot(True) is None


def test_the_generator_holds_only_when_asked_and_before_it_reads_the_payload():
    text = GENERATOR.read_text()
    hold = text.index(f"grep -qw {bootsnap.HOLD_ARG} /proc/cmdline")
    assert hold < text.index("mount -t ext4 $dev")
    # the blocks the initramfs read of the snapshot's payload disk are dropped
    assert text.index("blockdev --flushbufs $dev") < text.index("mount -t ext4 $dev")


@pytest.mark.parametrize("console,restored,why", [
    ("Welcome to Debian\n---- irqres-vm: restored ----\n", True, True),
    ("... irqres-vm: scenario boot_basics starts\n", True, False),
    ("Welcome to Debian\n", False, False),
], ids=["restored-failed-before-its-scenario", "restored-failed-in-it", "cold"])
def test_a_restored_guest_that_failed_before_its_scenario_boots_cold(console, restored, why):
    vm = vmrunner.VM.__new__(vmrunner.VM)
    vm.restored_from = "abc" if restored else None
    vm.boot_snapshots = True
    reason = vm._restore_failed(vmrunner.VMError("g: guest left no result.json", console))
    assert (reason is not None) == why
    assert vm.boot_snapshots is not why
    if why:
        assert "boot snapshot abc" in reason


class _Scripted(vmrunner.VM):
    """Boots scripted as (started from a snapshot?, console or None for a finished boot)."""

    def __init__(self, workdir: Path, boots: list[tuple[bool, str | None]]):
        self.workdir, self.name, self.script, self.boots = workdir, "scripted", boots, []
        self.boot_snapshots = True

    def _run_once(self) -> vmrunner.Result:
        restored, console = self.script[len(self.boots)]
        self.boots.append(self.boot_snapshots)
        self.restored_from = "k3" if restored and self.boot_snapshots else None
        if console is not None:
            (self.workdir / "console.log").write_text(console)
            raise vmrunner.VMError("scripted: guest left no result.json", console)
        return vmrunner.Result(self.name, None, {}, self.workdir, "", 1.0, [])


def test_the_cold_boot_after_a_failed_restore_is_the_result(tmp_path):
    vm = _Scripted(tmp_path, [(True, "Welcome to Debian\n"), (False, None)])
    res = vm.run()
    assert vm.boots == [True, False]  # the second boot did without snapshots
    assert res.boot_snapshot is None
    assert "boot snapshot k3 failed" in res.retried


def test_a_restored_guest_that_failed_in_its_scenario_is_not_booted_again(tmp_path):
    vm = _Scripted(tmp_path, [(True, "irqres-vm: scenario shell starts\n"), (True, None)])
    with pytest.raises(vmrunner.VMError):
        vm.run()
    assert vm.boots == [True]
