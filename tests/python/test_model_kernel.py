"""What the kernel adds to a reservation: period limits, budget enforcement, slices."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqres.errors import ModelError
from irqres.model.kernel import KernelFacts, facts_path, host_facts, save_facts, trace_facts
from irqres.model.recommend import recommend

US, MS = 1_000, 1_000_000
DATA = Path(__file__).resolve().parents[1] / "data"


def fake_root(tmp_path, *, lo="100", hi="4194304", hz="1000", features=None):
    k = tmp_path / "proc/sys/kernel"
    k.mkdir(parents=True)
    (k / "sched_deadline_period_min_us").write_text(lo + "\n")
    (k / "sched_deadline_period_max_us").write_text(hi + "\n")
    if hz is not None:
        with gzip.open(tmp_path / "proc/config.gz", "wt") as fh:
            fh.write(f"CONFIG_PREEMPT_RT=y\nCONFIG_HZ={hz}\n")
    if features is not None:
        d = tmp_path / "sys/kernel/debug/sched"
        d.mkdir(parents=True)
        (d / "features").write_text(features)
    return str(tmp_path)


def test_host_facts_read_limits_hz_and_hrtick(tmp_path):
    root = fake_root(tmp_path, lo="1000", hi="500000", features="GENTLE_FAIR HRTICK_DL WA_BIAS")
    f = host_facts(root=root)
    assert (f.period_min_ns, f.period_max_ns) == (1 * MS, 500 * MS)
    assert f.enforcement == "hrtick" and f.enforcement_ns == 0 and f.tick_ns == 1 * MS
    assert f.default_max_slices() == 4
    assert "/proc/config.gz" in f.sources["tick_ns"]
    assert host_facts(root=root, enforcement="tick").enforcement_ns == 1 * MS


def test_host_facts_fall_back_to_the_kernel_defaults_and_say_so(tmp_path):
    f = host_facts(root=fake_root(tmp_path, hz=None, features="NO_HRTICK_DL"))
    assert f.enforcement == "tick" and f.tick_ns == 4 * MS and f.default_max_slices() == 1
    assert f.sources["tick_ns"] == "HZ unknown, 250 assumed"
    g = host_facts(root=str(tmp_path / "nothing"))
    assert "unreadable (debugfs)" in g.sources["enforcement"]
    assert (g.period_min_ns, g.period_max_ns) == (100 * US, 4_194_304 * US)
    with pytest.raises(ModelError, match="enforcement: must be one of auto, tick, hrtick"):
        host_facts(enforcement="exact")


def periodic(n=400, c=200 * US, t=1 * MS, seed=3):
    rng = np.random.default_rng(seed)
    arr = np.arange(n, dtype=np.int64) * t + rng.integers(0, 20 * US, n)
    return np.sort(arr), np.full(n, c, dtype=np.int64) + rng.integers(0, 10 * US, n)


def test_a_period_the_kernel_refuses_is_never_recommended():
    arr, exe = periodic()
    k = KernelFacts(period_min_ns=1 * MS, period_max_ns=4 * MS)
    rec = recommend(arr, exe, periods_ns=[500 * US, 1 * MS, 5 * MS], deadline_ns=5 * MS,
                    kernel=k, mc_jobs=0, max_slices=8)
    rows = {r.period_ns: r for r in rec.rows}
    assert not rows[500 * US].feasible and "refuses periods below 1ms" in rows[500 * US].reason
    assert not rows[5 * MS].feasible and "refuses periods above 4ms" in rows[5 * MS].reason
    assert rec.best is rows[1 * MS]
    # the default kernel limits refuse a 50 us period too
    rec = recommend(arr, exe, periods_ns=[50 * US, 1 * MS], deadline_ns=1 * MS, mc_jobs=0)
    assert "sched_deadline_period_min_us" in rec.rows[0].reason


def test_tick_enforcement_keeps_a_job_in_one_budget():
    arr, exe = periodic()
    c_p = int(np.quantile(exe, 0.99, method="higher"))
    sliced = recommend(arr, exe, deadline_ns=1 * MS, mc_jobs=0, run_replay=False,
                       max_slices=20)
    assert sliced.best.runtime_ns < c_p   # what the least-bandwidth rule alone picks
    rec = recommend(arr, exe, deadline_ns=1 * MS, mc_jobs=0, run_replay=False)
    assert rec.max_slices == 1 and rec.slice_exec_ns == c_p
    for r in rec.rows:
        assert not r.feasible or r.runtime_ns >= c_p
    limited = [r for r in rec.rows if r.limited_by]
    assert limited and all(r.limited_by.startswith("at most 1 budget slice per job")
                           and r.runtime_ns == -(-c_p // 1_000) * 1_000 for r in limited)
    two = recommend(arr, exe, deadline_ns=1 * MS, mc_jobs=0, run_replay=False, max_slices=2)
    assert all(-(-c_p // r.runtime_ns) <= 2 for r in two.rows if r.feasible)
    with pytest.raises(ModelError, match="max slices: must be a positive number"):
        recommend(arr, exe, deadline_ns=1 * MS, max_slices=0)


def test_cli_reports_the_kernel_and_takes_the_options():
    res = CliRunner().invoke(main, ["analyze", str(DATA / "host-fakeirq.dat"), "--json",
                                    "--enforcement", "hrtick", "--max-slices", "3",
                                    "--deadline", "4ms"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.output)["threads"][0]["recommendation"]
    assert rec["kernel"]["enforcement"] == "hrtick" and rec["kernel"]["enforcement_ns"] == 0
    assert rec["kernel"]["sources"]["enforcement"] == "given"
    assert rec["max_slices"] == 3
    best = rec["best"]
    assert -(-rec["slice_exec_ns"] // best["runtime_ns"]) <= 3
    text = CliRunner().invoke(main, ["analyze", str(DATA / "host-fakeirq.dat"),
                                     "--tick", "1ms", "--enforcement", "tick"]).output
    assert "kernel: budget enforced at the scheduler tick, every 1ms (HZ=1000; given)" in text
    assert "at most 1 budget slice(s) per job of" in text


def test_the_facts_of_the_kernel_the_trace_was_recorded_on(tmp_path):
    root = fake_root(tmp_path / "root", hz="1000", features="NO_HRTICK_DL\n")
    trace = str(tmp_path / "t.dat")
    # a trace of this kernel: this kernel's facts
    facts, warning = trace_facts(trace, "6.1.0-rt", root=root, this_release="6.1.0-rt")
    assert (facts.tick_ns, facts.enforcement, warning) == (MS, "tick", None)
    # of another kernel, nothing kept beside it: the kernel's defaults, said
    facts, warning = trace_facts(trace, "7.3.4-rt", root=root, this_release="6.1.0-rt")
    assert (facts.tick_ns, facts.enforcement) == (4 * MS, "tick")
    assert "recorded on kernel 7.3.4-rt, not this one (6.1.0-rt)" in warning
    assert "--enforcement and --tick" in warning and "7.3.4-rt" in facts.sources["tick_ns"]
    # both given: nothing to warn about
    facts, warning = trace_facts(trace, "7.3.4-rt", enforcement="hrtick", tick_ns=MS // 4,
                                 root=root, this_release="6.1.0-rt")
    assert (facts.enforcement, facts.tick_ns, warning) == ("hrtick", MS // 4, None)
    # what irqres record kept beside it wins over this kernel's, options over both
    recorded = KernelFacts(200 * US, 2_000 * MS, enforcement="hrtick", tick_ns=MS // 3,
                           sources={"tick_ns": "CONFIG_HZ from /proc/config.gz"})
    save_facts(facts_path(trace), recorded, "7.3.4-rt")
    facts, warning = trace_facts(trace, "7.3.4-rt", root=root, this_release="7.3.4-rt")
    assert (facts.period_min_ns, facts.period_max_ns, facts.enforcement, facts.tick_ns) == (
        200 * US, 2_000 * MS, "hrtick", MS // 3) and warning is None
    assert facts.sources["tick_ns"].startswith("recorded with the trace (t.dat.kernel.json")
    facts, _ = trace_facts(trace, "7.3.4-rt", enforcement="tick", root=root,
                           this_release="6.1.0-rt")
    assert (facts.enforcement, facts.sources["enforcement"]) == ("tick", "given")
    _, warning = trace_facts(trace, "7.2.13-rt", root=root, this_release="6.1.0-rt")
    assert "describes kernel 7.3.4-rt, the trace was recorded on 7.2.13-rt" in warning


@pytest.mark.parametrize("text, words", [
    ("{", "not JSON"),
    ("[]", "schema_version 1 expected"),
    ('{"schema_version": 1, "release": "x", "period_min_ns": 1}', "period_max_ns"),
    ('{"schema_version": 1, "release": "x", "period_min_ns": 100000, "period_max_ns": '
     '4000000000, "enforcement": "sometimes", "tick_ns": 4000000}', "must be tick or hrtick"),
    ('{"schema_version": 1, "release": "x", "period_min_ns": 100000, "period_max_ns": '
     '4000000000, "enforcement": "tick", "tick_ns": true}', "tick_ns"),
])
def test_damaged_kernel_facts_are_refused_naming_the_file(tmp_path, text, words):
    trace = str(tmp_path / "t.dat")
    Path(facts_path(trace)).write_text(text)
    with pytest.raises(ModelError, match=words) as e:
        trace_facts(trace, "6.1.0-rt", this_release="6.1.0-rt")
    assert "t.dat.kernel.json" in str(e.value)


def test_cli_plans_with_the_recording_kernels_facts(tmp_path):
    trace = tmp_path / "vm.dat"
    trace.write_bytes((DATA / "vm-e1000-udp.dat").read_bytes())
    res = CliRunner().invoke(main, ["analyze", str(trace), "--json"])
    assert res.exit_code == 0, res.output
    kernel = json.loads(res.stdout)["options"]["kernel"]
    assert "is not this one" in kernel["sources"]["enforcement"]
    text = CliRunner().invoke(main, ["analyze", str(trace)])
    assert "warning: " + str(trace) + ": recorded on kernel 6.1" in text.stderr
    save_facts(facts_path(str(trace)), KernelFacts(enforcement="hrtick", tick_ns=MS),
               "6.1.0-50-rt-amd64")
    res = CliRunner().invoke(main, ["analyze", str(trace), "--json"])
    kernel = json.loads(res.stdout)["options"]["kernel"]
    assert (kernel["enforcement"], kernel["tick_ns"]) == ("hrtick", MS)
