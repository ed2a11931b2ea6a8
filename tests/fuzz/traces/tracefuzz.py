#!/usr/bin/env python3
"""Mutate real trace-cmd data files and feed them to the trace reader and `irqres analyze`.

Every mutant must give a clean one-line error or a result: never a Python traceback, a
death by signal or a hang. Each mutant is a one-line *recipe* that rebuilds it from a
source trace, so that a finding can be replayed and kept as a regression input
(tests/fuzz/traces/regressions.txt):

    SOURCE cut N                   the first N bytes
    SOURCE flip OFF:BIT[,OFF:BIT]  bits flipped
    SOURCE zero OFF LEN            LEN bytes zeroed
    SOURCE append SEED LEN         LEN random bytes (random.Random(SEED)) appended

SOURCE is a file of tests/data (``vm-e1000-udp.dat``: as recorded, version 7, zstd),
or one with ``@v6`` (``trace-cmd convert --file-version 6 --compression none``, the layout
``trace-cmd record`` writes by default) or ``@v7none`` (version 7 uncompressed) after it.
Flips and zeroed pages aim at the headers (before the first CPU's data), at the data
pages (where ``trace-cmd dump --flyrecord`` says the CPUs' data lie), at the pages' own
headers (timestamp, commit size) or anywhere.

    python3 tests/fuzz/traces/tracefuzz.py --count 3000 --seed 1 --jobs 2
    python3 tests/fuzz/traces/tracefuzz.py --replay 'vm-e1000-udp.dat cut 33'

Outcomes, per mode (``reader``: ``read_trace`` in a worker process; ``analyze``: the
``irqres analyze MUTANT --json`` command with a time limit):

    result   read / analysed                  error    a TraceError / one ``Error:`` line
    signal   the process died by a signal     hang     the time limit passed
    failure  anything else: another exception, a traceback, more than one line, ...
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
SOURCES = ["host-fakeirq.dat", "host-overrun.dat", "host-noevents.dat", "vm-e1000-udp.dat"]
VARIANTS = {"": None, "@v6": ("6", "none"), "@v7none": ("7", "none")}
GOOD = ("result", "error")
OUTCOMES = ("result", "error", "signal", "hang", "failure")
PAGE = 4096

_FLY = re.compile(r"^\s*(?:\d+\s+)?(\d+)\s+(\d+)\s+\[(?:offset, size of cpu|id, data offset)")


@dataclass
class Source:
    """A trace to mutate: its bytes and where its CPUs' data pages lie."""

    name: str
    data: bytes
    regions: list[tuple[int, int]]  # (offset, size) of each CPU's data

    @property
    def header_end(self) -> int:
        return min((o for o, _ in self.regions), default=len(self.data))


def source_path(name: str, workdir: Path) -> Path:
    """The file of a SOURCE name, converting (once, into ``workdir``) when it names a variant."""
    base, _, variant = name.partition("@")
    src = DATA / base
    if not src.is_file():
        raise ValueError(f"{name}: no such trace in {DATA}")
    if not variant:
        return src
    version, compression = VARIANTS["@" + variant]
    dst = workdir / f"{base}@{variant}"
    if not dst.exists():
        if shutil.which("trace-cmd") is None:
            raise RuntimeError("trace-cmd is not installed: cannot write the @v6/@v7none copies")
        tmp = dst.with_suffix(".tmp")
        subprocess.run(["trace-cmd", "convert", "-i", str(src), "-o", str(tmp), "--file-version",
                        version, "--compression", compression], check=True, capture_output=True)
        tmp.rename(dst)
    return dst


def load_source(name: str, workdir: Path) -> Source:
    path = source_path(name, workdir)
    regions = []
    if shutil.which("trace-cmd"):
        out = subprocess.run(["trace-cmd", "dump", "--flyrecord", "-i", str(path)],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = _FLY.match(line)
            if m and int(m.group(2)) > 0:
                regions.append((int(m.group(1)), int(m.group(2))))
    return Source(name, path.read_bytes(), regions)


def apply(recipe: str, sources: dict[str, Source]) -> bytes:
    """The bytes of the mutant a recipe describes."""
    name, op, *args = recipe.split()
    data = sources[name].data
    if op == "cut":
        return data[: int(args[0])]
    if op == "flip":
        buf = bytearray(data)
        for item in args[0].split(","):
            off, bit = (int(x) for x in item.split(":"))
            buf[off] ^= 1 << bit
        return bytes(buf)
    if op == "zero":
        off, n = int(args[0]), int(args[1])
        return data[:off] + bytes(len(data[off:off + n])) + data[off + n:]
    if op == "append":
        return data + random.Random(int(args[0])).randbytes(int(args[1]))
    raise ValueError(f"{recipe}: unknown operation {op!r}")


def _target(rng: random.Random, src: Source) -> int:
    """An offset in the file's headers, in the data pages, in a page's header (its
    timestamp and commit size, when the pages lie uncompressed at 4 KiB steps) or
    anywhere, a quarter of the time each."""
    size = len(src.data)
    where = rng.randrange(4)
    if where == 0 and src.header_end > 0:
        return rng.randrange(src.header_end)
    if where in (1, 2) and src.regions:
        off, n = rng.choice(src.regions)
        if where == 2:
            return min(off + PAGE * rng.randrange(max(1, n // PAGE)) + rng.randrange(16),
                       size - 1)
        return min(off + rng.randrange(n), size - 1)
    return rng.randrange(size)


def generate(rng: random.Random, sources: dict[str, Source]) -> str:
    """One recipe, drawn with ``rng``."""
    name = rng.choice(sorted(sources))
    src = sources[name]
    size = len(src.data)
    op = rng.choices(["cut", "flip", "zero", "append"], weights=[30, 40, 15, 15])[0]
    if op == "cut":
        kind = rng.randrange(4)
        if kind == 0:
            n = rng.randrange(min(size, PAGE))  # inside the first headers
        elif kind == 1 and src.regions:  # at or near the start/end of a CPU's data or page
            off, length = rng.choice(src.regions)
            n = rng.choice([off, off + length, off + PAGE * rng.randrange(max(1, length // PAGE))])
            n += rng.choice([-1, 0, 0, 1, rng.randrange(-64, 64)])
        else:
            n = rng.randrange(size)
        return f"{name} cut {max(0, min(n, size - 1))}"
    if op == "flip":
        nflips = rng.choice([1, 1, 1, 2, 4])
        flips = [f"{_target(rng, src)}:{rng.randrange(8)}" for _ in range(nflips)]
        return f"{name} flip {','.join(flips)}"
    if op == "zero":
        off = _target(rng, src) // PAGE * PAGE
        return f"{name} zero {off} {rng.choice([PAGE, 64, 8])}"
    return f"{name} append {rng.randrange(1 << 30)} {rng.choice([1, 8, 100, PAGE, 3 * PAGE + 5])}"


# -- running one mutant ------------------------------------------------------------------


def run_reader(path: Path, timeout: float) -> tuple[str, str]:
    """``read_trace`` on ``path`` in a fresh worker process: (outcome, detail)."""
    code = (
        "import sys\n"
        "from irqres.errors import TraceError\n"
        "from irqres.trace import read_trace\n"
        "try:\n"
        "    t = read_trace(sys.argv[1])\n"
        "except TraceError as exc:\n"
        "    print('error', str(exc).replace(chr(10), ' '))\n"
        "else:\n"
        "    print('result', t.nrecords)\n"
    )
    return _classify_reader(_run([sys.executable, "-c", code, str(path)], timeout))


def run_analyze(path: Path, timeout: float, extra: tuple[str, ...] = ()) -> tuple[str, str]:
    """``irqres analyze path --json [extra]`` with a time limit: (outcome, detail)."""
    cmd = [sys.executable, "-m", "irqres", "analyze", str(path), "--json", *extra]
    return _classify_analyze(_run(cmd, timeout))


def _run(cmd: list[str], timeout: float):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None


def _classify_reader(p) -> tuple[str, str]:
    if p is None:
        return "hang", "time limit"
    if p.returncode < 0:
        return "signal", f"signal {-p.returncode}"
    lines = p.stdout.splitlines()
    if p.returncode == 0 and len(lines) == 1 and lines[0].split()[0] in GOOD and not p.stderr:
        kind, _, detail = lines[0].partition(" ")
        return kind, detail
    return "failure", (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]


def _classify_analyze(p) -> tuple[str, str]:
    if p is None:
        return "hang", "time limit"
    if p.returncode < 0:
        return "signal", f"signal {-p.returncode}"
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    if p.returncode == 0 and not err:
        try:
            json.loads(p.stdout)
        except ValueError:
            return "failure", "exit 0 without JSON on stdout"
        return "result", ""
    if p.returncode == 1 and len(err) == 1 and err[0].startswith("Error: ") and not p.stdout:
        return "error", err[0][len("Error: "):]
    return "failure", f"exit {p.returncode}: " + " | ".join(err[-3:])


def run_recipe(recipe: str, sources: dict[str, Source], workdir: Path, modes: tuple[str, ...],
               timeout: float, analyze_args: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """Write the mutant of ``recipe`` and run it through each mode."""
    fd, name = tempfile.mkstemp(suffix=".dat", dir=workdir)
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(apply(recipe, sources))
        out = {}
        if "reader" in modes:
            out["reader"] = run_reader(path, timeout)
        if "analyze" in modes:
            out["analyze"] = run_analyze(path, timeout, analyze_args)
        return out
    finally:
        path.unlink(missing_ok=True)


def load_sources(names: list[str], workdir: Path) -> dict[str, Source]:
    return {n: load_source(n, workdir) for n in names}


def all_source_names(variants: list[str]) -> list[str]:
    return [s + v for s in SOURCES for v in variants]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200, help="mutants to run [200]")
    ap.add_argument("--seed", type=int, default=1, help="random seed [1]")
    ap.add_argument("--duration", type=float, default=0,
                    help="start no mutant after this many seconds [0: no limit]")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once [1]")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds before a run counts as a hang [120]")
    ap.add_argument("--modes", default="reader,analyze", help="reader,analyze [both]")
    ap.add_argument("--analyze-args", default="",
                    help="more options for irqres analyze, e.g. '--period 5ms' (one candidate "
                         "period: a result costs ~0.5 CPU s instead of ~5 on the VM trace)")
    ap.add_argument("--variants", default=",@v6,@v7none",
                    help="source variants: '' (as recorded), @v6, @v7none [all]")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where converted sources and mutants go [a temporary directory]")
    ap.add_argument("--findings", type=Path, default=None,
                    help="append the recipe of every bad outcome to this file")
    ap.add_argument("--replay", action="append", default=[],
                    help="run this recipe instead of random ones (repeatable)")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = ap.parse_args(argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    own = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="tracefuzz-")) if own else args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if args.replay:
            names = sorted({r.split()[0] for r in args.replay})
        else:
            names = all_source_names(args.variants.split(","))
            rng = random.Random(args.seed)
        sources = load_sources(names, workdir)
        if args.replay:
            pending = iter(args.replay)
        else:
            pending = (generate(rng, sources) for _ in range(args.count))
        counts = {m: collections.Counter() for m in modes}
        ops = {m: collections.defaultdict(collections.Counter) for m in modes}
        bad, recipes = [], []
        start = time.monotonic()
        deadline = start + args.duration if args.duration else float("inf")

        def record(recipe: str, result: dict) -> None:
            for mode, (outcome, detail) in result.items():
                counts[mode][outcome] += 1
                ops[mode][recipe.split()[1]][outcome] += 1
                if outcome not in GOOD or args.replay:
                    print(f"{mode}: {outcome}: {recipe}: {detail}", flush=True)
                if outcome not in GOOD:
                    bad.append((mode, outcome, recipe, detail))
                    if args.findings:
                        with args.findings.open("a") as fh:
                            fh.write(f"{recipe}  # {mode}: {outcome}: {detail}\n")
            i = len(recipes) - len(running)
            if sys.stderr.isatty():
                print(f"\r{i} done", end="", file=sys.stderr, flush=True)
            elif i % 100 == 0:  # a log line now and then for long runs in the background
                done = {m: dict(counts[m]) for m in modes}
                print(f"{i} done after {time.monotonic() - start:.0f} s: {done}",
                      file=sys.stderr, flush=True)

        jobs = max(1, args.jobs)
        running: dict = {}
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            while True:
                while len(running) < jobs and time.monotonic() < deadline:
                    recipe = next(pending, None)
                    if recipe is None:
                        break
                    recipes.append(recipe)
                    running[pool.submit(run_recipe, recipe, sources, workdir, modes,
                                        args.timeout, tuple(args.analyze_args.split()))] = recipe
                if not running:
                    break
                finished, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in finished:
                    record(running.pop(fut), fut.result())
        if sys.stderr.isatty():
            print(file=sys.stderr)
        seconds = round(time.monotonic() - start)
        summary = {"mutants": len(recipes), "seed": args.seed, "seconds": seconds,
                   "counts": {m: {o: counts[m][o] for o in OUTCOMES} for m in modes},
                   "by_operation": {m: {op: dict(c) for op, c in sorted(ops[m].items())}
                                    for m in modes}}
        if args.json:
            print(json.dumps(summary, indent=1))
        else:
            print(f"{len(recipes)} mutants, seed {args.seed}, {summary['seconds']} s")
            print("| mode | " + " | ".join(OUTCOMES) + " |")
            print("|---" * (len(OUTCOMES) + 1) + "|")
            for m in modes:
                print(f"| {m} | " + " | ".join(f"{counts[m][o]:,}" for o in OUTCOMES) + " |")
        return 1 if bad else 0
    finally:
        if own:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
