"""What QEMU says of a guest that is about to be killed, through its QMP socket.

A guest that neither powers off nor prints an RCU stall or an oops leaves only its
console, which stops at whatever it printed last. Before vmrunner kills such a guest it
asks QEMU for its run state and, twice, for every vCPU's registers: the program counter,
the privilege level (x86 CPL, arm64 EL) and, on x86, whether the vCPU is halted (HLT=1:
idle, waiting for an interrupt). Vcpus halted in both samples are a guest that sleeps on
something that never comes; a kernel program counter that moves with HLT=0 is one that
spins; no answer is QEMU itself stuck. Standard library only; never raises.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

# one vCPU's block of ``info registers -a``: "CPU#0" then its registers
_CPU = re.compile(r"^CPU#(\d+)", re.M)
# the fields kept, as printed: x86's program counter (RIP, or EIP outside long mode),
# privilege level and halt state; arm64's program counter and exception level (EL1h)
_FIELDS = [re.compile(rx) for rx in (r"\b(?:RIP|EIP|PC)=[0-9a-f]+", r"\bCPL=\d",
                                     r"\bHLT=\d", r"\bEL\d[th]\b")]


class _Qmp:
    """One QMP conversation: the greeting, capabilities, then commands one at a time;
    asynchronous events between replies are skipped."""

    def __init__(self, path: Path, timeout_s: float):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        self.sock.connect(str(path))
        self.buf = b""
        self._reply("QMP")
        self.run("qmp_capabilities")

    def _reply(self, key: str = "return") -> dict:
        while True:
            while b"\n" not in self.buf:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("QMP socket closed")
                self.buf += chunk
            line, _, self.buf = self.buf.partition(b"\n")
            msg = json.loads(line)
            if key in msg or "error" in msg:
                return msg

    def run(self, command: str, **arguments) -> object:
        msg = {"execute": command, **({"arguments": arguments} if arguments else {})}
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        reply = self._reply()
        if "error" in reply:
            raise RuntimeError(f"{command}: {reply['error'].get('desc', reply['error'])}")
        return reply["return"]

    def close(self) -> None:
        self.sock.close()


def vcpus(registers: str) -> list[str]:
    """Each vCPU of ``info registers -a`` output, as "cpuN RIP=... CPL=... HLT=..." (the
    fields its architecture prints)."""
    starts = [(m.start(), m.group(1)) for m in _CPU.finditer(registers)]
    out = []
    for i, (at, n) in enumerate(starts):
        block = registers[at:starts[i + 1][0] if i + 1 < len(starts) else len(registers)]
        fields = [m.group(0) for rx in _FIELDS if (m := rx.search(block))]
        out.append(f"cpu{n} " + " ".join(fields))
    return out


def qemu_state(path: Path, samples: int = 2, gap_s: float = 1.0,
               timeout_s: float = 5.0) -> str:
    """One line: QEMU's run state and ``samples`` samples of its vCPUs ``gap_s`` apart,
    or why QEMU could not say (no socket, no answer within ``timeout_s``)."""
    try:
        qmp = _Qmp(path, timeout_s)
    except (OSError, ValueError, RuntimeError) as err:
        return f"QEMU did not answer on {path.name}: {err}"
    try:
        status = qmp.run("query-status")
        parts = [f"QEMU status {status.get('status')}"]
        for k in range(samples):
            if k:
                time.sleep(gap_s)
            regs = qmp.run("human-monitor-command", **{"command-line": "info registers -a"})
            parts.append(f"sample {k + 1}: " + ", ".join(vcpus(str(regs)) or ["no vCPU"]))
        return "; ".join(parts)
    except (OSError, ValueError, RuntimeError) as err:
        return f"QEMU stopped answering on {path.name}: {err}"
    finally:
        qmp.close()
