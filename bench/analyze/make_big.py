#!/usr/bin/env python3
"""Build a long trace.dat from a recorded one by repeating its ring-buffer pages.

Usage: make_big.py SOURCE.dat COPIES OUT.dat

SOURCE must be uncompressed (file version 6, as `trace-cmd record` writes, or
`trace-cmd convert --file-version 6 --compression none`) with its records in a buffer
instance, as `irqres record` writes them. OUT is SOURCE's header (formats, options, the
buffer instance) with the per-CPU data written COPIES times, every ring-buffer page's
timestamp moved on by the source's length (plus 2 s) each time, and the flyrecord
tables patched to match. libtracecmd 3.1 reads no more than 2 GiB of one CPU, so when
the copies need more, they go to more CPUs (CPUs 2-3 hold copies after those of CPUs
0-1, as a 4-CPU machine where each pair worked in turn). The result holds COPIES times
the records of SOURCE, in time order on every CPU, in the same buffer.

Only the page header's timestamp moves: events inside a page are deltas from it. A page
holding an absolute time stamp (RINGBUF_TYPE_TIME_STAMP) would come out wrong; the bench
checks the record count and the order of every CPU's timestamps after the build.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys

import numpy as np

PAGE_HDR_TS = 8  # u64 timestamp at the start of every page (little endian here)


def cpu_data(path: str) -> tuple[list[tuple[int, int]], int]:
    """[(offset, size)] of every CPU of the buffer with data, and the page size."""
    out = subprocess.run(["trace-cmd", "dump", "--flyrecord", "--summary", path],
                         capture_output=True, text=True, check=True).stdout
    page = int(re.search(r"(\d+)\s+\[Page size", out).group(1))
    pairs = [(int(a), int(b)) for a, b in
             re.findall(r"^\s*(\d+)\s+(\d+)\s+\[offset, size of cpu \d+\]", out, re.M)]
    ncpu = int(re.search(r"(\d+) \[CPUs with tracing data\]", out).group(1))
    # the last flyrecord section listed with data is the one with the records
    sections = [pairs[i:i + ncpu] for i in range(0, len(pairs), ncpu)]
    with_data = [s for s in sections if sum(sz for _, sz in s) > 0]
    if not with_data:
        raise SystemExit(f"{path}: no CPU data found")
    return with_data[-1], page


#: libtracecmd 3.1 reads no further than 2 GiB into one CPU's data: a CPU gets at most
#: this much, and the copies spread over more CPUs (as on a bigger machine)
CPU_MAX_BYTES = 2**31 - 2**20
OPT_CPUCOUNT, OPT_BUFFER = 8, 3


def _section(buf: bytes, at: int, ncpu: int) -> int:
    """The length of a flyrecord section (marker, table, clock) that starts at ``at``."""
    if buf[at:at + 10] != b"flyrecord\0":
        raise SystemExit(f"no flyrecord section at {at}")
    pos = at + 10 + 16 * ncpu
    (n,) = struct.unpack_from("<Q", buf, pos)
    return pos + 8 + n - at


def _fly(table: list[tuple[int, int]], clock: bytes) -> bytes:
    return (b"flyrecord\0" + b"".join(struct.pack("<QQ", o, sz) for o, sz in table)
            + struct.pack("<Q", len(clock)) + clock)


def build_header(head: bytes, ncpu: int, nout: int, data_table) -> bytes:
    """``head`` (a version-6 header up to its data) for ``nout`` CPUs, the records in
    its buffer instance at the offsets and sizes of ``data_table`` (called with the
    header's length)."""
    mark = head.find(b"options  \0")
    (cpus,) = struct.unpack_from("<I", head, mark - 4)
    if mark < 0 or cpus != ncpu:
        raise SystemExit("cannot find the options of the header")
    pos, opts, buf_at = mark + 10, [], None
    while True:
        oid, size = struct.unpack_from("<HI", head, pos)
        if oid == 0:
            pos += 2
            break
        data = head[pos + 6:pos + 6 + size]
        if oid == OPT_CPUCOUNT:
            data = struct.pack("<I", nout)
        if oid == OPT_BUFFER:
            (buf_at,) = struct.unpack_from("<Q", data)
        opts.append([oid, data])
        pos += 6 + size
    if buf_at is None:
        raise SystemExit("the records are not in a buffer instance: not supported")
    top_len = _section(head, pos, ncpu)
    top_clock = head[pos + 10 + 16 * ncpu + 8:pos + top_len]
    inst_len = _section(head, buf_at, ncpu)
    inst_clock = head[buf_at + 10 + 16 * ncpu + 8:buf_at + inst_len]
    out = head[:mark - 4] + struct.pack("<I", nout) + b"options  \0"
    body = b"".join(struct.pack("<HI", o, len(d)) + d for o, d in opts) + b"\0\0"
    top = _fly([(0, 0)] * nout, top_clock)
    inst_at = len(out) + len(body) + len(top)
    for o in opts:
        if o[0] == OPT_BUFFER:
            o[1] = struct.pack("<Q", inst_at) + o[1][8:]
    body = b"".join(struct.pack("<HI", o, len(d)) + d for o, d in opts) + b"\0\0"
    inst_len_new = 10 + 16 * nout + 8 + len(inst_clock)
    end = inst_at + inst_len_new
    start = -(-end // 4096) * 4096
    inst = _fly(data_table(start), inst_clock)
    return (out + body + top + inst).ljust(start, b"\0")


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    cpus, page = cpu_data(src)
    ncpu = len(cpus)
    data = np.memmap(src, dtype=np.uint8, mode="r")
    base = cpus[0][0]
    first, last = None, None
    for off, size in cpus:
        if size:
            ts = data[off:off + size].reshape(-1, page)[:, :PAGE_HDR_TS].copy().view("<u8")
            ts = ts[ts > 0]
            first = ts.min() if first is None else min(first, ts.min())
            last = ts.max() if last is None else max(last, ts.max())
    shift = int(last - first) + 2_000_000_000
    per_group = max(1, CPU_MAX_BYTES // max(sz for _, sz in cpus))
    groups = -(-copies // per_group)
    nout = ncpu * groups
    # output CPU g*ncpu + c holds the copies of group g of source CPU c, in time order
    plan = [[k for k in range(copies) if k // per_group == g] for g in range(groups)]
    sizes = [len(plan[g]) * cpus[c][1] for g in range(groups) for c in range(ncpu)]

    def table(start: int) -> list[tuple[int, int]]:
        offs = np.concatenate([[0], np.cumsum(sizes)[:-1]]) + start
        return [(int(o), int(sz)) for o, sz in zip(offs, sizes, strict=True)]

    head = build_header(bytes(data[:base]), ncpu, nout, table)
    with open(out, "wb") as fh:
        fh.write(head)
        for g in range(groups):
            for off, size in cpus:
                pages = data[off:off + size].reshape(-1, page)
                for k in plan[g]:
                    block = np.array(pages)
                    ts = block[:, :PAGE_HDR_TS].copy().view("<u8")
                    used = ts[:, 0] > 0
                    ts[used, 0] += np.uint64(k * shift)
                    block[:, :PAGE_HDR_TS] = ts.view(np.uint8).reshape(-1, PAGE_HDR_TS)
                    block.tofile(fh)
    print(f"{out}: {copies} copies of {src}'s records on {nout} CPUs, shifted by "
          f"{shift} ns each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
