"""irqres.profiledoc: a profile built as data, dumped once, each comment above its target;
and the one-way layering of the analysis (measure never reaches into model)."""

import subprocess
import sys

import yaml
from irqres import profiledoc


def test_dump_round_trips_with_each_comment_above_its_target():
    targets = [
        ("first: why", {"name": "irq11-eth0", "irq": [11], "action": "eth0*",
                        "secondary": True, "runtime": "123.457us", "period": "1ms"}),
        (None, {"name": "plain", "irq": [19], "runtime": "1ms", "period": "10ms"}),
        ("third", {"name": "yes", "task": {"comm": "[*]ctrl: loop"}, "runtime": "2ms",
                   "period": "10ms", "min_interarrival": "100us", "buffer": 64}),
    ]
    text = profiledoc.dump(targets)
    assert yaml.safe_load(text) == {"version": 1, "targets": [t for _, t in targets]}
    lines = text.splitlines()
    assert lines[:3] == ["version: 1", "targets:", "  # first: why"]
    assert lines[3] == "  - name: irq11-eth0" and "    irq: [11]" in lines
    starts = [i for i, ln in enumerate(lines) if ln.startswith("  - ")]
    assert len(starts) == 3
    assert lines[starts[1] - 1] == "    period: 1ms"      # no comment: none written
    assert lines[starts[2] - 1] == "  # third"
    # a name YAML would read as a boolean stays a string
    assert yaml.safe_load(text)["targets"][2]["name"] == "yes"


def test_measure_does_not_import_model():
    code = ("import sys, irqres.measure.activations, irqres.measure.stats, "
            "irqres.measure.accounting; "
            "print(sorted(m for m in sys.modules if m.startswith(('irqres.model', "
            "'irqres.report'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
