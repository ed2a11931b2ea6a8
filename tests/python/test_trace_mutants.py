"""Damaged copies of the real traces through the trace reader and `irqres analyze`: a
clean one-line error or a result, never a traceback, a signal or a hang.

The short pass of tests/fuzz/traces/tracefuzz.py (fixed seed, a few mutants) and every
recipe of tests/fuzz/traces/regressions.txt; the long runs are in tests/fuzz/RESULTS.md.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "fuzz" / "traces"
sys.path.insert(0, str(HARNESS))
import tracefuzz  # noqa: E402

SEED, COUNT, TIMEOUT = 20261123, 10, 120.0
# one candidate period: a result of analyze costs ~0.5 CPU s instead of ~5 on the VM trace
ANALYZE_ARGS = ("--period", "5ms")

REGRESSIONS = [ln.split("#")[0].strip() for ln in
               (HARNESS / "regressions.txt").read_text().splitlines()]
REGRESSIONS = [r for r in REGRESSIONS if r]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("tracefuzz")


@pytest.fixture(scope="module")
def sources(workdir):
    if shutil.which("trace-cmd") is None:
        pytest.skip("trace-cmd is not installed: cannot write the version-6 copies")
    return tracefuzz.load_sources(tracefuzz.all_source_names(["", "@v6"]), workdir)


def test_mutants_are_reproducible_from_their_recipes(sources):
    a = [tracefuzz.generate(random.Random(SEED), sources) for _ in range(3)]
    b = [tracefuzz.generate(random.Random(SEED), sources) for _ in range(3)]
    assert a == b
    assert tracefuzz.apply("vm-e1000-udp.dat cut 10", sources) == \
        sources["vm-e1000-udp.dat"].data[:10]
    flipped = tracefuzz.apply("vm-e1000-udp.dat flip 3:0,3:1", sources)
    assert flipped[3] == sources["vm-e1000-udp.dat"].data[3] ^ 3
    # the headers/data split comes from trace-cmd dump: the CPUs' data lie past the headers
    v6 = sources["vm-e1000-udp.dat@v6"]
    assert len(v6.regions) == 2 and 0 < v6.header_end < len(v6.data)


def test_outcomes_are_classified_strictly():
    class P:
        def __init__(self, rc, out="", err=""):
            self.returncode, self.stdout, self.stderr = rc, out, err

    assert tracefuzz._classify_analyze(P(-11))[0] == "signal"
    assert tracefuzz._classify_analyze(None)[0] == "hang"
    assert tracefuzz._classify_analyze(P(1, err="Error: x.dat: damaged\n")) == \
        ("error", "x.dat: damaged")
    assert tracefuzz._classify_analyze(P(1, err="Traceback (most recent call last):\n"
                                                " ...\nMemoryError\n"))[0] == "failure"
    assert tracefuzz._classify_analyze(P(1, out="File possibly truncated\n",
                                         err="Error: x\n"))[0] == "failure"
    assert tracefuzz._classify_analyze(P(0, out="{}"))[0] == "result"
    assert tracefuzz._classify_reader(P(0, out="error x.dat: bad\n"))[0] == "error"
    assert tracefuzz._classify_reader(P(0, out="result 12\n", err="warning\n"))[0] == "failure"


@pytest.mark.parametrize("recipe", REGRESSIONS)
def test_regression_recipe(recipe, workdir):
    srcs = tracefuzz.load_sources([recipe.split()[0]], workdir)
    out = tracefuzz.run_recipe(recipe, srcs, workdir, ("reader", "analyze"), TIMEOUT)
    for mode, (outcome, detail) in out.items():
        assert outcome in tracefuzz.GOOD, (mode, outcome, detail)


def test_short_pass_of_random_mutants(sources, workdir):
    rng = random.Random(SEED)
    recipes = [tracefuzz.generate(rng, sources) for _ in range(COUNT)]
    bad = []
    for recipe in recipes:
        for mode, (outcome, detail) in tracefuzz.run_recipe(
                recipe, sources, workdir, ("reader", "analyze"), TIMEOUT, ANALYZE_ARGS).items():
            if outcome not in tracefuzz.GOOD:
                bad.append((recipe, mode, outcome, detail))
    assert not bad


def test_one_damaged_page_timestamp_is_dropped_with_a_warning(sources, workdir):
    """One flipped bit (2**62 ns) in the header of CPU 0's 11th page of the VM trace:
    before, a result for a 146-year trace with every rate 0.0/s and no warning; now the
    page's records are dropped, named, counted, and the rest analysed as recorded."""
    v6 = sources["vm-e1000-udp.dat@v6"]
    page = v6.regions[0][0] + 10 * tracefuzz.PAGE          # its u64 timestamp comes first
    recipe = f"vm-e1000-udp.dat@v6 flip {page + 7}:6"
    mutant = workdir / "page-ts.dat"
    mutant.write_bytes(tracefuzz.apply(recipe, sources))
    good = workdir / "good.dat"
    good.write_bytes(v6.data)

    def analyze(path, *extra):
        return subprocess.run([sys.executable, "-m", "irqres", "analyze", str(path),
                               *ANALYZE_ARGS, *extra], capture_output=True, text=True,
                              timeout=TIMEOUT)

    got, want = (json.loads(analyze(p, "--json").stdout) for p in (mutant, good))
    t = got["trace"]
    assert t["last_ts_ns"] - t["first_ts_ns"] == \
        want["trace"]["last_ts_ns"] - want["trace"]["first_ts_ns"]       # 6.29 s
    dmg = t["damaged_timestamps"]
    assert dmg["records_dropped"] > 0 and len(dmg["runs"]) == 1
    run = dmg["runs"][0]
    assert run["cpu"] == 0 and run["reason"] == "after the recording ended"
    assert 1 << 61 < run["jump_ns"] < 1 << 63
    assert run["after_ns"] is not None and run["before_ns"] is not None
    # where time comes back: the first record of the next page
    assert page + tracefuzz.PAGE < run["offset"] < page + 2 * tracefuzz.PAGE
    assert run["record"] > 0
    rates = {th["comm"]: th["stats"]["irq_rate_hz"] for th in got["threads"]}
    want_rates = {th["comm"]: th["stats"]["irq_rate_hz"] for th in want["threads"]}
    assert rates.keys() == want_rates.keys()
    for comm, rate in rates.items():
        assert rate == pytest.approx(want_rates[comm], rel=0.2), comm
    assert rates["irq/11-eth0"] > 100
    text = analyze(mutant)
    assert text.returncode == 0, text.stderr
    warning = [ln for ln in text.stderr.splitlines() if "damaged" in ln or "dropped (" in ln]
    assert len(warning) == 1 and warning[0].startswith(f"warning: {mutant}: CPU 0: "), \
        text.stderr
    assert "4611686018.4" in warning[0] and "ahead of the CPU's records" in warning[0]
    assert f"steps back at its record {run['record']} (file offset {run['offset']})" \
        in warning[0]
    assert "damaged timestamps: " in text.stdout and "6.293789573s" in text.stdout
