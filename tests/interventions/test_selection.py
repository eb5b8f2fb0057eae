from __future__ import annotations

from collections import Counter

import pytest

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions import THOUGHT_CONTRADICTIONS as CONTRADICTIONS
from ariadne_lc.interventions import adaptive_type, parse_interventions, random_type, resolve


@pytest.mark.parametrize(
    ("thought", "expected", "why"),
    [
        ("Prices rise because demand grows.", "causal_reversal", "causal language"),
        ("Every box holds 7, so I need to multiply.", "causal_reversal", "causal language"),
        ("Water boils at 100 degrees.", "fact_reversal", "numeric claim"),
        ("Prices rise quickly.", "logic_flip", "direction or operator"),
        ("Gold is a metal.", "premise_negation", "no specific pattern"),
    ],
)
def test_adaptive_picks_the_type_whose_pattern_the_step_has(thought: str, expected: str, why: str) -> None:
    assert adaptive_type(thought) == (expected, why)


def test_random_is_uniform_reproducible_and_seeded() -> None:
    draws = [random_type(7, "trace", k) for k in range(400)]
    assert draws == [random_type(7, "trace", k) for k in range(400)]
    counts = Counter(draws)
    assert set(counts) == set(CONTRADICTIONS) and min(counts.values()) > 60
    assert draws != [random_type(8, "trace", k) for k in range(400)]


def test_resolve_and_parse() -> None:
    assert resolve("logic_flip", "x", seed=0, trace_id="t", step=0) == ("logic_flip", "fixed")
    assert resolve("adaptive", "Gold is a metal.", seed=0, trace_id="t", step=0) == (
        "premise_negation",
        "adaptive:no specific pattern",
    )
    kind, how = resolve("random", "x", seed=0, trace_id="t", step=3)
    assert how == "random" and kind == random_type(0, "t", 3)
    assert parse_interventions(["random", "adaptive", "paraphrase", "fact_reversal"]) == [
        "random",
        "adaptive",
        "paraphrase",
        "fact_reversal",
    ]
    with pytest.raises(ConfigurationError, match=r"unknown intervention 'flip'.*random, adaptive"):
        parse_interventions(["flip"])
    with pytest.raises(ConfigurationError, match="no interventions"):
        parse_interventions([])
