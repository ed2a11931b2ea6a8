"""What every suite needs of the host before its tests are collected."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")


def pytest_configure(config):
    _mount_tracefs()


def _mount_tracefs() -> None:
    """Mount tracefs at /sys/kernel/tracing when the kernel has it and nothing has mounted it
    yet. The tests that record real traces decide at collection whether they can; on a
    fresh machine tracefs is often mounted only later (libtracefs mounts it the first time
    a tool asks for it, as `irqres analyze` does), so they skipped there though the kernel
    could trace."""
    if os.geteuid() != 0 or (TRACEFS / "available_events").exists():
        return
    try:
        if "tracefs" not in Path("/proc/filesystems").read_text().split():
            return
    except OSError:
        return
    subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True,
                   check=False)
