"""Damaged copies of the real traces through the trace reader and `irqres analyze`: a
clean one-line error or a result, never a traceback, a signal or a hang.

The short pass of tests/fuzz/traces/tracefuzz.py (fixed seed, a few mutants) and every
recipe of tests/fuzz/traces/regressions.txt; the long runs are in tests/fuzz/RESULTS.md.
"""

from __future__ import annotations

import random
import shutil
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
