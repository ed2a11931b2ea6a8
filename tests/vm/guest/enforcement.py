"""Budget enforcement in the guest: the HRTICK_DL switch of ``enforcement: hrtick`` (on
while irqresd's reservations exist, given back on stop, after kill -9 by --restore), and
how far a reserved busy task overruns its budget with HRTICK_DL off and on."""

from __future__ import annotations

import json
import signal
import subprocess
import time

from vmguest import mark, read, sched_attr, sh, wait_for

FEATURES = "/sys/kernel/debug/sched/features"
STATE = "/run/irqres/state"
COMM = "hrbusy"

# A busy task that names itself, spins for `seconds` and reports the stretches it ran
# without a pause longer than `gap_ns` (its bursts: [start, end] in CLOCK_MONOTONIC ns).
# Reserved Q every T and throttled when Q is spent, each burst is what it got in one go.
BUSY = r"""
import json, sys, time
with open("/proc/self/comm", "w") as f:
    f.write(sys.argv[3])
secs, gap = float(sys.argv[1]), int(sys.argv[2])
now = time.monotonic_ns
end = now() + int(secs * 1e9)
bursts = []
start = last = now()
while last < end:
    t = now()
    if t - last > gap:
        bursts.append((start, last))
        start = t
    last = t
bursts.append((start, last))
print(json.dumps(bursts))
"""


def _profile(path: str, enforcement: str, runtime: str, period: str) -> str:
    with open(path, "w") as f:
        f.write(f"version: 1\nenforcement: {enforcement}\ntargets:\n  - name: busy\n"
                f"    task:\n      comm: {COMM}\n    runtime: {runtime}\n"
                f"    period: {period}\n")
    return path


def _hrtick_dl() -> bool | None:
    text = read(FEATURES)
    if text is None:
        return None
    words = text.split()
    return True if "HRTICK_DL" in words else False if "NO_HRTICK_DL" in words else None


def _busy(seconds: float, gap_ns: int) -> subprocess.Popen:
    p = subprocess.Popen(["python3", "-c", BUSY, str(seconds), str(gap_ns), COMM],
                         stdout=subprocess.PIPE, text=True)
    wait_for(lambda: read(f"/proc/{p.pid}/comm") == COMM, 10, 0.01)
    return p


def _reserved(pid: int, bound_s: float = 20) -> bool:
    got, _ = wait_for(lambda: (sched_attr(pid) or {}).get("policy") == "deadline", bound_s,
                      0.02)
    return bool(got)


def _facts(label: str, **more) -> dict:
    """HRTICK_DL, the state file and what it records now."""
    return {"label": label, "hrtick_dl": _hrtick_dl(), "features": read(FEATURES),
            "state": read(STATE), **more}


def _daemon(profile: str) -> subprocess.Popen:
    return subprocess.Popen(["irqresd", "-p", profile], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _status() -> dict | None:
    r = sh("irqres status --json")
    try:
        return json.loads(r["out"])
    except ValueError:
        return None


def scenario_enforcement_switch(runtime: str, period: str) -> dict:
    """enforcement: hrtick in the guest: dry run (nothing changed), running, stop, kill -9
    and --restore, each with HRTICK_DL as the kernel shows it."""
    hr = _profile("/tmp/hrtick.yaml", "hrtick", runtime, period)
    snaps = [_facts("boot")]
    busy = _busy(600, 10**9)
    dry = sh(f"irqresd --dry-run --json -p {hr}")
    snaps.append(_facts("after dry-run", dry=dry))

    d = _daemon(hr)
    snaps.append(_facts("running", reserved=_reserved(busy.pid), status=_status(),
                        sched=sched_attr(busy.pid)))
    d.send_signal(signal.SIGTERM)
    _, err = d.communicate(timeout=60)
    snaps.append(_facts("after stop", rc=d.returncode, log=err[-4000:],
                        sched=sched_attr(busy.pid)))

    d = _daemon(hr)
    reserved = _reserved(busy.pid)
    mark(f"enforcement: kill -9 irqresd (pid {d.pid})")
    d.send_signal(signal.SIGKILL)
    d.wait(timeout=30)
    snaps.append(_facts("after kill -9", reserved=reserved, sched=sched_attr(busy.pid)))
    restore = sh("irqresd --restore")
    snaps.append(_facts("after --restore", restore=restore, sched=sched_attr(busy.pid)))
    busy.kill()
    busy.wait()
    return {"snapshots": snaps}


def _bursts(seconds: float, gap_ns: int, runtime_ns: int, period_ns: int,
            enforcement: str) -> dict:
    """One phase's bursts, measured by a busy task that reports them itself."""
    prof = _profile(f"/tmp/{enforcement}.yaml", enforcement, f"{runtime_ns}ns",
                    f"{period_ns}ns")
    settle = 2.0
    busy = _busy(seconds + settle, gap_ns)
    once = sh(f"irqresd --once -p {prof}")
    ok = _reserved(busy.pid, 10)
    t0 = time.monotonic_ns() + int(settle * 1e9) // 2
    hrtick = _hrtick_dl()
    out, _ = busy.communicate(timeout=seconds + 120)
    restore = sh("irqresd --restore")
    runs = [e - s for s, e in json.loads(out or "[]") if s >= t0]
    return {"enforcement": enforcement, "reserved": ok, "hrtick_dl": hrtick,
            "once_rc": once["rc"], "once_err": once["err"][-1000:],
            "restore_rc": restore["rc"], "after": _hrtick_dl(), "bursts_ns": runs}


def scenario_enforcement_overrun(runtime_ns: int, period_ns: int, seconds: float,
                                 repeats: int, gap_ns: int) -> dict:
    """How long a reserved busy task runs in one go, HRTICK_DL off (enforcement: keep)
    and on (enforcement: hrtick), alternating in one boot. The irqresd.service a testbed
    boots with is stopped first (a no-op where none runs): ``--once`` and ``--restore``
    own the state file here."""
    sh("systemctl stop irqresd.service", timeout=120)
    phases = []
    for k in range(repeats):
        for enforcement in ("keep", "hrtick"):
            mark(f"enforcement overrun: run {k + 1}/{repeats}, {enforcement}")
            phases.append(_bursts(seconds, gap_ns, runtime_ns, period_ns, enforcement))
    return {"phases": phases, "before": _facts("end"),
            "config_hz": sh("grep -E '^CONFIG_(HZ|SCHED_HRTICK|HIGH_RES_TIMERS)=' "
                            "/boot/config-$(uname -r)")["out"]}
