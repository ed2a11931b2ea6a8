#!/usr/bin/env python3
"""The code's size and complexity goals, measured with lizard (version pinned in
scripts/install-deps.sh, checked here so that numbers compare across machines).

    python3 scripts/c-complexity.py [--json] [DIR...] [--python PKG...]
                                    (default: daemon/src)

Each directory of C sources (the daemon, the trace reader extension; its *.c and *.h) and
each Python package (--python: every *.py under it) is measured on its own.

Goals, the same for C and Python: at most 4 % of the functions with cyclomatic complexity
over 15, no function over 100 lines, no file over 1,000 lines. Prints the measures and
every function or file past a limit; exits 1 when a goal is missed, 2 when lizard is
missing or another version.
"""

import argparse
import json
import pathlib
import sys

LIZARD_VERSION = "1.24.3"
CCN_MAX = 15
CCN_SHARE_MAX = 0.04
FUNCTION_LINES_MAX = 100
FILE_LINES_MAX = 1000


def sources(src: pathlib.Path, python: bool) -> list[pathlib.Path]:
    """The files measured: every *.py under a Python package, the *.c and *.h of a C
    directory."""
    return sorted(src.rglob("*.py") if python else src.glob("*.[ch]"))


def measure(src: pathlib.Path, python: bool = False) -> dict:
    import lizard

    functions, files = [], []
    for path in sources(src, python):
        info = lizard.analyze_file(str(path))
        files.append({"file": str(path), "lines": len(path.read_text().splitlines())})
        for f in info.function_list:
            functions.append({"file": str(path), "line": f.start_line, "name": f.name,
                              "ccn": f.cyclomatic_complexity, "lines": f.length})
    complex_ = [f for f in functions if f["ccn"] > CCN_MAX]
    share = len(complex_) / len(functions) if functions else 0.0
    return {
        "lizard": lizard.version,
        "functions": len(functions),
        "ccn_over_15": len(complex_),
        "ccn_over_15_share": round(share, 4),
        "complex": sorted(complex_, key=lambda f: -f["ccn"]),
        "long_functions": [f for f in functions if f["lines"] > FUNCTION_LINES_MAX],
        "long_files": [f for f in files if f["lines"] > FILE_LINES_MAX],
        "ok": share <= CCN_SHARE_MAX
        and not any(f["lines"] > FUNCTION_LINES_MAX for f in functions)
        and not any(f["lines"] > FILE_LINES_MAX for f in files),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", metavar="DIR",
                    help="directories of C sources (default: daemon/src)")
    ap.add_argument("--python", nargs="+", default=[], metavar="PKG",
                    help="Python packages, every *.py under each")
    ap.add_argument("--json", action="store_true", help="the measures as JSON")
    args = ap.parse_args()
    try:
        import lizard
    except ImportError:
        print("c-complexity: lizard is not installed (scripts/install-deps.sh test)",
              file=sys.stderr)
        return 2
    if lizard.version != LIZARD_VERSION:
        print(f"c-complexity: lizard {lizard.version} found, {LIZARD_VERSION} wanted: "
              "another version counts differently (scripts/install-deps.sh test)",
              file=sys.stderr)
        return 2
    dirs = args.dirs or ([] if args.python else ["daemon/src"])
    srcs = [(pathlib.Path(d), False) for d in dirs]
    srcs += [(pathlib.Path(d), True) for d in args.python]
    for src, _ in srcs:
        if not src.is_dir():
            print(f"c-complexity: {src}: no such directory", file=sys.stderr)
            return 2
    measures = {str(src) + (" (Python)" if python else ""): measure(src, python)
                for src, python in srcs}
    ok = all(m["ok"] for m in measures.values())
    if args.json:
        print(json.dumps(measures, indent=1))
        return 0 if ok else 1
    for src, m in measures.items():
        report(src, m)
    return 0 if ok else 1


def report(src: str, m: dict) -> None:
    print(f"{src}: {m['functions']} functions, {m['ccn_over_15']} with CCN > {CCN_MAX} "
          f"({100 * m['ccn_over_15_share']:.1f} %, goal <= {100 * CCN_SHARE_MAX:.0f} %), "
          f"{len(m['long_functions'])} over {FUNCTION_LINES_MAX} lines, "
          f"{len(m['long_files'])} files over {FILE_LINES_MAX} lines (lizard {m['lizard']})")
    for f in m["complex"]:
        print(f"  CCN {f['ccn']:3d}  {f['file']}:{f['line']}: {f['name']}")
    for f in m["long_functions"]:
        print(f"  {f['lines']:4d} lines  {f['file']}:{f['line']}: {f['name']}")
    for f in m["long_files"]:
        print(f"  {f['lines']:5d} lines  {f['file']}")

if __name__ == "__main__":
    sys.exit(main())
