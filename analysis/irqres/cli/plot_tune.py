"""``irqres plot-tune``: draw a CSV log written by ``irqres tune --log``."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import IO

import click

from ..control.csvlog import LOG_COLUMNS
from ..errors import IrqresError


class LogError(IrqresError, ValueError):
    """A tune log cannot be read; the message names the file and line."""


def _rows(path: str, f: IO[str]) -> Iterator[list[str]]:
    """The CSV rows of the open log ``f``; what cannot be read as CSV text is a
    :class:`LogError` naming ``path``."""
    reader = csv.reader(f)
    try:
        yield from reader
    except UnicodeDecodeError as exc:
        raise LogError(f"{path}: not a tune log: not UTF-8 text ({exc.reason})") from exc
    except csv.Error as exc:
        raise LogError(f"{path}:{reader.line_num}: not a tune log: {exc}") from exc
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def read_log(path: str) -> dict[str, dict[str, list[int]]]:
    """Columns per target as integer lists; Q_sent_ns is carried forward (the budget in
    force), starting from the first value sent."""
    out: dict[str, dict[str, list[int]]] = {}
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise LogError(f"{path}: {exc.strerror or exc}") from exc
    with f:
        reader = _rows(path, f)
        header = next(reader, None)
        if header is None or tuple(header) != LOG_COLUMNS:
            raise LogError(f"{path}:1: not a tune log: expected the header "
                           f"{','.join(LOG_COLUMNS)}")
        last_q: dict[str, int | None] = {}
        for no, row in enumerate(reader, start=2):
            if len(row) != len(LOG_COLUMNS):
                raise LogError(f"{path}:{no}: expected {len(LOG_COLUMNS)} fields, "
                               f"got {len(row)}")
            try:
                t, n_pro, t_pro, n_rmn, t_thr = (int(row[i]) for i in (0, 2, 3, 4, 5))
                q = int(row[6]) if row[6] else last_q.get(row[1])
            except ValueError as exc:
                raise LogError(f"{path}:{no}: {exc}") from exc
            last_q[row[1]] = q
            cols = out.setdefault(row[1], {k: [] for k in ("time_ns", "N_pro", "T_pro_ns",
                                                           "N_rmn", "T_thr_ns", "Q_ns")})
            for k, v in zip(cols, (t, n_pro, t_pro, n_rmn, t_thr, q if q is not None else -1),
                            strict=True):
                cols[k].append(v)
    if not out:
        raise LogError(f"{path}: no intervals logged")
    return out


@click.command("plot-tune", epilog="Example: irqres plot-tune tune.csv -o tune.png")
@click.argument("log", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Image to write (.png, .svg, .pdf).")
@click.option("--target", "only", multiple=True, help="Only these targets (repeatable).")
def plot_tune_cmd(log: str, output: str, only: tuple[str, ...]) -> None:
    """Plot a tune log: per target, CPU time per interval, threshold and budget in force
    (top), jobs processed and left over (bottom)."""
    try:
        data = read_log(log)
    except IrqresError as exc:
        raise click.ClickException(str(exc)) from exc
    if only:
        missing = [t for t in only if t not in data]
        if missing:
            raise click.ClickException(f"{log}: no target {', '.join(missing)} "
                                       f"(it has {', '.join(data)})")
        data = {t: data[t] for t in only}
    import numpy as np

    from ..plots import pyplot
    try:
        plt = pyplot()
    except IrqresError as exc:
        raise click.ClickException(str(exc)) from exc

    fig, axes = plt.subplots(2 * len(data), 1, figsize=(10, 4.5 * len(data)), sharex=True,
                             squeeze=False)
    for k, (name, c) in enumerate(data.items()):
        t = (np.asarray(c["time_ns"], np.int64) - c["time_ns"][0]) / 1e9
        top, bottom = axes[2 * k][0], axes[2 * k + 1][0]
        top.plot(t, np.asarray(c["T_pro_ns"]) / 1e3, lw=0.8, label="T_pro (CPU time used)")
        top.plot(t, np.asarray(c["T_thr_ns"]) / 1e3, lw=0.8, label="T_thr")
        q = np.asarray(c["Q_ns"], np.float64)
        q[q < 0] = np.nan
        top.step(t, q / 1e3, where="post", lw=1.2, label="Q in force")
        top.set_ylabel("µs")
        top.set_title(f"{name}")
        top.legend(loc="upper right", fontsize="small")
        bottom.plot(t, c["N_pro"], lw=0.8, label="N_pro")
        bottom.plot(t, c["N_rmn"], lw=0.8, label="N_rmn")
        bottom.set_ylabel("jobs")
        bottom.legend(loc="upper right", fontsize="small")
    axes[-1][0].set_xlabel("time (s)")
    fig.tight_layout()
    try:
        fig.savefig(output, dpi=110)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"{output}: cannot write the plot: {exc}") from exc
    finally:
        plt.close(fig)
    click.echo(f"wrote {output}")
