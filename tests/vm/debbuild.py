"""The checkout's Debian package for a foreign-architecture guest, built in that guest's
own root file system (the arm64 image's ``builder/``, which has debian/control's
Build-Depends) with dpkg-buildpackage, its binaries run by qemu-user-static through
binfmt_misc: the package is then built against exactly the libraries the guest has.

As ``make deb-package`` does for the host's package, a package newer than every file of
the checkout is used again.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from vmrunner import REPO, VMError, say


def _checkout_files() -> list[str]:
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f and (REPO / f).exists()]


def _newest_mtime(files: list[str]) -> float:
    return max((os.stat(REPO / f).st_mtime for f in files), default=0.0)


def build_in_root(root: Path, out_dir: Path, *, foreign: bool = True) -> Path:
    """Build irqres's .deb in the root file system ``root`` (a chroot, under a private
    mount namespace with its own /proc) and keep it in ``out_dir``; returns its path.
    ``foreign``: the root's binaries run under qemu-user (only what the progress says).

    Raises VMError naming the root and the build log's tail when the build fails. Two test
    sessions of one checkout (the suite's groups) build one at a time, and the second
    takes the first's package.
    """
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(out_dir.parent / f".{out_dir.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_in_root(root, out_dir, foreign)


def _build_in_root(root: Path, out_dir: Path, foreign: bool) -> Path:
    files = _checkout_files()
    debs = sorted(out_dir.glob("irqres_*.deb"))
    if len(debs) == 1 and debs[0].stat().st_mtime > _newest_mtime(files):
        say(f"{debs[0]}: up to date")
        return debs[0]
    if not (root / "usr" / "bin" / "dpkg-buildpackage").exists():
        raise VMError(f"{root}: no dpkg-buildpackage in the builder root (an image built "
                      "before the builder existed? remove it from the cache)")
    work = Path(tempfile.mkdtemp(prefix="irqres-deb-", dir=root / "tmp"))
    try:
        src = work / "irqres"
        src.mkdir()
        for f in files:
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, src / f, follow_symlinks=False)
        inner = f"/{work.relative_to(root)}/irqres"
        say(f"building the irqres package in {root}"
            + (" (under qemu-user: minutes)" if foreign else ""))
        script = ('mount -t proc proc "$1/proc" && exec chroot "$1" /bin/sh -c '
                  '"cd $2 && dpkg-buildpackage -b -us -uc"')
        proc = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(root), inner],
                              capture_output=True, text=True, check=False)
        built = sorted(work.glob("irqres_*.deb"))
        if proc.returncode != 0 or len(built) != 1:
            log = (proc.stdout + proc.stderr).strip()
            raise VMError(f"dpkg-buildpackage in {root} failed with status "
                          f"{proc.returncode}:\n{log[-3000:]}")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.mkdir(parents=True)
        deb = out_dir / built[0].name
        shutil.copy2(built[0], deb)
        return deb
    finally:
        shutil.rmtree(work, ignore_errors=True)
