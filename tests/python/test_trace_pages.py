"""The reader gives the trace file's pages back as it decodes them (release_pages).

libtracecmd 3.1 maps an uncompressed file in windows as large as one CPU's data, and
every page it reads stays resident until the window goes: reading a trace made the
resident set as large as the file. The reader drops the pages it has decoded
(madvise MADV_DONTNEED on libtracecmd's read-only file mapping), which must change
nothing in the result, with one thread or several, on uncompressed and compressed files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from irqres import _tracereader
from test_trace_parallel import flat  # every value, columns as bytes ("units" left out)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
COPIES = 150  # 39 MB, 660,150 records, 19 MB per CPU: nine runs of 2 MB


@pytest.fixture(scope="module")
def long_trace(tmp_path_factory):
    """host-fakeirq's records repeated (bench/analyze/make_big.py), uncompressed."""
    if shutil.which("trace-cmd") is None:
        pytest.skip("trace-cmd is not installed: cannot write a version-6 trace")
    out = tmp_path_factory.mktemp("pages")
    v6, big = out / "fakeirq-v6.dat", out / "long-v6.dat"
    subprocess.run(["trace-cmd", "convert", "-i", str(DATA / "host-fakeirq.dat"), "-o",
                    str(v6), "--file-version", "6", "--compression", "none"],
                   check=True, capture_output=True)
    subprocess.run([sys.executable, str(ROOT / "bench" / "analyze" / "make_big.py"), str(v6),
                    str(COPIES), str(big)], check=True, capture_output=True)
    return big


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("select", [None, (True, None, [])])
def test_released_pages_change_nothing(long_trace, threads, select):
    kw = {"threads": threads, "parallel_min_bytes": 0, "select": select}
    kept = _tracereader.read(str(long_trace), release_pages=False, **kw)
    released = _tracereader.read(str(long_trace), **kw)
    assert released["nrecords"] == kept["nrecords"] > 600_000
    assert (released["units"] > 1) == (threads > 1)
    assert flat(released) == flat(kept)


@pytest.mark.parametrize("name", ["host-fakeirq", "vm-e1000-udp", "host-overrun"])
def test_compressed_files_read_the_same(name):
    """Their pages are decompressed into memory, not mapped from the file: left alone."""
    path = str(DATA / f"{name}.dat")
    assert flat(_tracereader.read(path)) == flat(_tracereader.read(path, release_pages=False))


def _rss_file_kb() -> int:
    with open("/proc/self/status") as fh:
        return int(re.search(r"RssFile:\s+(\d+)", fh.read()).group(1))


def _peak_rss_file_growth(path: Path, **kw) -> int:
    """How far RssFile of this process rose above its start while reading, in bytes
    (sampled every 2 ms; the read releases the GIL)."""
    base, peak, done = _rss_file_kb(), [0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], _rss_file_kb())
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        raw = _tracereader.read(str(path), select=(True, None, []), **kw)
    finally:
        done.set()
        watcher.join()
    assert raw["nrecords"] > 600_000
    return (max(peak[0], _rss_file_kb()) - base) * 1024


@pytest.mark.parametrize("threads", [1, 2])
def test_the_file_does_not_stay_resident(long_trace, threads):
    size = long_trace.stat().st_size
    kw = {"threads": threads, "parallel_min_bytes": 0}
    # libtracecmd alone keeps about the whole file resident: the measure sees it
    assert _peak_rss_file_growth(long_trace, release_pages=False, **kw) > size // 2
    # with the pages given back: a run of 2 MB per CPU and worker, and what libtracecmd
    # holds itself
    assert _peak_rss_file_growth(long_trace, **kw) < size // 3
