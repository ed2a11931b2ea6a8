#!/usr/bin/env python3
"""A user-space stand-in for an IRQ thread, to record real host traces with known timing.

A "device" process writes one byte to a pipe every PERIOD; a child named like an IRQ
thread (comm ``irq/99-fakedev`` by default) wakes on it, busy-runs for WORK, wakes a
"consumer" process through a second pipe and sleeps again. The analysis must find
activations about PERIOD apart, about WORK long, serving the consumer.

Usage: fake_irq.py [--period-us 2000] [--work-us 200] [--count 200] [--name irq/99-fakedev]
"""

import argparse
import ctypes
import os
import time

PR_SET_NAME = 15


def set_comm(name: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--period-us", type=int, default=2000)
    ap.add_argument("--work-us", type=int, default=200)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--name", default="irq/99-fakedev")
    a = ap.parse_args()
    dev_r, dev_w = os.pipe()
    out_r, out_w = os.pipe()
    consumer = os.fork()
    if consumer == 0:
        set_comm("fake-consumer")
        os.close(dev_w)
        os.close(out_w)
        while os.read(out_r, 1):
            pass
        os._exit(0)
    worker = os.fork()
    if worker == 0:
        set_comm(a.name)
        os.close(dev_w)
        os.close(out_r)
        work_ns = a.work_us * 1000
        while os.read(dev_r, 1):
            end = time.monotonic_ns() + work_ns
            while time.monotonic_ns() < end:
                pass
            os.write(out_w, b"x")
        os._exit(0)
    set_comm("fake-device")
    os.close(dev_r)
    os.close(out_r)
    os.close(out_w)
    period = a.period_us * 1000
    nxt = time.monotonic_ns() + period
    for _ in range(a.count):
        delay = nxt - time.monotonic_ns()
        if delay > 0:
            time.sleep(delay / 1e9)
        os.write(dev_w, b"x")
        nxt += period
    os.close(dev_w)
    os.waitpid(worker, 0)
    os.waitpid(consumer, 0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
