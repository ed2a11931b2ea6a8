"""`irqres analyze --under Q,T`: achieved against promised, on traces with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqres.errors import ModelError
from irqres.model.promise import check_promise, wilson
from irqres.report import Options, analyze
from irqres.trace.synthetic import irq_thread_trace

US, MS = 1_000, 1_000_000


def test_wilson_interval_brackets_the_fraction():
    lo, hi = wilson(99, 100)
    assert lo < 0.99 < hi and hi <= 1.0
    assert wilson(100, 100)[1] == 1.0 and wilson(100, 100)[0] == pytest.approx(0.963, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)


def test_achieved_counts_the_activations_within_the_bound():
    n = 200
    arr = np.arange(n, dtype=np.int64) * MS
    exe = np.full(n, 100 * US, dtype=np.int64)
    resp = np.full(n, 150 * US, dtype=np.int64)
    resp[:5] = 2 * MS                       # 5 of 200 late: 0.975
    c = check_promise(arr, exe, resp, 200 * US, 1 * MS, 1 * MS, 0.99)
    assert (c.jobs, c.met) == (200, 195) and c.achieved == 0.975 and not c.kept
    assert c.low < 0.975 < c.high
    assert c.model_prob == 1.0 and c.replay_prob == 1.0   # Q covers every job alone
    assert "NOT kept" in c.text() and "195 of 200 activations" in c.text()
    assert check_promise(arr, exe, resp, 200 * US, 1 * MS, 2 * MS, 0.99).kept
    with pytest.raises(ModelError, match="need 0 < Q <= T"):
        check_promise(arr, exe, resp, 2 * MS, 1 * MS, 1 * MS, 0.99)
    with pytest.raises(ModelError, match="promised probability"):
        check_promise(arr, exe, resp, 1 * MS, 1 * MS, 1 * MS, 1.0)


def test_report_under_a_reservation():
    n = 150
    arrivals = 1_000_000 + np.arange(n, dtype=np.int64) * 1_000 * US
    execs = np.full(n, 200 * US, dtype=np.int64)
    execs[::30] = 900 * US                  # 5 jobs whose response exceeds 500 us
    b, _ = irq_thread_trace(arrivals, execs)
    rep = analyze(b.build(), Options(mc_jobs=0, deadline_ns=500 * US,
                                     under=(300 * US, 1 * MS)))
    (t,) = rep.threads
    p = t.promise
    assert p.jobs == n and p.met == n - 5 and p.promised == 0.99
    d = rep.to_dict()["threads"][0]["promise"]
    assert d["achieved"] == pytest.approx((n - 5) / n) and d["kept"] is False
    assert "under Q = 300us every T = 1ms: achieved P{response <= 500us} = 0.9667" in rep.text()
    with pytest.raises(ModelError, match="give the --deadline D the promise was made for"):
        analyze(b.build(), Options(under=(300 * US, 1 * MS)))


@pytest.mark.parametrize(("value", "msg"), [
    ("300us", "expected Q,T"), ("2ms,1ms", "the runtime Q is longer than the period T"),
    ("0,1ms", "0")])
def test_cli_refuses_a_bad_reservation(value, msg, tmp_path):
    res = CliRunner().invoke(main, ["analyze", str(tmp_path / "x.dat"), "--under", value])
    assert res.exit_code == 2 and msg in res.output
