"""Build the native trace reader, ``irqres._tracereader``, against libtracecmd.

Everything else about the package is in pyproject.toml; this file only exists because
a C extension needs its compiler and linker flags, which come from pkg-config.
"""

import shlex
import subprocess

from setuptools import Extension, setup


def pkg_config(*args: str) -> list[str]:
    try:
        out = subprocess.run(
            ["pkg-config", *args, "libtracecmd"], check=True, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(
            "irqres: building the trace reader needs libtracecmd and pkg-config "
            "(Debian: apt-get install libtracecmd-dev pkg-config; or run "
            f"scripts/install-deps.sh): {exc}"
        ) from exc
    return shlex.split(out)


#: the trace reader's C files: the module, then one per concern (see _tracereader.c)
TRACE = "analysis/irqres/trace"
SOURCES = ["_tracereader", "input", "decode", "columns", "selection", "parallel", "merge",
           "pages"]
#: the daemon's C files the reader shares (one home per rule: the IRQ thread name)
DAEMON = "daemon/src"
SHARED = ["irqname"]

flags = pkg_config("--cflags")
libs = pkg_config("--libs")

setup(
    ext_modules=[
        Extension(
            "irqres._tracereader",
            sources=[f"{TRACE}/{name}.c" for name in SOURCES]
            + [f"{DAEMON}/{name}.c" for name in SHARED],
            depends=[f"{TRACE}/{name}.h" for name in SOURCES[1:]]
            + [f"{DAEMON}/{name}.h" for name in SHARED],
            include_dirs=[DAEMON] + [f[2:] for f in flags if f.startswith("-I")],
            extra_compile_args=[f for f in flags if not f.startswith("-I")]
            + ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
               "-Wno-missing-field-initializers"],
            libraries=[f[2:] for f in libs if f.startswith("-l")],
            library_dirs=[f[2:] for f in libs if f.startswith("-L")],
        )
    ],
)
