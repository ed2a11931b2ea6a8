#!/usr/bin/env python3
"""Writes the fuzz harnesses' seed corpora (tests/fuzz/corpus/NAME/) from files kept in
the tree: the shipped profiles, the profile fixtures and the YAML of docs/profile.md,
the duration grammar's cases, the requests of docs/protocol.md and the C tests, state
files in the format state.c documents, and the /proc and /sys fixture trees.

Run from anywhere after changing those sources: tests/fuzz/make-seeds.py (the corpora
are committed, so that a fuzz run starts from the same place on every machine).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fuzz" / "corpus"
FIX = ROOT / "tests" / "c" / "fixtures"

# the file order of fuzz_procfs.c: the first byte of an input picks one
PROCFS_FILES = ["stat", "status", "cgroup", "schedstat", "interrupts", "actions", "online",
                "sched_rt_runtime_us", "effective_affinity_list"]


def put(name: str, data: bytes) -> None:
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def profiles() -> None:
    for p in sorted((ROOT / "profiles").glob("*.yaml")) + sorted(
            (FIX / "profile").glob("*.yaml")):
        put("profile", p.read_bytes())
    for block in re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "profile.md").read_text(),
                            re.S):
        put("profile", block.encode())


def units() -> None:
    for line in (ROOT / "tests" / "data" / "units" / "durations-parse.txt").read_text(
            encoding="utf-8").splitlines():
        if line.startswith("|"):
            put("units", line[1:line.rindex("|")].encode())


def requests() -> None:
    words = set()
    for src in (ROOT / "tests" / "c" / "test_ctl.c", ROOT / "docs" / "protocol.md"):
        text = src.read_text(errors="replace")
        words.update(re.findall(r'"((?:ping|status|stats|set-budget|plan|apply|restore)'
                                r'(?: [^"\\]*)?)', text))
    words.update(["ping", "status", "stats", "restore", "set-budget nic 2ms 10ms",
                  "set-budget pid:4242 500us", "plan /etc/irqres/nic.yaml",
                  "apply /etc/irqres/caf\u00e9.yaml", "set-budget n 1.5ms 2.0ms\r"])
    for w in sorted(words):
        put("ctl", w.encode())


def states() -> None:
    put("state", b"# irqres state 1\ncpuset_added\nrt_runtime_us 950000\n"
                 b"partition irqres.cpu0 created=1\n"
                 b"thread pid=105 start=170 comm=irq/11-eth0 policy=fifo priority=50 nice=0 "
                 b"runtime=0 deadline=0 period=0 flags=0 cgroup=/ affinity=0 "
                 b"partition=irqres.cpu0\n")
    put("state", b"# irqres state 1\nthread pid=7 start=9 comm=a%20b policy=other priority=0 "
                 b"nice=-5 runtime=0 deadline=0 period=0 flags=0 cgroup=/user.slice/x "
                 b"affinity=0-3,6 partition=\n"
                 b"thread pid=8 start=9 comm=d policy=deadline priority=0 nice=0 "
                 b"runtime=2000000 deadline=10000000 period=10000000 flags=0 cgroup= "
                 b"affinity=1 partition=\nrt_runtime_us -1\n")
    put("state", b"thread pid=abc start=1 policy=fifo\npartition irqres.cpu0 created=0\n"
                 b"\n# comment\nthread pid=9 start=9\n")
    put("state", b"# irqres state 1\npartition irqres.cpu2 created=1\n"
                 b"owed pid=30 start=88 comm=irq/24-virtio0- cpus=2 seen=0-1,3\n"
                 b"owed pid=31 start=90 comm=irq/9-acpi cpus=0 seen=\n")


def bounded_profiles() -> None:
    """Profiles past the bounds on one profile's work (yamlmap.h, profile.h)."""
    put("profile", b"version: 1\ntargets: " + b"[" * 40000 + b"]" * 40000 + b"\n")
    put("profile", b"version: 1\ntargets: " + b"{a: " * 5000 + b"1" + b"}" * 5000 + b"\n")
    put("profile", b"version: 1\ntargets:\n- name: nic\n  runtime: 1ms\n  period: 10ms\n"
                   b"  irq: [" + b",".join(str(i).encode() for i in range(20000)) + b"]\n")
    put("profile", b'version: 1\ntargets:\n- name: a\n  task: {comm: "x\\0zz"}\n'
                   b"  runtime: 1ms\n  period: 10ms\n")


def sealed(*records: str) -> bytes:
    """A version 2 state file: each record with its CRC-32 (stateline.h)."""
    return ("# irqres state 2\n" + "".join(
        f"{r} crc32={zlib.crc32(r.encode()):08x}\n" for r in records)).encode()


def sealed_states() -> None:
    thread = ("thread pid=105 start=170 comm=irq/11-eth0 policy=fifo priority=50 nice=0 "
              "runtime=0 deadline=0 period=0 flags=0 cgroup=/ affinity=0 "
              "partition=irqres.cpu0")
    whole = sealed("cpuset_added", "rt_runtime_us 950000", "partition irqres.cpu0 created=1",
                   thread, "owed pid=30 start=88 comm=irq/24-virtio0- cpus=2 seen=0-1,3")
    put("state", whole)
    put("state", whole[:-9])                                # torn: the last write cut
    put("state", whole.replace(b"policy=fifo", b"policy=fifx"))  # a byte changed
    put("state", b"# irqres state 2\n")                    # no record
    put("state", b"")


def procfs() -> None:
    idx = {n: i for i, n in enumerate(PROCFS_FILES)}
    for p in sorted(FIX.rglob("*")):
        if p.is_file() and p.name in idx:
            put("procfs", bytes([idx[p.name]]) + p.read_bytes())
    for online in (b"0-1\n", b"0\n", b"0-3,8-11\n", b"\n"):
        put("procfs", bytes([idx["online"]]) + online)
    put("procfs", bytes([idx["actions"]]) + b"eth0,uhci_hcd:usb3\n")
    put("procfs", bytes([idx["sched_rt_runtime_us"]]) + b"-1\n")


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    profiles()
    units()
    requests()
    states()
    sealed_states()
    bounded_profiles()
    procfs()
    for d in sorted(OUT.iterdir()):
        print(f"{d.name}: {len(list(d.iterdir()))} seeds")


if __name__ == "__main__":
    main()
