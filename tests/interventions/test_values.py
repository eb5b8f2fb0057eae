"""The value engine's replacements (ariadne_lc.interventions.values): made by position in the original output."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from ariadne_lc.interventions.observations import LLMObservationSwapper, RuleObservationSwapper
from ariadne_lc.interventions.values import SwapContext, ValueSwapper, replace_value
from ariadne_lc.testing import ScriptedChatModel


def test_a_new_value_is_never_one_the_output_states_nor_another_swaps_new_value() -> None:
    """3's shift lands on the output's 4 (an agent repeating "4" would seem to read it), and 4's on 3's new 5."""
    edit = ValueSwapper().swap("3 apples and 4 pears", query="How many fruits are there?", tool="count")
    assert edit.mode == "move" and edit.swapped is not None
    assert edit.old == ("3", "4") and edit.new == ("5", "6")
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
    assert (
        ValueSwapper(LLMObservationSwapper(careless))
        .swap("The hotel has 12 floors; rooms unknown.", query=query)
        .swapped
        is None
    )


def test_what_is_served_and_the_recorded_values_agree_in_context_in_both_modes() -> None:
    """End to end through ``swap_in_context``, as the auditor calls it: the served output is the original with exactly
    ``old`` -> ``new``, and no new value is one the output already states (3 -> 5, not onto the output's 4)."""
    output = "3 apples and 4 pears"
    moved = ValueSwapper().swap_in_context(output, SwapContext(query="Fruits?", tool="count", answer="Plenty."))
    assert moved.mode == "move" and moved.old == ("3", "4") and moved.new == ("5", "6")
    assert moved.swapped == f"{moved.new[0]} apples and {moved.new[1]} pears"
    context = SwapContext(query="Fruits?", tool="count", answer="I have 3 apples.")
    valued = ValueSwapper().swap_in_context(output, context)
    assert (valued.mode, valued.old, valued.new) == ("value", ("3",), ("5",))
    assert valued.swapped == "5 apples and 4 pears"
    assert replace_value(output, *valued.old, *valued.new) == valued.swapped


def test_another_output_of_the_same_tool_gives_the_differing_span_as_it_wrote_it() -> None:
    output, others = '{"sky": "light rain", "temp": 21.5}', ('{"sky": "heavy snow", "temp": 18.25}',)
    words = ValueSwapper().swap_in_context(
        output, SwapContext(query="?", tool="w", answer="Light rain.", others=others)
    )
    assert (words.mode, words.old, words.new) == ("value", ("light rain",), ("heavy snow",))
    number = ValueSwapper().swap_in_context(output, SwapContext(query="?", tool="w", answer="21.5 C", others=others))
    assert (number.old, number.new) == (("21.5",), ("18.25",))  # a number whole, of the same kind: the other's own
    assert number.swapped == '{"sky": "light rain", "temp": 18.25}'


def test_the_model_fallback_never_swaps_a_value_the_question_states() -> None:
    """Past the rules (no number, yes/no or known word to swap; "Paris" is the question's), the model fallback: a
    reply that changes the question's own city is refused, a reply that changes the weather is served."""
    query, output = "What is the weather in Paris?", "Paris: light drizzle"
    careless = ScriptedChatModel(script=lambda messages: AIMessage(content="London: light drizzle"))
    context = SwapContext(query=query, tool="weather", answer="Light drizzle.")
    refused = ValueSwapper(LLMObservationSwapper(careless)).swap_in_context(output, context)
    assert refused.swapped is None and "'Paris', which the question states" in refused.method
    assert careless.calls == 1  # the model was asked: it is its reply that was refused
    careful = ScriptedChatModel(script=lambda messages: AIMessage(content="Paris: heavy snow"))
    served = ValueSwapper(LLMObservationSwapper(careful)).swap_in_context(output, context)
    assert (served.swapped, served.mode) == ("Paris: heavy snow", "move")


async def test_the_async_swap_awaits_the_model_and_agrees_with_the_sync_one() -> None:
    careful = ScriptedChatModel(script=lambda messages: AIMessage(content="Paris: heavy snow"))
    context = SwapContext(query="What is the weather in Paris?", tool="weather", answer="Light drizzle.")
    swapper = ValueSwapper(LLMObservationSwapper(careful))
    awaited = await swapper.aswap_in_context("Paris: light drizzle", context)
    assert awaited == swapper.swap_in_context("Paris: light drizzle", context)


def test_the_alignment_is_computed_once_per_swap_and_the_schema_once_per_tool(monkeypatch: Any) -> None:
    import difflib
    import typing

    from ariadne_lc.audit._pool import schema_values

    made: list[int] = []
    real = difflib.SequenceMatcher

    def counted(*args: Any, **kwargs: Any) -> difflib.SequenceMatcher[str]:
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(difflib, "SequenceMatcher", counted)
    others = ("Rain in Oslo, 3 C, wind 20 km/h.", "Fog in Lima, 15 C, wind 5 km/h.", "Snow in Rome, 1 C, wind 9 km/h.")
    context = SwapContext(query="Weather?", tool="w", answer="Nothing to report.", others=others)
    ValueSwapper().swap_in_context("Sun in Paris, 21 C, wind 10 km/h.", context)
    assert len(made) == len(others)  # one matcher per other output, however many values were looked up

    @tool
    def sky(city: str) -> Literal["sunny", "rainy"]:
        """The sky over a city."""
        return "sunny"

    hinted: list[int] = []
    real_hints = typing.get_type_hints

    def hints(*args: Any, **kwargs: Any) -> dict[str, Any]:
        hinted.append(1)
        return real_hints(*args, **kwargs)

    monkeypatch.setattr(typing, "get_type_hints", hints)
    assert [schema_values(sky) for _ in range(3)] == [("sunny", "rainy")] * 3
    assert len(hinted) == 1


def test_a_shifted_number_the_question_states_is_passed_over_for_the_next_shift() -> None:
    # 20 pupils in 5 teams: the answer 4 shifts to 5, which the question states; the next shift is the swap
    context = SwapContext(query="20 pupils are split into 5 equal teams. How many per team?", tool="divide",
                          answer="The answer is 4.")  # fmt: skip
    edit = ValueSwapper().swap_in_context("4", context)
    assert edit.mode == "value" and edit.old == ("4",) and edit.swapped == edit.new[0]
    assert edit.new[0] not in ("4", "5", "20")
    second = ValueSwapper().swap_in_context("4", replace(context, variant=1))
    assert second.new[0] not in ("4", "5", "20", edit.new[0])
