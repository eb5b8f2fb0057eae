"""observation_swap (observation->answer link): a plausible other value in one tool output."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions.implied import RuleReader
from ariadne_lc.interventions.observations import (
    LLMObservationSwapper,
    ObservationEdit,
    PlainSwapper,
    RuleObservationSwapper,
    SwapContext,
    in_context,
    observation_context,
    placebo_output,
)
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


def test_the_placebo_restates_the_output_with_every_value_in_place() -> None:
    assert placebo_output("32").swapped == "The result is 32."
    assert placebo_output("-3.5").swapped == "The result is -3.5."
    assert placebo_output("yes").swapped == "The result is yes."
    assert placebo_output('"Madrid"').swapped == "The result is Madrid."
    compact = placebo_output('{"city": "Madrid", "population": [3, 4]}')
    assert (compact.swapped, compact.method) == ('{"city":"Madrid","population":[3,4]}', "rule:json")
    spaced = placebo_output('{"a":1}').swapped
    assert spaced is not None and json.loads(spaced) == {"a": 1} and spaced != '{"a":1}'
    assert placebo_output("Madrid is the capital, 3.3 million people").swapped == (
        "Result: Madrid is the capital, 3.3 million people"
    )
    for nothing in ("", "  ", "[]", "{}"):
        assert placebo_output(nothing).swapped is None
    assert placebo_output("108") == placebo_output("108")  # deterministic


def test_the_placebo_keeps_the_value_a_reader_reads() -> None:
    reader = RuleReader()
    for output in ("108", '{"result": 108}', "The product is 108"):
        edit = placebo_output(output)
        assert edit.swapped is not None
        before = reader.read("How many?", observation_context("I multiply.", "multiply", output)).answer
        after = reader.read("How many?", observation_context("I multiply.", "multiply", edit.swapped)).answer
        assert before == after == "108", (output, edit.swapped)


class _Counter:
    """A plain swapper (``swap`` only) whose edit adds one to the output's number, and flips back after 3."""

    name = "counter"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        self.asked.append(output)
        number = int(output)
        return ObservationEdit(swapped=str(number + 1 if number < 3 else 1), method="counter")


def test_a_plain_swapper_s_variant_n_is_its_n_plus_first_successive_value() -> None:
    swapper = in_context(_Counter())
    assert isinstance(swapper, PlainSwapper) and swapper.name == "counter"
    got = [swapper.swap_in_context("0", SwapContext(query="?", tool="t", variant=n)) for n in range(3)]
    assert [e.swapped for e in got] == ["1", "2", "3"]  # the 1st, 2nd and 3rd other values
    assert all(e.mode is None for e in got)  # the swapper says nothing of the answer: the reader's gate reads it
    repeat = swapper.swap_in_context("0", SwapContext(query="?", tool="t", variant=3))  # 3 -> 1, tried already
    assert repeat.swapped is None and "other value 4 repeats one already tried ('1')" in repeat.method


async def test_the_adapter_awaits_a_plain_swapper_s_aswap_and_agrees_with_the_sync_path() -> None:
    class Async(_Counter):
        async def aswap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
            return ObservationEdit(swapped=str(int(output) + 1), method="async")

    swapper = PlainSwapper(Async())
    context = SwapContext(query="?", tool="t", variant=2)
    assert (await swapper.aswap_in_context("0", context)).swapped == "3"
    assert (await swapper.aswap_in_context("0", context)).method == "async"  # its own async twin, not the sync one
    assert swapper.swap_in_context("0", context).swapped == "3"


def test_a_context_swapper_is_used_as_it_is_and_anything_else_is_refused() -> None:
    from ariadne_lc import InterventionOptions
    from ariadne_lc.interventions.values import ValueSwapper

    values = ValueSwapper()
    assert in_context(values) is values
    with pytest.raises(ConfigurationError, match="swap_in_context"):
        in_context(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="swap_in_context"):
        InterventionOptions(swapper=object())  # type: ignore[arg-type]
    assert InterventionOptions(swapper=_Counter()).swapper is not None  # a plain swapper is still accepted
