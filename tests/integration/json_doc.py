"""Checks JSON outputs against the tables of docs/json.md.

Each ``### NAME`` section of the document's ``## irqresd`` part is one object: a table of
``| member | type | unit | meaning |`` rows. A type is ``int``, ``number``, ``string``,
``bool``, ``null``, ``object`` (its members are the rows ``name.member``), ``array of T``,
another section's NAME, or several joined by ``or``. A member whose meaning starts with
"optional" may be left out; every other one must be there, and no member may be there
that the table does not list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "json.md"
SIMPLE = ("int", "number", "string", "bool", "null", "object")


class SchemaMismatch(AssertionError):
    """An output does not match its table; the message names the member and the cause."""


@dataclass(frozen=True)
class Member:
    name: str           # "pid", or "adaptive.gain" for a member of an object member
    types: tuple[str, ...]
    optional: bool


def load(part: str = "irqresd", doc: Path = DOC) -> dict[str, list[Member]]:
    """The tables of the ``## part`` section of the document, by object name."""
    tables: dict[str, list[Member]] = {}
    inside, current = False, None
    for line in doc.read_text().splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == part
            current = None
        elif inside and line.startswith("### "):
            current = line[4:].split()[0]
            tables[current] = []
        elif inside and current and line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            name = cells[0].strip("`")
            types = tuple(t.strip() for t in cells[1].split(" or "))
            tables[current].append(Member(name, types, cells[3].startswith("optional")))
    for name, members in tables.items():
        for m in members:
            for t in m.types:
                ref = t.removeprefix("array of ")
                if ref not in SIMPLE and ref not in tables:
                    raise SchemaMismatch(f"{doc}: {name}.{m.name}: unknown type {t!r}")
    return tables


def _fits(value: object, t: str) -> bool:
    if t == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "bool":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if t.startswith("array of "):
        return isinstance(value, list)
    return isinstance(value, dict)      # "object" or another table


def _check_members(value: dict, members: list[Member], tables: dict[str, list[Member]],
                   where: str) -> None:
    here = {m.name: m for m in members if "." not in m.name}
    for key in value:
        if key not in here:
            raise SchemaMismatch(f"{where}: member {key!r} is not in the tables of {DOC.name}")
    for m in here.values():
        if m.name not in value:
            if not m.optional:
                raise SchemaMismatch(f"{where}: member {m.name!r} is missing")
            continue
        children = [Member(c.name[len(m.name) + 1:], c.types, c.optional) for c in members
                    if c.name.startswith(m.name + ".")]
        _check_value(value[m.name], m.types, children, tables, f"{where}.{m.name}")


def _check_value(value: object, types: tuple[str, ...], children: list[Member],
                 tables: dict[str, list[Member]], where: str) -> None:
    t = next((t for t in types if _fits(value, t)), None)
    if t is None:
        raise SchemaMismatch(f"{where}: {type(value).__name__} {value!r:.60} where docs/"
                             f"json.md says {' or '.join(types)}")
    if t.startswith("array of "):
        item = t.removeprefix("array of ")
        for i, v in enumerate(value):   # type: ignore[arg-type]
            _check_value(v, (item,), [], tables, f"{where}[{i}]")
    elif t == "object":
        _check_members(value, children, tables, where)   # type: ignore[arg-type]
    elif t in tables:
        _check_members(value, tables[t], tables, where)  # type: ignore[arg-type]


def check(value: object, name: str, tables: dict[str, list[Member]] | None = None) -> None:
    """Raises :class:`SchemaMismatch` unless ``value`` is the object table ``name``
    describes."""
    tables = tables if tables is not None else load()
    if name not in tables:
        raise SchemaMismatch(f"docs/json.md has no table {name}")
    _check_value(value, (name,), [], tables, name)


def used(tables: dict[str, list[Member]]) -> set[str]:
    """The tables some other table refers to."""
    return {re.sub(r"^array of ", "", t) for ms in tables.values() for m in ms
            for t in m.types} & set(tables)
