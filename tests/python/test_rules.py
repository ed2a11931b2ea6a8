"""Each rule written once per language, pinned to the C side by the same case tables:
every case of tests/data/rules/ (tests/c/test_irqname.c, test_softirqd.c,
test_buffering.c and test_interrupts.c read them too)."""

from __future__ import annotations

from pathlib import Path

import pytest
from irqres import irqname, procfs
from irqres.control import ControllerConfig
from irqres.model import buffering
from irqres.model.kernel import KERNEL_MIN_RUNTIME_NS
from irqres.targetkind import SOFTIRQ_KTHREADS, softirq_kthread

RULES = Path(__file__).resolve().parents[1] / "data" / "rules"


def _table(name: str) -> list:
    """The cases of a tab-separated table, "<empty>" read as ""."""
    out = []
    for no, line in enumerate((RULES / name).read_text(encoding="utf-8").splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        fields = ["" if f == "<empty>" else f for f in line.split("\t")]
        out.append(pytest.param(*fields, id=f"{name}:{no}"))
    return out


NAMES = _table("irq-thread-names.tsv")
ACTIONS = _table("irq-thread-actions.tsv")
SOFTIRQ = _table("softirq-kthread.tsv")


@pytest.mark.parametrize("case", [p.values for p in SOFTIRQ], ids=[p.id for p in SOFTIRQ])
def test_softirq_kthread_name(case):
    comm, *want = case
    got = softirq_kthread(comm)
    if want == ["no"]:
        assert got is None
        return
    assert got == (want[0], int(want[1]))
    assert got[0] in SOFTIRQ_KTHREADS


def test_the_tables_are_read():
    assert len(NAMES) >= 20 and len(ACTIONS) >= 10


@pytest.mark.parametrize("case", [p.values for p in NAMES], ids=[p.id for p in NAMES])
def test_irq_thread_name(case):
    comm, *want = case
    got = irqname.parse(comm)
    if want == ["no"]:
        assert got is None
        return
    irq, secondary, action = want
    assert got == (int(irq), secondary == "s", action)
    if not comm.startswith("irq/0") or got.irq == 0:    # the kernel writes no leading 0
        assert irqname.comm(got.irq, got.action, got.secondary) == comm[:15]


@pytest.mark.parametrize(("comm", "actions", "secondary", "served"), ACTIONS)
def test_irq_thread_actions(comm, actions, secondary, served):
    names = actions.split(",") if actions else []
    assert irqname.own_actions(comm, names) == (secondary == "s",
                                                served.split(",") if served else [])


def test_own_actions_refuses_a_name_that_is_not_an_irq_thread():
    with pytest.raises(ValueError, match="'kworker/0:1' is not an IRQ thread name"):
        irqname.own_actions("kworker/0:1", ["eth0"])


BUFFERING = _table("buffering.tsv")
FLOOR = _table("runtime-floor.tsv")


@pytest.mark.parametrize(("q", "t", "p", "n", "verdict", "least"), BUFFERING)
def test_buffering_bound(q, t, p, n, verdict, least):
    q, t, p, n = int(q), int(t), int(p), int(n)
    assert buffering.passes(q, t, p, n) == (verdict == "ok")
    if 1 <= q <= t:                     # what check() takes
        assert buffering.check(q, t, p, n).ok == (verdict == "ok")
    assert buffering.min_runtime(t, p, n) == int(least)
    cfg = ControllerConfig(name="nic", period_ns=t, buffer=n, min_interarrival_ns=p)
    assert cfg.buffering_floor_ns == int(least)
    assert cfg.lower_ns == max(int(least), KERNEL_MIN_RUNTIME_NS)


@pytest.mark.parametrize(("runtime", "verdict"), FLOOR)
def test_runtime_floor(runtime, verdict):
    assert (int(runtime) >= KERNEL_MIN_RUNTIME_NS) == (verdict == "ok")


def test_the_rule_tables_are_read():
    assert len(BUFFERING) >= 15 and len(FLOOR) >= 5


SAMPLES = sorted(p.stem for p in (RULES / "proc-interrupts").glob("*.txt"))


def test_the_samples_are_read():
    assert {"x86", "cpu-hot-removed", "arm64-gic", "long-actions", "odd"} <= set(SAMPLES)


@pytest.mark.parametrize("name", SAMPLES)
def test_proc_interrupts_sample(name):
    """Each IRQ line read as the daemon reads it; an error names the line."""
    text = (RULES / "proc-interrupts" / f"{name}.txt").read_text(encoding="utf-8")
    expected = [line.split("\t") for line in
                (RULES / "proc-interrupts" / f"{name}.expected").read_text().splitlines()]
    lines = text.splitlines()
    assert expected[0] == ["cpus", str(procfs.interrupts_ncpu(lines[0]))]
    got = []
    for no, line in enumerate(lines[1:], start=2):
        try:
            row = procfs.interrupts_line(line, int(expected[0][1]))
        except ValueError:
            got.append(["error", str(no)])
            continue
        if row is not None:
            got.append([str(row[0]), str(row[1])])
    assert got == expected[1:]
    errors = [int(no) for what, no in expected[1:] if what == "error"]
    if errors:
        with pytest.raises(procfs.ProcfsError, match=rf"^x/interrupts:{errors[0]}: cannot read "
                           "the counts of IRQ"):
            procfs.parse_interrupts(text, "x/interrupts")
    else:
        assert procfs.parse_interrupts(text) == {int(i): int(n) for i, n in expected[1:]}


def test_proc_interrupts_without_a_header(tmp_path):
    with pytest.raises(procfs.ProcfsError, match="interrupts: empty"):
        procfs.parse_interrupts("", "interrupts")
    with pytest.raises(procfs.ProcfsError, match="interrupts:1: no CPU columns"):
        procfs.parse_interrupts("  \n 11: 1 2 x\n", "interrupts")
