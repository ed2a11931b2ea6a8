"""The ``irqres`` command. Each subcommand lives in its own module of this package and is
loaded only when it is run, so ``irqres status`` does not import scipy."""

from __future__ import annotations

import importlib.util

import click
from click.shell_completion import CompletionItem

from .. import __version__
from .common import add_verbosity, daemon_params, set_verbosity

# name -> (module under irqres.cli, function name, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "apply": ("apply", "apply_cmd", "Validate a profile, show the plan and apply it."),
    "status": ("status", "status_cmd", "Show the reservations irqresd holds."),
    "stats": ("stats", "stats_cmd", "Per-thread counters; OpenMetrics, node_exporter file."),
    "top": ("top", "top_cmd", "A live per-thread view of budget use (q quits)."),
    "restore": ("restore", "restore_cmd", "Put every thread back as irqresd found it."),
    "set-budget": ("apply", "set_budget_cmd", "Change a target's budget at run time."),
    "verify": ("verify", "verify_cmd", "Check that the system holds a profile (exit 1 if not)."),
    "analyze": ("analyze", "analyze_cmd", "Measure IRQ threads in a trace; recommend (Q,T)."),
    "record": ("record", "record_cmd", "Record a trace of the events analyze needs."),
    "tune": ("tune", "tune_cmd", "Run the adaptive threshold controller."),
    "simulate": ("simulate", "simulate_cmd", "Simulate the controller on bursty arrivals."),
    "plot-tune": ("plot_tune", "plot_tune_cmd", "Plot a CSV log written by tune --log."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = []
        for name, (module, _, _) in COMMANDS.items():
            if importlib.util.find_spec(f"{__name__}.{module}") is not None:
                names.append(name)
        return names

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr, _ = entry
        if importlib.util.find_spec(f"{__name__}.{module_name}") is None:
            return None
        module = importlib.import_module(f"{__name__}.{module_name}")
        return add_verbosity(getattr(module, attr))

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """Subcommand names with their one-line help from :data:`COMMANDS`: completing a
        name imports no subcommand (click's own would import them all for their help)."""
        items = [CompletionItem(name, help=COMMANDS[name][2])
                 for name in self.list_commands(ctx) if name.startswith(incomplete)]
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="irqres")
@click.pass_context
def main(ctx: click.Context) -> None:
    """irqres: SCHED_DEADLINE reservations for PREEMPT_RT IRQ threads.

    \b
    Typical use on an RT box:
      irqres record -o trace.dat -- sleep 10   # or trace-cmd record (see analyze --help)
      irqres analyze trace.dat --buffer 256    # PMFs, buffering check, recommended (Q,T)
      irqres apply profile.yaml --dry-run      # what the kernel will accept
      irqres apply profile.yaml                # hand it to irqresd
      irqres status

    Durations take a unit: 2ms, 500us, 1.5ms, 10s (0 alone needs none).
    -v/-q, --socket and --run-dir work before or after the subcommand.
    """
    set_verbosity(ctx)


add_verbosity(main)
main.params.extend(daemon_params())
