"""Client of irqresd's control socket (docs/protocol.md), and the way to find irqresd.

One request is one line of words; each gets one JSON reply line with ``"ok"``. A failed
request raises :class:`irqres.errors.DaemonError` carrying the daemon's own message; a
daemon that is not running, refuses the caller or does not answer raises it too, with a
message that says which and what to do.

Every wait is bounded: the connection and each whole request (sending it and reading its
reply line, however slowly the bytes come) take at most ``timeout``. A reply that is not
one JSON object, that ends before its newline or that is longer than :data:`REPLY_MAX`
is refused with an error naming the socket and the request, and so is a reply that lacks
a field its request's command uses, has one of another type (:func:`check_reply`, after
docs/json.md), or a ``schema_version`` newer than this client knows (a member changed its
meaning, type or unit). A caller that must stop at
once (a signal, the end of a run) gives a ``cancel_fd`` that turns readable then, or a
``deadline_ns``: a request waiting when either comes raises :class:`RequestCancelled`.
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import socket
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DaemonError
from .jsonout import SCHEMA_VERSION, VERSION_KEY
from .units import format_duration

DEFAULT_RUN_DIR = "/run/irqres"
SOCKET_NAME = "irqresd.sock"        # irqresd's socket in its run directory
DEFAULT_SOCKET = f"{DEFAULT_RUN_DIR}/{SOCKET_NAME}"
SOCKET_ENV = "IRQRES_SOCKET"
RUN_DIR_ENV = "IRQRES_RUN_DIR"
IRQRESD_ENV = "IRQRESD"
REQUEST_MAX = 4096          # bytes per request line, including the newline
BODY_MAX = 1 << 20          # bytes of profile text after a plan/apply line
REPLY_MAX = 16 * 1024 * 1024  # a reply longer than this is treated as broken
#: irqresd's exit code for a bad profile or option (daemon.h EXIT_USAGE: its -EINVAL);
#: 1 is a refusal (the kernel will not accept it)
IRQRESD_EXIT_USAGE = 2


class DaemonUnreachable(DaemonError):
    """The connection to irqresd failed, timed out or broke (not a refusal by irqresd)."""


class DaemonNotRunning(DaemonUnreachable):
    """No irqresd listens on the socket (it does not exist or refuses connections)."""


class RequestCancelled(DaemonError):
    """A request given up unanswered because the caller's ``cancel_fd`` turned readable
    or its ``deadline_ns`` passed (the connection is closed: the reply may still come)."""


def socket_path(explicit: str | os.PathLike[str] | None = None) -> str:
    """The socket to use: ``explicit``, else ``$IRQRES_SOCKET``, else the default."""
    if explicit:
        return os.fspath(explicit)
    return os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET


@dataclass(frozen=True)
class Endpoint:
    """The irqresd a command was told to use: its socket, and its run directory (state
    file DIR/state), where ``irqresd --status/--once/--restore`` work without a daemon.

    A socket the user named (``--socket``, ``$IRQRES_SOCKET``) is that daemon or an
    error: :attr:`fallback` is false then, unless a run directory was named as well.
    """

    socket: str
    run_dir: str
    socket_named: bool = False
    run_dir_named: bool = False

    @property
    def fallback(self) -> bool:
        """May a command act on the run directory (irqresd --once, --restore) when no
        daemon answers on the socket?"""
        return self.run_dir_named or not self.socket_named

    @property
    def state_file(self) -> str:
        return os.path.join(self.run_dir, "state")

    def describe(self) -> str:
        """Where it looked, for messages: the socket, and the run directory when it is
        not the socket's own."""
        if os.path.dirname(self.socket) == self.run_dir.rstrip("/"):
            return self.socket
        return f"{self.socket} (run directory {self.run_dir})"

    def as_json(self) -> dict[str, str]:
        return {"socket": self.socket, "run_dir": self.run_dir}


def endpoint(socket_: str | os.PathLike[str] | None = None,
             run_dir: str | os.PathLike[str] | None = None) -> Endpoint:
    """Resolve the daemon to use: ``socket_`` else ``$IRQRES_SOCKET``; ``run_dir`` else
    ``$IRQRES_RUN_DIR``. A named run directory alone gives its socket (DIR/irqresd.sock);
    a named socket alone gives the run directory it lies in (irqresd's own layout)."""
    sock = os.fspath(socket_) if socket_ else os.environ.get(SOCKET_ENV) or None
    run = os.fspath(run_dir) if run_dir else os.environ.get(RUN_DIR_ENV) or None
    if run is not None:
        run = os.path.abspath(run)
    if sock is not None:
        sock = os.path.abspath(sock)
    return Endpoint(
        socket=sock or os.path.join(run or DEFAULT_RUN_DIR, SOCKET_NAME),
        run_dir=run or (os.path.dirname(sock) if sock else DEFAULT_RUN_DIR),
        socket_named=sock is not None, run_dir_named=run is not None)


# -- what a reply must hold ----------------------------------------------------------
# A spec is a type name ("int", "num", "str", "bool", "null", "any"), a tuple of them (any
# one), a dict (an object: its members' specs; a key ending in "?" may be left out) or a
# one-item list (an array of that spec). The specs name the members the commands use,
# with their types from docs/json.md; a member not named is not looked at.
Spec = Any

_KINDS: dict[str, tuple[str, Any]] = {
    "int": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "num": ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v)),
    "str": ("a string", lambda v: isinstance(v, str)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "null": ("null", lambda v: v is None),
    "any": ("anything", lambda v: True),
}
_JSON_TYPES = ((bool, "a boolean"), (int, "an integer"), (float, "a number"),
               (str, "a string"), (list, "an array"), (dict, "an object"))


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    return next((name for t, name in _JSON_TYPES if isinstance(value, t)), "a value")


def _mismatch(value: object, spec: Spec, where: str) -> str | None:
    """Why ``value`` (the member ``where``) does not match ``spec``; None when it does."""
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return f"field \"{where}\" is {_json_type(value)}, not an object"
        for key, sub in spec.items():
            name = key.rstrip("?")
            path = f"{where}.{name}" if where else name
            if name not in value:
                if key.endswith("?"):
                    continue
                return f"it lacks the field \"{path}\""
            why = _mismatch(value[name], sub, path)
            if why:
                return why
        return None
    if isinstance(spec, list):
        if not isinstance(value, list):
            return f"field \"{where}\" is {_json_type(value)}, not an array"
        for i, item in enumerate(value):
            why = _mismatch(item, spec[0], f"{where}[{i}]")
            if why:
                return why
        return None
    if isinstance(spec, tuple):       # any one of them: the reason of the one of its type
        whys = [_mismatch(value, alt, where) for alt in spec]
        if None in whys:
            return None
        for alt, why in zip(spec, whys, strict=True):
            if isinstance(alt, dict | list) and isinstance(value, type(alt)):
                return why
        want = " or ".join(_KINDS[alt][0] if isinstance(alt, str) else
                           "an object" if isinstance(alt, dict) else "an array"
                           for alt in spec)
    elif _KINDS[spec][1](value):
        return None
    else:
        want = _KINDS[spec][0]
    shown = json.dumps(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"field \"{where}\" is {_json_type(value)} ({shown}), not {want}"


def check_reply(reply: dict[str, Any], spec: Spec, what: str, path: str) -> dict[str, Any]:
    """``reply`` when it matches ``spec``; else a :class:`DaemonError` naming the socket
    ``path``, the request ``what`` and the missing or bad field."""
    why = _mismatch(reply, spec, "")
    if why:
        raise DaemonError(f"irqresd ({path}): reply to {what}: {why}")
    return reply


_NS = ("int", "null")       # a duration in ns, or null: not set / not known
_SERVED = {"pid?": "int", "comm?": "str", "policy?": "str", "priority?": ("int", "null")}
_THREAD = {"pid": "int", "comm?": "str", "cpus?": ("str", "null"), "policy?": "str",
           "runtime_ns?": _NS, "deadline_ns?": _NS, "period_ns?": _NS,
           "orig_policy?": ("str", "null"), "orig_priority?": ("int", "null"),
           "cpuset?": ("str", "null"), "drift?": ("str", "null")}
_WAITING = {"pid": "int", "comm?": "str", "cpuset?": ("str", "null"), "waiting_ns?": _NS,
            "reason?": ("str", "null")}
_TARGET = {"name": "str", "kind?": ("str", "null"), "mode?": ("str", "null"),
           "runtime_ns?": _NS, "deadline_ns?": _NS, "period_ns?": _NS,
           "adaptive?": ("null", {"sample_ns?": _NS}),
           "threads?": ("null", [_THREAD]), "waiting?": ("null", [_WAITING]),
           "serves?": ("null", [_SERVED]),
           "coupling?": ("null", {"priority?": ("int", "null"), "threads?": [_SERVED]})}
_ENFORCEMENT_NOW = {"mode?": "str", "hz?": ("int", "null"), "overrun_max_ns?": _NS,
                    "hrtick_dl?": ("bool", "null"), "held?": "bool", "requested?": "bool"}
#: the members of each reply the commands use (docs/json.md, docs/protocol.md)
STATUS_SPEC = {"pid": "int", "profile?": ("str", "null"),
               "configured_profile?": ("str", "null"), "admission_control?": "str",
               "enforcement?": ("null", _ENFORCEMENT_NOW), "targets": [_TARGET]}
STATS_SPEC = {"time_ns?": "int", "threads": [{
    "pid": "int", "comm?": "str", "target?": ("str", "null"), "irqs?": ("null", ["int"]),
    "irq_count?": ("int", "null"), "policy?": "str", "runtime_ns?": _NS,
    "deadline_ns?": _NS, "period_ns?": _NS, "cpu_time_ns?": _NS, "wait_time_ns?": _NS,
    "timeslices?": ("int", "null"), "voluntary_switches?": ("int", "null"),
    "involuntary_switches?": ("int", "null")}]}
PLAN_SPEC = {"profile?": ("str", "null"), "feasible": "bool", "summary?": "str",
             "items": [{"pid?": "int", "comm?": "str", "bw?": "num", "verdict?": "str",
                        "runtime_ns?": _NS, "deadline_ns?": _NS, "period_ns?": _NS}],
             "domains?": [{"capacity?": ("num", "null"), "existing_bw?": "num",
                           "new_bw?": "num", "total_bw?": "num", "ok?": "bool"}],
             "sources?": "str", "enforcement?": ("null", {"text?": "str"}),
             "warnings?": ["any"], "errors?": ["any"]}
APPLY_SPEC = {"plan": PLAN_SPEC, "waiting?": ("null", [{"pid?": "int", "comm?": "str",
                                                        "partition?": ("str", "null")}])}
VERIFY_SPEC = {"profile": "str", "consistent?": "bool", "checked": "int",
               "by_set_budget?": "int", "differences": ["str"],
               "serves?": ("null", [{"target?": "str", "threads?": ("null", [_SERVED])}])}
SET_BUDGET_SPEC = {"target": "str", "runtime_ns": "int", "period_ns": "int",
                   "deadline_ns": "int", "deadline_scaled?": "bool",
                   "old_deadline_ns?": "int", "pids": ["int"]}
RESTORE_SPEC = {"restored": "int"}


class Client:
    """A connection to irqresd. Use as a context manager, or call :meth:`close`.

    Parameters
    ----------
    path
        Socket path; see :func:`socket_path` for the default.
    timeout
        Seconds to wait for the connection, and for each request from its sending to
        the end of its reply line.
    cancel_fd
        A file descriptor that turns readable when waiting must stop (a self-pipe a
        signal handler writes to): a request waiting then raises :class:`RequestCancelled`.
    deadline_ns
        A ``time.monotonic_ns()`` instant no request waits past (it raises
        :class:`RequestCancelled` then); None: only ``timeout`` bounds the waits.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, timeout: float = 5.0,
                 cancel_fd: int | None = None, deadline_ns: int | None = None):
        if not timeout > 0:
            raise DaemonError(f"irqresd client: timeout {timeout!r} s is not positive")
        self.path = socket_path(path)
        self.timeout = timeout
        self.cancel_fd = cancel_fd
        self.deadline_ns = deadline_ns
        self._sock: socket.socket | None = None
        self._buf = b""

    # -- connection -----------------------------------------------------------------
    def connect(self) -> Client:
        """Connect now (requests connect on demand too)."""
        if self._sock is not None:
            return self
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            sock.close()
            raise DaemonNotRunning(
                f"irqresd is not running: {self.path}: {exc.strerror or exc} "
                "(start it with `systemctl start irqresd` or `irqresd -p PROFILE`, "
                "or name its socket with --socket / $IRQRES_SOCKET)"
            ) from exc
        except PermissionError as exc:
            sock.close()
            raise DaemonError(
                f"irqresd socket {self.path}: permission denied: irqresd answers root "
                "and its own user only"
            ) from exc
        except TimeoutError as exc:
            sock.close()
            raise DaemonUnreachable(f"irqresd socket {self.path}: no answer within "
                              f"{self.timeout:g} s") from exc
        except OSError as exc:
            sock.close()
            raise DaemonUnreachable(f"irqresd socket {self.path}: {exc.strerror or exc}"
                                    ) from exc
        self._sock = sock
        self._buf = b""
        return self

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._buf = b""

    def __enter__(self) -> Client:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------
    def request(self, *words: str | int, body: bytes | None = None) -> dict[str, Any]:
        """Send one request and return its reply (a dict with ``ok`` true).

        ``body`` follows the request line as it is (plan and apply: the profile's text,
        announced by its length as the last word).

        Raises
        ------
        DaemonError
            The daemon said ``ok: false`` (its message is kept), or the connection failed,
            timed out or returned something that is not a JSON object.
        """
        parts = [str(w) for w in words]
        for w in parts:
            if not w or any(ch.isspace() for ch in w):
                raise DaemonError(f"irqresd request {' '.join(parts)!r}: word {w!r} is empty "
                                  "or contains white space")
        line = (" ".join(parts) + "\n").encode()
        what = parts[0] if parts else "?"
        if len(line) > REQUEST_MAX:
            raise DaemonError(f"irqresd request {what}: longer than {REQUEST_MAX} bytes")
        self.connect()
        assert self._sock is not None
        end_ns = time.monotonic_ns() + int(self.timeout * 1e9)
        try:
            self._sock.settimeout(self._wait_s(end_ns, what))
            self._sock.sendall(line + (body or b""))
            raw = self._read_line(what, end_ns)
        except TimeoutError as exc:
            self.close()
            raise DaemonUnreachable(f"irqresd ({self.path}): no reply to {what} within "
                              f"{self.timeout:g} s") from exc
        except OSError as exc:
            self.close()
            raise DaemonUnreachable(f"irqresd ({self.path}): connection lost during {what}: "
                              f"{exc.strerror or exc}") from exc
        try:
            reply = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            self.close()
            raise DaemonError(f"irqresd ({self.path}): reply to {what} is not JSON "
                              f"({len(raw)} bytes): {raw[:200]!r}") from exc
        if not isinstance(reply, dict) or "ok" not in reply:
            self.close()
            raise DaemonError(f"irqresd ({self.path}): reply to {what} has no \"ok\" field")
        if reply["ok"] is not True:
            msg = str(reply.get("error") or "refused (no message)")
            name = reply.get("errno")
            raise DaemonError(f"irqresd: {msg}" if msg.startswith(what)
                              else f"irqresd: {what}: {msg}",
                              errno_name=name if isinstance(name, str) else None)
        version = reply.get(VERSION_KEY, SCHEMA_VERSION)
        if not _KINDS["int"][1](version) or version > SCHEMA_VERSION:
            # a higher version changed a member's meaning, type or unit (docs/json.md)
            raise DaemonError(f"irqresd ({self.path}): reply to {what} has {VERSION_KEY} "
                              f"{json.dumps(version)}; this irqres reads "
                              f"{SCHEMA_VERSION}: use the irqres of the same release as "
                              "irqresd")
        return reply

    def _checked(self, spec: Spec, *words: str | int, body: bytes | None = None
                 ) -> dict[str, Any]:
        """:meth:`request`, its reply checked against ``spec`` (:func:`check_reply`)."""
        return check_reply(self.request(*words, body=body), spec, str(words[0]), self.path)

    def _wait_s(self, end_ns: int, what: str) -> float:
        """Seconds left before ``end_ns`` (the request's timeout) for a wait in ``what``;
        raises TimeoutError when none, :class:`RequestCancelled` when the caller's
        deadline has come or its cancel_fd is readable."""
        now = time.monotonic_ns()
        if self.deadline_ns is not None and self.deadline_ns <= now:
            self._cancel(what, "its caller's time is over")
        if self.cancel_fd is not None and select.select([self.cancel_fd], [], [], 0)[0]:
            self._cancel(what, "its caller is stopping")
        left = end_ns - now
        if left <= 0:
            raise TimeoutError
        return left / 1e9

    def _cancel(self, what: str, why: str) -> None:
        self.close()
        raise RequestCancelled(f"irqresd ({self.path}): {what} given up unanswered: {why}")

    def _read_line(self, what: str, end_ns: int) -> bytes:
        """The next reply line, read by the request's deadline ``end_ns``."""
        assert self._sock is not None
        sock = self._sock
        while b"\n" not in self._buf:
            wait = self._wait_s(end_ns, what)
            if self.deadline_ns is not None:
                wait = min(wait, max(self.deadline_ns - time.monotonic_ns(), 0) / 1e9)
            fds = [sock.fileno()] + ([] if self.cancel_fd is None else [self.cancel_fd])
            if fds[0] not in select.select(fds, [], [], wait)[0]:
                continue            # cancelled, past the deadline or timed out: _wait_s says
            chunk = sock.recv(65536)
            if not chunk:
                got = len(self._buf)
                self.close()
                raise DaemonUnreachable(
                    f"irqresd ({self.path}): closed the connection "
                    + (f"in the middle of its reply to {what} (truncated after {got} bytes)"
                       if got else f"without answering {what}"))
            self._buf += chunk
            if len(self._buf) > REPLY_MAX:
                self.close()
                raise DaemonError(f"irqresd ({self.path}): reply to {what} is longer than "
                                  f"{REPLY_MAX} bytes: refused")
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def ping(self) -> dict[str, Any]:
        return self.request("ping")

    def status(self) -> dict[str, Any]:
        return self._checked(STATUS_SPEC, "status")

    def stats(self) -> dict[str, Any]:
        return self._checked(STATS_SPEC, "stats")

    def _with_profile(self, verb: str, profile: str | os.PathLike[str],
                      spec: Spec) -> dict[str, Any]:
        """plan/apply: the client reads the profile and sends its text, so irqresd never
        opens a user's path (its unit has a private /tmp and no /home)."""
        path = os.path.abspath(profile)
        try:
            # O_NONBLOCK: a FIFO must not hang the client; only a regular file is read
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise DaemonError(f"{path}: not a regular file")
                text = f.read(BODY_MAX + 1)
        except OSError as exc:
            raise DaemonError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        if not text:
            raise DaemonError(f"{path}: the profile is empty")
        if len(text) > BODY_MAX:
            raise DaemonError(f"{path}: larger than {BODY_MAX} bytes: not a profile")
        name = "".join("?" if ch.isspace() else ch for ch in path)
        return self._checked(spec, verb, name, len(text), body=text)

    def plan(self, profile: str | os.PathLike[str]) -> dict[str, Any]:
        return dict(self._with_profile("plan", profile, {"plan": PLAN_SPEC})["plan"])

    def verify(self, profile: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """Compare the running system with ``profile`` (or the profile in force)."""
        if profile is None:
            return self._checked(VERIFY_SPEC, "verify")
        return self._with_profile("verify", profile, VERIFY_SPEC)

    def apply(self, profile: str | os.PathLike[str]) -> dict[str, Any]:
        """The plan applied; its ``waiting`` lists the threads moved into their partition
        that irqresd reserves once they have run there (docs/protocol.md)."""
        reply = self._with_profile("apply", profile, APPLY_SPEC)
        return {**reply["plan"], "waiting": list(reply.get("waiting") or [])}

    def reload(self) -> dict[str, Any]:
        """Have irqresd re-read its own profile (-p); the reply names the one in force."""
        return self.request("reload")

    def restore(self) -> int:
        return int(self._checked(RESTORE_SPEC, "restore")["restored"])

    def set_budget(self, target: str, runtime_ns: int, period_ns: int | None = None
                   ) -> dict[str, Any]:
        """Set ``target``'s budget (integer ns); returns the reply with the new values.
        The durations go as exact text with their unit (``1.5ms``, as the user would
        write them; no bare numbers anywhere), which irqresd reads back exactly."""
        words = ["set-budget", target, format_duration(int(runtime_ns))]
        if period_ns is not None:
            words.append(format_duration(int(period_ns)))
        return self._checked(SET_BUDGET_SPEC, *words)


def daemon_running(path: str | os.PathLike[str] | None = None, timeout: float = 2.0) -> bool:
    """True when an irqresd answers ``ping`` on the socket."""
    try:
        with Client(path, timeout=timeout) as c:
            c.ping()
        return True
    except DaemonNotRunning:
        return False


def find_irqresd() -> str:
    """Path of the irqresd binary: ``$IRQRESD``, the checkout's build, then ``PATH``."""
    env = os.environ.get(IRQRESD_ENV)
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise DaemonError(f"${IRQRESD_ENV}={env}: not an executable file")
        return env
    # Running from a checkout: analysis/irqres/client.py -> <repo>/build/daemon/irqresd
    repo = Path(__file__).resolve().parents[2]
    built = repo / "build" / "daemon" / "irqresd"
    if (repo / "daemon").is_dir() and built.is_file() and os.access(built, os.X_OK):
        return str(built)
    found = shutil.which("irqresd") or shutil.which(
        "irqresd", path="/usr/local/sbin:/usr/sbin:/sbin")
    if found:
        return found
    raise DaemonError("irqresd not found: set $IRQRESD, run `make daemon` in the checkout, "
                      "or install it (`make install`)")


def run_irqresd(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run irqresd once with ``args`` and return the finished process (output captured)."""
    exe = find_irqresd()
    try:
        return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise DaemonError(f"{exe} {' '.join(args)}: did not finish within {timeout:g} s"
                          ) from exc
    except OSError as exc:
        raise DaemonError(f"{exe}: cannot run: {exc.strerror or exc}") from exc


def irqresd_failed(what: str, proc: subprocess.CompletedProcess) -> DaemonError:
    """The error of an irqresd run that failed: its message, and for its exit code of a
    bad profile or option the errno irqresd gives that over the socket (EINVAL)."""
    msg = proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}"
    return DaemonError(f"{what}: {msg}", errno_name="EINVAL"
                       if proc.returncode == IRQRESD_EXIT_USAGE else None)


def irqresd_json(*args: str, ok_codes: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    """Run ``irqresd ARGS`` (with --json among them) and return the object it prints.

    Raises
    ------
    DaemonError
        irqresd exited with a code outside ``ok_codes`` (its message is kept), or printed
        something that is not a JSON object.
    """
    proc = run_irqresd(*args)
    what = " ".join(["irqresd", *args])
    if proc.returncode not in ok_codes:
        raise irqresd_failed(what, proc)
    try:
        reply = json.loads(proc.stdout)
    except ValueError as exc:
        raise DaemonError(f"{what}: output is not JSON: {proc.stdout[:200]!r}") from exc
    if not isinstance(reply, dict):
        raise DaemonError(f"{what}: output is not a JSON object")
    return reply
