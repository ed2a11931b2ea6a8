"""Helpers for scenario code running inside the PREEMPT_RT guest (Python 3.11: the stdlib,
and irqres.schedattr of the package under test for the scheduling syscalls).

The host serves requests on the guest's second serial port (/dev/ttyS1): ``mark`` lines
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

_ctl_fd: int | None = None
_ctl_lock = threading.Lock()


def _ctl() -> int:
    global _ctl_fd
    if _ctl_fd is None:
        fd = os.open("/dev/ttyS1", os.O_RDWR | os.O_NOCTTY)
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
FAIR_SERVER = "/sys/kernel/debug/sched/fair_server"


def kernel_dl_bw() -> dict:
    """The kernel's deadline bandwidth accounting, as integers in its unit (2^-20 CPU):
    per CPU the root domain's ``dl_bw->bw`` (limit per CPU) and ``dl_bw->total_bw`` (in
    use, servers included) from debugfs sched/debug, and each CPU's fair server (6.12+)
    from debugfs sched/fair_server/cpuN/{runtime,period} in ns."""
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
    if os.path.isdir(FAIR_SERVER):
        for d in sorted(os.listdir(FAIR_SERVER)):
            r, p = read(f"{FAIR_SERVER}/{d}/runtime"), read(f"{FAIR_SERVER}/{d}/period")
            if d.startswith("cpu") and r and p:
                servers[int(d[3:])] = {"runtime_ns": int(r), "period_ns": int(p)}
    return {"rd": {str(c): v for c, v in cpus.items()},
            "fair_server": {str(c): v for c, v in servers.items()}}


def to_ratio(period_ns: int, runtime_ns: int) -> int:
    """The kernel's to_ratio(): bandwidth in 2^-20 CPU."""
    return (runtime_ns << 20) // period_ns if period_ns else 0


def irq_threads() -> list[dict]:
    """Every real IRQ thread: a kernel thread, child of kthreadd, named irq/<N>-..."""
    threads = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = read(f"/proc/{entry}/stat")
        if stat is None:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        ppid, flags = int(fields[1]), int(fields[6])
        m = re.match(r"irq/(\d+)-(s-)?(.*)$", comm)
        if m and ppid == 2 and flags & PF_KTHREAD:
            pid = int(entry)
            threads.append({"pid": pid, "comm": comm, "irq": int(m.group(1)),
                            "secondary": bool(m.group(2)), "sched": sched_attr(pid),
                            "cgroup": cgroup_of(pid),
                            "cpus": cpus_allowed(pid)})
    return sorted(threads, key=lambda t: (t["irq"], t["comm"]))


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
