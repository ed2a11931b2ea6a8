"""What every ``--json`` output of ``irqres`` goes through: data made JSON-safe (no NaN or
infinity, no numpy scalars, tuples as lists) and the schema version
(:data:`SCHEMA_VERSION` under :data:`VERSION_KEY`). The schemas are in docs/json.md.

Imports nothing heavy: the daemon's commands (``status``, ``stats``) print through it
without loading numpy.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: the key every ``--json`` object carries, and the version of the schemas of docs/json.md
#: (raised when a key changes meaning or goes; a new key does not raise it)
VERSION_KEY = "schema_version"
SCHEMA_VERSION = 1


def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float as None (JSON has no NaN or infinity), numpy
    scalars as Python numbers and tuples as lists; dicts and lists copied.

    Raises
    ------
    TypeError
        For a value JSON cannot hold, naming its type.
    """
    if isinstance(obj, bool) or obj is None or isinstance(obj, int | str):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "item"):   # a numpy scalar
        return json_safe(obj.item())
    raise TypeError(f"cannot serialise {type(obj).__name__} as JSON")


def versioned(obj: dict[str, Any]) -> dict[str, Any]:
    """The JSON-safe ``obj`` with the schema version of docs/json.md first (in place of
    any version a reply of irqresd passed through carries under the same key)."""
    safe = json_safe(obj)
    safe.pop(VERSION_KEY, None)
    return {VERSION_KEY: SCHEMA_VERSION, **safe}


def dumps(obj: dict[str, Any], indent: int = 2, sort_keys: bool = True) -> str:
    """One ``--json`` output: ``obj`` versioned and JSON-safe, as text."""
    return json.dumps(versioned(obj), indent=indent, sort_keys=sort_keys, allow_nan=False)
