"""The value engine's replacements (ariadne_lc.interventions.values): made by position in the original output."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage

from ariadne_lc.interventions.observations import LLMObservationSwapper, RuleObservationSwapper
from ariadne_lc.interventions.values import ValueSwapper, replace_value
from ariadne_lc.testing import ScriptedChatModel


def test_a_replacement_equal_to_another_value_of_the_output_is_not_replaced_again() -> None:
    edit = ValueSwapper().swap("3 apples and 4 pears", query="How many fruits are there?", tool="count")
    assert edit.mode == "move" and edit.swapped is not None
    assert edit.old == ("3", "4") and edit.new[0] == "4"  # the case: 3's new value is the output's other value
    # what was served is the original with each old value, where it stood, replaced by its new one
    assert re.findall(r"\d+", edit.swapped) == list(edit.new)
    assert edit.swapped == f"{edit.new[0]} apples and {edit.new[1]} pears"


def test_words_keep_their_case_and_numbers_their_boundaries() -> None:
    assert replace_value("Yes, and yes again; 12 not 123", "yes", "no") == "No, and no again; 12 not 123"
    assert replace_value("12 not 123 or 1.2", "12", "15") == "15 not 123 or 1.2"


def test_no_source_swaps_a_value_the_question_states() -> None:
    query = "A hotel has 12 floors of 9 rooms. How many rooms?"
    ruled = RuleObservationSwapper().swap("12 floors x 9 = 108 rooms", query=query)
    assert ruled.swapped is not None and ruled.swapped.startswith("12 floors x 9 = ") and "108" not in ruled.swapped
    stated = RuleObservationSwapper().swap("12 floors, 9 rooms each", query=query)
    assert stated.swapped is None  # every number there is the question's
    careless = ScriptedChatModel(script=lambda messages: AIMessage(content="The hotel has 14 floors; rooms unknown."))
    edit = LLMObservationSwapper(careless).swap("The hotel has 12 floors; rooms unknown.", query=query)
    assert edit.swapped is None and "which the question states" in edit.method
    careful = ScriptedChatModel(script=lambda messages: AIMessage(content="The hotel has 12 floors; rooms: many."))
    assert LLMObservationSwapper(careful).swap("The hotel has 12 floors; rooms: few.", query=query).swapped
    assert ValueSwapper(LLMObservationSwapper(careless)).swap(
        "The hotel has 12 floors; rooms unknown.", query=query
    ).swapped is None
