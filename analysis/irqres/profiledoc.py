"""A profile (docs/profile.md) built as data and written once as YAML.

``irqres analyze`` recommends one target per thread; :func:`dump` writes them as one
profile, each target under the comment that says why it got its reservation::

    version: 1
    targets:
      # P{response <= 1ms} >= 0.99 (activation model 0.995000, replay 0.996000)
      - name: irq11-eth0
        irq: [11]
        runtime: 200us
        period: 1ms
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

VERSION = 1


class _Dumper(yaml.SafeDumper):
    """SafeDumper that indents a list under its key (``targets:`` then ``  - name:``),
    as docs/profile.md writes profiles."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def dump(targets: Sequence[tuple[str | None, dict[str, Any]]]) -> str:
    """The profile text of ``targets``: (comment or None, target mapping) pairs, in order.

    The document is written by one ``yaml.dump`` with the safe dumper; lists of scalars
    stay on one line (``irq: [11]``). Each comment (one line, without ``#``) goes on the
    line above its target's first key.
    """
    doc = {"version": VERSION, "targets": [t for _, t in targets]}
    text = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None,
                     width=1 << 20, allow_unicode=True)
    comments = iter(c for c, _ in targets)
    out = []
    for line in text.splitlines():
        if line.startswith("  - "):         # a target's first line: the list's own indent
            comment = next(comments)
            if comment:
                out.append(f"  # {comment}")
        out.append(line)
    return "\n".join(out) + "\n"
