"""Device-thread time per served process in irqres stats (text, --json, OpenMetrics) and
irqres top, from the "accounting" member of irqresd's stats reply."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner
from fakes import STATS, STATUS
from irqres import live, metrics, served_time
from irqres.cli import main
from irqres.metrics import Snapshot
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse

S = 1_000_000_000


def accounting(a_ns: int = 3_000_000, b_ns: int = 1_000_001, none_ns: int = 500) -> dict:
    return {"enabled": True, "error": None, "lost_events": 0, "dropped_activations": 0,
            "served": [
        {"target": "nic", "pid": 301, "comm": "rx-b", "irq_time_ns": b_ns,
         "activations": 2, "wakeups": 2},
        {"target": "nic", "pid": 300, "comm": "rx-a", "irq_time_ns": a_ns,
         "activations": 5, "wakeups": 6, "packets": 7},
        {"target": "nic", "pid": -1, "comm": "(none)", "irq_time_ns": none_ns,
         "activations": 1, "wakeups": 0}]}


OFF = {"enabled": False, "lost_events": 0, "dropped_activations": 0, "served": [],
       "error": "tracefs /nope: tracefs: No such file or directory"}


def test_parse_and_malformed():
    acc = served_time.parse({"accounting": accounting()})
    assert acc.enabled and acc.wanted
    assert [(s.pid, s.irq_time_ns) for s in served_time.ordered(acc.served)] == \
        [(300, 3_000_000), (301, 1_000_001), (-1, 500)]
    assert not served_time.parse({"threads": []}).wanted      # an older irqresd
    bad = accounting()
    del bad["served"][0]["irq_time_ns"]
    with pytest.raises(served_time.AccountingError, match="irq_time_ns"):
        served_time.parse({"accounting": bad})


def test_stats_text_json_and_errors(stats_daemon):
    stats_daemon.accounting = accounting()
    r = CliRunner().invoke(main, ["stats"])
    assert r.exit_code == 0, r.output
    tail = r.output.split("device-thread time per served process")[1].splitlines()
    assert tail[1].split() == ["TARGET", "PID", "COMM", "TIME", "ACTIVATIONS", "WAKEUPS",
                               "PACKETS"]
    assert tail[2].split() == ["nic", "300", "rx-a", "3ms", "5", "6", "7"]
    assert tail[3].split() == ["nic", "301", "rx-b", "1ms", "2", "2", "0"]  # older irqresd
    assert tail[4].split()[:3] == ["nic", "-", "(none)"]
    r = CliRunner().invoke(main, ["stats", "--json"])
    assert json.loads(r.output)["accounting"]["served"][1]["pid"] == 300
    stats_daemon.accounting = OFF
    r = CliRunner().invoke(main, ["stats"])
    assert r.exit_code == 0 and r.output.rstrip().endswith(
        "accounting off: tracefs /nope: tracefs: No such file or directory")
    stats_daemon.accounting = None          # no target with serves: nothing said
    r = CliRunner().invoke(main, ["stats"])
    assert "accounting" not in r.output and "served" not in r.output
    stats_daemon.accounting = {"enabled": True}
    r = CliRunner().invoke(main, ["stats", "--openmetrics"])
    assert r.exit_code == 1 and "accounting: missing or bad field 'served'" in r.output


def test_openmetrics_carries_the_served_time():
    stats = {**STATS, "accounting": accounting()}
    text = metrics.render(metrics.families(metrics.snapshot(STATUS, stats)))
    got = {(s.name, frozenset(s.labels.items())): s.value
           for f in om_parse(text) for s in f.samples}
    a = frozenset({"target": "nic", "comm": "rx-a", "pid": "300"}.items())
    b = frozenset({"target": "nic", "comm": "rx-b", "pid": "301"}.items())
    assert got[("irqres_served_irq_seconds_total", a)] == 0.003
    assert got[("irqres_served_irq_seconds_total", b)] == 0.001000001
    assert got[("irqres_served_activations_total", a)] == 5
    assert got[("irqres_served_packets_total", a)] == 7
    assert got[("irqres_served_packets_total", b)] == 0
    assert got[("irqres_accounting_enabled", frozenset())] == 1
    assert got[("irqres_accounting_lost_events_total", frozenset())] == 0
    assert got[("irqres_accounting_dropped_activations_total", frozenset())] == 0
    off = metrics.render(metrics.families(metrics.snapshot(STATUS, {**STATS,
                                                                     "accounting": OFF})))
    assert "irqres_accounting_enabled 0" in off and "irqres_served_irq" in off
    plain = metrics.render(metrics.families(metrics.snapshot(STATUS, STATS)))
    assert "irqres_accounting" not in plain and "irqres_served" not in plain


def snap(t_ns: int, acc: dict) -> Snapshot:
    return Snapshot(t_ns, 4242, "p.yaml", (), {}, {}, served_time.parse({"accounting": acc}))


def test_top_share_of_a_cpu_over_the_interval():
    a = snap(10 * S, accounting(a_ns=S, b_ns=S))
    b = snap(12 * S, accounting(a_ns=S + 500_000_000, b_ns=S))
    lines = live.served_lines(a, b, 100)
    assert lines[0].split() == ["SERVED", "BY", "PID", "PROCESS", "TIME", "%CPU"]
    row = {ln.split()[1]: ln.split() for ln in lines[1:]}
    assert row["300"][-1] == "25%" and row["301"][-1] == "0%"
    # first reading, or totals that went back (a new profile): no rate made up
    assert live.served_lines(None, b, 100)[1].split()[-1] == "-"
    assert live.served_lines(b, a, 100)[1].split()[-1] == "-"
    assert live.served_lines(a, snap(12 * S, OFF), 100) == [f"accounting off: {OFF['error']}"]
    assert all(len(ln) <= 30 for ln in live.served_lines(a, b, 30))


def test_top_piped_shows_the_served_processes(stats_daemon):
    stats_daemon.accounting = accounting()
    r = CliRunner().invoke(main, ["top", "--once", "-i", "50ms"])
    assert r.exit_code == 0, r.output
    assert "SERVED BY" in r.output and "rx-a" in r.output
    frame = live.frame(None, snap(S, copy.deepcopy(accounting())), 100, 40, S)
    assert any("rx-b" in ln for ln in frame)
