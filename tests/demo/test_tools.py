"""The demo tools: safe arithmetic and the offline fact table."""

from __future__ import annotations

import pytest

from ariadne_lc._arithmetic import CalculatorError, evaluate_arithmetic
from ariadne_lc.demo import calculator, lookup
from ariadne_lc.demo._facts import NO_ENTRY


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("6 * 7", "42"),
        ("(120 - 35) / 5", "17"),
        ("7 / 2", "3.5"),
        ("6 x 7", "42"),
        ("2^10", "1024"),
        ("$1,200 / 4", "300"),
        ("-3 + 10 % 4", "-1"),
        ("17 // 5", "3"),
        ("1 / 3", "0.3333333333"),
        ("12 ÷ 4 =", "3"),
    ],
)
def test_calculator_evaluates_arithmetic(expression: str, result: str) -> None:
    assert evaluate_arithmetic(expression) == result
    assert calculator.invoke({"expression": expression}) == result


@pytest.mark.parametrize(
    "expression",
    ["__import__('os').system('true')", "x + 1", "9**9**9", "1/0", "", "'a' * 3", "[1] * 3", "True + 1", "1" * 300],
)
def test_calculator_refuses_everything_else(expression: str) -> None:
    with pytest.raises(CalculatorError):
        evaluate_arithmetic(expression)
    assert calculator.invoke({"expression": expression}).startswith("error: ")


@pytest.mark.parametrize(
    ("term", "needle"),
    [
        ("boiling point of water", "100 degrees Celsius"),
        ("What is the capital of France?", "Paris"),
        ("legs of a spider", "8 legs"),
        ("Photosynthesis", "sunlight"),
    ],
)
def test_lookup_finds_close_phrasings(term: str, needle: str) -> None:
    assert needle in lookup.invoke({"term": term})


@pytest.mark.parametrize("term", ["quantum chromodynamics", "", "the"])
def test_lookup_says_no_entry_when_unknown(term: str) -> None:
    assert lookup.invoke({"term": term}) == NO_ENTRY
