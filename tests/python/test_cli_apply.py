"""irqres apply / set-budget / restore, with a fake daemon and a fake irqresd binary."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes import PLAN, fake_daemon
from irqres.cli import main
from irqres.plan import format_plan


@pytest.fixture
def fake(tmp_path, monkeypatch):
    yield from fake_daemon(tmp_path, monkeypatch)


@pytest.fixture
def profile(tmp_path):
    p = tmp_path / "profile.yaml"
    p.write_text("version: 1\ntargets: []\n")
    return p


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def fake_irqresd(tmp_path, monkeypatch, plan=PLAN, dry_status=0, once_status=0, stderr="",
                 restore_stderr=""):
    """An irqresd stand-in that logs its arguments and prints ``plan`` for --dry-run."""
    log = tmp_path / "irqresd.log"
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "status.json").write_text(json.dumps(
        {"state_file": "/run/x/state", "exists": False, "threads": [], "partitions": []}))
    (tmp_path / "verify.json").write_text(json.dumps(
        {"profile": "p", "consistent": False, "checked": 1, "differences": ["target a: drift"]}))
    exe = tmp_path / "irqresd"
    exe.write_text(f"""#!/bin/sh
echo "$@" >> {log}
case "$1" in
--dry-run) cat {tmp_path / 'plan.json'}; echo "{stderr}" >&2; exit {dry_status};;
--once) echo "{stderr}" >&2; exit {once_status};;
--restore) printf '%s' "{restore_stderr}" >&2; exit 0;;
--status) cat {tmp_path / 'status.json'}; exit 0;;
--verify) cat {tmp_path / 'verify.json'}; exit 1;;
esac
exit 9
""")
    exe.chmod(0o755)
    monkeypatch.setenv("IRQRESD", str(exe))
    # a run directory named, no daemon on its socket: the commands fall back to irqresd
    monkeypatch.delenv("IRQRES_SOCKET", raising=False)
    monkeypatch.setenv("IRQRES_RUN_DIR", str(tmp_path / "run"))
    return log


# The plan report, as irqresd --dry-run prints it too (daemon/src/plan.c)
PLAN_TEXT = """\
Plan for /etc/irqres/nic.yaml: the kernel will accept it

TARGET  THREAD       PID  IRQ  CPUS  NOW      RUNTIME  DEADLINE  PERIOD  BW     PARTITION    \
BUFFER  VERDICT
nic     irq/11-eth0  105  11   0     fifo 50  2ms      10ms      10ms    0.200  irqres.cpu0  \
ok      ok

ROOT DOMAIN  PARTITION          CAPACITY  EXISTING  NEW    TOTAL  OK
1            (default)          0.950     0.000     0.000  0.000  yes
0            irqres.cpu0 (new)  0.950     0.000     0.200  0.200  yes
(bandwidth in CPUs: the kernel admits while existing + new <= capacity)

warning: nic.yaml:9:5: target 'disk' matches no thread yet; its threads are reserved when \
they appear
"""


def test_plan_report_text():
    assert format_plan(PLAN) + "\n" == PLAN_TEXT


def test_matching_nothing_is_not_blamed_on_the_kernel(tmp_path, monkeypatch, profile):
    empty = {**PLAN, "feasible": False, "summary": "REFUSED: the profile matches no thread",
             "items": [], "warnings": [],
             "errors": [f"{profile}:3:5: target 'nic' matches no thread"]}
    fake_irqresd(tmp_path, monkeypatch, dry_status=1, plan=empty)
    r = run("apply", str(profile))
    assert r.exit_code == 1
    assert "REFUSED: the profile matches no thread\n\nno thread matched\n" in r.output
    assert f"the profile matches no thread: {profile}:3:5: target 'nic'" in r.output
    assert "kernel" not in r.output.replace("REFUSED", "").split("no thread matched")[1]


def test_apply_through_daemon(fake, profile):
    r = run("apply", str(profile))
    assert r.exit_code == 0, r.output
    assert PLAN_TEXT in r.output
    assert f"applied {profile} through irqresd on {fake.path}: 1 thread(s)" in r.output
    size = profile.stat().st_size
    assert fake.requests == [f"plan {profile} {size}", f"apply {profile} {size}"]
    assert fake.bodies == [profile.read_bytes()] * 2
    assert fake.profile == str(profile)


def test_apply_says_which_threads_wait(fake, profile):
    """A thread irqresd moved into its partition but could not reserve yet is not counted
    as reserved; it is named, with where it waits."""
    assert "1 thread(s) reserved" in run("apply", str(profile)).output
    fake.apply_waiting = [{"pid": 105, "comm": "irq/11-eth0", "partition": "irqres.cpu0"}]
    r = run("apply", str(profile))
    assert r.exit_code == 0, r.output
    assert f"through irqresd on {fake.path}: 0 thread(s) reserved" in r.output
    assert ("waiting: irq/11-eth0 (pid 105) is in cpuset partition irqres.cpu0 and is "
            "reserved once it has run there") in r.output


def test_dry_run_json_changes_nothing(fake, profile):
    r = run("apply", "--dry-run", "--json", str(profile))
    assert r.exit_code == 0
    assert json.loads(r.output)["items"][0]["verdict"] == "ok"
    assert fake.requests == [f"plan {profile} {profile.stat().st_size}"]
    assert fake.profile is None


def test_refused_plan_is_not_applied(fake, profile):
    bad = {**PLAN, "feasible": False, "summary": "the kernel will NOT accept it",
           "items": [{**PLAN["items"][0], "verdict": "EBUSY: root domain 0 over capacity"}],
           "errors": []}
    fake.override["plan"] = {"ok": True, "plan": bad}
    r = run("apply", str(profile))
    assert r.exit_code == 1
    assert "Plan for /etc/irqres/nic.yaml: the kernel will NOT accept it" in r.output
    assert "would refuse this plan: irq/11-eth0 (105): EBUSY: root domain 0" in r.output
    assert not any(q.startswith("apply") for q in fake.requests)


def test_daemon_error_on_apply(fake, profile):
    fake.override["apply"] = {"ok": False, "error": "irq/11-eth0 (pid 105): SCHED_DEADLINE "
                              "refused: EPERM", "errno": "EPERM"}
    r = run("apply", str(profile))
    assert r.exit_code == 1 and "Error: irqresd: apply: irq/11-eth0 (pid 105)" in r.output
    assert "Traceback" not in r.output


def test_bad_profile_through_daemon_exits_2(fake, profile):
    """irqresd refuses a bad profile with EINVAL: exit 2, as irqresd --dry-run's own."""
    fake.override["plan"] = {"ok": False, "error": f"{profile}:3:5: unknown key 'runtme'",
                             "errno": "EINVAL"}
    for args in (["apply", str(profile)], ["apply", "-n", str(profile)]):
        r = run(*args)
        assert r.exit_code == 2 and "unknown key 'runtme'" in r.output, r.output


def test_missing_profile():
    r = run("apply", "/nonexistent/profile.yaml")
    assert r.exit_code == 2 and "does not exist" in r.output


def test_apply_without_daemon_runs_irqresd_once(tmp_path, monkeypatch, profile):
    log = fake_irqresd(tmp_path, monkeypatch)
    r = run("apply", str(profile))
    assert r.exit_code == 0, r.output
    assert PLAN_TEXT in r.output
    assert "applied" in r.output and "irqresd --once" in r.output and "irqres restore" in r.output
    run_dir = tmp_path / "run"
    assert f"no irqresd answers on {run_dir}/irqresd.sock" in r.output
    assert log.read_text().splitlines() == [f"--dry-run --json -p {profile} --run-dir {run_dir}",
                                            f"--once -p {profile} --run-dir {run_dir}"]


def test_dry_run_without_daemon(tmp_path, monkeypatch, profile):
    log = fake_irqresd(tmp_path, monkeypatch)
    r = run("apply", "-n", str(profile))
    assert r.exit_code == 0 and "the kernel will accept it" in r.output
    assert log.read_text().splitlines() == [
        f"--dry-run --json -p {profile} --run-dir {tmp_path / 'run'}"]


def test_bad_profile_without_daemon(tmp_path, monkeypatch, profile):
    fake_irqresd(tmp_path, monkeypatch, dry_status=2,
                 stderr=f"{profile}:3:5: unknown key 'runtme'")
    r = run("apply", str(profile))
    # a bad profile exits 2, as irqresd --dry-run does; a refusal 1 (below)
    assert r.exit_code == 2 and f"{profile}:3:5: unknown key 'runtme'" in r.output
    r = run("apply", "-n", str(profile))
    assert r.exit_code == 2, r.output


def test_refused_without_daemon(tmp_path, monkeypatch, profile):
    log = fake_irqresd(tmp_path, monkeypatch, dry_status=1,
                       plan={**PLAN, "feasible": False, "errors": ["domain 0: 1.2 > 0.95"]})
    r = run("apply", str(profile))
    assert r.exit_code == 1 and "would refuse this plan: domain 0: 1.2 > 0.95" in r.output
    assert "--once" not in log.read_text()


def test_once_failure(tmp_path, monkeypatch, profile):
    fake_irqresd(tmp_path, monkeypatch, once_status=1, stderr="EPERM on pid 105")
    r = run("apply", str(profile))
    assert r.exit_code == 1 and "irqresd --once" in r.output and "EPERM on pid 105" in r.output


def test_set_budget(fake):
    r = run("set-budget", "nic", "1.5ms", "5ms")
    assert r.exit_code == 0, r.output
    assert "nic: runtime 1.5ms period 5ms deadline 5ms (pids 105)" in r.output
    # a new period moves the deadline: said, never silent
    assert "note: the deadline moved with the period from 10ms to 5ms" in r.output
    assert fake.requests == ["set-budget nic 1.5ms 5ms"]
    r = run("set-budget", "nic", "1ms")
    assert r.exit_code == 0 and "note:" not in r.output


@pytest.mark.parametrize("args, msg", [
    (["nic", "2 parsecs"], "Invalid value for 'RUNTIME': '2 parsecs' is not a duration: "
                           "unknown unit 'parsecs'"),
    (["nic", "0"], "Invalid value for 'RUNTIME': '0': must be longer than 0"),
    (["nic", "2"], "Invalid value for 'RUNTIME': '2' is not a duration: a nonzero number "
                   "needs a unit"),
    (["nic", "-1ms"], "Invalid value for 'RUNTIME': '-1ms' is not a duration: a duration "
                      "cannot be negative"),
    (["nic", "1ms", "-10ms", "--json"], "Invalid value for '[PERIOD]': '-10ms' is not a "
                                        "duration: a duration cannot be negative"),
    (["--socket", "/x", "nic", "-1ms"], "'-1ms' is not a duration"),
    (["nic", "20ms", "10ms"], "20ms is longer than PERIOD 10ms"),
    (["disk", "1ms"], "set-budget: no target named disk"),
])
def test_set_budget_errors(fake, args, msg):
    r = run("set-budget", *args)
    assert r.exit_code != 0 and msg in r.output and "Traceback" not in r.output


def test_restore(fake, tmp_path, monkeypatch):
    r = run("restore")
    assert r.exit_code == 0 and "restored 1 thread" in r.output
    assert fake.requests == ["restore"]
    r = run("restore", "--json")
    assert json.loads(r.output) == {"schema_version": 1, "by": "irqresd", "restored": 1,
                                    "log": [], "socket": fake.path}
    log = fake_irqresd(tmp_path, monkeypatch)
    r = run("restore")
    assert r.exit_code == 0 and "irqresd --restore" in r.output
    assert log.read_text().splitlines() == [f"--restore --run-dir {tmp_path / 'run'}"]


@pytest.mark.parametrize(("stderr", "restored", "text"), [
    ("irqresd: /run/irqres/state: nothing to restore\n", 0, "nothing to restore"),
    ("irqresd: warning: /run/irqres/state: state of an earlier run found (it did not stop "
     "cleanly): restoring it first\nirqresd: restored 2 threads\n", 2,
     "`irqresd --restore` restored 2 thread(s) from its state file"),
    ("", None, "`irqresd --restore` finished"),
])
def test_restore_without_daemon_says_what_irqresd_did(tmp_path, monkeypatch, stderr,
                                                      restored, text):
    fake_irqresd(tmp_path, monkeypatch, restore_stderr=stderr)
    r = run("restore")
    assert r.exit_code == 0 and text in r.output and "restored from" not in r.output
    r = run("restore", "--json")
    reply = json.loads(r.output)
    assert reply["by"] == "irqresd --restore" and reply["restored"] == restored
    assert reply["log"] == [ln for ln in stderr.splitlines() if ln]


def test_set_budget_json(fake):
    r = run("set-budget", "nic", "1.5ms", "--json")
    assert r.exit_code == 0, r.output
    reply = json.loads(r.output)
    assert (reply["target"], reply["runtime_ns"], reply["period_ns"], reply["pids"]) == (
        "nic", 1_500_000, 10_000_000, [105])


def test_status_and_verify_without_daemon(tmp_path, monkeypatch, profile):
    log = fake_irqresd(tmp_path, monkeypatch)
    r = run("status")
    assert r.exit_code == 0 and "no irqresd answers on" in r.output
    assert "and no state file /run/x/state" in r.output
    r = run("verify", str(profile))
    assert r.exit_code == 1 and "1 difference between" in r.output and "target a: drift" \
        in r.output
    r = run("verify")
    assert r.exit_code == 1 and "no irqresd is running: name the PROFILE" in r.output
    assert log.read_text().splitlines() == [f"--status --json --run-dir {tmp_path / 'run'}",
                                            f"--verify --json -p {profile}"]


def test_no_daemon_no_binary(tmp_path, monkeypatch):
    monkeypatch.delenv("IRQRES_SOCKET", raising=False)
    monkeypatch.setenv("IRQRES_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("IRQRESD", str(tmp_path / "missing"))
    r = run("set-budget", "nic", "1ms")
    assert r.exit_code == 1 and "irqresd is not running" in r.output
    r = run("restore")
    assert r.exit_code == 1 and "IRQRESD" in r.output


def test_plan_report_names_the_isolated_cpus_domain():
    plan = json.loads(json.dumps(PLAN))
    plan["domains"].append({"cpus": "3", "partition": None, "new": False, "isolated": True,
                            "capacity": 0.95, "existing_bw": 0.0, "new_bw": 0.2,
                            "total_bw": 0.2, "ok": True})
    row = format_plan(plan).splitlines()
    assert any(ln.startswith("3 ") and "(isolated)" in ln for ln in row), row


# -- replies irqresd garbled: an error naming the request and the field, never a pass ---
BAD_REPLIES = [
    # before: "Verified None: 0 threads" and exit 0
    (["verify"], "verify", {"ok": True}, 'reply to verify: it lacks the field "profile"'),
    (["verify"], "verify", {"ok": True, "profile": "p", "checked": 1},
     'reply to verify: it lacks the field "differences"'),
    # before: KeyError 'plan'
    (["apply", "-n", "PROFILE"], "plan", {"ok": True}, 'reply to plan: it lacks the field '
     '"plan"'),
    (["apply", "-n", "PROFILE"], "plan",
     {"ok": True, "plan": {**PLAN, "domains": [{"capacity": "all"}]}},
     'reply to plan: field "plan.domains[0].capacity" is a string ("all"), not a number '
     'or null'),
    # before: ValueError
    (["status"], "status", {"ok": True, "pid": 1, "targets": [{"name": "nic",
                                                               "runtime_ns": "2ms"}]},
     'reply to status: field "targets[0].runtime_ns" is a string ("2ms"), not an integer '
     'or null'),
    (["status"], "status", {"ok": True, "pid": 1, "targets": [],
                            "enforcement": {"overrun_max_ns": "x"}},
     'reply to status: field "enforcement.overrun_max_ns" is a string ("x")'),
    (["status"], "status", {"ok": True, "pid": 1, "targets": "none"},
     'reply to status: field "targets" is a string, not an array'),
    # before: taken silently; a higher version changed a member's meaning (docs/json.md)
    (["status"], "status", {"ok": True, "schema_version": 2, "pid": 1, "targets": []},
     "reply to status has schema_version 2; this irqres reads 1"),
    (["stats"], "stats", {"ok": True}, 'reply to stats: it lacks the field "threads"'),
    (["set-budget", "nic", "1ms"], "set-budget",
     {"ok": True, "target": "nic", "runtime_ns": "1ms", "period_ns": 1, "deadline_ns": 1,
      "pids": []}, 'reply to set-budget: field "runtime_ns" is a string ("1ms")'),
    (["restore"], "restore", {"ok": True, "restored": "all"},
     'reply to restore: field "restored" is a string ("all"), not an integer'),
]


@pytest.mark.parametrize("args, word, reply, message", BAD_REPLIES)
def test_a_malformed_reply_is_an_error_naming_the_field(fake, profile, args, word, reply,
                                                        message):
    fake.override[word] = reply
    r = run(*[str(profile) if a == "PROFILE" else a for a in args])
    assert r.exit_code == 1, r.output
    assert f"Error: irqresd ({fake.path}): {message}" in r.output
    assert "Verified" not in r.output


def test_a_reply_of_the_known_schema_version_is_taken(fake):
    fake.override["status"] = {"ok": True, "schema_version": 1, "pid": 1, "targets": []}
    r = run("status")
    assert r.exit_code == 0 and "irqresd pid 1" in r.output, r.output
