"""Experiment 3 with threaded NAPI under either enforcement: the guest's profile says
which, the raw data file's tag keeps HRTICK_DL's records apart, and the report takes the
newest record of each kernel and enforcement and puts throughput over the CPU used."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "seeds"))
sys.path.insert(0, str(ROOT / "tests" / "vm" / "guest"))

import napi_report  # noqa: E402
import player_dl_napi  # noqa: E402
import seeds_napi  # noqa: E402


@pytest.mark.parametrize(("tag", "napi", "enforcement", "want"), [
    ("", "reserved", "keep", ""),
    ("", "default", "keep", "default"),
    ("", "reserved", "hrtick", "hrtick"),
    ("", "default", "hrtick", "default-hrtick"),
    ("probe", "reserved", "hrtick", "probe-hrtick"),
])
def test_an_hrtick_record_is_tagged_hrtick(tag, napi, enforcement, want):
    assert player_dl_napi.data_tag(tag, napi, enforcement) == want


@pytest.mark.parametrize("enforcement", ["keep", "hrtick"])
def test_the_guest_profile_carries_the_enforcement(tmp_path, enforcement):
    path = tmp_path / "p.yaml"
    seeds_napi._profile(str(path), 2_250_000, 6_750_000, 100_000_000, 29_000_000,
                        40_000_000, enforcement)
    lines = path.read_text().splitlines()
    assert lines[:3] == ["version: 1", f"enforcement: {enforcement}", "targets:"]


def test_the_guest_scenario_refuses_an_unknown_enforcement():
    with pytest.raises(ValueError, match="enforcement 'hrtimer': not 'keep' or 'hrtick'"):
        seeds_napi.scenario_seeds_player_dl_napi(
            1, 1, 40_000_000, 16_000_000, 100_000, 1400, [[29_000_000, 9_000_000]],
            100_000_000, "reserved", [3, 4], 95, "hrtimer")


def _rec(kernel: str, stamp: str, enforcement: str | None) -> dict:
    params = {} if enforcement is None else {"enforcement": enforcement}
    return {"kernel": kernel, "date": stamp, "params": params}


def test_the_newest_record_of_each_kernel_and_enforcement_by_kernel_tick_first():
    recs = [_rec("6.12.95+deb12-rt-amd64", "a", "keep"), _rec("6.1.0-50-rt-amd64", "b", None),
            _rec("6.1.0-50-rt-amd64", "c", "hrtick"), _rec("6.12.95+deb12-rt-amd64", "d",
                                                          "keep"),
            _rec("6.1.0-50-rt-amd64", "e", "keep")]
    got = napi_report.newest_each(recs)
    assert [(r["kernel"].split("-")[0], r["date"]) for r in got] == [
        ("6.1.0", "e"), ("6.1.0", "c"), ("6.12.95+deb12", "d")]


def test_kbit_per_cpu_ms_is_what_the_application_read_over_the_pair_s_cpu_time():
    row = {"receiver": "received 2000", "cpu_ns": {"nic_thread": 1_000_000,
                                                   "napi_thread": 279_000_000}}
    # 2,000 x 1400 bytes = 22,400 kbit over 280 ms of the two threads' CPU
    assert napi_report.kbit_per_cpu_ms(row, 1400) == pytest.approx(80.0)
    assert napi_report.kbit_per_cpu_ms({"receiver": "received 1", "cpu_ns": {
        "nic_thread": 5}}, 1400) is None
