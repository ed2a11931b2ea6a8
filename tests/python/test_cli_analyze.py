"""``irqres analyze`` and ``irqres record`` through click's CliRunner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from irqres.cli import main
from irqres.plots import display_bins
from irqres.pmf import Pmf
from irqres.trace import RECORD_COMMAND, read_trace

DATA = Path(__file__).resolve().parents[1] / "data"
FAKE = str(DATA / "host-fakeirq.dat")
TRACEFS = "/sys/kernel/tracing"


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_help_shows_the_record_lines():
    r = run("analyze", "--help")
    assert r.exit_code == 0
    flat = " ".join(r.output.split())
    assert " ".join(RECORD_COMMAND.split()) in flat
    assert "irqres record -o trace.dat" in flat


def test_text_report_has_every_part():
    r = run("analyze", FAKE, "--period", "1.5ms", "--target-prob", "0.9", "--buffer", "8",
            "--min-interarrival", "1ms")
    assert r.exit_code == 0, r.output
    out = r.output
    assert "== irq/99-fakedev" in out
    assert "inter-arrival (activ.)" in out and "execution time" in out
    assert "lost events: none" in out
    assert "fake-consumer" in out                      # accounting
    assert "buffering check: N_c = 8, P = 1ms (given)" in out
    assert "recommendation:" in out and "1.5ms" in out
    assert "version: 1" in out and "irq: [99]" in out  # the profile snippet


def test_json_is_complete_and_consistent(tmp_path):
    r = run("analyze", FAKE, "--json", "--period", "1.5ms", "--target-prob", "0.9",
            "--granularity", "10us")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["trace"]["cpus"] == 2 and d["trace"]["lost"]["gaps"] == 0
    (th,) = d["threads"]
    assert th["comm"] == "irq/99-fakedev" and th["irq"] == 99
    assert th["stats"]["activations"] >= 120
    pmf = th["pmf"]["exec"]
    assert pmf["granularity_ns"] == 10_000
    assert abs(sum(pmf["probs"]) - 1) < 1e-9
    assert all(v % 10_000 == 0 for v in pmf["values_ns"])
    assert th["served"][0]["comm"] == "fake-consumer"
    # no hard IRQ in this trace: no statistics, not a min and max of 0
    assert th["stats"]["irq_interarrival"] == {"count": 0, "mean_ns": None, "std_ns": None,
                                               "min_ns": None, "max_ns": None}
    assert th["deadline_ns"] is not None and th["warnings"] == []
    rows = th["recommendation"]["rows"]
    assert [row["period_ns"] for row in rows] == [1_500_000]
    best = th["recommendation"]["best"]
    assert best is not None and 0 < best["runtime_ns"] <= 1_500_000
    prof = yaml.safe_load(th["profile"])
    assert prof["version"] == 1 and prof["targets"][0]["irq"] == [99]


def test_infeasible_rows_carry_no_buffering_noise():
    r = run("analyze", FAKE, "--period", "1.5ms", "--period", "100ms", "--deadline", "2ms",
            "--buffer", "8")
    assert r.exit_code == 0, r.output
    assert "infeasible" in r.output
    assert "buffering alone needs" not in r.output


def test_progress_only_after_two_seconds_on_a_terminal(monkeypatch, capsys):
    from irqres.cli import analyze as cli

    clock = [100.0]
    monkeypatch.setattr(cli.time, "monotonic", lambda: clock[0])
    p = cli._Progress("t.dat")
    p(1 << 20)
    assert capsys.readouterr().err == ""          # a quick read stays silent
    clock[0] += 2.5
    p(2 << 20)
    p.done()
    err = capsys.readouterr().err
    assert "reading t.dat: 2M records, 2 s" in err and err.endswith("\r\033[K")


def test_buffering_bounds_and_no_progress_without_a_terminal():
    r = CliRunner().invoke(main, ["analyze", FAKE, "--json", "--period", "1.5ms", "--period",
                                  "3ms", "--target-prob", "0.9", "--buffer", "2",
                                  "--min-interarrival", "1ms"])
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # progress only on a terminal
    (th,) = json.loads(r.stdout)["threads"]
    # (T - Q)/P < N_c  <=>  Q >= T - N_c*P + 1
    assert th["buffering"] == [{"period_ns": 1_500_000, "min_runtime_ns": 0},
                               {"period_ns": 3_000_000, "min_runtime_ns": 1_000_001}]
    for row in th["recommendation"]["rows"]:
        if row["feasible"]:
            assert row["buffering"]["ok"] and row["runtime_ns"] >= 1_000_001 * (
                row["period_ns"] == 3_000_000)


def test_plots_and_profile_out(tmp_path):
    plots = tmp_path / "plots"
    prof = tmp_path / "p.yaml"
    r = run("analyze", FAKE, "--period", "1.5ms", "--target-prob", "0.9", "--plot", str(plots),
            "--profile-out", str(prof))
    assert r.exit_code == 0, r.output
    files = sorted(p.name for p in plots.iterdir())
    assert len(files) == 2 and files[0].endswith(".png") and files[1].endswith(".svg")
    assert (plots / files[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (plots / files[0]).stat().st_size > 10_000
    doc = yaml.safe_load(prof.read_text())
    t = doc["targets"][0]
    assert doc["version"] == 1 and t["name"] == "irq99-fakedev"
    assert t["runtime"].endswith(("us", "ms", "ns")) and t["period"] == "1.5ms"


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink", "probe"])
def test_profile_out_never_overwrites_an_input(tmp_path, link):
    """Before: --profile-out TRACE wrote the profile over the recording."""
    trace = tmp_path / "t.dat"
    trace.write_bytes(Path(FAKE).read_bytes())
    out, extra, name = trace, [], "TRACE"
    if link == "symlink":
        out = tmp_path / "link.dat"
        out.symlink_to(trace.name)
    elif link == "hardlink":
        out = tmp_path / "hard.dat"
        os.link(trace, out)
    elif link == "probe":
        out = tmp_path / "probe.dat"
        out.write_bytes(trace.read_bytes())
        extra, name = ["--calibrate", str(out)], "--calibrate PROBE"
    r = run("analyze", str(trace), *extra, "--profile-out", str(out))
    assert r.exit_code == 2, r.output
    assert (f"Invalid value for '--profile-out': {out} is the same file as {name} "
            f"{trace if name == 'TRACE' else out}: writing it would overwrite the "
            "recording") in r.output
    assert out.read_bytes() == Path(FAKE).read_bytes()


def test_plots_never_overwrite_the_trace(tmp_path):
    """A trace kept in the plot directory under a plot's name stays as it is."""
    plots = tmp_path / "plots"
    r = run("analyze", FAKE, "--plot", str(plots))
    assert r.exit_code == 0, r.output
    png = next(plots.glob("*.png"))
    png.write_bytes(Path(FAKE).read_bytes())
    prof = tmp_path / "p.yaml"
    r = run("analyze", str(png), "--plot", str(plots), "--profile-out", str(prof))
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '--plot': {png} is the same file as TRACE {png}" in r.output
    assert png.read_bytes() == Path(FAKE).read_bytes() and not prof.exists()


@pytest.mark.parametrize("args, message", [
    # before: accepted, and every row infeasible by rounding alone
    (["--granularity", "1s"], "Invalid value for '--granularity': 1s leaves fewer than 20 "
     "bins below the response bound D = 2.197ms chosen for irq/99-fakedev (pid 32349) "
     "(the model counts time in whole bins): give at most 109.85us, or a longer --deadline"),
    (["--granularity", "1ms", "--deadline", "10ms"], "Invalid value for '--granularity': "
     "1ms leaves fewer than 20 bins below --deadline 10ms (the model counts time in whole "
     "bins): give at most 500us"),
    (["--granularity", "100us", "--period", "50us"], "Invalid value for '--granularity': "
     "100us is longer than --period 50us: a budget is a whole number of bins"),
])
def test_granularity_too_coarse_for_the_deadline_is_refused(args, message):
    r = CliRunner().invoke(main, ["analyze", FAKE, "--thread", "99", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output


def test_granularity_of_twenty_bins_below_the_deadline_is_taken():
    r = run("analyze", FAKE, "--granularity", "500us", "--deadline", "10ms",
            "--target-prob", "0.9")
    assert r.exit_code == 0, r.output
    assert "D = 10ms (given)" in r.output and "Δ = 500us" in r.output


OVERRUN = str(DATA / "host-overrun.dat")


@pytest.mark.parametrize("args", [["analyze", OVERRUN], ["-q", "analyze", OVERRUN],
                                  ["analyze", OVERRUN, "-q"]])
def test_quiet_silences_the_warnings(args):
    """-q means errors only; before, every `warning:` line was printed all the same."""
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert "== irq/99-fakedev" in r.stdout
    if "-q" in args:
        assert r.stderr == ""
    else:       # unchanged without -q: on stderr
        assert "\nwarning: irq/99-fakedev (pid 32438): no reservation recommended: " \
            in "\n" + r.stderr, r.stderr


def _table_rows(output: str) -> dict[str, list[str]]:
    """The recommendation table of a text report: period -> the row's columns."""
    lines = output.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:4] == ["period", "runtime",
                                                                      "Q/T", "model"])
    rows = {}
    for ln in lines[head + 1:]:
        if ln.startswith("profile") or ln.startswith("no candidate"):
            break
        cols = ln.split()
        if cols and cols[0][0].isdigit():
            rows[cols[0]] = cols
    return rows


def test_model_column_and_option():
    # a job every ~2 ms: auto takes the per-activation chain at 1 ms (most inter-arrivals
    # are >= 1 ms) and the per-period demand at 2.6 ms
    args = ["analyze", FAKE, "--period", "1ms", "--period", "2.6ms", "--target-prob", "0.9"]
    auto = _table_rows(run(*args).output)
    assert auto["1ms"][3] == "activation" and auto["2.6ms"][3] == "demand"
    for kind in ("activation", "demand"):
        r = run(*args, "--model", kind)
        assert r.exit_code == 0, r.output
        assert [row[3] for row in _table_rows(r.output).values()] == [kind, kind]
    # the per-activation chain cannot vouch for a period longer than every inter-arrival
    act = _table_rows(run(*args, "--period", "10ms", "--model", "activation").output)
    assert act["10ms"][1:5] == ["-", "-", "activation", "infeasible:"]
    r = run("analyze", FAKE, "--json", "--period", "2.6ms", "--target-prob", "0.9",
            "--model", "activation")
    (th,) = json.loads(r.stdout)["threads"]
    assert th["recommendation"]["model"] == "activation"
    assert [row["model"] for row in th["recommendation"]["rows"]] == ["activation"]


@pytest.mark.parametrize("args, message", [
    (["/nonexistent/trace.dat"], "cannot read the trace"),
    ([str(DATA / "fake_irq.py")], "not a trace-cmd data file"),
    ([str(DATA / "host-noevents.dat")], "no sched:sched_switch"),
    ([FAKE, "--thread", "nvme*"], "no IRQ thread matches 'nvme*'"),
    ([FAKE, "--granularity", "10 parsecs"],
     "Invalid value for '--granularity': '10 parsecs' is not a duration: unknown unit"),
    ([FAKE, "--period", "3msec"],
     "Invalid value for '--period': '3msec' is not a duration: unknown unit 'msec'"),
    ([FAKE, "--period", "3"], "'3' is not a duration: a nonzero number needs a unit"),
    ([FAKE, "--period", "0ms"], "must be longer than 0"),
    ([FAKE, "--buffer", "0"], "N must be at least 1 interrupt"),
    ([FAKE, "--buffer", "eth0=many"], "expected N or PATTERN=N"),
    ([FAKE, "--buffer", "=8"], "the pattern before '=' is empty"),
    ([FAKE, "--buffer", "nvme*=8"], "--buffer nvme*=...: the pattern matches none"),
    ([FAKE, "--task", "nosuchtask"], "no task matches 'nosuchtask'"),
    ([FAKE, "--profile-out", "/nonexistent/dir/p.yaml"], "does not exist"),
    ([FAKE, "--plot", str(DATA / "README.md")], "is a file"),
    ([FAKE, "--target-prob", "1.5"], "1.5 is not in the range"),
    ([FAKE, "--model", "queue"], "'queue' is not one of 'auto', 'activation', 'demand'"),
])
def test_errors_are_messages_not_tracebacks(args, message):
    r = CliRunner().invoke(main, ["analyze", *args])
    assert r.exit_code != 0
    assert message in r.output
    assert "Traceback" not in r.output
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit)


def test_truncated_trace_is_a_clean_error(tmp_path):
    p = tmp_path / "cut.dat"
    p.write_bytes(Path(FAKE).read_bytes()[:200_000])
    r = CliRunner().invoke(main, ["analyze", str(p)])
    assert r.exit_code == 1
    assert f"{p}: " in r.output and "truncated or damaged" in r.output


def test_record_needs_a_command_or_a_duration(tmp_path):
    r = CliRunner().invoke(main, ["record", "-o", str(tmp_path / "t.dat")])
    assert r.exit_code == 2 and "give a command to run" in r.output
    r = CliRunner().invoke(main, ["record", "-o", str(tmp_path / "t.dat"), "--duration", "x"])
    assert r.exit_code == 2 and "--duration" in r.output
    r = CliRunner().invoke(main, ["record", "-o", str(tmp_path / "t.dat"), "--duration", "10"])
    assert r.exit_code == 2 and "'10' is not a duration: a nonzero number needs a unit: 10s" \
        in r.output
    r = CliRunner().invoke(main, ["record", "-o", "/nonexistent/dir/t.dat", "--duration", "1s"])
    assert r.exit_code == 1 and "does not exist" in r.output


def needs_tracefs(fn):
    """Real recordings: root and a mounted tracefs."""
    fn = pytest.mark.skipif(not os.path.isfile(f"{TRACEFS}/available_events"),
                            reason="tracefs is not mounted at /sys/kernel/tracing")(fn)
    fn = pytest.mark.skipif(os.geteuid() != 0, reason="recording needs root (tracefs writes)")(fn)
    return pytest.mark.root(fn)


def _tracefs_state():
    """The settings record must leave as found. The buffer's size in KiB, rounded to the
    kernel's 4 KiB page: a buffer never grown since boot ("7 (expanded: 1408)") is grown
    by the first event enabled in any instance, for good, and reads back as the size it
    was to grow to (1410)."""
    names = ["tracing_on", "set_event", "current_tracer", "options/overwrite"]
    state = {n: Path(TRACEFS, n).read_text() for n in names}
    size = Path(TRACEFS, "buffer_size_kb").read_text().strip()
    if "expanded:" in size:
        size = size.split("expanded:")[1].strip(" )")
    state["buffer_size_kb"] = int(size)
    return state


def _same_tracefs(after: dict, before: dict) -> bool:
    a, b = dict(after), dict(before)
    return abs(a.pop("buffer_size_kb") - b.pop("buffer_size_kb")) < 4 and a == b


@needs_tracefs
def test_record_a_command_for_real_and_leave_tracefs_as_found(tmp_path):
    out = tmp_path / "rec.dat"
    before = _tracefs_state()
    # --busy-idle: this host leaves switches out of idle on CPU 1 out of its traces, and
    # an activation that started there from idle would be dropped (without: 0 of 40 kept)
    r = CliRunner().invoke(main, ["record", "-o", str(out), "--buffer-kb", "1024",
                                  "--busy-idle", "--", "python3", str(DATA / "fake_irq.py"),
                                  "--count", "40"])
    assert r.exit_code == 0, r.output
    after = _tracefs_state()
    assert _same_tracefs(after, before), (after, before)
    assert not [d for d in os.listdir(f"{TRACEFS}/instances") if d == f"irqres-{os.getpid()}"]
    t = read_trace(out)
    comms = {c for _, c in t.comms}
    assert "irq/99-fakedev" in comms and "fake-consumer" in comms and "irqres-idle" in comms
    r = run("analyze", str(out), "--period", "1.5ms", "--target-prob", "0.9", "--json")
    assert r.exit_code == 0, r.output
    # 40 wake-ups were made; on a loaded machine some merge (the thread was still
    # pending) or fall at the trace's edges, but most of them must be there
    assert 10 <= json.loads(r.stdout)["threads"][0]["stats"]["activations"] <= 40
    # the recording kernel's facts beside the trace, and analyze plans with them
    side = json.loads((tmp_path / "rec.dat.kernel.json").read_text())
    assert side["release"] == os.uname().release and side["schema_version"] == 1
    kernel = json.loads(r.stdout)["options"]["kernel"]
    assert kernel["sources"]["periods"].startswith("recorded with the trace (rec.dat.kernel")


@needs_tracefs
def test_record_for_a_duration_stops_a_longer_command(tmp_path):
    out = tmp_path / "dur.dat"
    r = CliRunner().invoke(main, ["record", "-o", str(out), "--duration", "300ms",
                                  "--buffer-kb", "256", "--", "sleep", "30"])
    # sleep is stopped by SIGTERM after 300 ms: that is what was asked for, so exit 0
    assert r.exit_code == 0, r.output
    assert "--duration 300ms ended sleep (exit status -15)" in r.output
    assert read_trace(out, check_events=False).nrecords > 0
    # a command that fails before the duration is over is an error (options after the
    # command are the command's)
    r = CliRunner().invoke(main, ["record", "-o", str(out), "--duration", "30s",
                                  "--buffer-kb", "256", "sh", "-c", "exit 3", "-v"])
    assert r.exit_code == 1 and "the command exited with status 3" in r.output


def test_plot_bars_merge_fine_pmfs_without_losing_mass():
    rng = np.random.default_rng(5)
    pmf = Pmf.from_samples(rng.integers(10_000, 2_000_000, 5_000), 1_000)
    starts, probs, width = display_bins(pmf)
    assert width % pmf.granularity_ns == 0 and len(starts) <= 81
    assert abs(probs.sum() - 1) < 1e-12
    assert starts[0] <= pmf.min_ns < starts[0] + width


def test_plot_statistics_are_the_tables_and_the_response_panel_predicts_the_best_row():
    import matplotlib.pyplot as plt
    from irqres.plots import stats_label, thread_figure
    from irqres.report import Options, analyze
    from irqres.report.curves import response_curves
    from irqres.tables import readable

    rep = analyze(read_trace(FAKE), Options(mc_jobs=0))
    (tr,) = rep.threads
    fig = thread_figure(tr, response_curves(tr))
    try:
        axes = fig.axes
        text = rep.text()
        for ax, s in ((axes[0], tr.stats.interarrival), (axes[1], tr.stats.exec)):
            (label,) = [t.get_text() for t in ax.get_legend().get_texts()]
            # the raw samples' mean, as in the table, not the binned PMF's
            assert label == stats_label(s) == (f"mean {readable(round(s.mean_ns))} "
                                               f"(std {readable(round(s.std_ns))})")
            assert tr.stats.table() in text
        pmf_mean = tr.interarrival_pmf.mean_ns()
        assert round(pmf_mean) != round(tr.stats.interarrival.mean_ns)
        assert axes[2].get_yscale() == "log"                  # the tails
        best = tr.recommendation.best
        resp = axes[3]
        labels = [t.get_text() for t in resp.get_legend().get_texts()]
        assert f"predicted, model ({best.model})" in labels and "measured (as traced)" in labels
        assert f"T = {best.period_ns / 1e6:g}ms" in resp.get_title()
        # the predicted curve meets the target at D, as the row says
        (line,) = [ln for ln in resp.get_lines() if ln.get_label().startswith("predicted")]
        x, y = line.get_data()
        at_d = y[np.searchsorted(x, tr.deadline_ns / 1000.0, side="right") - 1]
        assert at_d <= best.solver_prob + 1e-9
    finally:
        plt.close(fig)


def test_lost_events_are_listed_per_cpu():
    r = run("analyze", str(DATA / "host-overrun.dat"), "--period", "2ms")
    assert r.exit_code == 0, r.output
    assert "lost events: 5478 in 2 gaps" in r.output
    assert "CPU 1: 5116 events lost before +88.204327ms (overwritten)" in r.output
    r = run("analyze", str(DATA / "host-overrun.dat"), "--period", "2ms", "--json")
    lost = json.loads(r.stdout)["trace"]["lost"]
    assert lost["events_lost"] == 5478
    assert sorted((g["cpu"], g["count"], g["after_ns"]) for g in lost["list"]) == [
        (0, 362, None), (1, 5116, None)]


IRQRESD = Path(__file__).resolve().parents[2] / "build" / "daemon" / "irqresd"


@pytest.mark.skipif(not IRQRESD.is_file(), reason="irqresd is not built (make daemon)")
@pytest.mark.parametrize("trace, args", [
    (FAKE, ["--period", "1.5ms", "--target-prob", "0.9", "--buffer", "64"]),
    (FAKE, ["--task", "fake-consumer", "--task", "fake-device"]),
    (str(DATA / "vm-e1000-udp.dat"), ["--thread", "irq/11-*", "--period", "20ms",
                                      "--deadline", "40ms", "--target-prob", "0.9"]),
])
def test_profile_out_is_a_profile_irqresd_reads(tmp_path, trace, args):
    import subprocess

    prof = tmp_path / "p.yaml"
    r = run("analyze", trace, *args, "--profile-out", str(prof))
    assert r.exit_code == 0, r.output
    # --dry-run only reads /proc and /sys: 0 = the kernel would accept it, 1 = it would
    # not (here: no such IRQ thread on this machine), 2 = a bad profile
    p = subprocess.run([str(IRQRESD), "--dry-run", "-p", str(prof), "--run-dir",
                        str(tmp_path / "run")], capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert f"{prof}:" not in p.stderr or "matches no thread" in p.stderr


def test_json_output_never_holds_nan():
    from irqres.jsonout import json_safe

    d = {"a": [float("nan"), 1.5, np.float64("inf")], "b": {"c": (2, float("-inf"))}}
    want = '{"a": [null, 1.5, null], "b": {"c": [2, null]}}'
    assert json.dumps(json_safe(d), allow_nan=False) == want


@pytest.mark.parametrize("args", [["--help"], ["analyze", "--help"], ["status", "--help"],
                                  ["status", "--socket", "/nonexistent/irqresd.sock"]])
def test_light_commands_import_neither_numpy_nor_scipy(args):
    import subprocess
    import sys

    code = ("import sys\nfrom irqres.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='irqres')\nexcept SystemExit:\n    pass\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', 'yaml'})\n"
            "print('HEAVY', heavy)\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "analysis"))
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       env=env, timeout=60)
    assert "HEAVY []" in p.stdout, p.stdout + p.stderr



def test_plots_draw_the_curves_given_and_never_run_the_model(monkeypatch):
    """Drawing takes the report's curves: the model and the replay are not run again."""
    import irqres.measure.activations as activations_mod
    import irqres.model.recommend as recommend_mod
    import irqres.model.replay as replay_mod
    import matplotlib.pyplot as plt
    from irqres.plots import thread_figure
    from irqres.report import Options, analyze
    from irqres.report.curves import response_curves

    rep = analyze(read_trace(FAKE), Options(mc_jobs=0))
    (tr,) = rep.threads
    curves = response_curves(tr)
    assert curves.predicted_cdf is not None and curves.replay_ns is not None

    def refuse(*args, **kwargs):
        raise AssertionError("the plot ran the model again")

    for mod, name in ((replay_mod, "replay"), (recommend_mod, "predicted_response_cdf"),
                      (activations_mod, "joined_arrivals")):
        monkeypatch.setattr(mod, name, refuse)
    fig = thread_figure(tr, curves)
    try:
        (line,) = [ln for ln in fig.axes[3].get_lines()
                   if ln.get_label().startswith("predicted")]
        x, y = line.get_data()
        assert np.array_equal(x, curves.xs_ns / 1000.0)
        assert np.array_equal(y, curves.predicted_cdf)
    finally:
        plt.close(fig)
