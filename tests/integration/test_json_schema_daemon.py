"""The --json outputs of the irqres commands that speak to irqresd, from a real irqresd
holding a reservation for a spawned task, against their schemas in docs/json.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from irqres.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from test_json_schema import check, runner  # the schemas of docs/json.md

pytestmark = pytest.mark.root


def test_real_replies_match_the_schemas(running):
    d, a = running

    def irqres(*args: str) -> str:
        r = runner().invoke(main, list(args), env={"IRQRES_SOCKET": str(d.sock)},
                            catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return r.stdout

    status = check("status", irqres("status", "--json"))
    assert status["targets"][0]["threads"][0]["pid"] == a.pid
    assert check("stats", irqres("stats", "--json"))["threads"][0]["pid"] == a.pid
    assert check("set-budget", irqres("set-budget", "a", "1ms", "--json"))["pids"] == [a.pid]
    assert check("verify", irqres("verify", "--json"))["differences"] == []
    plan = check("apply", irqres("apply", "--dry-run", "--json", status["profile"]))
    assert plan["items"][0]["pid"] == a.pid
