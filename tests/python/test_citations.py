"""Nothing in the tree cites a document that is not in the tree: every `NAME.md` a
tracked file names, and every `docs/...` or `man/...` path, is a file of the checkout
(a comment citing a document a reader cannot open says nothing)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# a path with a directory, or a bare NAME.md; not inside a longer word or a glob
CITE = re.compile(r"(?<![\w/.~-])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9][A-Za-z0-9_.-]*\.md"
                  r"|(?:docs|man)/[A-Za-z0-9_./-]*[A-Za-z0-9_])(?![\w*{<])")
# data: recorded traces, fuzz inputs, fixture trees, measurements; and this file, whose
# examples cite missing documents on purpose
SKIP = ("tests/fuzz/", "tests/data/", "tests/c/fixtures/", "bench/seeds/data/",
        "tests/python/test_citations.py")


def tracked() -> list[str]:
    out = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True,
                         text=True, check=True).stdout
    return out.split()


def read_file(path: str) -> str | None:
    try:
        return (REPO / path).read_text()
    except (UnicodeDecodeError, OSError):
        return None                                     # binary (images, traces)


def missing(files: list[str], read: Callable[[str], str | None] = read_file) -> list[str]:
    """Each citation of a document that is not among ``files``: "file:line: cited"."""
    have = set(files)
    names = {Path(f).name for f in files}
    dirs = {str(p) for f in files for p in Path(f).parents}
    out = []
    for f in files:
        text = None if f.startswith(SKIP) else read(f)
        for n, line in enumerate((text or "").splitlines(), 1):
            for m in CITE.finditer(line):
                cited = m.group(1)
                if cited.startswith(("./", "../")):             # a link, from its file
                    cited = os.path.normpath(os.path.join(os.path.dirname(f), cited))
                if not (cited in have or cited in dirs
                        or ("/" not in cited and cited in names)):
                    out.append(f"{f}:{n}: {m.group(1)}")
    return out


def test_every_cited_document_is_in_the_tree():
    files = tracked()
    assert len(files) > 100
    assert missing(files) == []


def test_a_missing_document_is_found():
    tree = {"a/x.py": '"""The controller of DESIGN.md point 4 (docs/controller.md)."""',
            "docs/controller.md": "see [x](../a/x.py), [y](../docs/gone.md), man/irqres.8",
            "README.md": "docs/controller.md, README.md"}
    assert missing(list(tree), tree.get) == ["a/x.py:1: DESIGN.md",
                                             "docs/controller.md:1: ../docs/gone.md",
                                             "docs/controller.md:1: man/irqres.8"]
