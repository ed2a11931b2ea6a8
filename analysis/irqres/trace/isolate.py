"""Run the native trace reader in a child process, so that a damaged file cannot kill us.

libtracecmd (3.1.6 at least) trusts the files it opens: a version-7 file cut to a few
dozen bytes makes ``tracecmd_open`` free a pointer twice (SIGABRT), one flipped byte of
compressed data makes ``tracecmd_close`` dereference garbage (SIGSEGV). Inside the
Python process either would end ``irqres analyze`` with a signal instead of an error.

:func:`isolated_read` therefore forks, decodes in the child with
``irqres._tracereader.read`` and hands the columns back through a memfd that the parent
maps read-only (the column bytes are written once, by the child, and never copied in the
parent); the rest of the result (small: names, counters, offsets), progress reports and
errors travel through a pipe as marshal frames. A child that dies by a signal becomes a
:class:`~irqres.errors.TraceError` naming the file and the signal.

The child runs no Python import and writes nothing to the parent's stdout/stderr, so a
fork beside another thread (``irqres analyze`` loads numpy on one meanwhile) is safe:
the only locks it takes are the GIL and malloc's, which fork hands over intact.
"""

from __future__ import annotations

import faulthandler
import marshal
import mmap
import os
import resource
import signal
import struct
import warnings

from ..errors import TraceError

_FRAME = struct.Struct("<Q")
_COLUMN = "\0column"  # the key of a stand-in {_COLUMN: (offset, nbytes)}
_ALIGN = 64


def _send(fd: int, msg: tuple) -> None:
    data = marshal.dumps(msg)
    _write_all(fd, _FRAME.pack(len(data)) + data)


def _write_all(fd: int, data, offset: int | None = None) -> None:
    view = memoryview(data).cast("B")
    while view.nbytes:
        n = os.write(fd, view) if offset is None else os.pwrite(fd, view, offset)
        view = view[n:]
        if offset is not None:
            offset += n


def _recv(fd: int, n: int) -> bytes | None:
    """Exactly ``n`` bytes from the pipe, or None at its end."""
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _messages(fd: int):
    while True:
        head = _recv(fd, _FRAME.size)
        if head is None:
            return
        body = _recv(fd, _FRAME.unpack(head)[0])
        if body is None:
            return
        yield marshal.loads(body)


def _stow(obj, memfd: int, end: list[int], column_type):
    """``obj`` with each column written to ``memfd`` and replaced by a stand-in; the
    columns are dropped as they are written so that only one copy is alive at a time."""
    if isinstance(obj, dict):
        for key in list(obj):
            obj[key] = _stow(obj[key], memfd, end, column_type)
        return obj
    if isinstance(obj, list):
        for i, val in enumerate(obj):
            obj[i] = _stow(val, memfd, end, column_type)
        return obj
    if isinstance(obj, column_type):
        view = memoryview(obj)
        start = -(-end[0] // _ALIGN) * _ALIGN
        _write_all(memfd, view, start)
        end[0] = start + view.nbytes
        return {_COLUMN: (start, view.nbytes)}
    return obj


def _unstow(obj, buf: memoryview):
    if isinstance(obj, dict):
        if _COLUMN in obj:
            start, nbytes = obj[_COLUMN]
            return buf[start:start + nbytes]
        return {k: _unstow(v, buf) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_unstow(v, buf) for v in obj]
    return obj


def _child(reader, path: str, kwargs: dict, want_progress: bool, wfd: int, memfd: int,
           talkfd: int):
    """Decode in the forked child and report to the parent; never returns."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
        if faulthandler.is_enabled():
            faulthandler.disable()  # die by the signal, without a Python dump
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # libtracecmd's and glibc's complaints (printf, stderr) would break the parent's
        # --json output and its one-line errors: they go to a memfd the parent reads
        os.dup2(talkfd, 1)
        os.dup2(talkfd, 2)
        if want_progress:
            kwargs["progress"] = lambda n: _send(wfd, ("progress", n))
        try:
            raw = reader.read(path, **kwargs)
        except Exception as exc:
            _send(wfd, ("error", type(exc).__name__, str(exc)))
        else:
            _send(wfd, ("done", _stow(raw, memfd, [0], reader.Column)))
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _child_error(path: str, kind: str, text: str, said: str) -> Exception:
    if kind == "ValueError":
        if "cannot open" in text:
            text += "; the file may be truncated or damaged" + said
        return TraceError(text)
    if kind == "MemoryError":
        return TraceError(f"{path}: out of memory while reading the trace")
    if kind == "TypeError":
        return TypeError(text)
    return TraceError(f"{path}: the trace reader failed: {kind}: {text}")


def _said(talkfd: int) -> str:
    """What the child printed (libtracecmd's warnings, glibc's abort message), as a clause
    to add to an error: its first line, or ""."""
    text = os.pread(talkfd, 4096, 0).decode("utf-8", "replace")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return f" ({lines[0][:200]})" if lines else ""


def _death(path: str, status: int, said: str) -> TraceError:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if sig == signal.SIGKILL:
            return TraceError(f"{path}: the trace reader was killed ({name}; out of memory?)")
        return TraceError(f"{path}: the trace is damaged: libtracecmd crashed on it ({name}) "
                          f"while reading it{said}")
    return TraceError(f"{path}: the trace reader stopped without a result "
                      f"(exit status {os.waitstatus_to_exitcode(status)})")


def isolated_read(path: str, *, progress=None, **kwargs) -> dict:
    """``irqres._tracereader.read(path, progress=progress, **kwargs)`` in a child process.

    The result has the same keys and values, with each column a read-only memoryview of
    a shared mapping instead of a ``Column``. ``progress`` is called in this process (an
    exception it raises stops the child and propagates).

    Raises
    ------
    TraceError
        The reader refused the file, ran out of memory, or died (e.g. SIGSEGV inside
        libtracecmd); the message names the file and the cause.
    """
    from .. import _tracereader  # imported here, never in the child

    memfd = os.memfd_create("irqres-trace", os.MFD_CLOEXEC)
    talkfd = os.memfd_create("irqres-trace-output", os.MFD_CLOEXEC)
    rfd = wfd = -1
    pid = 0
    try:
        rfd, wfd = os.pipe2(os.O_CLOEXEC)
        with warnings.catch_warnings():
            # Python >= 3.12 warns about forking beside threads; see the module docstring
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            os.close(rfd)
            _child(_tracereader, path, kwargs, progress is not None, wfd, memfd, talkfd)
        os.close(wfd)
        wfd = -1
        last = None
        for msg in _messages(rfd):
            if msg[0] == "progress":
                progress(msg[1])
            else:
                last = msg
        _, status = os.waitpid(pid, 0)
        pid = 0
        if last is None or status != 0:
            raise _death(path, status, _said(talkfd))
        if last[0] == "error":
            raise _child_error(path, last[1], last[2], _said(talkfd))
        size = os.fstat(memfd).st_size
        buf = memoryview(mmap.mmap(memfd, size, prot=mmap.PROT_READ) if size else b"")
        return _unstow(last[1], buf)
    finally:
        if pid > 0:  # an exception here (e.g. from progress): stop the child
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        for fd in (rfd, wfd, memfd, talkfd):
            if fd >= 0:
                os.close(fd)
