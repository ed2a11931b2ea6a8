"""The harness's own rules, checked without booting a guest."""

from __future__ import annotations

import importlib.util
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import vmrunner
from qemu_state import qemu_state, vcpus

# The console of a 6.12 guest that died while irqresd turned the cpuset controller on:
# the kernel trapped on a live-patching int3 that was already gone from memory.
CONSOLE = (Path(__file__).parent / "data" / "int3-oops-console.txt").read_text()


def test_a_patching_int3_names_the_function():
    assert vmrunner.patching_oops(CONSOLE) == "___slab_alloc+0x656/0xc90"


def test_an_int3_still_in_memory_is_a_real_trap():
    # The byte before RIP is the int3 itself: code that traps on purpose, not the race.
    assert "e9 <e5>" in CONSOLE
    assert vmrunner.patching_oops(CONSOLE.replace("e9 <e5>", "cc <e5>")) is None


def test_other_deaths_are_not_retried():
    assert vmrunner.patching_oops("") is None
    gpf = CONSOLE.replace("Oops: int3", "Oops: general protection fault")
    assert vmrunner.patching_oops(gpf) is None
    assert vmrunner.patching_oops(CONSOLE.replace("Code: ", "Kode: ")) is None


class _Guest(vmrunner.VM):
    """A VM whose boots are scripted: each entry of ``consoles`` is one boot's console,
    None for a boot that finishes."""

    def __init__(self, workdir: Path, consoles: list[str | None]):
        self.workdir = workdir
        self.name = "scripted"
        self.consoles = consoles
        self.boots = 0

    def _run_once(self) -> vmrunner.Result:
        console = self.consoles[self.boots]
        self.boots += 1
        if console is not None:
            (self.workdir / "console.log").write_text(console)
            raise vmrunner.VMError("scripted: guest left no result.json", console)
        return vmrunner.Result(self.name, None, {}, self.workdir, "", 1.0, [])


def test_a_patching_death_boots_the_guest_once_more(tmp_path):
    vm = _Guest(tmp_path, [CONSOLE, None])
    res = vm.run()
    assert vm.boots == 2
    assert "___slab_alloc" in res.retried
    assert (tmp_path / "console.attempt1.log").read_text() == CONSOLE
    assert "booted again" in vmrunner.timing_label(res)


def test_two_patching_deaths_boot_a_third_guest(tmp_path):
    vm = _Guest(tmp_path, [CONSOLE, CONSOLE, None])
    res = vm.run()
    assert vm.boots == 3
    assert res.retried.count("___slab_alloc") == 2
    assert (tmp_path / "console.attempt2.log").read_text() == CONSOLE


def test_a_third_patching_death_fails(tmp_path):
    vm = _Guest(tmp_path, [CONSOLE, CONSOLE, CONSOLE, None])
    with pytest.raises(vmrunner.VMError):
        vm.run()
    assert vm.boots == vmrunner.VM.BOOTS_AFTER_PATCHING_DEATHS == 3


def test_any_other_death_fails_at_once(tmp_path):
    vm = _Guest(tmp_path, ["Kernel panic - not syncing: VFS: Unable to mount root fs", None])
    with pytest.raises(vmrunner.VMError):
        vm.run()
    assert vm.boots == 1


def _image(tmp_path: Path, arch: str) -> vmrunner.Image:
    (tmp_path / "kernels").write_text("6.1 6.1.0-50-rt-arm64\n")
    return vmrunner.Image(tmp_path, arch)


def test_the_arm64_guest_boots_on_the_virt_board(tmp_path):
    """arm64: QEMU's virt board with an emulated CPU, the console on its only UART, the
    control channel on a virtio serial port, the e1000 where the board puts it."""
    vm = vmrunner.VM(_image(tmp_path, "arm64"), None, "boot_basics", workdir=tmp_path)
    cmd = vm._qemu_cmd(tmp_path / "payload.img", tmp_path / "ctl.sock")
    assert cmd[0] == "qemu-system-aarch64"
    assert cmd[cmd.index("-M") + 1].startswith("virt")
    assert cmd[cmd.index("-kernel") + 1] == str(tmp_path / "vmlinuz-6.1.0-50-rt-arm64")
    append = cmd[cmd.index("-append") + 1]
    assert "console=ttyAMA0" in append and "ttyS0" not in append
    assert "acpi_irq_nobalance" not in append and "net.ifnames=0" in append
    assert "virtserialport,chardev=ctl,name=irqres.ctl" in cmd
    assert f"socket,id=ctl,path={tmp_path / 'ctl.sock'},server=on,wait=off" in cmd
    assert cmd.count("-serial") == 1, cmd
    assert cmd[cmd.index("-qmp") + 1] == f"unix:{tmp_path / 'qmp.sock'},server=on,wait=off"
    e1000 = [a for a in cmd if a.startswith("e1000,")]
    assert e1000 == ["e1000,netdev=n0,mitigation=off"], cmd


def test_the_amd64_guest_keeps_its_pc(tmp_path):
    vm = vmrunner.VM(_image(tmp_path, "amd64"), None, "boot_basics", workdir=tmp_path)
    cmd = vm._qemu_cmd(tmp_path / "payload.img", tmp_path / "ctl.sock")
    assert cmd[0] == "qemu-system-x86_64" and "-M" not in cmd
    assert "console=ttyS0,115200" in cmd[cmd.index("-append") + 1]
    assert f"unix:{tmp_path / 'ctl.sock'},server=on,wait=off" in cmd
    assert "e1000,netdev=n0,addr=0x3,mitigation=off" in cmd
    assert cmd[cmd.index("-qmp") + 1] == f"unix:{tmp_path / 'qmp.sock'},server=on,wait=off"


# QEMU's own word on a guest killed at its timeout (qemu_state): a real QEMU with no
# guest to boot runs its firmware, which halts both vCPUs
_BARE = {"amd64": ["qemu-system-x86_64", "-accel", "tcg", "-smp", "2", "-m", "64"],
         "arm64": ["qemu-system-aarch64", "-M", "virt", "-cpu", "max", "-smp", "2"]}


@pytest.mark.parametrize("arch", sorted(_BARE))
def test_qemu_describes_its_vcpus_over_qmp(tmp_path, arch):
    if shutil.which(_BARE[arch][0]) is None:
        dep = "vm" if arch == "amd64" else "vm-arm64"
        pytest.skip(f"{_BARE[arch][0]} is not installed (scripts/install-deps.sh {dep})")
    sock = tmp_path / "qmp.sock"
    proc = subprocess.Popen([*_BARE[arch], "-display", "none", "-nodefaults",
                             "-qmp", f"unix:{sock},server=on,wait=off"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        state = qemu_state(sock, gap_s=0.2)
    finally:
        proc.kill()
        proc.wait()
    assert state.startswith("QEMU status running; sample 1: cpu0 "), state
    pc = r"(?:RIP|EIP)=[0-9a-f]+ CPL=\d HLT=[01]" if arch == "amd64" else r"PC=[0-9a-f]+ EL\dh"
    for n in ("1", "2"):
        assert re.search(rf"sample {n}: cpu0 {pc}, cpu1 {pc}(;|$)", state), state


def test_a_qemu_that_does_not_answer_is_said_so(tmp_path):
    assert "did not answer on qmp.sock" in qemu_state(tmp_path / "qmp.sock")
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(tmp_path / "mute.sock"))
    mute.listen(1)  # accepts, never greets
    try:
        said = qemu_state(tmp_path / "mute.sock", timeout_s=0.5)
    finally:
        mute.close()
    assert said == "QEMU did not answer on mute.sock: timed out", said


def test_registers_of_each_vcpu_are_read_from_the_monitor():
    x86 = ("CPU#0\nRAX=0 RBX=1\nRIP=ffffffff81c0e0a2 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 "
           "SMM=0 HLT=1\nES =0000\nCPU#1\nRIP=00007f3a12345678 RFL=00000202 CPL=3 II=0 "
           "HLT=0\n")
    assert vcpus(x86) == ["cpu0 RIP=ffffffff81c0e0a2 CPL=0 HLT=1",
                          "cpu1 RIP=00007f3a12345678 CPL=3 HLT=0"]
    arm = "CPU#0\n PC=ffff800008012345 X00=0\nPSTATE=600003c5 -Z-- EL1h     FPCR=0\n"
    assert vcpus(arm) == ["cpu0 PC=ffff800008012345 EL1h"]
    assert vcpus("") == []


def test_a_guest_killed_at_its_timeout_is_described_first(tmp_path):
    vm = _Guest(tmp_path, [])
    console = tmp_path / "console.log"
    console.write_text("Starting irqres VM scenario...\n")
    vm.timeout_s, vm.POLL_S, vm.OOPS_QUIET_S = 0.3, 0.1, 600
    vm.started = time.monotonic()
    vm.proc = subprocess.Popen(["sleep", "600"])
    timed_out, dead = vm._wait(console)
    assert timed_out and dead is None and vm.proc.returncode is not None
    assert vm.last_state.startswith("QEMU did not answer on qmp.sock"), vm.last_state


def test_icount_is_refused_on_arm64(tmp_path):
    vm = vmrunner.VM(_image(tmp_path, "arm64"), None, "x", workdir=tmp_path,
                     icount="shift=3")
    with pytest.raises(vmrunner.VMError, match="-icount is not supported on the arm64"):
        vm._qemu_cmd(tmp_path / "payload.img", tmp_path / "ctl.sock")


# The console of a 6.1 guest whose CPU 0 stopped passing through quiescent states (CI, a
# start-up kill in the partition fault campaign): the kernel repeated its stall report
# every ~63 s until the run's timeout.
STALL = (Path(__file__).parent / "data" / "rcu-stall-console.txt").read_text()


def test_a_lasting_rcu_stall_is_found_from_its_first_report():
    stall = vmrunner.kernel_stall(STALL)
    assert stall is not None
    assert stall.startswith("[   92.231365] rcu: INFO: rcu_preempt self-detected stall on CPU")
    assert len(stall.splitlines()) <= 80


def test_fewer_reports_than_the_limit_are_not_a_stall():
    # the guest may recover from a report or two (a vCPU the host did not run for long)
    reports = [i for i, ln in enumerate(STALL.splitlines()) if "self-detected stall" in ln]
    upto = "\n".join(STALL.splitlines()[:reports[vmrunner.STALL_REPORTS - 1]])
    assert vmrunner.kernel_stall(upto) is None
    assert vmrunner.kernel_stall("") is None


def _waiting(tmp_path: Path, console_text: str, quiet_s: float):
    import subprocess
    import time
    vm = _Guest(tmp_path, [])
    console = tmp_path / "console.log"
    console.write_text(console_text)
    vm.timeout_s = 600
    vm.POLL_S = 0.1
    vm.OOPS_QUIET_S = quiet_s
    vm.started = time.monotonic()
    vm.proc = subprocess.Popen(["sleep", "600"])
    return vm, console


def test_a_stalled_guest_is_killed_before_its_timeout(tmp_path):
    import time
    vm, console = _waiting(tmp_path, STALL, quiet_s=600)
    timed_out, dead = vm._wait(console)
    assert not timed_out and dead is not None and dead[0].startswith("stalled")
    assert vm.proc.returncode is not None and time.monotonic() - vm.started < 60


def test_a_stall_boots_the_guest_once_more_but_only_once(tmp_path):
    vm = _Guest(tmp_path, [STALL, None])
    res = vm.run()
    assert vm.boots == 2 and "stalled" in res.retried
    assert (tmp_path / "console.attempt1.log").read_text() == STALL
    vm = _Guest(tmp_path, [STALL, STALL, None])
    with pytest.raises(vmrunner.VMError):
        vm.run()
    assert vm.boots == 2


def test_a_guest_whose_scenario_still_writes_between_reports_is_not_stuck():
    # An experiment's busy sender can make the kernel report stalls while the guest gets
    # on with its work: the scenario's lines between the reports say so.
    lines = STALL.splitlines()
    busy = []
    for ln in lines:
        busy.append(ln)
        if "self-detected stall" in ln:
            busy.append("[  100.000000] python3[326]: irqres-vm: row 3 done")
    assert vmrunner.kernel_stall("\n".join(busy)) is None
    # ...and one that stops writing is stuck from the first report after its last line
    cut = len(busy) - 1 - next(i for i, ln in enumerate(reversed(busy)) if "python3[" in ln)
    tail = busy[:cut + 1] + [ln for ln in lines if "stall" in ln or "rcu:" in ln]
    stall = vmrunner.kernel_stall("\n".join(tail))
    assert stall is not None and stall.splitlines()[0].endswith("self-detected stall on CPU")


# The console of a 6.12.95 guest whose kernel oopsed (CI): a NULL dereference in the fair
# class's pick_task_fair() on ksoftirqd/0 while the unit's ExecStopPost restored after a
# kill; the guest printed nothing more until the run's timeout.
SCHED_OOPS = (Path(__file__).parent / "data" / "sched-oops-console.txt").read_text()


def test_an_oops_is_found_and_named_by_its_site():
    oops = vmrunner.kernel_oops(SCHED_OOPS)
    assert oops is not None and oops.splitlines()[0].endswith(
        "BUG: kernel NULL pointer dereference, address: 0000000000000051")
    assert vmrunner.oops_site(oops) == "pick_task_fair+0x53/0x140"
    assert vmrunner.kernel_oops(STALL) is None and vmrunner.kernel_oops("") is None
    # a WARNING is not an oops
    assert vmrunner.kernel_oops("[ 1.0] WARNING: CPU: 0 PID: 1 at kernel/x.c:1 f+0x1/0x2") is None


def test_an_oopsed_guest_that_falls_silent_is_killed_before_its_timeout(tmp_path):
    import time
    vm, console = _waiting(tmp_path, SCHED_OOPS, quiet_s=0.5)
    timed_out, dead = vm._wait(console)
    assert not timed_out and dead is not None
    assert "oopsed in pick_task_fair+0x53/0x140" in dead[0]
    assert vm.proc.returncode is not None and time.monotonic() - vm.started < 60


def test_an_oopsed_guest_that_goes_on_writing_is_waited_for(tmp_path):
    # an oops that killed one task leaves the guest working: it is not dead while it writes
    import threading
    import time
    vm, console = _waiting(tmp_path, SCHED_OOPS, quiet_s=1.0)
    stop = time.monotonic() + 3.0

    def writes():
        while time.monotonic() < stop:
            with console.open("a") as f:
                f.write("[  40.0] python3[386]: irqres-vm: still here\n")
            time.sleep(0.2)
        vm.proc.terminate()

    t = threading.Thread(target=writes)
    t.start()
    timed_out, dead = vm._wait(console)
    t.join()
    assert not timed_out and dead is None
    assert time.monotonic() >= stop


def test_an_oops_boots_the_guest_once_more_and_shares_the_once_with_a_stall(tmp_path):
    vm = _Guest(tmp_path, [SCHED_OOPS, None])
    res = vm.run()
    assert vm.boots == 2 and "oopsed in pick_task_fair" in res.retried
    for consoles in ([SCHED_OOPS, SCHED_OOPS, None], [STALL, SCHED_OOPS, None],
                     [SCHED_OOPS, STALL, None]):
        vm = _Guest(tmp_path, consoles)
        with pytest.raises(vmrunner.VMError):
            vm.run()
        assert vm.boots == 2


def _layer_fixture(tmp_path: Path, logs: list[str]):
    """An image whose disk is a small raw file, a stage with a package, and VM.boot_layer
    replaced by one that returns the next of ``logs`` (what install.sh would have written)
    and counts its boots; qemu-img is the real one."""
    image = tmp_path / "image"
    image.mkdir()
    (image / "disk.img").write_bytes(b"\0" * 65536)
    (image / "kernels").write_text("6.1 6.1.0-test\n")
    stage = vmrunner.Stage(tmp_path / "stage")
    stage.root.mkdir()
    (stage.root / "irqres_0.1.0_amd64.deb").write_bytes(b"the package")
    boots: list[Path] = []

    def boot_layer(vm):
        assert vm.making_layer and vm.root.parent.parent == image / "layers"
        assert "snapshot" not in vm._root_drive()
        boots.append(vm.root)
        return logs[len(boots) - 1]
    return vmrunner.Image(image), stage, boots, boot_layer


def test_a_package_is_installed_into_a_layer_once(tmp_path, monkeypatch):
    image, stage, boots, boot_layer = _layer_fixture(tmp_path, ["layer installed\n"])
    monkeypatch.setattr(vmrunner.VM, "boot_layer", boot_layer)
    layer = vmrunner.installed_layer(image, stage)
    assert layer.parent == image.path / "layers" and layer.suffix == ".qcow2"
    info = subprocess.run(["qemu-img", "info", "--output=json", str(layer)],
                          capture_output=True, text=True, check=True).stdout
    assert f'"backing-filename": "{image.disk}"' in info, info
    assert vmrunner.installed_layer(image, stage) == layer and len(boots) == 1
    # no temporary directory is left beside it
    assert sorted(p.name for p in layer.parent.iterdir()) == [".lock", layer.name]
    # a scenario's guest boots it in snapshot mode: its writes never reach the layer
    vm = vmrunner.VM(image, stage, "x", workdir=tmp_path / "vm")
    vm.root = layer
    assert vm._root_drive() == f"file={layer},if=virtio,format=qcow2,snapshot=on"
    assert not (tmp_path / "vm" / "payload").exists()
    payload = vm._payload()
    assert payload.is_file() and not (tmp_path / "vm" / "payload" / "stage").exists()


def test_another_package_gets_its_own_layer(tmp_path, monkeypatch):
    image, stage, boots, boot_layer = _layer_fixture(tmp_path, ["layer installed\n"] * 2)
    monkeypatch.setattr(vmrunner.VM, "boot_layer", boot_layer)
    first = vmrunner.installed_layer(image, stage)
    (stage.root / "irqres_0.1.0_amd64.deb").write_bytes(b"the next package")
    second = vmrunner.installed_layer(image, stage)
    assert second != first and first.is_file() and second.is_file() and len(boots) == 2


def test_a_package_dpkg_refuses_leaves_no_layer(tmp_path, monkeypatch):
    refused = "dpkg -i irqres_0.1.0_amd64.deb: 03:19:58.1\ninstall.sh: dpkg -i ... failed\n"
    image, stage, boots, boot_layer = _layer_fixture(tmp_path, [refused, "layer installed"])
    monkeypatch.setattr(vmrunner.VM, "boot_layer", boot_layer)
    with pytest.raises(vmrunner.VMError, match=r"(?s)layer irqres_0\.1\.0_amd64\.deb: dpkg "
                       r"did not install.*install\.sh: dpkg -i \.\.\. failed"):
        vmrunner.installed_layer(image, stage)
    assert [p.name for p in (image.path / "layers").iterdir()] == [".lock"]
    # nothing of the refusal is kept: the next session tries again
    assert vmrunner.installed_layer(image, stage).is_file() and len(boots) == 2


def test_without_a_package_the_guest_boots_the_bare_image(tmp_path):
    image, stage, _, _ = _layer_fixture(tmp_path, [])
    assert vmrunner.installed_layer(image, None) is None
    (stage.root / "irqres_0.1.0_amd64.deb").unlink()
    assert vmrunner.installed_layer(image, stage) is None
    vm = vmrunner.VM(image, None, "x", workdir=tmp_path / "vm")
    assert vm._root_drive() == f"file={image.disk},if=virtio,format=raw,snapshot=on"


def test_the_boot_bench_refuses_bad_options_naming_them():
    script = vmrunner.REPO / "bench" / "vmboot" / "compare.py"
    for args, says in ((["--rounds", "0"], "--rounds: at least 1, not 0"),
                       (["--image", "sparc"], "--image: invalid choice: 'sparc'"),
                       (["--image", "arm64", "--kernels", "6.1,7.3"],
                        "--kernels: 7.3 not among the arm64 image's kernels (6.1, 6.12)"),
                       (["--kernels", "7.3"],
                        "--kernels: 7.3 not among the bookworm image's kernels (6.1, 6.12)"),
                       (["--ways", "layer,layer"],
                        "--ways: two different ways of in-guest, layer, snapshot, not "
                        "'layer,layer'"),
                       (["--kernels", ","],
                        "--kernels: no kernel given (the bookworm image has 6.1, 6.12)")):
        out = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2 and says in out.stderr, out.stderr


def test_the_boot_bench_reads_the_install_step_from_install_log():
    # by path: bench/vmgroups has a compare.py too
    spec = importlib.util.spec_from_file_location(
        "vmboot_compare", vmrunner.REPO / "bench" / "vmboot" / "compare.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    install_seconds = bench.install_seconds
    log = ("payload install: 03:27:40\ndpkg -i irqres_0.1.0_amd64.deb: 03:27:41.2\n"
           "payload install done: 03:27:48\n")
    assert install_seconds(log) == 8
    assert install_seconds("payload install: 03:27:40\n") is None


EARLY = ("[    0.796465]  #3\n[    1.142809] acpi PNP0A03:00: fail to add MMCONFIG "
         "information, can't access extended PCI configuration space under this bridge.\n")


def test_a_guest_silent_before_user_space_is_killed_before_its_timeout(tmp_path):
    import time
    vm, console = _waiting(tmp_path, EARLY, quiet_s=600)
    vm.BOOT_QUIET_S = 0.5
    timed_out, dead = vm._wait(console)
    assert not timed_out and dead is not None and "before user space" in dead[0]
    assert vm.proc.returncode is not None and time.monotonic() - vm.started < 60


def test_silence_once_user_space_started_is_not_a_hang_before_user_space(tmp_path):
    vm, console = _waiting(tmp_path, EARLY + "Loading, please wait...\n", quiet_s=600)
    vm.BOOT_QUIET_S, vm.timeout_s = 0.3, 1.5
    timed_out, dead = vm._wait(console)
    assert timed_out and dead is None


STARTED = EARLY + "Welcome to Debian GNU/Linux 12 (bookworm)!\n"
SCENARIO = STARTED + "[   30.1] python3[412]: irqres-vm: scenario boot starts\n"


def test_a_guest_silent_before_its_scenario_is_killed_before_its_timeout(tmp_path):
    import time
    vm, console = _waiting(tmp_path, STARTED, quiet_s=600)
    vm.BOOT_QUIET_S, vm.SCENARIO_QUIET_S = 0.2, 0.5
    timed_out, dead = vm._wait(console)
    assert not timed_out and dead is not None and "before its scenario started" in dead[0]
    assert time.monotonic() - vm.started < 60


@pytest.mark.parametrize("console_text, awaits", [(SCENARIO, True), (STARTED, False)])
def test_silence_is_no_hang_once_the_scenario_runs_nor_in_a_layer_boot(tmp_path,
                                                                      console_text, awaits):
    vm, console = _waiting(tmp_path, console_text, quiet_s=600)
    vm.BOOT_QUIET_S, vm.SCENARIO_QUIET_S, vm.timeout_s = 0.2, 0.3, 1.5
    vm.awaits_scenario = awaits
    timed_out, dead = vm._wait(console)
    assert timed_out and dead is None


class _Hung(_Guest):
    """A scripted guest whose failed boots raise ``message``, killed by the harness (as
    VM._boot does)."""

    def __init__(self, workdir: Path, consoles: list[str | None], message: str):
        super().__init__(workdir, consoles)
        self.message = message

    def _run_once(self) -> vmrunner.Result:
        try:
            return super()._run_once()
        except vmrunner.VMError as err:
            raise vmrunner.VMError(self.message, err.console, killed=True) from None


@pytest.mark.parametrize("message", [
    "scripted: the guest kernel printed nothing for 180s before user space started and "
    "was killed after 190s",
    "scripted: guest did not power off within 900s and was killed"])
def test_a_hang_before_user_space_boots_the_guest_once_more_but_only_once(tmp_path, message):
    vm = _Hung(tmp_path, [EARLY, None], message)
    res = vm.run()
    assert vm.boots == 2 and "hung before user space" in res.retried
    for consoles in ([EARLY, EARLY, None], [STALL, EARLY, None]):
        vm = _Hung(tmp_path, consoles, message)
        with pytest.raises(vmrunner.VMError):
            vm.run()
        assert vm.boots == 2


def test_a_timeout_after_the_scenario_started_is_not_retried(tmp_path):
    vm = _Hung(tmp_path, [SCENARIO, None],
               "scripted: guest did not power off within 900s and was killed")
    with pytest.raises(vmrunner.VMError):
        vm.run()
    assert vm.boots == 1


def test_a_hang_before_the_scenario_boots_the_guest_once_more_but_only_once(tmp_path):
    message = "scripted: guest did not power off within 600s and was killed"
    vm = _Hung(tmp_path, [STARTED, None], message)
    assert "before its scenario" in vm.run().retried and vm.boots == 2
    vm = _Hung(tmp_path, [STARTED, EARLY, None], message)
    with pytest.raises(vmrunner.VMError):
        vm.run()
    assert vm.boots == 2


def test_each_kernel_is_found_in_the_image_of_its_userland():
    assert vmrunner.image_name("amd64", "6.1") == "bookworm"
    assert vmrunner.image_name("amd64", "6.12") == "bookworm"
    assert vmrunner.image_name("amd64", "7.3") == "trixie"
    assert vmrunner.image_name("arm64", "6.12") == "arm64"
    assert vmrunner.KERNELS == ("6.1", "6.12", "7.3")
    with pytest.raises(vmrunner.VMError, match=r"no arm64 image holds a 7\.3 kernel "
                       r"\(the images: bookworm \(amd64\): 6\.1 6\.12; trixie"):
        vmrunner.image_name("arm64", "7.3")


def test_an_unknown_suite_is_refused_by_the_image_build_naming_it():
    out = subprocess.run(["bash", str(vmrunner.HERE / "build-image.sh"), "sid"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out
    assert "build-image: unknown suite sid (bookworm or trixie)" in out.stderr
    assert out.stdout == ""


def test_the_background_build_makes_every_amd64_image_and_counts_failures(monkeypatch):
    asked = []

    def ensure(name):
        asked.append(name)
        if name == "trixie":
            raise vmrunner.VMError("build-image.sh trixie failed with status 1")
        return None

    monkeypatch.setattr(vmrunner, "ensure_image", ensure)
    assert vmrunner.build_images() == 1
    assert asked == [n for n, s in vmrunner.IMAGES.items() if s.arch == "amd64"]
    assert asked == ["bookworm", "trixie"]


def test_the_image_build_command_has_help_and_refuses_a_bad_option():
    script = str(vmrunner.HERE / "vmrunner.py")
    out = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "every amd64 guest image" in out.stdout, out
    out = subprocess.run([sys.executable, script, "--bogus"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "unrecognized arguments: --bogus" in out.stderr, out
