"""The import guard of tests/python/readme_paths.py, loaded by every interpreter started
with this directory first on PYTHONPATH (site imports ``sitecustomize``).

With $IRQRES_GUARD_ALLOW set (the top-level modules a README command's dependency sets
install, blank-separated), a module of the project ($IRQRES_GUARD_FIRST_PARTY: irqres,
the demo's scripts, ``__main__``) may import only the standard library, the project's own
modules and those: anything else fails as if it were not installed, and is written to
$IRQRES_GUARD_LOG ("importer imported-module" a line), whatever catches the error. What
the allowed modules import in turn stays allowed (matplotlib's own dependencies are the
Debian package's, not the project's).

Both ways in are watched: the import statement (``builtins.__import__``, which also sees
modules some earlier import left in ``sys.modules``) and ``importlib.import_module`` (a
meta path finder, which looks up the importing frame).
"""

from __future__ import annotations

import builtins
import os
import sys


def _install() -> None:
    allow = set(os.environ["IRQRES_GUARD_ALLOW"].split())
    first_party = set(os.environ.get("IRQRES_GUARD_FIRST_PARTY", "irqres __main__").split())
    log = os.environ.get("IRQRES_GUARD_LOG")
    stdlib = set(sys.stdlib_module_names)

    def refused(name: str, importer: str | None) -> bool:
        top = name.partition(".")[0]
        if not importer or top in allow or top in stdlib or top in first_party:
            return False
        if importer.partition(".")[0] not in first_party:
            return False                 # a dependency's own import
        if log:
            with open(log, "a") as f:
                f.write(f"{importer} {top}\n")
        return True

    def error(name: str, importer: str) -> ModuleNotFoundError:
        return ModuleNotFoundError(
            f"No module named {name.partition('.')[0]!r} (import guard: {importer} imports "
            "it, and this command's dependency sets do not install it)",
            name=name.partition(".")[0])

    real_import = builtins.__import__

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and globals is not None:
            importer = globals.get("__name__")
            if refused(name, importer):
                raise error(name, importer)
        return real_import(name, globals, locals, fromlist, level)

    class Finder:
        """importlib.import_module(): the importer is the first frame outside importlib."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            if "." in name:
                return None
            frame = sys._getframe(1)
            while frame is not None:
                mod = frame.f_globals.get("__name__", "")
                if not (mod.startswith(("importlib", "_frozen_importlib"))
                        or mod == __name__ or frame.f_code.co_filename.startswith("<frozen")):
                    break
                frame = frame.f_back
            importer = frame.f_globals.get("__name__") if frame is not None else None
            if refused(name, importer):
                raise error(name, importer)
            return None

    builtins.__import__ = guarded_import
    sys.meta_path.insert(0, Finder())


if os.environ.get("IRQRES_GUARD_ALLOW") is not None:
    _install()
