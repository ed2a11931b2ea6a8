"""sched_getattr(2) and sched_setattr(2) for Python: the kernel's ``struct sched_attr``
and the syscalls' numbers, which neither Python's os module nor glibc 2.36 wrap.

The one definition the package, the integration tests and the VM guest's scenarios use
(irqresd has its own in C, daemon/src/dl.c, with ``SYS_sched_setattr`` from libc).
"""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass

SCHED_OTHER = 0
SCHED_FIFO = 1
SCHED_RR = 2
SCHED_BATCH = 3
SCHED_IDLE = 5
SCHED_DEADLINE = 6
POLICY_NAMES = {SCHED_OTHER: "other", SCHED_FIFO: "fifo", SCHED_RR: "rr",
                SCHED_BATCH: "batch", SCHED_IDLE: "idle", SCHED_DEADLINE: "deadline"}

#: machine -> (sched_setattr, sched_getattr): the kernel's syscall tables
#: (arch/x86/entry/syscalls, include/uapi/asm-generic/unistd.h, arch/arm/tools/syscall.tbl)
SYSCALLS = {
    "x86_64": (314, 315),
    "i686": (351, 352),
    "aarch64": (274, 275),
    "riscv64": (274, 275),
    "armv7l": (380, 381),
}


class SchedAttr(ctypes.Structure):
    """``struct sched_attr`` as of SCHED_ATTR_SIZE_VER0 (48 bytes): enough for every
    policy's parameters; the kernel accepts the short size from any version."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("sched_policy", ctypes.c_uint32),
        ("sched_flags", ctypes.c_uint64),
        ("sched_nice", ctypes.c_int32),
        ("sched_priority", ctypes.c_uint32),
        ("sched_runtime", ctypes.c_uint64),
        ("sched_deadline", ctypes.c_uint64),
        ("sched_period", ctypes.c_uint64),
    ]


@dataclass(frozen=True)
class Sched:
    """A thread's scheduling attributes, times in ns (0 outside SCHED_DEADLINE)."""

    policy: int
    priority: int
    nice: int
    runtime_ns: int
    deadline_ns: int
    period_ns: int

    @property
    def policy_name(self) -> str:
        return POLICY_NAMES.get(self.policy, str(self.policy))


_libc = ctypes.CDLL(None, use_errno=True)


def supported() -> bool:
    """Whether this machine's syscall numbers are known."""
    return platform.machine() in SYSCALLS


def _numbers() -> tuple[int, int]:
    nrs = SYSCALLS.get(platform.machine())
    if nrs is None:
        raise OSError(0, f"sched_setattr/sched_getattr: no syscall numbers known for "
                         f"{platform.machine()}")
    return nrs


def get(pid: int) -> Sched:
    """sched_getattr(pid): the attributes in force (reads only).

    Raises
    ------
    OSError
        The kernel refused (ESRCH: no such thread), or the machine is unknown.
    """
    attr = SchedAttr()
    if _libc.syscall(_numbers()[1], int(pid), ctypes.byref(attr), ctypes.sizeof(attr), 0):
        err = ctypes.get_errno()
        raise OSError(err, f"sched_getattr(pid {pid}): {os.strerror(err)}")
    return Sched(attr.sched_policy, attr.sched_priority, attr.sched_nice,
                 attr.sched_runtime, attr.sched_deadline, attr.sched_period)


def set_attr(pid: int, policy: int, *, priority: int = 0, nice: int = 0, runtime_ns: int = 0,
             deadline_ns: int = 0, period_ns: int = 0, flags: int = 0) -> int:
    """sched_setattr(pid): 0, or the errno the kernel answered (EBUSY: admission
    control refused the bandwidth, EPERM, EINVAL, ...)."""
    attr = SchedAttr(size=ctypes.sizeof(SchedAttr), sched_policy=policy, sched_flags=flags,
                     sched_nice=nice, sched_priority=priority, sched_runtime=runtime_ns,
                     sched_deadline=deadline_ns, sched_period=period_ns)
    if _libc.syscall(_numbers()[0], int(pid), ctypes.byref(attr), 0):
        return ctypes.get_errno()
    return 0
