"""The crash campaign's procedure, shared by the host campaign (crash_campaign.py: 20
spawned tasks) and the PREEMPT_RT guest's (tests/vm: the NIC's IRQ thread): irqresd is
SIGKILLed at a random instant of one operation, then recovered the documented way, and
what it manages must be back as it was. Standard library only: the guest's Python runs it
from the VM payload.

Each trial kills irqresd in one phase, chosen in turn:

    start       irqresd -p PROFILE applying at start-up
    apply       an `apply` request (the profile's text) on the socket
    set-budget  the set-budget requests, pipelined
    restore     a `restore` request
    recovery    `irqresd --restore` itself, after an earlier kill left a state file

at a delay drawn uniformly from [0, 1.2 x the phase's measured median duration].
Recovery alternates between the two documented ways (irqresd.service's ExecStopPost and
its next start): `irqresd --restore`, and the next start of irqresd, which restores what
the state file holds before anything else.

After the kills, ``damage_trials`` damages the state file a SIGKILL left (one byte
changed, a torn last write, a cut anywhere, two records glued, an empty, header-only or
garbage file) and checks that ``irqresd --restore`` restores exactly the threads whose
records are intact, exits non-zero naming the problem, and keeps the file as it is; the
original file put back (as an administrator would from a copy), a second --restore must
then put everything back.

A campaign may add phases of its own (the guest's: a link down/up while irqresd follows
the NIC's new thread): an *extra* operation, called like the built-in ones.

What irqresd manages is a *subjects* object: ``changed()`` lists what differs from the
originals (one entry per thread), ``residue()`` anything else left behind (a partition),
``progress(phase)`` how much of the operation had been done at the kill, of ``total``.
"""

from __future__ import annotations

import json
import random
import re
import signal
import socket
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

PHASES = ("start", "apply", "set-budget", "restore", "recovery")
DAMAGES = ("flip", "torn", "cut", "glue", "empty", "header", "garbage")


class Subjects(Protocol):
    total: int

    def changed(self) -> list: ...

    def residue(self) -> list[str]: ...

    def progress(self, phase: str) -> int: ...


class Irqresd:
    """irqresd with its own run directory, without events or rescans (only the campaign's
    operations change anything) unless events: proc connector and rescans as shipped."""

    def __init__(self, binary: Path, run_dir: Path, log: Path, events: bool = False) -> None:
        self.binary = binary
        self.run_dir = run_dir
        self.sock = run_dir / "irqresd.sock"
        self.log = log
        self.events = events
        self.proc: subprocess.Popen | None = None

    def popen(self, *args: str) -> subprocess.Popen:
        quiet = [] if self.events else ["--no-netlink", "--rescan", "0"]
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen([str(self.binary), "--run-dir", str(self.run_dir),
                                          *quiet, *args],
                                         stdout=logf, stderr=subprocess.STDOUT)
        return self.proc

    def connect(self, timeout: float = 10) -> socket.socket:
        end = time.monotonic() + timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            try:
                s.connect(str(self.sock))
                s.sendall(b"ping\n")
                if json.loads(s.makefile("rb").readline())["ok"]:
                    return s
            except (OSError, ValueError):
                s.close()
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"irqresd exited with {self.proc.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > end:
                raise RuntimeError("irqresd does not answer")
            time.sleep(0.002)

    def start(self, *args: str) -> socket.socket:
        self.popen(*args)
        return self.connect()

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def log_since(self, offset: int) -> str:
        with open(self.log, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)

    def restore(self) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), "--run-dir", str(self.run_dir), "--restore"],
                              capture_output=True, text=True, timeout=60, check=False)

    @property
    def state_left(self) -> bool:
        return (self.run_dir / "state").exists()


def send_lines(s: socket.socket, lines: list[str]) -> None:
    s.sendall("".join(line + "\n" for line in lines).encode())


def read_replies(s: socket.socket, n: int) -> list[dict]:
    f = s.makefile("rb")
    return [json.loads(f.readline()) for _ in range(n)]


# An extra phase: (campaign, kill_after) as Campaign.op; it records its duration when
# kill_after is None.
ExtraOp = Callable[["Campaign", "float | None"], None]


class Campaign:
    """Kills ``daemon`` during the phases in turn; ``profile`` is what it applies and
    ``budget`` the set-budget request lines; ``extra`` adds phases after PHASES."""

    def __init__(self, subjects: Subjects, daemon: Irqresd, profile: Path,
                 budget: list[str], seed: int, extra: dict[str, ExtraOp] | None = None) -> None:
        self.subjects = subjects
        self.d = daemon
        self.profile = profile
        self.budget = budget
        self.rng = random.Random(seed)
        self.extra = dict(extra or {})
        self.phases = PHASES + tuple(self.extra)
        self.durations: dict[str, float] = {}
        self.refused = 0        # starts the kernel refused (EBUSY) with nothing changed

    # -- the operations, timed (calibration) or killed at an instant ---------------------
    def op(self, phase: str, kill_after: float | None) -> None:
        """Runs phase; with kill_after (s), SIGKILLs irqresd that long after it began."""
        d = self.d
        if phase in self.extra:
            self.extra[phase](self, kill_after)
            return
        if phase == "start":
            t0 = time.monotonic()
            if kill_after is not None:
                d.popen("-p", str(self.profile))
                self.sleep_until(t0 + kill_after)
                d.kill()
                return
            self.start_applied().close()
            self.durations.setdefault(phase, time.monotonic() - t0)
            assert d.stop() == 0
            return
        if phase == "recovery":
            # an earlier kill left a state file: kill --restore in its turn
            self.start_applied().close()
            d.kill()
            t0 = time.monotonic()
            p = subprocess.Popen([str(d.binary), "--run-dir", str(d.run_dir), "--restore"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if kill_after is not None:
                self.sleep_until(t0 + kill_after)
                p.send_signal(signal.SIGKILL)
                p.wait()
                return
            p.wait()
            self.durations.setdefault(phase, time.monotonic() - t0)
            return
        # the socket phases: a daemon up first (with the profile unless the phase applies it)
        s = d.start() if phase == "apply" else self.start_applied()
        # apply carries the profile's text (docs/protocol.md); send_lines ends it with "\n"
        text = self.profile.read_text().rstrip("\n")
        lines = {"apply": [f"apply {self.profile} {len(text.encode()) + 1}\n{text}"],
                 "set-budget": self.budget, "restore": ["restore"]}[phase]
        t0 = time.monotonic()
        send_lines(s, lines)
        if kill_after is not None:
            self.sleep_until(t0 + kill_after)
            d.kill()
            s.close()
            return
        replies = read_replies(s, len(lines))
        self.durations.setdefault(phase, time.monotonic() - t0)
        s.close()
        bad = [r for r in replies if not r.get("ok")]
        if bad:
            raise RuntimeError(f"{phase}: refused: {bad[0]}\n"
                               f"{self.d.log.read_text(errors='replace')[-2000:]}")
        assert d.stop() == 0

    def start_applied(self, daemon: Irqresd | None = None) -> socket.socket:
        """irqresd -p PROFILE, answering. The kernel may refuse the bandwidth for a moment
        (EBUSY: a task's bandwidth is released only at its 0-lag time, and on a shared
        host other tests hold some): irqresd then exits having changed nothing, which is
        checked and counted, and the start is tried again."""
        d = daemon or self.d
        for _ in range(40):
            off = d.log_size()
            try:
                return d.start("-p", str(self.profile))
            except RuntimeError:
                if "EBUSY" not in d.log_since(off):
                    raise
            self.refused += 1
            left, residue = self.subjects.changed(), self.subjects.residue()
            if left or residue or d.state_left:
                state = (d.run_dir / "state").read_text() if d.state_left else ""
                raise RuntimeError(f"a start refused with EBUSY left something changed: "
                                   f"{left} {residue}; state file: {state!r}\n"
                                   f"{d.log_since(off)[-3000:]}")
            time.sleep(0.5)
        raise RuntimeError("the kernel kept refusing the bandwidth (EBUSY) for 20 s")

    @staticmethod
    def sleep_until(t: float) -> None:
        while (left := t - time.monotonic()) > 0:
            time.sleep(left if left > 0.002 else 0)

    def recover(self, way: str) -> None:
        if way == "restore":
            r = self.d.restore()
            if r.returncode != 0:
                raise RuntimeError(f"irqresd --restore: {r.returncode}: {r.stderr}")
        else:  # the next start restores the state file first
            self.d.start().close()
            assert self.d.stop() == 0

    # -- the state file damaged --------------------------------------------------------
    def damage(self, text: str, kind: str) -> str:
        """The state file's text damaged the way kind says."""
        rng = self.rng
        nl = text.index("\n") + 1                 # the header's end
        if kind == "empty":
            return ""
        if kind == "header":
            return text[:nl]
        if kind == "garbage":
            return "".join(chr(rng.randrange(1, 256)) for _ in range(rng.randrange(1, 300)))
        if kind == "torn":
            last = text.rindex("\n", 0, len(text) - 1) + 1
            return text[:rng.randrange(last + 1, len(text) - 1)]
        if kind == "cut":
            return text[:rng.randrange(nl + 1, len(text) - 1)]
        if kind == "glue":
            ends = [i for i, c in enumerate(text[:-1]) if c == "\n" and i >= nl]
            i = rng.choice(ends)
            return text[:i] + text[i + 1:]
        # flip: one byte of a record (not its newline) becomes another printable one
        i = rng.choice([i for i in range(nl, len(text)) if text[i] != "\n"])
        return text[:i] + rng.choice([c for c in "0123456789abcdefxyz=" if c != text[i]]) \
            + text[i + 1:]

    @staticmethod
    def pid_of(entry: int | str) -> int:
        """The pid of one changed() entry: a pid, or a text naming "[now pid N]" (a
        thread made anew), "(pid N)" or "(tid N)"."""
        if isinstance(entry, int):
            return entry
        m = re.search(r"\[now pid (\d+)\]", entry) or re.search(r"\((?:pid|tid) (\d+)\)", entry)
        return int(m.group(1)) if m else -1

    @staticmethod
    def intact_pids(orig: str, damaged: str) -> set[int]:
        """The pids whose thread record is whole in the damaged text (header intact)."""
        header = orig[:orig.index("\n") + 1]
        if not damaged.startswith(header):
            return set()
        lines = damaged[len(header):].split("\n")
        whole = set(lines[:-1])                 # the last piece has no newline
        return {int(ln.split()[1][4:]) for ln in orig.splitlines()
                if ln.startswith("thread ") and ln in whole}

    def damage_trial(self, kind: str) -> dict | None:
        """One damaged state file and its restore: None when it held, else a failure."""
        self.start_applied().close()
        self.d.kill()
        state = self.d.run_dir / "state"
        orig = state.read_text()
        damaged = self.damage(orig, kind)
        state.write_bytes(damaged.encode("latin-1"))      # one byte per character
        intact = self.intact_pids(orig, damaged)
        r = self.d.restore()
        # a damaged record's thread still holds its partition: the CPUs that takes from
        # the others are not the restore's doing (subjects that know partitions say so)
        changed = getattr(self.subjects, "changed_beside_partitions", self.subjects.changed)()
        left = {self.pid_of(x) for x in changed}
        want_left = {int(ln.split()[1][4:]) for ln in orig.splitlines()
                     if ln.startswith("thread ")} - intact
        kept = state.exists() and state.read_bytes() == damaged.encode("latin-1")
        problems = []
        if r.returncode == 0 or "could not be restored" not in r.stderr:
            problems.append(f"--restore exited {r.returncode}: {r.stderr[-600:]}")
        if not kept:
            problems.append("the damaged file was not kept as it was")
        if left != want_left:
            problems.append(f"changed after the restore: {sorted(left)}, expected the "
                            f"damaged records' {sorted(want_left)}: {changed}")
        # the original put back: everything goes back, the file goes
        state.write_text(orig)
        r2 = self.d.restore()
        if r2.returncode != 0 or self.subjects.changed() or self.subjects.residue() or \
                self.d.state_left:
            problems.append(f"the original file did not restore: {r2.returncode} "
                            f"{r2.stderr[-600:]} {self.subjects.changed()} "
                            f"{self.subjects.residue()}")
            state.unlink(missing_ok=True)
        if not problems:
            return None
        return {"kind": kind, "damaged": damaged[:400], "problems": problems}

    def damage_trials(self, n: int) -> dict:
        per = {k: {"trials": 0, "failures": 0} for k in DAMAGES}
        failures = []
        for k in range(n):
            kind = DAMAGES[k % len(DAMAGES)]
            f = self.damage_trial(kind)
            per[kind]["trials"] += 1
            if f is not None:
                per[kind]["failures"] += 1
                failures.append(f)
        return {"trials": n, "kinds": per, "failures": failures}

    def calibrate(self, runs: int = 3) -> dict[str, float]:
        med = {}
        for phase in self.phases:
            times = []
            for _ in range(runs):
                self.durations.pop(phase, None)
                self.op(phase, None)
                times.append(self.durations[phase])
                self.recover("restore")
                left = self.subjects.changed() + self.subjects.residue()
                if left:
                    raise RuntimeError(f"calibration {phase}: left changed: {left}")
            med[phase] = statistics.median(times)
        return med

    def run(self, trials: int, calibration_runs: int = 3, progress=None) -> dict:
        med = self.calibrate(calibration_runs)
        per_phase = {p: {"trials": 0, "done_at_kill": {"none": 0, "some": 0, "all": 0},
                         "state_file_left": 0, "left_changed": 0, "residue": 0}
                     for p in self.phases}
        failures = []
        total = self.subjects.total
        for k in range(trials):
            phase = self.phases[k % len(self.phases)]
            way = "restore" if (k // len(self.phases)) % 2 == 0 else "next-start"
            delay = self.rng.uniform(0, 1.2 * med[phase])
            self.op(phase, delay)
            n = self.subjects.progress(phase)
            st = per_phase[phase]
            st["trials"] += 1
            st["done_at_kill"]["none" if n == 0 else "all" if n == total else "some"] += 1
            st["state_file_left"] += self.d.state_left
            self.recover(way)
            left, residue = self.subjects.changed(), self.subjects.residue()
            st["left_changed"] += len(left)
            st["residue"] += len(residue)
            if left or residue or self.d.state_left:
                failures.append({"trial": k, "phase": phase, "delay_s": round(delay, 6),
                                 "recovery": way, "done_at_kill": n, "left_changed": left,
                                 "residue": residue, "state_file": self.d.state_left})
            if progress is not None:
                progress(k, phase, way, n, left, residue)
        return {
            "trials": trials, "subjects": total,
            "threads_left_changed": sum(s["left_changed"] for s in per_phase.values()),
            "residue": sum(s["residue"] for s in per_phase.values()),
            "starts_refused_ebusy": self.refused,
            "failures": failures,
            "phase_median_s": {p: round(v, 6) for p, v in med.items()},
            "phases": per_phase,
        }
