"""The harness's own rules, checked without booting a guest."""

from __future__ import annotations

from pathlib import Path

import pytest
import vmrunner

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
