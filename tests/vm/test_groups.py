"""tests/vm/groups.py on the host: how the suite is dealt to its groups, the junit it reads
back, the durations it keeps."""

from __future__ import annotations

import json
import subprocess
import sys

import groups
import pytest

XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.vm.test_boot" name="test_x[6.1]" time="41.5" />
<testcase classname="tests.vm.test_boot" name="test_x[arm64-6.1]" time="900.2">
  <failure message="boom">trace</failure></testcase>
<testcase classname="tests.vm.test_promise" name="test_p" time="300.0">
  <skipped type="pytest.xfail" message="known" /></testcase>
<testcase classname="tests.vm.test_boot" name="test_y[7.3]" time="0.1">
  <skipped type="pytest.skip" message="no kvm" /></testcase>
<testcase classname="tests.vm.test_daemon" name="test_z[6.12]" time="12.0">
  <error message="fixture">trace</error></testcase>
</testsuite></testsuites>
"""


def test_longest_first_onto_the_least_loaded_group_in_file_order():
    ids = ["a::t1", "a::t2", "b::t3", "b::t4", "c::t5"]
    times = {"a::t1": 10, "a::t2": 40, "b::t3": 30, "b::t4": 20, "c::t5": 5}
    dealt = groups.deal(ids, 2, times)
    # 40 | 30, 20 | then 10 onto the 40 and 5 onto the first of two at 50
    assert dealt == [["a::t1", "a::t2", "c::t5"], ["b::t3", "b::t4"]]


def test_a_test_without_a_time_costs_the_median():
    ids = ["a::long", "a::new1", "a::new2", "a::short"]
    dealt = groups.deal(ids, 2, {"a::long": 100, "a::mid": 50, "a::short": 1})
    # the median of 100, 50 and 1 is 50: 100 | 50 + 50, then 1 onto the first of the two
    assert dealt == [["a::long", "a::short"], ["a::new1", "a::new2"]]


def test_every_arm64_scenario_goes_to_one_group():
    ids = [f"t::s{i}[6.1]" for i in range(6)] + [f"t::s{i}[arm64-6.1]" for i in range(4)]
    times = {i: 10 for i in ids}
    dealt = groups.deal(ids, 3, times)
    holding = [g for g in dealt if any("[arm64-" in i for i in g)]
    assert len(holding) == 1
    assert sum("[arm64-" in i for i in holding[0]) == 4
    assert sorted(i for g in dealt for i in g) == sorted(ids)


def test_more_groups_than_tests_makes_no_empty_group():
    assert groups.deal(["a::x", "a::y"], 4, {}) == [["a::x"], ["a::y"]]


def test_junit_cases_name_each_outcome(tmp_path):
    xml = tmp_path / "g1.xml"
    xml.write_text(XML)
    assert groups.junit_cases(xml) == [
        ("tests/vm/test_boot.py::test_x[6.1]", 41.5, "passed"),
        ("tests/vm/test_boot.py::test_x[arm64-6.1]", 900.2, "failed"),
        ("tests/vm/test_promise.py::test_p", 300.0, "xfailed"),
        ("tests/vm/test_boot.py::test_y[7.3]", 0.1, "skipped"),
        ("tests/vm/test_daemon.py::test_z[6.12]", 12.0, "failed"),
    ]


def test_record_merges_what_ran_and_keeps_the_rest(tmp_path):
    (tmp_path / "g1.xml").write_text(XML)
    dur = tmp_path / "durations.json"
    dur.write_text(json.dumps({"tests/vm/test_boot.py::test_x[6.1]": 60.0,
                               "tests/vm/test_old.py::test_gone": 7.0}))
    assert groups.record(tmp_path, dur) == 0
    got = json.loads(dur.read_text())
    assert got["tests/vm/test_boot.py::test_x[6.1]"] == 41.5
    assert got["tests/vm/test_old.py::test_gone"] == 7.0
    assert got["tests/vm/test_promise.py::test_p"] == 300.0
    assert "tests/vm/test_boot.py::test_y[7.3]" not in got   # a skip says nothing of time
    assert "tests/vm/test_boot.py::test_x[arm64-6.1]" not in got  # nor a failure


def test_record_without_a_run_says_so(tmp_path):
    with pytest.raises(SystemExit, match="no test times in"):
        groups.record(tmp_path, tmp_path / "durations.json")


@pytest.mark.parametrize("text, why", [("[1, 2]", "expected an object"),
                                       ('{"a::b": -1}', "expected an object"),
                                       ("{", "not JSON")])
def test_a_bad_durations_file_is_named(tmp_path, text, why):
    path = tmp_path / "durations.json"
    path.write_text(text)
    with pytest.raises(SystemExit, match=f"{path}: {why}"):
        groups.load_durations(path)


@pytest.mark.parametrize("env, want", [("1", 1), ("3", 3)])
def test_groups_from_the_environment(monkeypatch, env, want):
    monkeypatch.setenv("IRQRES_VM_GROUPS", env)
    assert groups.default_groups() == want


@pytest.mark.parametrize("env, why", [("two", "not a whole number"), ("0", "at least 1")])
def test_a_bad_group_count_is_named(monkeypatch, env, why):
    monkeypatch.setenv("IRQRES_VM_GROUPS", env)
    with pytest.raises(SystemExit, match=f"IRQRES_VM_GROUPS.*{why}"):
        groups.default_groups()


def test_two_groups_on_two_cpus_one_on_one(monkeypatch):
    monkeypatch.delenv("IRQRES_VM_GROUPS", raising=False)
    monkeypatch.setattr(groups.os, "cpu_count", lambda: 2)
    assert groups.default_groups() == 2
    monkeypatch.setattr(groups.os, "cpu_count", lambda: 1)
    assert groups.default_groups() == 1


def test_the_recorded_durations_load():
    times = groups.load_durations()
    assert times and all(k.startswith("tests/vm/test_") and "::" in k for k in times)


@pytest.mark.parametrize("script, args, says", [
    ("tests/vm/groups.py", ["--groups", "0"], "--groups: at least 1, not 0"),
    ("bench/vmgroups/compare.py", ["--rounds", "0"], "--rounds: at least 1, not 0"),
])
def test_bad_options_are_refused_naming_them(script, args, says):
    out = subprocess.run([sys.executable, str(groups.ROOT / script), *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and says in out.stderr, out.stderr


def test_a_bad_durations_file_is_named_before_anything_runs(tmp_path):
    bad = tmp_path / "d.json"
    bad.write_text("{")
    out = subprocess.run([sys.executable, str(groups.ROOT / "tests/vm/groups.py"),
                          "--durations", str(bad), "tests/vm/test_groups.py"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and f"{bad}: not JSON" in out.stderr, out.stderr


def test_by_arch_runs_amd64_in_one_group_and_arm64_beside_it():
    ids = ["tests/vm/test_groups.py::test_x", "t::a[6.1]", "t::a[arm64-6.1]", "t::b[6.12]",
           "t::b[arm64-6.1]"]
    assert groups.by_arch(ids) == [["tests/vm/test_groups.py::test_x", "t::a[6.1]", "t::b[6.12]"],
                                   ["t::a[arm64-6.1]", "t::b[arm64-6.1]"]]
    assert groups.by_arch(["t::a[arm64-6.1]"]) == [["t::a[arm64-6.1]"]]
    assert groups.by_arch(["t::a[6.1]", "t::b"]) == [["t::a[6.1]", "t::b"]]


def test_make_test_vm_deals_amd64_to_groups_unless_arm64_is_asked_for():
    """`make test-vm` (so the README's `make test`) deals the amd64 suite to balanced
    groups; IRQRES_VM_ARCH=amd64,arm64 deals it by architecture, the arm64 guest beside
    it."""
    def recipe(*env):
        out = subprocess.run(["make", "-n", "-C", str(groups.ROOT), "test-vm", *env],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout
    alone = recipe()
    assert "groups.py tests/vm" in alone and "--by-arch" not in alone
    assert "vm-arm64" not in alone
    both = recipe("IRQRES_VM_ARCH=amd64,arm64")
    assert "IRQRES_VM_ARCH=amd64,arm64 " in both and "groups.py --by-arch tests/vm" in both
    assert "install-deps.sh vm-arm64" in both or (groups.ROOT / "build/.deps-vm-arm64-stamp"
                                                 ).exists()
