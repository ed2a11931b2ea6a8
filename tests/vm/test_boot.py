"""Scenario 0: the guest boots Debian's PREEMPT_RT kernel and can run the project."""

import re
import subprocess
import time

import pytest
import vmrunner

pytestmark = [pytest.mark.vm, pytest.mark.slow]


@pytest.mark.arm64
@pytest.mark.kernels_too("7.3")  # PREEMPT_RT from mainline: no /sys/kernel/realtime
def test_rt_kernel_nic_thread_and_python_stack(boot, nic_thread, guest_image):
    res = boot("boot_basics")
    d = res.data
    assert "-rt-" in d["uname"]["release"], d["uname"]
    assert "PREEMPT_RT" in d["uname"]["version"], d["uname"]
    # /sys/kernel/realtime came with the out-of-tree RT patches (6.1, Debian's 6.12.95);
    # 7.x builds PREEMPT_RT from mainline alone, without it: the version above says it
    if res.kernel.label.startswith("7."):
        assert d["realtime"] is None, d["realtime"]
    else:
        assert d["realtime"] == "1"
    nic = [t for t in d["threads"] if re.fullmatch(nic_thread, t["comm"])]
    assert len(nic) == 1, [t["comm"] for t in d["threads"]]
    assert nic[0]["sched"]["policy"] == "fifo"
    assert nic[0]["sched"]["priority"] == 50
    # the guest's libraries are its Debian release's (bookworm's the oldest the project
    # supports)
    numpy_v = d["versions"][0]
    assert numpy_v.startswith(vmrunner.IMAGES[guest_image.name].numpy + "."), d["versions"]
    # the checkout's Debian package, installed by dpkg with only the image's packages to
    # meet its Depends, imports with them and runs on the system python3
    install_log = (res.out / "install.log").read_text()
    assert d["package"]["out"].startswith("install ok installed"), (d["package"], install_log)
    assert d["which"] == {"irqres": "/usr/bin/irqres", "irqresd": "/usr/sbin/irqresd"}, d
    # dh-python writes "#!/usr/bin/python3" on Debian 12, "#! /usr/bin/python3" on 13
    assert d["shebang"].replace(" ", "") == "#!/usr/bin/python3", d["shebang"]
    assert d["import_units"]["rc"] == 0, d["import_units"]
    assert "/usr/lib/python3/dist-packages/irqres/" in d["import_units"]["out"]
    assert d["cli_version"]["rc"] == 0 and "irqres, version" in d["cli_version"]["out"]
    assert "cpuset" in (d["cgroup_controllers"] or "")
    assert "10.0.2.15" in d["eth0"]["out"]


def test_a_package_the_image_cannot_take_is_refused_by_dpkg(image, tmp_path):
    """The layer is made by dpkg in the image itself: a package whose Depends the image
    does not meet is refused there, the error carries dpkg's words, and no layer is left
    for a guest to boot."""
    tree = tmp_path / "pkg"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        "Package: irqres\nVersion: 0.0.1\nArchitecture: amd64\n"
        "Maintainer: irqres tests <irqres@localhost>\n"
        "Depends: irqres-absent-dependency\nDescription: unmet Depends\n")
    stage = vmrunner.Stage(tmp_path / "stage")
    stage.root.mkdir()
    subprocess.run(["dpkg-deb", "-b", "--root-owner-group", str(tree),
                    str(stage.root / "irqres_0.0.1_amd64.deb")], check=True,
                   capture_output=True)
    before = set((image.path / "layers").glob("*.qcow2"))
    with pytest.raises(vmrunner.VMError) as err:
        vmrunner.installed_layer(image, stage)
    said = str(err.value)
    assert "layer irqres_0.0.1_amd64.deb: dpkg did not install the package" in said, said
    assert "depends on irqres-absent-dependency; however:" in said, said
    assert set((image.path / "layers").glob("*.qcow2")) == before
    assert not list((image.path / "layers").glob("layer-*"))


@pytest.mark.kernel_independent("the snapshot is QEMU's and the payload generator's, the "
                                "same on every kernel; every guest of the suite on 6.1 and "
                                "7.3 starts from one too")
# (the name is short: QEMU's sockets live in the test's work directory, and a Unix socket's
# path must stay under 108 bytes)
def test_snapshot_guests_read_own_payloads(boot, tmp_path):
    """Guests of one configuration start from one saved boot (bootsnap), each with its
    own payload disk: each reads its own profile, not the blocks the snapshot's boot read
    of another disk, its clock is the host's time of day, and a guest booted cold without
    the snapshot reads the same."""
    results = []
    for n, snapshots in ((1, True), (2, True), (3, False)):
        profile = tmp_path / f"profile{n}.yaml"
        profile.write_text(f"# payload {n}\ntargets: []\n")
        res = boot("shell", profile=profile, boot_snapshots=snapshots)
        results.append((res, time.time()))
    (a, _), (b, b_end), (cold, _) = results
    assert a.boot_snapshot is not None and a.boot_snapshot == b.boot_snapshot
    assert cold.boot_snapshot is None
    assert [r.data["profile"].splitlines()[0] for r, _ in results] == [
        "# payload 1", "# payload 2", "# payload 3"]
    assert f"restored from boot snapshot {a.boot_snapshot}" in b.console
    # the saved guest's clock was the snapshot's: the generator set it from the host's
    assert abs(b.data["time_s"] - b_end) < 300, (b.data["time_s"], b_end)
    # the kernel booted once for both: the same boot messages, to the timestamp
    boot_line = [ln for ln in a.data["dmesg"]["out"].splitlines() if "Run /init" in ln]
    assert boot_line and boot_line[0] in b.data["dmesg"]["out"]
    assert boot_line[0] not in cold.data["dmesg"]["out"]
