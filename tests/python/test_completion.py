"""TAB completion: quick (no numpy, scipy or matplotlib for any subcommand; timings in
bench/completion) and it completes the target names irqresd holds."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from fakes import FakeDaemon
from irqres.cli import COMMANDS

HEAVY = ("numpy", "scipy", "matplotlib")
PROBE = f"""
import sys
from irqres.cli import main
try:
    main(prog_name="irqres")
except SystemExit:
    pass
print("imported:", *sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)
print("commands:", *sorted(m for m in sys.modules if m.count(".") == 2
                           and m.startswith("irqres.cli.") and m != "irqres.cli.common"),
      file=sys.stderr)
"""


def complete(words: str, **env: str) -> subprocess.CompletedProcess[str]:
    """What bash's completion function gets for the command line ``words`` (the last word
    is the one being completed)."""
    full = {**os.environ, "_IRQRES_COMPLETE": "bash_complete", "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split(" ")) - 1), **env}
    return subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True,
                          text=True, timeout=30, check=False)


@pytest.mark.parametrize("words", ["irqres ", "irqres st",
                                   *(f"irqres {name} --" for name in COMMANDS)])
def test_completion_imports_nothing_heavy(words, tmp_path):
    r = complete(words, IRQRES_SOCKET=str(tmp_path / "none.sock"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip(), f"nothing completed for {words!r}"
    imported, commands = r.stderr.splitlines()
    assert imported == "imported:", f"{words!r}: {r.stderr}"
    if not words.endswith("--"):        # a subcommand's name: none of them is imported
        assert commands == "commands:", f"{words!r}: {r.stderr}"


def test_target_names_complete_from_the_daemon(tmp_path):
    d = FakeDaemon(str(tmp_path / "irqresd.sock")).start()
    try:
        r = complete("irqres set-budget ", IRQRES_SOCKET=d.path)
        assert r.stdout.split() == ["plain,nic", "plain,pid:105"], r.stderr
        r = complete(f"irqres --socket {d.path} set-budget n")
        assert r.stdout.split() == ["plain,nic"]
        assert "status" in d.requests
        # a daemon that does not answer: nothing to complete, quickly
        d.override["status"] = "silent"
        r = complete("irqres set-budget n", IRQRES_SOCKET=d.path)
        assert r.returncode == 0 and r.stdout.split() == []
    finally:
        d.stop()
    r = complete("irqres set-budget ", IRQRES_SOCKET=str(tmp_path / "none.sock"))
    assert r.returncode == 0 and r.stdout.split() == []
