"""irqresd's JSON outputs carry "schema_version" and match docs/json.md member by member: real
outputs of a daemon reserving processes these tests spawn (root), and the checker itself
(without root)."""

from __future__ import annotations

import json
import os
import signal

import pytest
from irqresd_util import profile_text, run_irqresd, task_target
from json_doc import SchemaMismatch, check, load, used

# the objects that are whole outputs (docs/json.md, "Which output has which object")
OUTPUTS = {"PLAN", "VERIFY", "STATE", "STATUS", "STATS"}


def test_every_table_is_an_output_or_part_of_one():
    tables = load()
    assert OUTPUTS <= set(tables)
    assert set(tables) - OUTPUTS == used(tables) - OUTPUTS


def test_the_checker_refuses_what_the_tables_do_not_say():
    owed = {"pid": 7, "comm": "irq/9-acpi", "cpus": "0"}
    check(owed, "STATE_OWED")
    with pytest.raises(SchemaMismatch, match="member 'extra' is not in the tables of json"):
        check({**owed, "extra": 1}, "STATE_OWED")
    with pytest.raises(SchemaMismatch, match="member 'cpus' is missing"):
        check({"pid": 7, "comm": "x"}, "STATE_OWED")
    with pytest.raises(SchemaMismatch, match=r"STATE_OWED\.pid: str '7' where .* says int"):
        check({**owed, "pid": "7"}, "STATE_OWED")
    with pytest.raises(SchemaMismatch, match=r"STATE_OWED\.pid: bool"):
        check({**owed, "pid": True}, "STATE_OWED")
    gone = {"pid": 7, "comm": "a", "cpus": "0", "policy": "gone", "orig_policy": "other",
            "orig_priority": 0, "cpuset": None, "alive": False}
    check(gone, "STATE_THREAD")     # the budget is optional there
    with pytest.raises(SchemaMismatch, match=r"sched_feature\.was: int"):
        check({"schema_version": 1, "state_file": "/run/irqres/state", "exists": True,
               "admission_control": "keep", "threads": [gone], "partitions": [],
               "owed": [owed], "sched_feature": {"name": "HRTICK_DL", "was": 0,
                                                  "set": True}}, "STATE")


@pytest.mark.root
def test_real_outputs_match_the_tables(spawn, daemon, profile):
    a, b, c = spawn(), spawn(), spawn()
    os.sched_setscheduler(b.pid, os.SCHED_FIFO, os.sched_param(10))
    # c: a coupled target (serves: without a reservation) serving a
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid),
                             task_target("b", "1ms", "20ms", pid=b.pid, deadline="15ms"),
                             f"  - name: c\n    task: {{pid: {c.pid}}}\n"
                             f"    serves: {{pid: {a.pid}}}\n"))
    r = run_irqresd("--dry-run", "--json", "-p", str(p))
    assert r.returncode == 0, r.stderr
    outputs = [("--dry-run --json", json.loads(r.stdout), "PLAN")]
    d = daemon().start(p)
    outputs += [("status", d.request("status"), "STATUS"),
                ("stats", d.request("stats"), "STATS"),
                ("plan", d.send_profile("plan", p)["plan"], "PLAN"),
                ("verify", d.send_profile("verify", p), "VERIFY"),
                ("verify (the profile in force)", d.request("verify"), "VERIFY")]
    assert d.request("set-budget a 3ms")["ok"]
    r = run_irqresd("--verify", "--json", "-p", str(p))
    assert r.returncode == 1, r.stderr      # a now differs from the profile
    outputs.append(("--verify --json", json.loads(r.stdout), "VERIFY"))
    d.stop(signal.SIGKILL)      # leaves the state file for --status
    r = run_irqresd("--status", "--json", "--run-dir", str(d.run_dir))
    assert r.returncode == 0, r.stderr
    outputs.append(("--status --json", json.loads(r.stdout), "STATE"))

    tables = load()
    for what, out, name in outputs:
        assert out.get("schema_version") == 1, (what, out)
        try:
            check(out, name, tables)
        except SchemaMismatch as exc:
            pytest.fail(f"{what}: {exc}")
    status = outputs[1][1]
    assert [len(t["threads"]) for t in status["targets"]] == [1, 1, 0]
    assert [t["coupling"] and len(t["coupling"]["threads"])
            for t in status["targets"]] == [None, None, 1]
    assert [s["pid"] for s in status["targets"][2]["serves"]] == [a.pid]
    assert len(outputs[-1][1]["threads"]) == 3     # c's own scheduling is recorded too
