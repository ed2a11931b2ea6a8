"""What every subcommand shares: one duration type for every time it takes (options and
arguments alike), errors that repeat what was typed, and -v/-q on either side of the
subcommand."""

from __future__ import annotations

import logging
import re

import click
import pytest
from click.testing import CliRunner
from irqres.cli import COMMANDS, main
from irqres.cli.common import Duration

# a parameter whose name says it is a time
TIME_NAME = re.compile(r"duration|period|interval(?!s)|job|runtime|deadline|granularity|"
                       r"interarrival|timeout|sample|refresh|delay|_ns$")


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(main)
    return [(name, main.get_command(ctx, name)) for name in COMMANDS]


def _time_params() -> list:
    out = []
    for name, cmd in _commands():
        for p in cmd.params:
            if TIME_NAME.search(p.name or ""):
                out.append(pytest.param(name, cmd, p, id=f"{name}:{p.name}"))
    return out


TIME_PARAMS = _time_params()


def test_the_time_parameters_are_found():
    found = {(c, p.name) for c, _, p in (x.values for x in TIME_PARAMS)}
    assert {("record", "duration"), ("tune", "duration"), ("simulate", "interval_ns"),
            ("analyze", "periods"), ("set-budget", "runtime"), ("set-budget", "period")
            } <= found


@pytest.mark.parametrize(("name", "cmd", "param"), TIME_PARAMS)
def test_every_time_parameter_is_a_duration(name, cmd, param):
    assert isinstance(param.type, Duration), f"{name} {param.name}: type {param.type!r}"


def _args_for(cmd: click.Command, param: click.Parameter, value: str) -> list[str]:
    """A command line that gives ``value`` to ``param`` (earlier arguments filled in)."""
    if isinstance(param, click.Option):
        return [param.opts[-1], value]
    args = []
    for p in cmd.params:
        if p is param:
            return [*args, value]
        if isinstance(p, click.Argument):
            args.append("1ms" if isinstance(p.type, Duration) else "x")
    raise AssertionError(param)


@pytest.mark.parametrize(("name", "cmd", "param"), TIME_PARAMS)
@pytest.mark.parametrize(("value", "cause"), [
    ("3msec", "unknown unit 'msec'"),
    ("2", "a nonzero number needs a unit: 2s, 2ms, 2us or 2ns?"),
    ("-1ms", "a duration cannot be negative"),
    ("1.5ns", "not a whole number of nanoseconds"),
])
def test_every_time_parameter_repeats_what_was_typed(name, cmd, param, value, cause):
    r = CliRunner().invoke(main, [name, *_args_for(cmd, param, value)])
    assert r.exit_code == 2, r.output
    assert f"'{value}' is not a duration: {cause}" in r.output, r.output
    assert "No such option" not in r.output and "Traceback" not in r.output


# stats: with no daemon it fails (status would read the state file instead)
@pytest.mark.parametrize("args", [
    ["-vv", "stats", "--socket", "/nonexistent/irqres.sock"],
    ["stats", "-vv", "--socket", "/nonexistent/irqres.sock"],
    ["-v", "stats", "--socket", "/nonexistent/irqres.sock", "--verbose"],
])
def test_verbose_before_or_after_the_subcommand(args):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1 and "irqresd is not running" in r.output, r.output
    assert logging.getLogger().level == logging.DEBUG


@pytest.mark.parametrize(("args", "level"), [
    (["stats", "-q", "--socket", "/nonexistent/irqres.sock"], logging.ERROR),
    (["-q", "set-budget", "-q", "--socket", "/nonexistent/irqres.sock", "nic", "1ms"],
     logging.CRITICAL),
    (["-v", "stats", "-q", "--socket", "/nonexistent/irqres.sock"], logging.WARNING),
])
def test_quiet_before_or_after_the_subcommand(args, level):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1 and "irqresd is not running" in r.output, r.output
    assert logging.getLogger().level == level


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_subcommand_takes_v_and_q(name):
    r = CliRunner().invoke(main, [name, "--help"])
    assert r.exit_code == 0
    assert "-v, --verbose" in r.output and "-q, --quiet" in r.output
