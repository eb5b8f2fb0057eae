from __future__ import annotations

import pytest

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions import CONTRADICTIONS, RuleCritic, parse_intervention_types

critic = RuleCritic()
THOUGHT = "Every box holds the same amount, so I need to multiply 6 by 7 to get the total."


@pytest.mark.parametrize(
    ("kind", "thought", "expected"),
    [
        ("logic_flip", "Prices rise, so demand falls.", "Prices fall, so demand rises."),
        ("logic_flip", "The result is 6 * 7 which is greater.", "The result isn't 6 / 7 which isn't smaller."),
        ("fact_reversal", "Water boils at 100 degrees.", "Water boils at 151 degrees."),
        ("fact_reversal", "Gold is a metal. Its symbol is Au.", "Gold is a metal. Its symbol is not Au."),
        ("fact_reversal", "Gold is a metal. Its symbol is not Au.", "Gold is a metal. Its symbol is Au."),
        ("premise_negation", "I need to add the two prices.", "I do not need to add the two prices."),
        ("premise_negation", "Paris is the capital. So it is big.", "Paris is not the capital. So it is big."),
        ("premise_negation", "Prices rise, so demand falls.", "It is not true that prices rise, so demand falls."),
        ("causal_reversal", "Prices rise, so demand falls.", "Demand falls, so prices rise."),
        ("causal_reversal", "The ice melted because the sun was out.", "The sun was out because the ice melted."),
        ("causal_reversal", "Smoking causes cancer.", "Cancer causes smoking."),
    ],
)
def test_rules(kind: str, thought: str, expected: str) -> None:
    result = critic.intervene(thought, kind)
    assert result.applicable and result.intervened == expected
    assert result.method.startswith("rule:")


@pytest.mark.parametrize("kind", [str(t) for t in CONTRADICTIONS])
def test_every_type_really_changes_the_thought(kind: str) -> None:
    result = critic.intervene(THOUGHT, kind)
    assert result.applicable and result.intervened and result.intervened != THOUGHT


@pytest.mark.parametrize(
    ("kind", "thought"),
    [
        ("causal_reversal", "Gold is a metal."),
        ("logic_flip", "Let me search for it."),
        ("premise_negation", "Let me search for it."),
        ("fact_reversal", "Prices rise quickly."),
        ("fact_reversal", "Gold is a metal."),  # the only claim is the premise: premise_negation's edit
        ("logic_flip", ""),
        ("paraphrase", THOUGHT),
    ],
)
def test_not_applicable_is_typed(kind: str, thought: str) -> None:
    result = critic.intervene(thought, kind)
    assert not result.applicable and result.intervened is None and result.method


def test_parse_intervention_types() -> None:
    assert parse_intervention_types("logic_flip") == [CONTRADICTIONS[0]]
    with pytest.raises(ConfigurationError, match=r"unknown intervention .flip.*logic_flip"):
        parse_intervention_types(["flip"])
    with pytest.raises(ConfigurationError, match="no interventions"):
        parse_intervention_types([])
