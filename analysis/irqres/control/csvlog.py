"""The per-interval CSV log of ``irqres tune --log`` and ``irqres simulate --log``
(read back by ``irqres plot-tune``)."""

from __future__ import annotations

import csv
import os
from typing import IO

from .controller import ControlError

LOG_COLUMNS = ("time_ns", "target", "N_pro", "T_pro_ns", "N_rmn", "T_thr_ns", "Q_sent_ns")


class CsvLog:
    """The per-interval CSV log (``--log``); Q_sent_ns is empty when nothing was sent.

    Every failure to open, write, flush or close it (a full disk, /dev/full, an I/O
    error) raises :class:`ControlError` naming the log and the cause. After one such
    failure, :meth:`close` only releases the file: the loss was reported already.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.failed = False
        try:
            self._f: IO[str] = open(path, "w", newline="")
        except OSError as exc:
            raise ControlError(f"log {self.path}: {exc.strerror or exc}") from exc
        self._w = csv.writer(self._f)
        self._write(LOG_COLUMNS)

    def _error(self, exc: OSError, doing: str) -> ControlError:
        self.failed = True
        return ControlError(f"log {self.path}: cannot {doing} it: {exc.strerror or exc}")

    def _write(self, fields: tuple | list) -> None:
        try:
            self._w.writerow(fields)
        except OSError as exc:
            raise self._error(exc, "write") from exc

    def row(self, time_ns: int, target: str, n_pro: int, t_pro_ns: int, n_rmn: int,
            t_thr_ns: int, q_sent_ns: int | None) -> None:
        self._write([time_ns, target, n_pro, t_pro_ns, n_rmn, t_thr_ns,
                     "" if q_sent_ns is None else q_sent_ns])

    def flush(self) -> None:
        try:
            self._f.flush()
        except OSError as exc:
            raise self._error(exc, "write") from exc

    def close(self) -> None:
        """Write what is buffered and close; a second call does nothing."""
        if self._f.closed:
            return
        try:
            self._f.close()
        except OSError as exc:
            if not self.failed:     # after a reported failure the rest is lost anyway
                raise self._error(exc, "write") from exc
