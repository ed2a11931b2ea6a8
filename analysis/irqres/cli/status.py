"""``irqres status`` and ``irqres stats``: what irqresd holds, read over its socket.

Also the small pieces the other client commands share: the ``--socket`` option, the
mapping of library errors to click errors, and plain-text tables.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence

import click

from ..client import Client, DaemonNotRunning, irqresd_json
from ..errors import IrqresError
from ..units import format_duration

socket_option = click.option(
    "--socket", "socket_", metavar="PATH", default=None,
    help="irqresd's control socket [default: $IRQRES_SOCKET or /run/irqres/irqresd.sock].")
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print the daemon's reply as JSON.")


@contextlib.contextmanager
def cli_errors() -> Iterator[None]:
    """Turn the library's errors into clean click errors."""
    try:
        yield
    except IrqresError as exc:
        raise click.ClickException(str(exc)) from exc


def dur(ns: object) -> str:
    """A duration in ns for a table ("-" when missing)."""
    return "-" if ns is None else format_duration(int(ns))  # type: ignore[arg-type]


def qtd(obj: dict) -> str:
    """``Q/T/D`` of an object with runtime_ns, period_ns, deadline_ns."""
    return "/".join(dur(obj.get(k)) for k in ("runtime_ns", "period_ns", "deadline_ns"))


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns aligned on the widest cell."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in cells)


def echo_json(obj: object) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=True))


def policy_text(policy: object, priority: object = None) -> str:
    if policy in ("fifo", "rr") and priority is not None:
        return f"{policy}:{priority}"
    return str(policy)


def format_status(reply: dict) -> str:
    lines = [f"irqresd pid {reply.get('pid')}, profile {reply.get('profile') or '(none)'}, "
             f"admission control {reply.get('admission_control', '?')}"]
    if "configured_profile" in reply:  # what systemctl reload / SIGHUP re-reads
        conf = reply["configured_profile"]
        lines[0] += (f"; reload re-reads {conf}" if conf
                     else "; no profile of its own (reload re-reads nothing)")
    targets = reply.get("targets") or []
    if not targets:
        lines.append("no targets")
        return "\n".join(lines)
    rows = []
    for t in targets:
        threads = t.get("threads") or []
        rows.append([t.get("name"), t.get("kind"), t.get("mode"), qtd(t), len(threads), "", ""])
        for th in threads:
            rows.append([f"  {th.get('comm')}", f"pid {th.get('pid')}", f"cpu {th.get('cpus')}",
                         qtd(th), th.get("policy"),
                         policy_text(th.get("orig_policy"), th.get("orig_priority")),
                         th.get("cpuset") or "-"])
    lines.append(table(["target", "kind", "mode", "Q/T/D", "threads", "was", "cpuset"], rows))
    # threads changed behind irqresd's back that it left so (drift: report, or a refusal)
    lines += [f"drift: {th.get('comm')} (pid {th.get('pid')}), target {t.get('name')}: "
              f"{th['drift']}" for t in targets for th in t.get("threads") or []
              if th.get("drift")]
    return "\n".join(lines)


def format_stats(reply: dict) -> str:
    threads = reply.get("threads") or []
    if not threads:
        return "no threads under irqresd"
    rows = [[th.get("pid"), th.get("comm"), th.get("target"),
             ",".join(str(i) for i in th.get("irqs") or []) or "-", th.get("irq_count"),
             th.get("policy"), qtd(th), dur(th.get("cpu_time_ns")), dur(th.get("wait_time_ns")),
             th.get("timeslices"), th.get("voluntary_switches"),
             th.get("involuntary_switches")] for th in threads]
    return table(["pid", "comm", "target", "irqs", "irq count", "policy", "Q/T/D", "cpu time",
                  "wait time", "slices", "vol sw", "invol sw"], rows)


def format_state(reply: dict) -> str:
    """What the state file records, when no irqresd answers (``irqresd --status``)."""
    if not reply.get("exists"):
        return (f"no irqresd running, and no state file {reply.get('state_file')}: irqres "
                "holds no reservation here")
    threads = reply.get("threads") or []
    lines = [f"no irqresd running; state file {reply.get('state_file')} (left by "
             f"irqresd --once; undo with irqres restore): {len(threads)} thread(s), "
             f"admission control {reply.get('admission_control')}"]
    if threads:
        lines.append(table(["thread", "pid", "cpu", "Q/T/D", "policy", "was", "partition"], [
            [th.get("comm"), th.get("pid"), th.get("cpus"),
             qtd(th) if th.get("policy") == "deadline" else "-",
             th.get("policy") if th.get("alive") else "gone",
             policy_text(th.get("orig_policy"), th.get("orig_priority")),
             th.get("partition") or "-"] for th in threads]))
    return "\n".join(lines)


@click.command("status")
@socket_option
@json_option
def status_cmd(socket_: str | None, as_json: bool) -> None:
    """Show the profile and reservations irqresd holds, thread by thread.

    With no irqresd running, show what its state file records: the reservations an
    `irqres apply` without a daemon (`irqresd --once`) left in place.
    """
    with cli_errors():
        try:
            with Client(socket_) as c:
                reply = c.status()
        except DaemonNotRunning:
            reply = _state_without_daemon()
            if as_json:
                echo_json({"daemon": False, **reply})
            else:
                click.echo(format_state(reply))
            return
    if as_json:
        echo_json(reply)
    else:
        click.echo(format_status(reply))


def _state_without_daemon() -> dict:
    return irqresd_json("--status", "--json", ok_codes=(0,))
