"""``irqres simulate``: the controller on bursty arrivals through a CBS model."""

from __future__ import annotations

import math

import click

from ..control import ControllerConfig
from ..control.csvlog import CsvLog
from ..control.limits import JOB_BYTES, MAX_JOBS, max_rate
from ..model.kernel import KERNEL_MIN_RUNTIME_NS
from .common import POSITIVE_DURATION, cli_errors, dur, echo_json, table


def _check_durations(interval_ns: int, job_ns: int, default_job_ns: int,
                     min_ns: int | None, max_ns: int | None) -> None:
    """Refuse combinations no server can have: work or budgets beyond the period."""
    for opt, value in (("--job", job_ns), ("--default-job", default_job_ns),
                       ("--min-runtime", min_ns), ("--max-runtime", max_ns)):
        if value is not None and value > interval_ns:
            raise click.BadParameter(f"{dur(value)} is longer than --interval "
                                     f"{dur(interval_ns)}: it must fit in one interval",
                                     param_hint=f"'{opt}'")
    if min_ns is not None and max_ns is not None and min_ns > max_ns:
        raise click.BadParameter(f"{dur(min_ns)} is above --max-runtime {dur(max_ns)}",
                                 param_hint="'--min-runtime'")


def _check_rates(intervals: int, rates: dict[str, float]) -> None:
    """Refuse a rate (jobs per interval) that is not a finite number >= 0, or that asks
    for more than MAX_JOBS jobs in all: the run keeps every job in memory."""
    top = max_rate(intervals)
    for opt, value in rates.items():
        if not (math.isfinite(value) and value >= 0):
            raise click.BadParameter(f"{value!r}: must be a finite number of jobs per "
                                     "interval, 0 or more", param_hint=f"'{opt}'")
        if intervals >= 1 and value > top:
            raise click.BadParameter(
                f"{value:g} jobs per interval is more than {top:g}, the most over "
                f"--intervals {intervals} (the simulation keeps every job in memory: "
                f"{MAX_JOBS} jobs at most, about {MAX_JOBS * JOB_BYTES / 1e9:.0f} GB)",
                param_hint=f"'{opt}'")


#: what --help says of the rate options' bound
_RATE_BOUND = (f" At most {MAX_JOBS} / --intervals ({max_rate(20_000):g} at 20000): a run "
               "keeps every job in memory.")


@click.command("simulate",
               epilog="Example: irqres simulate --traffic fluctuating --rate-on 25 --gain 0.05")
@click.option("--intervals", default=20_000, show_default=True, help="Sampling intervals.")
@click.option("--interval", "interval_ns", default="1ms", show_default=True,
              type=POSITIVE_DURATION, help="Sampling interval = server period T.")
@click.option("--job", "job_ns", default="20us", show_default=True, type=POSITIVE_DURATION,
              help="Mean CPU time per job (jittered by --jitter).")
@click.option("--jitter", default=0.5, show_default=True, help="Job time jitter, +- share.")
@click.option("--rate-on", default=40.0, show_default=True,
              help="Jobs per interval, burst (fluctuating: the mean rate)." + _RATE_BOUND)
@click.option("--rate-off", default=10.0, show_default=True,
              help="Jobs per interval, quiet." + _RATE_BOUND)
@click.option("--p-on-off", default=0.3, show_default=True, help="P(burst ends) per interval.")
@click.option("--p-off-on", default=0.3, show_default=True, help="P(burst starts).")
@click.option("--traffic", type=click.Choice(["onoff", "fluctuating"]), default="onoff",
              show_default=True, help="onoff: Markov on/off bursts (--rate-on/--rate-off); "
              "fluctuating: Poisson at --rate-on with a correlated rate deviation.")
@click.option("--rate-sd", default=2.0, show_default=True,
              help="fluctuating: sd of the rate deviation, jobs per interval."
              + _RATE_BOUND)
@click.option("--rate-corr", default=0.6, show_default=True,
              help="fluctuating: its correlation from one interval to the next.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="Seed of the random arrivals and job times.")
@click.option("--buffer", default=512, show_default=True, help="N_c: jobs the device holds.")
@click.option("--gain", default=0.25, show_default=True, help="G.")
@click.option("--window", default=100, show_default=True, help="AW, in intervals.")
@click.option("--default-job", "default_job_ns", default="20us", show_default=True,
              type=POSITIVE_DURATION, help="Per-job time when nothing was processed.")
@click.option("--min-runtime", "min_ns", default=None, type=POSITIVE_DURATION,
              help=f"Lower clamp [default: {KERNEL_MIN_RUNTIME_NS}ns].")
@click.option("--max-runtime", "max_ns", default=None, type=POSITIVE_DURATION,
              help="Upper clamp [default: the interval].")
@click.option("--form", type=click.Choice(["backlog", "published"]), default="backlog",
              show_default=True, help="The controller's update (docs/controller.md).")
@click.option("--hold", default=0, show_default=True,
              help="backlog form: jobs kept queued (the set point; smoothing needs > 0).")
@click.option("--orientation", type=click.Choice(["queued", "deferred"]), default="queued",
              show_default=True, help="How left-over work moves the budget "
              "(docs/controller.md).")
@click.option("--model", type=click.Choice(["queued", "handoff"]), default="queued",
              show_default=True, help="queued: left-over work stays in the device (a "
              "SCHED_DEADLINE IRQ thread); handoff: it goes to another context (the "
              "reference's setting).")
@click.option("--log", "log_path", type=click.Path(dir_okay=False), metavar="FILE.csv",
              help="Write the adaptive run in the `tune --log` format (for plot-tune).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def simulate_cmd(intervals: int, interval_ns: int, job_ns: int, jitter: float,
                 rate_on: float, rate_off: float, p_on_off: float, p_off_on: float,
                 traffic: str, rate_sd: float, rate_corr: float, seed: int, buffer: int,
                 gain: float, window: int, default_job_ns: int, min_ns: int | None,
                 max_ns: int | None, form: str, hold: int, orientation: str, model: str,
                 log_path: str | None, as_json: bool) -> None:
    """Compare the threshold controller with a fixed budget equal to the average work
    and with no limit.

    Bursty arrivals (an on/off Markov-modulated Poisson process, or with --traffic
    fluctuating a demand fluctuating around its mean like the reference's) go through a
    model of the IRQ thread's SCHED_DEADLINE server: up to Q per period, left-over work
    queued in a device that holds --buffer jobs and drops the rest (--model handoff:
    handed to another context instead). Prints, for each budget, the interrupt time
    consumed per interval (mean, max-min, p1..p99), jobs done and dropped, and the
    largest backlog (jobs handed off, with handoff). The reference's smoothing:
    --traffic fluctuating --rate-on 25 --gain 0.05 --hold 256.
    """
    # numpy comes with the model, when it runs: not when a shell completes the options
    from ..control.simulate import Workload, compare, simulate_adaptive

    _check_durations(interval_ns, job_ns, default_job_ns, min_ns, max_ns)
    _check_rates(intervals, {"--rate-on": rate_on, "--rate-off": rate_off,
                             "--rate-sd": rate_sd})
    with cli_errors():
        w = Workload(intervals, interval_ns, job_ns, jitter, rate_on, rate_off, p_on_off,
                     p_off_on, seed, traffic, rate_sd, rate_corr)
        cfg = ControllerConfig(name="simulated", period_ns=interval_ns, gain=gain,
                               window=window, default_job_ns=default_job_ns,
                               min_runtime_ns=min_ns or 0, max_runtime_ns=max_ns or 0,
                               buffer=buffer, orientation=orientation, form=form,
                               hold=hold)
        result = compare(w, cfg, model)
        if log_path:
            run = simulate_adaptive(w, cfg, model=model)
            log = CsvLog(log_path)
            try:
                b = run.budget_ns.tolist()
                for i in range(intervals):
                    nxt = b[i + 1] if i + 1 < intervals else b[i]
                    log.row(i * interval_ns, "simulated", int(run.n_pro[i]),
                            int(run.consumed_ns[i]), int(run.n_rmn[i]), nxt,
                            nxt if nxt != b[i] else None)
            finally:
                log.close()     # after a failed row it only releases the file
    if as_json:
        echo_json(result)
        return
    rows = []
    for key in ("unlimited", "fixed", "adaptive"):
        r = result[key]
        rows.append([r["label"], dur(r["mean_budget_ns"]), dur(r["mean_consumed_ns"]),
                     dur(r["range_ns"]), dur(r["p1_p99_ns"]), r["jobs_done"], r["dropped"],
                     r["max_backlog"]])
    click.echo(table(["budget", "mean Q", "mean used", "max-min", "p1..p99", "jobs done",
                      "dropped", "max backlog"], rows))

    def ratio(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}x"

    click.echo(f"model {model}; range shrink, fixed/adaptive: max-min "
               f"{ratio(result['range_shrink'])}, p1..p99 {ratio(result['p1_p99_shrink'])}; "
               f"no limit/adaptive: max-min {ratio(result['range_shrink_vs_unlimited'])}, "
               f"p1..p99 {ratio(result['p1_p99_shrink_vs_unlimited'])}")
