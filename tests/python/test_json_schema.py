"""Every ``--json`` output of the irqres CLI against its schema in docs/json.md: real
outputs of the commands (a fake irqresd where they speak to one), validated with
jsonschema; and every command that has ``--json`` has a schema there."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import click
import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner
from fakes import fake_daemon
from irqres import jsonout
from irqres.cli import main
from irqres.report import Options
from test_cli_apply import fake_irqresd

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs/json.md"
DATA = REPO / "tests/data"


def doc_schemas() -> dict[str, dict]:
    """The JSON Schema blocks of the "irqres (Python CLI)" section, by $id."""
    text = DOC.read_text()
    section = text.split("## irqres (Python CLI)", 1)[1].split("\n## ", 1)[0]
    schemas = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", section, re.S)]
    return {s["$id"]: s for s in schemas}


SCHEMAS = doc_schemas()


def check(name: str, output: str) -> dict:
    obj = json.loads(output)
    jsonschema.Draft202012Validator(SCHEMAS[f"irqres-{name}"]).validate(obj)
    return obj


def runner() -> CliRunner:
    """A runner whose stdout holds stdout alone (click < 8.2 mixes stderr in unless told)."""
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:                       # click >= 8.2: kept apart always
        return CliRunner()


def run(*args: str) -> str:
    r = runner().invoke(main, list(args), catch_exceptions=False)
    return r.stdout


def json_commands() -> list[str]:
    """The names of the subcommands that have a --json option."""
    ctx = click.Context(main)
    names = []
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        if cmd is not None and any(isinstance(p, click.Option) and "--json" in p.opts
                                   for p in cmd.params):
            names.append(name)
    return sorted(names)


def test_every_json_command_has_a_valid_schema():
    assert json_commands() == sorted(s.removeprefix("irqres-") for s in SCHEMAS)
    for schema in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["properties"]["schema_version"] == {"const": jsonout.SCHEMA_VERSION}
        assert "schema_version" in schema["required"]


@pytest.mark.parametrize("args", [
    ("--period", "1.5ms", "--target-prob", "0.9"),
    ("--period", "1.5ms", "--target-prob", "0.9", "--buffer", "64", "--deadline", "1.5ms",
     "--under", "500us,1.5ms", "--task", "fake-consumer"),
    # a trace recorded without a reservation is a probe whose thread was preempted in
    # most activations: a target of 0.1 leaves room for that many
    ("--period", "1.5ms", "--target-prob", "0.1", "--calibrate",
     str(DATA / "host-fakeirq.dat")),
])
def test_analyze(args, tmp_path):
    d = check("analyze", run("analyze", str(DATA / "host-fakeirq.dat"), "--json",
                             "--plot", str(tmp_path), *args))
    assert d["threads"] and d["plots"]
    assert next(iter(d)) == "schema_version"


def test_analyze_options_are_a_defined_object():
    """Every field of Options is published under a key of its own, and nothing else."""
    opts = Options(buffers=(("eth0", 64), (None, 8)), under=(500_000, 1_500_000),
                   periods_ns=[1_000_000])
    d = opts.to_dict()
    assert set(d) == set(Options.__dataclass_fields__)
    assert d["buffers"] == [["eth0", 64], [None, 8]] and d["under"] == [500_000, 1_500_000]
    json.dumps(d, allow_nan=False)


def test_daemon_commands(tmp_path, monkeypatch):
    gen = fake_daemon(tmp_path, monkeypatch, profile="/etc/irqres/profile.yaml")
    next(gen)
    profile = tmp_path / "profile.yaml"
    profile.write_text("version: 1\ntargets: []\n")
    try:
        check("status", run("status", "--json"))
        check("stats", run("stats", "--json"))
        check("set-budget", run("set-budget", "nic", "1.5ms", "--json"))
        check("apply", run("apply", "--dry-run", "--json", str(profile)))
        check("apply", run("apply", "--json", str(profile)))
        assert check("restore", run("restore", "--json"))["by"] == "irqresd"
    finally:
        gen.close()


def test_commands_without_daemon(tmp_path, monkeypatch):
    fake_irqresd(tmp_path, monkeypatch)
    profile = tmp_path / "profile.yaml"
    profile.write_text("version: 1\ntargets: []\n")
    assert check("status", run("status", "--json"))["daemon"] is False
    assert check("verify", run("verify", "--json", str(profile)))["differences"]
    assert check("apply", run("apply", "--dry-run", "--json", str(profile)))
    assert check("restore", run("restore", "--json"))["by"] == "irqresd --restore"


def test_simulate():
    check("simulate", run("simulate", "--intervals", "300", "--json"))


def test_json_safe_is_the_one_clean_up():
    nan, inf = float("nan"), math.inf
    obj = {"a": nan, "b": [inf, -inf, 1.5], "c": (np.int64(3), np.float64(nan)),
           "d": {"e": np.float32(0.5), "f": np.bool_(True)}, "g": None}
    assert jsonout.json_safe(obj) == {"a": None, "b": [None, None, 1.5], "c": [3, None],
                                      "d": {"e": 0.5, "f": True}, "g": None}
    text = jsonout.dumps({"x": nan})
    assert json.loads(text) == {"schema_version": 1, "x": None}
    # the CLI's version, not one a reply passed through carries
    assert jsonout.versioned({"a": 1, "schema_version": 7}) == {"schema_version": 1, "a": 1}
    with pytest.raises(TypeError, match="cannot serialise object"):
        jsonout.json_safe({"x": object()})
