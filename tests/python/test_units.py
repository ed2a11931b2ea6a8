"""The duration grammar: every case of tests/data/units/ (shared with the C parser's
cmocka test), and properties of parse and format over the whole range."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from irqres.units import NS_MAX, UNITS, DurationError, format_duration, parse_duration

DATA = Path(__file__).resolve().parents[1] / "data" / "units"


def _cases(name: str, sep_first: bool) -> list[tuple[str, str]]:
    out = []
    for no, line in enumerate((DATA / name).read_text(encoding="utf-8").splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        if sep_first:       # |text|meaning: the text lies between the first and last |
            assert line.startswith("|"), f"{name}:{no}: a case starts with |"
            text, _, meaning = line[1:].rpartition("|")
            out.append(pytest.param(text, meaning, id=f"{no}:{text!r}"))
        else:               # ns|text
            ns, _, text = line.partition("|")
            out.append(pytest.param(ns, text, id=f"{no}:{ns}"))
    return out


PARSE = _cases("durations-parse.txt", True)
FORMAT = _cases("durations-format.txt", False)


def test_the_case_files_are_read():
    assert len(PARSE) >= 40 and len(FORMAT) >= 14


@pytest.mark.parametrize(("text", "meaning"), PARSE)
def test_parse_case(text: str, meaning: str):
    if meaning.startswith("error:"):
        with pytest.raises(DurationError) as err:
            parse_duration(text)
        assert err.value.kind == meaning.removeprefix("error:")
        # the message repeats what the user typed
        assert str(err.value).startswith(f"{text!r} is not a duration: ")
    else:
        assert parse_duration(text) == int(meaning)


@pytest.mark.parametrize(("ns", "text"), FORMAT)
def test_format_case(ns: str, text: str):
    assert format_duration(int(ns)) == text
    assert parse_duration(text) == int(ns)


def test_error_names_the_value():
    with pytest.raises(DurationError, match=r"^--period: '3msec' is not a duration: "
                                            r"unknown unit 'msec'"):
        parse_duration("3msec", "--period")


@given(st.integers(min_value=0, max_value=NS_MAX))
def test_format_reads_back(ns: int):
    text = format_duration(ns)
    assert parse_duration(text) == ns
    # the largest unit the value reaches, so the whole part is never 0 but for 0ns
    assert not text.startswith("0") or ns == 0


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=9),
       st.sampled_from(sorted(UNITS)), st.sampled_from(["", " ", "\t"]))
def test_parse_matches_decimal(whole: int, decimals: int, unit: str, blank: str):
    text = f"{Decimal(whole) / 10**decimals:f}"
    value = Decimal(text) * UNITS[unit]
    try:
        got = parse_duration(f"{blank}{text}{blank}{unit}{blank}")
    except DurationError as exc:
        assert exc.kind == ("fraction" if value != value.to_integral_value() else "range")
        return
    assert got == value


def test_int_is_already_ns():
    assert parse_duration(5) == 5
    with pytest.raises(DurationError) as err:
        parse_duration(-5)
    assert err.value.kind == "negative"
