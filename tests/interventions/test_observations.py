"""observation_swap (observation->answer link): a plausible other value in one tool output."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from ariadne_lc.interventions.observations import LLMObservationSwapper, RuleObservationSwapper
from ariadne_lc.testing import ScriptedChatModel


def test_the_rule_swap_changes_the_last_number_in_its_format() -> None:
    swap = RuleObservationSwapper()
    assert swap.swap("108", query="?", tool="multiply").swapped == "140"
    assert swap.swap("Population: 47,000,000 (2023 est.) is 47,000,000", tool="t").swapped == (
        "Population: 47,000,000 (2023 est.) is 61,100,000"
    )
    assert swap.swap("3.5 km", tool="t").swapped == "4.5 km"
    assert swap.swap("0", tool="t").swapped == "1"
    assert swap.swap("Is it open? YES", tool="t").swapped == "Is it open? NO"
    edit = swap.swap("Nairobi", tool="capital_of")
    assert edit.swapped is None and "free text" in edit.method


def test_the_model_swap_is_refused_when_it_changes_nothing() -> None:
    same = ScriptedChatModel(script=lambda messages: AIMessage(content="Nairobi"))
    assert LLMObservationSwapper(same).swap("Nairobi", tool="capital_of").swapped is None
    other = ScriptedChatModel(script=lambda messages: AIMessage(content="Mombasa"))
    edit = LLMObservationSwapper(other).swap("Nairobi", tool="capital_of")
    assert (edit.swapped, edit.method) == ("Mombasa", "llm")
    assert LLMObservationSwapper(other).swap("108", tool="multiply").method == "rule:number"  # the rule first
