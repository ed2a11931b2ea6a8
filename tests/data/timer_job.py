#!/usr/bin/env python3
"""A periodic job of known CPU time, woken by a timerfd: the workload of the tests that
check the kernel's charge and the reservations irqres recommends.

Every --period-us a timerfd expires; the job then burns --work-us of its own CPU time
(CLOCK_THREAD_CPUTIME_ID) and reads the timerfd again (sleeps). With --schedstat-out it
writes its sum_exec_runtime (/proc/self/schedstat, field 1, ns) there before it exits.
With --deadline Q,T (ns) it runs under SCHED_DEADLINE (runtime Q, deadline = period T).
With --responses-out it writes each job's response time (ns, CLOCK_MONOTONIC: from the
timer's expiry to the job's end), one per line; an expiry that found the previous job
still running is a job of its own whose response is written as -1 (it missed).
With --wait-deadline S it starts its timer only once something else (irqresd) has put it
under SCHED_DEADLINE, and fails after S seconds without.
"""

import argparse
import ctypes
import os
import struct
import sys
import time

CLOCK_MONOTONIC = 1
SCHED_DEADLINE = 6
SCHED_RESET_ON_FORK = 0x40000000


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", Timespec), ("it_value", Timespec)]


class SchedAttr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32),
                ("flags", ctypes.c_uint64), ("nice", ctypes.c_int32),
                ("priority", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64)]


def burn(work_ns: int) -> None:
    """Use work_ns of this thread's CPU time. The thread's CPU clock is read only when the
    wall clock says the work may be done (each read makes the scheduler charge the
    thread, and traces a sched_stat_runtime event)."""
    cpu = time.CLOCK_THREAD_CPUTIME_ID
    end = time.clock_gettime_ns(cpu) + work_ns
    left = work_ns
    while left > 0:
        until = time.monotonic_ns() + left
        while time.monotonic_ns() < until:
            pass
        left = end - time.clock_gettime_ns(cpu)


def wait_deadline(seconds: float) -> bool:
    """Whether this process became SCHED_DEADLINE within ``seconds`` (it keeps running
    now and then meanwhile: irqresd reserves a task once it has run in its partition)."""
    end = time.monotonic() + seconds
    # the policy comes back with SCHED_RESET_ON_FORK or'ed in when the setter asked
    while os.sched_getscheduler(0) & ~SCHED_RESET_ON_FORK != SCHED_DEADLINE:
        if time.monotonic() > end:
            return False
        time.sleep(0.2)  # each poll is a wake-up the trace shows: few of them
    return True


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--period-us", type=int, required=True)
    ap.add_argument("--work-us", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--comm", default="timer-job")
    ap.add_argument("--schedstat-out")
    ap.add_argument("--deadline", help="Q,T in ns: run under SCHED_DEADLINE")
    ap.add_argument("--responses-out")
    ap.add_argument("--wait-deadline", type=float)
    args = ap.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if args.deadline:
        q, t = (int(x) for x in args.deadline.split(","))
        attr = SchedAttr(ctypes.sizeof(SchedAttr), SCHED_DEADLINE, 0, 0, 0, q, t, t)
        # SYS_sched_setattr is 314 on x86_64
        if libc.syscall(314, 0, ctypes.byref(attr), 0) != 0:
            err = ctypes.get_errno()
            print(f"sched_setattr({q},{t}): {os.strerror(err)}", file=sys.stderr)
            return 1
    libc.prctl(15, args.comm.encode(), 0, 0, 0)  # PR_SET_NAME
    if args.wait_deadline is not None and not wait_deadline(args.wait_deadline):
        print(f"not SCHED_DEADLINE after {args.wait_deadline:g} s", file=sys.stderr)
        return 1
    fd = libc.timerfd_create(CLOCK_MONOTONIC, 0)
    if fd < 0:
        print(f"timerfd_create: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 1
    p = args.period_us * 1000
    first = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + p
    spec = Itimerspec(Timespec(p // 10**9, p % 10**9),
                      Timespec(first // 10**9, first % 10**9))
    libc.timerfd_settime(fd, 1, ctypes.byref(spec), None)  # TFD_TIMER_ABSTIME
    responses, expired = [], 0
    while len(responses) < args.count:
        (n,) = struct.unpack("Q", os.read(fd, 8))
        responses += [-1] * (n - 1)       # expiries that found the last job running
        expired += n
        burn(args.work_us * 1000)
        release = first + (expired - 1) * p
        responses.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - release)
    if args.responses_out:
        with open(args.responses_out, "w") as fh:
            fh.write("".join(f"{r}\n" for r in responses[:args.count]))
    if args.schedstat_out:
        with open("/proc/self/schedstat") as fh:
            ran = fh.read().split()[0]
        with open(args.schedstat_out, "w") as fh:
            fh.write(ran + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
