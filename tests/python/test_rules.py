"""Each rule written once per language, pinned to the C side by the same case tables:
every case of tests/data/rules/ (tests/c/test_irqname.c reads them too)."""

from __future__ import annotations

from pathlib import Path

import pytest
from irqres import irqname

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
