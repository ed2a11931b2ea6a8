"""README's Layout section against the tree, both ways: every module of daemon/src and
of analysis/irqres is listed, and everything listed exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FILE = re.compile(r"(?<![\w./-])(\w+\.(?:py|c))\b")


def layout(readme: str) -> tuple[set[str], set[str]]:
    """The directories and the files README's Layout section names, relative to the root.

    In its indented block a line at 4 blanks starts with a directory of the root; a line
    at 6 blanks starts with a file of that directory (the rest describes it) or with a
    subdirectory, whose files are named on that line and the lines under it.
    """
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    dirs: set[str] = set()
    files: set[str] = set()
    top = sub = ""
    for line in section.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        words = line.split()
        if not words or indent < 4:
            continue
        if indent == 4:
            top, sub = words[0], ""
            dirs.add(top)
        elif indent == 6 and words[0].endswith("/"):
            sub = top + words[0]
            dirs.add(sub)
            files.update(sub + f for f in FILE.findall(line.split(None, 1)[1]))
        elif indent == 6:
            sub = ""
            files.add(top + words[0])
        elif sub:
            files.update(sub + f for f in FILE.findall(line))
    return dirs, files


def modules() -> set[str]:
    """The daemon's and the Python package's modules: what the Layout must name."""
    out = {str(p.relative_to(REPO)) for p in (REPO / "daemon/src").glob("*.c")}
    for p in (REPO / "analysis/irqres").rglob("*"):
        if p.suffix in (".py", ".c") and p.name != "__init__.py":
            out.add(str(p.relative_to(REPO)))
    return out


def test_every_module_is_in_the_layout():
    _, files = layout((REPO / "README.md").read_text(encoding="utf-8"))
    assert sorted(modules() - files) == []


def test_everything_the_layout_names_exists():
    dirs, files = layout((REPO / "README.md").read_text(encoding="utf-8"))
    assert len(files) > 60 and "daemon/src/" in dirs
    assert sorted(d for d in dirs if not (REPO / d).is_dir()) == []
    assert sorted(f for f in files if not (REPO / f).is_file()) == []


def test_every_daemon_header_has_its_module():
    headers = {p.stem for p in (REPO / "daemon/src").glob("*.h")}
    assert sorted(headers - {p.stem for p in (REPO / "daemon/src").glob("*.c")}) == []


def test_the_reading_rules():
    readme = """x

## Layout

    daemon/src/       the daemon
      main.c          the loop; mentions other.c in passing
      gone.c          a module deleted since
    analysis/irqres/  the package
      cli/            one per command: a.py b.py,
                      c.py; common.py
      x.py            a module
## Tests
"""
    dirs, files = layout(readme)
    assert dirs == {"daemon/src/", "analysis/irqres/", "analysis/irqres/cli/"}
    assert files == {"daemon/src/main.c", "daemon/src/gone.c", "analysis/irqres/x.py",
                     "analysis/irqres/cli/a.py", "analysis/irqres/cli/b.py",
                     "analysis/irqres/cli/c.py", "analysis/irqres/cli/common.py"}
