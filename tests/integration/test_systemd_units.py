"""The systemd units: Debian 12's systemd reads every directive."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNITS = REPO / "systemd"


def test_debian_systemd_knows_every_directive(tmp_path):
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.fail("systemd-analyze is missing (Debian: the systemd package)")
    irqresd = REPO / "build" / "daemon" / "irqresd"
    paths = []
    for unit in ("irqresd.service", "irqres-tune.service"):
        text = (UNITS / unit).read_text()
        # the commands must exist for verify: this build's irqresd, any executable for irqres
        text = text.replace("/usr/local/sbin/irqresd", str(irqresd))
        text = text.replace("/usr/local/bin/irqres", shutil.which("true") or "/bin/true")
        (tmp_path / unit).write_text(text)
        paths.append(str(tmp_path / unit))
    r = subprocess.run([tool, "verify", "--man=no", *paths], capture_output=True, text=True)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and out == "", out
