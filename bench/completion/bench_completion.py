"""TAB completion of `irqres`: the time of one key press, as bash's completion function
runs it (`_IRQRES_COMPLETE=bash_complete COMP_WORDS=... COMP_CWORD=... irqres`), a new
interpreter each time, for the command lines a user completes most.

usage: bench_completion.py [--runs N] [--irqres CMD] [--pythonpath DIR]
  --irqres      the command to time [this interpreter -m irqres]
  --pythonpath  put DIR first on PYTHONPATH [this checkout's analysis/; another
                checkout's, to compare]
Target names are completed from a stand-in irqresd (tests/python/fakes.py) on a socket in
a temporary directory, named by $IRQRES_SOCKET.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests" / "python"), str(REPO / "analysis")]

from fakes import FakeDaemon  # noqa: E402

# the command line typed so far (the last word is being completed)
KEYS = ["irqres ", "irqres st", "irqres status --", "irqres analyze --", "irqres simulate --",
        "irqres set-budget "]


def one(cmd: list[str], words: str, env: dict[str, str]) -> tuple[float, str]:
    full = {**env, "_IRQRES_COMPLETE": "bash_complete", "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split(" ")) - 1)}
    t = time.perf_counter()
    out = subprocess.run(cmd, env=full, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--irqres", default=f"{shlex.quote(sys.executable)} -m irqres")
    ap.add_argument("--pythonpath", default=str(REPO / "analysis"))
    args = ap.parse_args()
    cmd = shlex.split(args.irqres)
    with tempfile.TemporaryDirectory() as tmp:
        d = FakeDaemon(os.path.join(tmp, "irqresd.sock")).start()
        env = {**os.environ, "IRQRES_SOCKET": d.path}
        if args.pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.pythonpath,
                                                              env.get("PYTHONPATH")]))
        print(f"# {' '.join(cmd)}, {args.runs} runs per key, load average "
              f"{os.getloadavg()[0]:.2f}")
        print("| command line (TAB after it) | median | min | max | completions |")
        print("|---|---|---|---|---|")
        try:
            for words in KEYS:
                one(cmd, words, env)                       # warm the page cache
                times, out = [], ""
                for _ in range(args.runs):
                    t, out = one(cmd, words, env)
                    times.append(t)
                n = len([ln for ln in out.splitlines() if ln.strip()])
                print(f"| `{words}` | {1000 * statistics.median(times):.0f} ms | "
                      f"{1000 * min(times):.0f} ms | {1000 * max(times):.0f} ms | {n} |")
        finally:
            d.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
