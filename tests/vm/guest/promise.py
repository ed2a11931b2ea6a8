"""Guest side of the promise checked closed loop (tests/vm/test_promise.py).

For a timer job task (tests/data/timer_job.py, in /payload/extra) and for the NIC thread
irq/N-eth0 under a steady UDP flood made inside the guest (two e1000s on a QEMU hub, the
sender in namespace ``snd``, see seeds.py): record with the thread at its own policy,
`irqres analyze` for the recommendation, put it in force with irqresd, record again under
it and let `irqres analyze --under Q,T` report what the thread achieved. Everything the
host asserts on is measured in guest time.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

from seeds import NIC_THREAD, apply_retrying, hub_setup, nic_fifo50, nic_reserved
from vmguest import OUT, mark, read, sh, thread, wait_for

JOB = "/payload/extra/timer_job.py"
PROFILE = "/etc/irqres/profile.yaml"
#: the events `irqres analyze` reads, the kernel's charge included
EVENTS = ("-e irq:irq_handler_entry -e irq:irq_handler_exit -e sched:sched_switch "
          "-e sched:sched_migrate_task -e sched:sched_waking -e sched:sched_wakeup "
          "-e sched:sched_stat_runtime")


def _analyze(trace: str, select: str, args: str) -> dict:
    """`irqres analyze TRACE SELECT ARGS --json`: the one thread's report, or the error."""
    out = trace[:-4] + ".json"
    r = sh(f"irqres analyze {trace} {select} {args} --json > {out}", timeout=3600)
    if r["rc"] != 0:
        return {"error": r["err"][-2000:]}
    threads = json.loads(read(out) or "{}").get("threads", [])
    if len(threads) != 1:
        return {"error": f"{len(threads)} threads in {out}: "
                         f"{[t['comm'] for t in threads]}"}
    return threads[0]


def _summary(th: dict) -> dict:
    """What the host needs of a thread's report: the recommendation, the promise, the
    execution figures and the problem or note, if any."""
    if "error" in th:
        return th
    rec = th.get("recommendation") or {}
    return {"best": rec.get("best"), "kernel": rec.get("kernel"),
            "max_slices": rec.get("max_slices"), "deadline_ns": th.get("deadline_ns"),
            "promise": th.get("promise"), "execution": th.get("execution"),
            "problem": th.get("problem"), "note": th.get("note"),
            "warnings": th.get("warnings"), "profile": th.get("profile"),
            "activations": (th.get("stats") or {}).get("activations")}


def _job(tag: str, period_us: int, work_us: int, count: int, reserved: bool = False,
         profile: str | None = None) -> dict:
    """Record the timer job. ``reserved``: the job waits until irqresd has made it
    SCHED_DEADLINE before its first job; ``profile`` is then applied once the job has
    its name (a task target must match a running thread when it is applied). With the
    profile already in force, irqresd may have reserved the new job before the apply,
    which then answers that the target matches no thread: whether the job was reserved
    is the job's exit status (it exits with 1 when not reserved within 60 s)."""
    trace, resp = f"{OUT}/{tag}.dat", f"{OUT}/{tag}.resp"
    wait = " --wait-deadline 60" if reserved else ""
    cmd = (f"irqres record -q -o {trace} --buffer-kb 16384 -- python3 {JOB} --period-us "
           f"{period_us} --work-us {work_us} --count {count} --responses-out {resp}{wait}")
    rec = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    out: dict = {"trace": trace}
    if profile:
        wait_for(lambda: _running("timer-job") or rec.poll() is not None, 120, 0.05)
        out["apply"], out["refusals"] = apply_retrying(profile)
    text, _ = rec.communicate(timeout=3600)
    out["record"] = {"cmd": cmd, "rc": rec.returncode, "out": text[-2000:]}
    resp_text = read(resp)
    if resp_text is not None:
        out["responses"] = [int(x) for x in resp_text.split()]
    return out


def _running(comm: str) -> bool:
    """Whether a process named ``comm`` runs."""
    return any((read(f"/proc/{p}/comm") or "").strip() == comm
               for p in os.listdir("/proc") if p.isdigit())


def _task_profile(best: dict, tag: str) -> str:
    path = f"{OUT}/{tag}.yaml"
    with open(path, "w") as fh:
        fh.write(f"version: 1\ntargets:\n  - name: timer-job\n    task: {{comm: timer-job}}\n"
                 f"    runtime: {best['runtime_ns']}ns\n    period: {best['period_ns']}ns\n")
    return path


def _task_case(period_us: int, work_us: int, count: int, runs: int) -> dict:
    name = f"job{work_us}us"
    d = f"{period_us}us"
    mark(f"promise: {name} every {period_us} us, recording it free")
    free = _job(f"{name}-free", period_us, work_us, count)
    rec = _summary(_analyze(free["trace"], "--task timer-job", f"--deadline {d}"))
    case = {"period_us": period_us, "work_us": work_us, "count": count, "free": free,
            "recommended": rec, "runs": []}
    best = rec.get("best")
    if not best:
        return case
    q, t = best["runtime_ns"], best["period_ns"]
    profile = _task_profile(best, name)
    for run in range(runs):
        mark(f"promise: {name} under Q {q} ns every {t} ns, run {run}")
        got = _job(f"{name}-run{run}", period_us, work_us, count, True, profile)
        got["under"] = _summary(_analyze(got["trace"], "--task timer-job",
                                         f"--deadline {d} --under {q}ns,{t}ns"))
        case["runs"].append(got)
    case["restore"] = sh(f"irqres apply {PROFILE}", timeout=120)
    # the first run under the reservation as the probe of `analyze --calibrate`: what it
    # makes of the free trace, or why it refuses (docs/analysis.md)
    case["calibrated"] = _summary(_analyze(free["trace"], "--task timer-job",
                                           f"--deadline {d} --calibrate "
                                           f"{case['runs'][0]['trace']}"))
    return case


def _nic_record(tag: str, setup: dict, flood: dict) -> dict:
    trace = f"{OUT}/{tag}.dat"
    rec = sh(f"trace-cmd record -q -b 16384 {EVENTS} -o {trace} -- "
             f"ip netns exec snd chrt -f 90 taskset -c {setup['sender_cpu']} "
             f"/payload/extra/seedload send 10.0.2.15 {flood['port']} {flood['period_ns']} "
             f"{flood['count']} {flood['size']}", timeout=3600)
    return {"record": rec, "trace": trace}


def _nic_case(flood: dict, runs: int) -> dict:
    setup = hub_setup()
    nic_fifo50()
    mark(f"promise: NIC under a flood every {flood['period_ns']} ns, recording it free")
    free = _nic_record("nic-free", setup, flood)
    rec = _summary(_analyze(free["trace"], f"--thread '{flood['thread']}'",
                            flood.get("analyze", "")))
    case = {"flood": flood, "setup": setup, "free": free, "recommended": rec, "runs": []}
    best = rec.get("best")
    if not best:
        return case
    q, t, d = best["runtime_ns"], best["period_ns"], rec["deadline_ns"]
    case["thread"] = nic_reserved(q, t)
    for run in range(runs):
        mark(f"promise: NIC under Q {q} ns every {t} ns, run {run}")
        got = _nic_record(f"nic-run{run}", setup, flood)
        got["under"] = _summary(_analyze(got["trace"], f"--thread '{flood['thread']}'",
                                         f"--deadline {d}ns --under {q}ns,{t}ns"))
        case["runs"].append(got)
    case["thread_after"] = thread(NIC_THREAD)
    return case


def scenario_promise(jobs: list[list[int]], runs: int, nic: dict | None = None) -> dict:
    """Each job (period_us, work_us, count) and then the NIC: recommend, apply, check
    ``runs`` times."""
    t0 = time.monotonic_ns()
    out: dict = {"features": read("/sys/kernel/debug/sched/features"),
                 "release": os.uname().release, "cases": []}
    for period_us, work_us, count in jobs:
        out["cases"].append(_task_case(period_us, work_us, count, runs))
    if nic:
        out["nic"] = _nic_case(nic, runs)
    out["guest_s"] = (time.monotonic_ns() - t0) / 1e9
    return out
