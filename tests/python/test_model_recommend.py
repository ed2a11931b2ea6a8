"""Recommendation of (Q, T): known answers, constraints, the profile snippet, errors."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from irqres.errors import ModelError
from irqres.model.recommend import default_granularity, default_periods, recommend
from irqres.units import parse_duration

ROOT = Path(__file__).resolve().parents[2]
MS, US = 1_000_000, 1_000


def periodic(n=2000, period=MS, exec_ns=200 * US):
    return np.arange(n, dtype=np.int64) * period, np.full(n, exec_ns, dtype=np.int64)


def test_periodic_known_answer():
    arr, exe = periodic()
    rec = recommend(arr, exe, periods_ns=[500 * US, MS, 2 * MS], mc_jobs=20_000)
    by_t = {r.period_ns: r for r in rec.rows}
    # Every job needs 200us within one period: Q = 200us whatever the period, as long
    # as a job arrives at most once per period.
    assert by_t[MS].runtime_ns == 200 * US and by_t[MS].bandwidth == 0.2
    assert by_t[500 * US].runtime_ns == 200 * US and by_t[500 * US].bandwidth == 0.4
    # Two jobs in each 2ms period: the per-period demand model needs exactly 400us.
    assert by_t[2 * MS].model == "demand" and by_t[2 * MS].runtime_ns == 400 * US
    assert by_t[MS].model == "activation" and by_t[MS].granularity_ns == 200
    assert rec.best is by_t[MS]  # same bandwidth as 2ms: the shorter period wins
    forced = recommend(arr, exe, periods_ns=[2 * MS], mc_jobs=0, model="activation").rows[0]
    assert not forced.feasible and "unbounded backlog" in forced.reason
    assert forced.model == "activation"
    assert by_t[MS].solver_prob == 1.0 and by_t[MS].mc_prob == 1.0
    assert by_t[MS].replay_prob == 1.0
    # One granularity step less misses every deadline in the model.
    assert rec.granularity_ns == 200
    d = rec.to_dict()
    assert d["best"]["runtime_ns"] == 200 * US and len(d["rows"]) == 3
    assert [r["model"] for r in d["rows"]] == ["activation", "activation", "demand"]
    assert d["model"] == "auto"


def test_buffering_constraint_raises_the_budget():
    arr, exe = periodic(exec_ns=100 * US)
    quiet = {"periods_ns": [MS], "min_interarrival_ns": 100 * US, "mc_jobs": 0}
    rec = recommend(arr, exe, buffer=5, run_replay=False, **quiet)
    row = rec.best
    # (T - Q)/P < 5 needs Q >= 500.001us; with Δ = 100ns that is 500.1us.
    assert row.runtime_ns == 500_100 and row.buffer_check.ok
    assert row.mc_prob is None and row.replay_prob is None
    tight = recommend(arr, exe, buffer=1, max_bandwidth=0.5, run_replay=False, **quiet)
    assert tight.best is None
    assert tight.rows[0].reason == (
        "needs more than 50% of the CPU: the buffering constraint needs runtime >= 900.1us (90%)"
    )
    with pytest.raises(ModelError, match="no candidate period meets the target"):
        tight.profile_snippet("nic", "irq: [11]")


def test_random_arrivals_checked_three_ways():
    rng = np.random.default_rng(4)
    n = 20_000
    arr = np.cumsum(rng.integers(200 * US, 2 * MS, n))
    exe = rng.integers(20 * US, 150 * US, n)
    rec = recommend(arr, exe, periods_ns=[200 * US, 400 * US], target_prob=0.95)
    for row in rec.rows:
        assert row.feasible, row.reason
        assert row.solver_prob >= 0.95
        assert row.mc_low - 1e-3 <= row.solver_prob <= row.mc_high + 1e-3
        assert row.replay_prob >= row.solver_prob - 0.01  # the model is pessimistic
        # One step less budget would miss the target (the search is tight).
        from irqres.model.cbs import CbsModel

        m = CbsModel(rec.exec_pmf, rec.interarrival_pmf)
        if row.runtime_ns - rec.granularity_ns >= 1024:
            below = m.solve(row.runtime_ns - rec.granularity_ns, row.period_ns)
            p = below.prob_within(row.period_ns)
            assert p is None or p - below.error_bound < 0.95
    assert rec.best.bandwidth == min(r.bandwidth for r in rec.rows)


def checker(tmp_path):
    cc = shutil.which("cc")
    if cc is None or not Path("/usr/include/yaml.h").exists():
        pytest.skip("needs a C compiler and libyaml-dev to build the daemon's profile parser")
    src = tmp_path / "check.c"
    src.write_text(
        '#include <stdio.h>\n#include "profile.h"\n'
        "int main(int c, char **v) { struct profile p; char e[512];\n"
        '  if (profile_load(v[1], &p, e, sizeof(e))) { fprintf(stderr, "%s\\n", e); return 1; }\n'
        "  profile_free(&p); return 0; }\n"
    )
    exe = tmp_path / "check"
    d = ROOT / "daemon" / "src"
    subprocess.run(
        [
            cc,
            "-std=c11",
            "-D_GNU_SOURCE",
            f"-I{d}",
            "-o",
            str(exe),
            str(src),
            str(d / "profile.c"),
            str(d / "yamlmap.c"),
            str(d / "target_kind.c"), str(d / "softirqd.c"),
            str(d / "units.c"),
            str(d / "buffering.c"),
            str(d / "log.c"),
            "-lyaml",
        ],
        check=True,
        capture_output=True,
    )
    return exe


def test_profile_snippet_accepted_by_the_daemon_parser(tmp_path):
    arr, exe = periodic(exec_ns=123_457)
    rec = recommend(arr, exe, periods_ns=[MS], buffer=64, mc_jobs=0, run_replay=False)
    text = rec.profile_snippet("nic-0", 'irq: [11]\naction: "eth0*"')
    doc = yaml.safe_load(text)
    target = doc["targets"][0]
    assert doc["version"] == 1 and target["name"] == "nic-0" and target["irq"] == [11]
    assert parse_duration(target["runtime"]) == rec.best.runtime_ns
    assert parse_duration(target["period"]) == MS
    assert target["buffer"] == 64 and parse_duration(target["min_interarrival"]) == MS
    path = tmp_path / "p.yaml"
    path.write_text(text)
    check = checker(tmp_path)
    out = subprocess.run([str(check), str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # The checker is real: a broken buffer is refused.
    path.write_text(text.replace("buffer: 64", "buffer: 0"))
    assert subprocess.run([str(check), str(path)], capture_output=True).returncode != 0


def test_default_periods():
    ps = default_periods(2 * MS)
    assert ps == sorted(set(ps)) and ps[0] == 200 * US and ps[-1] == 100 * MS
    assert all(100 * US <= p <= 1_000_000_000 for p in ps)
    fast = default_periods(10 * US)  # 1us .. 500us, clipped below at 100us
    assert fast[0] == 100 * US and fast[-1] == 500 * US and len(fast) < 16
    with pytest.raises(ModelError, match="mean inter-arrival"):
        default_periods(0.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"arrival_ns": [0, 1], "exec_ns": [1]}, "2 arrival times but 1"),
        ({"arrival_ns": [0], "exec_ns": [1]}, "at least 2"),
        ({"arrival_ns": [5, 1], "exec_ns": [1, 1]}, "sorted"),
        ({"arrival_ns": [0, 1], "exec_ns": [1, -1]}, "negative"),
        ({"target_prob": 1.0}, "target probability"),
        ({"max_bandwidth": 0.0}, "max bandwidth"),
        ({"buffer": 0}, "buffer"),
        ({"buffer": 4, "arrival_ns": [0, 0, MS]}, "simultaneous"),
        ({"periods_ns": [0]}, "periods"),
        ({"deadline_ns": -1}, "deadline"),
    ],
)
def test_bad_input(kwargs, match):
    arr, exe = periodic(n=3)
    args = {"arrival_ns": arr, "exec_ns": exe, "mc_jobs": 0, "run_replay": False}
    args.update(kwargs)
    if len(args["exec_ns"]) != len(args["arrival_ns"]) and "exec_ns" not in kwargs:
        args["exec_ns"] = np.full(len(args["arrival_ns"]), 1000)
    a, e = np.array(args.pop("arrival_ns")), np.array(args.pop("exec_ns"))
    with pytest.raises(ModelError, match=match):
        recommend(a, e, **args)


def test_bad_snippet_arguments():
    arr, exe = periodic()
    rec = recommend(arr, exe, periods_ns=[MS], mc_jobs=0, run_replay=False)
    with pytest.raises(ModelError, match="target name"):
        rec.profile_snippet("bad name", "irq: [11]")
    with pytest.raises(ModelError, match="unknown key"):
        rec.profile_snippet("nic", "process: {comm: x}")
    with pytest.raises(ModelError, match="not valid YAML"):
        rec.profile_snippet("nic", "irq: [11")
    with pytest.raises(ModelError, match="expected keys"):
        rec.profile_snippet("nic", "- 11")


def test_default_granularity_ignores_a_rare_outlier():
    exe = np.full(10_000, 200 * US, dtype=np.int64)
    assert default_granularity(exe) == 200
    exe[0] = 50 * MS  # one job 250x longer: <= 20,000 bins in all, 40 for the bulk
    assert default_granularity(exe) == 5000
    exe[:20] = 50 * MS  # 0.2% of the jobs: now they are part of the distribution
    assert default_granularity(exe) == 50_000
