"""irqres stats --openmetrics / --textfile: the exposition is checked by prometheus_client's
own parsers (OpenMetrics 1.0, and the text format node_exporter's textfile collector
reads), and carries the numbers irqresd reported, exactly."""

from __future__ import annotations

import copy
import os
import stat

import pytest
from click.testing import CliRunner
from fakes import STATS, STATUS, make_waiting
from hypothesis import given, settings
from hypothesis import strategies as st
from irqres import metrics
from irqres.cli import main
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families as prom_parse


@pytest.fixture
def sysfs(tmp_path):
    d = tmp_path / "sys" / "class" / "net" / "eth0" / "statistics"
    d.mkdir(parents=True)
    (d / "rx_dropped").write_text("17\n")
    (d / "rx_missed_errors").write_text("3\n")
    return str(tmp_path / "sys")


def samples(families) -> dict:
    """(sample name, frozen labels) -> value of every sample parsed; no sample twice
    (a check the parsers leave out)."""
    out = {}
    for f in families:
        for s in f.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in out, f"sample twice: {key}"
            out[key] = s.value
    return out


def test_openmetrics_parses_and_carries_the_numbers(sysfs):
    text = metrics.render(metrics.families(metrics.snapshot(STATUS, STATS, sysfs)))
    assert text.endswith("# EOF\n")
    got = samples(om_parse(text))
    nic = {"target": "nic", "comm": "irq/11-eth0", "pid": "105"}

    def v(name, **extra):
        return got[(name, frozenset({**nic, **extra}.items()))]

    assert v("irqres_thread_runtime_seconds") == 0.002
    assert v("irqres_thread_deadline_seconds") == 0.008
    assert v("irqres_thread_period_seconds") == 0.01
    assert v("irqres_thread_cpu_seconds_total") == 1.234567891
    assert v("irqres_thread_wait_seconds_total") == 0.000005
    assert v("irqres_thread_context_switches_total", kind="involuntary") == 2
    assert v("irqres_thread_throttle_events_total") == 2
    assert v("irqres_thread_interrupts_total", irqs="11") == 1234
    assert v("irqres_thread_taken") == 0
    drops = {k: val for k, val in got.items() if k[0] == "irqres_nic_drops_total"}
    assert sorted((dict(k[1])["counter"], val) for k, val in drops.items()) == [
        ("rx_dropped", 17), ("rx_missed_errors", 3)]
    assert got[("irqres_up", frozenset())] == 1
    # the task: no reservation in force, so no Q/D/T and no throttling; no IRQ lines;
    # its odd comm is escaped and read back as it is
    task = [dict(k[1]) for k in got if dict(k[1]).get("pid") == "777"]
    assert task and all(lb["comm"] == 'lo"ad\\x' for lb in task)
    names = {k[0] for k in got if dict(k[1]).get("pid") == "777"}
    assert "irqres_thread_runtime_seconds" not in names
    assert "irqres_thread_throttle_events_total" not in names
    assert "irqres_thread_interrupts_total" not in names
    assert "irqres_thread_cpu_seconds_total" in names


def test_a_taken_thread_is_exported(sysfs):
    """irqres_thread_taken: 1 for a thread status says another irqresd or tool holds."""
    status = copy.deepcopy(STATUS)
    status["targets"][0]["threads"][0]["taken"] = True
    got = samples(om_parse(metrics.render(metrics.families(
        metrics.snapshot(status, STATS, sysfs)))))
    taken = {dict(k[1])["pid"]: v for k, v in got.items() if k[0] == "irqres_thread_taken"}
    assert taken["105"] == 1 and set(taken.values()) == {0, 1}


def test_a_waiting_thread_is_exported_while_it_waits(sysfs):
    """irqres_thread_waiting_seconds: one sample per thread irqresd waits to reserve, its
    wait in exact seconds; none when nothing waits; a malformed entry is named."""
    status = copy.deepcopy(STATUS)
    status["targets"][0]["waiting"] = [make_waiting(pid=106, waiting_ns=1_250_000_001)]
    got = samples(om_parse(metrics.render(metrics.families(
        metrics.snapshot(status, STATS, sysfs)))))
    waits = {dict(k[1])["pid"]: v for k, v in got.items()
             if k[0] == "irqres_thread_waiting_seconds"}
    assert waits == {"106": 1.250000001}
    assert frozenset({"target": "nic", "comm": "irq/12-eth1", "pid": "106"}.items()) in {
        k[1] for k in got if k[0] == "irqres_thread_waiting_seconds"}
    plain = samples(om_parse(metrics.render(metrics.families(
        metrics.snapshot(STATUS, STATS, sysfs)))))
    assert not any(k[0] == "irqres_thread_waiting_seconds" for k in plain)
    del status["targets"][0]["waiting"][0]["waiting_ns"]
    with pytest.raises(metrics.MetricsError, match=r"waiting thread.*waiting_ns"):
        metrics.snapshot(status, STATS, sysfs)


def test_textfile_format_parses_for_node_exporter(sysfs):
    fams = metrics.families(metrics.snapshot(STATUS, STATS, sysfs))
    text = metrics.render(fams, openmetrics=False)
    assert "# EOF" not in text and "# UNIT" not in text
    parsed = {f.name: f for f in prom_parse(text)}
    # every family typed as it should be, every sample inside its family
    assert parsed["irqres_thread_cpu_seconds"].type == "counter"
    assert parsed["irqres_thread_runtime_seconds"].type == "gauge"
    assert parsed["irqres_daemon_info"].type == "gauge"
    for f in parsed.values():
        assert f.type != "unknown", f.name
    got = samples(parsed.values())
    assert got[("irqres_thread_cpu_seconds_total",
                frozenset({"target": "nic", "comm": "irq/11-eth0", "pid": "105"}.items()))
               ] == 1.234567891


def test_seconds_are_exact():
    assert metrics.seconds(0) == "0" and metrics.seconds(1_000_000_000) == "1"
    assert metrics.seconds(1_500_000) == "0.0015"
    assert metrics.seconds(2**63 - 1) == "9223372036.854775807"


THREAD = st.fixed_dictionaries({
    "pid": st.integers(1, 4_194_304),
    "comm": st.text(st.characters(blacklist_categories=("Cs",)), max_size=15),
    "target": st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20),
    "irqs": st.lists(st.integers(0, 4096), max_size=3), "irq_count": st.integers(0, 2**63 - 1),
    "policy": st.sampled_from(["deadline", "fifo", "other"]),
    "runtime_ns": st.integers(1024, 2**40), "period_ns": st.integers(1024, 2**40),
    "deadline_ns": st.integers(1024, 2**40), "cpu_time_ns": st.integers(0, 2**63 - 1),
    "wait_time_ns": st.integers(0, 2**63 - 1), "voluntary_switches": st.integers(0, 2**63),
    "involuntary_switches": st.integers(0, 2**63)})


@settings(max_examples=60, deadline=None)
@given(st.lists(THREAD, max_size=6, unique_by=lambda t: t["pid"]))
def test_any_reply_gives_valid_openmetrics(threads):
    snap = metrics.snapshot({"pid": 1, "profile": None, "targets": []},
                            {"time_ns": 1, "threads": threads}, "/nonexistent")
    text = metrics.render(metrics.families(snap))
    got = samples(om_parse(text))
    for th in threads:
        lb = frozenset({"target": th["target"], "comm": th["comm"],
                        "pid": str(th["pid"])}.items())
        # counters read back exactly (the parser keeps integers as int)
        assert got[("irqres_thread_context_switches_total",
                    lb | {("kind", "voluntary")})] == th["voluntary_switches"]
    prom_text = metrics.render(metrics.families(snap), openmetrics=False)
    assert sum(len(f.samples) for f in prom_parse(prom_text)) == len(got)


def test_write_textfile_is_atomic_and_readable(tmp_path):
    path = metrics.write_textfile(str(tmp_path), "a 1\n")
    assert open(path).read() == "a 1\n"
    metrics.write_textfile(str(tmp_path), "a 2\n")
    assert os.listdir(tmp_path) == ["irqres.prom"]          # no temporary left behind
    assert open(path).read() == "a 2\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    with pytest.raises(metrics.MetricsError, match="not a directory"):
        metrics.write_textfile(str(tmp_path / "none"), "x")


def test_stats_cli_openmetrics_and_textfile(stats_daemon, tmp_path):
    r = CliRunner().invoke(main, ["stats", "--openmetrics"])
    assert r.exit_code == 0, r.output
    assert any(f.name == "irqres_thread_cpu_seconds" for f in om_parse(r.output))
    out = tmp_path / "textfile"
    out.mkdir()
    r = CliRunner().invoke(main, ["stats", "--textfile", str(out)])
    assert r.exit_code == 0 and r.output == "", r.output            # quiet for cron
    text = (out / "irqres.prom").read_text()
    assert {f.name for f in prom_parse(text)} >= {"irqres_up", "irqres_thread_cpu_seconds"}
    r = CliRunner().invoke(main, ["stats", "--json", "--openmetrics"])
    assert r.exit_code == 2 and "exclude each other" in r.output


def test_stats_cli_without_daemon_says_down(tmp_path, monkeypatch):
    monkeypatch.setenv("IRQRES_SOCKET", str(tmp_path / "none.sock"))
    r = CliRunner().invoke(main, ["stats", "--textfile", str(tmp_path)])
    assert r.exit_code == 1 and "irqresd is not running" in r.output
    parsed = {f.name: f for f in prom_parse((tmp_path / "irqres.prom").read_text())}
    assert parsed["irqres_up"].samples[0].value == 0
    r = CliRunner().invoke(main, ["stats", "--openmetrics"])
    assert r.exit_code == 1 and "irqres_up 0" in r.output
