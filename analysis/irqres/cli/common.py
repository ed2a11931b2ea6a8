"""What every subcommand shares: parameter types, options, errors, output.

- :data:`DURATION` / :data:`POSITIVE_DURATION`: the one click type for a time, in any
  option or argument of any subcommand, with the grammar of :mod:`irqres.units`;
- :class:`Command`: a command whose positional arguments may look like negative numbers
  (``set-budget nic -1ms``), so the duration type, not the option parser, reports them;
- :func:`add_verbosity`: ``-v``/``-q`` on a subcommand too, adding to the group's;
  :func:`warn`: a ``warning:`` line, which -q silences;
- :func:`cli_errors`: the library's errors as clean click errors;
- :func:`socket_option` (``--socket``, ``--run-dir``) and :func:`where`;
- :data:`json_option`, :func:`echo_json`;
- :func:`table` and :func:`dur` (plain-text tables, :mod:`irqres.tables`).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import click
from click.shell_completion import CompletionItem

from .. import jsonout
from ..client import SOCKET_ENV, Client, Endpoint, endpoint
from ..errors import DaemonError, IrqresError
from ..tables import dur, text_table
from ..units import DurationError, parse_duration

__all__ = ["DURATION", "POSITIVE_DURATION", "Command", "Duration", "add_verbosity",
           "cli_errors", "complete_targets", "dur", "echo_json", "json_option",
           "not_named_daemon", "set_verbosity", "socket_option", "table", "warn", "where"]


class Duration(click.ParamType):
    """A duration with a unit (``10us``, ``2ms``, ``0``) as integer nanoseconds.

    Parameters
    ----------
    positive
        Refuse ``0`` (for periods, budgets, run times).
    """

    name = "duration"

    def __init__(self, positive: bool = False):
        self.positive = positive

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None
                    ) -> str | None:
        # an argument keeps its own name (RUNTIME), in the usage line and in errors
        return "DURATION" if isinstance(param, click.Option) else None

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            ns = value          # a default already in ns, or a value converted before
        else:
            try:
                ns = parse_duration(str(value))
            except DurationError as exc:
                self.fail(str(exc), param, ctx)
        if self.positive and ns == 0:
            self.fail(f"{value!r}: must be longer than 0", param, ctx)
        return ns

    def __repr__(self) -> str:
        return "POSITIVE_DURATION" if self.positive else "DURATION"


DURATION = Duration()
POSITIVE_DURATION = Duration(positive=True)

_NEGATIVE = re.compile(r"^[ \t]*-[ \t]*[0-9.]")


def _opt_takes_value(param: click.Parameter) -> bool:
    return isinstance(param, click.Option) and not param.is_flag and not param.count


class Command(click.Command):
    """A command whose arguments may start with a minus sign and a digit.

    click reads ``-1ms`` as the short option ``-1`` ("No such option '-1'"). When such an
    argument stands where no option takes a value, the command line is put in the order
    options first, then ``--``, then the arguments, so the argument reaches its type
    (which then says "'-1ms' is not a duration: a duration cannot be negative").
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if any(_NEGATIVE.match(a) for a in args):
            args = self._arguments_last(ctx, args)
        return super().parse_args(ctx, args)

    def _arguments_last(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {}
        for p in self.get_params(ctx):
            if isinstance(p, click.Option):
                for name in (*p.opts, *p.secondary_opts):
                    takes_value[name] = _opt_takes_value(p)
        options: list[str] = []
        positional: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                positional.extend(args[i + 1:])
                break
            if _NEGATIVE.match(a) or not a.startswith("-") or a == "-":
                positional.append(a)
            elif a.startswith("--"):
                options.append(a)
                if "=" not in a and takes_value.get(a) and i + 1 < len(args):
                    options.append(args[i + 1])
                    i += 1
            else:       # -x, -xVALUE, -abc (flags)
                options.append(a)
                if len(a) == 2 and takes_value.get(a) and i + 1 < len(args):
                    options.append(args[i + 1])
                    i += 1
            i += 1
        return [*options, "--", *positional]


# -- verbosity ------------------------------------------------------------------------
_LOG_FORMAT = "irqres: %(levelname)s: %(message)s"
_META = "irqres.verbosity"


def set_verbosity(ctx: click.Context, more: int = 0, less: int = 0) -> None:
    """Add ``more`` (-v) and ``less`` (-q) to the command line's verbosity and set the
    log level: warnings by default, -v info, -vv debug, -q errors only, -qq nothing."""
    root = ctx.find_root()
    level = root.meta.get(_META, 0) + more - less
    root.meta[_META] = level
    logging.basicConfig(format=_LOG_FORMAT)
    logging.getLogger().setLevel(logging.WARNING - 10 * max(min(level, 2), -3))


def warn(text: str) -> None:
    """Print ``warning: TEXT`` on stderr, unless -q (errors only) silences warnings."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.find_root().meta.get(_META, 0) < 0:
        return
    click.echo(f"warning: {text}", err=True)


def _verbose_cb(ctx: click.Context, param: click.Parameter, value: int) -> None:
    if value:
        set_verbosity(ctx, more=value)


def _quiet_cb(ctx: click.Context, param: click.Parameter, value: int) -> None:
    if value:
        set_verbosity(ctx, less=value)


def verbosity_params() -> list[click.Option]:
    """Fresh ``-v``/``-q`` options (count flags, not passed to the command function)."""
    return [
        click.Option(["-v", "--verbose"], count=True, expose_value=False, callback=_verbose_cb,
                     help="More log output (-v info, -vv debug)."),
        click.Option(["-q", "--quiet"], count=True, expose_value=False, callback=_quiet_cb,
                     help="Less log output (-q errors only)."),
    ]


def add_verbosity(cmd: click.Command) -> click.Command:
    """Give ``cmd`` the ``-v``/``-q`` options once (before its --help)."""
    names = {n for p in cmd.params for n in getattr(p, "opts", ())}
    if "-v" not in names and "-q" not in names:
        cmd.params.extend(verbosity_params())
    return cmd


# -- errors and output ----------------------------------------------------------------
_WHERE = "irqres.where"
FC = TypeVar("FC", bound=Callable[..., Any])


def _where_cb(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None and param.name:
        ctx.find_root().meta.setdefault(_WHERE, {})[param.name] = value


_SOCKET_HELP = ("irqresd's control socket [default: $IRQRES_SOCKET, else "
                "RUN_DIR/irqresd.sock]. A named socket is that daemon or an error.")
_RUN_DIR_HELP = ("irqresd's run directory: DIR/state, DIR/irqresd.sock [default: "
                 "$IRQRES_RUN_DIR, else the named socket's directory, else /run/irqres].")


def daemon_params() -> list[click.Option]:
    """Fresh ``--socket``/``--run-dir`` options (for the group; not passed to a command
    function: :func:`where` gives what they name)."""
    return [click.Option(["--socket"], metavar="PATH", expose_value=False,
                         callback=_where_cb, help=_SOCKET_HELP),
            click.Option(["--run-dir"], metavar="DIR", expose_value=False,
                         callback=_where_cb, help=_RUN_DIR_HELP)]


def socket_option(f: FC) -> FC:
    """Give a command that talks to irqresd ``--socket`` and ``--run-dir``."""
    f = click.option("--run-dir", metavar="DIR", expose_value=False, callback=_where_cb,
                     help=_RUN_DIR_HELP)(f)
    return click.option("--socket", metavar="PATH", expose_value=False, callback=_where_cb,
                        help=_SOCKET_HELP)(f)


def not_named_daemon(ep: Endpoint, exc: DaemonError, shown: str = "") -> None:
    """Called when no irqresd answers: a socket the user named is that daemon or an
    error, never a silent fall back to a run directory (unless one was named too).
    ``shown``: what the command printed instead (status: the state file)."""
    if ep.fallback:
        return
    if shown:
        raise click.ClickException(f"{exc}; {ep.socket} was named (--socket or "
                                   f"${SOCKET_ENV}): {shown}") from exc
    raise click.ClickException(
        f"{exc}; {ep.socket} was named (--socket or ${SOCKET_ENV}), so irqres does not act "
        "on a run directory without it (name one with --run-dir to do that)") from exc


def where(ctx: click.Context | None = None) -> Endpoint:
    """The irqresd the command line names (``--socket``/``--run-dir`` before or after the
    subcommand, the subcommand's last), else the environment's, else the default."""
    named = (ctx or click.get_current_context()).find_root().meta.get(_WHERE, {})
    return endpoint(named.get("socket"), named.get("run_dir"))


#: how long TAB completion waits for irqresd (a key press must stay quick)
COMPLETION_TIMEOUT = 0.1


def complete_targets(ctx: click.Context, param: click.Parameter, incomplete: str
                     ) -> list[CompletionItem]:
    """TAB completion of a target: the names irqresd holds and pid:N of their threads,
    from its status (nothing when it does not answer within COMPLETION_TIMEOUT)."""
    try:
        with Client(where(ctx).socket, timeout=COMPLETION_TIMEOUT) as c:
            targets = c.status().get("targets") or []
    except (DaemonError, OSError):
        return []
    words = [str(t.get("name")) for t in targets]
    words += [f"pid:{th.get('pid')}" for t in targets for th in t.get("threads") or []]
    return [CompletionItem(w) for w in words if w.startswith(incomplete)]


json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print the daemon's reply as JSON.")


@contextlib.contextmanager
def cli_errors() -> Iterator[None]:
    """Turn the library's errors into clean click errors: exit status 1, or 2 for what
    irqresd refuses as a bad profile or argument (EINVAL), as irqresd's own exit codes
    and click's usage errors have it."""
    try:
        yield
    except DaemonError as exc:
        err = click.ClickException(str(exc))
        if exc.errno_name == "EINVAL":
            err.exit_code = 2
        raise err from exc
    except IrqresError as exc:
        raise click.ClickException(str(exc)) from exc


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns aligned on the widest cell."""
    return "\n".join(text_table([header, *rows]))


def echo_json(obj: dict[str, Any], indent: int = 2, sort_keys: bool = True) -> None:
    """Print one ``--json`` output: JSON-safe, with the schema version (docs/json.md)."""
    click.echo(jsonout.dumps(obj, indent=indent, sort_keys=sort_keys))
