"""The per-interval CSV log of ``irqres tune --log`` and ``irqres simulate --log``
(read back by ``irqres plot-tune``)."""

from __future__ import annotations

import csv
import os
from typing import IO

from .controller import ControlError

LOG_COLUMNS = ("time_ns", "target", "N_pro", "T_pro_ns", "N_rmn", "T_thr_ns", "Q_sent_ns")


class CsvLog:
    """The per-interval CSV log (``--log``); Q_sent_ns is empty when nothing was sent."""

    def __init__(self, path: str | os.PathLike[str]):
        try:
            self._f: IO[str] = open(path, "w", newline="")
        except OSError as exc:
            raise ControlError(f"log {path}: {exc.strerror or exc}") from exc
        self._w = csv.writer(self._f)
        self._w.writerow(LOG_COLUMNS)

    def row(self, time_ns: int, target: str, n_pro: int, t_pro_ns: int, n_rmn: int,
            t_thr_ns: int, q_sent_ns: int | None) -> None:
        self._w.writerow([time_ns, target, n_pro, t_pro_ns, n_rmn, t_thr_ns,
                          "" if q_sent_ns is None else q_sent_ns])

    def flush(self) -> None:
        self._f.flush()

    def close(self) -> None:
        self._f.close()
