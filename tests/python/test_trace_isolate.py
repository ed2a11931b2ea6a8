"""The trace reader runs libtracecmd in a child process: same columns, progress and
errors as the native reader, and a crash inside libtracecmd becomes a TraceError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from irqres import _tracereader
from irqres.errors import TraceError
from irqres.trace.isolate import isolated_read

DATA = Path(__file__).resolve().parents[1] / "data"
FAKE = DATA / "host-fakeirq.dat"


def flat(raw: dict, prefix: str = "") -> dict:
    """Every value of a raw result, columns as bytes."""
    out = {}
    for key, val in raw.items():
        if isinstance(val, dict):
            out.update(flat(val, f"{prefix}{key}."))
        elif isinstance(val, _tracereader.Column | memoryview):
            out[prefix + key] = bytes(val)
        else:
            out[prefix + key] = val
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.dat")))
def test_isolated_columns_are_the_native_readers(name):
    path = str(DATA / name)
    direct = flat(_tracereader.read(path))
    isolated = isolated_read(path)
    assert flat(isolated) == direct
    col = isolated["events"]["sched_switch"]["ts"]
    assert isinstance(col, memoryview) and col.readonly


def test_progress_crosses_over_and_an_exception_in_it_stops_the_child():
    seen = []
    raw = isolated_read(str(FAKE), progress=seen.append, progress_every=1000)
    assert seen == [1000, 2000, 3000, 4000] and raw["nrecords"] == 4401

    def stop(n):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        isolated_read(str(FAKE), progress=stop, progress_every=10)
    with pytest.raises(TraceError, match="no buffer instance named 'nope'"):
        isolated_read(str(FAKE), buffer="nope")


# Damaged files on which libtracecmd 3.1.6 kills the process that opens them: cut inside
# the version-7 header (tracecmd_open frees twice: SIGABRT), one flipped bit of zstd data
# (tracecmd_close: SIGSEGV), a version-6 file cut at a CPU's data (SIGSEGV). The reading
# runs in a subprocess so that, were it to crash, only that one would die.
CRASHERS = [("host-fakeirq.dat", "cut", 29, "SIGABRT"),
            ("host-fakeirq.dat", "cut", 36, "SIGABRT"),
            ("host-fakeirq.dat", "flip", 36071 * 8 + 5, "SIGSEGV")]

READ = """
import sys
from irqres.errors import TraceError
from irqres.trace import read_trace
try:
    read_trace(sys.argv[1])
except TraceError as exc:
    print(exc)
    sys.exit(3)
"""


@pytest.mark.parametrize(("name", "op", "arg", "sig"), CRASHERS)
def test_a_crash_inside_libtracecmd_is_a_trace_error(tmp_path, name, op, arg, sig):
    data = bytearray((DATA / name).read_bytes())
    if op == "cut":
        data = data[:arg]
    else:
        data[arg // 8] ^= 1 << (arg % 8)
    p = tmp_path / "damaged.dat"
    p.write_bytes(bytes(data))
    r = subprocess.run([sys.executable, "-c", READ, str(p)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 3, (r.returncode, r.stderr[-500:])
    assert r.stderr == ""
    assert r.stdout.startswith(f"{p}: the trace is damaged: libtracecmd crashed on it ({sig})")
    assert r.stdout.count("\n") == 1
