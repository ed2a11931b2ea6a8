"""Helpers for scenario code running inside the PREEMPT_RT guest (Python 3.11: the stdlib,
and irqres.schedattr of the package under test for the scheduling syscalls).

The host serves requests on the guest's second serial port (/dev/ttyS1, or on arm64 a
virtio serial port): ``mark`` lines
show progress on the host, ``udp``/``tcp`` lines ask it for load towards this guest.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import termios
import threading
import time
import tty

OUT = "/payload/out"
CGROUP = "/sys/fs/cgroup"
PF_KTHREAD = 0x00200000
PF_WQ_WORKER = 0x00000020  # a workqueue's worker or rescuer: its CPUs follow its work

_ctl_fd: int | None = None
_ctl_lock = threading.Lock()


# The arm64 guest's board has one UART (the console): its control channel is a virtio
# serial port, which is no terminal.
CTL_PORTS = ("/dev/virtio-ports/irqres.ctl", "/dev/ttyS1")


def _ctl() -> int:
    global _ctl_fd
    if _ctl_fd is None:
        path = next((p for p in CTL_PORTS if os.path.exists(p)), CTL_PORTS[-1])
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        if os.isatty(fd):
            tty.setraw(fd)
            attrs = termios.tcgetattr(fd)
            attrs[3] &= ~termios.ECHO
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
        _ctl_fd = fd
    return _ctl_fd


def _send(line: str) -> None:
    os.write(_ctl(), line.replace("\n", " ").encode() + b"\n")


def mark(msg: str) -> None:
    """Show progress on the host and on the console."""
    print(f"irqres-vm: {msg}", flush=True)
    with _ctl_lock:
        _send(f"mark {msg}")


def request(line: str) -> list[str]:
    """Send one request to the host and wait for its reply; returns the reply's words."""
    with _ctl_lock:
        _send(line)
        fd = _ctl()
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = os.read(fd, 256)
            if not chunk:
                raise RuntimeError(f"host closed the control port during {line!r}")
            buf += chunk
    words = buf.decode().split()
    if not words or words[0] != "ok":
        raise RuntimeError(f"host refused {line!r}: {buf.decode().strip()}")
    return words[1:]


def write_result(result: dict) -> None:
    os.makedirs(OUT, exist_ok=True)
    tmp = os.path.join(OUT, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, os.path.join(OUT, "result.json"))
    os.sync()


def sh(cmd: str, *, check: bool = False, timeout: float = 120) -> dict:
    """Run a shell command; returns its status and output (for the host's assertions)."""
    p = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, timeout=timeout)
    r = {"cmd": cmd, "rc": p.returncode, "out": p.stdout[-20000:], "err": p.stderr[-4000:]}
    # the serial console is slow under emulation: only a glimpse of the output goes there
    print(f"$ {cmd} (rc={p.returncode}) {(p.stderr or p.stdout)[-300:]}", flush=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{cmd!r} failed with {p.returncode}: {p.stderr.strip()[-500:]}")
    return r


def read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def sched_attr(pid: int) -> dict | None:
    """sched_getattr(pid): policy name, priority and the deadline parameters in ns."""
    from irqres import schedattr  # the package under test (installed from the payload)

    try:
        s = schedattr.get(pid)
    except OSError:
        return None
    return {"policy": s.policy_name, "priority": s.priority, "runtime_ns": s.runtime_ns,
            "deadline_ns": s.deadline_ns, "period_ns": s.period_ns}


def sched_set_deadline(pid: int, runtime_ns: int, deadline_ns: int, period_ns: int) -> int:
    """sched_setattr(pid, SCHED_DEADLINE): 0, or the errno the kernel answered."""
    from irqres import schedattr

    return schedattr.set_attr(pid, schedattr.SCHED_DEADLINE, runtime_ns=runtime_ns,
                              deadline_ns=deadline_ns, period_ns=period_ns)


def sched_set_other(pid: int) -> int:
    """sched_setattr(pid, SCHED_OTHER, nice 0): 0 or the errno."""
    from irqres import schedattr

    return schedattr.set_attr(pid, schedattr.SCHED_OTHER)


SCHED_DEBUG = "/sys/kernel/debug/sched/debug"
SCHED_DIR = "/sys/kernel/debug/sched"
FAIR_SERVER = f"{SCHED_DIR}/fair_server"


def _server(path: str) -> dict:
    """One deadline server's cpuN/{runtime,period} in ns, by CPU."""
    found = {}
    for d in sorted(os.listdir(path)):
        r, p = read(f"{path}/{d}/runtime"), read(f"{path}/{d}/period")
        if d.startswith("cpu") and r is not None and p is not None:
            found[int(d[3:])] = {"runtime_ns": int(r), "period_ns": int(p)}
    return found


def kernel_dl_bw() -> dict:
    """The kernel's deadline bandwidth accounting, as integers in its unit (2^-20 CPU):
    per CPU the root domain's ``dl_bw->bw`` (limit per CPU) and ``dl_bw->total_bw`` (in
    use, servers included) from debugfs sched/debug, and each CPU's deadline servers from
    debugfs sched/<name>_server/cpuN/{runtime,period} in ns: ``servers`` by name (fair
    6.12+, ext 7.0+: every one the kernel shows), ``fair_server`` alone as before, and
    sched_ext's state (7.2+ reserves ext_server only while it is "enabled")."""
    cpus: dict[int, dict] = {}
    cpu = None
    for line in (read(SCHED_DEBUG) or "").splitlines():
        m = re.match(r"\s*dl_rq\[(\d+)\]:", line)
        if m:
            cpu = int(m.group(1))
            cpus[cpu] = {}
            continue
        m = re.match(r"\s*\.dl_bw->(bw|total_bw)\s*:\s*(-?\d+)", line)
        if m and cpu is not None:
            cpus[cpu][m.group(1)] = int(m.group(2))
    servers = {}
    if os.path.isdir(SCHED_DIR):
        for name in sorted(os.listdir(SCHED_DIR)):
            if name.endswith("_server") and os.path.isdir(f"{SCHED_DIR}/{name}"):
                servers[name] = {str(c): v for c, v in _server(f"{SCHED_DIR}/{name}").items()}
    fair = {c: v for c, v in servers.get("fair_server", {}).items()
            if v["runtime_ns"] and v["period_ns"]}
    return {"rd": {str(c): v for c, v in cpus.items()}, "fair_server": fair,
            "servers": servers, "sched_ext_state": read("/sys/kernel/sched_ext/state")}


def to_ratio(period_ns: int, runtime_ns: int) -> int:
    """The kernel's to_ratio(): bandwidth in 2^-20 CPU."""
    return (runtime_ns << 20) // period_ns if period_ns else 0


def kthreads(comm_re: str) -> list[tuple[int, re.Match]]:
    """Every kernel thread kthreadd made (PF_KTHREAD, parent 2) whose whole comm matches
    the regular expression ``comm_re``: its pid and the match."""
    found = []
    for entry in os.listdir("/proc"):
        stat = read(f"/proc/{entry}/stat") if entry.isdigit() else None
        if stat is None:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        m = re.fullmatch(comm_re, stat[stat.index("(") + 1 : stat.rindex(")")])
        if m and int(fields[1]) == 2 and int(fields[6]) & PF_KTHREAD:
            found.append((int(entry), m))
    return found


def thread_view(pid: int, comm: str) -> dict:
    """A thread's scheduling, cgroup and CPUs now."""
    return {"pid": pid, "comm": comm, "sched": sched_attr(pid), "cgroup": cgroup_of(pid),
            "cpus": cpus_allowed(pid)}


def irq_threads() -> list[dict]:
    """Every real IRQ thread: a kernel thread, child of kthreadd, named irq/<N>-..."""
    threads = [{**thread_view(pid, m.group(0)), "irq": int(m.group(1)),
                "secondary": bool(m.group(2))}
               for pid, m in kthreads(r"irq/(\d+)-(s-)?(.*)")]
    return sorted(threads, key=lambda t: (t["irq"], t["comm"]))


def last_cpu(pid: int) -> int | None:
    """The CPU a task last ran on (/proc/PID/stat, field 39)."""
    stat = read(f"/proc/{pid}/stat") or ""
    fields = stat.rpartition(")")[2].split()
    return int(fields[36]) if len(fields) > 36 else None


def cpus_allowed(pid: int) -> str | None:
    """The CPUs a thread may run on (Cpus_allowed_list), None when it is gone."""
    return _status_field(pid, "Cpus_allowed_list")


def _status_field(pid: int, key: str) -> str | None:
    for line in (read(f"/proc/{pid}/status") or "").splitlines():
        if line.startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    return None


def cgroup_of(pid: int) -> str | None:
    text = read(f"/proc/{pid}/cgroup")
    if not text:
        return None
    for line in text.splitlines():
        if line.startswith("0::"):
            return line[3:]
    return None


def thread(comm_re: str) -> dict | None:
    """The IRQ thread whose whole comm matches the regular expression ``comm_re``."""
    for t in irq_threads():
        if re.fullmatch(comm_re, t["comm"]):
            return t
    return None


def partitions() -> dict[str, dict]:
    """cgroup v2 groups directly under the root that are cpuset partitions."""
    found = {}
    for name in sorted(os.listdir(CGROUP)):
        path = os.path.join(CGROUP, name)
        part = read(os.path.join(path, "cpuset.cpus.partition"))
        if os.path.isdir(path) and part is not None and part.startswith("root"):
            found[name] = {"partition": part,
                           "cpus": read(os.path.join(path, "cpuset.cpus.effective")),
                           "procs": (read(os.path.join(path, "cgroup.procs")) or "").split()}
    return found


def wait_for(pred, timeout_s: float, step_s: float = 0.002):
    """Poll ``pred`` until it returns something truthy; returns (value, ns waited)."""
    t0 = time.monotonic_ns()
    deadline = t0 + int(timeout_s * 1e9)
    while True:
        v = pred()
        now = time.monotonic_ns()
        if v or now >= deadline:
            return v, now - t0
        time.sleep(step_s)


class Sink(threading.Thread):
    """Counts what arrives on a UDP port or on one TCP connection."""

    def __init__(self, proto: str, port: int):
        super().__init__(daemon=True)
        self.proto = proto
        self.packets = 0
        self.bytes = 0
        self.first_ns = 0
        self.last_ns = 0
        kind = socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM
        self.sock = socket.socket(socket.AF_INET, kind)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind(("0.0.0.0", port))
        if proto == "tcp":
            self.sock.listen(4)
        self.stop = False
        self.start()

    def _count(self, n: int) -> None:
        now = time.monotonic_ns()
        if not self.first_ns:
            self.first_ns = now
        self.last_ns = now
        self.packets += 1
        self.bytes += n

    def run(self) -> None:
        self.sock.settimeout(0.5)
        while not self.stop:
            try:
                if self.proto == "udp":
                    data = self.sock.recv(65536)
                    self._count(len(data))
                    continue
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(0.5)
                while not self.stop:
                    try:
                        data = conn.recv(1 << 16)
                    except (TimeoutError, OSError):
                        continue
                    if not data:
                        break
                    self._count(len(data))

    def close(self) -> dict:
        self.stop = True
        self.join(timeout=2)
        with contextlib.suppress(OSError):
            self.sock.close()
        return {"packets": self.packets, "bytes": self.bytes,
                "span_ns": self.last_ns - self.first_ns}


# ---- the scheduler state irqres can touch or disturb, and how two such states differ ----

SCHED_FEATURES = "/sys/kernel/debug/sched/features"
SCHED_DOMAINS = "/sys/kernel/debug/sched/domains"
# EEVDF's default slice (6.6+), which sched_getattr reports as a fair task's runtime
BASE_SLICE = "/sys/kernel/debug/sched/base_slice_ns"
# cgroups systemd makes and removes by itself (units starting and stopping): their coming
# and going is not irqres's; their attributes, while they exist on both sides, are compared
_SYSTEMD_UNIT = re.compile(r".*\.(service|scope|slice|socket|mount|swap|target)$")
_THREAD_KEYS = ("policy", "priority", "runtime_ns", "deadline_ns", "period_ns", "cgroup", "cpus")
_CGROUP_FILES = ("cgroup.subtree_control", "cgroup.type", "cpuset.cpus", "cpuset.cpus.effective",
                 "cpuset.cpus.partition", "cpuset.cpus.exclusive", "cpuset.mems",
                 "cpuset.mems.effective")


def _task_entry(pid: str, tid: str) -> dict | None:
    """One thread as the fingerprint records it, or None for a thread that ended while it
    was read (its /proc entry gone, or sched_getattr answering ESRCH after its stat was
    read: 6.12, CI, two udev workers that exited mid-read were recorded with no policy)."""
    base = f"/proc/{pid}/task/{tid}"
    stat = read(f"{base}/stat")
    if stat is None:
        return None
    attr = sched_attr(int(tid))
    if attr is None:
        return None
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    cgroup = next((line[3:] for line in (read(f"{base}/cgroup") or "").splitlines()
                   if line.startswith("0::")), None)
    cpus = next((line.split(":", 1)[1].strip() for line in (read(f"{base}/status") or "")
                 .splitlines() if line.startswith("Cpus_allowed_list:")), None)
    return {"comm": comm, "kthread": bool(int(fields[6]) & PF_KTHREAD), "start": int(fields[19]),
            "wq_worker": bool(int(fields[6]) & PF_WQ_WORKER),
            **attr, "cgroup": cgroup, "cpus": cpus}


def _threads_now() -> dict[str, dict]:
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{pid}/task"):
                entry = _task_entry(pid, tid)
                if entry is not None:
                    out[tid] = entry
    return out


def _cgroups_now() -> dict[str, dict]:
    groups = {}
    for path, dirs, _ in os.walk(CGROUP):
        rel = "/" + os.path.relpath(path, CGROUP).lstrip(".")
        groups[rel] = {f: read(os.path.join(path, f)) for f in _CGROUP_FILES
                       if os.path.exists(os.path.join(path, f))}
        dirs.sort()
    return groups


def _domains_now() -> dict[str, str]:
    """Each CPU's scheduling domains: their span (/proc/schedstat) and debugfs name and
    flags; a cpuset partition is a root domain of its own, so these show it."""
    out = {}
    cpu = None
    for line in (read("/proc/schedstat") or "").splitlines():
        words = line.split()
        if words and words[0].startswith("cpu"):
            cpu = words[0]
        elif words and words[0].startswith("domain") and cpu:
            out[f"{cpu}/{words[0]}/span"] = words[1]
    if os.path.isdir(SCHED_DOMAINS):
        for c in sorted(os.listdir(SCHED_DOMAINS)):
            for d in sorted(os.listdir(f"{SCHED_DOMAINS}/{c}")):
                for f in ("name", "flags"):
                    v = read(f"{SCHED_DOMAINS}/{c}/{d}/{f}")
                    if v is not None:
                        out[f"{c}/{d}/{f}"] = v
    return out


def _irq_actions_now() -> dict[str, list[str]]:
    """Each IRQ's handlers as /proc/irq/N/ lists them (a directory per action name)."""
    out: dict[str, list[str]] = {}
    for n in os.listdir("/proc/irq"):
        if n.isdigit():
            try:
                out[n] = sorted(e for e in os.listdir(f"/proc/irq/{n}")
                                if os.path.isdir(f"/proc/irq/{n}/{e}"))
            except OSError:
                continue
    return out


def _irq_affinity_now() -> dict[str, list[str | None]]:
    """Each IRQ's CPUs: [smp_affinity_list, effective_affinity_list] (None where absent)."""
    return {n: [(read(f"/proc/irq/{n}/smp_affinity_list") or "").strip() or None,
                (read(f"/proc/irq/{n}/effective_affinity_list") or "").strip() or None]
            for n in os.listdir("/proc/irq") if n.isdigit()}


def fingerprint(label: str) -> dict:
    """The scheduler state irqres can touch or disturb, as it is now: every thread's
    policy, priority, deadline parameters, cgroup and CPUs; every cgroup's cpuset
    (partition, effective CPUs) and controllers; the sched_* sysctls (rt_runtime); the
    kernel's deadline bandwidth per root domain and the fair servers; the scheduling
    domains; the scheduler's features."""
    threads, actions = _irq_view()
    return {"label": label, "t_ns": time.monotonic_ns(), "threads": threads,
            "online": read("/sys/devices/system/cpu/online"),
            "cgroups": _cgroups_now(), "domains": _domains_now(),
            "sysctl": {f: read(f"/proc/sys/kernel/{f}")
                       for f in sorted(os.listdir("/proc/sys/kernel")) if f.startswith("sched_")},
            "dl_bw": kernel_dl_bw(), "features": (read(SCHED_FEATURES) or "").split(),
            "base_slice_ns": read(BASE_SLICE), "irq_actions": actions,
            "irq_affinity": _irq_affinity_now()}


def _irq_threads(threads: dict[str, dict]) -> set[tuple[str, str]]:
    return {(tid, t["comm"]) for tid, t in threads.items() if t["comm"].startswith("irq/")}


def _irq_view(tries: int = 5) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Every thread and each IRQ's handlers, read as one view. The 8250 driver frees its
    IRQ at a port's last close and requests it again at the next open (systemd opens the
    console for each status line it prints, as during a unit's stop), which ends the IRQ
    thread and makes a new one: a read of the threads and a later read of the handlers
    could see the thread gone and the handler back. The threads are read again after the
    handlers, until their IRQ threads (tid and comm) are the same on both sides."""
    threads = _threads_now()
    for _ in range(tries):
        actions = _irq_actions_now()
        again = _threads_now()
        if _irq_threads(again) == _irq_threads(threads):
            return again, actions
        threads = again
    return threads, actions


def _irq_of(comm: str) -> tuple[str, str]:
    """(IRQ number, action name) of an IRQ thread's comm ("irq/11-eth0": "11", "eth0");
    ("", "") for any other thread."""
    if not comm.startswith("irq/"):
        return "", ""
    irq, _, name = comm[len("irq/"):].partition("-")
    return irq, name


def _irq_freed(comm: str, after: dict) -> bool:
    """An IRQ thread's handler is gone in ``after``: its device freed the IRQ (the 8250
    driver frees ttyS0's when the port's last user closes it, and requests it again at the
    next open), so the kernel ended the thread; not known for a fingerprint without
    ``irq_actions``."""
    irq, name = _irq_of(comm)
    actions = after.get("irq_actions")
    if actions is None or not irq.isdigit():
        return False
    return not any(a.startswith(name) for a in actions.get(irq, []))


def _thread_diff(before: dict, after: dict) -> list[str]:
    """Threads of ``before`` not as found in ``after``. The same thread (tid and start
    time) must match on every key. A thread gone is the end of its process, except an
    IRQ thread the kernel made anew (its comm again, another tid): it must match on all
    but its CPUs (the kernel's choice: every CPU until its first run, then its IRQ's); an
    IRQ thread whose handler its device freed meanwhile (``_irq_freed``) is gone too.
    Threads born since are not compared (they were not there to be disturbed). The CPUs
    of a workqueue's worker or rescuer (PF_WQ_WORKER) are not compared either: the kernel
    binds it to the CPU of each pool it works for (mm_percpu_wq's rescuer went from CPU 3
    to CPU 0 during one scenario) and irqres cannot keep them."""
    now = after["threads"]
    by_comm: dict[str, list[dict]] = {}
    for t in now.values():
        by_comm.setdefault(t["comm"], []).append(t)
    out = []
    for tid, was in sorted(before["threads"].items(), key=lambda kv: int(kv[0])):
        cur = now.get(tid)
        keys = _THREAD_KEYS
        if cur is None or cur["start"] != was["start"]:
            if not (was["kthread"] and was["comm"].startswith("irq/")):
                continue
            same = [t for t in by_comm.get(was["comm"], []) if t["kthread"]]
            if not same and _irq_freed(was["comm"], after):
                continue
            if len(same) != 1:
                out.append(f"thread {was['comm']} (tid {tid}) gone"
                           + (f", {len(same)} threads of that name now" if same else ""))
                continue
            cur, keys = same[0], _THREAD_KEYS[:-1]
        if was.get("wq_worker") or _follows_its_irq(cur, after):
            keys = tuple(k for k in keys if k != "cpus")
        diff = {k: (was.get(k), cur.get(k)) for k in keys if was.get(k) != cur.get(k)
                and not _default_slice(k, was, cur, after)}
        if diff:
            out.append(f"thread {was['comm']} (tid {tid}): "
                       + ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in diff.items()))
    return out


def _follows_its_irq(cur: dict, after: dict) -> bool:
    """An IRQ thread whose CPUs are now its IRQ's affinity (or effective affinity): the
    kernel sets them so at the thread's first wake-up after the IRQ's affinity changed,
    and the IRQ's affinity is the kernel's or the console's (7.3 with CPU 1 isolated: the
    serial console's irq/4-ttyS0 went from CPU 1 to 0-1 while a scenario took CPU 1
    offline). irqres never writes an IRQ's affinity; where it moves a thread, the
    thread's cgroup tells. Not known for a fingerprint without ``irq_affinity``."""
    lists = (after.get("irq_affinity") or {}).get(_irq_of(cur["comm"])[0]) or []
    return bool(cur.get("kthread")) and cur.get("cpus") in [c for c in lists if c]


def _default_slice(key: str, was: dict, cur: dict, after: dict) -> bool:
    """A fair task's runtime (its EEVDF slice, 6.12) that is now the kernel's default
    slice: the kernel rescales that default with the CPUs it counts (6.12 did so at the
    first root domain rebuild after boot), which is not irqres's to give back."""
    base = (after.get("base_slice_ns") or "").strip()
    return (key == "runtime_ns" and "deadline" not in (was.get("policy"), cur.get("policy"))
            and base.isdigit() and cur.get("runtime_ns") == int(base))


def _dict_diff(what: str, a: dict, b: dict) -> list[str]:
    return [f"{what} {k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b))
            if a.get(k) != b.get(k)]


def _servers_diff(bw_a: dict, bw_b: dict) -> list[str]:
    """Every deadline server's parameters, per CPU (fingerprints taken before every
    server was read have only the fair one)."""
    a = bw_a.get("servers", {"fair_server": bw_a["fair_server"]})
    b = bw_b.get("servers", {"fair_server": bw_b["fair_server"]})
    return [d for name in sorted(set(a) | set(b))
            for d in _dict_diff(f"{name} of CPU", a.get(name, {}), b.get(name, {}))]


def _cgroup_diff(before: dict, after: dict) -> list[str]:
    a, b = before["cgroups"], after["cgroups"]
    out = [f"cgroup {p} {'removed' if p in a else 'left'}" for p in sorted(set(a) ^ set(b))
           if not _SYSTEMD_UNIT.match(p.rsplit("/", 1)[-1])]
    for p in sorted(set(a) & set(b)):
        out += _dict_diff(f"cgroup {p}", a[p], b[p])
    return out


def fingerprint_diff(before: dict, after: dict) -> list[str]:
    """Every difference between two fingerprints that is irqres's to answer for, each
    named (empty: the state is as found)."""
    bw_a, bw_b = before["dl_bw"], after["dl_bw"]
    return (_thread_diff(before, after) + _cgroup_diff(before, after)
            + _dict_diff("sysctl", before["sysctl"], after["sysctl"])
            + _dict_diff("domain", before["domains"], after["domains"])
            + _dict_diff("root domain of CPU", bw_a["rd"], bw_b["rd"])
            + _servers_diff(bw_a, bw_b)
            + ([f"sched features {before['features']} -> {after['features']}"]
               if before["features"] != after["features"] else []))

