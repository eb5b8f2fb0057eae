from __future__ import annotations

import pytest

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions import THOUGHT_CONTRADICTIONS as CONTRADICTIONS
from ariadne_lc.interventions import RuleCritic, parse_intervention_types

critic = RuleCritic()
THOUGHT = "Every box holds the same amount, so I need to multiply 6 by 7 to get the total."


@pytest.mark.parametrize(
    ("kind", "thought", "expected"),
    [
        ("logic_flip", "Prices rise, so demand falls.", "Prices fall, so demand rises."),
        ("logic_flip", "The result is 6 * 7 which is greater.", "The result is 6 / 7 which is smaller."),
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


# -- the defects seen in the decisive-audits issue (each failed on the critic before it) ------------------------


@pytest.mark.parametrize(
    ("thought", "expected"),
    [
        # flipping the verb and the comparison of one clause cancels out; the comparison alone is flipped
        ("The total is less than 30.", "The total is more than 30."),
        ("So the answer is yes.", "So the answer is no."),
    ],
)
def test_logic_flip_does_not_flip_a_clause_twice(thought: str, expected: str) -> None:
    assert critic.intervene(thought, "logic_flip").intervened == expected


@pytest.mark.parametrize(
    ("thought", "expected"),
    [
        ("The answer is 8*3.", "The answer is 8/3."),
        ("So 12+5 apples.", "So 12-5 apples."),
        ("6 x 7 pens.", "6 / 7 pens."),
        ("Since 17 > 12, the hotel is taller.", "Since 17 < 12, the hotel is taller."),
        ("x >= 3 holds.", "x <= 3 holds."),
    ],
)
def test_logic_flip_reaches_operators_without_spaces_and_comparisons(thought: str, expected: str) -> None:
    assert critic.intervene(thought, "logic_flip").intervened == expected


def test_fact_reversal_can_flip_a_comparison() -> None:
    thought = "The hotel has 17 floors and the tower has 12, so the hotel is taller."
    edits = [c.intervened for c in critic.candidates(thought, "fact_reversal")]
    assert "The hotel has 12 floors and the tower has 17, so the hotel is taller." in edits
    first = critic.intervene(thought, "fact_reversal").intervened
    assert first is not None
    revised = critic.revise(thought, "fact_reversal", rejected=[first]).intervened
    assert revised == "The hotel has 12 floors and the tower has 17, so the hotel is taller."


@pytest.mark.parametrize(
    ("thought", "expected"),
    [
        ("The hotel has 17 floors.", "The hotel does not have 17 floors."),
        ("They had two dogs.", "They did not have two dogs."),
        ("The hotel has been open for years.", "The hotel has not been open for years."),
    ],
)
def test_premise_negation_treats_has_as_a_main_verb_before_a_noun(thought: str, expected: str) -> None:
    assert critic.intervene(thought, "premise_negation").intervened == expected


@pytest.mark.parametrize(
    ("thought", "query", "expected"),
    [
        ("6 boxes of 7: the answer is 6 * 7.", "How many in 6 boxes of 7?", "6 boxes of 7: the answer is 6 * 8."),
        ("So I need to multiply 6 by 7.", "How many in 6 boxes of 7?", "So I need to multiply 6 by 8."),
        ("There are 42 in all.", "How many in 6 boxes of 7?", "There are 43 in all."),
        ("Dogs bark, so the answer is B.", "Which barks?\nA. cat\nB. dog\nC. cow", "Dogs bark, so the answer is C."),
        ("17 > 12, so the answer is yes.", "Is 17 greater than 12?", "17 > 12, so the answer is no."),
    ],
)
def test_conclusion_swap_replaces_only_the_conclusion(thought: str, query: str, expected: str) -> None:
    result = critic.intervene(thought, "conclusion_swap", query=query)
    assert result.applicable and result.intervened == expected and result.method.startswith("rule:conclusion")


def test_conclusion_swap_has_no_rule_for_free_text() -> None:
    result = critic.intervene("Paris is big, so the answer is Paris.", "conclusion_swap", query="Which city?")
    assert not result.applicable


def test_revise_hands_out_each_candidate_once_then_gives_up() -> None:
    thought = "6 boxes of 7: the answer is 6 * 7."
    query = "How many in 6 boxes of 7?"
    seen: list[str] = []
    while True:
        edit = critic.revise(thought, "conclusion_swap", query=query, rejected=seen)
        if not edit.applicable:
            break
        assert edit.intervened not in seen
        seen.append(edit.intervened or "")
    assert len(seen) == len(critic.candidates(thought, "conclusion_swap", query=query)) == 3
